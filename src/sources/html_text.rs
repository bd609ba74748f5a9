//! Turns the small HTML fragments exports carry (Gemini answers) into Markdown-ish text:
//! paragraphs and line breaks kept, lists as `- `, code fenced, links as `[text](url)`, bold
//! and italics marked, entities decoded, every other tag dropped. Not a general HTML parser:
//! it never fails, and unknown markup only loses its tags, never its text.

use crate::ascii_word::{HIGH_BITS, ONES};

/// Deepest indentation of a list item, in levels. Past it items line up: a page nesting lists
/// thousands deep would otherwise grow the text by the square of the depth (1.8 GB for one
/// hostile answer), and no reader tells level 40 from level 16 apart anyway.
pub(crate) const MAX_LIST_INDENT: usize = 16;

/// Converts an HTML fragment to text.
pub fn html_to_text(html: &str) -> String {
    let mut converter = Converter { out: String::with_capacity(html.len()), in_pre: 0, list_depth: 0, pending_links: Vec::new() };
    converter.run(html, true);
    tidy(converter.out)
}

/// The text written so far and the open elements that change how text is written.
struct Converter {
    out: String,
    in_pre: usize,
    list_depth: usize,
    /// The `href` of each open `<a>` (`None` when it had none).
    pending_links: Vec<Option<String>>,
}

impl Converter {
    /// Converts `html` in one pass: runs of plain text are found eight bytes at a time and
    /// copied whole; tags, entities, whitespace and other characters are handled where they
    /// stand. With `tags` false every `<` is text (what follows a `<` that no `>` closes).
    fn run(&mut self, html: &str, mut tags: bool) {
        let bytes = html.as_bytes();
        let mut position = 0;
        while position < bytes.len() {
            position = self.copy_plain_run(html, position);
            let Some(&byte) = bytes.get(position) else { break };
            match byte {
                b'<' if tags => match tag_end(&bytes[position..]) {
                    Some(close) => position = self.tag(html, position + 1, position + close),
                    // No tag can start here or after: the rest is text.
                    None => tags = false,
                },
                b'&' => {
                    let (decoded, length) = entity_at(&html[position..]);
                    self.push_char(decoded);
                    position += length;
                }
                _ => {
                    // `position` is on a character boundary: plain runs are ASCII and every
                    // other step moves past whole characters.
                    let c = html[position..].chars().next().unwrap_or('\u{fffd}');
                    self.push_char(c);
                    position += c.len_utf8();
                }
            }
        }
    }

    /// Copies the run of bytes from `position` that are written as they are, and returns
    /// where it ends: at a `<`, `&`, control or non-ASCII byte, or a space that would not be
    /// the first of its run (inside `<pre>` only `<` and `&` end it).
    fn copy_plain_run(&mut self, html: &str, position: usize) -> usize {
        let bytes = html.as_bytes();
        let end = if self.in_pre > 0 {
            memchr::memchr2(b'<', b'&', &bytes[position..]).map_or(bytes.len(), |distance| position + distance)
        } else {
            let mut after_blank = self.out.is_empty() || self.out.ends_with([' ', '\n']);
            let mut end = position;
            loop {
                let Some(word) = bytes.get(end..end + 8) else {
                    while let Some(&byte) = bytes.get(end) {
                        if !is_plain_byte(byte, after_blank) {
                            break;
                        }
                        after_blank = byte == b' ';
                        end += 1;
                    }
                    break;
                };
                let word = u64::from_le_bytes(<[u8; 8]>::try_from(word).unwrap_or_default());
                let special = special_bytes(word, after_blank);
                if special != 0 {
                    end += (special.trailing_zeros() / 8) as usize;
                    break;
                }
                after_blank = word >> 56 == u64::from(b' ');
                end += 8;
            }
            end
        };
        self.out.push_str(&html[position..end]);
        end
    }

    /// Writes one character of text: outside `<pre>` a run of whitespace is one space, and
    /// none at the start of the text or after a space or line break.
    fn push_char(&mut self, c: char) {
        if self.in_pre > 0 || !is_collapsible(c) {
            self.out.push(c);
        } else if !self.out.is_empty() && !self.out.ends_with([' ', '\n']) {
            self.out.push(' ');
        }
    }

