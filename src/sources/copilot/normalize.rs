//! Decodes one regrouped Copilot conversation (the header's column positions, then its raw
//! CSV rows in chronological order) into the canonical model: one message per row, a straight
//! thread, ids derived from the title and the first row's time (Copilot has no ids), zoneless
//! times read in `--timezone`.
//!
//! A row is rejected, naming its line, when it is short of cells, when its time names a day its
//! month does not have or falls outside years 0001–9999 in UTC, and when a quote in it never
//! closes (the rest of the file then sits in its last cell).

use std::ops::Range;

use crate::hash::{ContentKey, push_hex, sha256};
use crate::model::{Conversation, Disposition, Message, Origin, Provider, Role, SkipReason, Warnings};
use crate::sources::contract::{DecodeOptions, Decoded, RecordReject};
use crate::sources::copilot::csv_rows::{cell, quote_left_open, split_row};
use crate::sources::copilot::{COLUMNS_BYTES, Columns, CopilotDecoder, CsvLayout, decode_columns};
use crate::sources::regroup::BinaryRows;
use crate::timefmt::{TimeError, read_wall_time};

/// Copilot 2025 exports cut answers to this many characters and append `...`.
const TRUNCATED_ANSWER_CHARS: usize = 100;

/// One CSV row's cells.
struct Row {
    /// Byte offset of the row in the CSV.
    offset: u64,
    /// Line number of the row (the header is line 1).
    line: u64,
    /// Conversation title (or client app).
    title: String,
    /// The time as written.
    time: String,
    /// Author as written (`Human`, `AI`, `user`, `bot`, …); empty for prompt-only layouts.
    author: String,
    /// Message text.
    text: String,
    /// Why the row cannot be used, when it cannot.
    problem: Option<String>,
    /// True when cells were not valid UTF-8 and were decoded lossily.
    lossy: bool,
}

impl Row {
    /// Splits a raw row and takes the cells at `columns`; a row without the cell at
    /// `last_required` (a position) is a problem.
    fn split(offset: u64, line: u64, bytes: &[u8], columns: &Columns, last_required: usize, fields: &mut Vec<Range<usize>>) -> Row {
        split_row(bytes, fields);
        let mut lossy = false;
        let mut text_of = |column: Option<usize>| match column.and_then(|index| fields.get(index)) {
            Some(range) => match String::from_utf8(cell(&bytes[range.clone()]).into_owned()) {
                Ok(text) => text,
                Err(error) => {
                    lossy = true;
                    String::from_utf8_lossy(error.as_bytes()).into_owned()
                }
            },
            None => String::new(),
        };
        let (title, time, author, text) = (text_of(columns[0]), text_of(columns[1]), text_of(columns[2]), text_of(columns[3]));
        // Only the last field can be left open: the row then ran to the end of the file.
        let open_quote = fields.last().filter(|&range| quote_left_open(&bytes[range.clone()])).map(|range| {
            let opened = line + count_lines(&bytes[..range.start]);
            // The row runs to the end of the file; a line end there starts no further line.
            let last = line + count_lines(bytes.strip_suffix(b"\n").unwrap_or(bytes));
            format!(
                "the quote opened on line {opened} is never closed, so lines {opened} to {last} (the rest of the file) were read into \
                 this one cell; close the quote and convert again"
            )
        });
        let problem = open_quote.or_else(|| {
            (fields.len() <= last_required).then(|| format!("row has {} cells, the header has {}", fields.len(), last_required + 1))
        });
        Row { offset, line, title, time, author, text, problem, lossy }
    }
}

/// Line ends in `bytes`, as the scanner numbers lines (one per `\n`).
fn count_lines(bytes: &[u8]) -> u64 {
    memchr::memchr_iter(b'\n', bytes).count() as u64
}

