//! Tells which of the extraction languages (English, German, French, Spanish, Czech) a user's
//! message, and each of its sentences, is written in, by counting each language's most frequent
//! short words. Where the words leave several languages tied, or name none (a short or foreign
//! message), [`likely`] returns every candidate and the caller tries each language's rules in
//! turn.

use std::sync::LazyLock;

use super::word_table::{WordTable, for_each_word};

/// The languages the rules cover.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Language {
    /// English.
    English,
    /// German.
    German,
    /// French.
    French,
    /// Spanish.
    Spanish,
    /// Czech.
    Czech,
}

impl Language {
    /// Every language, in the order ties are broken.
    pub const ALL: [Language; 5] = [Language::English, Language::German, Language::French, Language::Spanish, Language::Czech];

    /// The BCP 47 tag (`en`, `de`, …).
    pub fn tag(self) -> &'static str {
        match self {
            Language::English => "en",
            Language::German => "de",
            Language::French => "fr",
            Language::Spanish => "es",
            Language::Czech => "cs",
        }
    }

    /// Frequent words that mark the language: function words and first-person forms, the
    /// words self-statements are made of. Words shared by two languages (`a`, `la`, `die`) are
    /// left out or kept only where they are far more common in one.
    fn markers(self) -> &'static [&'static str] {
        match self {
            Language::English => &[
                "i", "i'm", "im", "my", "me", "the", "and", "is", "am", "to", "of", "it", "with", "for", "that", "we", "our", "have",
                "work", "live", "don't", "always", "never", "please", "you", "this", "about", "can", "what", "how", "your", "are", "be",
                "but", "if", "from", "just", "need", "want", "would", "could", "should", "at", "not", "help", "write", "tell", "give",
            ],
            Language::German => &[
                "ich",
                "mein",
                "meine",
                "meinen",
                "meiner",
                "bin",
                "und",
                "der",
                "die",
                "das",
                "ist",
                "nicht",
                "mit",
                "wir",
                "unser",
                "habe",
                "arbeite",
                "wohne",
                "bitte",
                "immer",
                "nie",
                "auf",
                "für",
                "ein",
                "eine",
                "keine",
                "kein",
                "mag",
                "lerne",
                "spreche",
                "nutze",
                "benutze",
                "esse",
                "hasse",
                "liebe",
                "bevorzuge",
                "möchte",
                "heiße",
            ],
            Language::French => &[
                "je",
                "j'ai",
                "j'aime",
                "suis",
                "mon",
                "ma",
                "mes",
                "et",
                "le",
                "les",
                "est",
                "pas",
                "avec",
                "pour",
                "nous",
                "une",
                "des",
                "toujours",
                "jamais",
                "habite",
                "travaille",
                "ne",
                "du",
                "au",
                "c'est",
                "j'habite",
                "j'adore",
                "j'apprends",
                "j'utilise",
                "préfère",
                "déteste",
                "parle",
                "veux",
                "mange",
            ],
            Language::Spanish => &[
                "yo",
                "soy",
                "mi",
                "mis",
                "el",
                "los",
                "las",
                "es",
                "y",
                "que",
                "con",
                "para",
                "por",
                "una",
                "tengo",
                "vivo",
                "trabajo",
                "siempre",
                "nunca",
                "estoy",
                "del",
                "me",
                "nosotros",
                "pero",
                "prefiero",
                "quiero",
                "hablo",
                "odio",
                "uso",
                "como",
                "bebo",
                "estudio",
                "necesito",
                "decidimos",
                "planeo",
                "voy",
                "muy",
                "hace",
                "desde",
                "cuando",
                "mucho",
                "años",
                "meses",
                "también",
            ],
            Language::Czech => &[
                "jsem",
                "mám",
                "můj",
                "moje",
                "moji",
                "mého",
                "mi",
                "se",
                "na",
                "že",
                "ve",
                "pro",
                "není",
                "nejsem",
                "bydlím",
                "pracuji",
                "pracuju",
                "vždy",
                "nikdy",
                "prosím",
                "jsme",
                "mě",
                "používám",
                "učím",
                "nejím",
                "mluvím",
                "chci",
                "preferuji",
                "nesnáším",
                "jmenuji",
                "studuji",
            ],
        }
    }
}

/// The language `text` is most likely written in: the one whose markers it uses most, English
/// when none is used (or on a tie with English).
pub fn detect(text: &str) -> Language {
    likely(text)[0]
}

/// The languages `text` may be written in, most likely first: those tied for the most markers
/// (short texts often share a word or two between languages: Spanish and English `me`), or every
/// language when the text has no marker at all.
pub fn likely(text: &str) -> Vec<Language> {
    scored(text).best()
}

