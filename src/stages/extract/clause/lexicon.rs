//! Each language's closed word classes, the part of grammar that does not grow with what people
//! talk about: the user as a subject, possessives and pronouns and what a third-person
//! statement writes for them, conjunctions, markers that open a clause, fillers, negation, and
//! how a first-person verb becomes a third-person one. Open words (occupations, places, names,
//! foods, tools) are never listed: they are whatever stands in the clause.

use std::sync::LazyLock;

use super::plural;
use super::verbs::{self, VerbClass};
use crate::stages::extract::language::Language;
use crate::stages::extract::word_table::{WordTable, for_each_word_told};

/// One language's closed word classes.
pub struct Lexicon {
    /// The language.
    pub language: Language,
    /// Words that open a new clause after a comma: question words, conjunctions, other subjects.
    openers: &'static [&'static str],
    /// Coordinating conjunctions: a cut before one when a subject follows it.
    conjunctions: &'static [&'static str],
    /// Subordinators that always open a new clause ("because", "although").
    subordinators: &'static [&'static str],
    /// The user as a subject ("i", "ich", "je", "yo", "já").
    pub self_subjects: &'static [&'static str],
    /// The user with others ("we").
    pub plural_subjects: &'static [&'static str],
    /// The user's possessives and what a statement writes for them ("my" → "their").
    pub possessives: &'static [(&'static str, &'static str)],
    /// Other first-person pronouns and what a statement writes for them ("me" → "them").
    pub pronouns: &'static [(&'static str, &'static str)],
    /// Discourse markers and conjunctions skipped at a clause's start.
    pub lead_ins: &'static [&'static str],
    /// Intensifiers and time fillers dropped from a statement ("really", "just", "currently").
    pub fillers: &'static [&'static str],
    /// Negation words.
    pub negations: &'static [&'static str],
    /// A first-person verb's third-person form ("wohne" → "wohnt"); `None` when the word is no
    /// first-person verb form the language's rules know.
    pub third_person: fn(&str) -> Option<String>,
    /// Whether a word is a first-person singular verb, for languages that drop the subject.
    pub first_person_verb: fn(&str) -> bool,
    /// Words of standing wishes ("always", "never"), which may start a statement about the user.
    pub standing: &'static [&'static str],
    /// The user as an object ("me", "us"): a sentence with no other first-person word says
    /// something of the user only in the shapes [`OBJECT_SHAPES`] names (English only).
    pub objects: &'static [&'static str],
}

/// In [`MARKERS`]: a subject, plural subject or standing wish, without the apostrophes at its end.
const MARKER: u8 = 1;
/// In [`MARKERS`]: a possessive.
const POSSESSIVE: u8 = 2;
/// In [`MARKERS`]: the user as an object in English ("me", "us"), which says something of the
/// user only in the few shapes [`OBJECT_SHAPES`] names.
const OBJECT: u8 = 4;
/// In [`MARKERS`]: a word of a shape in which the user as an object says something.
const OBJECT_SHAPE: u8 = 8;

/// The English words without which a sentence that has the user only as an object ("Help me
/// write an email", "Give me ten ideas") gives no memory, whatever else it says: the clause
/// readers read such a sentence only as a standing wish ("from now on", "going forward", "in
/// future", "every time", "by default"; "always", "never" and "ever" are markers of their own),
/// a pitfall ("Webpack didn't work for us") or an "as a …" opening ("As a nurse, give me…").
/// A fifth of the sentences the clause readers were given were such requests.
const OBJECT_SHAPES: &[&str] =
    &["now", "forward", "future", "time", "default", "did", "didn't", "didn’t", "didnt", "does", "doesn't", "doesn’t", "doesnt", "as"];

