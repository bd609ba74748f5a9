//! The sources registry: looks at an input once (a zip, a folder, a file, a delivery
//! manifest), tells which provider made it by content, and hands it to that provider's planner
//! (`<provider>::plan`) or to the reader of memport's own formats ([`formats`]).

use std::io::Read;
use std::path::Path;

use crate::error::{ConfigError, RunError};
use crate::model::{Provider, Warnings};
use crate::sources::container::{Container, Entry};
use crate::sources::contract::{Carried, InputPlan, SourceOptions};
use crate::sources::detect::{Sniffed, sniff};
use crate::sources::{chatgpt, claude, copilot, formats, gemini, grok, manifest};

/// How many bytes of a file are looked at to tell what it holds.
const SNIFF_BYTES: usize = 256 << 10;

/// Files never opened, not even to look at them: they hold only personal data
/// (provider-formats.md §6).
const PII_FILES: [&str; 6] =
    ["user.json", "users.json", "ads.json", "model_comparisons.json", "prod-mc-auth-mgmt-api.json", "prod-mc-billing.json"];

/// Whether an entry is worth looking into: text formats exports use, minus the PII files.
fn is_candidate(entry: &Entry) -> bool {
    let name = entry.base_name().to_ascii_lowercase();
    let text_format = [".json", ".csv", ".html", ".htm"].iter().any(|extension| name.ends_with(extension));
    text_format && !PII_FILES.contains(&name.as_str())
}

fn sniff_entry(entry: &Entry) -> Result<Sniffed, RunError> {
    let mut reader = entry.open()?.take(SNIFF_BYTES as u64);
    let mut prefix = Vec::with_capacity(SNIFF_BYTES);
    reader.read_to_end(&mut prefix).map_err(|error| RunError::read(entry.display.to_string(), error))?;
    Ok(sniff(&prefix))
}

fn provider_of(sniffed: Sniffed) -> Option<Provider> {
    match sniffed {
        Sniffed::ChatGptConversations => Some(Provider::ChatGpt),
        Sniffed::ClaudeConversations | Sniffed::ClaudeMemories | Sniffed::ClaudeProjects | Sniffed::ClaudeProject => Some(Provider::Claude),
        Sniffed::GrokBackend => Some(Provider::Grok),
        Sniffed::CopilotCsv(_) => Some(Provider::Copilot),
        Sniffed::GeminiActivityJson | Sniffed::GeminiActivityHtml => Some(Provider::Gemini),
        Sniffed::EmptyArray | Sniffed::Other => None,
    }
}

/// The files named `name` (Claude's `memories.json` or `projects.json`) that did not sniff as
/// what that name holds (cut short, not JSON, UTF-16), to be read anyway: the framer and the
/// decoder then reject them with what is wrong, where they were passed over without a word and
/// their memories lost unnoticed (and the run ended as if all was read). A UTF-16 one also gets
/// the warning `utf16_warning` and a note saying so, which the framer's "not a JSON value" would
/// not.
fn unread_claude_side_files(
    unrecognized: &[(Entry, bool)],
    name: &str,
    utf16_warning: &'static str,
    warnings: &mut Warnings,
    notes: &mut Vec<String>,
) -> Vec<Entry> {
    let mut files = Vec::new();
    for (entry, is_utf16) in unrecognized.iter().filter(|(entry, _)| entry.base_name().eq_ignore_ascii_case(name)) {
        if *is_utf16 {
            warnings.add(utf16_warning);
            notes.push(format!("{}: {}; its memories cannot be read", entry.display, crate::validate::input_file::UTF16_ADVICE));
        }
        files.push(entry.clone());
    }
    files
}