/// The scores of `text`'s marker words and characters.
fn scored(text: &str) -> Scores {
    let mut scores = Scores::default();
    let mut folded = String::new();
    for_each_word(text, |word| {
        scores.add_marked(MARKERS.get(word, &mut folded));
        scores.words_counted() == MOST_WORDS_SCORED
    });
    scores.add_characters(text, MOST_CHARACTERS_SCORED);
    scores
}

/// The languages each of a message's `sentences` may be written in, most likely first: a
/// sentence with marker words of its own is told by them ("Ich arbeite bei Globex." in a
/// message that goes on in English is German), tied languages narrowed to those the whole
/// message leaves possible; a sentence without any is told by the whole message, as
/// [`likely`] tells the sentences joined with spaces.
pub fn likely_by_sentence(sentences: &[&str]) -> Vec<Languages> {
    let mut message = Scores::default();
    // What the message's characters may still add: `likely` scans the joined text's first
    // `MOST_CHARACTERS_SCORED`, the space before each sentence but the first among them.
    let mut message_characters = MOST_CHARACTERS_SCORED;
    let mut folded = String::new();
    let mut own_scores = Vec::with_capacity(sentences.len());
    for (index, sentence) in sentences.iter().enumerate() {
        let mut own = Scores::default();
        for_each_word(sentence, |word| {
            let marked = MARKERS.get(word, &mut folded);
            own.add_marked(marked);
            message.add_marked(marked);
            own.words_counted() == MOST_WORDS_SCORED && message.words_counted() == MOST_WORDS_SCORED
        });
        if index > 0 {
            message_characters = message_characters.saturating_sub(1);
        }
        own.add_characters(sentence, MOST_CHARACTERS_SCORED);
        message_characters -= message.add_characters(sentence, message_characters);
        own_scores.push(own);
    }
    let message = message.best_set();
    own_scores
        .into_iter()
        .map(|own| {
            if own.is_unmarked() {
                return message;
            }
            let own = own.best_set();
            let shared = Languages(own.0 & message.0);
            if own.len() > 1 && !shared.is_empty() { shared } else { own }
        })
        .collect()
}

/// A set of languages, read in the order of [`Language::ALL`] (a copy, not a list: a message's
/// sentences are each told one, and allocating each cost more than telling it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Languages(u8);

impl Languages {
    /// How many languages the set holds.
    pub fn len(self) -> usize {
        self.0.count_ones() as usize
    }

    /// Whether the set holds none.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Its languages, in the order of [`Language::ALL`].
    pub fn iter(self) -> impl Iterator<Item = Language> {
        Language::ALL.into_iter().enumerate().filter(move |(index, _)| self.0 & (1 << index) != 0).map(|(_, language)| language)
    }

    /// Its languages as a list.
    pub fn to_vec(self) -> Vec<Language> {
        self.iter().collect()
    }
}

/// Whether some sentence of `text` may be read as one of `languages` ([`likely_by_sentence`]):
/// the whole text may be written in one of them, or one of its words or characters marks one
/// (a sentence is told by its own markers).
pub fn may_be_read_as(text: &str, languages: &[Language]) -> bool {
    let scores = scored(text);
    // Unmarked, a text may be in any language.
    scores.is_unmarked() || Language::ALL.iter().zip(scores.scores).any(|(language, score)| score > 0 && languages.contains(language))
}

/// Words scored at most: the start of a long text tells its language.
const MOST_WORDS_SCORED: u32 = 400;
/// Characters scored at most for the letters only one language writes.
const MOST_CHARACTERS_SCORED: usize = 4000;

/// Each language's score for a text, built word by word (so a pass over the words for another
/// purpose can score them on the way): two points a marker word, and one a character only that
/// language writes (`ř`, `ß`, `ñ`, `ç`).
#[derive(Debug, Default)]
pub struct Scores {
    scores: [u32; 5],
    words: u32,
}

impl Scores {
    /// How many words were added.
    pub fn words_counted(&self) -> u32 {
        self.words
    }

    /// Adds one word that marks the languages of `languages` ([`marked_languages`]).
    pub fn add_marked(&mut self, languages: u8) {
        if self.words == MOST_WORDS_SCORED {
            return;
        }
        self.words += 1;
        for (index, score) in self.scores.iter_mut().enumerate() {
            if languages & (1 << index) != 0 {
                *score += 2;
            }
        }
    }

