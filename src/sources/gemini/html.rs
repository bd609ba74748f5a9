//! Gemini activity as the HTML page Takeout writes when the user picks HTML (`MyActivity.html`,
//! provider-formats.md §3.3): one `div.outer-cell` per record, framed one at a time, each turned
//! into the same record shape as the JSON export (`title`, UTC `time`, `safeHtmlItem`,
//! attachment names, conversation URL) and regrouped the same way.
//!
//! The content cell reads `<verb>&nbsp;<prompt><br>[attachment lines<br>]<local date-time with
//! zone abbreviation><br><answer HTML>`; the verb, the date format and the zone are localized,
//! so the date line is found by parsing, not by position, and the caption is searched for the
//! conversation URL rather than read by its (localized) labels.
//!
//! A page cut short (an interrupted download or copy) ends inside its last record: that record
//! is rejected as truncated instead of being written as if its answer were complete. A page
//! cut just after a complete record, inside the opening tag of the next, keeps the complete one
//! and rejects only the one that was cut.
//!
//! Bytes that are not UTF-8 are read as U+FFFD, and the record says so (`notUtf8` in its
//! answer item, memport's own member) for the decoder to count as a warning.

use std::io::Read;

use serde_json::json;

use crate::error::RunError;
use crate::sources::contract::SourceOptions;
use crate::sources::gemini;
use crate::sources::gemini::dates::parse_takeout_time;
use crate::sources::html_text::{decode_entities, html_to_text};
use crate::sources::regroup::{GroupKey, GroupedElements, Regrouper, push_binary_row, push_problem_row};
use crate::timefmt::format_rfc3339;

/// Where each record starts.
const RECORD_MARKER: &[u8] = b"<div class=\"outer-cell";
/// Largest record framed; a page without markers past this is broken.
const MAX_RECORD_BYTES: usize = 64 << 20;
/// Bytes read at a time.
const READ_SIZE: usize = 1 << 20;
/// Why the last record of a page that ends inside it is rejected.
const TRUNCATED_RECORD: &str = "the page ends inside this answer; the file looks truncated";
/// Why the start of a record the page ends in, after a complete one, is rejected.
const TRUNCATED_NEXT_RECORD: &str = "the page ends inside the opening tag of this record; the file looks truncated";

/// Pulls `div.outer-cell` records out of a page, one at a time.
struct RecordFramer<R> {
    reader: R,
    buffer: Vec<u8>,
    /// Input offset of `buffer[0]`.
    buffer_offset: u64,
    at_end: bool,
}

impl<R: Read> RecordFramer<R> {
    /// Whether the page has been read to its end and nothing of it is left: the record last
    /// returned was the page's last, and runs to the end of the file.
    fn drained(&self) -> bool {
        self.at_end && self.buffer.is_empty()
    }

    /// The next record's bytes and offset, or `None` at the end of the page.
    fn next_record(&mut self) -> std::io::Result<Option<(u64, Vec<u8>)>> {
        loop {
            let start = memchr::memmem::find(&self.buffer, RECORD_MARKER);
            if let Some(start) = start {
                let after = start + RECORD_MARKER.len();
                if let Some(next) = memchr::memmem::find(&self.buffer[after..], RECORD_MARKER) {
                    let end = after + next;
                    let record = self.buffer[start..end].to_vec();
                    let offset = self.buffer_offset + start as u64;
                    self.buffer.drain(..end);
                    self.buffer_offset += end as u64;
                    return Ok(Some((offset, record)));
                }
                if self.at_end {
                    let record = self.buffer[start..].to_vec();
                    let offset = self.buffer_offset + start as u64;
                    self.buffer_offset += self.buffer.len() as u64;
                    self.buffer.clear();
                    return Ok(Some((offset, record)));
                }
                if self.buffer.len() - start > MAX_RECORD_BYTES {
                    return Err(std::io::Error::other(format!(
                        "a record at byte {} is over {MAX_RECORD_BYTES} bytes",
                        self.buffer_offset + start as u64
                    )));
                }
            } else if self.at_end {
                return Ok(None);
            } else {
                // Keep a tail that could hold the start of a marker.
                let keep = self.buffer.len().min(RECORD_MARKER.len());
                let dropped = self.buffer.len() - keep;
                self.buffer.drain(..dropped);
                self.buffer_offset += dropped as u64;
            }
            let filled = self.buffer.len();
            self.buffer.resize(filled + READ_SIZE, 0);
            let read = loop {
                match self.reader.read(&mut self.buffer[filled..]) {
                    Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
                    other => break other?,
                }
            };
            self.buffer.truncate(filled + read);
            self.at_end = read == 0;
        }
    }
}

