//! Text lowercased for a comparison without a heap allocation where it can be helped: the
//! checks on every line and sentence of the user's messages (is it a salutation, a reply
//! header, an abbreviation's dot) lowercase short ASCII text, and in a conversion each
//! allocation costs more than the comparison it serves.

/// Longest ASCII text lowercased on the stack.
const STACK_BYTES: usize = 256;

/// Calls `read` with `text` lowercased as [`str::to_lowercase`] does: `text` itself when it
/// has no uppercase letter, a copy on the stack when it is short ASCII, or on the heap.
pub fn with_lowercase<R>(text: &str, read: impl FnOnce(&str) -> R) -> R {
    let bytes = text.as_bytes();
    if !bytes.iter().any(|byte| byte.is_ascii_uppercase() || !byte.is_ascii()) {
        return read(text);
    }
    if bytes.len() <= STACK_BYTES && bytes.is_ascii() {
        let mut lower = [0u8; STACK_BYTES];
        for (to, byte) in lower.iter_mut().zip(bytes) {
            *to = byte.to_ascii_lowercase();
        }
        // ASCII bytes lowercased are ASCII, which is UTF-8.
        return read(std::str::from_utf8(&lower[..bytes.len()]).unwrap_or_default());
    }
    read(&text.to_lowercase())
}

/// Fills `into` with `word` lowercased and its typographic apostrophes (`’`) made plain, as
/// `word.to_lowercase().replace('’', "'")` would, reusing its allocation (an ASCII word needs
/// no other).
pub fn fold_into(word: &str, into: &mut String) {
    into.clear();
    if word.is_ascii() {
        into.push_str(word);
        into.make_ascii_lowercase();
    } else {
        // `str::to_lowercase`, not character by character: a Greek final sigma lowercases by its
        // place in the word.
        into.extend(word.to_lowercase().chars().map(|c| if c == '’' { '\'' } else { c }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lowercases_as_the_standard_library_does() {
        let long = "A".repeat(STACK_BYTES + 1);
        for text in ["", "plain", "Dear Ms Novak,", "ÉCOLE", "Předmět: Ahoj", "İstanbul", long.as_str()] {
            assert_eq!(with_lowercase(text, str::to_owned), text.to_lowercase(), "{text:?}");
        }
    }

    #[test]
    fn folds_as_lowercasing_and_plain_apostrophes_do() {
        let mut folded = String::from("left over");
        for word in ["I’m", "DON'T", "Já", "ΣΟΦΊΑ’Σ"] {
            fold_into(word, &mut folded);
            assert_eq!(folded, word.to_lowercase().replace('’', "'"), "{word:?}");
        }
    }
}