    /// Adds a point for each character of the first `limit` of `text` that only one language
    /// writes; returns how many characters it read (`limit` or fewer).
    fn add_characters(&mut self, text: &str, limit: usize) -> usize {
        if text.is_ascii() {
            return text.len().min(limit);
        }
        let mut read = 0;
        for character in text.chars().take(limit) {
            read += 1;
            match character {
                'ř' | 'ů' | 'ě' | 'š' | 'č' | 'ž' | 'ň' | 'ť' | 'ď' | 'Ř' | 'Ů' | 'Ě' | 'Š' | 'Č' | 'Ž' => {
                    self.scores[4] += 1
                }
                'ß' | 'ä' | 'ö' | 'Ä' | 'Ö' => self.scores[1] += 1,
                'ñ' | '¿' | '¡' => self.scores[3] += 1,
                'ç' | 'è' | 'ê' | 'à' | 'ù' | 'œ' => self.scores[2] += 1,
                _ => {}
            }
        }
        read
    }

    /// Whether nothing marked any language.
    fn is_unmarked(&self) -> bool {
        self.scores.iter().all(|score| *score == 0)
    }

    /// The languages tied for the best score, or every language when none scored.
    fn best(&self) -> Vec<Language> {
        self.best_set().to_vec()
    }

    /// The languages tied for the best score, or every language when none scored, as a set.
    fn best_set(&self) -> Languages {
        let best = self.scores.iter().copied().max().unwrap_or(0);
        let tied = self.scores.iter().enumerate().filter(|(_, score)| **score == best).fold(0u8, |set, (index, _)| set | 1 << index);
        Languages(tied)
    }
}

/// Every word that marks a language, with the languages it marks as bits (1 << the language's
/// index in [`Language::ALL`]).
pub fn marked_languages() -> impl Iterator<Item = (&'static str, u8)> {
    Language::ALL.iter().enumerate().flat_map(|(index, language)| language.markers().iter().map(move |word| (*word, 1 << index)))
}

/// Every marker word, with the languages it marks as bits.
static MARKERS: LazyLock<WordTable> = LazyLock::new(|| {
    let mut markers = WordTable::default();
    for (word, languages) in marked_languages() {
        markers.insert_or(word, languages);
    }
    markers
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sentence_with_markers_of_its_own_is_told_by_them() {
        let lists = |sentences: &[&str]| likely_by_sentence(sentences).into_iter().map(Languages::to_vec).collect::<Vec<_>>();
        assert_eq!(
            lists(&["Ich arbeite bei Globex.", "Summarize the main points of the report, what do you think?"]),
            [vec![Language::German], vec![Language::English]]
        );
        assert_eq!(lists(&["Help me write an email about a short story."]), [vec![Language::English]]);
        // Tied in the sentence and in the message: both are tried.
        assert_eq!(lists(&["Me llamo Mateo."]), [vec![Language::English, Language::Spanish]]);
        // Tied in the sentence, told by the message.
        assert_eq!(lists(&["Soy de Madrid y trabajo con Python.", "Me llamo Mateo."])[1], [Language::Spanish]);
    }

    #[test]
    fn a_text_may_be_read_as_a_language_one_of_its_sentences_is_marked_in() {
        let spanish_or_czech = [Language::Spanish, Language::Czech];
        assert!(may_be_read_as("Učím se pnpm. What would you need to know about the setup, and how can I help?", &spanish_or_czech));
        assert!(may_be_read_as("Cocino paella.", &spanish_or_czech), "no marker at all: every language");
        assert!(!may_be_read_as("What would you need to know about the setup?", &spanish_or_czech));
    }

    #[test]
    fn a_sentence_without_markers_is_told_by_the_whole_message() {
        for sentences in [
            &["Soy de Madrid y vivo en Sevilla.", "Paella."][..],
            &["Bydlím v Brně.", "Ořechy.", "Já taky."][..],
            &["Ich wohne in Köln.", "Straße."][..],
            &["Zoë.", "Paella."][..],
        ] {
            let by_sentence = likely_by_sentence(sentences);
            assert_eq!(by_sentence[1].to_vec(), likely(&sentences.join(" ")), "{sentences:?}");
        }
    }

    #[test]
    fn each_language_is_told_from_a_short_self_statement() {
        assert_eq!(detect("I work as a nurse and I live in Leeds."), Language::English);
        assert_eq!(detect("Ich arbeite als Krankenschwester und wohne in Berlin."), Language::German);
        assert_eq!(detect("Je suis infirmière et j'habite à Lyon."), Language::French);
        assert_eq!(detect("Soy enfermera y vivo en Madrid."), Language::Spanish);
        assert_eq!(detect("Jsem zdravotní sestra a bydlím v Brně."), Language::Czech);
    }

    #[test]
    fn a_tie_keeps_every_tied_language_and_no_marker_keeps_all() {
        assert_eq!(likely("Me llamo Mateo."), [Language::English, Language::Spanish]);
        assert_eq!(likely("Mateo!"), Language::ALL);
    }

    #[test]
    fn text_in_no_rule_language_reads_as_english() {
        assert_eq!(detect("12345 !!!"), Language::English);
        assert_eq!(detect(""), Language::English);
    }
}