/// Decodes one regrouped conversation. `Err` rejects the whole group.
pub fn decode_conversation(
    bytes: &[u8],
    origin: Origin,
    decoder: &CopilotDecoder,
    options: &DecodeOptions,
) -> Result<Decoded, RecordReject> {
    let unreadable = |origin: &Origin| RecordReject::new(origin, None, "internal regrouping record unreadable".into());
    let columns = decode_columns(bytes).ok_or_else(|| unreadable(&origin))?;
    let mut binary_rows = BinaryRows::new(&bytes[COLUMNS_BYTES..]);
    // The author column is optional in prompt-only layouts.
    let last_required = columns
        .iter()
        .enumerate()
        .filter(|(slot, _)| *slot != 2 || decoder.layout != CsvLayout::WindowsApps)
        .filter_map(|(_, column)| *column)
        .max()
        .unwrap_or(0);
    let mut fields = Vec::new();
    let rows: Vec<Row> =
        binary_rows.by_ref().map(|(offset, line, row)| Row::split(offset, line, row, &columns, last_required, &mut fields)).collect();
    if !binary_rows.is_done() {
        return Err(unreadable(&origin));
    }
    let Some(first) = rows.first() else {
        return Err(RecordReject::new(&origin, None, "empty conversation group".into()));
    };
    // Rejects and conversation origins point at the CSV, not at the regrouping file.
    let origin = Origin { file: origin.file, offset: first.offset, index: first.line.saturating_sub(2) };
    let mut id_source = Vec::with_capacity(first.title.len() + first.time.len() + 1);
    id_source.extend_from_slice(first.title.as_bytes());
    id_source.push(0);
    id_source.extend_from_slice(first.time.as_bytes());
    let mut id = String::from("cp-");
    push_hex(&mut id, &sha256(&id_source)[..12]);

    let mut warnings = Warnings::default();
    let mut rejected_messages = Vec::new();
    let mut messages: Vec<Message> = Vec::with_capacity(rows.len());
    let mut zone_assumed = false;
    let mut last_time = None;
    for (position, row) in rows.iter().enumerate() {
        let message_id = format!("m{position:05}");
        let row_origin = Origin { file: origin.file.clone(), offset: row.offset, index: row.line.saturating_sub(2) };
        if let Some(problem) = &row.problem {
            rejected_messages
                .push(RecordReject::new(&row_origin, Some(&id), format!("line {}: {problem}", row.line)).with_message(&message_id));
            continue;
        }
        if row.lossy {
            warnings.add("csv_not_utf8");
        }
        let zone = &decoder.options.time_zone;
        let reading = read_wall_time(&row.time).and_then(|wall| wall.to_utc(zone.offset_seconds).map(|time| (wall, time)));
        let time = match reading {
            Ok((wall, time)) => {
                zone_assumed |= wall.offset_seconds.is_none();
                Some(time)
            }
            // An unreadable time is the export's habit (an empty cell, a format memport does
            // not know): the row keeps its place in the thread. A time that reads but cannot be
            // right would put the message on another day, so the row is rejected.
            Err(TimeError::Unreadable) => {
                warnings.add("time_unreadable");
                None
            }
            Err(error) => {
                // Only a time without a zone is moved by the one assumed.
                let assumed = match read_wall_time(&row.time) {
                    Ok(wall) if wall.offset_seconds.is_none() => format!(" read at {}", zone.label),
                    _ => String::new(),
                };
                let reason = format!("line {}: time `{}`{assumed}: {error}", row.line, row.time.trim());
                rejected_messages.push(RecordReject::new(&row_origin, Some(&id), reason).with_message(&message_id));
                continue;
            }
        };
        let role = match decoder.layout {
            CsvLayout::WindowsApps => Role::User,
            _ => role_of(&row.author),
        };
        let text = row.text.trim_end_matches(['\r', '\n']).to_owned();
        let truncated = role == Role::Assistant && text.ends_with("...") && text.chars().count() == TRUNCATED_ANSWER_CHARS + 3;
        if truncated {
            warnings.add("copilot_truncated_answer");
        }
        let disposition = if text.trim().is_empty() { Disposition::Skip(SkipReason::Empty) } else { Disposition::Keep };
        let created_at = time.or(last_time).unwrap_or(options.exported_at);
        last_time = Some(created_at);
        messages.push(Message {
            id: message_id,
            parent_id: messages.last().map(|previous| previous.id.clone()),
            role,
            author_name: (role == Role::Assistant && !row.author.is_empty()).then(|| row.author.clone()),
            created_at,
            time_known: time.is_some(),
            parts: Vec::new(),
            content_key: if disposition == Disposition::Keep { options.content_key(&text) } else { ContentKey::default() },
            text,
            is_thought: false,
            provider_fields: None,
            model: None,
            status: truncated.then(|| "truncated".to_owned()),
            on_active_branch: true,
            disposition,
            discloses: false,
        });
    }
    let conversation = Conversation {
        provider: Provider::Copilot,
        id,
        title: Some(first.title.clone()).filter(|title| !title.is_empty()),
        created_at: messages.first().map(|message| message.created_at),
        updated_at: messages.last().map(|message| message.created_at),
        model: None,
        system_instruction: None,
        is_archived: false,
        messages,
        memories: Vec::new(),
        memories_only: false,
        is_repeat: false,
        assumed_time_zone: zone_assumed.then(|| decoder.options.time_zone.label.clone()),
        origin,
    };
    if zone_assumed {
        warnings.add("time_zone_assumed");
    }
    Ok(Decoded { conversation, rejected_messages, warnings, retractions: Vec::new() })
}