/// Frames the records of a `MyActivity.html` page and regroups them into conversations.
///
/// # Errors
/// I/O errors reading the page or writing the spill files.
pub fn regroup(reader: Box<dyn Read + Send>, display: &str, options: &SourceOptions) -> Result<GroupedElements, RunError> {
    let mut framer = RecordFramer { reader, buffer: Vec::new(), buffer_offset: 0, at_end: false };
    let mut regrouper = Regrouper::new(display, options.gap)?.attach_untitled();
    let mut index = 0u64;
    let mut row = Vec::new();
    while let Some((offset, bytes)) = framer.next_record().map_err(|error| RunError::read(display, error))? {
        // Only the last record runs to the end of the file; the others end where the next
        // record's marker starts, so the page's end cannot cut them.
        if !framer.drained() {
            push_record(&mut regrouper, &mut row, offset, index, &bytes)?;
            index += 1;
            continue;
        }
        match record_end(&bytes) {
            None => push_problem(&mut regrouper, &mut row, offset, index, TRUNCATED_RECORD)?,
            Some(end) => {
                // After the record come the page's closing tags, or, in a page cut just after
                // it, the start of a record that never came whole: the complete record is read
                // up to there, and the cut one is rejected on its own.
                let cut = cut_record_start(&bytes[end..]).map(|start| end + start);
                push_record(&mut regrouper, &mut row, offset, index, &bytes[..cut.unwrap_or(bytes.len())])?;
                if let Some(cut) = cut {
                    index += 1;
                    push_problem(&mut regrouper, &mut row, offset + cut as u64, index, TRUNCATED_NEXT_RECORD)?;
                }
            }
        }
        index += 1;
    }
    regrouper.finish()
}

/// Reads one complete record and hands it to the regrouper; one without a readable date line
/// becomes a problem row.
fn push_record(regrouper: &mut Regrouper, row: &mut Vec<u8>, offset: u64, index: u64, bytes: &[u8]) -> Result<(), RunError> {
    let not_utf8 = std::str::from_utf8(bytes).is_err();
    let html = String::from_utf8_lossy(bytes);
    let Some((mut record, time, conversation)) = parse_record(&html) else {
        return push_problem(regrouper, row, offset, index, "an activity record without a readable date line");
    };
    if not_utf8 {
        mark_not_utf8(&mut record);
    }
    row.clear();
    push_binary_row(row, offset, index, record.to_string().as_bytes());
    let key = match conversation {
        Some(id) => GroupKey::Conversation(id),
        None => GroupKey::Title(String::new()),
    };
    regrouper.push(&key, Some(time), row)
}

/// Hands the regrouper a row that stands for a record that could not be read, saying why.
fn push_problem(regrouper: &mut Regrouper, row: &mut Vec<u8>, offset: u64, index: u64, problem: &str) -> Result<(), RunError> {
    row.clear();
    push_problem_row(row, offset, index, problem);
    regrouper.push(&GroupKey::Title(String::new()), None, row)
}

