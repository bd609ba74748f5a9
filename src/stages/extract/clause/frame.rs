//! The reader German, French, Spanish and Czech share: a clause's subject (the pronoun, the
//! verb's first-person ending where the language drops the pronoun, German's verb-second order
//! after a time phrase, or a possessive), its verb's class from the language's lexicon, and the
//! clause written again with the verb in the third person and the user's pronouns and
//! possessives replaced, in the clause's own language and word order.

use super::frame_parts::{czech_participle_after, fronted_time, is_home_language, items, without_trailing_time};
use super::instruments::{is_play_verb, names_instrument};
use super::lexicon::Lexicon;
use super::nouns::{is_conversational_state, is_diet, is_kin, is_partner, is_pointer, is_task_noun_in};
use super::plural::{has_plural_ending, singular_of};
use super::verbs::{VerbClass, class_of, czech_known_first_person, is_spanish_preterite};
use super::words::{Word, joined, span, tail};
use super::{Context, Found, capitalized, rest_in_third_person};
use crate::stages::extract::MemoryType;
use crate::stages::extract::language::Language;

/// Words that open a question.
fn question_openers(language: Language) -> &'static [&'static str] {
    match language {
        Language::German => &[
            "wie",
            "was",
            "wo",
            "warum",
            "wann",
            "wer",
            "welche",
            "welcher",
            "welches",
            "kannst",
            "könntest",
            "kann",
            "gibt",
            "ist",
            "sind",
            "hast",
            "bitte",
            "kennst",
            "weißt",
            "sollte",
            "soll",
            "würdest",
            "wieso",
            "weshalb",
            "schreib",
            "erkläre",
            "erklär",
            "hilf",
            "gib",
            "zeig",
            "danke",
            "vielen",
        ],
        Language::French => &[
            "comment",
            "pourquoi",
            "où",
            "quand",
            "qui",
            "quel",
            "quelle",
            "quels",
            "quelles",
            "est-ce",
            "peux",
            "pourrais",
            "qu'",
            "que",
            "quoi",
            "combien",
            "as-tu",
            "peux-tu",
            "pourrais-tu",
            "écris",
            "explique",
            "aide",
            "donne",
            "merci",
            "pouvez-vous",
            "pouvez",
        ],
        Language::Spanish => &[
            "cómo", "qué", "dónde", "cuándo", "quién", "cuál", "cuáles", "puedes", "podrías", "hay", "cuánto", "cuántos", "escribe",
            "explica", "ayúdame", "dame", "gracias", "podéis", "puede",
        ],
        Language::Czech => &[
            "jak",
            "co",
            "kde",
            "proč",
            "kdy",
            "kdo",
            "který",
            "která",
            "které",
            "můžeš",
            "mohl",
            "mohla",
            "jaký",
            "jaká",
            "jaké",
            "kolik",
            "napiš",
            "vysvětli",
            "pomoz",
            "dej",
            "díky",
            "děkuji",
            "děkuju",
            "poraď",
        ],
        Language::English => &[],
    }
}

/// Hedges that may open a clause ("ich glaube", "je pense que", "creo que", "asi").
fn hedges(language: Language) -> &'static [&'static [&'static str]] {
    match language {
        Language::German => &[&["ich", "glaube"], &["ich", "denke"], &["vielleicht"], &["wahrscheinlich"]],
        Language::French => &[&["je", "pense", "que"], &["je", "crois", "que"], &["peut-être"], &["probablement"]],
        Language::Spanish => &[&["creo", "que"], &["pienso", "que"], &["quizás"], &["quizá"], &["tal", "vez"], &["probablemente"]],
        Language::Czech => &[&["asi"], &["možná"], &["myslím"], &["pravděpodobně"]],
        Language::English => &[],
    }
}

/// Words that frame a clause as "as a …" ("als Lehrerin …", "en tant que …", "jako učitel …").
fn frame_words(language: Language) -> &'static [&'static str] {
    match language {
        Language::German => &["als"],
        Language::French => &["en", "tant", "que"],
        Language::Czech => &["jako"],
        _ => &[],
    }
}

/// Whether `words` (of a clause in `language`) mention the assistant: its name, or a word of
/// the second person. Each language's own: German "du" is "you", French "du" is "some" ("je
/// joue du piano", "je bois du café"); Czech "tu", "ta" and "ti" point at things ("tu kavárnu"),
/// where French and Spanish "tu", "ta", "ti" are "you".
fn mentions_you(words: &[Word], language: Language) -> bool {
    let second_person: &[&str] = match language {
        Language::German => &["du", "dich", "dir", "dein", "deine", "deinen", "deinem", "deiner", "deines", "euch", "euer", "eure"],
        Language::French => &["tu", "te", "toi", "ton", "ta", "tes", "vous", "votre", "vos"],
        Language::Spanish => {
            &["tú", "tu", "ti", "te", "tus", "usted", "ustedes", "contigo", "vosotros", "vosotras", "os", "vuestro", "vuestra"]
        }
        Language::Czech => &["ty", "tebe", "tobě", "tě", "tvůj", "tvoje", "tvoji", "tvá", "vy", "vám", "vás", "váš", "vaše"],
        Language::English => &["you", "your", "yours"],
    };
    words.iter().any(|word| second_person.contains(&word.lower.as_str()) || matches!(word.lower.as_str(), "chatgpt" | "gpt"))
}

/// Prepositions before a place ("in", "à", "en", "v").
fn is_place_preposition(word: &str) -> bool {
    matches!(word, "in" | "im" | "nach" | "bei" | "à" | "au" | "aux" | "en" | "dans" | "v" | "ve" | "do" | "na")
}

/// Words of age ("Jahre", "ans", "años", "let").
fn is_years(word: &str) -> bool {
    matches!(word, "jahre" | "jahren" | "ans" | "años" | "let" | "roky" | "rok" | "roků")
}

/// French participles of verbs whose perfect is made with "être".
const FRENCH_ETRE_PARTICIPLES: &[&str] = &[
    "allé",
    "allée",
    "allés",
    "allées",
    "parti",
    "partie",
    "venu",
    "venue",
    "né",
    "née",
    "arrivé",
    "arrivée",
    "devenu",
    "devenue",
    "resté",
    "restée",
    "tombé",
    "tombée",
    "retourné",
    "retournée",
    "installé",
    "installée",
    "rentré",
    "rentrée",
    "sorti",
    "sortie",
    "monté",
    "montée",
];

