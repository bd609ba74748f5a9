//! Decodes one regrouped Gemini conversation (binary rows, each one activity record's JSON, in
//! chronological order) into the canonical model. Each record is parsed on its own, so a
//! broken record is rejected alone. Each prompt record becomes the person's message and the
//! model's answer (HTML turned into text); further drafts of the answer are alternatives off
//! the active branch. Records that are not prompts (feedback, "Used Gemini
//! Apps") are counted as skipped `activity`. The 2024 variant with `details` Request/Response
//! pairs or `userInteractions` is read too.

use sha2::{Digest, Sha256};

use crate::hash::{ContentKey, push_hex, sha256};
use crate::model::{Asset, AssetKind, Conversation, Disposition, Message, Micros, Origin, Part, Provider, Role, SkipReason, Warnings};
use crate::sources::chatgpt::render::parts_to_text;
use crate::sources::contract::{BranchPolicy, DecodeOptions, Decoded, RecordReject};
use crate::sources::gemini::TakeoutFiles;
use crate::sources::gemini::raw::RawRecord;
use crate::sources::gemini::verbs::prompt_of;
use crate::sources::lenient::Object;
use crate::sources::provider_fields;
use crate::sources::regroup::{BinaryRow, BinaryRows, read_binary_row};
use crate::timefmt::parse_rfc3339;

/// One row of a conversation: where the record was, its bytes and what it holds.
struct Row<'a> {
    offset: u64,
    index: u64,
    bytes: &'a [u8],
    record: Result<RawRecord<'a>, String>,
}