    /// Handles the tag whose text is `html[start..close]` (`close` is its `>`) and returns
    /// where the text after it starts.
    fn tag(&mut self, html: &str, start: usize, close: usize) -> usize {
        let tag = &html[start..close];
        let after = close + 1;
        let out = &mut self.out;
        if tag.starts_with("!--") {
            // Comments can contain `>`; skip to the comment's end.
            if !tag.ends_with("--")
                && let Some(end) = html[after..].find("-->")
            {
                return after + end + 3;
            }
            return after;
        }
        let closing = tag.starts_with('/');
        let name = tag_code(tag);
        match (name, closing) {
            (BR, _) => out.push('\n'),
            (P | DIV | H1 | H2 | H3 | H4 | H5 | H6 | TABLE | TR | BLOCKQUOTE | HR, _) => {
                block_break(out);
                if !closing && let Some(level) = HEADINGS.iter().position(|&heading| heading == name) {
                    out.push_str(&"#".repeat(level + 1));
                    out.push(' ');
                }
            }
            (UL | OL, false) => {
                self.list_depth += 1;
                line_break(out);
            }
            (UL | OL, true) => {
                self.list_depth = self.list_depth.saturating_sub(1);
                block_break(out);
            }
            (LI, false) => {
                line_break(out);
                out.push_str(&"  ".repeat(self.list_depth.saturating_sub(1).min(MAX_LIST_INDENT)));
                out.push_str("- ");
            }
            (TD | TH, true) => out.push_str(" | "),
            (PRE, false) => {
                block_break(out);
                out.push_str("```\n");
                self.in_pre += 1;
            }
            (PRE, true) => {
                self.in_pre = self.in_pre.saturating_sub(1);
                if !out.ends_with('\n') {
                    out.push('\n');
                }
                out.push_str("```");
                block_break(out);
            }
            (CODE, _) if self.in_pre == 0 => out.push('`'),
            (B | STRONG, _) => out.push_str("**"),
            (I | EM, _) => out.push('*'),
            (A, false) => {
                let href = attribute(tag, "href");
                if href.is_some() {
                    out.push('[');
                }
                self.pending_links.push(href);
            }
            (A, true) => {
                if let Some(Some(href)) = self.pending_links.pop() {
                    out.push_str("](");
                    out.push_str(&href);
                    out.push(')');
                }
            }
            (SCRIPT | STYLE, false) => {
                // Their content is not text: skip to their closing tag.
                let end = if name == SCRIPT { "</script" } else { "</style" };
                return html[after..].to_ascii_lowercase().find(end).map_or(html.len(), |position| after + position);
            }
            _ => {}
        }
        after
    }
}

/// Where the `>` that ends the tag starting `text` is. Most tags are a few bytes long, so
/// they are looked through directly before a vectorized search takes over.
fn tag_end(text: &[u8]) -> Option<usize> {
    const NEAR: usize = 16;
    match text.iter().take(NEAR).position(|&byte| byte == b'>') {
        Some(close) => Some(close),
        None if text.len() > NEAR => memchr::memchr(b'>', &text[NEAR..]).map(|distance| NEAR + distance),
        None => None,
    }
}

/// Whether `byte` outside `<pre>` is written as it is: printable ASCII but `<` and `&`, and a
/// space only when it does not follow a space or line break (`after_blank`).
fn is_plain_byte(byte: u8, after_blank: bool) -> bool {
    match byte {
        b' ' => !after_blank,
        b'<' | b'&' => false,
        _ => (0x21..0x80).contains(&byte),
    }
}

/// The high bit of each byte of `word` (little-endian text) that [`is_plain_byte`] rejects, or
/// of a byte after one (SWAR, exact per byte: the high bits are cleared before adding, so no
/// carry crosses bytes). `after_blank` says whether the byte before the word was blank.
fn special_bytes(word: u64, after_blank: bool) -> u64 {
    let seven_bits = word & !HIGH_BITS;
    // A byte's high bit is set by adding exactly when the byte is not `value`.
    let equal_to = |value: u8| !((seven_bits ^ (ONES * u64::from(value))) + ONES * 0x7f) & HIGH_BITS;
    let non_ascii = word & HIGH_BITS;
    let control = !(seven_bits + ONES * 0x60) & HIGH_BITS;
    let spaces = equal_to(b' ');
    let blank_before = (spaces << 8) | if after_blank { 0x80 } else { 0 };
    non_ascii | control | equal_to(b'<') | equal_to(b'&') | (spaces & blank_before)
}