/// Reads one clause.
pub fn read(words: &[Word], lexicon: &Lexicon, context: &Context, found: &mut Vec<Found>) {
    let language = lexicon.language;
    let mut at = 0;
    let mut scale = 1.0_f32;
    loop {
        while at < words.len() && lexicon.lead_ins.contains(&words[at].lower.as_str()) && words.len() - at > 2 {
            at += 1;
        }
        let Some(hedge) = hedges(language)
            .iter()
            .find(|hedge| words[at..].iter().take(hedge.len()).map(|word| word.lower.as_str()).eq(hedge.iter().copied()))
        else {
            break;
        };
        at += hedge.len();
        if words.get(at).is_some_and(|word| matches!(word.lower.as_str(), "dass" | "que" | "že")) {
            at += 1;
        }
        scale = 0.6;
    }
    let Some(first) = words.get(at) else { return };
    if question_openers(language).contains(&first.lower.as_str()) {
        return;
    }
    let mut reading = Reading { lexicon, scale, change: false, reflexive: false };
    let frame = frame_words(language);
    if !frame.is_empty()
        && tail(words, at).iter().take(frame.len()).map(|word| word.lower.as_str()).eq(frame.iter().copied())
        && words.len() > at + frame.len()
    {
        // "Als Vater von zwei Kindern in Hamburg frage ich mich …": the frame ends where the
        // main clause's verb stands before its subject.
        let rest = tail(words, at + frame.len());
        let end = (1..rest.len())
            .find(|&index| lexicon.self_subjects.contains(&rest[index].lower.as_str()))
            .map_or(rest.len(), |subject| subject - 1);
        // …or at a dash or comma: "Als Pflegekraft im Schichtdienst – wie krieg ich …".
        let dash = rest.iter().position(|word| matches!(word.lower.as_str(), "–" | "—" | "-" | "--")).unwrap_or(rest.len());
        let comma = rest.iter().position(|word| word.comma).map_or(rest.len(), |at| at + 1);
        let end = end.min(dash).min(comma);
        let rest = span(rest, 0, end.max(1));
        let statement = format!("{} {}", be_word(language), rest_in_third_person(rest, lexicon));
        return push(found, MemoryType::Identity, "trait", rest, capitalized(&statement), 0.7, &reading);
    }
    let words = tail(words, at);
    // "El verano pasado hice…", "Ahora trabajo…": the time phrase goes behind the verb.
    let fronted = fronted_time(words, language, lexicon.self_subjects, lexicon.first_person_verb);
    let (adverbial, words) = (span(words, 0, fronted), tail(words, fronted));
    let lower = |index: usize| words.get(index).map_or("", |word| word.lower.as_str());
    // The subject: a pronoun, a possessive, a first-person verb, or "ich" after the verb.
    if lexicon.possessives.iter().any(|(possessive, _)| *possessive == lower(0)) {
        return possessed(lower(0), tail(words, 1), &reading, found);
    }
    if language == Language::Spanish {
        let negated = lower(0) == "no";
        let start = usize::from(negated);
        let liking = matches!(
            lower(start + 1),
            "gusta" | "gustan" | "encanta" | "encantan" | "fascina" | "fascinan" | "interesa" | "interesan" | "llamo" | "mudé"
        );
        if matches!(lower(start), "me" | "nos") && liking {
            return spanish_me(tail(words, start + 1), negated, &reading, found);
        }
    }
    if let Some((verb_at, singular, negated)) = plural_verb(words, lexicon, context.sure) {
        // What is said of "us" is said of the user, a little less surely (as English "we").
        let reflexive = language == Language::Spanish && span(words, 0, verb_at).iter().any(|word| word.lower == "nos");
        let plural = Reading { scale: reading.scale * 0.9, reflexive, ..reading };
        return clause(&Word::new(&singular), tail(words, verb_at + 1), adverbial, negated, &plural, found);
    }
    let mut verb_at = if lexicon.self_subjects.contains(&lower(0)) { 1 } else { 0 };
    let mut negated = false;
    while lexicon.negations.contains(&lower(verb_at)) || matches!(lower(verb_at), "me" | "m'" | "se") && language != Language::Czech {
        negated |= lexicon.negations.contains(&lower(verb_at));
        verb_at += 1;
    }
    if verb_at == 0 && !is_first_person_verb(lexicon, lower(0), words.get(1), context.sure) {
        match language {
            // German puts the verb second: "Seit 2019 wohne ich in Berlin".
            Language::German => {
                let inverted =
                    (1..words.len().min(6)).find(|&index| lower(index) == "ich" && (lexicon.third_person)(lower(index - 1)).is_some());
                if let Some(subject) = inverted {
                    let verb = &words[subject - 1];
                    let rest = tail(words, subject + 1);
                    let negated = rest.iter().take(3).any(|word| lexicon.negations.contains(&word.lower.as_str()));
                    return clause(verb, rest, span(words, 0, subject - 1), negated, &reading, found);
                }
            }
            // Czech puts the past auxiliary second: "Loni jsem běžel půlmaraton".
            Language::Czech => {
                let auxiliary = (1..words.len().min(5)).find(|&index| lower(index) == "jsem");
                if let Some(auxiliary) = auxiliary
                    && let Some(verb_at) = czech_participle_after(words, auxiliary)
                {
                    let rest = czech_rest_after_participle(words, auxiliary, verb_at);
                    return clause(&words[verb_at], &rest, span(words, 0, auxiliary), false, &reading, found);
                }
            }
            _ => {}
        }
        return;
    }
    // "(Loni) jsem se přestěhoval…": the auxiliary first, then the reflexive and the verb.
    if language == Language::Czech
        && lower(verb_at) == "jsem"
        && let Some(participle) = czech_participle_after(words, verb_at).filter(|&at| at > verb_at + 1)
    {
        let rest = czech_rest_after_participle(words, verb_at, participle);
        return clause(&words[participle], &rest, adverbial, negated, &reading, found);
    }
    let Some(verb) = words.get(verb_at) else { return };
    reading.reflexive = language == Language::Spanish && span(words, 0, verb_at).iter().any(|word| word.lower == "me");
    // "übrigens wohne ich in Wien": the subject after the verb is not part of what follows.
    let after_verb = usize::from(lexicon.self_subjects.contains(&lower(verb_at + 1)));
    let mut rest: Vec<Word> = tail(words, verb_at + 1 + after_verb).to_vec();
    // Czech past: "pracoval jsem jako …" (and "jsem se"), the auxiliary is dropped.
    if language == Language::Czech {
        rest.retain(|word| word.lower != "jsem");
    }
    let negated_verb = negated && language == Language::Spanish && verb.lower.ends_with('o');
    if negated_verb
        || lexicon.self_subjects.contains(&lower(0))
        || is_first_person_verb(lexicon, &verb.lower, words.get(verb_at + 1), context.sure)
    {
        clause(verb, &rest, adverbial, negated, &reading, found);
    }
}

