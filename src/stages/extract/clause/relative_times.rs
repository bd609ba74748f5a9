//! Anchors the relative times of a German, French, Spanish or Czech statement to the message's
//! date, as [`super::anchor`] does for English: "Ist letztes Jahr nach Wien gezogen", written on
//! 2023-05-08, becomes "Ist im Jahr 2022 nach Wien gezogen"; "il y a deux mois" "en mars 2023";
//! "ayer" "el 2023-05-07"; "loni" "v roce 2022". Each language's phrase is written again in
//! that language. Only the phrases that name their own distance are read (yesterday, last or
//! next week, month, year or season, so many units ago); a bare month or weekday is left as
//! said, and so is "today" alone ("heute", "aujourd'hui", "hoy", "dnes"), which in these
//! languages says "nowadays" as often as the day.

use std::sync::LazyLock;

use regex::{Captures, Regex};

use super::anchor::{season_is_over, shifted_month};
use super::time_phrases::{self, When};
use crate::model::Micros;
use crate::stages::extract::language::Language;
use crate::timefmt::civil_from_days;

/// Each language's relative times, in the order of [`Language::ALL`] (English's is
/// [`super::anchor`]'s). The groups: `keep`, a phrase that only looks like one ("am Morgen",
/// "por la mañana"), left as it is; `day` a day named by its distance; `last`, `next` or
/// `this` with `unit` a week, month, year or season counted from the message's; `count` with
/// `ago` so many units before it; `year_word` a word that is a year ("loni", "letos"); and
/// `since`, the word for "since" before any of these ("seit letztem Jahr", "depuis l'année
/// dernière", "desde hace un año"), which the date keeps.
static RELATIVE: LazyLock<[Option<Regex>; 5]> = LazyLock::new(|| {
    Language::ALL.map(|language| {
        let pattern = match language {
            Language::English => return None,
            Language::German => concat!(
                r"(?i)\b(?:",
                r"(?P<keep>am morgen|jeden morgen|guten morgen|morgens)",
                r"|(?P<since>seit )?(?:",
                r"(?P<day>vorgestern|übermorgen|gestern abend|gestern|heute morgen|heute früh|heute abend|morgen)",
                r"|(?:im |in der )?(?:(?P<last>letzte[nsm]?|vergangene[nsm]?|vorige[nsm]?)|(?P<next>nächste[nsm]?|kommende[nsm]?)|(?P<this>diese[nsm]?)) ",
                r"(?P<unit>woche|monat|jahr|sommer|winter|frühling|frühjahr|herbst)",
                r"|vor (?P<count>\d{1,2}|einem|einer|zwei|drei|vier|fünf|sechs|sieben|acht|neun|zehn|zwölf) (?P<ago>tagen|tag|wochen|woche|monaten|monat|jahren|jahr)",
                r"))\b"
            ),
            Language::French => concat!(
                r"(?i)\b(?P<since>depuis )?(?:",
                r"(?P<day>avant-hier|après-demain|hier soir|hier|ce matin|ce soir|cet après-midi|demain)",
                r"|(?:l['’]|le |la )(?P<unit>année|an|mois|semaine|été|hiver|printemps|automne) (?:(?P<last>dernière|dernier|passée|passé)|(?P<next>prochaine|prochain))",
                r"|(?P<this>cette|cet|ce) (?P<this_unit>année|mois-ci|mois|semaine|été|hiver|printemps|automne)",
                r"|il y a (?P<count>\d{1,2}|un|une|deux|trois|quatre|cinq|six|sept|huit|neuf|dix|douze) (?P<ago>jours|jour|semaines|semaine|mois|années|année|ans|an)",
                r")\b"
            ),
            Language::Spanish => concat!(
                r"(?i)\b(?:",
                r"(?P<keep>la mañana|las mañanas|de mañana|cada mañana|una mañana)",
                r"|(?P<since>desde )?(?:",
                r"(?P<day>anteayer|antier|anoche|ayer|pasado mañana|esta mañana|esta noche|mañana)",
                r"|(?:el |la )?(?P<unit>año|mes|semana|verano|invierno|primavera|otoño) (?:(?P<last>pasado|pasada)|(?P<next>próximo|próxima|que viene))",
                r"|(?:el |la )?(?:(?P<next_before>próximo|próxima)|(?P<this>este|esta)) (?P<this_unit>año|mes|semana|verano|invierno|primavera|otoño)",
                r"|hace (?P<count>\d{1,2}|un|una|dos|tres|cuatro|cinco|seis|siete|ocho|nueve|diez|doce) (?P<ago>días|día|semanas|semana|meses|mes|años|año)",
                r"))\b"
            ),
            Language::Czech => concat!(
                r"(?i)\b(?:",
                r"(?P<day>předevčírem|pozítří|včera večer|včera|dnes ráno|dnes večer|zítra)",
                r"|(?P<year_word>loni|vloni|letos)",
                r"|(?:(?P<last>minulý|minulou|minulé|minulého|loňský|loňské|loňskou)|(?P<next>příští)|(?P<this>tento|tuto|toto|tenhle|tuhle|tohle|letošní)) ",
                r"(?P<unit>týden|měsíc|rok|léto|zimu|zima|jaro|podzim)",
                r"|před (?P<count>\d{1,2}|jedním|jednou|dvěma|třemi|čtyřmi|pěti|šesti|sedmi|osmi|devíti|deseti|dvanácti) (?P<ago>dny|týdny|měsíci|lety|roky)",
                r"|před (?P<one_ago>dnem|týdnem|měsícem|rokem)",
                r")\b"
            ),
        };
        // Literal patterns, checked by the tests: building them cannot fail.
        Regex::new(pattern).ok()
    })
});