/// The character the entity at the start of `text` (a `&`) stands for and its length, or the
/// `&` itself. Its name ends at the first `;`, `&` or whitespace. (It need not stop at a tag:
/// no name with a `<` in it is an entity, so the `&` stays text either way.)
fn entity_at(text: &str) -> (char, usize) {
    let end = text[1..].find(|c: char| c == ';' || c == '&' || c.is_whitespace()).map(|position| position + 1);
    end.filter(|&end| text.as_bytes()[end] == b';').and_then(|end| entity(&text[1..end]).map(|c| (c, end + 1))).unwrap_or(('&', 1))
}

/// Whitespace a browser collapses: all of it but the no-break space.
fn is_collapsible(c: char) -> bool {
    c.is_whitespace() && c != '\u{a0}'
}

/// Longest tag name matched (`blockquote`); longer names are no tag this module handles.
const MAX_TAG_NAME: usize = 12;

/// The lowercase name of a tag from its text (`/UL` → `ul`) packed into an integer, first byte
/// lowest (see [`name_code`]), so a name is matched with one comparison; 0 when the name is
/// longer than any handled tag.
fn tag_code(tag: &str) -> u128 {
    let name = tag.trim_start_matches('/').as_bytes();
    let length = name.iter().take_while(|byte| byte.is_ascii_alphanumeric()).count();
    if length > MAX_TAG_NAME {
        return 0;
    }
    name[..length].iter().rev().fold(0, |code, byte| (code << 8) | u128::from(byte.to_ascii_lowercase()))
}

/// `name` packed as [`tag_code`] packs a tag's name.
const fn name_code(name: &[u8]) -> u128 {
    let mut code = 0;
    let mut position = name.len();
    while position > 0 {
        position -= 1;
        code = (code << 8) | name[position] as u128;
    }
    code
}

const A: u128 = name_code(b"a");
const B: u128 = name_code(b"b");
const BLOCKQUOTE: u128 = name_code(b"blockquote");
const BR: u128 = name_code(b"br");
const CODE: u128 = name_code(b"code");
const DIV: u128 = name_code(b"div");
const EM: u128 = name_code(b"em");
const H1: u128 = name_code(b"h1");
const H2: u128 = name_code(b"h2");
const H3: u128 = name_code(b"h3");
const H4: u128 = name_code(b"h4");
const H5: u128 = name_code(b"h5");
const H6: u128 = name_code(b"h6");
/// Headings by level, from 1.
const HEADINGS: [u128; 6] = [H1, H2, H3, H4, H5, H6];
const HR: u128 = name_code(b"hr");
const I: u128 = name_code(b"i");
const LI: u128 = name_code(b"li");
const OL: u128 = name_code(b"ol");
const P: u128 = name_code(b"p");
const PRE: u128 = name_code(b"pre");
const SCRIPT: u128 = name_code(b"script");
const STRONG: u128 = name_code(b"strong");
const STYLE: u128 = name_code(b"style");
const TABLE: u128 = name_code(b"table");
const TD: u128 = name_code(b"td");
const TH: u128 = name_code(b"th");
const TR: u128 = name_code(b"tr");
const UL: u128 = name_code(b"ul");

fn line_break(out: &mut String) {
    while out.ends_with(' ') {
        out.pop();
    }
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
}

fn block_break(out: &mut String) {
    line_break(out);
    if !out.is_empty() && !out.ends_with("\n\n") {
        out.push('\n');
    }
}

/// Trims the text and the end of each line and collapses three or more newlines to two, in
/// place: lines only move towards the start.
fn tidy(mut text: String) -> String {
    let end = text.trim_end().len();
    let start = end - text[..end].trim_start().len();
    if start == 0 && !has_line_to_tidy(&text.as_bytes()[..end]) {
        // Most answers: only the end is cut, and no line moves (nor is the text checked again).
        text.truncate(end);
        return text;
    }
    let mut bytes = text.into_bytes();
    let mut written = 0;
    let mut blank_run = 0;
    let mut line_start = start;
    while line_start < end {
        let line_end = memchr::memchr(b'\n', &bytes[line_start..end]).map_or(end, |distance| line_start + distance);
        let kept_end = line_start + trimmed_end_length(&bytes[line_start..line_end]);
        if kept_end == line_start {
            blank_run += 1;
        } else {
            blank_run = 0;
        }
        if blank_run <= 1 {
            if line_start > start {
                // The previous line ended before `line_start`, so this byte was already read.
                bytes[written] = b'\n';
                written += 1;
            }
            bytes.copy_within(line_start..kept_end, written);
            written += kept_end - line_start;
        }
        line_start = line_end + 1;
    }
    bytes.truncate(written);
    // Whole lines of a `String` were moved, cut at `\n` and at character boundaries.
    String::from_utf8(bytes).unwrap_or_else(|error| String::from_utf8_lossy(error.as_bytes()).into_owned())
}

