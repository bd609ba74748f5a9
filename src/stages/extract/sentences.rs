//! Picks the sentences of a user's message that are the user's own words: not code (fenced
//! blocks, lines that look like code), not quoted text (`>` lines, forwarded e-mails), not the
//! body of a long pasted document, and split at sentence ends. Each sentence keeps its byte
//! span in the message, which becomes the memory's evidence.

use super::lowered::with_lowercase;

/// Longest message read whole: past it a message is taken for a pasted document, and only its
/// first paragraph (where people say what they want done with it) is read.
pub const MAX_OWN_TEXT_BYTES: usize = 2_000;

/// Longest sentence read: longer runs are pasted prose or data, not a self-statement.
const MAX_SENTENCE_BYTES: usize = 400;

/// A sentence of the user's own words: its byte span in the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sentence {
    /// First byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
}

impl Sentence {
    /// The sentence's text in `message`.
    pub fn text(self, message: &str) -> &str {
        &message[self.start..self.end]
    }
}

/// The sentences of the user's own words in `message`, in order.
pub fn own_sentences(message: &str) -> Vec<Sentence> {
    if is_make_believe(message) {
        return Vec::new();
    }
    // Room for most messages' sentences at once: growing it from nothing allocated three times.
    let mut sentences = Vec::with_capacity(8);
    let readable_end = readable(message).len();
    let mut in_fence = false;
    let mut line_start = 0;
    // The end of a quotation over several lines that an earlier line opened: the lines before
    // it are someone else's words (a lyric, a poem, a saying).
    let mut quoted_until = 0;
    for line in message[..readable_end].split_inclusive('\n') {
        let line_end = line_start + line.len();
        let trimmed = line.trim();
        if line_start < quoted_until {
            line_start = line_end;
            continue;
        }
        if !in_fence && let Some(end) = quotation_end(trimmed, &message[line_end..readable_end]) {
            quoted_until = line_end + end;
            line_start = line_end;
            continue;
        }
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_fence = !in_fence;
        } else if trimmed.starts_with("-----Original Message") || is_reply_header(trimmed) || is_salutation(trimmed) {
            // Everything after a forwarded or replied-to header, or a letter's salutation, is
            // someone else's text or a text written for someone else.
            break;
        } else if !in_fence && !trimmed.is_empty() && !is_quoted(trimmed) && !looks_like_code(line) {
            // A line that introduces material ("Here is the letter from my landlord:",
            // "Proofread this: …") ends the user's own words at its colon.
            let kept = line.trim_end();
            let own_end = material_colon(line).unwrap_or(if kept.ends_with(':') { kept.len() - 1 } else { kept.len() });
            split_sentences(message, line_start, line_start + own_end, &mut sentences);
            if own_end < kept.len() {
                break;
            }
        }
        line_start = line_end;
    }
    sentences
}

/// Whether the message sets up a story, a game or a role ("Role play: you are…", "Pretend
/// I'm a pirate", "Stell dir vor", "Imagina que"): nothing in it is said of the user.
fn is_make_believe(message: &str) -> bool {
    // Every opener starts with one of these letters: most messages are not lowercased.
    let first = message.trim_start().chars().next().map_or(' ', |c| c.to_ascii_lowercase());
    if !matches!(first, 'r' | 'l' | 'p' | 'a' | 'y' | 'i' | 'w' | 's' | 'j' | 'f' | 'h' | 't') {
        return false;
    }
    let start = message.trim_start();
    // Nearly every message starts in ASCII: its head is lowercased on the stack.
    let mut ascii_head = [0u8; 60];
    let ascii = &start.as_bytes()[..start.len().min(60)];
    let head: std::borrow::Cow<'_, str> = if ascii.is_ascii() {
        for (lower, byte) in ascii_head.iter_mut().zip(ascii) {
            *lower = byte.to_ascii_lowercase();
        }
        // ASCII bytes are UTF-8: the empty string is never taken.
        std::str::from_utf8(&ascii_head[..ascii.len()]).unwrap_or_default().into()
    } else {
        start.chars().take(60).collect::<String>().to_lowercase().replace('’', "'").into()
    };
    const OPENERS: &[&str] = &[
        "role play",
        "roleplay",
        "role-play",
        "let's role",
        "lets role",
        "let's play",
        "pretend",
        "act as",
        "you are a",
        "you are an",
        "imagine",
        "write a story",
        "story:",
        "scenario:",
        "in this story",
        "let's pretend",
        "rollenspiel",
        "stell dir vor",
        "tu so als",
        "spiel mit mir",
        "jeu de rôle",
        "imagine que",
        "imaginons",
        "fais comme si",
        "juego de rol",
        "imagina que",
        "finge que",
        "haz como si",
        "hraj roli",
        "představ si",
        "hrajme",
        "předstírej",
    ];
    OPENERS.iter().any(|opener| head.starts_with(opener))
}

