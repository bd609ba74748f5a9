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
//! is rejected as truncated instead of being written as if its answer were complete.

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
        row.clear();
        // Only the last record runs to the end of the file; the others end where the next
        // record's marker starts, so the page's end cannot cut them.
        if framer.drained() && ends_inside_record(&bytes) {
            push_problem_row(&mut row, offset, index, TRUNCATED_RECORD);
            regrouper.push(&GroupKey::Title(String::new()), None, &row)?;
            index += 1;
            continue;
        }
        let html = String::from_utf8_lossy(&bytes);
        let (record, time, conversation) = match parse_record(&html) {
            Some(parsed) => parsed,
            None => {
                push_problem_row(&mut row, offset, index, "an activity record without a readable date line");
                regrouper.push(&GroupKey::Title(String::new()), None, &row)?;
                index += 1;
                continue;
            }
        };
        push_binary_row(&mut row, offset, index, record.to_string().as_bytes());
        let key = match conversation {
            Some(id) => GroupKey::Conversation(id),
            None => GroupKey::Title(String::new()),
        };
        regrouper.push(&key, Some(time), &row)?;
        index += 1;
    }
    regrouper.finish()
}

/// Whether `record` (from its `outer-cell` marker to the end of the page) ends before its
/// `div`s are closed: a complete record closes every `div` it opens, and the page's own closing
/// tags follow it, so more opened than closed means the file stops inside the record.
fn ends_inside_record(record: &[u8]) -> bool {
    let ends_tag_name = |byte: &u8| matches!(byte, b'>' | b'/' | b' ' | b'\t' | b'\n' | b'\r');
    // `<div>` or `<div class…>`, not `<divider>`; an opening tag cut by the end of the file
    // counts as opened.
    let opened = memchr::memmem::find_iter(record, b"<div").filter(|&at| record.get(at + 4).is_none_or(ends_tag_name)).count();
    // A closing tag cut by the end of the file (`</div` with nothing after it) closes nothing.
    let closed = memchr::memmem::find_iter(record, b"</div").filter(|&at| record.get(at + 5).is_some_and(ends_tag_name)).count();
    opened > closed
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
        rest = &value[1..];
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
            records.push((framer.drained(), ends_inside_record(&record)));
        }
        records
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
        assert!(!ends_inside_record(b"<div class=\"outer-cell\"><divider></div>"));

        let reader = Box::new(std::io::Cursor::new(inside_answer.as_bytes().to_vec()));
        let mut elements = regroup(reader, "MyActivity.html", &SourceOptions::default()).unwrap();
        let mut problems = Vec::new();
        let mut records = 0;
        let mut element = Vec::new();
        while elements.next_element_into(&mut element).unwrap().is_some() {
            for row in crate::sources::regroup::BinaryRows::new(&element) {
                match crate::sources::regroup::read_binary_row(row) {
                    (_, _, crate::sources::regroup::BinaryRow::Problem(problem)) => problems.push(problem),
                    (_, _, crate::sources::regroup::BinaryRow::Record(_)) => records += 1,
                }
            }
            element.clear();
        }
        assert_eq!((records, problems), (1, vec![TRUNCATED_RECORD.to_owned()]));
    }
}
