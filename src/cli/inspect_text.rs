//! What `inspect` prints: each input's provider, layout, files and record counts, and with
//! `--memories` the memories extraction would write, as text for people or as JSON.

use std::fmt::Write;

use serde_json::{Value, json};

use crate::pipeline::inspect::Inspection;
use crate::pipeline::memories_preview::MemoriesPreview;
use crate::timefmt::format_rfc3339;

/// Longest statement shown in the text preview, in characters.
const SHOWN_STATEMENT_CHARS: usize = 100;

/// The inspections as JSON: one object per input (its summary, counts, warnings and notes).
pub fn inspections_json(inspections: &[Inspection]) -> Value {
    inspections
        .iter()
        .map(|inspection| {
            json!({"inputs": [inspection.input], "counts": inspection.counts, "warnings": inspection.warnings.0, "notes": inspection.notes})
        })
        .collect()
}

/// The inspections as text: a block per input.
pub fn inspections_text(inspections: &[Inspection]) -> String {
    let mut text = String::new();
    for inspection in inspections {
        let input = &inspection.input;
        let _ = writeln!(
            text,
            "{}\n  provider: {}\n  layout:   {}\n  size:     {} bytes",
            input.path, input.provider, input.layout, input.bytes
        );
        for file in &input.files {
            let _ = writeln!(text, "  reads:    {file}");
        }
        let counts = &inspection.counts;
        let _ = writeln!(
            text,
            "  records:  {} conversations ({} unreadable), {} messages ({} unreadable), {} provider memories",
            counts.conversations_read, counts.conversations_rejected, counts.messages_read, counts.messages_rejected, counts.memories_read
        );
        let skipped = counts.messages_skipped.iter().map(|(reason, count)| format!("{reason} {count}")).collect::<Vec<_>>().join(", ");
        let _ = writeln!(text, "  by policy (all branches, no dedup): {skipped}");
        for (warning, count) in &inspection.warnings.0 {
            let _ = writeln!(text, "  warning:  {warning} x{count}");
        }
        for note in &inspection.notes {
            let _ = writeln!(text, "  note:     {note}");
        }
    }
    text
}

/// The memories preview as JSON: the counts and every extracted memory with its evidence.
pub fn memories_json(preview: &MemoriesPreview) -> Value {
    let memories: Vec<Value> = preview
        .memories
        .iter()
        .filter_map(|memory| memory.extracted.as_deref().map(|extracted| (memory, extracted)))
        .map(|(memory, extracted)| {
            json!({
                "id": memory.id,
                "type": extracted.memory_type.as_str(),
                "slot": extracted.slot,
                "value": extracted.value,
                "statement": memory.text,
                "language": extracted.language,
                "confidence": (f64::from(extracted.confidence) * 100.0).round() / 100.0,
                "first_seen": format_rfc3339(extracted.first_seen),
                "last_seen": format_rfc3339(extracted.last_seen),
                "evidence": extracted.evidence.iter().map(|evidence| json!({
                    "provider": evidence.provider.as_str(),
                    "conversation_id": evidence.conversation_id,
                    "message_id": evidence.message_id,
                    "span": [evidence.span.0, evidence.span.1],
                })).collect::<Vec<_>>(),
                "supersedes": extracted.supersedes,
                "superseded_by": extracted.superseded_by,
                "entities": extracted.entities.iter().map(|entity| json!({"name": entity.name, "kind": entity.kind.as_str()})).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({
        "conversations": preview.conversations,
        "unreadable": preview.unreadable,
        "counts": preview.counts,
        "memories": memories,
    })
}

/// The memories preview as text: a line per memory (type, times said, confidence,
/// statement), then what became of every candidate.
pub fn memories_text(preview: &MemoriesPreview) -> String {
    let mut text = String::new();
    let _ = writeln!(text, "{:<12}  {:>4}  {:>5}  statement", "type", "said", "conf");
    for memory in &preview.memories {
        let Some(extracted) = memory.extracted.as_deref() else { continue };
        let note = if extracted.superseded_by.is_some() { "  (no longer current)" } else { "" };
        let statement: String = memory.text.chars().take(SHOWN_STATEMENT_CHARS).collect();
        let _ = writeln!(
            text,
            "{:<12}  {:>4}  {:>5.2}  {statement}{note}",
            extracted.memory_type.as_str(),
            extracted.evidence_count,
            extracted.confidence
        );
    }
    let counts = &preview.counts;
    let _ = writeln!(
        text,
        "{} memories ({} no longer current) from {} conversations ({} unreadable); of {} candidates, {} were said again, \
         {} held a secret, {} were below the confidence floor, {} were contact details and {} came from repeated messages. \
         Nothing was written.",
        counts.written + counts.superseded_kept,
        counts.superseded_kept,
        preview.conversations,
        preview.unreadable,
        counts.candidates,
        counts.merged,
        counts.dropped_secret,
        counts.dropped_low_confidence,
        counts.dropped_personal,
        counts.dropped_unwritten_message,
    );
    text
}