/// A letter's salutation ("Dear Ms Novak,", "To whom it may concern", "Sehr geehrte…",
/// "Chère Madame,", "Estimado señor:", "Vážený pane,"): what follows is a letter.
fn is_salutation(line: &str) -> bool {
    // Most lines are longer or end otherwise: they are not lowercased.
    // (No character is longer than four bytes: a line of more is longer than 60 characters.)
    let short = line.len() <= 60 || (line.len() <= 240 && line.chars().count() <= 60);
    let ends_as_salutation = line.ends_with(',') || line.ends_with(':') || line.ends_with('!') || !line.contains(' ');
    if !short || !(ends_as_salutation || line.get(..7).is_some_and(|head| head.eq_ignore_ascii_case("to whom"))) {
        return false;
    }
    const OPENERS: &[&str] = &[
        "dear ",
        "to whom it may concern",
        "hi all,",
        "hello all,",
        "sehr geehrte",
        "liebe ",
        "lieber ",
        "hallo zusammen",
        "cher ",
        "chère ",
        "madame, monsieur",
        "madame,",
        "monsieur,",
        "estimado",
        "estimada",
        "querido ",
        "querida ",
        "vážený",
        "vážená",
        "milý ",
        "milá ",
    ];
    with_lowercase(line, |lower| OPENERS.iter().any(|opener| lower.starts_with(opener)))
}

/// Where a line's own words end at a colon that introduces material: a colon after a word
/// that names it ("this:", "below:", "letter:", "e-mail:", "said:", "wrote:") or a request
/// to work on text ("proofread", "translate", "fix", "rewrite").
fn material_colon(line: &str) -> Option<usize> {
    let colon = line.find(':')?;
    const NAMES: &[&str] = &[
        "this",
        "these",
        "following",
        "below",
        "text",
        "letter",
        "email",
        "e-mail",
        "mail",
        "message",
        "draft",
        "paragraph",
        "article",
        "story",
        "poem",
        "post",
        "bio",
        "essay",
        "said",
        "says",
        "wrote",
        "writes",
        "sentence",
        "sentences",
        "version",
        "note",
        "review",
        "description",
        "dies",
        "folgendes",
        "folgenden",
        "text",
        "brief",
        "nachricht",
        "ceci",
        "suivant",
        "texte",
        "lettre",
        "esto",
        "siguiente",
        "texto",
        "carta",
        "mensaje",
        "tohle",
        "toto",
        "následující",
        "dopis",
        "zprávu",
        "zpráva",
    ];
    const REQUESTS: &[&str] = &[
        "proofread",
        "translate",
        "rewrite",
        "fix",
        "correct",
        "improve",
        "summarize",
        "summarise",
        "edit",
        "polish",
        "check",
        "review",
        "reword",
        "rephrase",
        "shorten",
        "übersetze",
        "korrigiere",
        "verbessere",
        "traduis",
        "corrige",
        "traduce",
        "corrige",
        "přelož",
        "oprav",
    ];
    with_lowercase(&line[..colon], |before| {
        let last_word = before.rsplit(|c: char| !c.is_alphanumeric() && c != '-').find(|word| !word.is_empty()).unwrap_or("");
        let names_material = NAMES.contains(&last_word);
        let asks_for_work =
            before.split_whitespace().take(4).any(|word| REQUESTS.contains(&word.trim_matches(|c: char| !c.is_alphanumeric())));
        (names_material || asks_for_work).then_some(colon)
    })
}