/// Each language's words that [`Lexicon::may_disclose`] looks for, in the order of
/// [`Language::ALL`], compared as `eq_ignore_ascii_case` compares: one lookup a word instead of
/// a pass over the lists.
static MARKERS: LazyLock<[WordTable; 5]> = LazyLock::new(|| {
    Language::ALL.map(|language| {
        let lexicon = Lexicon::of(language);
        let mut table = WordTable::default();
        for marker in lexicon.self_subjects.iter().chain(lexicon.plural_subjects).chain(lexicon.standing) {
            table.insert_or(&marker.trim_end_matches('\'').to_ascii_lowercase(), MARKER);
        }
        for object in lexicon.objects {
            table.insert_or(object, OBJECT);
        }
        if !lexicon.objects.is_empty() {
            for word in OBJECT_SHAPES {
                table.insert_or(word, OBJECT_SHAPE);
            }
        }
        for (possessive, _) in lexicon.possessives {
            table.insert_or(&possessive.to_ascii_lowercase(), POSSESSIVE);
        }
        table
    })
});

/// In [`CLASSES`]: a word that opens a new clause after a comma.
const OPENER: u8 = 1;
/// In [`CLASSES`]: a coordinating conjunction.
const CONJUNCTION: u8 = 2;
/// In [`CLASSES`]: a subordinator.
const SUBORDINATOR: u8 = 4;
/// In [`CLASSES`]: the user as a subject (without the apostrophes at its end), the user with
/// others, or a possessive.
const SUBJECT: u8 = 8;

/// The closed classes of one word in one language.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WordClasses(u8);

impl WordClasses {
    /// Whether the word opens a new clause after a comma.
    pub fn opens_clause(self) -> bool {
        self.0 & (OPENER | CONJUNCTION | SUBORDINATOR) != 0
    }

    /// Whether the word is a coordinating conjunction.
    pub fn is_conjunction(self) -> bool {
        self.0 & CONJUNCTION != 0
    }

    /// Whether the word always opens a new clause.
    pub fn is_subordinator(self) -> bool {
        self.0 & SUBORDINATOR != 0
    }
}

/// Each language's closed word classes that [`split`](super::split) asks about every word of a
/// sentence, in the order of [`Language::ALL`]: one lookup a word instead of a pass over lists.
static CLASSES: LazyLock<[WordTable; 5]> = LazyLock::new(|| {
    Language::ALL.map(|language| {
        let lexicon = Lexicon::of(language);
        let mut table = WordTable::default();
        for (words, class) in [(lexicon.openers, OPENER), (lexicon.conjunctions, CONJUNCTION), (lexicon.subordinators, SUBORDINATOR)] {
            for word in words {
                table.insert_or(word, class);
            }
        }
        for subject in lexicon.self_subjects {
            table.insert_or(subject.trim_end_matches('\''), SUBJECT);
        }
        for word in lexicon.plural_subjects.iter().chain(lexicon.possessives.iter().map(|(possessive, _)| possessive)) {
            table.insert_or(word, SUBJECT);
        }
        table
    })
});