/// Looks at one input and plans how to read it.
///
/// # Errors
/// [`ConfigError`] when the path cannot be opened or holds no supported export; I/O errors.
pub fn plan_input(path: &Path, options: &SourceOptions) -> Result<InputPlan, RunError> {
    // A device or a pipe would be read forever (or block) by the first sniff below.
    crate::validate::input_file::check_regular_input(path)?;
    if let Some(plan) = formats::pam::plan_store(path)? {
        return Ok(plan);
    }
    // A file whose first MiB names PAM, AIME, MIF or UMP is read as that format before any
    // provider sniffing (a PAM conversation file would otherwise pass for a Claude manifest).
    // AIMEM's markers are plain member names, so AIMEM is only tried when no export is found.
    if formats::names_a_memory_format(path)
        && let Some(plan) = formats::plan_memory_format(path)?
    {
        return Ok(plan);
    }
    let mut manifest_notes: Vec<String> = Vec::new();
    let mut from_manifest = false;
    let mut container = Container::open(path)?;
    let mut bytes_on_disk = match &container {
        Container::Folder(_) => 0,
        _ => std::fs::metadata(path).map(|metadata| metadata.len()).unwrap_or(0),
    };
    let mut entries = container.entries()?;
    // A delivery manifest (Claude 2026) names the files to download; read those beside it.
    if let (Container::File(file), [entry]) = (&container, entries.as_slice())
        && matches!(sniff_entry(entry), Ok(Sniffed::Other))
        && let Some(listed) = manifest::listed_files(entry)
    {
        let folder = file.parent().filter(|parent| !parent.as_os_str().is_empty()).unwrap_or(Path::new(".")).to_owned();
        let beside = Container::Folder(folder.clone()).entries()?;
        let (present, missing) = manifest::select(&beside, &listed);
        if present.is_empty() {
            return Err(ConfigError::NotAnExport {
                path: path.to_owned(),
                reason: format!(
                    "is a download manifest listing {}, but none of them is in {}; download them next to it",
                    listed.join(", "),
                    folder.display()
                ),
            }
            .into());
        }
        container = Container::Folder(folder);
        entries = present;
        from_manifest = true;
        bytes_on_disk = 0;
        manifest_notes =
            missing.into_iter().map(|name| format!("{}: lists {name}, which is not beside it; it is not read", path.display())).collect();
    }
    let mut found: Vec<(Sniffed, Entry)> = Vec::new();
    let mut not_exports = Vec::new();
    let mut utf16_files = Vec::new();
    // Files that sniffed as nothing, and whether each is UTF-16: a provider's side file among
    // them (a Claude `memories.json` cut short) is still its provider's to report.
    let mut unrecognized: Vec<(Entry, bool)> = Vec::new();
    for entry in entries.iter().filter(|entry| matches!(container, Container::File(_)) || is_candidate(entry)) {
        match sniff_entry(entry)? {
            Sniffed::Other => {
                let is_utf16 = crate::sources::detect::entry_is_utf16(entry);
                if is_utf16 {
                    utf16_files.push(entry.display.to_string());
                }
                not_exports.push(entry.display.to_string());
                unrecognized.push((entry.clone(), is_utf16));
            }
            sniffed => found.push((sniffed, entry.clone())),
        }
    }
    let providers: std::collections::BTreeSet<Provider> = found.iter().filter_map(|(sniffed, _)| provider_of(*sniffed)).collect();
    if providers.len() > 1 {
        let names: Vec<&str> = providers.iter().map(|provider| provider.as_str()).collect();
        return Err(ConfigError::NotAnExport {
            path: path.to_owned(),
            reason: format!("holds exports of several providers ({}); give each export as its own input", names.join(", ")),
        }
        .into());
    }
    let container_kind = match &container {
        _ if from_manifest => "manifest of several downloads",
        Container::Zip(_) => "zip",
        Container::Folder(_) => "folder",
        Container::File(_) => "file",
    };
    let provider = match providers.first() {
        Some(provider) => *provider,
        // Only empty conversation arrays: an export without conversations.
        None if found.iter().any(|(_, entry)| entry.base_name().starts_with("conversations")) => Provider::ChatGpt,
        None => {
            if let Some(plan) = formats::plan_memory_format(path)? {
                return Ok(plan);
            }
            if let Some(format) = crate::spec::detect::memory_format_of(path) {
                return Err(ConfigError::NotAnExport {
                    path: path.to_owned(),
                    reason: format!(
                        "this looks like {format}, but memport found no records it can read in it (check it with `memport validate {}`)",
                        path.display()
                    ),
                }
                .into());
            }
            if let Some(file) = utf16_files.first() {
                return Err(ConfigError::NotAnExport {
                    path: path.to_owned(),
                    reason: format!("{file}: {}", crate::validate::input_file::UTF16_ADVICE),
                }
                .into());
            }
            let looked_at = if not_exports.is_empty() {
                "no .json, .csv or .html file".to_owned()
            } else {
                format!("looked at {}", not_exports.iter().take(5).cloned().collect::<Vec<_>>().join(", "))
            };
            return Err(ConfigError::NotAnExport {
                path: path.to_owned(),
                reason: format!(
                    "no ChatGPT, Claude, Grok, Copilot or Gemini export found ({looked_at}); give the export zip, its unzipped folder, or its main file"
                ),
            }
            .into());
        }
    };
    let of = |wanted: fn(Sniffed) -> bool| -> Vec<Entry> {
        found.iter().filter(|(sniffed, _)| wanted(*sniffed)).map(|(_, entry)| entry.clone()).collect()
    };
    let empty_conversation_files: Vec<Entry> =
        of(|sniffed| sniffed == Sniffed::EmptyArray).into_iter().filter(|entry| entry.base_name().starts_with("conversations")).collect();
    let mut plan = InputPlan {
        path: path.display().to_string(),
        provider,
        format: None,
        carried: Carried::default(),
        layout: String::new(),
        bytes_on_disk,
        streams: Vec::new(),
        warnings: Warnings::default(),
        notes: Vec::new(),
        asset_count: 0,
    };
    for note in manifest_notes {
        plan.warnings.add("manifest_file_missing");
        plan.notes.push(note);
    }
    match provider {
        Provider::ChatGpt => {
            let mut conversation_files = of(|sniffed| sniffed == Sniffed::ChatGptConversations);
            conversation_files.extend(empty_conversation_files);
            chatgpt::plan(&mut plan, &container, &entries, conversation_files);
        }
        Provider::Claude => {
            let mut conversation_files = of(|sniffed| sniffed == Sniffed::ClaudeConversations);
            conversation_files.extend(empty_conversation_files);
            let mut memory_files = of(|sniffed| sniffed == Sniffed::ClaudeMemories);
            memory_files.extend(unread_claude_side_files(
                &unrecognized,
                claude::MEMORIES_FILE,
                "claude_memories_utf16",
                &mut plan.warnings,
                &mut plan.notes,
            ));
            let mut project_lists = of(|sniffed| sniffed == Sniffed::ClaudeProjects);
            project_lists.extend(unread_claude_side_files(
                &unrecognized,
                claude::PROJECTS_FILE,
                "claude_projects_utf16",
                &mut plan.warnings,
                &mut plan.notes,
            ));
            let side_files =
                claude::SideFiles { project_lists, project_files: of(|sniffed| sniffed == Sniffed::ClaudeProject), memory_files };
            claude::plan(&mut plan, container_kind, conversation_files, side_files);
        }
        Provider::Grok => grok::plan(&mut plan, container_kind, &entries, of(|sniffed| sniffed == Sniffed::GrokBackend)),
        Provider::Copilot => {
            let csv_files = found
                .iter()
                .filter_map(|(sniffed, entry)| match sniffed {
                    Sniffed::CopilotCsv(layout) => Some((*layout, entry.clone())),
                    _ => None,
                })
                .collect();
            copilot::plan(&mut plan, container_kind, csv_files, options);
        }
        // Sniffing names memport's own providers only; other platforms come from memory-format
        // inputs, planned above.
        Provider::Other(_) => {}
        Provider::Gemini => {
            let json_files = of(|sniffed| sniffed == Sniffed::GeminiActivityJson);
            let html_files = of(|sniffed| sniffed == Sniffed::GeminiActivityHtml);
            gemini::plan(&mut plan, path, container_kind, &entries, json_files, html_files, options);
        }
    }
    if plan.bytes_on_disk == 0 {
        plan.bytes_on_disk = plan.streams.iter().map(|stream| stream.entry.size).sum();
    }
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLAUDE_CONVERSATIONS: &str = r#"[{"uuid":"k1","name":"chat","chat_messages":[{"uuid":"q","sender":"human","text":"hi"}]}]"#;

    fn planned_names(plan: &InputPlan) -> Vec<String> {
        plan.streams.iter().map(|stream| stream.entry.base_name().to_owned()).collect()
    }

    /// Guards Claude's memories file: one cut short does not sniff as memories and was passed
    /// over without a word, its memories lost unnoticed. It is planned, so reading it reports
    /// what is wrong; a UTF-16 one gets a note that says so.
    #[test]
    fn a_broken_claude_memories_or_projects_file_is_read_and_reported_not_passed_over() {
        let folder = tempfile::tempdir().unwrap();
        std::fs::write(folder.path().join("conversations.json"), CLAUDE_CONVERSATIONS).unwrap();
        std::fs::write(folder.path().join("memories.json"), br#"[{"conversations_memory": "abc"#).unwrap();
        let plan = plan_input(folder.path(), &SourceOptions::default()).unwrap();
        assert_eq!(plan.provider, Provider::Claude);
        assert_eq!(planned_names(&plan), ["conversations.json", "memories.json"]);
        assert!(plan.layout.ends_with("1 conversations file, memories.json"), "{}", plan.layout);
        assert!(plan.notes.is_empty(), "{:?}", plan.notes);

        let utf16: Vec<u8> = "\u{feff}[{\"conversations_memory\": \"abc\"}]".encode_utf16().flat_map(u16::to_le_bytes).collect();
        std::fs::write(folder.path().join("memories.json"), utf16).unwrap();
        let plan = plan_input(folder.path(), &SourceOptions::default()).unwrap();
        assert_eq!(planned_names(&plan), ["conversations.json", "memories.json"]);
        assert_eq!(plan.warnings.0.get("claude_memories_utf16"), Some(&1));
        assert!(plan.notes.iter().any(|note| note.contains("memories.json: this file is UTF-16")), "{:?}", plan.notes);

        // So is a broken list of projects.
        std::fs::remove_file(folder.path().join("memories.json")).unwrap();
        std::fs::write(folder.path().join("projects.json"), b"[{\"uuid\": \"p1\", \"name\": \"bro").unwrap();
        let plan = plan_input(folder.path(), &SourceOptions::default()).unwrap();
        assert_eq!(planned_names(&plan), ["conversations.json", "projects.json"]);
        let utf16: Vec<u8> = "\u{feff}[{\"uuid\": \"p1\"}]".encode_utf16().flat_map(u16::to_le_bytes).collect();
        std::fs::write(folder.path().join("projects.json"), utf16).unwrap();
        let plan = plan_input(folder.path(), &SourceOptions::default()).unwrap();
        assert_eq!(plan.warnings.0.get("claude_projects_utf16"), Some(&1));

        // Another file that is not an export stays unread.
        std::fs::remove_file(folder.path().join("projects.json")).unwrap();
        std::fs::write(folder.path().join("notes.json"), b"{\"x\":").unwrap();
        let plan = plan_input(folder.path(), &SourceOptions::default()).unwrap();
        assert_eq!(planned_names(&plan), ["conversations.json"]);
    }
}