impl<'a> Row<'a> {
    fn read(row: (u64, u64, &'a [u8])) -> Self {
        let (offset, index, row) = read_binary_row(row);
        let (bytes, record) = match row {
            BinaryRow::Problem(problem) => (&[][..], Err(problem)),
            BinaryRow::Record(bytes) => match sonic_rs::from_slice::<Object<RawRecord>>(bytes) {
                Ok(Object::Present(record)) => (bytes, Ok(record)),
                Ok(_) => (bytes, Err("activity record is not a JSON object".into())),
                Err(error) => (bytes, Err(format!("activity record is not valid JSON: {error}"))),
            },
        };
        Row { offset, index, bytes, record }
    }
}

/// What one record says.
struct Turn {
    prompt: Option<String>,
    answers: Vec<String>,
    attachments: Vec<(AssetKind, String)>,
}

/// Decodes one regrouped conversation. `Err` rejects the whole group.
pub fn decode_conversation(bytes: &[u8], origin: Origin, files: &TakeoutFiles, options: &DecodeOptions) -> Result<Decoded, RecordReject> {
    let mut binary_rows = BinaryRows::new(bytes);
    let mut rows: Vec<Row> = binary_rows.by_ref().map(Row::read).collect();
    if !binary_rows.is_done() {
        return Err(RecordReject::new(&origin, None, "internal regrouping record unreadable".into()));
    }
    let Some(first) = rows.first() else {
        return Err(RecordReject::new(&origin, None, "empty conversation group".into()));
    };
    let origin = Origin { file: origin.file, offset: first.offset, index: first.index };
    let first_record = rows.iter().find_map(|row| row.record.as_ref().ok());
    let url_id = first_record.and_then(RawRecord::conversation_id);
    let id = match url_id {
        Some(url_id) if url_id.bytes().all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_')) => format!("gm-{url_id}"),
        other => {
            let seed = other.unwrap_or_else(|| first_record.and_then(|record| record.time.as_deref()).unwrap_or_default().to_owned());
            let mut id = String::from("gm-t");
            push_hex(&mut id, &sha256(seed.as_bytes())[..12]);
            id
        }
    };

    let mut warnings = Warnings::default();
    let mut rejected_messages = Vec::new();
    let mut messages: Vec<Message> = Vec::with_capacity(rows.len() * 2);
    // The thread continues from the last message on the active branch.
    let mut thread_tip: Option<String> = None;
    let mut last_time = None;
    let mut title = None;
    let mut occurrences: std::collections::HashMap<(String, String), u64> = std::collections::HashMap::new();
    for row in &mut rows {
        let row_origin = Origin { file: origin.file.clone(), offset: row.offset, index: row.index };
        let record = match &mut row.record {
            Ok(record) => record,
            Err(problem) => {
                rejected_messages.push(RecordReject::new(&row_origin, Some(&id), problem.clone()));
                continue;
            }
        };
        // Bytes of the page that were not UTF-8 were read as U+FFFD: said, not hidden.
        if record.safe_html_item.iter().flat_map(|list| list.0.iter()).filter_map(Object::as_ref).any(|item| item.not_utf8 == Some(true)) {
            warnings.add("gemini_html_not_utf8");
        }
        // The answers' HTML was turned into text as the record was parsed (`RawHtml`).
        let answers: Vec<String> = record
            .safe_html_item
            .iter_mut()
            .flat_map(|list| list.0.iter_mut())
            .filter_map(Object::as_mut)
            .filter_map(|item| item.text.take())
            .collect();
        let record_title = record.title.as_deref().unwrap_or("");
        let time_text = record.time.as_deref().unwrap_or("");
        let time = parse_rfc3339(time_text);
        if time.is_none() {
            warnings.add("time_unreadable");
        }
        let created_at = time.or(last_time).unwrap_or(options.exported_at);
        last_time = Some(created_at);
        // Not the record's place in the file: a later Takeout puts newer records first, and
        // the same record must keep its id. Two records alike in time and title in one
        // conversation are told apart by their order.
        let seen_before = occurrences.entry((time_text.to_owned(), record_title.to_owned())).or_insert(0u64);
        let record_id = record_id(&id, time_text, record_title, *seen_before);
        *seen_before += 1;
        // Every message of a record carries that record's fields.
        let record_fields: Option<Box<str>> =
            if options.keep_provider_fields { provider_fields::gemini_record(row.bytes).map(String::into_boxed_str) } else { None };
        let turn = read_turn(record, answers, record_title, &mut warnings);
        let message =
            |id: String, parent: Option<String>, role: Role, text: String, parts: Vec<Part>, disposition: Disposition, active: bool| {
                Message {
                    id,
                    parent_id: parent,
                    role,
                    author_name: None,
                    created_at,
                    time_known: time.is_some(),
                    content_key: if disposition == Disposition::Keep { options.content_key(&text) } else { ContentKey::default() },
                    parts,
                    text,
                    is_thought: false,
                    provider_fields: record_fields.clone(),
                    model: None,
                    status: None,
                    on_active_branch: active,
                    disposition,
                    discloses: false,
                }
            };
        let Some(prompt) = turn.prompt else {
            // Not a turn: counted as activity, linked nowhere.
            let event = message(
                format!("{record_id}-e"),
                None,
                Role::System,
                record_title.to_owned(),
                Vec::new(),
                Disposition::Skip(SkipReason::Activity),
                true,
            );
            messages.push(event);
            continue;
        };
        if title.is_none() && !prompt.is_empty() {
            title = Some(prompt.chars().take(80).collect::<String>());
        }
        // A prompt with attachments is written as parts; a plain one is its text alone.
        let (prompt_text, prompt_parts) = if turn.attachments.is_empty() {
            (prompt, Vec::new())
        } else {
            let mut parts = Vec::with_capacity(turn.attachments.len() + 1);
            if !prompt.is_empty() {
                parts.push(Part::Text(prompt));
            }
            for (kind, name) in turn.attachments {
                let resolved = files.resolve(&name);
                if resolved.is_none() {
                    warnings.add("asset_missing");
                }
                parts.push(Part::Asset(Asset { kind, pointer: name.clone(), resolved, name: Some(name) }));
            }
            (parts_to_text(&parts), parts)
        };
        let prompt_disposition = if prompt_text.trim().is_empty() { Disposition::Skip(SkipReason::Empty) } else { Disposition::Keep };
        let prompt_id = format!("{record_id}-q");
        messages.push(message(prompt_id.clone(), thread_tip.clone(), Role::User, prompt_text, prompt_parts, prompt_disposition, true));
        thread_tip = Some(prompt_id.clone());
        for (draft, answer) in turn.answers.into_iter().enumerate() {
            let active = draft == 0;
            let disposition = if !active && options.branches == BranchPolicy::Active {
                Disposition::Skip(SkipReason::OffBranch)
            } else if answer.trim().is_empty() {
                Disposition::Skip(SkipReason::Empty)
            } else {
                Disposition::Keep
            };
            let answer_id = if active { format!("{record_id}-a") } else { format!("{record_id}-a{}", draft + 1) };
            if active {
                thread_tip = Some(answer_id.clone());
            }
            messages.push(message(answer_id, Some(prompt_id.clone()), Role::Assistant, answer, Vec::new(), disposition, active));
        }
    }
    let created_at: Option<Micros> = messages.first().map(|message| message.created_at);
    let conversation = Conversation {
        provider: Provider::Gemini,
        id,
        title,
        created_at,
        updated_at: messages.last().map(|message| message.created_at),
        model: None,
        system_instruction: None,
        is_archived: false,
        messages,
        memories: Vec::new(),
        memories_only: false,
        is_repeat: false,
        assumed_time_zone: None,
        origin,
    };
    Ok(Decoded { conversation, rejected_messages, warnings, retractions: Vec::new() })
}

/// A record's id: `r` and 16 hex digits of the SHA-256 over its conversation's id, its time,
/// its title and how many records alike in both came before it in the conversation, joined by
/// NUL bytes. Nothing in it depends on where the record is in the file, so the next Takeout
/// gives it the same id.
fn record_id(conversation_id: &str, time: &str, title: &str, occurrence: u64) -> String {
    let mut hasher = Sha256::new();
    for piece in [conversation_id.as_bytes(), b"\0", time.as_bytes(), b"\0", title.as_bytes(), b"\0", occurrence.to_string().as_bytes()] {
        hasher.update(piece);
    }
    let digest: [u8; 32] = hasher.finalize().into();
    let mut id = String::with_capacity(17);
    id.push('r');
    push_hex(&mut id, &digest[..8]);
    id
}

/// Reads the prompt, the answer drafts and the attachments of a record, in whichever of the
/// known shapes it has; `answers` are its `safeHtmlItem` answers as text.
fn read_turn(record: &RawRecord, mut answers: Vec<String>, title: &str, warnings: &mut Warnings) -> Turn {
    let mut prompt = prompt_of(title);
    // The 2024 variant: `details` with Request/Response values, or `userInteractions`.
    let interaction = record.interaction();
    if let Some(request) = record.detail_value("Request").or_else(|| interaction.and_then(|item| item.request.as_deref())) {
        prompt = Some(request.to_owned());
        if answers.is_empty()
            && let Some(response) = record.detail_value("Response").or_else(|| interaction.and_then(|item| item.response.as_deref()))
        {
            answers.push(response.to_owned());
        }
        warnings.add("gemini_request_response_variant");
    }
    // Unknown (localized) verb but an answer: a prompt/answer pair with the title kept whole.
    if prompt.is_none() && !answers.is_empty() {
        warnings.add("gemini_verb_unknown");
        prompt = Some(title.trim().to_owned());
    }
    let mut attachments = Vec::new();
    if let Some(image) = record.image_file.as_deref().filter(|name| !name.is_empty()) {
        attachments.push((AssetKind::Image, image.to_owned()));
    }
    for name in record.attached_files.iter().flat_map(|list| list.0.iter()).filter_map(|name| name.0.as_deref()) {
        if !name.is_empty() {
            attachments.push((AssetKind::File, name.to_owned()));
        }
    }
    Turn { prompt, answers, attachments }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::regroup::push_binary_row;

    /// Guards the warning for bytes that were not UTF-8: the HTML reader replaced them without
    /// a word. A record it marked counts one `gemini_html_not_utf8`; the answer is written.
    #[test]
    fn a_record_read_with_bytes_that_were_not_utf8_counts_a_warning() {
        let options = DecodeOptions {
            branches: BranchPolicy::Active,
            exported_at: 0,
            keep_provider_fields: false,
            dedup_keys: false,
            pam_digests: false,
        };
        let origin = Origin { file: "MyActivity.html".into(), offset: 0, index: 0 };
        let record = |answer: &str, mark: bool| {
            let item = if mark { serde_json::json!({"html": answer, "notUtf8": true}) } else { serde_json::json!({"html": answer}) };
            serde_json::json!({"header": "Gemini Apps", "title": "Prompted hi", "time": "2026-01-02T09:00:00Z", "safeHtmlItem": [item]})
        };
        let mut element = Vec::new();
        push_binary_row(&mut element, 10, 0, record("<p>The \u{fffd} answer</p>", true).to_string().as_bytes());
        push_binary_row(&mut element, 20, 1, record("<p>Another</p>", false).to_string().as_bytes());
        let decoded = decode_conversation(&element, origin, &TakeoutFiles::default(), &options).unwrap();
        assert_eq!(decoded.warnings.0.get("gemini_html_not_utf8"), Some(&1));
        let answers: Vec<&str> = decoded
            .conversation
            .messages
            .iter()
            .filter(|message| message.role == Role::Assistant)
            .map(|message| message.text.trim())
            .collect();
        assert_eq!(answers, ["The \u{fffd} answer", "Another"]);
    }
}