/// What a Czech past says after its participle at `participle`, the auxiliary at `auxiliary`
/// dropped: a reflexive between them goes first, as after a participle said first
/// ("přestěhoval jsem se do Brna").
fn czech_rest_after_participle(words: &[Word], auxiliary: usize, participle: usize) -> Vec<Word> {
    let reflexive = span(words, auxiliary + 1, participle).iter();
    reflexive.chain(tail(words, participle + 1).iter().filter(|word| word.lower != "se")).cloned().collect()
}

/// The user with others as the subject: where the plural verb stands, its first-person
/// singular ([`singular_of`]) and whether it is negated. The pronoun ("wir", "nous", "on",
/// "nosotros", "my") or, in Spanish and Czech told for sure, the verb's ending says it.
fn plural_verb(words: &[Word], lexicon: &Lexicon, sure: bool) -> Option<(usize, String, bool)> {
    let language = lexicon.language;
    let lower = |index: usize| words.get(index).map_or("", |word| word.lower.as_str());
    let pronoun = lexicon.plural_subjects.contains(&lower(0));
    // French "on" takes the third person, the first person's twin in most verbs ("on habite").
    if language == Language::French && lower(0) == "on" && lexicon.verb_class(lower(1)).is_some() {
        return Some((1, lower(1).to_owned(), false));
    }
    let mut verb_at = usize::from(pronoun);
    let mut negated = false;
    while lexicon.negations.contains(&lower(verb_at)) || (language == Language::Spanish && lower(verb_at) == "nos") {
        negated |= lexicon.negations.contains(&lower(verb_at));
        verb_at += 1;
    }
    let verb = lower(verb_at);
    if !(pronoun || (sure && has_plural_ending(verb, language))) {
        return None;
    }
    Some((verb_at, singular_of(verb, language)?, negated))
}

/// Whether `word` is the first-person verb that opens a clause without its pronoun.
fn is_first_person_verb(lexicon: &Lexicon, word: &str, next: Option<&Word>, sure: bool) -> bool {
    match lexicon.language {
        Language::Spanish => {
            (lexicon.first_person_verb)(word)
                || (sure && is_spanish_preterite(word))
                || (sure
                    && word.len() >= 4
                    && word.ends_with('o')
                    && !matches!(
                        word,
                        "pero"
                            | "luego"
                            | "como"
                            | "todo"
                            | "cuando"
                            | "algo"
                            | "mucho"
                            | "poco"
                            | "claro"
                            | "bueno"
                            | "nuevo"
                            | "solo"
                            | "también"
                            | "tanto"
                            | "otro"
                            | "esto"
                            | "eso"
                            | "hola"
                    ))
        }
        // As in Spanish, a verb told by its ending alone opens a clause only in a sentence
        // told Czech for sure: "Emoji time!" in an English message is no "emoji" said of oneself.
        Language::Czech => {
            czech_known_first_person(word)
                || (sure && (lexicon.first_person_verb)(word))
                || ((word.ends_with('l') || word.ends_with("la")) && next.is_some_and(|next| next.lower == "jsem"))
        }
        // After "und"/"et" the subject is often left out ("…und arbeite als Tischlerin"): the
        // verbs whose class is known open such a clause.
        Language::German | Language::French => lexicon.verb_class(word).is_some(),
        Language::English => false,
    }
}

/// How a clause is being read.
#[derive(Clone, Copy)]
struct Reading<'a> {
    lexicon: &'a Lexicon,
    scale: f32,
    change: bool,
    /// A Spanish verb said with "me" ("me casé"), written with "se".
    reflexive: bool,
}

/// "Me gusta/encanta X" (a like), "me llamo X" (a name), "me mudé a X" (a move).
fn spanish_me(words: &[Word], negated: bool, reading: &Reading<'_>, found: &mut Vec<Found>) {
    let Some(verb) = words.first() else { return };
    let rest = tail(words, 1);
    match verb.lower.as_str() {
        "gusta" | "gustan" | "encanta" | "encantan" | "fascina" | "fascinan" | "interesa" | "interesan"
            if !is_reaction(rest, Language::Spanish) =>
        {
            let (negation, slot) = if negated { ("No le", "dislikes") } else { ("Le", "likes") };
            for item in items(rest, Language::Spanish) {
                let statement = format!("{negation} {} {}", verb.lower, rest_in_third_person(item, reading.lexicon));
                push(found, MemoryType::Preference, slot, item, statement, 0.8, reading);
            }
        }
        "llamo" if rest.first().is_some_and(Word::is_capitalized) => {
            let name = names(rest);
            push(found, MemoryType::Identity, "name", name, format!("Se llama {}", joined(name)), 0.9, reading);
        }
        "mudé" => {
            // "Me mudé de Rosario a Valencia": where to, not where from.
            let to = rest.iter().position(|word| word.lower == "a").map_or(0, |at| at + 1);
            let whole = format!("Se mudó {}", rest_in_third_person(rest, reading.lexicon));
            moved(tail(rest, to), &whole, false, reading, found, "Vive en");
        }
        _ => {}
    }
}

