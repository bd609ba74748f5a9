//! The user with others as a subject in German, French, Spanish and Czech ("wir wohnen in
//! Graz", "nous avons deux chats", "on habite à Lyon", "vivimos en Cádiz", "bydlíme v Brně"):
//! what is said of "us" is said of the user, as English reads "we". The plural verb is read as
//! its first-person singular, whose class and third person the frame reader knows.

use super::verbs::class_of;
use crate::stages::extract::language::Language;

/// Plural forms whose singular is not made by the rule of the ending.
const IRREGULAR: &[(Language, &str, &str)] = &[
    (Language::German, "sind", "bin"),
    (Language::German, "haben", "habe"),
    (Language::German, "hatten", "hatte"),
    (Language::German, "waren", "war"),
    (Language::German, "wollen", "will"),
    (Language::German, "wollten", "wollte"),
    (Language::German, "mögen", "mag"),
    (Language::German, "möchten", "möchte"),
    (Language::German, "zogen", "zog"),
    (Language::French, "sommes", "suis"),
    (Language::French, "avons", "ai"),
    (Language::French, "allons", "vais"),
    (Language::French, "voulons", "veux"),
    (Language::French, "vivons", "vis"),
    (Language::French, "préférons", "préfère"),
    (Language::French, "venons", "viens"),
    (Language::French, "apprenons", "apprends"),
    (Language::French, "étions", "étais"),
    (Language::French, "avions", "avais"),
    // After "on", the third person singular.
    (Language::French, "est", "suis"),
    (Language::French, "a", "ai"),
    (Language::French, "va", "vais"),
    (Language::French, "veut", "veux"),
    (Language::French, "vit", "vis"),
    (Language::Spanish, "somos", "soy"),
    (Language::Spanish, "estamos", "estoy"),
    (Language::Spanish, "tenemos", "tengo"),
    (Language::Spanish, "vamos", "voy"),
    (Language::Spanish, "queremos", "quiero"),
    (Language::Spanish, "preferimos", "prefiero"),
    (Language::Spanish, "pensamos", "pienso"),
    (Language::Spanish, "venimos", "vengo"),
    (Language::Czech, "jsme", "jsem"),
    (Language::Czech, "chceme", "chci"),
    (Language::Czech, "máme", "mám"),
];

/// The first-person singular of a plural verb form said with "wir", "nous", "on", "nosotros"
/// or "my" (or, in Spanish and Czech, by its ending alone), when that singular is one of the
/// verbs whose class the lexicon knows: only those say something of the user with others that
/// is theirs too ("wir wohnen", "nous avons"), where an open verb is as often a plan of the
/// moment ("wir machen das morgen").
pub fn singular_of(word: &str, language: Language) -> Option<String> {
    let singular = IRREGULAR
        .iter()
        .find(|(of, plural, _)| *of == language && *plural == word)
        .map(|(_, _, singular)| (*singular).to_owned())
        .or_else(|| by_ending(word, language))?;
    class_of(language, &singular).is_some().then_some(singular)
}

/// The singular a regular plural ending gives: "wohnen" → "wohne", "habitons" → "habite",
/// "vivimos" → "vivo", "bydlíme" → "bydlím".
fn by_ending(word: &str, language: Language) -> Option<String> {
    match language {
        Language::German => word.strip_suffix("en").filter(|stem| stem.chars().count() >= 2).map(|stem| format!("{stem}e")),
        Language::French => {
            let stem = word.strip_suffix("ons").filter(|stem| stem.chars().count() >= 2)?;
            Some(if stem.ends_with('e') { stem.to_owned() } else { format!("{stem}e") })
        }
        Language::Spanish => ["amos", "emos", "imos"]
            .iter()
            .find_map(|ending| word.strip_suffix(ending))
            .filter(|stem| stem.chars().count() >= 2)
            .map(|stem| format!("{stem}o")),
        Language::Czech => {
            if let Some(stem) = word.strip_suffix("ujeme") {
                Some(format!("{stem}uju"))
            } else if let Some(stem) = word.strip_suffix("íme") {
                Some(format!("{stem}ím"))
            } else {
                word.strip_suffix("áme").map(|stem| format!("{stem}ám"))
            }
        }
        Language::English => None,
    }
}

/// Whether `word` has a plural first-person ending that Spanish or Czech say without the
/// pronoun ("vivimos", "bydlíme").
pub fn has_plural_ending(word: &str, language: Language) -> bool {
    match language {
        Language::Spanish => word.chars().count() >= 6 && ["amos", "emos", "imos"].iter().any(|ending| word.ends_with(ending)),
        Language::Czech => word.chars().count() >= 5 && ["íme", "áme", "ujeme", "jsme"].iter().any(|ending| word.ends_with(ending)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plural_verb_reads_as_the_singular_whose_class_is_known() {
        for (language, plural, singular) in [
            (Language::German, "wohnen", "wohne"),
            (Language::German, "haben", "habe"),
            (Language::German, "wollen", "will"),
            (Language::French, "habitons", "habite"),
            (Language::French, "avons", "ai"),
            (Language::French, "a", "ai"),
            (Language::Spanish, "vivimos", "vivo"),
            (Language::Spanish, "tenemos", "tengo"),
            (Language::Czech, "bydlíme", "bydlím"),
            (Language::Czech, "máme", "mám"),
        ] {
            assert_eq!(singular_of(plural, language).as_deref(), Some(singular), "{plural}");
        }
        // An open verb ("wir machen …", "bailamos …") is as often a plan of the moment.
        assert_eq!(singular_of("machen", Language::German), None);
        assert_eq!(singular_of("bailamos", Language::Spanish), None);
    }
}
