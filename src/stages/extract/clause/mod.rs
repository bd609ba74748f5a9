//! Self-disclosure by clause analysis: a sentence is cut into clauses, each clause's subject is
//! found (the user, the user with others, or someone or something of the user's: "my husband",
//! "my job"), its verb read with the language's closed word classes, and the clause written
//! again as a third-person statement ("I'm a carpenter" → *Is a carpenter*, "my husband is
//! allergic to peanuts" → *Their husband is allergic to peanuts*). What the clause is about is
//! open: any occupation, place, name, food or tool stands as said. Only the grammar is listed.
//!
//! English has its own reader ([`english`]); German, French, Spanish and Czech share one
//! ([`frame`]) over their [`lexicon`]s. Relative times are written as dates: by [`anchor`] in
//! English, by [`relative_times`] in the other four.

pub mod anchor;
pub mod english;
pub mod frame;
pub mod frame_parts;
pub mod instruction;
pub mod instruments;
pub mod lexicon;
pub mod nouns;
pub mod plural;
pub mod relative_times;
pub mod split;
pub mod time_phrases;
pub mod verbs;
pub mod words;

use super::MemoryType;
use super::language::Language;
use crate::model::Micros;
use lexicon::Lexicon;
use words::Word;

/// One thing a clause says about the user.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    /// Its type.
    pub memory_type: MemoryType,
    /// The slot it fills (see [`super::slots`]).
    pub slot: &'static str,
    /// The value: what the statement says of the slot.
    pub value: String,
    /// The third-person statement.
    pub statement: String,
    /// How sure the reading is.
    pub confidence: f32,
    /// Whether the clause says the value changed ("I moved to", "I now work at"), which lets it
    /// replace a single-valued slot's current value on its own.
    pub change: bool,
    /// The clause's byte range in the sentence: the evidence.
    pub span: std::ops::Range<usize>,
}

impl Found {
    /// A reading of one clause, unless its value is empty or its statement runs past a
    /// sentence's length (a run-on the cut missed). The span is set by [`disclosures`].
    pub fn new(
        memory_type: MemoryType,
        slot: &'static str,
        value: &[Word],
        statement: String,
        confidence: f32,
        change: bool,
    ) -> Option<Found> {
        // A dash or colon the clause ended on ("… mit zwei Kindern – wie …") is not said of the
        // user.
        let dangling_mark = |c: char| matches!(c, '–' | '—' | '-' | ':' | ';') || c.is_whitespace();
        let value = words::joined(value).trim_end_matches(dangling_mark).to_owned();
        let statement = statement.trim_end_matches(dangling_mark).to_owned();
        (!value.is_empty() && statement.split_whitespace().count() <= MAX_STATEMENT_WORDS).then_some(Found {
            memory_type,
            slot,
            value,
            statement,
            confidence,
            change,
            span: 0..0,
        })
    }
}

/// Most words a statement may have.
const MAX_STATEMENT_WORDS: usize = 24;

/// What the readers know of the sentence around a clause.
#[derive(Debug, Clone, Copy)]
pub struct Context {
    /// When the message was written (relative times are anchored to it).
    pub time: Micros,
    /// Whether the message's language is told for sure (one language scored best): only then
    /// is any word with a Spanish first-person ending taken for a verb ("Cocino…"); otherwise
    /// only the verbs the lexicon knows are ("also", "video" in English are none).
    pub sure: bool,
    /// Whether the message answers a turn of the assistant's: only then can "the characters"
    /// be a quality of something said before rather than a thing of its own ("the beach").
    pub after_reply: bool,
}

/// The disclosures of one sentence of the user's own words, read as `language`.
pub fn disclosures(sentence: &str, language: Language, context: &Context) -> Vec<Found> {
    let lexicon = Lexicon::of(language);
    let mut found = Vec::new();
    if !lexicon.may_disclose(sentence) || asks_for_writing(sentence, language) {
        return found;
    }
    let mut clauses = split::clauses(sentence, lexicon);
    join_fronted_time(sentence, language, &mut clauses);
    for range in clauses {
        let clause = &sentence[range.clone()];
        if opens_english_question(clause, language) {
            continue;
        }
        // A hypothetical is not so; a clause with a bracketed placeholder ("I'm [name]", "I
        // work at [company]") is a template, not a fact.
        if is_hypothetical(clause, language) || (clause.contains('[') && clause.contains(']')) {
            continue;
        }
        let all_words = words::words(clause, language);
        let words = without_closing_aside(&all_words, language);
        if words.is_empty() {
            continue;
        }
        let before = found.len();
        if let Some(wish) = instruction::read(words, language) {
            found.push(wish);
        } else {
            match language {
                Language::English => english::read(words, context, &mut found),
                _ => frame::read(words, lexicon, context, &mut found),
            }
        }
        for item in &mut found[before..] {
            item.span = trimmed(sentence, range.clone());
            // English statements are anchored as they are written (`english`, which knows a
            // clause's tense); the other languages' here.
            if language != Language::English {
                item.statement = relative_times::anchor(&item.statement, language, context.time);
            }
        }
    }
    found
}

