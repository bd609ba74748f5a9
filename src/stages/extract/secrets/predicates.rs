//! Whether the value said after a password's name is an ordinary word said about the password
//! ("the password is wrong", "das Passwort ist abgelaufen") rather than the password: a closed
//! list of predicates, articles, pronouns and adverbs in the five languages, and the endings of
//! participles and adverbs.

/// What people say after "the password is" that is no password, in the five languages:
/// predicates, articles, pronouns and adverbs (participles and adverbs are told by their
/// endings in [`is_a_predicate`]).
#[rustfmt::skip]
const PREDICATES: &[&str] = &[
    // English.
    "wrong", "right", "correct", "incorrect", "invalid", "valid", "weak", "strong", "secure", "insecure", "safe", "unsafe", "long",
    "short", "simple", "easy", "hard", "different", "same", "similar", "unique", "empty", "blank", "mandatory", "optional", "new",
    "old", "written", "hidden", "known", "unknown", "shown", "visible", "public", "private", "secret", "here", "there", "below",
    "above", "under", "inside", "somewhere", "too", "very", "also", "just", "still", "now", "not", "never", "always", "only", "what",
    "why", "how", "where", "which", "this", "that", "these", "those", "the", "your", "his", "her", "their", "our", "its", "mine",
    "yours", "one", "something", "nothing", "anything", "everything", "none", "null", "nil", "true", "false", "undefined", "required",
    "string", "str", "int", "bool", "text", "value", "example", "placeholder", "redacted", "same", "fine", "good", "bad", "great", "ok",
    "okay", "case-sensitive", "available", "unavailable", "impossible", "possible", "gone", "lost", "broken", "stolen", "compromised",
    "being", "getting", "going", "really", "literally", "actually", "probably", "usually", "ready", "set", "sent", "reset", "option",
    "optional", "field", "argument", "parameter", "instead", "enough",
    // German.
    "falsch", "richtig", "ungültig", "gültig", "abgelaufen", "sicher", "unsicher", "zu", "nicht", "noch", "auch", "schon", "immer",
    "leer", "kurz", "lang", "neu", "alt", "das", "der", "die", "ein", "eine", "mein", "meine", "dein", "sein", "ihr", "unser", "gleich",
    "anders", "hier", "dort", "weg", "bekannt", "geheim", "wie", "was", "jetzt", "sehr", "einfach", "schwer",
    // French.
    "faux", "fausse", "correcte", "valide", "invalide", "trop", "pas", "le", "la", "les", "un", "une", "mon", "ton", "son", "même",
    "différent", "vide", "court", "courte", "longue", "nouveau", "ancien", "ici", "là", "toujours", "encore", "aussi", "très",
    // Spanish.
    "incorrecta", "incorrecto", "correcta", "correcto", "válida", "válido", "inválida", "inválido", "muy", "demasiado", "no", "el",
    "los", "las", "mi", "tu", "su", "igual", "diferente", "segura", "seguro", "corta", "larga", "nueva", "vieja", "aquí", "obligatoria",
    "obligatorio", "todavía", "también",
    // Czech.
    "špatně", "správně", "neplatné", "platné", "příliš", "moc", "ne", "stejné", "jiné", "bezpečné", "krátké", "dlouhé", "nové", "staré",
    "tady", "tam", "pořád", "taky", "také", "velmi",
];

/// Whether a value is an ordinary word said about a password rather than the password: a
/// predicate, article or pronoun, an English participle or adverb ("expired", "changing",
/// "usually"), a German participle ("geändert"), a French, Spanish or Czech adjective or
/// participle ("expiré", "cambiada", "uložené").
pub fn is_a_predicate(value: &str) -> bool {
    let lower = value.to_lowercase();
    if PREDICATES.contains(&lower.as_str()) {
        return true;
    }
    // Only plain lower-case words are told by their endings: "Expired2024" is a password.
    let plain_word = value.chars().all(|c| c.is_lowercase() || c == '-') && value.chars().any(char::is_alphabetic);
    if !plain_word {
        return false;
    }
    let endings = ["ed", "ing", "ly", "é", "ée", "és", "ées", "ado", "ada", "ido", "ida", "ené", "ané", "ný", "ná", "ové"];
    endings.iter().any(|ending| lower.ends_with(ending)) || (lower.starts_with("ge") && (lower.ends_with('t') || lower.ends_with("en")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn predicates_are_no_passwords_and_passwords_are() {
        for word in ["wrong", "expired", "changing", "usually", "geändert", "expiré", "cambiada", "uložené", "case-sensitive"] {
            assert!(is_a_predicate(word), "{word}");
        }
        for word in ["sunflower", "hunter22", "Expired2024", "Blue-Fish-42", "kocka123"] {
            assert!(!is_a_predicate(word), "{word}");
        }
    }
}