/// Whether a line of `text` (which ends in no whitespace) ends in whitespace, or two empty
/// lines follow one another: what [`tidy`] changes besides the ends of the whole text.
fn has_line_to_tidy(text: &[u8]) -> bool {
    let mut empty_before = false;
    let mut line_start = 0;
    for line_end in memchr::memchr_iter(b'\n', text) {
        let line = &text[line_start..line_end];
        if trimmed_end_length(line) != line.len() || (line.is_empty() && empty_before) {
            return true;
        }
        empty_before = line.is_empty();
        line_start = line_end + 1;
    }
    false
}

/// The length of a line (valid UTF-8 between newlines) without its trailing whitespace.
fn trimmed_end_length(line: &[u8]) -> usize {
    match line.last() {
        Some(&last) if last.is_ascii() && !last.is_ascii_whitespace() && last != 0x0b => line.len(),
        _ => std::str::from_utf8(line).map_or(line.len(), |line| line.trim_end().len()),
    }
}

/// The value of attribute `name` in a tag's text (`a href="…"`), entities decoded.
fn attribute(tag: &str, name: &str) -> Option<String> {
    let lower = tag.to_ascii_lowercase();
    let mut search_from = 0;
    while let Some(found) = lower[search_from..].find(name) {
        let start = search_from + found;
        search_from = start + name.len();
        let before_ok = start == 0 || lower.as_bytes()[start - 1].is_ascii_whitespace();
        let after = lower[search_from..].trim_start();
        if !before_ok || !after.starts_with('=') {
            continue;
        }
        let value_start = tag.len() - after.len() + 1;
        let value = tag[value_start..].trim_start();
        let value = match value.chars().next() {
            Some(quote @ ('"' | '\'')) => value[1..].split(quote).next().unwrap_or(""),
            _ => value.split_whitespace().next().unwrap_or(""),
        };
        return Some(decode_entities(value));
    }
    None
}

/// Decodes named entities HTML fragments use and every numeric one.
pub fn decode_entities(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(amp) = memchr::memchr(b'&', rest.as_bytes()) {
        out.push_str(&rest[..amp]);
        let (decoded, length) = entity_at(&rest[amp..]);
        out.push(decoded);
        rest = &rest[amp + length..];
    }
    out.push_str(rest);
    out
}

fn entity(name: &str) -> Option<char> {
    if let Some(number) = name.strip_prefix('#') {
        let code = match number.strip_prefix(['x', 'X']) {
            Some(hex) => u32::from_str_radix(hex, 16).ok()?,
            None => number.parse().ok()?,
        };
        return Some(char::from_u32(code).unwrap_or('\u{fffd}'));
    }
    Some(match name {
        "amp" => '&',
        "lt" => '<',
        "gt" => '>',
        "quot" => '"',
        "apos" => '\'',
        "nbsp" => '\u{a0}',
        "emsp" => '\u{2003}',
        "ensp" => '\u{2002}',
        "thinsp" => '\u{2009}',
        "ndash" => '–',
        "mdash" => '—',
        "hellip" => '…',
        "lsquo" => '‘',
        "rsquo" => '’',
        "ldquo" => '“',
        "rdquo" => '”',
        "bull" => '•',
        "middot" => '·',
        "copy" => '©',
        "reg" => '®',
        "trade" => '™',
        "euro" => '€',
        "times" => '×',
        "rarr" => '→',
        _ => return None,
    })
}