/// Whether `phrase` is a relative time and nothing else ("Last year", "Il y a deux mois",
/// "Před rokem"), in `language`.
pub fn is_only_a_time(phrase: &str, language: Language) -> bool {
    let relative = match &RELATIVE[language as usize] {
        Some(relative) => relative,
        None if language == Language::English => &*super::anchor::RELATIVE,
        None => return false,
    };
    relative.find(phrase).is_some_and(|found| found.start() == 0 && found.end() == phrase.len())
        && relative.captures(phrase).is_some_and(|captures| captures.name("keep").is_none())
}

/// A span of time a relative phrase counts in.
#[derive(Clone, Copy, PartialEq)]
enum Unit {
    Day,
    Week,
    Month,
    Year,
    /// A season, by its English name in [`season_is_over`]'s terms.
    Season(&'static str),
}

/// `statement`, in `language`, with its relative times written as dates counted from `time`
/// (the message's time). English statements are anchored by [`super::anchor`], not here.
pub fn anchor(statement: &str, language: Language, time: Micros) -> String {
    let Some(relative) = &RELATIVE[language as usize] else { return statement.to_owned() };
    if time <= 0 || !relative.is_match(statement) {
        return statement.to_owned();
    }
    let today = time.div_euclid(86_400_000_000);
    let anchored = relative
        .replace_all(statement, |captures: &Captures| written(captures, language, today).unwrap_or_else(|| captures[0].to_owned()))
        .into_owned();
    // A phrase that opened the statement ("Loni se přestěhoval…") leaves it opening in lowercase.
    let mut letters = anchored.chars();
    match letters.next() {
        Some(first) if first.is_lowercase() && statement.starts_with(char::is_uppercase) => first.to_uppercase().chain(letters).collect(),
        _ => anchored,
    }
}

/// The phrase `captures` found, written as a date in `language`; `None` leaves it as said.
fn written(captures: &Captures, language: Language, today: i64) -> Option<String> {
    if captures.name("keep").is_some() {
        return None;
    }
    let when = when(captures, today)?;
    Some(time_phrases::written(language, when, captures.name("since").is_some()))
}

/// When the phrase `captures` found is, counted from `today`.
fn when(captures: &Captures, today: i64) -> Option<When> {
    let (year, month, _) = civil_from_days(today);
    if let Some(day) = captures.name("day") {
        return Some(When::Day(today + day_offset(&day.as_str().to_lowercase())));
    }
    if let Some(word) = captures.name("year_word") {
        let offset = if word.as_str().to_lowercase() == "letos" { 0 } else { -1 };
        return Some(When::Year(year + offset));
    }
    if let Some(unit) = captures.name("ago").or_else(|| captures.name("one_ago")) {
        let count = match captures.name("count") {
            Some(count) => number(&count.as_str().to_lowercase())?,
            None => 1,
        };
        return match unit_of(&unit.as_str().to_lowercase())? {
            Unit::Day => Some(When::Day(today - count)),
            Unit::Week => Some(When::Around(today - 7 * count)),
            Unit::Month => {
                let (in_year, in_month) = shifted_month(year, month, -count);
                Some(When::Month(in_year, in_month))
            }
            Unit::Year => Some(When::Year(year - count)),
            Unit::Season(_) => None,
        };
    }
    let unit = captures.name("unit").or_else(|| captures.name("this_unit"))?;
    let direction = if captures.name("last").is_some() {
        -1
    } else if captures.name("next").is_some() || captures.name("next_before").is_some() {
        1
    } else {
        0
    };
    match unit_of(&unit.as_str().to_lowercase())? {
        Unit::Day => None,
        Unit::Week => Some(When::Week(today + 7 * direction)),
        Unit::Month => {
            let (in_year, in_month) = shifted_month(year, month, direction);
            Some(When::Month(in_year, in_month))
        }
        Unit::Year => Some(When::Year(year + direction)),
        Unit::Season(season) => {
            let season_year = if direction < 0 && !season_is_over(season, month) { year - 1 } else { year + i64::from(direction > 0) };
            Some(When::Season(season, season_year))
        }
    }
}

/// How many days from the message's a day word is.
fn day_offset(day: &str) -> i64 {
    match day {
        "vorgestern" | "avant-hier" | "anteayer" | "antier" | "předevčírem" => -2,
        "gestern" | "gestern abend" | "hier" | "hier soir" | "ayer" | "anoche" | "včera" | "včera večer" => -1,
        "morgen" | "demain" | "mañana" | "zítra" => 1,
        "übermorgen" | "après-demain" | "pasado mañana" | "pozítří" => 2,
        _ => 0,
    }
}

/// The span a unit word counts in, in any of the four languages and their forms.
fn unit_of(word: &str) -> Option<Unit> {
    Some(match word {
        "tag" | "tagen" | "jour" | "jours" | "día" | "días" | "dny" | "dnem" => Unit::Day,
        "woche" | "wochen" | "semaine" | "semaines" | "semana" | "semanas" | "týden" | "týdny" | "týdnem" => Unit::Week,
        "monat" | "monaten" | "mois" | "mois-ci" | "mes" | "meses" | "měsíc" | "měsíci" | "měsícem" => Unit::Month,
        "jahr" | "jahren" | "année" | "années" | "an" | "ans" | "año" | "años" | "rok" | "roky" | "lety" | "rokem" => Unit::Year,
        "sommer" | "été" | "verano" | "léto" => Unit::Season("summer"),
        "winter" | "hiver" | "invierno" | "zimu" | "zima" => Unit::Season("winter"),
        "frühling" | "frühjahr" | "printemps" | "primavera" | "jaro" => Unit::Season("spring"),
        "herbst" | "automne" | "otoño" | "podzim" => Unit::Season("fall"),
        _ => return None,
    })
}

/// A small number written out, or in digits.
fn number(word: &str) -> Option<i64> {
    Some(match word {
        "einem" | "einer" | "un" | "une" | "una" | "jedním" | "jednou" => 1,
        "zwei" | "deux" | "dos" | "dvěma" => 2,
        "drei" | "trois" | "tres" | "třemi" => 3,
        "vier" | "quatre" | "cuatro" | "čtyřmi" => 4,
        "fünf" | "cinq" | "cinco" | "pěti" => 5,
        "sechs" | "six" | "seis" | "šesti" => 6,
        "sieben" | "sept" | "siete" | "sedmi" => 7,
        "acht" | "huit" | "ocho" | "osmi" => 8,
        "neun" | "neuf" | "nueve" | "devíti" => 9,
        "zehn" | "dix" | "diez" | "deseti" => 10,
        "zwölf" | "douze" | "doce" | "dvanácti" => 12,
        digits => digits.parse().ok()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2023-05-08T12:00:00Z, a Monday.
    const MONDAY: Micros = 1_683_547_200_000_000;

    fn anchored(language: Language, statement: &str) -> String {
        anchor(statement, language, MONDAY)
    }

    #[test]
    fn every_language_has_a_pattern_but_english() {
        for language in Language::ALL {
            assert_eq!(RELATIVE[language as usize].is_some(), language != Language::English, "{language:?}");
        }
    }

    #[test]
    fn german_relative_times_become_dates() {
        let german = |statement| anchored(Language::German, statement);
        assert_eq!(german("Ist letztes Jahr nach Wien gezogen"), "Ist im Jahr 2022 nach Wien gezogen");
        assert_eq!(german("Ist gestern einen Halbmarathon gelaufen"), "Ist am 2023-05-07 einen Halbmarathon gelaufen");
        assert_eq!(german("Hat vor zwei Monaten geheiratet"), "Hat im März 2023 geheiratet");
        assert_eq!(german("Hat vor drei Jahren eine Katze adoptiert"), "Hat im Jahr 2020 eine Katze adoptiert");
        assert_eq!(german("Fängt nächsten Monat einen neuen Job an"), "Fängt im Juni 2023 einen neuen Job an");
        assert_eq!(german("War im letzten Sommer in Rom"), "War im Sommer 2022 in Rom");
        assert_eq!(german("Fängt morgen bei Siemens an"), "Fängt am 2023-05-09 bei Siemens an");
        // The morning is no tomorrow.
        assert_eq!(german("Läuft am Morgen fünf Kilometer"), "Läuft am Morgen fünf Kilometer");
    }

    #[test]
    fn french_relative_times_become_dates() {
        let french = |statement| anchored(Language::French, statement);
        assert_eq!(french("A déménagé à Lyon l'année dernière"), "A déménagé à Lyon en 2022");
        assert_eq!(french("A couru un semi-marathon hier"), "A couru un semi-marathon le 2023-05-07");
        assert_eq!(french("S'est marié il y a deux mois"), "S'est marié en mars 2023");
        assert_eq!(french("Commence un nouveau travail le mois prochain"), "Commence un nouveau travail en juin 2023");
        assert_eq!(french("A visité Rome l’été dernier"), "A visité Rome en été 2022");
        assert_eq!(french("A adopté un chat il y a 3 jours"), "A adopté un chat le 2023-05-05");
    }

    #[test]
    fn spanish_relative_times_become_dates() {
        let spanish = |statement| anchored(Language::Spanish, statement);
        assert_eq!(spanish("Se mudó a Sevilla el año pasado"), "Se mudó a Sevilla en 2022");
        assert_eq!(spanish("Corrió una media maratón ayer"), "Corrió una media maratón el 2023-05-07");
        assert_eq!(spanish("Se casó hace dos meses"), "Se casó en marzo de 2023");
        assert_eq!(spanish("Empieza un trabajo nuevo el mes que viene"), "Empieza un trabajo nuevo en junio de 2023");
        assert_eq!(spanish("Visitó Roma el verano pasado"), "Visitó Roma en el verano de 2022");
        assert_eq!(spanish("Empieza en Telefónica mañana"), "Empieza en Telefónica el 2023-05-09");
        // The morning is no tomorrow.
        assert_eq!(spanish("Corre por la mañana"), "Corre por la mañana");
    }

    #[test]
    fn czech_relative_times_become_dates() {
        let czech = |statement| anchored(Language::Czech, statement);
        assert_eq!(czech("Loni se přestěhoval do Brna"), "V roce 2022 se přestěhoval do Brna");
        assert_eq!(czech("Běžel včera půlmaraton"), "Běžel dne 2023-05-07 půlmaraton");
        assert_eq!(czech("Oženil se před dvěma měsíci"), "Oženil se v březnu 2023");
        assert_eq!(czech("Oženil se před rokem"), "Oženil se v roce 2022");
        assert_eq!(czech("Začíná příští měsíc v nové práci"), "Začíná v červnu 2023 v nové práci");
        assert_eq!(czech("Byl minulé léto v Římě"), "Byl v létě 2022 v Římě");
    }

    #[test]
    fn since_a_relative_time_is_since_its_date() {
        assert_eq!(anchored(Language::French, "Est végane depuis l'année dernière"), "Est végane depuis 2022");
        assert_eq!(anchored(Language::Spanish, "No bebe alcohol desde hace un año"), "No bebe alcohol desde 2022");
        assert_eq!(anchored(Language::Spanish, "Vive en Lima desde el verano pasado"), "Vive en Lima desde el verano de 2022");
        assert_eq!(anchored(Language::German, "Ist seit letztem Jahr Vegetarier"), "Ist seit 2022 Vegetarier");
        assert_eq!(anchored(Language::German, "Raucht seit gestern nicht mehr"), "Raucht seit dem 2023-05-07 nicht mehr");
    }

    #[test]
    fn a_phrase_is_only_a_time_when_the_time_is_all_of_it() {
        for (phrase, language) in [
            ("Two months ago", Language::English),
            ("Last year", Language::English),
            ("Vor zwei Monaten", Language::German),
            ("L'année dernière", Language::French),
            ("Il y a deux mois", Language::French),
            ("El año pasado", Language::Spanish),
            ("Před rokem", Language::Czech),
        ] {
            assert!(is_only_a_time(phrase, language), "{phrase}");
        }
        for (phrase, language) in [
            ("Last year I moved", Language::English),
            ("My cat", Language::English),
            ("Am Morgen", Language::German),
            ("Por la mañana", Language::Spanish),
            ("Hier soir je", Language::French),
        ] {
            assert!(!is_only_a_time(phrase, language), "{phrase}");
        }
    }

    #[test]
    fn a_statement_without_relative_times_or_a_date_is_unchanged() {
        assert_eq!(anchored(Language::German, "Wohnt in Graz"), "Wohnt in Graz");
        assert_eq!(anchor("Ist gestern gelaufen", Language::German, 0), "Ist gestern gelaufen");
        assert_eq!(anchored(Language::English, "Ran yesterday"), "Ran yesterday");
    }
}
