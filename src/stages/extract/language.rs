//! Tells which of the extraction languages (English, German, French, Spanish, Czech) a user's
//! message is written in, by counting each language's most frequent short words. Where the words
//! leave several languages tied, or name none (a short or foreign message), [`likely`] returns
//! every candidate and the caller tries each language's rules in turn.

use std::sync::LazyLock;

use rustc_hash::FxHashMap;

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
    let scores = scores(text);
    let best = scores.iter().copied().max().unwrap_or(0);
    if best == 0 {
        return Language::ALL.to_vec();
    }
    Language::ALL.iter().zip(scores).filter(|(_, score)| *score == best).map(|(language, _)| *language).collect()
}

/// Every marker word, with the languages it marks as bits (1 << the language's index in
/// [`Language::ALL`]).
static MARKERS: LazyLock<FxHashMap<&'static str, u8>> = LazyLock::new(|| {
    let mut markers: FxHashMap<&'static str, u8> = FxHashMap::default();
    for (index, language) in Language::ALL.iter().enumerate() {
        for word in language.markers() {
            *markers.entry(word).or_default() |= 1 << index;
        }
    }
    markers
});

/// Each language's score for `text`: two points a marker word, and one a character only that
/// language writes (`ř`, `ß`, `ñ`, `ç`).
fn scores(text: &str) -> [u32; 5] {
    let mut scores = [0u32; 5];
    for word in text.split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '’')).filter(|word| !word.is_empty()).take(400) {
        // Most words are lower case already: no copy for them.
        let needs_folding = word.chars().any(|c| c.is_uppercase() || c == '’');
        let folded;
        let lower = if needs_folding {
            folded = word.to_lowercase().replace('’', "'");
            folded.as_str()
        } else {
            word
        };
        if let Some(languages) = MARKERS.get(lower) {
            for (index, score) in scores.iter_mut().enumerate() {
                if languages & (1 << index) != 0 {
                    *score += 2;
                }
            }
        }
    }
    for character in text.chars().take(4000) {
        match character {
            'ř' | 'ů' | 'ě' | 'š' | 'č' | 'ž' | 'ň' | 'ť' | 'ď' | 'Ř' | 'Ů' | 'Ě' | 'Š' | 'Č' | 'Ž' => scores[4] += 1,
            'ß' | 'ä' | 'ö' | 'Ä' | 'Ö' => scores[1] += 1,
            'ñ' | '¿' | '¡' => scores[3] += 1,
            'ç' | 'è' | 'ê' | 'à' | 'ù' | 'œ' => scores[2] += 1,
            _ => {}
        }
    }
    scores
}

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