/// Marks a record read with U+FFFD in place of bytes that were not UTF-8: `notUtf8` in its
/// answer item (one is added when it has no answer), where the decoder reads it. The answer
/// items are left out of the provider fields a record keeps, so the mark reaches no output.
fn mark_not_utf8(record: &mut serde_json::Value) {
    let Some(items) = record["safeHtmlItem"].as_array_mut() else { return };
    if items.is_empty() {
        items.push(json!({}));
    }
    if let Some(item) = items.first_mut().and_then(serde_json::Value::as_object_mut) {
        item.insert("notUtf8".into(), json!(true));
    }
}

/// Where the record that starts `record` ends: the length up to and including the `>` of the
/// `</div>` that closes its `outer-cell` div, counting the `div`s opened and closed on the way.
/// `None` when the file stops first (inside the record): an opening tag cut by the end of the
/// file counts as opened, and a closing tag cut before its `>` closes nothing.
fn record_end(record: &[u8]) -> Option<usize> {
    let mut depth = 0usize;
    let mut at = 0;
    while let Some(found) = memchr::memchr(b'<', &record[at..]) {
        let tag = at + found;
        let rest = &record[tag..];
        if rest.starts_with(b"<div") && rest.get(4).is_none_or(ends_tag_name) {
            depth += 1;
        } else if rest.starts_with(b"</div") && rest.get(5).is_some_and(ends_tag_name) {
            let close = memchr::memchr(b'>', rest)?;
            // The record starts with its own `<div`, so a `</div>` comes with at least that
            // one open.
            depth = depth.saturating_sub(1);
            if depth == 0 {
                return Some(tag + close + 1);
            }
        }
        at = tag + 1;
    }
    None
}

/// Whether a byte ends a tag name (`<div>`, `<div class…>`), so `<divider>` is no `div`.
fn ends_tag_name(byte: &u8) -> bool {
    matches!(byte, b'>' | b'/' | b' ' | b'\t' | b'\n' | b'\r')
}

/// Where, in what follows the page's last complete record, a record starts that the end of the
/// file cut: a `div` opened and never closed (`<div class="outer-cell mdl-c`), or a last tag
/// that is the start of a record's marker (`<d`, `<div cl`). A complete page has only its own
/// closing tags there. `None` when nothing was cut (a lone `<` may as well start a closing tag).
fn cut_record_start(tail: &[u8]) -> Option<usize> {
    let opened = memchr::memmem::find_iter(tail, b"<div").filter(|&at| tail.get(at + 4).is_none_or(ends_tag_name)).count();
    let closed = memchr::memmem::find_iter(tail, b"</div").filter(|&at| tail.get(at + 5).is_some_and(ends_tag_name)).count();
    if opened > closed {
        return memchr::memmem::find_iter(tail, b"<div").find(|&at| tail.get(at + 4).is_none_or(ends_tag_name));
    }
    let last_tag = memchr::memrchr(b'<', tail)?;
    let unfinished = &tail[last_tag..];
    let is_marker_start = unfinished.len() >= 2 && !unfinished.contains(&b'>') && RECORD_MARKER.starts_with(unfinished);
    is_marker_start.then_some(last_tag)
}

/// The content of the first element whose opening tag contains `class_fragment`, up to the
/// next element that contains `end_fragment` (or the end).
fn section<'a>(html: &'a str, class_fragment: &str, end_fragment: &str) -> Option<&'a str> {
    let start = html.find(class_fragment)?;
    let open_end = start + html[start..].find('>')? + 1;
    let rest = &html[open_end..];
    let end = rest.find(end_fragment).map_or(rest.len(), |end| rest[..end].rfind('<').unwrap_or(end));
    Some(&rest[..end])
}

/// Splits at `<br>` tags (any spelling) that sit outside other elements.
fn split_lines(html: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut rest = html;
    loop {
        let lower = rest.to_ascii_lowercase();
        let Some(position) = lower.find("<br") else {
            lines.push(rest);
            return lines;
        };
        // Stop at the first block element: the answer starts there.
        if let Some(block) = lower.find("<p").or_else(|| lower.find("<div")).or_else(|| lower.find("<ul")).or_else(|| lower.find("<ol"))
            && block < position
        {
            lines.push(rest);
            return lines;
        }
        lines.push(&rest[..position]);
        let close = rest[position..].find('>').map_or(rest.len(), |close| position + close + 1);
        rest = &rest[close..];
    }
}