/// A clause whose subject is the user, with its verb and what follows.
fn clause(verb: &Word, rest: &[Word], adverbial: &[Word], negated: bool, reading: &Reading<'_>, found: &mut Vec<Found>) {
    let lexicon = reading.lexicon;
    let language = lexicon.language;
    let verb_lower = verb.lower.as_str();
    let stem = if language == Language::Czech {
        verb_lower.strip_prefix("ne").filter(|stem| lexicon.verb_class(stem).is_some()).unwrap_or(verb_lower)
    } else {
        verb_lower
    };
    let negated = negated
        || stem != verb_lower
        || rest.iter().take(3).any(|word| lexicon.negations.contains(&word.lower.as_str()) && word.lower != "plus");
    let class = match lexicon.verb_class(stem) {
        // "učím se" is learning, "učím" teaching.
        Some(VerbClass::Teach) if language == Language::Czech && rest.first().is_some_and(|word| word.lower == "se") => {
            Some(VerbClass::Learn)
        }
        // "je viens de finir…", "vengo de trabajar": just did, not where from.
        Some(VerbClass::Origin)
            if rest.first().is_some_and(|word| matches!(word.lower.as_str(), "de" | "d'"))
                && rest.get(1).is_some_and(|word| !word.is_capitalized()) =>
        {
            return;
        }
        class => class,
    };
    let Some(third) = (lexicon.third_person)(verb_lower) else { return };
    let neg_prefix = match language {
        Language::French if negated => {
            if third.starts_with(['a', 'e', 'é', 'i', 'o', 'u', 'h']) {
                "n'"
            } else {
                "ne "
            }
        }
        Language::Spanish if negated => "no ",
        _ => "",
    };
    let reflexive = match language {
        // "s'appelle", "s'installe"; "déménager" has no reflexive.
        Language::French if class == Some(VerbClass::Called) || verb_lower == "installe" => "s'",
        Language::Spanish if reading.reflexive => "se ",
        _ => "",
    };
    // The time phrase moves behind the verb: its first word loses the capital the sentence
    // start gave it.
    let time_behind = {
        let time = rest_in_third_person(adverbial, lexicon);
        let mut letters = time.chars();
        letters.next().map_or(String::new(), |first| first.to_lowercase().chain(letters).collect::<String>())
    };
    let statement_of = |rest: &[Word]| {
        let statement = format!("{neg_prefix}{reflexive}{third} {} {time_behind}", rest_in_third_person(rest, lexicon));
        capitalized(statement.trim()).replace("' ", "'")
    };
    let statement = statement_of(rest);
    if rest.is_empty() || mentions_you(rest, language) {
        return;
    }
    let past = is_past(language, verb_lower);
    match class {
        Some(VerbClass::Be) => be(rest, &statement, negated, past, reading, found),
        Some(VerbClass::Have) => have(rest, &statement, negated, past, reading, found),
        Some(VerbClass::Like | VerbClass::Prefer | VerbClass::Dislike) => {
            if !is_reaction(rest, language) {
                let slot = if negated || class == Some(VerbClass::Dislike) { "dislikes" } else { "likes" };
                for item in items(rest, language) {
                    push(found, MemoryType::Preference, slot, item, statement_of(item), 0.8, reading);
                }
            }
        }
        Some(VerbClass::Live) => {
            if rest.first().is_some_and(|word| matches!(word.lower.as_str(), "mit" | "avec" | "con" | "s" | "se")) {
                push(found, MemoryType::Relationship, "lives_with", tail(rest, 1), statement, 0.8, reading);
            } else if past {
                push(found, MemoryType::Fact, "former_home", place(rest), statement, 0.75, reading);
            } else if !is_dangling(rest) {
                push(found, MemoryType::Identity, "home", place(rest), statement, 0.85, reading);
            }
        }
        // "La semana que viene me mudo a Bilbao": a move still ahead is a plan, not the home.
        Some(VerbClass::Move) if says_ahead(adverbial) || says_ahead(rest) => {
            push(found, MemoryType::Goal, "goal", rest, statement, 0.7, reading);
        }
        Some(VerbClass::Move) => {
            let (prefix, to_words) = match language {
                Language::German => ("Wohnt in".to_owned(), &["nach"][..]),
                Language::French => ("Habite à".to_owned(), &["à", "en", "au"][..]),
                // "do Brna" names the place in the genitive, which "v" does not take ("v
                // Brně"): the move is said as it was ("Přestěhovala se do Brna").
                Language::Czech => (capitalized(&format!("{third} se do")), &["do"][..]),
                _ => ("Vive en".to_owned(), &["a"][..]),
            };
            if let Some(to) = rest.iter().position(|word| to_words.contains(&word.lower.as_str())) {
                moved(tail(rest, to + 1), &statement, !adverbial.is_empty(), reading, found, &prefix);
            }
        }
        Some(VerbClass::Origin) if !is_dangling(rest) => push(found, MemoryType::Identity, "origin", place(rest), statement, 0.8, reading),
        Some(VerbClass::Work) => {
            let first = rest[0].lower.as_str();
            let value = tail(rest, 1.min(rest.len()));
            if past || value.is_empty() || is_dangling(value) {
                if past && !value.is_empty() && !is_dangling(value) {
                    push(found, MemoryType::Fact, "former_work", rest, statement, 0.75, reading);
                }
                return;
            }
            match first {
                "als" | "comme" | "como" | "jako" => push(found, MemoryType::Identity, "occupation", value, statement, 0.85, reading),
                // "Trabajo de sumiller": Spanish names the job with "de".
                "de" if language == Language::Spanish && !value.first().is_some_and(Word::is_capitalized) => {
                    push(found, MemoryType::Identity, "occupation", value, statement, 0.85, reading)
                }
                "bei" | "chez" | "para" | "u" | "pro" | "für" => {
                    push(found, MemoryType::Identity, "employer", value, statement, 0.85, reading)
                }
                _ => push(found, MemoryType::Identity, "work", rest, statement, 0.75, reading),
            }
        }
        Some(VerbClass::Study | VerbClass::Teach) if !is_dangling(rest) => {
            let slot = if class == Some(VerbClass::Teach) { "teaches" } else { "education" };
            push(found, MemoryType::Identity, slot, rest, statement, 0.8, reading);
        }
        // The languages one speaks are skills, each its own; the language of home says who
        // the user is.
        Some(VerbClass::Speak) if !is_dangling(rest) => {
            let memory_type = if is_home_language(rest) { MemoryType::Identity } else { MemoryType::Skill };
            for item in items(rest, language) {
                push(found, memory_type, "languages", item, statement_of(item), 0.8, reading);
            }
        }
        Some(VerbClass::Plan) if !past && !is_dangling(rest) && !names_task(rest, language) && !asks(rest, language) => {
            push(found, MemoryType::Goal, "goal", rest, statement, 0.75, reading);
        }
        Some(VerbClass::Decide) if !is_dangling(rest) => push(found, MemoryType::Decision, "decision", rest, statement, 0.8, reading),
        Some(VerbClass::Use) if !is_dangling(rest) && !names_task(rest, language) => {
            push(found, MemoryType::Environment, "environment", rest, statement, 0.8, reading)
        }
        Some(VerbClass::Learn) if !is_dangling(rest) && !names_task(rest, language) => {
            push(found, MemoryType::Goal, "learning", rest, statement, 0.8, reading)
        }
        Some(VerbClass::Called) => {
            let name_words: &[Word] = if rest.first().is_some_and(|word| word.lower == "se") { tail(rest, 1) } else { rest };
            if name_words.first().is_some_and(Word::is_capitalized) {
                let name = names(name_words);
                push(found, MemoryType::Identity, "name", name, statement, 0.9, reading);
            }
        }
        Some(VerbClass::Eat) if !is_dangling(rest) => {
            let slot = if negated { "does_not_eat" } else { "eats" };
            push(found, MemoryType::Preference, slot, rest, statement, 0.8, reading);
        }
        Some(_) => {}
        None => {
            if is_dangling(rest) || names_task(rest, language) || rest.is_empty() {
                return;
            }
            let played: Vec<&str> = rest.iter().map(|word| word.lower.as_str()).collect();
            if is_play_verb(stem, language) && names_instrument(&played) {
                return push(found, MemoryType::Skill, "skill", rest, statement, 0.8, reading);
            }
            // "Ich kann Lärm nicht ausstehen": a dislike.
            if language == Language::German
                && stem == "kann"
                && let [thing @ .., not, verb] = rest
                && not.lower == "nicht"
                && matches!(verb.lower.as_str(), "ausstehen" | "leiden")
                && !thing.is_empty()
            {
                return push(found, MemoryType::Preference, "dislikes", thing, statement, 0.8, reading);
            }
            if past {
                push(found, MemoryType::Context, "life_event", rest, statement, 0.7, reading);
            } else if says_ahead(adverbial) || says_ahead(rest) {
                // "El mes que viene empiezo a trabajar en Mercadona": a plan, not a habit.
                push(found, MemoryType::Goal, "goal", rest, statement, 0.7, reading);
            } else {
                push(found, MemoryType::Fact, "habit", rest, statement, 0.7, reading);
            }
        }
    }
}