/// `Human`/`user` are the person; `AI`, `bot`, `Copilot` and anything else are the model.
fn role_of(author: &str) -> Role {
    let author = author.trim();
    if author.eq_ignore_ascii_case("human") || author.eq_ignore_ascii_case("user") || author.eq_ignore_ascii_case("you") {
        Role::User
    } else {
        Role::Assistant
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::contract::{BranchPolicy, SourceOptions, TimeZone};
    use crate::sources::copilot::csv_rows::RowScanner;
    use crate::sources::copilot::encode_columns;
    use crate::sources::regroup::push_binary_row;

    /// Decodes every row of an activity history CSV (`text`, header first) as one conversation,
    /// zoneless times read at `zone`.
    fn decode(text: &[u8], zone: &str) -> Decoded {
        let mut scanner = RowScanner::new(text);
        let mut fields = Vec::new();
        let mut element = encode_columns(&[Some(0), Some(1), Some(2), Some(3)]).to_vec();
        let mut is_header = true;
        while let Some(row) = scanner.next_row(&mut fields).unwrap() {
            if !std::mem::take(&mut is_header) {
                push_binary_row(&mut element, row.offset, row.line, row.bytes);
            }
        }
        let source = SourceOptions { time_zone: TimeZone::parse(zone).unwrap(), ..SourceOptions::default() };
        let decoder = CopilotDecoder { layout: CsvLayout::ActivityHistory, options: source };
        let options = DecodeOptions {
            branches: BranchPolicy::Active,
            exported_at: 0,
            keep_provider_fields: false,
            dedup_keys: false,
            pam_digests: false,
        };
        decode_conversation(&element, Origin { file: "c.csv".into(), offset: 0, index: 0 }, &decoder, &options).unwrap()
    }

    fn reasons(decoded: &Decoded) -> Vec<&str> {
        decoded.rejected_messages.iter().map(|reject| reject.reason.as_str()).collect()
    }

    /// Guards the time checks: 2026-02-30 would roll over into March, and a late-9999 time
    /// read at a zone west of UTC would be written as year 0000.
    #[test]
    fn rows_with_impossible_or_out_of_range_times_are_rejected_with_their_line() {
        let text = b"Conversation,Time,Author,Message\r\n\
            t,2026-01-01T10:00:00,Human,hello\r\n\
            t,2026-02-30T10:01:00,AI,rolled over\r\n\
            t,9999-12-31T23:00:00,Human,far\r\n\
            t,not a time,AI,kept\r\n";
        let decoded = decode(text, "-05:00");
        assert_eq!(
            reasons(&decoded),
            [
                "line 3: time `2026-02-30T10:01:00`: 2026-02-30 is not a date: February 2026 has 28 days",
                "line 4: time `9999-12-31T23:00:00` read at -05:00: outside years 0001-9999 once converted to UTC",
            ]
        );
        let texts: Vec<&str> = decoded.conversation.messages.iter().map(|message| message.text.as_str()).collect();
        assert_eq!(texts, ["hello", "kept"]);
        let rejected: Vec<Option<&str>> = decoded.rejected_messages.iter().map(|reject| reject.message_id.as_deref()).collect();
        assert_eq!(rejected, [Some("m00001"), Some("m00002")]);
    }

    /// Guards the line numbers of rejects: the file's own lines (header = 1), across `\r\n`
    /// line ends and quoted cells that span lines.
    #[test]
    fn rejects_name_the_files_own_line() {
        let text = b"Conversation,Time,Author,Message\r\n\
            t,2026-01-01T10:00:00,AI,\"two\r\nlines\"\r\n\r\n\
            t,2026-01-01T10:01:00\r\n";
        assert_eq!(reasons(&decode(text, "UTC")), ["line 5: row has 2 cells, the header has 4"]);
    }

    /// Guards the open-quote check: a quote that never closes takes every later row into its
    /// cell, which must not be written as one message.
    #[test]
    fn a_quote_that_never_closes_rejects_its_row_naming_the_line_it_opened_on() {
        let text = b"Conversation,Time,Author,Message\r\n\
            t,2026-01-01T10:00:00,Human,hello\r\n\
            t,2026-01-01T10:01:00,AI,\"an answer whose quote\r\n\
            never closes\r\n\
            t,2026-01-01T10:02:00,Human,swallowed\r\n";
        let decoded = decode(text, "UTC");
        assert_eq!(
            reasons(&decoded),
            ["line 3: the quote opened on line 3 is never closed, so lines 3 to 5 (the rest of the file) were read into this one cell; \
              close the quote and convert again"]
        );
        assert_eq!(decoded.conversation.messages.len(), 1);
    }
}