/// Reads one record: the JSON-shaped record, its UTC time and its conversation id.
fn parse_record(html: &str) -> Option<(serde_json::Value, i64, Option<String>)> {
    let header = section(html, "mdl-typography--title", "</p").map(html_to_text).unwrap_or_default();
    let content = section(html, "mdl-typography--body-1\"", "mdl-typography--text-right")
        .or_else(|| section(html, "content-cell", "mdl-typography--caption"))?;
    // The section runs to the next cell, so it ends with the content cell's own `</div>`.
    let content = content.trim_end();
    let content = content.strip_suffix("</div>").unwrap_or(content);
    let lines = split_lines(content);
    let date_position = lines.iter().position(|line| parse_takeout_time(&decode_entities(&strip_tags(line))).is_some())?;
    let (time, _zone_known) = parse_takeout_time(&decode_entities(&strip_tags(lines[date_position])))?;
    let title_lines: Vec<String> = lines[..date_position].iter().map(|line| decode_entities(&strip_tags(line)).trim().to_owned()).collect();
    let (title, attachments) = match title_lines.split_first() {
        Some((title, rest)) => {
            // Lines between the prompt and the date are attachment names when they look like
            // file names, else more prompt text.
            let (files, more): (Vec<&String>, Vec<&String>) = rest.iter().partition(|line| looks_like_file_name(line));
            let mut title = title.clone();
            for line in more {
                title.push('\n');
                title.push_str(line);
            }
            (title, files.into_iter().cloned().collect::<Vec<_>>())
        }
        None => (String::new(), Vec::new()),
    };
    let answer_html: String = lines[date_position + 1..].join("<br>");
    let caption = section(html, "mdl-typography--caption", "</div").unwrap_or("");
    let conversation = find_conversation_url(caption).or_else(|| find_conversation_url(content));
    let mut record = json!({
        "header": header,
        "title": title,
        "time": format_rfc3339(time),
        "safeHtmlItem": if html_to_text(&answer_html).trim().is_empty() { json!([]) } else { json!([{"html": answer_html}]) },
    });
    if !attachments.is_empty() {
        record["attachedFiles"] = json!(attachments);
    }
    if let Some(url) = &conversation {
        record["titleUrl"] = json!(url);
    }
    let id = conversation.as_deref().and_then(gemini::conversation_id_from_url);
    Some((record, time, id))
}

fn strip_tags(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            _ if !in_tag => out.push(c),
            _ => {}
        }
    }
    out
}

fn looks_like_file_name(line: &str) -> bool {
    let line = line.trim();
    !line.is_empty()
        && !line.contains(char::is_whitespace)
        && line.rsplit_once('.').is_some_and(|(stem, extension)| !stem.is_empty() && (1..=5).contains(&extension.len()))
}

