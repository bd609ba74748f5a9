//! The answer-HTML-to-text conversion as it was before it became one pass (kept only as the
//! reference the tests compare the one-pass converter with, on generated fragments).

use super::{MAX_TAG_NAME, attribute, block_break, entity, is_collapsible, line_break, tidy};
use crate::ascii_word::printable_ascii;

/// Converts an HTML fragment to text.
pub(super) fn html_to_text(html: &str) -> String {
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
                out.push_str(&"  ".repeat(list_depth.saturating_sub(1).min(super::MAX_LIST_INDENT)));
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

pub(super) fn push_text(out: &mut String, text: &str, preformatted: bool) {
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

/// Where the run of collapsible whitespace starting at `position` ends.
fn whitespace_run_end(text: &str, position: usize) -> usize {
    text[position..].find(|c: char| !is_collapsible(c)).map_or(text.len(), |offset| position + offset)
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
