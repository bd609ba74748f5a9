//! Claude's memory side files (provider-formats.md §2.3) turned into provider memories:
//! `memories.json` (an array of memory objects, or one bare object in 2026) and projects
//! (`projects.json` elements or `projects/<uuid>.json` files). The starter project every
//! account has ("How to use Claude") is skipped by its `is_starter_project` flag.

use serde_json::{Map, Value};

use crate::model::{Conversation, MemoryKind, MemoryRecord, Origin, Provider, Warnings};
use crate::sources::contract::{DecodeOptions, Decoded, Decoder, RecordReject};
use crate::timefmt::parse_rfc3339;

/// Decodes `memories.json` (the whole file is one element).
pub struct ClaudeMemoriesDecoder;

/// Decodes one project.
pub struct ClaudeProjectDecoder;

fn holder(id: String, origin: Origin, memories: Vec<MemoryRecord>) -> Conversation {
    Conversation::memories_only(Provider::Claude, id, origin, memories)
}

fn text_of<'a>(object: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    object.get(key).and_then(Value::as_str).map(str::trim).filter(|text| !text.is_empty())
}

impl Decoder for ClaudeMemoriesDecoder {
    fn decode(&self, bytes: &[u8], origin: Origin, options: &DecodeOptions) -> Result<Decoded, RecordReject> {
        let value: Value =
            serde_json::from_slice(bytes).map_err(|error| RecordReject::new(&origin, None, format!("invalid JSON: {error}")))?;
        let items: Vec<&Value> = match &value {
            Value::Array(items) => items.iter().collect(),
            Value::Object(_) => vec![&value],
            _ => return Err(RecordReject::new(&origin, None, "memories.json is neither an array nor an object".into())),
        };
        let mut warnings = Warnings::default();
        let mut memories = Vec::new();
        for item in items {
            // A memories file that did not sniff as one is read too (registry.rs); what in it
            // has neither of Claude's members is counted, not passed over.
            let Some(object) =
                item.as_object().filter(|object| object.contains_key("conversations_memory") || object.contains_key("project_memories"))
            else {
                warnings.add("claude_memory_unrecognized");
                continue;
            };
            if let Some(text) = text_of(object, "conversations_memory") {
                memories.push(MemoryRecord::new(Provider::Claude, MemoryKind::Fact, text.to_owned(), options.exported_at, Vec::new()));
            }
            match object.get("project_memories") {
                Some(Value::Object(projects)) => {
                    for (project, text) in projects {
                        if let Some(text) = text.as_str().map(str::trim).filter(|text| !text.is_empty()) {
                            let labels = vec![format!("project:{project}")];
                            memories.push(MemoryRecord::new(
                                Provider::Claude,
                                MemoryKind::Fact,
                                text.to_owned(),
                                options.exported_at,
                                labels,
                            ));
                        }
                    }
                }
                None | Some(Value::Null) => {}
                Some(_) => warnings.add("claude_project_memories_unreadable"),
            }
        }
        Ok(Decoded {
            conversation: holder("memories".into(), origin, memories),
            rejected_messages: Vec::new(),
            warnings,
            retractions: Vec::new(),
        })
    }
}

impl Decoder for ClaudeProjectDecoder {
    fn decode(&self, bytes: &[u8], origin: Origin, options: &DecodeOptions) -> Result<Decoded, RecordReject> {
        let value: Value =
            serde_json::from_slice(bytes).map_err(|error| RecordReject::new(&origin, None, format!("invalid JSON: {error}")))?;
        let Value::Object(project) = value else {
            return Err(RecordReject::new(&origin, None, "a project is not a JSON object".into()));
        };
        let Some(uuid) = text_of(&project, "uuid") else {
            return Err(RecordReject::new(&origin, None, "project has no `uuid`".into()));
        };
        let mut warnings = Warnings::default();
        let id = format!("project-{uuid}");
        if project.get("is_starter_project").and_then(Value::as_bool) == Some(true) {
            warnings.add("claude_starter_project_skipped");
            return Ok(Decoded {
                conversation: holder(id, origin, Vec::new()),
                rejected_messages: Vec::new(),
                warnings,
                retractions: Vec::new(),
            });
        }
        let created_at = text_of(&project, "created_at").and_then(parse_rfc3339).unwrap_or(options.exported_at);
        let project_label = format!("project:{uuid}");
        let name = text_of(&project, "name").unwrap_or("untitled project");
        let mut memories = Vec::new();
        if let Some(description) = text_of(&project, "description") {
            let text = format!("Project \"{name}\": {description}");
            memories.push(MemoryRecord::new(Provider::Claude, MemoryKind::ProjectKnowledge, text, created_at, vec![project_label.clone()]));
        }
        if let Some(prompt) = text_of(&project, "prompt_template") {
            memories.push(MemoryRecord::new(
                Provider::Claude,
                MemoryKind::ProjectInstruction,
                prompt.to_owned(),
                created_at,
                vec![project_label.clone()],
            ));
        }
        for doc in project.get("docs").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_object) {
            let Some(content) = text_of(doc, "content") else { continue };
            let filename = text_of(doc, "filename").unwrap_or("document");
            let doc_time = text_of(doc, "created_at").and_then(parse_rfc3339).unwrap_or(created_at);
            let labels = vec![project_label.clone(), format!("doc:{filename}")];
            memories.push(MemoryRecord::new(Provider::Claude, MemoryKind::ProjectKnowledge, content.to_owned(), doc_time, labels));
        }
        let mut conversation = holder(id, origin, memories);
        conversation.title = Some(name.to_owned());
        Ok(Decoded { conversation, rejected_messages: Vec::new(), warnings, retractions: Vec::new() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::contract::BranchPolicy;

    /// Guards the memories file read although it did not sniff as one: what holds none of
    /// Claude's memory members is counted as a warning, not dropped without a word.
    #[test]
    fn memories_of_no_known_shape_are_counted_not_dropped() {
        let options = DecodeOptions {
            branches: BranchPolicy::Active,
            exported_at: 0,
            keep_provider_fields: false,
            dedup_keys: false,
            pam_digests: false,
        };
        let origin = Origin { file: "memories.json".into(), offset: 0, index: 0 };
        let element = br#"[{"conversations_memory": "likes tea"}, {"note": "x"}, 7]"#;
        let decoded = ClaudeMemoriesDecoder.decode(element, origin.clone(), &options).unwrap();
        assert_eq!(decoded.conversation.memories.len(), 1);
        assert_eq!(decoded.warnings.0.get("claude_memory_unrecognized"), Some(&2));
        let truncated = ClaudeMemoriesDecoder.decode(br#"[{"conversations_memory": "abc"#, origin, &options).err();
        assert!(truncated.is_some_and(|reject| reject.reason.starts_with("invalid JSON: EOF")));
    }
}
