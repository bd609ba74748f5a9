//! `memport sync --status`: the run log and what the state holds per provider, read without
//! changing anything.

use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;

use super::state::{ProviderTotals, RunEntry, StateError};

/// What `--status` shows.
#[derive(Debug, Serialize)]
pub struct Status {
    /// The state file.
    pub state: String,
    /// Every run, oldest first.
    pub runs: Vec<RunSummary>,
    /// Per provider: live and retracted conversations, messages, the last run.
    pub providers: Vec<ProviderSummary>,
}

/// One run of the log.
#[derive(Debug, Serialize)]
pub struct RunSummary {
    /// The run id.
    pub run_id: String,
    /// Its export time.
    pub exported_at: String,
    /// `full` or `delta`.
    pub kind: &'static str,
    /// The run it applies to.
    pub base_run_id: Option<String>,
    /// Conversation counts (unchanged, changed, new, retracted).
    pub conversations: serde_json::Value,
    /// Extracted-memory counts (new, reinforced, superseded_earlier, retracted).
    pub memories: serde_json::Value,
    /// Inputs with their checksums.
    pub inputs: serde_json::Value,
}

/// One provider's totals.
#[derive(Debug, Serialize)]
pub struct ProviderSummary {
    /// The provider.
    pub provider: String,
    /// Conversations in its last complete export.
    pub live_conversations: u64,
    /// Conversations retracted.
    pub retracted_conversations: u64,
    /// Messages emitted.
    pub messages: u64,
    /// The last run that emitted or changed one of its conversations.
    pub last_run: Option<String>,
}

/// Reads the status of the state at `path` (a file, or a PostgreSQL URL with `tenant`'s rows).
///
/// # Errors
/// When the file is missing, not a memport state, or newer; when the server is unreachable.
pub fn read(path: &Path, tenant: &str) -> Result<Status, StateError> {
    let mut state = super::open_state(path, tenant, false)?;
    let runs = state.runs()?.into_iter().map(summarize_run).collect();
    let providers = state.provider_totals()?.into_iter().map(summarize_provider).collect();
    Ok(Status { state: path.display().to_string(), runs, providers })
}

fn summarize_run(run: RunEntry) -> RunSummary {
    let counts: serde_json::Value = serde_json::from_str(&run.counts_json).unwrap_or(serde_json::Value::Null);
    // Runs logged by schema version 1 kept only the conversation counts, at the top.
    let (conversations, memories) = match counts.get("conversations") {
        Some(conversations) => (conversations.clone(), counts.get("memories").cloned().unwrap_or(serde_json::Value::Null)),
        None => (counts, serde_json::Value::Null),
    };
    RunSummary {
        run_id: run.run_id,
        exported_at: run.exported_at,
        kind: if run.full { "full" } else { "delta" },
        base_run_id: run.base_run_id,
        conversations,
        memories,
        inputs: serde_json::from_str(&run.inputs_json).unwrap_or(serde_json::Value::Null),
    }
}

fn summarize_provider(totals: ProviderTotals) -> ProviderSummary {
    ProviderSummary {
        provider: totals.provider,
        live_conversations: totals.live,
        retracted_conversations: totals.retracted,
        messages: totals.messages,
        last_run: totals.last_run,
    }
}

impl Status {
    /// The status for people: one line per run, one per provider.
    pub fn to_text(&self) -> String {
        let mut text = String::new();
        let _ = writeln!(text, "state {}: {} runs", self.state, self.runs.len());
        for run in &self.runs {
            let count = |name: &str| run.conversations.get(name).and_then(serde_json::Value::as_u64).unwrap_or(0);
            let memories = |name: &str| run.memories.get(name).and_then(serde_json::Value::as_u64).unwrap_or(0);
            let _ = write!(
                text,
                "  {}  {}  {:<5}  new {}, changed {}, unchanged {}, retracted {}; memories new {}, reinforced {}",
                run.run_id,
                run.exported_at,
                run.kind,
                count("new"),
                count("changed"),
                count("unchanged"),
                count("retracted"),
                memories("new"),
                memories("reinforced")
            );
            // Said only by runs that withdrew something, so older runs' lines read as before.
            let (withdrawn, erased) = (count("messages_withdrawn"), memories("erased"));
            if withdrawn + erased > 0 {
                let _ = write!(text, "; withdrawn (erased in the store): {withdrawn} messages, {erased} memories");
            }
            text.push('\n');
        }
        if self.providers.is_empty() {
            let _ = writeln!(text, "no conversations recorded yet");
        }
        for provider in &self.providers {
            let _ = writeln!(
                text,
                "  {:<8} {} conversations ({} retracted), {} messages; last run {}",
                provider.provider,
                provider.live_conversations,
                provider.retracted_conversations,
                provider.messages,
                provider.last_run.as_deref().unwrap_or("-")
            );
        }
        text
    }
}