/// Where the first paragraph of a long message ends (a blank line, or the first
/// [`MAX_OWN_TEXT_BYTES`] bytes at a character boundary).
/// The part of `message` that may hold the user's own sentences: all of it, or for a message
/// longer than [`MAX_OWN_TEXT_BYTES`] (a pasted document) its first paragraph.
pub fn readable(message: &str) -> &str {
    if message.len() > MAX_OWN_TEXT_BYTES { &message[..first_paragraph_end(message)] } else { message }
}

fn first_paragraph_end(message: &str) -> usize {
    let limit = floor_char_boundary(message, MAX_OWN_TEXT_BYTES);
    message[..limit].find("\n\n").unwrap_or(limit)
}

fn floor_char_boundary(text: &str, mut at: usize) -> usize {
    while at > 0 && !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// A quoted line: `>` (Markdown, e-mail) or a line inside quotation marks as a whole.
fn is_quoted(line: &str) -> bool {
    line.starts_with('>')
        || (line.len() > 2 && (line.starts_with('"') && line.ends_with('"') || line.starts_with('“') && line.ends_with('”')))
}

/// Most lines a quotation over several lines may run on after the line that opens it.
const MOST_QUOTED_LINES: usize = 12;

/// Where a quotation that `line` (trimmed) opens and does not close ends in `rest` (the text
/// after the line): the end of the line that closes it, found within [`MOST_QUOTED_LINES`]
/// lines. A line that opens with a quotation mark and a later line that ends with its closing
/// one ("“The path of least resistance…\nI'd rather burn out than fade away”") hold someone
/// else's words. A mark that closes nothing within those lines (a stray `"`) quotes nothing.
fn quotation_end(line: &str, rest: &str) -> Option<usize> {
    let mut opening = line.chars();
    let closing = match opening.next()? {
        '"' => '"',
        '“' => '”',
        '„' => '“',
        '«' => '»',
        _ => return None,
    };
    // A quotation closed on its own line is `is_quoted`'s (or a quoted phrase the line goes on from).
    if opening.as_str().contains(closing) || (closing == '“' && opening.as_str().contains('”')) {
        return None;
    }
    let mut end = 0;
    for next in rest.split_inclusive('\n').take(MOST_QUOTED_LINES) {
        end += next.len();
        let closed = next.trim().trim_end_matches(['.', ',', '!', '?']);
        let closes = closed.ends_with(closing) || (closing == '“' && closed.ends_with('”'));
        // The line's only mark of the kind, not after a digit (`55"` is inches): a line that
        // also opens a quotation of its own ("a word I love is "hygge"") closes that one.
        let marks = closed.matches(closing).count() + if closing == '“' { closed.matches('”').count() } else { 0 };
        let after_digit = closed.chars().rev().nth(1).is_some_and(|c| c.is_ascii_digit());
        if closes && marks == 1 && !after_digit {
            return Some(end);
        }
        // A quotation mark inside a later line is another quotation, or none: not this one's end.
        if next.contains(closing) {
            return None;
        }
    }
    None
}

/// The header line of a quoted e-mail: `On … wrote:`, `Am … schrieb …:`, `Le … a écrit :`,
/// `El … escribió:`, `Dne … napsal(a):`, or `From:`/`Von:`/`De:`/`Od:` headers.
fn is_reply_header(line: &str) -> bool {
    // Every form ends its opening with a colon (or is the Czech `Dne … napsal`): most lines
    // have none, and skip the lowercasing.
    if !line.contains(':') && !line.get(..4).is_some_and(|head| head.eq_ignore_ascii_case("dne ")) {
        return false;
    }
    with_lowercase(line, is_lowercase_reply_header)
}

/// [`is_reply_header`] of a line already lowercased.
fn is_lowercase_reply_header(lower: &str) -> bool {
    let reply_line = lower.ends_with(':')
        && (lower.starts_with("on ") || lower.starts_with("am ") || lower.starts_with("le ") || lower.starts_with("el "));
    let ends_reply =
        reply_line && (lower.ends_with("wrote:") || lower.contains(" schrieb") || lower.contains("a écrit") || lower.contains("escribió"));
    let czech = lower.starts_with("dne ") && lower.contains("napsal");
    let header = ["from:", "von:", "de :", "od:", "subject:", "betreff:", "objet :", "asunto:", "předmět:"]
        .iter()
        .any(|prefix| lower.starts_with(prefix));
    ends_reply || czech || header
}

/// Whether a line looks like code or data rather than prose: indented by four spaces or a tab,
/// or mostly symbols (`{`, `;`, `=`, `<`), or a shell prompt.
fn looks_like_code(line: &str) -> bool {
    if line.starts_with("    ") || line.starts_with('\t') {
        return true;
    }
    let trimmed = line.trim();
    if trimmed.starts_with("$ ") || trimmed.starts_with("# ") && trimmed.contains('/') {
        return true;
    }
    // One pass over the bytes, each counted by its class: the symbols are ASCII, and a letter
    // is an ASCII letter or the first byte of any other alphabetic character.
    let (mut symbols, mut letters) = (0usize, 0usize);
    for (at, &byte) in trimmed.as_bytes().iter().enumerate() {
        let class = CODE_BYTE[usize::from(byte)];
        symbols += usize::from(class == CODE_SYMBOL);
        letters += usize::from(class == CODE_LETTER);
        if class == CODE_LEAD {
            letters += usize::from(trimmed[at..].chars().next().is_some_and(char::is_alphabetic));
        }
    }
    symbols * 6 > letters.max(1) || trimmed.ends_with(';') || trimmed.ends_with('{')
}

/// In [`CODE_BYTE`]: a symbol code is made of.
const CODE_SYMBOL: u8 = 1;
/// In [`CODE_BYTE`]: an ASCII letter.
const CODE_LETTER: u8 = 2;
/// In [`CODE_BYTE`]: the first byte of a character past ASCII.
const CODE_LEAD: u8 = 3;

/// Each byte's part in [`looks_like_code`]'s count, looked up: the count runs over every byte of
/// every line of the messages that may say something about the user.
static CODE_BYTE: [u8; 256] = {
    let mut classes = [0u8; 256];
    let mut byte = 0;
    while byte < 256 {
        let value = byte as u8;
        classes[byte] = match value {
            b'{' | b'}' | b';' | b'=' | b'<' | b'>' | b'(' | b')' | b'[' | b']' | b'|' | b'\\' => CODE_SYMBOL,
            _ if value.is_ascii_alphabetic() => CODE_LETTER,
            0xC0..=0xFF => CODE_LEAD,
            _ => 0,
        };
        byte += 1;
    }
    classes
};

/// Splits `message[start..end]` (one line) at sentence ends (`.`, `!`, `?`, `;` followed by a
/// space or the end) and pushes the sentences that are not too long.
fn split_sentences(message: &str, start: usize, end: usize, out: &mut Vec<Sentence>) {
    let line = &message[start..end];
    let bytes = line.as_bytes();
    let mut sentence_start = 0;
    // The marks are found by `memchr` rather than byte by byte (this runs over every line of the
    // messages that may say something about the user); `;` is rare and looked for on its own.
    let mut semicolon = memchr::memchr(b';', bytes);
    let mut from = 0;
    loop {
        let mark = memchr::memchr3(b'.', b'!', b'?', &bytes[from..]).map(|at| from + at);
        let at = match (mark, semicolon) {
            (Some(mark), Some(semicolon)) => mark.min(semicolon),
            (Some(at), None) | (None, Some(at)) => at,
            (None, None) => break,
        };
        if semicolon == Some(at) {
            semicolon = memchr::memchr(b';', &bytes[at + 1..]).map(|next| at + 1 + next);
        }
        let at_sentence_end = bytes.get(at + 1).is_none_or(|next| *next == b' ');
        // Decimals do not end sentences (no space follows), nor do abbreviations.
        if at_sentence_end && !(bytes[at] == b'.' && ends_with_abbreviation(&line[..at])) {
            push_sentence(message, start + sentence_start, start + at + 1, out);
            sentence_start = at + 1;
        }
        from = at + 1;
    }
    push_sentence(message, start + sentence_start, end, out);
}

/// Whether `text` ends with an abbreviation whose dot does not end a sentence: a single letter,
/// a dotted one (`e.g`, `z.B`), or a common title or short form.
fn ends_with_abbreviation(text: &str) -> bool {
    let word = text.rsplit([' ', '(']).next().unwrap_or("");
    // A word of more than six letters is none of them (and is not lowercased).
    if word.len() > 6 && !word.contains('.') {
        return false;
    }
    with_lowercase(word, is_lowercase_abbreviation)
}

/// [`ends_with_abbreviation`] of a last word already lowercased.
fn is_lowercase_abbreviation(word: &str) -> bool {
    const SHORT_FORMS: [&str; 16] =
        ["mr", "mrs", "ms", "dr", "prof", "vs", "etc", "approx", "usw", "bzw", "ca", "nr", "str", "p.ex", "cf", "atd"];
    // "e.g", "i.e", "z.B", "p.ex": short letter groups between dots. An address or a file name
    // ("jo@example.org", "notes.txt") ends its sentence.
    let dotted_short_form =
        word.contains('.') && word.split('.').all(|group| group.chars().count() <= 3 && group.chars().all(char::is_alphabetic));
    word.chars().count() == 1 || dotted_short_form || SHORT_FORMS.contains(&word)
}

fn push_sentence(message: &str, start: usize, end: usize, out: &mut Vec<Sentence>) {
    let text = &message[start..end];
    let leading = text.len() - text.trim_start().len();
    let trailing = text.len() - text.trim_end().len();
    let (start, end) = (start + leading, end - trailing);
    if end > start && end - start <= MAX_SENTENCE_BYTES {
        out.push(Sentence { start, end });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(message: &str) -> Vec<&str> {
        own_sentences(message).into_iter().map(|sentence| sentence.text(message)).collect()
    }

    #[test]
    fn sentences_are_split_at_their_ends_with_spans_into_the_message() {
        let message = "I'm a nurse in Leeds. I prefer metric units! Can you help?";
        assert_eq!(texts(message), ["I'm a nurse in Leeds.", "I prefer metric units!", "Can you help?"]);
        assert_eq!(texts("e.g. 3.5 kg is fine"), ["e.g. 3.5 kg is fine"]);
        assert_eq!(texts("My email is jo@example.org. Why?"), ["My email is jo@example.org.", "Why?"]);
    }

    /// Guards `split_sentences`' jumps from mark to mark: the same cuts as testing every byte.
    #[test]
    fn sentences_are_cut_where_a_byte_by_byte_reading_cuts_them() {
        fn byte_by_byte(line: &str) -> Vec<Sentence> {
            let (bytes, mut out, mut sentence_start) = (line.as_bytes(), Vec::new(), 0);
            for (at, byte) in bytes.iter().enumerate() {
                let at_sentence_end = matches!(byte, b'.' | b'!' | b'?' | b';') && bytes.get(at + 1).is_none_or(|next| *next == b' ');
                if at_sentence_end && !(*byte == b'.' && ends_with_abbreviation(&line[..at])) {
                    push_sentence(line, sentence_start, at + 1, &mut out);
                    sentence_start = at + 1;
                }
            }
            push_sentence(line, sentence_start, line.len(), &mut out);
            out
        }
        // Every line under 16 bytes of up to five pieces drawn from marks, spaces, words, an
        // abbreviation and a decimal, each round extending the lines the round before made.
        let pieces = [".", "!", "?", ";", " ", "é", "Leeds", "Dr.", "3.5", "; ", ". "];
        let (mut lines, mut newest) = (Vec::new(), vec![String::new()]);
        for _ in 0..5 {
            newest = newest
                .iter()
                .flat_map(|line| pieces.iter().map(move |piece| format!("{line}{piece}")))
                .filter(|line| line.len() < 16)
                .collect();
            lines.extend(newest.iter().cloned());
        }
        for line in &lines {
            let mut cut = Vec::new();
            split_sentences(line, 0, line.len(), &mut cut);
            assert_eq!(cut, byte_by_byte(line), "{line:?}");
        }
    }

    #[test]
    fn code_quotes_and_forwarded_mail_are_not_the_users_words() {
        let message =
            "I use Rust.\n```\nlet x = 1;\n```\n    fn main() {}\n> I am quoted\nconst a = {b: 1};\nOn Mon, Jan 1, Bob wrote:\nI am Bob.";
        assert_eq!(texts(message), ["I use Rust."]);
    }

    #[test]
    fn letters_role_play_and_introduced_material_are_not_the_users_words() {
        assert_eq!(
            texts("Can you check my sister's cover letter?\nDear Hiring Manager,\nI am a nurse in Leeds."),
            ["Can you check my sister's cover letter?"]
        );
        assert_eq!(texts("Role play: you are a pirate and I am a sailor from Lisbon."), Vec::<&str>::new());
        assert_eq!(texts("Proofread this: I am a carpenter in Oslo."), ["Proofread this"]);
        assert_eq!(texts("Here is the e-mail from my landlord:\nI live in the flat above you."), ["Here is the e-mail from my landlord"]);
        assert_eq!(texts("I live in Leeds: it rains a lot."), ["I live in Leeds: it rains a lot."]);
    }

    #[test]
    fn a_quotation_over_several_lines_is_not_the_users_words() {
        assert_eq!(texts("“The easy road is a slow death\nI'd rather burn out than fade away”"), Vec::<&str>::new());
        assert_eq!(
            texts("I love this poem\n\"I wandered lonely\nas a cloud I am.\"\nI'm a teacher."),
            ["I love this poem", "I'm a teacher."]
        );
        assert_eq!(texts("„Ich bin müde\nund ich bin alt“.\nIch wohne in Bonn."), ["Ich wohne in Bonn."]);
        // A stray mark quotes nothing: the lines after it are read.
        assert_eq!(texts("\"I'm 12\nI live in Leeds."), ["\"I'm 12", "I live in Leeds."]);
        // A later line's own quotation, or an inch mark, closes nothing opened before it.
        assert_eq!(
            texts("\"Quick question\nI'm a nurse.\nMy favourite word is \"hygge\"."),
            ["\"Quick question", "I'm a nurse.", "My favourite word is \"hygge\"."]
        );
        assert_eq!(texts("\"Quick question\nI'm a nurse.\nMy TV is 55\""), ["\"Quick question", "I'm a nurse.", "My TV is 55\""]);
        assert_eq!(texts("«Je suis\nun peu\nfatigué»\nJe suis infirmière."), ["Je suis infirmière."]);
    }

    #[test]
    fn a_long_pasted_document_is_read_only_to_its_first_paragraph() {
        let message = format!("Summarize this for me, I'm a teacher.\n\n{}", "The report says I live in Paris. ".repeat(100));
        assert_eq!(texts(&message), ["Summarize this for me, I'm a teacher."]);
    }
}