/// Most words of a time phrase said before the clause it dates ("Il y a deux mois,").
const MOST_FRONTED_TIME_WORDS: usize = 4;

/// Joins a first clause that is only a time phrase, cut off by its comma ("Two months ago, I
/// adopted a cat", "L'année dernière, j'ai déménagé…"), to the clause it dates, so the
/// statement keeps the time (and anchors it) as it does without the comma.
fn join_fronted_time(sentence: &str, language: Language, clauses: &mut Vec<std::ops::Range<usize>>) {
    let [first, second, ..] = clauses.as_slice() else { return };
    let phrase = sentence[first.clone()].trim();
    // Told by its shape before the patterns are tried: this runs on every sentence read.
    let Some(phrase) = phrase.strip_suffix(',') else { return };
    if phrase.split_whitespace().count() > MOST_FRONTED_TIME_WORDS || !relative_times::is_only_a_time(phrase.trim_end(), language) {
        return;
    }
    let joined = first.start..second.end;
    clauses.splice(0..2, [joined]);
}

/// Whether `clause` is English and opens with a question word that both readers pass over
/// there ("What am I doing wrong?", "How do I…", "Why does my…", "Can I…"): the standing-wish
/// reader takes it for a subject and the English reader for a question, so the clause gives
/// nothing and is not read into words. Such questions were two fifths of the sentences of a
/// generated history that hold a first-person word. ("Do" opens "Do not ever…", a wish, and
/// is read.)
fn opens_english_question(clause: &str, language: Language) -> bool {
    language == Language::English && words::first_word_is(clause, language, &["what", "how", "why", "does", "is", "are", "can"])
}

/// `range` of `text` without the spaces and clause punctuation at its ends.
fn trimmed(text: &str, range: std::ops::Range<usize>) -> std::ops::Range<usize> {
    let slice = &text[range.clone()];
    let start = range.start + (slice.len() - slice.trim_start().len());
    let kept = slice.trim().trim_end_matches([',', ';', ':', '-', '—', '–']).trim_end();
    start..start + kept.len()
}

/// Each language's markers of a condition or a wish, in the order of [`Language::ALL`], between
/// spaces: one pass over a clause finds any of them.
static HYPOTHETICAL: std::sync::LazyLock<[aho_corasick::AhoCorasick; 5]> = std::sync::LazyLock::new(|| {
    Language::ALL.map(|language| {
        let markers: &[&str] = match language {
            Language::English => {
                &[" if ", " unless ", " suppose ", " imagine ", " pretend ", " hypothetically ", " let's say ", " i wish ", " what if "]
            }
            Language::German => &[" wenn ", " falls ", " angenommen ", " stell dir vor ", " würde ", " wäre ", " hätte "],
            Language::French => &[" si je ", " si j'", " imaginons ", " supposons ", " serais ", " aurais ", " imagine "],
            Language::Spanish => &[" si ", " imagina ", " supongamos ", " sería ", " tuviera ", " fuera "],
            Language::Czech => &[" kdyby", " pokud bych ", " představ si ", " dejme tomu ", " bych "],
        };
        // Fixed, short literals: building the automaton cannot fail.
        aho_corasick::AhoCorasick::new(markers).expect("the markers make an automaton")
    })
});

/// Whether a clause speaks of what is not so: a condition or a wish ("if I were", "wenn ich",
/// "si j'étais", "si tuviera", "kdybych").
fn is_hypothetical(clause: &str, language: Language) -> bool {
    let mut lower = String::with_capacity(clause.len() + 2);
    lower.push(' ');
    if clause.is_ascii() {
        lower.extend(clause.bytes().map(|byte| char::from(byte.to_ascii_lowercase())));
    } else {
        lower.extend(clause.chars().flat_map(char::to_lowercase).map(|c| if c == '’' { '\'' } else { c }));
    }
    lower.push(' ');
    HYPOTHETICAL[language as usize].is_match(&lower)
}