impl Lexicon {
    /// The lexicon of `language`.
    pub fn of(language: Language) -> &'static Lexicon {
        match language {
            Language::English => &ENGLISH,
            Language::German => &GERMAN,
            Language::French => &FRENCH,
            Language::Spanish => &SPANISH,
            Language::Czech => &CZECH,
        }
    }

    /// The closed classes `word` (lowercase) belongs to in this language.
    pub fn classes(&self, word: &str) -> WordClasses {
        WordClasses(CLASSES[self.language as usize].get_lowercase(word))
    }

    /// Whether `word` (lowercase) starts a clause about the user: a subject, a possessive or
    /// (where the subject is dropped) a first-person verb. `classes` are those of the word
    /// without the apostrophes at its end ([`Lexicon::classes`]).
    pub fn starts_subject(&self, word: &str, classes: WordClasses) -> bool {
        let word = word.trim_end_matches('\'');
        if self.language == Language::English && (word.starts_with("i'") || matches!(word, "im" | "ive")) {
            return true;
        }
        if self.language == Language::French && (word.starts_with("j'") || word.starts_with("j’")) {
            return true;
        }
        if classes.0 & SUBJECT != 0 {
            return true;
        }
        if matches!(self.language, Language::German | Language::French) && self.verb_class(word).is_some() {
            return true;
        }
        // "…y tenemos dos hijos": a plural verb said without its pronoun.
        if plural::has_plural_ending(word, self.language) && plural::singular_of(word, self.language).is_some() {
            return true;
        }
        (self.first_person_verb)(word)
    }

    /// Whether `sentence` may say something about the user in this language: one of its words
    /// is a first-person subject, possessive or verb, or a word of a standing wish, or (in
    /// English) the user is an object in one of the few shapes that say something
    /// ([`OBJECT_SHAPES`]). Most sentences of a history hold none, and are not read further.
    pub fn may_disclose(&self, sentence: &str) -> bool {
        let markers = &MARKERS[self.language as usize];
        let mut folded = String::new();
        // What an English sentence without a marker has: the user as an object, a word of a
        // shape that makes that say something.
        let (mut object, mut object_shape) = (false, false);
        // The walk tells whether a word is ASCII (nearly every one): it is not looked at again.
        let get = |word: &str, ascii: bool, folded: &mut String| {
            if ascii { markers.get_ascii(word.as_bytes(), folded) } else { markers.get_ignoring_ascii_case(word, folded) }
        };
        let marked = for_each_word_told(sentence, |word, ascii| {
            // A subject, plural subject or standing wish is compared without the apostrophes
            // at its end ("j'" is "j"), a possessive as it stands.
            // Most words end in neither apostrophe (the last byte of `’` is 0x99): not trimmed.
            let trimmed = if word.as_bytes().last().is_some_and(|last| matches!(last, b'\'' | 0x99)) {
                word.trim_end_matches(['\'', '’'])
            } else {
                word
            };
            let part = get(trimmed, ascii, &mut folded);
            object |= part & OBJECT != 0;
            object_shape |= part & OBJECT_SHAPE != 0;
            let possessive =
                if trimmed.len() == word.len() { part & POSSESSIVE != 0 } else { get(word, ascii, &mut folded) & POSSESSIVE != 0 };
            // Checked on the bytes: this runs on every word of every sentence that gets this far.
            let opens_with = |letters: &[u8]| {
                let bytes = word.as_bytes();
                bytes.len() > 1
                    && letters.iter().any(|letter| bytes[0].eq_ignore_ascii_case(letter))
                    && (bytes[1] == b'\'' || word[1..].starts_with('’'))
            };
            // "I'm", "im", "I've", and the user with others: "we're", "we’ve".
            let english_contraction = self.language == Language::English
                && (opens_with(b"i")
                    || word.eq_ignore_ascii_case("im")
                    || word.eq_ignore_ascii_case("ive")
                    || (word.get(..2).is_some_and(|we| we.eq_ignore_ascii_case("we"))
                        && (word[2..].starts_with('\'') || word[2..].starts_with('’'))));
            let elided = self.language == Language::French && opens_with(b"jm");
            part & MARKER != 0
                || possessive
                || english_contraction
                || elided
                || (matches!(self.language, Language::Spanish | Language::Czech) && might_be_first_person_verb(self.language, word) && {
                    let lower = word.to_lowercase();
                    (self.first_person_verb)(&lower)
                        || (self.language == Language::Spanish && lower.ends_with('o') && lower.len() >= 4)
                        // "Empecé a correr…", "Conocí a mi mujer…": a regular preterite.
                        || (self.language == Language::Spanish && verbs::is_spanish_preterite(&lower))
                        || lower == "me"
                })
        });
        marked || (object && object_shape)
    }

    /// What a statement writes for the first-person word `word` (lowercase), if it is one.
    pub fn third_person_pronoun(&self, word: &str) -> Option<&'static str> {
        self.possessives.iter().chain(self.pronouns).find(|(first, _)| *first == word).map(|(_, third)| *third)
    }

    /// The class of the verb `word` (lowercase) in this language.
    pub fn verb_class(&self, word: &str) -> Option<VerbClass> {
        verbs::class_of(self.language, word)
    }
}