/// "Ich bin …", "je suis …", "soy …", "jsem …": what the user is.
fn be(rest: &[Word], statement: &str, negated: bool, past: bool, reading: &Reading<'_>, found: &mut Vec<Found>) {
    let lexicon = reading.lexicon;
    let mut start = 0;
    while rest.get(start).is_some_and(|word| lexicon.fillers.contains(&word.lower.as_str())) {
        start += 1;
    }
    let words = tail(rest, start);
    let Some(first) = words.first() else { return };
    let first_lower = first.lower.as_str();
    if is_conversational_state(first_lower)
        || is_dangling(words)
        || of_what_was_said(words)
        || words.iter().take(3).any(|word| is_task_noun_in(&word.lower, reading.lexicon.language))
    {
        return;
    }
    // A perfect made with "sein"/"être" ("bin … gelaufen", "je suis allé…"): an event.
    let perfect = match reading.lexicon.language {
        Language::German => words.last().is_some_and(|word| {
            word.lower.starts_with("ge") && (word.lower.ends_with("en") || word.lower.ends_with('t')) && word.lower.len() > 5
        }),
        Language::French => FRENCH_ETRE_PARTICIPLES.contains(&first_lower),
        _ => false,
    };
    if perfect {
        return push(found, MemoryType::Context, "life_event", words, statement.to_owned(), 0.7, reading);
    }
    // "Estoy aprendiendo alemán": the gerund says what.
    if first_lower.ends_with("ando") || first_lower.ends_with("iendo") || first_lower.ends_with("yendo") {
        let (memory_type, slot) = match lexicon.verb_class(first_lower) {
            Some(VerbClass::Learn) => (MemoryType::Goal, "learning"),
            _ => (MemoryType::Context, "situation"),
        };
        if words.len() > 1 && !is_dangling(tail(words, 1)) {
            push(found, memory_type, slot, tail(words, 1), statement.to_owned(), 0.75, reading);
        }
        return;
    }
    if first.is_number() {
        if !past
            && !negated
            && words.get(1).is_none_or(|word| is_years(&word.lower))
            && first_lower.parse::<u32>().is_ok_and(|age| (5..=110).contains(&age))
        {
            push(found, MemoryType::Identity, "age", span(words, 0, 1), statement.to_owned(), 0.85, reading);
        }
        return;
    }
    if is_diet(first_lower) || words.get(1).is_some_and(|word| is_diet(&word.lower)) {
        return push(found, MemoryType::Preference, "diet", words, statement.to_owned(), 0.85, reading);
    }
    if first_lower.starts_with("allergi") || first_lower.starts_with("alérgic") || first_lower.starts_with("alergick") {
        return push(found, MemoryType::Fact, "allergy", words, statement.to_owned(), 0.85, reading);
    }
    if matches!(
        first_lower,
        "verheiratet"
            | "verlobt"
            | "geschieden"
            | "ledig"
            | "marié"
            | "mariée"
            | "célibataire"
            | "divorcé"
            | "divorcée"
            | "casado"
            | "casada"
            | "soltero"
            | "soltera"
            | "divorciado"
            | "divorciada"
            | "ženatý"
            | "vdaná"
            | "svobodný"
            | "svobodná"
            | "rozvedený"
            | "rozvedená"
            | "zasnoubený"
            | "zasnoubená"
    ) {
        return push(found, MemoryType::Relationship, "partner", span(words, 0, 1), statement.to_owned(), 0.85, reading);
    }
    if matches!(first_lower, "aus" | "de" | "d'" | "z" | "ze") && words.len() > 1 && words[1].is_capitalized() {
        return push(found, MemoryType::Identity, "origin", tail(words, 1), statement.to_owned(), 0.85, reading);
    }
    if is_place_preposition(first_lower) {
        if words.len() > 1 && words[1].is_capitalized() && !past {
            push(found, MemoryType::Context, "location", tail(words, 1), statement.to_owned(), 0.65, reading);
        }
        return;
    }
    // Longer, what follows "I am" is an opinion or a story, not what the user is; but what
    // they are can be said with where ("Soy profesora de matemáticas en un instituto de
    // Valencia", "Ich bin Krankenpfleger in einer Klinik in Graz"): the value is what comes
    // before the place, the statement the whole.
    let value = if words.len() <= MOST_TRAIT_WORDS {
        words
    } else {
        // The place is the rest, short and without a number: "à Annecy, prise de rdv au 04 50
        // 55 12 98" is more than where.
        let place_at = (1..=MOST_TRAIT_HEAD_WORDS.min(words.len() - 1)).find(|&at| is_place_preposition(&words[at].lower));
        match place_at {
            Some(at) if words.len() - at <= MOST_PLACE_WORDS && !tail(words, at).iter().any(Word::is_number) => span(words, 0, at),
            _ => return,
        }
    };
    let memory_type = if past { MemoryType::Context } else { MemoryType::Identity };
    // "Ich bin kein Arzt": true, but said to correct, not to describe oneself.
    let confidence = if negated { 0.45 } else { 0.75 };
    push(found, memory_type, "trait", value, statement.to_owned(), confidence, reading);
}

