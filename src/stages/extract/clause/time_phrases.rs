//! How German, French, Spanish and Czech write a date, a week, a month, a year or a season in
//! a statement: after "in" ("im März 2023", "en mars 2023", "en marzo de 2023", "v březnu
//! 2023") or, where the user said "since" ("seit", "depuis", "desde"), after it ("seit März
//! 2023", "depuis mars 2023", "desde marzo de 2023"). [`super::relative_times`] finds the
//! phrases; this writes them.

use super::anchor::date;
use crate::stages::extract::language::Language;

/// When something was or will be, as a relative time named it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum When {
    /// A day (days since the epoch).
    Day(i64),
    /// About a day: "two weeks ago".
    Around(i64),
    /// The week around a day.
    Week(i64),
    /// A month of a year (1–12).
    Month(i64, i64),
    /// A year.
    Year(i64),
    /// A season (by its English name) of a year.
    Season(&'static str, i64),
}

/// `when` in `language`'s words, after "since" where `since` (the user's "seit", "depuis",
/// "desde" is part of the phrase written).
pub fn written(language: Language, when: When, since: bool) -> String {
    match when {
        When::Day(days) => day(language, &date(days), since),
        When::Around(days) => around(language, &date(days), since),
        When::Week(days) => week(language, &date(days), since),
        When::Month(year, month) => month_of(language, year, month, since),
        When::Year(year) => year_of(language, year, since),
        When::Season(season, year) => season_of(language, season, year, since),
    }
}

fn day(language: Language, day: &str, since: bool) -> String {
    match (language, since) {
        (Language::German, false) => format!("am {day}"),
        (Language::German, true) => format!("seit dem {day}"),
        (Language::French, false) => format!("le {day}"),
        (Language::French, true) => format!("depuis le {day}"),
        (Language::Spanish, false) => format!("el {day}"),
        (Language::Spanish, true) => format!("desde el {day}"),
        (Language::Czech, _) => format!("dne {day}"),
        (Language::English, _) => format!("on {day}"),
    }
}

fn around(language: Language, day: &str, since: bool) -> String {
    match (language, since) {
        (Language::German, false) => format!("um den {day}"),
        (Language::German, true) => format!("seit etwa dem {day}"),
        (Language::French, false) => format!("vers le {day}"),
        (Language::French, true) => format!("depuis environ le {day}"),
        (Language::Spanish, false) => format!("hacia el {day}"),
        (Language::Spanish, true) => format!("desde aproximadamente el {day}"),
        (Language::Czech, _) => format!("kolem {day}"),
        (Language::English, _) => format!("around {day}"),
    }
}

fn week(language: Language, day: &str, since: bool) -> String {
    match (language, since) {
        (Language::German, false) => format!("in der Woche vom {day}"),
        (Language::German, true) => format!("seit der Woche vom {day}"),
        (Language::French, false) => format!("la semaine du {day}"),
        (Language::French, true) => format!("depuis la semaine du {day}"),
        (Language::Spanish, false) => format!("la semana del {day}"),
        (Language::Spanish, true) => format!("desde la semana del {day}"),
        (Language::Czech, _) => format!("v týdnu od {day}"),
        (Language::English, _) => format!("in the week of {day}"),
    }
}

fn year_of(language: Language, year: i64, since: bool) -> String {
    match (language, since) {
        (Language::German, false) => format!("im Jahr {year}"),
        (Language::German, true) => format!("seit {year}"),
        (Language::French | Language::Spanish, false) => format!("en {year}"),
        (Language::French, true) => format!("depuis {year}"),
        (Language::Spanish, true) => format!("desde {year}"),
        (Language::Czech, _) => format!("v roce {year}"),
        (Language::English, _) => format!("in {year}"),
    }
}

/// "im März 2023", "en mars 2023", "en marzo de 2023", "v březnu 2023"; "seit März 2023".
fn month_of(language: Language, year: i64, month: i64, since: bool) -> String {
    const GERMAN: [&str; 12] =
        ["Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September", "Oktober", "November", "Dezember"];
    const FRENCH: [&str; 12] =
        ["janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre", "octobre", "novembre", "décembre"];
    const SPANISH: [&str; 12] =
        ["enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre", "octubre", "noviembre", "diciembre"];
    // Czech months after "v", in the locative.
    const CZECH: [&str; 12] =
        ["lednu", "únoru", "březnu", "dubnu", "květnu", "červnu", "červenci", "srpnu", "září", "říjnu", "listopadu", "prosinci"];
    let index = (month - 1).clamp(0, 11) as usize;
    match (language, since) {
        (Language::German, false) => format!("im {} {year}", GERMAN[index]),
        (Language::German, true) => format!("seit {} {year}", GERMAN[index]),
        (Language::French, false) => format!("en {} {year}", FRENCH[index]),
        (Language::French, true) => format!("depuis {} {year}", FRENCH[index]),
        (Language::Spanish, false) => format!("en {} de {year}", SPANISH[index]),
        (Language::Spanish, true) => format!("desde {} de {year}", SPANISH[index]),
        (Language::Czech, _) => format!("v {} {year}", CZECH[index]),
        (Language::English, _) => format!("in month {month} of {year}"),
    }
}

/// "im Sommer 2022", "en été 2022", "en el verano de 2022", "v létě 2022"; "seit dem Sommer
/// 2022", "depuis l'été 2022", "desde el verano de 2022".
fn season_of(language: Language, season: &str, year: i64, since: bool) -> String {
    let (german, french, french_since, spanish, czech) = match season {
        "summer" => ("Sommer", "en été", "l'été", "verano", "v létě"),
        "winter" => ("Winter", "en hiver", "l'hiver", "invierno", "v zimě"),
        "spring" => ("Frühling", "au printemps", "le printemps", "primavera", "na jaře"),
        _ => ("Herbst", "en automne", "l'automne", "otoño", "na podzim"),
    };
    let spanish_article = if spanish == "primavera" { "la" } else { "el" };
    match (language, since) {
        (Language::German, false) => format!("im {german} {year}"),
        (Language::German, true) => format!("seit dem {german} {year}"),
        (Language::French, false) => format!("{french} {year}"),
        (Language::French, true) => format!("depuis {french_since} {year}"),
        (Language::Spanish, false) => format!("en {spanish_article} {spanish} de {year}"),
        (Language::Spanish, true) => format!("desde {spanish_article} {spanish} de {year}"),
        (Language::Czech, _) => format!("{czech} {year}"),
        (Language::English, _) => format!("in {season} {year}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_keeps_its_word_and_drops_the_in() {
        assert_eq!(written(Language::German, When::Year(2022), true), "seit 2022");
        assert_eq!(written(Language::French, When::Year(2022), true), "depuis 2022");
        assert_eq!(written(Language::Spanish, When::Month(2023, 3), true), "desde marzo de 2023");
        assert_eq!(written(Language::French, When::Season("summer", 2022), true), "depuis l'été 2022");
        assert_eq!(written(Language::German, When::Day(19_484), true), "seit dem 2023-05-07");
    }

    #[test]
    fn without_since_each_language_says_in() {
        assert_eq!(written(Language::German, When::Year(2022), false), "im Jahr 2022");
        assert_eq!(written(Language::Czech, When::Month(2023, 7), false), "v červenci 2023");
        assert_eq!(written(Language::Spanish, When::Season("spring", 2024), false), "en la primavera de 2024");
        assert_eq!(written(Language::French, When::Week(19_478), false), "la semaine du 2023-05-01");
    }
}
