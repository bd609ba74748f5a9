//! Two shapes of a German, French, Spanish or Czech clause the frame reader cuts before it
//! reads: the items of a list after one verb ("J'adore la randonnée, la photo et les jeux" →
//! three likes), and a time phrase before the first-person verb ("El verano pasado hice…",
//! "Ahora trabajo de…"), which moves behind it.

use super::relative_times::is_only_a_time;
use super::verbs::{VerbClass, class_of, is_spanish_preterite};
use super::words::{Word, joined, span};
use crate::stages::extract::language::Language;

/// The words that join the items of a list.
fn is_conjunction(word: &str, language: Language) -> bool {
    match language {
        Language::German => matches!(word, "und" | "oder" | "sowie"),
        Language::French => matches!(word, "et" | "ou"),
        Language::Spanish => matches!(word, "y" | "e" | "o" | "u"),
        Language::Czech => matches!(word, "a" | "i" | "nebo"),
        Language::English => matches!(word, "and" | "or"),
    }
}

/// Words that open a clause of their own inside the object ("…, dass", "…que", "…když"): what
/// follows is not an item of a list.
fn opens_a_clause(word: &str, language: Language) -> bool {
    match language {
        Language::German => matches!(word, "zu" | "dass" | "wenn" | "weil" | "als" | "ob" | "es"),
        Language::French => matches!(word, "que" | "qu'" | "quand" | "parce" | "si" | "ça" | "cela"),
        Language::Spanish => matches!(word, "que" | "cuando" | "porque" | "para" | "si" | "eso"),
        Language::Czech => matches!(word, "že" | "když" | "protože" | "abych" | "jestli" | "to"),
        Language::English => false,
    }
}

/// The items of a list the verb takes, each a span of `rest`; `rest` whole when it is no list.
/// Two single words without a comma stay one item ("Salz und Pfeffer", "rock and roll"), and so
/// does an object that holds a clause of its own.
pub fn items(rest: &[Word], language: Language) -> Vec<&[Word]> {
    if rest.iter().any(|word| opens_a_clause(&word.lower, language)) {
        return vec![rest];
    }
    let mut items = Vec::new();
    let mut start = 0;
    let mut commas = false;
    for (index, word) in rest.iter().enumerate() {
        if is_conjunction(&word.lower, language) {
            items.push(span(rest, start, index));
            start = index + 1;
        } else if word.comma {
            commas = true;
            items.push(span(rest, start, index + 1));
            start = index + 1;
        }
    }
    items.push(span(rest, start, rest.len()));
    items.retain(|item| !item.is_empty());
    let two_single_words = items.len() == 2 && items.iter().all(|item| item.len() == 1) && !commas;
    if items.len() < 2 || items.len() > 8 || two_single_words {
        return vec![rest];
    }
    items
}

/// Whether the words after "speak" say it is the language of home or a mother tongue ("at
/// home", "natively", "zu Hause", "à la maison", "en casa", "doma"): who the user is, where a
/// language learnt is a skill.
pub fn is_home_language(words: &[Word]) -> bool {
    words.iter().any(|word| {
        let lower = word.lower.as_str();
        matches!(
            lower,
            "home" | "natively" | "native" | "hause" | "daheim" | "maison" | "casa" | "doma" | "nativo" | "nativa" | "maternelle"
        ) || lower.starts_with("mutterspr")
            || lower.starts_with("rodil")
    })
}

/// `words` without a relative time said at their end ("Bilbao el año pasado" → "Bilbao",
/// "Lyon l'année dernière" → "Lyon", "Brna loni" → "Brna"): a place, with the time it was
/// reached said apart.
pub fn without_trailing_time(words: &[Word], language: Language) -> &[Word] {
    for start in 1..words.len() {
        let time = &words[start..];
        if time.iter().all(|word| !word.is_capitalized() && is_time_word(word, language)) && is_only_a_time(&joined(time), language) {
            return &words[..start];
        }
    }
    words
}