/// Most words after "I am" read as what the user is.
const MOST_TRAIT_WORDS: usize = 6;

/// Most words of the place (and its time) after what the user is in a longer "I am …".
const MOST_PLACE_WORDS: usize = 8;

/// Most words before a place in a longer "I am …" read as what the user is.
const MOST_TRAIT_HEAD_WORDS: usize = 4;

/// "Ich habe zwei Kinder", "j'ai 34 ans", "tengo un perro", "mám rád kávu", "j'ai couru …".
fn have(rest: &[Word], statement: &str, negated: bool, past: bool, reading: &Reading<'_>, found: &mut Vec<Found>) {
    let language = reading.lexicon.language;
    let Some(first) = rest.first() else { return };
    if is_dangling(rest) || rest.iter().take(4).any(|word| is_task_noun_in(&word.lower, language)) {
        return;
    }
    // Czech "mám rád(a) X": a like; "nemám rád X" a dislike.
    if language == Language::Czech && matches!(first.lower.as_str(), "rád" | "ráda" | "rádi") {
        if !is_reaction(tail(rest, 1), language) {
            let slot = if negated { "dislikes" } else { "likes" };
            push(found, MemoryType::Preference, slot, tail(rest, 1), statement.to_owned(), 0.8, reading);
        }
        return;
    }
    if first.is_number() && rest.get(1).is_some_and(|word| is_years(&word.lower)) {
        if first.lower.parse::<u32>().is_ok_and(|age| (5..=110).contains(&age)) && !past {
            push(found, MemoryType::Identity, "age", span(rest, 0, 1), statement.to_owned(), 0.85, reading);
        }
        return;
    }
    // "Ich habe mich entschieden, …", "j'ai décidé de …", "he decidido …": a decision.
    if let Some(at) =
        rest.iter().take(3).position(|word| matches!(word.lower.as_str(), "entschieden" | "beschlossen" | "décidé" | "decidido"))
    {
        return push(found, MemoryType::Decision, "decision", tail(rest, at + 1), statement.to_owned(), 0.8, reading);
    }
    if is_perfect_participle(language, rest) {
        // "J'ai déménagé à Lyon": the move, and where the user lives now.
        if language == Language::French
            && rest.first().is_some_and(|word| matches!(word.lower.as_str(), "déménagé" | "déménagée" | "emménagé" | "emménagée"))
            && let Some(to) = rest.iter().position(|word| matches!(word.lower.as_str(), "à" | "au"))
        {
            new_home(tail(rest, to + 1), reading, found, "Habite à");
        }
        return push(found, MemoryType::Context, "life_event", rest, statement.to_owned(), 0.7, reading);
    }
    match rest.iter().find(|word| is_kin(&word.lower, language)) {
        Some(kin) => {
            let slot = if is_partner(&kin.lower) { "partner" } else { "relation" };
            push(found, MemoryType::Relationship, slot, rest, statement.to_owned(), 0.85, reading);
        }
        None if past => push(found, MemoryType::Context, "life_event", rest, statement.to_owned(), 0.65, reading),
        None => push(found, MemoryType::Fact, "has", rest, statement.to_owned(), 0.7, reading),
    }
}

/// Whether the words after "habe", "ai", "he" are a perfect tense ("j'ai couru un
/// semi-marathon", "ich habe … gekündigt", "he corrido …").
fn is_perfect_participle(language: Language, rest: &[Word]) -> bool {
    match language {
        Language::French => {
            // "j'ai fini", "j'ai réussi", "j'ai grandi": a participle in -i right after "ai".
            let in_i = rest
                .first()
                .is_some_and(|word| word.lower.ends_with('i') && word.lower.chars().count() > 3 && !is_kin(&word.lower, language));
            in_i || rest.iter().take(2).any(|word| {
                let lower = word.lower.as_str();
                (lower.ends_with('é') || lower.ends_with("ai") || lower.ends_with("u") || lower.ends_with("it") || lower.ends_with("is"))
                    && lower.len() > 3
                    && !matches!(lower, "trois" | "huit" | "mois" | "fois")
                    && !is_kin(lower, language)
            }) && !rest[0].is_number()
        }
        Language::Spanish => rest.first().is_some_and(|word| word.lower.ends_with("ado") || word.lower.ends_with("ido")),
        Language::German => rest.last().is_some_and(|word| {
            word.lower.starts_with("ge") && (word.lower.ends_with('t') || word.lower.ends_with("en")) && word.lower.len() > 5
        }),
        _ => false,
    }
}

