//! Turns the small HTML fragments exports carry (Gemini answers) into Markdown-ish text:
//! paragraphs and line breaks kept, lists as `- `, code fenced, links as `[text](url)`, bold
//! and italics marked, entities decoded, every other tag dropped. Not a general HTML parser:
//! it never fails, and unknown markup only loses its tags, never its text.

use crate::ascii_word::printable_ascii;

/// Converts an HTML fragment to text.
pub fn html_to_text(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    let mut in_pre = 0usize;
    let mut list_depth = 0usize;
    let mut pending_links: Vec<Option<String>> = Vec::new();
    while !rest.is_empty() {
        let Some(open) = memchr::memchr(b'<', rest.as_bytes()) else {
            push_text(&mut out, rest, in_pre > 0);
            break;
        };
        push_text(&mut out, &rest[..open], in_pre > 0);
        rest = &rest[open..];
        // A `<` that does not start a tag is text.
        let Some(close) = memchr::memchr(b'>', rest.as_bytes()) else {
            push_text(&mut out, rest, in_pre > 0);
            break;
        };
        let tag = &rest[1..close];
        rest = &rest[close + 1..];
        if tag.starts_with("!--") {
            // Comments can contain `>`; skip to the comment's end.
            if !tag.ends_with("--")
                && let Some(end) = rest.find("-->")
            {
                rest = &rest[end + 3..];
            }
            continue;
        }
        let closing = tag.starts_with('/');
        let mut name_buffer = [0u8; MAX_TAG_NAME];
        let name = tag_name(tag, &mut name_buffer);
        match (name, closing) {
            ("br", _) => out.push('\n'),
            ("p" | "div" | "h1" | "h2" | "h3" | "h4" | "h5" | "h6" | "table" | "tr" | "blockquote" | "hr", _) => {
                block_break(&mut out);
                if !closing && name.len() == 2 && name.starts_with('h') && name != "hr" {
                    let level = name[1..].parse::<usize>().unwrap_or(1);
                    out.push_str(&"#".repeat(level));
                    out.push(' ');
                }
            }
            ("ul" | "ol", false) => {
                list_depth += 1;
                line_break(&mut out);
            }
            ("ul" | "ol", true) => {
                list_depth = list_depth.saturating_sub(1);
                block_break(&mut out);
            }
            ("li", false) => {
                line_break(&mut out);
                out.push_str(&"  ".repeat(list_depth.saturating_sub(1)));
                out.push_str("- ");
            }
            ("td" | "th", true) => out.push_str(" | "),
            ("pre", false) => {
                block_break(&mut out);
                out.push_str("```\n");
                in_pre += 1;
            }
            ("pre", true) => {
                in_pre = in_pre.saturating_sub(1);
                if !out.ends_with('\n') {
                    out.push('\n');
                }
                out.push_str("```");
                block_break(&mut out);
            }
            ("code", _) if in_pre == 0 => out.push('`'),
            ("b" | "strong", _) => out.push_str("**"),
            ("i" | "em", _) => out.push('*'),
            ("a", false) => {
                let href = attribute(tag, "href");
                if href.is_some() {
                    out.push('[');
                }
                pending_links.push(href);
            }
            ("a", true) => {
                if let Some(Some(href)) = pending_links.pop() {
                    out.push_str("](");
                    out.push_str(&href);
                    out.push(')');
                }
            }
            ("script" | "style", false) => {
                let end = format!("</{name}");
                match rest.to_ascii_lowercase().find(&end) {
                    Some(position) => rest = &rest[position..],
                    None => rest = "",
                }
            }
            _ => {}
        }
    }
    tidy(out)
}

fn push_text(out: &mut String, text: &str, preformatted: bool) {
    if text.is_empty() {
        return;
    }
    let decoded = decode_entities_borrowed(text);
    if preformatted {
        out.push_str(&decoded);
        return;
    }
    // Outside <pre>, runs of whitespace are one space, as a browser shows them (a no-break
    // space is not collapsible); whitespace before the text is a space unless the output
    // already ends a word. The text is copied in stretches between whitespace runs that are
    // not already a single space: this runs over every answer, and a character (or a word)
    // at a time it was a tenth of a Gemini conversion.
    let text = decoded.as_ref();
    let bytes = text.as_bytes();
    let space_needed = |out: &String| !out.is_empty() && !out.ends_with([' ', '\n']);
    let start = whitespace_run_end(text, 0);
    if start > 0 && space_needed(out) {
        out.push(' ');
    }
    let mut copied = start;
    let mut position = start;
    // Eight bytes at a time while they are plain ASCII with single spaces; a word that is not
    // is walked a byte at a time.
    let mut bytewise_until = start;
    while position < bytes.len() {
        if position >= bytewise_until {
            match bytes.get(position..position + 8) {
                Some(word) if word_needs_no_collapsing(word) => {
                    position += 8;
                    continue;
                }
                _ => bytewise_until = position + 8,
            }
        }
        let byte = bytes[position];
        let class = BYTE_CLASS[usize::from(byte)];
        if class == PLAIN || (class == SPACE && bytes.get(position + 1).is_some_and(|&next| BYTE_CLASS[usize::from(next)] == PLAIN)) {
            position += 1;
            continue;
        }
        if class == MAYBE_UNICODE_SPACE {
            let c = text[position..].chars().next().unwrap_or('\u{fffd}');
            if !is_collapsible(c) {
                position += c.len_utf8();
                continue;
            }
        }
        // A whitespace run: the text before it, then one space.
        out.push_str(&text[copied..position]);
        out.push(' ');
        position = whitespace_run_end(text, position);
        copied = position;
    }
    out.push_str(&text[copied..]);
}