fn find_conversation_url(html: &str) -> Option<String> {
    let mut rest = html;
    while let Some(position) = rest.find("href=\"") {
        let value = &rest[position + 6..];
        let url = decode_entities(value.split('"').next().unwrap_or(""));
        if gemini::conversation_id_from_url(&url).is_some() {
            return Some(url);
        }
        // Past this `href="` already; slicing one byte further panicked on an empty or
        // multi-byte rest (found by fuzzing).
        rest = value;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_records_across_reads_and_parses_a_czech_one() {
        let page = format!(
            "<html><body><div class=\"mdl-grid\">{}{}</div></body></html>",
            "<div class=\"outer-cell mdl-cell\"><div class=\"mdl-grid\"><div class=\"header-cell\"><p class=\"mdl-typography--title\">Gemini Apps<br></p></div>\
             <div class=\"content-cell mdl-cell mdl-cell--6-col mdl-typography--body-1\">Pokyn&nbsp;Ahoj<br>photo.png<br>1. 1. 2026 10:00:00\n SEČ<br><p>Dobrý <b>den</b></p></div>\
             <div class=\"content-cell mdl-cell mdl-cell--6-col mdl-typography--body-1 mdl-typography--text-right\"></div>\
             <div class=\"content-cell mdl-cell mdl-cell--12-col mdl-typography--caption\"><b>Produkty:</b><br>&emsp;Gemini Apps<br>\
             <a href=\"https://gemini.google.com/app/abc123\">x</a></div></div></div>",
            "<div class=\"outer-cell mdl-cell\"><div class=\"content-cell mdl-cell mdl-cell--6-col mdl-typography--body-1\">Used Gemini Apps<br>Jan 2, 2026, 9:00:00 AM UTC<br></div></div>"
        );
        let mut framer = RecordFramer { reader: page.as_bytes(), buffer: Vec::new(), buffer_offset: 0, at_end: false };
        let (offset, first) = framer.next_record().unwrap().unwrap();
        assert_eq!(offset, page.find("<div class=\"outer-cell").unwrap() as u64);
        let (record, time, conversation) = parse_record(&String::from_utf8(first).unwrap()).unwrap();
        assert_eq!(record["title"], "Pokyn\u{a0}Ahoj");
        assert_eq!(record["attachedFiles"], json!(["photo.png"]));
        assert_eq!(record["safeHtmlItem"][0]["html"], "<p>Dobrý <b>den</b></p>");
        assert_eq!(format_rfc3339(time), "2026-01-01T09:00:00Z");
        assert_eq!(conversation.as_deref(), Some("abc123"));
        let (_, second) = framer.next_record().unwrap().unwrap();
        let (record, _, _) = parse_record(&String::from_utf8(second).unwrap()).unwrap();
        assert_eq!(record["title"], "Used Gemini Apps");
        assert!(framer.next_record().unwrap().is_none());
    }

    const RECORD: &str = "<div class=\"outer-cell mdl-cell\"><div class=\"content-cell mdl-cell mdl-typography--body-1\">\
        Prompted hi<br>Jan 2, 2026, 9:00:00 AM UTC<br><p>Hello <b>there</b></p></div></div>";

    /// Each record of `page` as (whether it was the page's last, whether it ends inside itself).
    fn framed(page: &str) -> Vec<(bool, bool)> {
        let mut framer = RecordFramer { reader: page.as_bytes(), buffer: Vec::new(), buffer_offset: 0, at_end: false };
        let mut records = Vec::new();
        while let Some((_, record)) = framer.next_record().unwrap() {
            records.push((framer.drained(), record_end(&record).is_none()));
        }
        records
    }

    /// The records `regroup` reads from `page` (as JSON) and the problems it reports, in order.
    fn regrouped(page: &[u8]) -> (Vec<serde_json::Value>, Vec<String>) {
        let reader = Box::new(std::io::Cursor::new(page.to_vec()));
        let mut elements = regroup(reader, "MyActivity.html", &SourceOptions::default()).unwrap();
        let (mut records, mut problems) = (Vec::new(), Vec::new());
        let mut element = Vec::new();
        while elements.next_element_into(&mut element).unwrap().is_some() {
            for row in crate::sources::regroup::BinaryRows::new(&element) {
                match crate::sources::regroup::read_binary_row(row) {
                    (_, _, crate::sources::regroup::BinaryRow::Problem(problem)) => problems.push(problem),
                    (_, _, crate::sources::regroup::BinaryRow::Record(bytes)) => records.push(serde_json::from_slice(bytes).unwrap()),
                }
            }
            element.clear();
        }
        (records, problems)
    }

    /// Guards the truncation check: a page cut inside its last answer must not be read as if
    /// the answer were complete, and a whole page must not be taken for a cut one.
    #[test]
    fn a_page_cut_inside_its_last_answer_is_rejected_as_truncated() {
        let page = format!("<html><body><div class=\"mdl-grid\">{RECORD}{RECORD}</div></body></html>");
        assert_eq!(framed(&page), [(false, false), (true, false)]);
        // Cut inside the answer, inside a closing tag, and before the record's last `>`.
        let inside_answer = &page[..page.rfind("<b>there").unwrap() + 5];
        let inside_tag = &page[..page.rfind("</p></div></div>").unwrap() + 12];
        let before_last_bracket = &page[..page.rfind("</p></div></div>").unwrap() + 15];
        for cut in [inside_answer, inside_tag, before_last_bracket] {
            assert_eq!(framed(cut), [(false, false), (true, true)], "{cut}");
        }
        // A `<divider>` is no `div`.
        assert!(record_end(b"<div class=\"outer-cell\"><divider></div>").is_some());

        let (records, problems) = regrouped(inside_answer.as_bytes());
        assert_eq!((records.len(), problems), (1, vec![TRUNCATED_RECORD.to_owned()]));
        let (records, problems) = regrouped(page.as_bytes());
        assert_eq!((records.len(), problems.len()), (2, 0));
    }

    /// Guards the truncation check against rejecting a complete record: a page cut inside the
    /// opening tag of a record after the first ran the first to the end of the file, and the
    /// cut tag counted as a `div` it opened, so the complete record was rejected as truncated.
    /// Only the record that was cut is.
    #[test]
    fn a_page_cut_inside_the_next_records_opening_tag_keeps_the_complete_record() {
        let page = format!("<html><body><div class=\"mdl-grid\">\n{RECORD}\n{RECORD}</div></body></html>");
        let second = page.rfind("<div class=\"outer-cell").unwrap();
        // Cut inside the next record's marker (`<div class="ou`, `<d`).
        for cut in [&page[..second + 14], &page[..second + 2]] {
            assert_eq!(framed(cut), [(true, false)], "{cut}");
            let (records, problems) = regrouped(cut.as_bytes());
            assert_eq!(records.len(), 1, "{cut}");
            assert_eq!(records[0]["title"], "Prompted hi");
            assert_eq!(problems, [TRUNCATED_NEXT_RECORD], "{cut}");
        }
        // Cut in the page's own closing tags: nothing is lost, nothing is reported.
        let (records, problems) = regrouped(&page.as_bytes()[..page.len() - 9]);
        assert_eq!((records.len(), problems.len()), (2, 0));
        let (records, problems) = regrouped(&page.as_bytes()[..second + 1]);
        assert_eq!((records.len(), problems.len()), (1, 0), "a lone `<` may start a closing tag");
    }

    /// Guards the reading of bytes that are not UTF-8: they were replaced without a word. The
    /// record is read and marked for the decoder to count.
    #[test]
    fn a_record_with_bytes_that_are_not_utf8_is_read_and_marked() {
        let page = format!("<html><body>{RECORD}</body></html>").replace("Hello", "H\u{e9}llo").into_bytes();
        let mut bad = page.clone();
        let at = bad.iter().position(|&byte| byte == 0xC3).unwrap();
        bad[at] = 0xFF;
        let (records, problems) = regrouped(&bad);
        assert!(problems.is_empty());
        assert_eq!(records[0]["safeHtmlItem"][0]["notUtf8"], true);
        let answer = records[0]["safeHtmlItem"][0]["html"].as_str().unwrap_or_default();
        assert!(answer.starts_with("<p>H\u{fffd}\u{fffd}llo <b>there</b></p>"), "{answer}");
        let (records, _) = regrouped(&page);
        assert_eq!(records[0]["safeHtmlItem"][0].get("notUtf8"), None);
    }

    /// Found by fuzzing: an `href="` at the very end, or before a multi-byte character,
    /// panicked while the conversation link was looked for.
    #[test]
    fn a_link_cut_at_its_quote_or_before_a_wide_character_finds_nothing() {
        assert_eq!(find_conversation_url("<a href=\""), None);
        assert_eq!(find_conversation_url("<a href=\"\u{fffd}\u{fffd}x\">a</a>"), None);
    }
}