/// "mein Mann ist allergisch", "ma fille a 7 ans", "mi hermana vive en Lima", "můj manžel je
/// alergický": what the user's people and things are.
fn possessed(said: &str, words: &[Word], reading: &Reading<'_>, found: &mut Vec<Found>) {
    let lexicon = reading.lexicon;
    let language = lexicon.language;
    let Some(noun) = words.first() else { return };
    // A name may follow the noun ("meine Tochter Ema ist …").
    let mut verb_at = 1;
    while words.get(verb_at).is_some_and(|word| {
        word.is_capitalized() && language != Language::German
            || (language == Language::German && word.is_capitalized() && verb_at < 3 && !is_finite_german(&word.lower))
    }) {
        verb_at += 1;
    }
    let Some(verb) = words.get(verb_at) else { return };
    let rest = tail(words, verb_at + 1);
    if rest.is_empty() || is_task_noun_in(&noun.lower, language) || mentions_you(rest, language) {
        return;
    }
    let noun_lower = noun.lower.as_str();
    // The user's possessive says the third person's: its gender and number are the noun's,
    // which the noun's ending does not always show ("mon fils" → son fils, "meine Eltern" →
    // Ihre Eltern, "notre fille" → leur fille).
    // `said` is one of the lexicon's possessives (the caller found it there).
    let possessive = lexicon.possessives.iter().find(|(first, _)| *first == said).map_or_else(String::new, |(_, third)| capitalized(third));
    let statement = format!("{possessive} {}", rest_in_third_person(words, lexicon));
    let name_words = matches!(noun_lower, "name" | "nom" | "nombre" | "jméno");
    if name_words && rest.first().is_some_and(Word::is_capitalized) {
        let name = names(rest);
        return push(found, MemoryType::Identity, "name", name, statement, 0.9, reading);
    }
    let favourite = noun_lower.starts_with("lieblings")
        || rest_contains(words, &["préféré", "préférée", "favorito", "favorita", "oblíbené", "oblíbený", "oblíbená"]);
    if favourite {
        return push(found, MemoryType::Preference, "favourite", span(words, 0, verb_at), statement, 0.85, reading);
    }
    if is_kin(noun_lower, language) {
        if matches!(verb.lower.as_str(), "sagt" | "meint" | "dit" | "pense" | "dice" | "cree" | "říká" | "myslí") {
            return;
        }
        let slot = if is_partner(noun_lower) { "partner_fact" } else { "relation" };
        return push(found, MemoryType::Relationship, slot, span(words, 0, verb_at), statement, 0.8, reading);
    }
    if !is_pointer(noun_lower) && rest.iter().any(|word| !is_pointer(&word.lower)) && words.len() <= 10 {
        push(found, MemoryType::Fact, "about", span(words, 0, verb_at), statement, 0.6, reading);
    }
}

fn is_finite_german(word: &str) -> bool {
    matches!(word, "ist" | "hat" | "war" | "wird")
}

fn rest_contains(words: &[Word], any: &[&str]) -> bool {
    words.iter().any(|word| any.contains(&word.lower.as_str()))
}

/// "zog nach Wien", "me mudé a Lima": the new home (a change), and the move when its time is
/// said.
fn moved(rest: &[Word], whole: &str, time_before: bool, reading: &Reading<'_>, found: &mut Vec<Found>, prefix: &str) {
    // "Me mudé a Bilbao el año pasado", "V roce 2020 jsem se přestěhoval do Brna": the home
    // is where the user lives, timeless; when they moved is the move itself, kept as it was
    // said (and anchored), as the English reader keeps "Moved to Leeds in 2025".
    if let Some((destination, time_after)) = new_home(rest, reading, found, prefix)
        && (time_before || time_after)
    {
        push(found, MemoryType::Context, "life_event", destination, capitalized(whole), 0.7, reading);
    }
}

/// The home a move went to ("Bilbao el año pasado" → *Vive en Bilbao*), a change: the place
/// and whether a time was said after it.
fn new_home<'a>(rest: &'a [Word], reading: &Reading<'_>, found: &mut Vec<Found>, prefix: &str) -> Option<(&'a [Word], bool)> {
    let said = place(rest);
    let destination = without_trailing_time(said, reading.lexicon.language);
    if destination.is_empty() || is_dangling(destination) {
        return None;
    }
    let statement = format!("{prefix} {}", joined(destination));
    let changed = Reading { change: true, ..*reading };
    push(found, MemoryType::Identity, "home", destination, statement, 0.85, &changed);
    let numbers = |words: &[Word]| words.iter().filter(|word| word.is_number()).count();
    Some((destination, destination.len() < said.len() || numbers(rest) > numbers(destination)))
}

/// The place in "in Berlin", "à Lyon", "en Sevilla", "v Brně", up to a time word.
fn place(rest: &[Word]) -> &[Word] {
    // "in Berlin", "seit 2019 in Berlin"; "en 2021" is a time.
    let start = (0..rest.len().min(4))
        .find(|&at| is_place_preposition(&rest[at].lower) && !rest.get(at + 1).is_some_and(Word::is_number))
        .map_or(0, |at| at + 1);
    let rest = tail(rest, start);
    let end = rest
        .iter()
        .enumerate()
        .position(|(index, word)| {
            !word.is_capitalized()
                && (matches!(
                    word.lower.as_str(),
                    "seit"
                        | "depuis"
                        | "desde"
                        | "od"
                        | "und"
                        | "et"
                        | "y"
                        | "a"
                        | "mit"
                        | "avec"
                        | "con"
                        | "s"
                        | "hace"
                        | "vor"
                        | "před"
                        | "il"
                ) || (is_place_preposition(&word.lower) && rest.get(index + 1).is_some_and(Word::is_number)))
        })
        .unwrap_or(rest.len());
    span(rest, 0, end)
}

/// Capitalized words from the start ("Ana María Díaz y …" → "Ana María Díaz").
fn names(words: &[Word]) -> &[Word] {
    let end = words.iter().position(|word| !word.is_capitalized()).unwrap_or(words.len()).max(1);
    &words[..end.min(words.len())]
}

/// Whether the verb form is a past one (a simple past, or a participle with its auxiliary
/// dropped).
fn is_past(language: Language, verb: &str) -> bool {
    match language {
        Language::German => {
            (verb.ends_with("te") && class_of(Language::German, verb).is_none())
                || matches!(verb, "war" | "hatte" | "zog" | "ging" | "fuhr" | "lief" | "kam" | "aß" | "trank")
        }
        Language::French => verb.ends_with("ais"),
        Language::Spanish => {
            verb.ends_with('é')
                || (verb.ends_with('í') && verb.len() > 3)
                || verb.ends_with("aba")
                || matches!(verb, "fui" | "tuve" | "hice" | "estuve")
        }
        Language::Czech => verb.ends_with('l') || verb.ends_with("la"),
        Language::English => false,
    }
}

/// Whether the object only points back ("das", "ça", "eso", "to").
fn is_dangling(words: &[Word]) -> bool {
    let thin = |word: &Word| {
        is_pointer(&word.lower)
            || matches!(
                word.lower.as_str(),
                "le" | "la"
                    | "les"
                    | "l'"
                    | "el"
                    | "los"
                    | "las"
                    | "un"
                    | "une"
                    | "una"
                    | "uno"
                    | "ein"
                    | "eine"
                    | "der"
                    | "die"
                    | "den"
                    | "dem"
                    | "auch"
                    | "ja"
                    | "y"
                    | "a"
                    | "mal"
            )
    };
    if words.iter().all(thin) {
        return true;
    }
    // "z toho", "de ça", "davon": a preposition, then what was said before.
    let preposition = |word: &Word| {
        matches!(word.lower.as_str(), "z" | "ze" | "o" | "na" | "de" | "d'" | "à" | "von" | "über" | "mit" | "con" | "sobre" | "en")
    };
    let demonstrative =
        |word: &Word| matches!(word.lower.as_str(), "ça" | "cela" | "ceci" | "eso" | "esto" | "to" | "tohle" | "tamto" | "es" | "dies");
    (words.first().is_some_and(preposition) && words.get(1).is_some_and(|word| is_pointer(&word.lower) || matches!(word.lower.as_str(), "toho" | "tom" | "tím" | "davon" | "darüber" | "damit")))
        // "regarder ça demain": an infinitive and what was said before.
        || words.get(1).is_some_and(demonstrative)
}