/// Whether the sentence asks for a text to be written ("Write a cover letter saying I am a
/// nurse"): what it says of the user is the text's, not a fact.
fn asks_for_writing(sentence: &str, language: Language) -> bool {
    // The longest opener is shorter than this many characters: only they are lowercased.
    const OPENER_CHARS: usize = 24;
    let head = sentence.trim_start();
    let ascii_head = &head.as_bytes()[..head.len().min(OPENER_CHARS)];
    // Nearly every sentence starts with ASCII: lowercased on the stack.
    let mut ascii_lower = [0u8; OPENER_CHARS];
    let lower: std::borrow::Cow<'_, str> = if ascii_head.is_ascii() {
        for (lower, byte) in ascii_lower.iter_mut().zip(ascii_head) {
            *lower = byte.to_ascii_lowercase();
        }
        // ASCII bytes are UTF-8: the empty string is never taken.
        std::borrow::Cow::Borrowed(std::str::from_utf8(&ascii_lower[..ascii_head.len()]).unwrap_or_default())
    } else {
        head.chars().take(OPENER_CHARS).flat_map(char::to_lowercase).collect::<String>().into()
    };
    let openers: &[&str] = match language {
        Language::English => &[
            "write ",
            "draft ",
            "compose ",
            "translate ",
            "rewrite ",
            "rephrase ",
            "generate ",
            "create a ",
            "make a ",
            "pretend ",
            "act as ",
            "imagine ",
            "please write ",
            "can you write ",
            "could you write ",
        ],
        Language::German => &["schreib", "formulier", "übersetz", "verfasse", "erstelle ", "stell dir vor", "tu so"],
        Language::French => &["écris", "rédige", "traduis", "reformule", "imagine", "fais comme si"],
        Language::Spanish => &["escribe", "redacta", "traduce", "reformula", "imagina", "haz como si"],
        Language::Czech => &["napiš", "přelož", "přeformuluj", "představ si", "předstírej", "sepiš"],
    };
    openers.iter().any(|opener| lower.starts_with(opener))
}

/// `words` as a statement's text: first-person words in the third person, fillers left out.
pub fn rest_in_third_person(words: &[Word], lexicon: &Lexicon) -> String {
    let mut out: Vec<Word> = Vec::with_capacity(words.len());
    let mut previous_was_subject = false;
    // The filler left out just before this word, if any.
    let mut filler_before: Option<&Word> = None;
    for (index, word) in words.iter().enumerate() {
        // "now and then" keeps its "now".
        let time_phrase = word.lower == "now" && words.get(index + 1).is_some_and(|next| next.lower == "and");
        if lexicon.fillers.contains(&word.lower.as_str()) && !out.is_empty() && !time_phrase {
            // "right now" goes as one filler, not leaving "right".
            if word.lower == "now" && out.last().is_some_and(|last| last.lower == "right") {
                out.pop();
            }
            filler_before = Some(word);
            continue;
        }
        // A measure is not left without its degree word: "so much" is a filler as a whole
        // ("Loves dogs", not "Loves dogs much"), "very much" and "too much" say how much
        // ("does not like movies very much").
        if let Some(filler) = filler_before.take()
            && word.lower == "much"
            && lexicon.language == Language::English
        {
            if filler.lower == "so" {
                continue;
            }
            out.push(filler.clone());
        }
        if is_emphatic_reflexive(word, &out, index + 1 == words.len(), lexicon.language) {
            continue;
        }
        // "the US" is a country, not "us".
        let country = word.text == "US" || word.text == "U.S";
        let mut written = match lexicon.third_person_pronoun(&word.lower).filter(|_| !country) {
            Some(third) => Word { text: third.into(), lower: third.into(), comma: false },
            None => word.clone(),
        };
        if previous_was_subject && lexicon.language == Language::English {
            let verb = match word.lower.as_str() {
                "am" => Some("are"),
                "was" => Some("were"),
                _ => None,
            };
            if let Some(verb) = verb {
                written = Word { text: verb.into(), lower: verb.into(), comma: false };
            }
        }
        if lexicon.language == Language::Spanish
            && let Some(infinitive) = spanish_infinitive_with_own_clitic(&written.lower)
        {
            // "casarme" → casarse: the clitic on an infinitive is the user too.
            // The clitic is ASCII ("me", "nos"), as long in the text as in its lowercase.
            let clitic = written.lower.len() - infinitive.len();
            let text = written.text.get(..written.text.len().saturating_sub(clitic)).unwrap_or(infinitive);
            written = Word { text: format!("{text}se").into(), lower: format!("{infinitive}se").into(), comma: written.comma };
        }
        previous_was_subject = lexicon.self_subjects.contains(&word.lower.as_str());
        out.push(written);
    }
    words::joined(&out)
}

