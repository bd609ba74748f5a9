//! What `convert`, `run`, `sync` and `merge` tell the user on stderr when they finish: the
//! counts of the run report in a few lines, each starting `memport: `.

use std::fmt::Write;

use crate::pipeline::report::RunReport;
use crate::sync::SyncReport;
use crate::sync::merge::MergeReport;

/// `reason count` pairs, comma-separated.
fn listed<'a, K: std::fmt::Display + 'a>(counts: impl IntoIterator<Item = (K, &'a u64)>) -> String {
    counts.into_iter().map(|(reason, count)| format!("{reason} {count}")).collect::<Vec<_>>().join(", ")
}

/// The lines that close a conversion: what was read, written, merged, dropped and masked, the
/// outputs, the notes, and where the rejects are.
pub fn run_summary(report: &RunReport) -> String {
    let mut text = String::new();
    let counts = &report.counts;
    let skipped: u64 = counts.messages_skipped.values().sum();
    let _ = writeln!(
        text,
        "memport: {} conversations ({} rejected), {} messages: {} written, {} duplicate, {} skipped ({}), {} rejected in {:.2}s",
        counts.conversations_read,
        counts.conversations_rejected,
        counts.messages_read,
        counts.messages_written,
        counts.messages_duplicate,
        skipped,
        listed(&counts.messages_skipped),
        counts.messages_rejected,
        report.elapsed_seconds,
    );
    if counts.memories_read > 0 {
        let _ = writeln!(
            text,
            "memport: {} provider memories: {} written, {} repeated (same kind and text as an earlier one){}",
            counts.memories_read,
            counts.memories_written,
            counts.memories_duplicate,
            left_out(counts)
        );
    }
    if counts.retractions_carried > 0 {
        let _ = writeln!(
            text,
            "memport: {} conversations the inputs list as retracted by a sync, written to every output as retractions",
            counts.retractions_carried
        );
    }
    if let Some(memories) = &report.memories_extracted {
        let _ = writeln!(
            text,
            "memport: {} memories extracted ({} current, {} superseded and kept) from {} candidates: {} merged as more evidence, {} already in the input, {} dropped (secret {}, low confidence {}, contact details {}, repeated messages {}, erased in the store {})",
            memories.written + memories.superseded_kept,
            memories.written,
            memories.superseded_kept,
            memories.candidates,
            memories.merged,
            memories.already_in_input,
            memories.dropped_secret
                + memories.dropped_low_confidence
                + memories.dropped_personal
                + memories.dropped_unwritten_message
                + memories.dropped_erased,
            memories.dropped_secret,
            memories.dropped_low_confidence,
            memories.dropped_personal,
            memories.dropped_unwritten_message,
            memories.dropped_erased,
        );
    }
    let redacted: u64 = report.secrets_redacted.values().sum();
    if redacted > 0 {
        let _ = writeln!(text, "memport: {redacted} secrets masked in transcripts ({})", listed(&report.secrets_redacted));
    }
    for output in &report.outputs {
        let _ = writeln!(text, "memport: wrote {} ({}, {} records, {} bytes)", output.path, output.format, output.records, output.bytes);
    }
    for note in &report.notes {
        let _ = writeln!(text, "memport: note: {note}");
    }
    if report.rejects > 0 {
        let _ = writeln!(text, "memport: {} records were rejected; --rejects FILE lists where and why", report.rejects);
    }
    text
}

/// The lines that open a sync's summary: full or delta, and what happened to the
/// conversations; [`run_summary`] of its run follows.
pub fn sync_summary(report: &SyncReport) -> String {
    let mut text = String::new();
    let conversations = &report.conversations;
    let _ = match &report.full_because {
        Some(reason) => writeln!(text, "memport: sync {}: full run ({reason})", report.run_id),
        None => writeln!(
            text,
            "memport: sync {}: delta since {} (run {})",
            report.run_id,
            report.since.as_deref().unwrap_or("-"),
            report.base_run_id.as_deref().unwrap_or("-")
        ),
    };
    let _ = writeln!(
        text,
        "memport: conversations: {} new, {} changed, {} changed with nothing new, {} unchanged, {} retracted",
        conversations.new, conversations.changed, conversations.changed_nothing_new, conversations.unchanged, conversations.retracted
    );
    if report.memories.erased > 0 {
        let _ = writeln!(
            text,
            "memport: {} memories written by earlier runs were erased in the store since: withdrawn in this run's outputs, without their words",
            report.memories.erased
        );
    }
    if conversations.messages_withdrawn > 0 {
        let _ = writeln!(
            text,
            "memport: {} messages written by earlier runs were erased in the store since: withdrawn in this run's outputs",
            conversations.messages_withdrawn
        );
    }
    for reason in &report.no_retractions_because {
        let _ = writeln!(text, "memport: no retractions for {reason}");
    }
    for removed in &report.removed_leftovers {
        let _ = writeln!(text, "memport: removed {removed}, left by a sync that stopped before it finished");
    }
    text
}

/// What a merge did: the stores, the memories and conversations upserted, and what the next
/// delta applies to.
pub fn merge_summary(report: &MergeReport) -> String {
    let mut text = String::new();
    let (memories, conversations) = (&report.memories, &report.conversations);
    let _ = writeln!(
        text,
        "memport: merged {} (export {}) into {} (export {})",
        report.delta, report.delta_export_id, report.base, report.base_export_id
    );
    let _ = writeln!(
        text,
        "memport: memories: {} ({} new, {} updated, {} retracted, {} superseded); {} relations",
        memories.total, memories.inserted, memories.updated, memories.retracted, memories.superseded, report.relations
    );
    let _ = writeln!(
        text,
        "memport: conversations: {} ({} new, {} updated, {} retracted, {} files copied unchanged); messages: {} replaced, {} appended, {} withdrawn",
        conversations.total,
        conversations.inserted,
        conversations.updated,
        conversations.retracted,
        conversations.copied,
        conversations.messages_replaced,
        conversations.messages_appended,
        conversations.messages_withdrawn
    );
    for warning in &report.warnings {
        let _ = writeln!(text, "memport: warning: {warning}");
    }
    let _ = writeln!(text, "memport: wrote {} (export {}): the next delta applies to it", report.output, report.merged_export_id);
    text
}

/// The memories a run left out besides repeats, in words (empty when there are none).
fn left_out(counts: &crate::pipeline::report::Counts) -> String {
    let mut text = String::new();
    for (count, why) in [
        (counts.memories_not_exportable, "marked as not for export"),
        (counts.memories_erased, "erased in the store"),
        (counts.memories_retracted, "retracted in the input (written again, marked so)"),
    ] {
        if count > 0 {
            let _ = write!(text, ", {count} {why}");
        }
    }
    text
}