/// Whether `words` name a time ahead ("la semana que viene", "le mois prochain", "nächste
/// Woche", "příští měsíc", "mañana", "demain", "morgen", "zítra"). German "Morgen" and
/// Spanish "mañana" after an article are the morning ("jeden Morgen", "por la mañana").
fn says_ahead(words: &[Word]) -> bool {
    words.iter().enumerate().any(|(at, word)| {
        let before = at.checked_sub(1).map_or("", |before| words[before].lower.as_str());
        match word.lower.as_str() {
            "próximo" | "próxima" | "prochain" | "prochaine" | "demain" | "nächste" | "nächsten" | "nächstes" | "příští" | "příštím"
            | "zítra" => true,
            "morgen" => word.text.starts_with('m') || at == 0,
            "mañana" => !matches!(before, "la" | "las" | "cada" | "esta" | "una" | "toda" | "de"),
            "que" => words.get(at + 1).is_some_and(|next| next.lower == "viene"),
            _ => false,
        }
    })
}

/// Whether a state is of something said before: "(estoy) harta de eso", "(je suis) fan de ça",
/// "(ich bin) müde davon": a preposition and a pointer right after the first word.
fn of_what_was_said(words: &[Word]) -> bool {
    let pointer = |word: &Word| {
        matches!(word.lower.as_str(), "eso" | "esto" | "ça" | "cela" | "ceci" | "das" | "dies" | "to" | "tohle" | "toho" | "tím")
    };
    let preposition = |word: &Word| matches!(word.lower.as_str(), "de" | "d'" | "con" | "von" | "mit" | "z" | "ze" | "s" | "se");
    matches!(words.get(1..3), Some([first, second]) if preposition(first) && pointer(second))
        || matches!(words.get(1).map(|word| word.lower.as_str()), Some("davon" | "damit" | "darüber"))
}

/// A reaction to the assistant's output ("das", "deine Beispiele", "la deuxième", "eso").
fn is_reaction(words: &[Word], language: Language) -> bool {
    is_dangling(words)
        || mentions_you(words, language)
        || words.first().is_some_and(|word| is_pointer(&word.lower) && words.len() <= 3 && !is_article_before_kind(words))
        || words.iter().take(3).any(|word| {
            is_task_noun_in(&word.lower, language)
                || matches!(
                    word.lower.as_str(),
                    "nummer"
                        | "numéro"
                        | "número"
                        | "číslo"
                        | "variante"
                        | "option"
                        | "opción"
                        | "možnost"
                        | "versión"
                        | "propuesta"
                        | "proposition"
                        | "alternativa"
                        | "alternative"
                )
        })
}

/// Whether `words` open with "le" or "la" as the article French and Spanish put before a kind
/// of thing liked ("Je préfère le thé", "Me gusta la playa"), not as a word that points back:
/// before a choice ("la deuxième", "la más corta", "la de arriba") or a verb ("je préfère le
/// faire") it points back.
fn is_article_before_kind(words: &[Word]) -> bool {
    let [article, kind, ..] = words else { return false };
    if !matches!(article.lower.as_str(), "le" | "la") {
        return false;
    }
    let choice = kind.lower.ends_with("ième")
        || matches!(
            kind.lower.as_str(),
            "premier"
                | "première"
                | "second"
                | "seconde"
                | "dernier"
                | "dernière"
                | "autre"
                | "même"
                | "primera"
                | "primero"
                | "segunda"
                | "segundo"
                | "tercera"
                | "tercero"
                | "cuarta"
                | "cuarto"
                | "quinta"
                | "quinto"
                | "última"
                | "último"
                | "otra"
                | "otro"
                | "misma"
                | "mismo"
                | "de"
                | "du"
                | "des"
                | "que"
                | "qui"
                | "cual"
                | "cuál"
                | "plus"
                | "moins"
                | "mieux"
                | "más"
                | "menos"
                | "mejor"
                | "peor"
        );
    // An object pronoun stands before an infinitive ("le faire", "la garder", "le voir").
    let infinitive = ((kind.lower.ends_with("er") || kind.lower.ends_with("ir")) && kind.lower.chars().count() > 4)
        || matches!(kind.lower.as_str(), "faire" | "voir" | "dire" | "lire" | "prendre" | "mettre" | "boire");
    !choice && !infinitive && !is_pointer(&kind.lower) && !kind.is_number()
}

fn names_task(words: &[Word], language: Language) -> bool {
    words.iter().take(4).any(|word| is_task_noun_in(&word.lower, language))
}

/// Whether a plan is a request to the assistant ("ich möchte wissen", "je veux savoir").
fn asks(words: &[Word], language: Language) -> bool {
    let task: &[&str] = match language {
        Language::German => &["wissen", "fragen", "sehen", "verstehen", "dass", "eine", "einen", "ein", "das", "die", "den"],
        Language::French => &["savoir", "demander", "voir", "comprendre", "que", "un", "une", "le", "la", "les"],
        Language::Spanish => &["saber", "preguntar", "ver", "entender", "que", "un", "una", "el", "la", "los"],
        Language::Czech => &["vědět", "zeptat", "vidět", "pochopit", "abys", "aby"],
        Language::English => &[],
    };
    words.first().is_some_and(|word| task.contains(&word.lower.as_str()))
}

fn be_word(language: Language) -> &'static str {
    match language {
        Language::German => "ist",
        Language::French => "est",
        Language::Spanish => "es",
        Language::Czech => "je",
        Language::English => "is",
    }
}

fn push(
    found: &mut Vec<Found>,
    memory_type: MemoryType,
    slot: &'static str,
    value: &[Word],
    statement: String,
    confidence: f32,
    reading: &Reading<'_>,
) {
    found.extend(Found::new(memory_type, slot, value, statement, confidence * reading.scale, reading.change));
}