/// The infinitive of a Spanish infinitive with the user's own clitic attached ("casarme",
/// "mudarnos", "apuntarme" → "casar", "mudar", "apuntar").
fn spanish_infinitive_with_own_clitic(word: &str) -> Option<&str> {
    let infinitive = word.strip_suffix("me").or_else(|| word.strip_suffix("nos"))?;
    (infinitive.len() >= 4 && (infinitive.ends_with("ar") || infinitive.ends_with("er") || infinitive.ends_with("ir")))
        .then_some(infinitive)
}

/// `words` without a closing aside after a comma that says nothing of the user ("I'm Dave, by
/// the way", "I'm a nurse, btw", "I live in Leeds, haha").
fn without_closing_aside(words: &[Word], language: Language) -> &[Word] {
    const ASIDES: &[&[&str]] = &[
        &["by", "the", "way"],
        &["btw"],
        &["anyway"],
        &["anyways"],
        &["though"],
        &["lol"],
        &["haha"],
        &["hahaha"],
        &["tbh"],
        &["to", "be", "honest"],
        &["if", "that", "matters"],
        &["if", "that", "helps"],
        &["fwiw"],
    ];
    if language != Language::English {
        return words;
    }
    for aside in ASIDES {
        let Some(start) = words.len().checked_sub(aside.len()) else { continue };
        let said = words[start..].iter().map(|word| word.lower.trim_end_matches(['.', '!', '?'])).eq(aside.iter().copied());
        if start > 0 && words[start - 1].comma && said {
            return &words[..start];
        }
    }
    words
}

/// Whether `word`, the last of a clause (`last`), is a reflexive that only stresses the
/// subject ("I have two dogs myself", "I'm a producer myself"): left out of the statement.
/// After a preposition or a past verb it is an object ("by myself", "enjoyed myself"), and
/// alone it is the whole object.
fn is_emphatic_reflexive(word: &Word, before: &[Word], last: bool, language: Language) -> bool {
    last && language == Language::English
        && matches!(word.lower.as_str(), "myself" | "ourselves")
        && before.last().is_some_and(|previous| {
            !previous.lower.ends_with("ed")
                && !matches!(
                    previous.lower.as_str(),
                    "by" | "for" | "to" | "with" | "about" | "of" | "on" | "at" | "from" | "in" | "into" | "after" | "like" | "than"
                )
        })
}

/// `text` with its first letter in upper case.
pub fn capitalized(text: &str) -> String {
    let mut characters = text.chars();
    characters.next().map_or(String::new(), |first| first.to_uppercase().chain(characters).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Words the readers give meaning to, in every language, with punctuation and odd
    /// characters: any clause made of them must read without a panic.
    const VOCABULARY: &[&str] = &[
        "I",
        "I'm",
        "my",
        "we",
        "our",
        "am",
        "have",
        "been",
        "not",
        "never",
        "to",
        "a",
        "the",
        "as",
        "and",
        "but",
        "love",
        "live",
        "in",
        "moved",
        "from",
        "work",
        "at",
        "want",
        "will",
        "would",
        "can",
        "going",
        "used",
        "is",
        "are",
        "was",
        "afraid",
        "of",
        "married",
        "from",
        "based",
        "called",
        "Ana",
        "Leeds",
        "34",
        "years",
        "old",
        "you",
        "your",
        "that",
        "it",
        "ich",
        "bin",
        "mein",
        "wohne",
        "je",
        "j'ai",
        "suis",
        "mon",
        "soy",
        "vivo",
        "me",
        "gusta",
        "mi",
        "jsem",
        "bydlím",
        "můj",
        "mám",
        "rád",
        "nejím",
        ",",
        "?",
        "!",
        "’",
        "ß",
        "ě",
        "—",
        ";",
        ":",
        "if",
        "always",
        "never",
        "please",
        "yesterday",
        "last",
        "May",
        "ago",
        "two",
    ];

    proptest! {
        #[test]
        fn any_clause_reads_without_a_panic(picks in proptest::collection::vec(0..VOCABULARY.len(), 0..14), language in 0..5usize) {
            let sentence: Vec<&str> = picks.iter().map(|&pick| VOCABULARY[pick]).collect();
            let sentence = sentence.join(" ");
            let found = disclosures(&sentence, Language::ALL[language], &Context { time: 1_683_547_200_000_000, sure: language == 3, after_reply: false });
            for item in found {
                prop_assert!(sentence.get(item.span.clone()).is_some());
            }
        }
    }
}
