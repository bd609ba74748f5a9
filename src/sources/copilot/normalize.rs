//! Decodes one regrouped Copilot conversation (the header's column positions, then its raw
//! CSV rows in chronological order) into the canonical model: one message per row, a straight
//! thread, ids derived from the title and the first row's time (Copilot has no ids), zoneless
//! times read in `--timezone`.

use std::ops::Range;

use crate::hash::{ContentKey, push_hex, sha256};
use crate::model::{Conversation, Disposition, Message, Origin, Provider, Role, SkipReason, Warnings};
use crate::sources::contract::{DecodeOptions, Decoded, RecordReject};
use crate::sources::copilot::csv_rows::{cell, split_row};
use crate::sources::copilot::{COLUMNS_BYTES, Columns, CopilotDecoder, CsvLayout, decode_columns};
use crate::sources::regroup::BinaryRows;
use crate::timefmt::parse_wall_time;

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
        let problem =
            (fields.len() <= last_required).then(|| format!("row has {} cells, the header has {}", fields.len(), last_required + 1));
        Row { offset, line, title, time, author, text, problem, lossy }
    }
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
        let wall = parse_wall_time(&row.time);
        let time = match wall {
            Some(wall) => {
                zone_assumed |= wall.offset_seconds.is_none();
                Some(wall.to_utc(decoder.options.time_zone.offset_seconds))
            }
            None => {
                warnings.add("time_unreadable");
                None
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
    Ok(Decoded { conversation, rejected_messages, warnings })
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
