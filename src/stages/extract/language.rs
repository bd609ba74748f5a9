//! Tells which of the extraction languages (English, German, French, Spanish, Czech) a user's
//! message is written in, by counting each language's most frequent short words. Where the words
//! leave several languages tied, or name none (a short or foreign message), [`likely`] returns
//! every candidate and the caller tries each language's rules in turn.

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
                "work", "live", "don't", "always", "never", "please", "you", "this",
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
    let mut scores = Scores::default();
    let mut folded = String::new();
    for_each_word(text, |word| {
        scores.add_marked(MARKERS.get(word, &mut folded));
        scores.words_counted() == MOST_WORDS_SCORED
    });
    scores.finish(text)
}

/// Words scored at most: the start of a long text tells its language.
const MOST_WORDS_SCORED: u32 = 400;

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

    /// The languages `text` (whose words were added) may be written in, most likely first, as
    /// [`likely`] tells them.
    pub fn finish(mut self, text: &str) -> Vec<Language> {
        if !text.is_ascii() {
            for character in text.chars().take(4000) {
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
        }
        let best = self.scores.iter().copied().max().unwrap_or(0);
        if best == 0 {
            return Language::ALL.to_vec();
        }
        Language::ALL.iter().zip(self.scores).filter(|(_, score)| *score == best).map(|(language, _)| *language).collect()
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