/// A cheap look at a word's ending before the first-person verb test, which lowercases and
/// looks the word up: most words of a sentence end otherwise.
fn might_be_first_person_verb(language: Language, word: &str) -> bool {
    let word = word.trim_end_matches(['\'', '’']);
    match language {
        Language::Spanish => {
            word.ends_with(['o', 'O', 'é', 'í', 'y']) || word.eq_ignore_ascii_case("me") || word.eq_ignore_ascii_case("he")
        }
        _ => {
            word.ends_with("ím")
                || word.ends_with("ám")
                || word.ends_with('i')
                || word.ends_with('u')
                || word.ends_with("em")
                || word.ends_with('l')
                || word.ends_with("la")
        }
    }
}

fn never(_: &str) -> bool {
    false
}

static ENGLISH: Lexicon = Lexicon {
    language: Language::English,
    openers: &[
        "i", "my", "we", "our", "you", "he", "she", "they", "it", "this", "that", "how", "what", "where", "why", "when", "which", "who",
        "can", "could", "would", "should", "do", "does", "is", "are", "please", "any", "thanks", "thank", "so", "then", "also", "plus",
    ],
    conjunctions: &["and", "but", "or", "so", "plus", "yet", "since", "while", "as", "now", "before", "after", "until"],
    subordinators: &["because", "although", "though", "whereas", "but", "cause", "cuz", "unless"],
    self_subjects: &["i"],
    plural_subjects: &["we"],
    possessives: &[("my", "their"), ("our", "their")],
    pronouns: &[
        ("i", "they"),
        ("me", "them"),
        ("mine", "theirs"),
        ("myself", "themselves"),
        ("we", "they"),
        ("us", "them"),
        ("ours", "theirs"),
    ],
    lead_ins: &[
        "and",
        "but",
        "or",
        "so",
        "also",
        "well",
        "oh",
        "yeah",
        "yes",
        "yep",
        "no",
        "nope",
        "actually",
        "honestly",
        "btw",
        "lol",
        "haha",
        "um",
        "hmm",
        "hi",
        "hey",
        "hello",
        "ok",
        "okay",
        "anyway",
        "because",
        "cause",
        "cuz",
        "since",
        "though",
        "although",
        "plus",
        "then",
        "now",
        "currently",
        "personally",
        "basically",
        "like",
        "fyi",
        "wow",
        "ah",
        "sure",
        "right",
        "great",
        "cool",
        "nice",
        "alright",
    ],
    fillers: &[
        "really",
        "just",
        "actually",
        "also",
        "honestly",
        "personally",
        "basically",
        "literally",
        "totally",
        "absolutely",
        "definitely",
        "truly",
        "seriously",
        "currently",
        "still",
        "now",
        "kinda",
        "pretty",
        "super",
        "so",
        "very",
        "too",
        "even",
        "certainly",
        "genuinely",
    ],
    negations: &["not", "never", "no"],
    third_person: verbs::english_third_person,
    first_person_verb: never,
    standing: &["always", "never", "ever"],
    objects: &["me", "us"],
};