/// Whether eight bytes are printable ASCII whose spaces are single and not last, so they are
/// copied as they are.
fn word_needs_no_collapsing(word: &[u8]) -> bool {
    printable_ascii(word).is_some_and(|(_, space)| space & (space >> 8) == 0 && space >> 63 == 0)
}

/// A byte that is never whitespace (nor the start of a whitespace character).
const PLAIN: u8 = 0;
/// `' '`.
const SPACE: u8 = 1;
/// Other ASCII whitespace.
const OTHER_SPACE: u8 = 2;
/// The first byte of a character that may be Unicode whitespace (U+0085, U+1680, U+2000…).
const MAYBE_UNICODE_SPACE: u8 = 3;

/// [`PLAIN`], [`SPACE`], [`OTHER_SPACE`] or [`MAYBE_UNICODE_SPACE`] by byte.
const BYTE_CLASS: [u8; 256] = {
    let mut classes = [PLAIN; 256];
    classes[b' ' as usize] = SPACE;
    classes[b'\t' as usize] = OTHER_SPACE;
    classes[b'\n' as usize] = OTHER_SPACE;
    classes[b'\r' as usize] = OTHER_SPACE;
    classes[0x0b] = OTHER_SPACE;
    classes[0x0c] = OTHER_SPACE;
    // UTF-8 leads of every Unicode whitespace character above ASCII.
    classes[0xc2] = MAYBE_UNICODE_SPACE;
    classes[0xe1] = MAYBE_UNICODE_SPACE;
    classes[0xe2] = MAYBE_UNICODE_SPACE;
    classes[0xe3] = MAYBE_UNICODE_SPACE;
    classes
};

/// Whitespace a browser collapses: all of it but the no-break space.
fn is_collapsible(c: char) -> bool {
    c.is_whitespace() && c != '\u{a0}'
}

/// Where the run of collapsible whitespace starting at `position` ends.
fn whitespace_run_end(text: &str, position: usize) -> usize {
    text[position..].find(|c: char| !is_collapsible(c)).map_or(text.len(), |offset| position + offset)
}

/// Longest tag name matched (`blockquote`); longer names are no tag this module handles.
const MAX_TAG_NAME: usize = 12;

/// The lowercase name of a tag from its text (`/UL` → `ul`), in `buffer`; empty when longer than
/// any handled tag.
fn tag_name<'a>(tag: &str, buffer: &'a mut [u8; MAX_TAG_NAME]) -> &'a str {
    let name = tag.trim_start_matches('/').as_bytes();
    let length = name.iter().take_while(|byte| byte.is_ascii_alphanumeric()).count();
    if length > MAX_TAG_NAME {
        return "";
    }
    for (slot, byte) in buffer.iter_mut().zip(&name[..length]) {
        *slot = byte.to_ascii_lowercase();
    }
    // ASCII alphanumerics only.
    std::str::from_utf8(&buffer[..length]).unwrap_or_default()
}

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
fn tidy(text: String) -> String {
    let end = text.trim_end().len();
    let start = end - text[..end].trim_start().len();
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
    decode_entities_borrowed(text).into_owned()
}

/// [`decode_entities`], borrowing `text` when it has no entity.
fn decode_entities_borrowed(text: &str) -> std::borrow::Cow<'_, str> {
    if memchr::memchr(b'&', text.as_bytes()).is_none() {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        let end = rest[1..].find(|c: char| c == ';' || c == '&' || c.is_whitespace()).map(|position| position + 1);
        let decoded = end.filter(|&end| rest.as_bytes()[end] == b';').and_then(|end| entity(&rest[1..end]).map(|c| (c, end)));
        match decoded {
            Some((c, end)) => {
                out.push(c);
                rest = &rest[end + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    std::borrow::Cow::Owned(out)
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
mod tests {
    use super::*;

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

    /// Strings of up to 40 characters over letters, spaces, control and Unicode whitespace,
    /// from a fixed-seed generator.
    fn mixed_strings(count: usize) -> Vec<String> {
        let alphabet = ['a', 'b', ' ', ' ', ' ', '\t', '\n', '\r', '\u{b}', 'é', '\u{a0}', '\u{3000}', 'X', '.', '\u{1}', '😀'];
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            (state >> 33) as usize
        };
        (0..count).map(|_| (0..next() % 41).map(|_| alphabet[next() % alphabet.len()]).collect()).collect()
    }

    #[test]
    fn eight_byte_steps_collapse_whitespace_as_word_by_word() {
        for (case, text) in mixed_strings(3_000).iter().enumerate() {
            let before = ["", "word", "ends with space "][case % 3];
            let mut out = before.to_owned();
            push_text(&mut out, text, false);
            assert_eq!(out, collapsed_by_words(before, text), "{before:?} + {text:?}");
        }
    }

    #[test]
    fn eight_byte_test_agrees_with_the_byte_classes() {
        for text in mixed_strings(3_000) {
            for word in text.as_bytes().windows(8) {
                let by_bytes = word
                    .iter()
                    .enumerate()
                    .all(|(index, &byte)| (0x21..0x80).contains(&byte) || (byte == b' ' && index < 7 && word[index + 1] != b' '));
                assert_eq!(word_needs_no_collapsing(word), by_bytes, "{word:?}");
            }
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

    #[test]
    fn tidying_in_place_matches_tidying_by_lines() {
        for text in mixed_strings(3_000).into_iter().chain(["\n\n a \n\n\n\nb\u{3000}\n".to_owned(), String::new()]) {
            assert_eq!(tidy(text.clone()), tidied_by_lines(&text), "{text:?}");
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
