//! Decodes one regrouped Copilot conversation (`{"rows":[…]}` in chronological order) into the
//! canonical model: one message per row, a straight thread, ids derived from the title and the
//! first row's time (Copilot has no ids), zoneless times read in `--timezone`.

use serde::Deserialize;

use crate::hash::{pam_content_digest, push_hex, sha256};
use crate::model::{Conversation, Disposition, Message, Origin, Provider, Role, SkipReason, Warnings};
use crate::sources::copilot::{CopilotDecoder, CsvLayout, Row};
use crate::sources::{DecodeOptions, Decoded, RecordReject};
use crate::timefmt::parse_wall_time;

/// Copilot 2025 exports cut answers to this many characters and append `...`.
const TRUNCATED_ANSWER_CHARS: usize = 100;

#[derive(Deserialize)]
struct Group {
    rows: Vec<Row>,
}

/// Decodes one regrouped conversation. `Err` rejects the whole group.
pub fn decode_conversation(
    bytes: &[u8],
    origin: Origin,
    decoder: &CopilotDecoder,
    options: &DecodeOptions,
) -> Result<Decoded, RecordReject> {
    let group: Group = serde_json::from_slice(bytes)
        .map_err(|error| RecordReject::new(&origin, None, format!("internal regrouping record unreadable: {error}")))?;
    let Some(first) = group.rows.first() else {
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
    let mut messages: Vec<Message> = Vec::with_capacity(group.rows.len());
    let mut zone_assumed = false;
    let mut last_time = None;
    for (position, row) in group.rows.iter().enumerate() {
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
            content_hash: if disposition == Disposition::Keep { pam_content_digest(&text) } else { [0; 32] },
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