static GERMAN: Lexicon = Lexicon {
    language: Language::German,
    openers: &[
        "ich",
        "mein",
        "meine",
        "wir",
        "unser",
        "unsere",
        "du",
        "sie",
        "er",
        "es",
        "das",
        "wie",
        "was",
        "wo",
        "warum",
        "wann",
        "welche",
        "welcher",
        "kannst",
        "könntest",
        "kann",
        "hast",
        "bitte",
        "danke",
        "also",
        "dann",
        "aber",
        "und",
        "weil",
        "denn",
        "obwohl",
        "da",
        "wobei",
    ],
    conjunctions: &["und", "aber", "oder", "sondern", "denn"],
    subordinators: &["weil", "obwohl", "aber", "denn", "sondern"],
    self_subjects: &["ich"],
    plural_subjects: &["wir"],
    possessives: &[
        ("mein", "ihr"),
        ("meine", "ihre"),
        ("meinen", "ihren"),
        ("meinem", "ihrem"),
        ("meiner", "ihrer"),
        ("meines", "ihres"),
        ("unser", "ihr"),
        ("unsere", "ihre"),
        ("unseren", "ihren"),
        ("unserem", "ihrem"),
        ("unserer", "ihrer"),
    ],
    pronouns: &[("ich", "sie"), ("mich", "sich"), ("mir", "sich"), ("wir", "sie"), ("uns", "sich")],
    lead_ins: &[
        "und",
        "aber",
        "oder",
        "also",
        "naja",
        "na",
        "ja",
        "nein",
        "übrigens",
        "ehrlich",
        "gesagt",
        "hallo",
        "hi",
        "hey",
        "ok",
        "okay",
        "weil",
        "denn",
        "da",
        "obwohl",
        "sondern",
        "zwar",
        "ach",
        "gut",
    ],
    fillers: &[
        "wirklich",
        "eigentlich",
        "echt",
        "total",
        "halt",
        "eben",
        "ja",
        "gerade",
        "auch",
        "sehr",
        "so",
        "mal",
        "schon",
        "noch",
        "ziemlich",
    ],
    negations: &["nicht", "kein", "keine", "keinen", "keinem", "keiner", "nie", "niemals"],
    third_person: verbs::german_third_person,
    first_person_verb: never,
    standing: &["immer", "nie", "niemals"],
    objects: &[],
};

static FRENCH: Lexicon = Lexicon {
    language: Language::French,
    openers: &[
        "je", "j'", "mon", "ma", "mes", "nous", "on", "tu", "vous", "il", "elle", "ils", "elles", "c'", "comment", "quoi", "que", "qu'",
        "où", "pourquoi", "quand", "quel", "quelle", "quels", "peux", "pourrais", "merci", "donc", "alors", "mais", "et", "parce", "car",
        "puisque",
    ],
    conjunctions: &["et", "mais", "ou", "donc", "car"],
    subordinators: &["parce", "car", "mais", "puisque", "bien", "quoique"],
    self_subjects: &["je", "j'"],
    plural_subjects: &["nous", "on"],
    possessives: &[("mon", "son"), ("ma", "sa"), ("mes", "ses"), ("notre", "leur"), ("nos", "leurs")],
    pronouns: &[("je", "il·elle"), ("j'", "il·elle"), ("me", "se"), ("m'", "s'"), ("moi", "soi"), ("nous", "eux")],
    lead_ins: &[
        "et",
        "mais",
        "ou",
        "donc",
        "alors",
        "bon",
        "bah",
        "ben",
        "oui",
        "non",
        "d'ailleurs",
        "sinon",
        "salut",
        "bonjour",
        "coucou",
        "ok",
        "car",
        "parce",
        "que",
        "puisque",
        "enfin",
        "bref",
        "franchement",
    ],
    fillers: &["vraiment", "juste", "actuellement", "aussi", "très", "trop", "encore", "déjà", "toujours", "bien", "franchement"],
    negations: &["ne", "n'", "pas", "jamais", "plus", "rien"],
    third_person: verbs::french_third_person,
    first_person_verb: never,
    standing: &["toujours", "jamais"],
    objects: &[],
};