#[cfg(test)]
#[path = "html_text_former.rs"]
mod former;

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::former;
    use super::*;

    /// Text written as the converter writes the text between tags.
    fn push_text(out: &mut String, text: &str, preformatted: bool) {
        let mut converter =
            Converter { out: std::mem::take(out), in_pre: usize::from(preformatted), list_depth: 0, pending_links: Vec::new() };
        converter.run(text, false);
        *out = converter.out;
    }

    #[test]
    fn renders_blocks_lists_code_and_links() {
        let html = "<p>Hello &amp; <b>welcome</b></p><ul><li>one</li><li>two <a href=\"https://x.test/?a=1&amp;b=2\">link</a></li></ul>\
                    <pre><code>fn main() {\n    x &lt; y\n}</code></pre><p>Use <code>cargo</code>.</p>";
        assert_eq!(
            html_to_text(html),
            "Hello & **welcome**\n\n- one\n- two [link](https://x.test/?a=1&b=2)\n\n```\nfn main() {\n    x < y\n}\n```\n\nUse `cargo`."
        );
    }

    #[test]
    fn collapses_unicode_whitespace_but_not_no_break_spaces() {
        assert_eq!(html_to_text("a&nbsp;b\u{2003}c \t\n d\u{3000}e <b>f</b>\u{85}g"), "a\u{a0}b c d e **f** g");
        assert_eq!(html_to_text("<P>one</P><UL><LI>two</LI></UL><blockquotex>three"), "one\n\n- two\n\nthree");
    }

    /// Whitespace collapsing a word at a time, as a browser describes it.
    fn collapsed_by_words(before: &str, text: &str) -> String {
        let mut out = before.to_owned();
        let mut pending_space = false;
        for (index, word) in text.split(is_collapsible).enumerate() {
            if word.is_empty() {
                pending_space |= index > 0 || text.starts_with(is_collapsible);
                continue;
            }
            if (pending_space || (index > 0)) && !out.is_empty() && !out.ends_with([' ', '\n']) {
                out.push(' ');
            }
            pending_space = false;
            out.push_str(word);
        }
        if (pending_space || text.ends_with(is_collapsible)) && !out.is_empty() && !out.ends_with([' ', '\n']) {
            out.push(' ');
        }
        out
    }

    #[test]
    fn text_is_copied_in_stretches_with_whitespace_collapsed_as_word_by_word() {
        let texts = [
            "plain words here",
            "  leading and trailing  ",
            "tabs\tand\nnew\r\nlines",
            "no\u{a0}break\u{a0} space",
            "ideographic\u{3000}\u{2003}spaces\u{85}end",
            " ",
            "x",
            "é à\u{2028}ü",
        ];
        for before in ["", "word", "ends with space ", "line\n"] {
            for text in texts {
                let mut out = before.to_owned();
                push_text(&mut out, text, false);
                assert_eq!(out, collapsed_by_words(before, text), "{before:?} + {text:?}");
            }
        }
    }

    /// Strings of up to 40 characters over letters, spaces, control and Unicode whitespace.
    fn mixed_string() -> impl Strategy<Value = String> {
        let alphabet = vec!['a', 'b', ' ', ' ', ' ', '\t', '\n', '\r', '\u{b}', 'é', '\u{a0}', '\u{3000}', 'X', '.', '\u{1}', '😀'];
        prop::collection::vec(prop::sample::select(alphabet), 0..41).prop_map(|chars| chars.into_iter().collect::<String>())
    }

    /// The position of the first byte `special_bytes` flags in the eight bytes `word`, and of the
    /// first byte `is_plain_byte`, read a byte at a time, says is not plain.
    fn first_flagged_and_first_not_plain(word: &[u8], after_blank: bool) -> (Option<usize>, Option<usize>) {
        let mut blank = after_blank;
        let first_not_plain = word.iter().position(|&byte| {
            let plain = is_plain_byte(byte, blank);
            blank = byte == b' ';
            !plain
        });
        let flagged = special_bytes(u64::from_le_bytes(<[u8; 8]>::try_from(word).unwrap_or_default()), after_blank);
        let first_flagged = (flagged != 0).then(|| (flagged.trailing_zeros() / 8) as usize);
        (first_flagged, first_not_plain)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3_000))]

        #[test]
        fn eight_byte_steps_collapse_whitespace_as_word_by_word(
            before in prop::sample::select(vec!["", "word", "ends with space "]),
            text in mixed_string(),
        ) {
            let mut out = before.to_owned();
            push_text(&mut out, &text, false);
            prop_assert_eq!(out, collapsed_by_words(before, &text), "{:?} + {:?}", before, text);
        }

        #[test]
        fn eight_byte_test_flags_the_first_byte_that_is_not_plain(text in mixed_string()) {
            // Every eight bytes of the text, cut anywhere (inside a character too).
            for word in text.as_bytes().windows(8) {
                for after_blank in [false, true] {
                    let (first_flagged, first_not_plain) = first_flagged_and_first_not_plain(word, after_blank);
                    prop_assert_eq!(first_flagged, first_not_plain, "{:?} after blank: {}", word, after_blank);
                }
            }
        }

        #[test]
        fn pushed_text_matches_the_former_push_text(
            before in prop::sample::select(vec!["", "word", "ends with space ", "line\n"]),
            text in mixed_string(),
        ) {
            for preformatted in [false, true] {
                let (mut out, mut reference) = (before.to_owned(), before.to_owned());
                push_text(&mut out, &text, preformatted);
                former::push_text(&mut reference, &text, preformatted);
                prop_assert_eq!(out, reference, "{:?} + {:?}", before, text);
            }
        }
    }

    #[test]
    fn eight_byte_test_flags_markup_blank_runs_and_non_ascii() {
        for word in [b"a<b&c d ", b"        ", b"\x7f\x7f<<&&  ", b"ab  cd\xc2\xa0"] {
            for after_blank in [false, true] {
                let (first_flagged, first_not_plain) = first_flagged_and_first_not_plain(word, after_blank);
                assert_eq!(first_flagged, first_not_plain, "{word:?} after blank: {after_blank}");
            }
        }
    }

    /// Fragments of up to 47 of the pieces answer HTML is made of, including broken ones.
    fn html_fragment() -> impl Strategy<Value = String> {
        let pieces = vec![
            "word",
            "Üml",
            "x",
            " ",
            "  ",
            "\t",
            "\n",
            "\r\n",
            "\u{a0}",
            "\u{3000}",
            "\u{2003}",
            "\u{85}",
            "😀",
            "é",
            "<p>",
            "</p>",
            "<b>",
            "</b>",
            "<i>",
            "</em>",
            "<ul>",
            "</ul>",
            "<ol>",
            "<li>",
            "</li>",
            "<pre>",
            "</pre>",
            "<code>",
            "</code>",
            "<br>",
            "<h2>",
            "</h2>",
            "<a href=\"https://x.test/?a=1&amp;b=2\">",
            "<a>",
            "</a>",
            "<!-- note -->",
            "<!--",
            "-->",
            "<script>if (a < b) {}</script>",
            "<STYLE>p{}</style>",
            "<td>",
            "</td>",
            "<H1>",
            "<h6 class=\"x\">",
            "</H3>",
            "<h7>",
            "<h10>",
            "<blockquote>",
            "</TR>",
            "<hr/>",
            "<strong>",
            "<div>",
            "<table>",
            "</th>",
            "<averyveryverylongtagname>",
            "<",
            ">",
            "&",
            "&amp;",
            "&lt;",
            "&gt;",
            "&nbsp;",
            "&#32;",
            "&#9;",
            "&#10;",
            "&#x1F600;",
            "&bogus;",
            "&amp",
            "&#;",
            "&quot;",
            ";",
            "\u{1}",
            "\u{7f}",
        ];
        prop::collection::vec(prop::sample::select(pieces), 0..48).prop_map(|picked| picked.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]

        #[test]
        fn one_pass_conversion_matches_the_former_one(html in html_fragment()) {
            prop_assert_eq!(html_to_text(&html), former::html_to_text(&html), "{:?}", html);
        }
    }

    /// Tidying as first written: a line at a time.
    fn tidied_by_lines(text: &str) -> String {
        let mut out = String::new();
        let mut blank_run = 0;
        for line in text.trim().lines() {
            let line = line.trim_end();
            if line.is_empty() {
                blank_run += 1;
                if blank_run > 1 {
                    continue;
                }
            } else {
                blank_run = 0;
            }
            out.push_str(line);
            out.push('\n');
        }
        out.truncate(out.trim_end().len());
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3_000))]

        #[test]
        fn tidying_in_place_matches_tidying_by_lines(text in mixed_string()) {
            prop_assert_eq!(tidy(text.clone()), tidied_by_lines(&text), "{:?}", text);
        }
    }

    #[test]
    fn tidying_in_place_keeps_one_blank_line_and_empty_text_empty() {
        for text in ["\n\n a \n\n\n\nb\u{3000}\n", ""] {
            assert_eq!(tidy(text.to_owned()), tidied_by_lines(text), "{text:?}");
        }
    }

    #[test]
    fn never_fails_on_broken_markup() {
        assert_eq!(html_to_text("a < b and c"), "a < b and c");
        assert_eq!(html_to_text("<p>unclosed <i>x"), "unclosed *x");
        assert_eq!(html_to_text("&bogus; &#x1F600; &#65;"), "&bogus; 😀 A");
        assert_eq!(html_to_text(""), "");
    }
}
