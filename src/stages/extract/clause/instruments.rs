//! Playing an instrument is a skill ("I play the cello", "Ich spiele Posaune", "Je joue du
//! piano", "Toco el bajo", "Hraju na kytaru"), where playing a game or a sport is a pastime: the
//! instrument's name tells them apart.

use crate::stages::extract::language::Language;

/// Whether `word` (lowercase) is a first-person or base form of "to play" in `language`.
pub fn is_play_verb(word: &str, language: Language) -> bool {
    match language {
        Language::English => matches!(word, "play" | "played"),
        Language::German => matches!(word, "spiele" | "spielte"),
        Language::French => matches!(word, "joue" | "jouais"),
        Language::Spanish => matches!(word, "toco" | "tocaba" | "toqué"),
        Language::Czech => matches!(word, "hraju" | "hraji" | "hrál" | "hrála"),
    }
}

/// Stems of instruments' names in the five languages, matched at a word's start (so plurals,
/// cases and compounds count: "Gitarre", "guitarra", "kytaru", "E-Gitarre" by its end).
const INSTRUMENT_STEMS: &[&str] = &[
    // English
    "guitar",
    "piano",
    "violin",
    "viola",
    "cello",
    "drum",
    "bass",
    "flute",
    "sax",
    "trumpet",
    "trombone",
    "ukulele",
    "harp",
    "clarinet",
    "accordion",
    "keyboard",
    "oboe",
    "bassoon",
    "banjo",
    "mandolin",
    "harmonica",
    "organ",
    "tuba",
    "horn",
    "synth",
    "percussion",
    "fiddle",
    "bagpipe", // German
    "gitarre",
    "klavier",
    "geige",
    "bratsche",
    "schlagzeug",
    "flöte",
    "posaune",
    "trompete",
    "harfe",
    "klarinette",
    "akkordeon",
    "orgel",
    "kontrabass",
    "fagott",
    "mundharmonika",
    "querflöte",
    "blockflöte",
    "tuba", // French
    "guitare",
    "violon",
    "violoncelle",
    "batterie",
    "basse",
    "flûte",
    "trompette",
    "harpe",
    "clarinette",
    "accordéon",
    "orgue",
    "hautbois",
    "contrebasse", // Spanish
    "guitarra",
    "violín",
    "violonchelo",
    "chelo",
    "batería",
    "bajo",
    "flauta",
    "saxofón",
    "trompeta",
    "trombón",
    "arpa",
    "clarinete",
    "acordeón",
    "órgano",
    "teclado",
    "contrabajo",
    "charango",
    "cajón", // Czech
    "kytar",
    "klavír",
    "housl",
    "violoncell",
    "bicí",
    "basu",
    "bask",
    "flétn",
    "saxofon",
    "trubk",
    "pozoun",
    "harf",
    "klarinet",
    "akordeon",
    "varhan",
    "klávesy",
];

/// Whether `word` (lowercase) names a musical instrument.
pub fn is_instrument(word: &str) -> bool {
    let word = word.rsplit('-').next().unwrap_or(word);
    INSTRUMENT_STEMS.iter().any(|stem| word.starts_with(stem) && word.len() <= stem.len() + 4)
}

/// Whether the first words of what is played (after an article or "na", "de la", "du") name
/// an instrument.
pub fn names_instrument(words: &[&str]) -> bool {
    words
        .iter()
        .take(4)
        .find(|word| {
            !matches!(
                **word,
                "the"
                    | "a"
                    | "an"
                    | "my"
                    | "some"
                    | "die"
                    | "das"
                    | "der"
                    | "den"
                    | "du"
                    | "de"
                    | "la"
                    | "le"
                    | "l'"
                    | "el"
                    | "na"
                    | "mein"
                    | "meine"
            )
        })
        .is_some_and(|word| is_instrument(word))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instruments_are_told_from_games_and_sports_in_each_language() {
        for words in [&["the", "cello"][..], &["drums"], &["posaune"], &["du", "piano"], &["el", "bajo"], &["na", "kytaru"], &["e-gitarre"]]
        {
            assert!(names_instrument(words), "{words:?}");
        }
        for words in
            [&["tennis"][..], &["chess"], &["fußball"], &["au", "foot"], &["videojuegos"], &["na", "počítači"], &["bass", "fishing"][1..]]
        {
            assert!(!names_instrument(words), "{words:?}");
        }
    }
}