/// Words a time phrase before the verb is made of, in each language: its prepositions,
/// articles and demonstratives, the words of time, months and small numbers.
fn is_time_word(word: &Word, language: Language) -> bool {
    if word.is_number() {
        return true;
    }
    let lower = word.lower.as_str();
    match language {
        Language::Spanish => matches!(
            lower,
            "el" | "la"
                | "los"
                | "las"
                | "este"
                | "esta"
                | "pasado"
                | "pasada"
                | "próximo"
                | "próxima"
                | "año"
                | "años"
                | "mes"
                | "meses"
                | "semana"
                | "semanas"
                | "verano"
                | "invierno"
                | "otoño"
                | "primavera"
                | "hace"
                | "en"
                | "desde"
                | "ayer"
                | "hoy"
                | "ahora"
                | "actualmente"
                | "finalmente"
                | "por"
                | "fin"
                | "al"
                | "final"
                | "del"
                | "de"
                | "dos"
                | "tres"
                | "un"
                | "una"
                | "unos"
                | "unas"
                | "enero"
                | "febrero"
                | "marzo"
                | "abril"
                | "mayo"
                | "junio"
                | "julio"
                | "agosto"
                | "septiembre"
                | "octubre"
                | "noviembre"
                | "diciembre"
                // "El mes que viene", "la semana que viene", "mañana".
                | "que"
                | "viene"
                | "mañana"
                | "a"
                | "veces"
                | "normalmente"
                | "cuatro"
                | "cinco"
                | "seis"
                | "siete"
                | "ocho"
                | "nueve"
                | "diez"
        ),
        Language::French => matches!(
            lower,
            "l'" | "le"
                | "la"
                | "les"
                | "cet"
                | "cette"
                | "ce"
                | "dernier"
                | "dernière"
                | "prochain"
                | "prochaine"
                | "année"
                | "an"
                | "ans"
                | "mois"
                | "semaine"
                | "été"
                | "hiver"
                | "automne"
                | "printemps"
                | "depuis"
                | "en"
                | "hier"
                | "aujourd'hui"
                | "maintenant"
                | "actuellement"
                | "désormais"
                | "finalement"
                | "enfin"
                | "deux"
                | "trois"
                | "un"
                | "une"
                | "janvier"
                | "février"
                | "mars"
                | "avril"
                | "mai"
                | "juin"
                | "juillet"
                | "août"
                | "septembre"
                | "octobre"
                | "novembre"
                | "décembre"
                // "Il y a deux ans", "demain".
                | "il"
                | "y"
                | "a"
                | "demain"
                | "quatre"
                | "cinq"
                | "six"
                | "sept"
                | "huit"
                | "neuf"
                | "dix"
        ),
        Language::Czech => matches!(
            lower,
            "teď"
                | "nyní"
                | "momentálně"
                | "aktuálně"
                | "letos"
                | "loni"
                | "včera"
                | "dnes"
                | "nakonec"
                | "konečně"
                | "minulý"
                | "minulé"
                | "minulou"
                | "minulém"
                // "Příští měsíc", "před třemi lety", "v roce 2020", "od ledna".
                | "příští"
                | "příštím"
                | "tento"
                | "tuto"
                | "toto"
                | "zítra"
                | "týden"
                | "měsíc"
                | "rok"
                | "roce"
                | "před"
                | "lety"
                | "rokem"
                | "měsíci"
                | "týdnem"
                | "dvěma"
                | "třemi"
                | "čtyřmi"
                | "v"
                | "od"
        ),
        Language::German | Language::English => false,
    }
}

/// Where the past participle is after the Czech past auxiliary "jsem" at `auxiliary`: next to
/// it ("jsem běžel") or after a reflexive "se" or "si" ("jsem se přestěhoval", "jsem si
/// koupila").
pub fn czech_participle_after(words: &[Word], auxiliary: usize) -> Option<usize> {
    let is_participle = |at: usize| words.get(at).is_some_and(|word| word.lower.ends_with('l') || word.lower.ends_with("la"));
    let reflexive = words.get(auxiliary + 1).is_some_and(|word| matches!(word.lower.as_str(), "se" | "si"));
    let at = auxiliary + 1 + usize::from(reflexive);
    is_participle(at).then_some(at)
}

/// How many words of `words` are a time phrase before a first-person verb ("El verano pasado
/// hice…", "Ahora trabajo…", "L'année dernière j'ai…", "Teď bydlím…"): the position of the
/// subject pronoun or of a verb whose first-person form the language's lists hold, when
/// every word before it is a word of time. 0 when there is none. German is read by its
/// verb-second order elsewhere.
pub fn fronted_time(words: &[Word], language: Language, self_subjects: &[&str], first_person_verb: fn(&str) -> bool) -> usize {
    if matches!(language, Language::German | Language::English) {
        return 0;
    }
    let limit = words.len().min(6);
    for at in 1..limit {
        let word = &words[at];
        let lower = word.lower.as_str();
        // Spanish puts "me" and "no" before the verb: "En 2021 me mudé…".
        let next_is_verb = || words.get(at + 1).is_some_and(|next| first_person_verb(&next.lower) || is_spanish_preterite(&next.lower));
        let subject = self_subjects.contains(&lower) || (language == Language::Spanish && matches!(lower, "me" | "no") && next_is_verb());
        let verb = (first_person_verb(lower) || (language == Language::Spanish && is_spanish_preterite(lower)))
            && class_of(language, lower).is_none_or(|class| class != VerbClass::Conversational);
        // "Loni jsem běžel…": Czech's past auxiliary, read with its participle elsewhere.
        let czech_past = language == Language::Czech && lower == "jsem" && czech_participle_after(words, at).is_some();
        if (subject || verb) && !czech_past {
            let before = span(words, 0, at);
            let timed = before.iter().all(|word| is_time_word(word, language))
                && before.iter().any(|word| !matches!(word.lower.as_str(), "el" | "la" | "le" | "l'" | "en" | "de" | "un" | "una" | "une"));
            return if timed { at } else { 0 };
        }
        if czech_past || !is_time_word(word, language) {
            return 0;
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stages::extract::clause::words::words;

    fn item_texts(text: &str, language: Language) -> Vec<String> {
        let words = words(text, language);
        items(&words, language).iter().map(|item| super::super::words::joined(item)).collect()
    }

    #[test]
    fn a_list_after_one_verb_is_cut_into_its_items() {
        assert_eq!(
            item_texts("la randonnée, la photo et les jeux de société", Language::French),
            ["la randonnée", "la photo", "les jeux de société"]
        );
        assert_eq!(item_texts("gallego, portugués y un poco de alemán", Language::Spanish), ["gallego", "portugués", "un poco de alemán"]);
        assert_eq!(item_texts("bucear y pintar acuarelas", Language::Spanish), ["bucear", "pintar acuarelas"]);
    }

    #[test]
    fn two_single_words_and_objects_with_a_clause_of_their_own_stay_whole() {
        assert_eq!(item_texts("Salz und Pfeffer", Language::German), ["Salz und Pfeffer"]);
        assert_eq!(item_texts("es, mit meinem Hund und meiner Katze zu spielen", Language::German).len(), 1);
        assert_eq!(item_texts("le froid quand il pleut et la neige", Language::French).len(), 1);
    }
}