static SPANISH: Lexicon = Lexicon {
    language: Language::Spanish,
    openers: &[
        "yo", "mi", "mis", "me", "nosotros", "nosotras", "tú", "usted", "él", "ella", "cómo", "qué", "dónde", "por", "cuándo", "cuál",
        "puedes", "podrías", "gracias", "pero", "y", "porque", "aunque", "así", "entonces",
    ],
    conjunctions: &["y", "e", "pero", "o", "así"],
    subordinators: &["porque", "aunque", "pero", "sino"],
    self_subjects: &["yo"],
    plural_subjects: &["nosotros", "nosotras"],
    possessives: &[("mi", "su"), ("mis", "sus"), ("nuestro", "su"), ("nuestra", "su"), ("nuestros", "sus"), ("nuestras", "sus")],
    pronouns: &[("yo", "él·ella"), ("me", "se"), ("mí", "sí"), ("conmigo", "consigo"), ("nos", "se")],
    lead_ins: &[
        "y", "e", "pero", "o", "pues", "bueno", "vale", "sí", "hola", "oye", "ok", "porque", "aunque", "entonces", "además", "también",
        "la", "verdad", "así", "que",
    ],
    fillers: &["realmente", "muy", "también", "actualmente", "ahora", "todavía", "ya", "solo", "sólo", "bastante", "mucho"],
    negations: &["no", "nunca", "jamás"],
    third_person: verbs::spanish_third_person,
    first_person_verb: verbs::spanish_first_person,
    standing: &["siempre", "nunca"],
    objects: &[],
};

static CZECH: Lexicon = Lexicon {
    language: Language::Czech,
    openers: &[
        "já", "můj", "moje", "moji", "my", "naše", "náš", "ty", "on", "ona", "to", "jak", "co", "kde", "proč", "kdy", "který", "která",
        "můžeš", "mohl", "mohla", "díky", "děkuji", "ale", "a", "protože", "takže", "tak", "i",
    ],
    conjunctions: &["a", "ale", "nebo", "i", "takže", "tak"],
    subordinators: &["protože", "ale", "jelikož", "ačkoli", "ačkoliv", "přestože"],
    self_subjects: &["já"],
    plural_subjects: &["my"],
    possessives: &[
        ("můj", "její"),
        ("moje", "její"),
        ("moji", "její"),
        ("mé", "její"),
        ("mí", "její"),
        ("mého", "jejího"),
        ("mému", "jejímu"),
        ("mém", "jejím"),
        ("mým", "jejím"),
        ("mou", "její"),
        ("mých", "jejích"),
        ("náš", "její"),
        ("naše", "její"),
        ("naši", "její"),
        ("našeho", "jejího"),
    ],
    pronouns: &[("já", "ona"), ("mě", "ji"), ("mne", "ji"), ("mně", "jí"), ("mi", "jí"), ("mnou", "jí")],
    lead_ins: &[
        "a", "ale", "nebo", "tak", "no", "jo", "ano", "ne", "ahoj", "čau", "dobrý", "den", "ok", "protože", "takže", "jinak", "teda",
        "vlastně",
    ],
    fillers: &[
        "opravdu",
        "fakt",
        "vlastně",
        "teď",
        "taky",
        "také",
        "moc",
        "velmi",
        "hodně",
        "ještě",
        "už",
        "právě",
        "momentálně",
        "aktuálně",
    ],
    negations: &["ne", "nikdy"],
    third_person: verbs::czech_third_person,
    first_person_verb: verbs::czech_first_person,
    standing: &["vždy", "vždycky", "nikdy"],
    objects: &[],
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_with_the_user_only_as_an_object_is_not_read() {
        let english = Lexicon::of(Language::English);
        for request in ["Help me plan a birthday party.", "Give us five ideas for dinner.", "Tell ME a joke about penguins."] {
            assert!(!english.may_disclose(request), "{request:?}");
        }
    }

    #[test]
    fn the_user_as_an_object_is_read_in_the_shapes_that_say_something() {
        let english = Lexicon::of(Language::English);
        for said in [
            "From now on, call me Sam.",
            "Going forward, remind me in Celsius.",
            "In future, address me formally.",
            "Every time, show me the sources.",
            "By default answer me in German.",
            "Webpack didn’t work for us.",
            "Gulp DOESNT work for me",
            "As a welder, give me safety tips.",
            "Always answer me in French.",
            "Help me, I'm a nurse.",
            "Help me with my thesis.",
            "We’re from a small town, so this is new to us.",
        ] {
            assert!(english.may_disclose(said), "{said:?}");
        }
    }
}
