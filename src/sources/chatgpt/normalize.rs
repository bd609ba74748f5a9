//! Decodes one ChatGPT conversation element into the canonical model: walks the `mapping` tree
//! without recursion, picks the active thread, classifies every message (hidden, off-branch,
//! empty, kept) and renders content.

use rustc_hash::FxHashMap;

use crate::hash::ContentKey;
use crate::model::{
    Conversation, Disposition, MemoryKind, MemoryRecord, Message, Micros, Origin, Part, Provider, Role, SkipReason, Warnings,
};
use crate::sources::chatgpt::assets::AssetIndex;
use crate::sources::chatgpt::raw::{RawConversation, RawMessage, RawNode};
use crate::sources::chatgpt::render::{parts_to_text, render, resolve_citation_markers};
use crate::sources::contract::{BranchPolicy, DecodeOptions, Decoded, RecordReject};
use crate::sources::lenient::Object;
use crate::timefmt::micros_from_epoch_seconds;

/// Decodes one element. `Err` rejects the whole conversation; message-level problems are in
/// [`Decoded::rejected_messages`].
pub fn decode_conversation(bytes: &[u8], origin: Origin, assets: &AssetIndex, options: &DecodeOptions) -> Result<Decoded, RecordReject> {
    let mut warnings = Warnings::default();
    let repaired;
    let mut source_bytes = bytes;
    // sonic-rs: the fastest of the three parsers measured (docs/design-decisions.md).
    let raw: RawConversation = match sonic_rs::from_slice(bytes) {
        Ok(raw) => raw,
        Err(error) if has_surrogate_escape(bytes) => {
            // Python can write lone surrogate escapes (a cut emoji); serde_json refuses them.
            // Replace them with U+FFFD instead of losing the conversation.
            repaired = replace_lone_surrogates(bytes);
            if repaired == bytes {
                return Err(reject(&origin, None, format!("invalid JSON: {error}")));
            }
            warnings.add("lone_surrogate_replaced");
            source_bytes = &repaired;
            sonic_rs::from_slice(source_bytes).map_err(|error| reject(&origin, None, format!("invalid JSON: {error}")))?
        }
        Err(error) => return Err(reject(&origin, None, format!("invalid JSON: {error}"))),
    };
    let Some(id) = raw.id.as_deref().or(raw.conversation_id.as_deref()).filter(|id| !id.is_empty()) else {
        return Err(reject(&origin, None, "conversation has no `id` or `conversation_id`".into()));
    };
    let Some(mapping) = raw.mapping.as_ref() else {
        return Err(reject(&origin, Some(id), "conversation has no `mapping` object".into()));
    };
    let tree = Tree::build(&mapping.0, &mut warnings);
    let mut rejected_messages = Vec::new();
    for key in &tree.dropped_duplicates {
        rejected_messages
            .push(reject(&origin, Some(id), format!("node `{key}` appears twice in `mapping`; the first one is used")).with_message(key));
    }
    let active_leaf = tree.active_leaf(raw.current_node.as_deref(), &mut warnings);
    let on_active_path = tree.path_to_root(active_leaf);
    let conversation_time = raw.create_time.and_then(micros_from_epoch_seconds);
    let fallback_time = conversation_time.or(raw.update_time.and_then(micros_from_epoch_seconds)).unwrap_or(options.exported_at);

    let mut conversation = Conversation {
        provider: Provider::ChatGpt,
        id: id.to_owned(),
        title: raw.title.as_deref().map(str::to_owned),
        created_at: conversation_time,
        updated_at: raw.update_time.and_then(micros_from_epoch_seconds),
        model: raw.default_model_slug.as_deref().map(str::to_owned),
        system_instruction: None,
        is_archived: raw.is_archived.unwrap_or(false),
        messages: Vec::new(),
        memories: Vec::new(),
        memories_only: false,
        is_repeat: false,
        assumed_time_zone: None,
        origin,
    };
    let mut contexts: Vec<(MemoryKind, String)> = Vec::new();
    // Time and message id of each node's nearest message ancestor-or-self, filled in tree order.
    let mut inherited_time: Vec<Option<Micros>> = vec![None; tree.nodes.len()];
    let mut nearest_message: Vec<Option<usize>> = vec![None; tree.nodes.len()];
    let mut unknown_type_messages: Vec<usize> = Vec::new();

    for &node_index in &tree.order {
        let node = &tree.nodes[node_index];
        let parent_time = node.parent.and_then(|parent| inherited_time[parent]);
        let parent_message = node.parent.and_then(|parent| nearest_message[parent]);
        inherited_time[node_index] = parent_time;
        nearest_message[node_index] = parent_message;
        let message = match &node.raw.message {
            Object::Absent | Object::Null => continue,
            Object::Invalid => {
                rejected_messages.push(
                    reject(&conversation.origin, Some(id), format!("node `{}`: `message` is not an object", node.key))
                        .with_message(node.key),
                );
                continue;
            }
            Object::Present(message) => message,
        };
        let Some(role_name) = message.author.as_ref().and_then(|author| author.role.as_deref()) else {
            rejected_messages.push(
                reject(&conversation.origin, Some(id), format!("node `{}`: message has no `author.role`", node.key)).with_message(node.key),
            );
            continue;
        };
        let Some(content) = message.content.as_ref() else {
            rejected_messages.push(
                reject(&conversation.origin, Some(id), format!("node `{}`: message has no `content` object", node.key))
                    .with_message(node.key),
            );
            continue;
        };
        let Some(content_type) = content.content_type.as_deref() else {
            rejected_messages.push(
                reject(&conversation.origin, Some(id), format!("node `{}`: content has no `content_type`", node.key))
                    .with_message(node.key),
            );
            continue;
        };
        let own_time = message.create_time.and_then(micros_from_epoch_seconds);
        let created_at = own_time.or(parent_time).unwrap_or(fallback_time);
        inherited_time[node_index] = Some(created_at);
        let message_position = conversation.messages.len();
        nearest_message[node_index] = Some(message_position);

        let (role, author_name) = normalize_role(role_name, message, &mut warnings);
        let rendered = render(content_type, content, assets, &mut warnings);
        let metadata = message.metadata.as_ref();
        let references: Vec<_> = metadata
            .and_then(|metadata| metadata.content_references.as_ref())
            .map(|list| list.0.iter().filter_map(Object::as_ref).collect())
            .unwrap_or_default();
        let mut parts = rendered.parts;
        if let Some(unknown) = &rendered.unknown_type {
            // Kept whole: the raw JSON is filled in below from the element.
            parts.push(Part::Raw { content_type: unknown.clone(), json: String::new() });
            unknown_type_messages.push(message_position);
        }
        for part in &mut parts {
            if let Part::Text(text) = part
                && let Some(resolved) = resolve_citation_markers(text, &references)
            {
                *text = resolved;
            }
        }
        // A 2024+ context message carries the same instructions twice: rendered in its content
        // (preferred) and in the 2023 `user_context_message_data`; read the metadata only alone.
        let has_rendered_context = !rendered.contexts.is_empty();
        contexts.extend(rendered.contexts);
        if !has_rendered_context && let Some(user_context) = metadata.and_then(|metadata| metadata.user_context_message_data.as_ref()) {
            for (kind, text) in [
                (MemoryKind::Preference, user_context.about_model_message.as_deref()),
                (MemoryKind::Identity, user_context.about_user_message.as_deref()),
            ] {
                if let Some(text) = text.map(str::trim).filter(|text| !text.is_empty()) {
                    contexts.push((kind, text.to_owned()));
                }
            }
        }
        let hidden = is_hidden(content_type, role, message);
        let on_active_branch = on_active_path[node_index];
        let text = match parts.as_mut_slice() {
            [Part::Text(only)] => {
                let text = std::mem::take(only);
                parts.clear();
                text
            }
            _ => parts_to_text(&parts),
        };
        let disposition = if options.branches == BranchPolicy::Active && !on_active_branch {
            Disposition::Skip(SkipReason::OffBranch)
        } else if hidden {
            Disposition::Skip(SkipReason::Hidden)
        } else if text.trim().is_empty() {
            Disposition::Skip(SkipReason::Empty)
        } else {
            Disposition::Keep
        };
        let status = message.status.as_deref().filter(|status| *status != "finished_successfully").map(str::to_owned);
        if status.as_deref() == Some("in_progress") {
            warnings.add("in_progress_message");
        }
        if own_time.is_none() && disposition == Disposition::Keep {
            warnings.add("message_time_inferred");
        }
        conversation.messages.push(Message {
            id: node.key.to_owned(),
            parent_id: parent_message.map(|position| conversation.messages[position].id.clone()),
            role,
            author_name,
            created_at,
            time_known: own_time.is_some(),
            parts,
            text,
            is_thought: rendered.is_thought,
            provider_fields: None,
            model: metadata.and_then(|metadata| metadata.model_slug.as_deref()).map(str::to_owned),
            status,
            on_active_branch,
            content_key: ContentKey::default(),
            disposition,
            discloses: false,
        });
    }
    if !unknown_type_messages.is_empty() {
        fill_raw_parts(source_bytes, &mut conversation, &unknown_type_messages);
    }
    for message in &mut conversation.messages {
        if message.disposition == Disposition::Keep {
            message.content_key = options.content_key(&message.text);
        }
    }
    if !contexts.is_empty() {
        let mut seen = rustc_hash::FxHashSet::default();
        contexts.retain(|context| seen.insert(context.clone()));
        conversation.system_instruction = Some(contexts.iter().map(|(_, text)| text.as_str()).collect::<Vec<_>>().join("\n\n"));
        let created_at = conversation.created_at.unwrap_or(fallback_time);
        for (kind, text) in contexts {
            conversation.memories.push(MemoryRecord::new(Provider::ChatGpt, kind, text, created_at, Vec::new()));
        }
    }
    Ok(Decoded { conversation, rejected_messages, warnings, retractions: Vec::new() })
}

fn reject(origin: &Origin, conversation_id: Option<&str>, reason: String) -> RecordReject {
    RecordReject::new(origin, conversation_id, reason)
}

/// Plumbing the UI never shows (provider-formats.md §1.10.4).
fn is_hidden(content_type: &str, role: Role, message: &RawMessage) -> bool {
    let metadata = message.metadata.as_ref();
    let flagged = |flag: Option<bool>| flag == Some(true);
    matches!(content_type, "user_editable_context" | "model_editable_context")
        || metadata
            .is_some_and(|metadata| flagged(metadata.is_visually_hidden_from_conversation) || flagged(metadata.is_user_system_message))
        || (role == Role::System && message.weight == Some(0.0))
}

fn normalize_role(role: &str, message: &RawMessage, warnings: &mut Warnings) -> (Role, Option<String>) {
    let author_name = message.author.as_ref().and_then(|author| author.name.as_deref()).map(str::to_owned);
    match role {
        "user" => (Role::User, author_name),
        "assistant" => (Role::Assistant, author_name),
        "system" => (Role::System, author_name),
        "tool" => (Role::Tool, author_name),
        other => {
            // Unknown roles are neither the person nor the model's answer: keep them as tool
            // traffic, with the provider's role name so nothing is lost.
            warnings.add(format!("unknown_role:{other}"));
            (Role::Tool, Some(author_name.unwrap_or_else(|| other.to_owned())))
        }
    }
}

/// The `mapping` as an index-based tree, with a traversal order that needs no recursion.
struct Tree<'m, 'a> {
    nodes: Vec<TreeNode<'m, 'a>>,
    /// Keys seen a second time whose node carries a message (reported as rejected messages).
    dropped_duplicates: Vec<&'m str>,
    /// Pre-order: roots in mapping order, children in creation order.
    order: Vec<usize>,
}

struct TreeNode<'m, 'a> {
    key: &'m str,
    raw: &'m RawNode<'a>,
    parent: Option<usize>,
    children: Vec<usize>,
}

static EMPTY_NODE: RawNode<'static> = RawNode { message: Object::Absent, parent: None, children: None };

impl<'m, 'a> Tree<'m, 'a> {
    fn build(mapping: &'m [(std::borrow::Cow<'a, str>, Object<RawNode<'a>>)], warnings: &mut Warnings) -> Self {
        let mut index_of: FxHashMap<&str, usize> = FxHashMap::with_capacity_and_hasher(mapping.len(), Default::default());
        let mut nodes: Vec<TreeNode> = Vec::with_capacity(mapping.len());
        let mut dropped_duplicates = Vec::new();
        for (key, node) in mapping {
            if index_of.contains_key(key.as_ref()) {
                warnings.add("duplicate_node_id");
                if node.as_ref().is_some_and(|node| !matches!(node.message, Object::Absent | Object::Null)) {
                    dropped_duplicates.push(key.as_ref());
                }
                continue;
            }
            let raw = match node {
                Object::Present(raw) => raw,
                _ => {
                    warnings.add("node_not_an_object");
                    &EMPTY_NODE
                }
            };
            index_of.insert(key.as_ref(), nodes.len());
            nodes.push(TreeNode { key: key.as_ref(), raw, parent: None, children: Vec::new() });
        }
        for (position, node) in nodes.iter_mut().enumerate() {
            let parent_key = node.raw.parent.as_deref();
            let parent = parent_key.and_then(|key| index_of.get(key).copied()).filter(|&parent| parent != position);
            if parent_key.is_some() && parent.is_none() {
                warnings.add("orphan_node");
            }
            node.parent = parent;
        }
        // Children in the order the parent lists them, then any others in mapping order
        // (2026 shards have no `children` arrays at all).
        let mut listed_position: Vec<usize> = vec![usize::MAX; nodes.len()];
        for node in &nodes {
            if let Some(children) = &node.raw.children {
                for (position, child) in children.0.iter().enumerate() {
                    if let Some(&child_index) = child.0.as_deref().and_then(|key| index_of.get(key)) {
                        listed_position[child_index] = listed_position[child_index].min(position);
                    }
                }
            }
        }
        for position in 0..nodes.len() {
            if let Some(parent) = nodes[position].parent {
                nodes[parent].children.push(position);
            }
        }
        for node in &mut nodes {
            node.children.sort_by_key(|&child| (listed_position[child], child));
        }
        let order = preorder(&nodes);
        Tree { nodes, dropped_duplicates, order }
    }

    /// `current_node` when it is in the mapping; otherwise the newest leaf, or, in a mapping
    /// whose every node has a child (a damaged one, its parents in a cycle), the newest node.
    fn active_leaf(&self, current_node: Option<&str>, warnings: &mut Warnings) -> Option<usize> {
        if let Some(current) = current_node
            && let Some(position) = self.nodes.iter().position(|node| node.key == current)
        {
            return Some(position);
        }
        if !self.nodes.is_empty() {
            warnings.add("current_node_missing");
        }
        // With no leaf, no node would be on the active path and every message would be skipped
        // as off it; the newest node's thread is kept instead.
        self.newest(|node| node.children.is_empty()).or_else(|| self.newest(|_| true))
    }

    /// The node with the newest message among those `eligible` allows (the first on ties).
    fn newest(&self, eligible: impl Fn(&TreeNode) -> bool) -> Option<usize> {
        let mut best: Option<(usize, f64)> = None;
        for (position, node) in self.nodes.iter().enumerate() {
            if !eligible(node) {
                continue;
            }
            let time = node.raw.message.as_ref().and_then(|message| message.create_time).unwrap_or(f64::NEG_INFINITY);
            if best.is_none_or(|(_, best_time)| time > best_time) {
                best = Some((position, time));
            }
        }
        best.map(|(position, _)| position)
    }

    /// Marks the nodes from `leaf` up to its root (cycle-safe).
    fn path_to_root(&self, leaf: Option<usize>) -> Vec<bool> {
        let mut on_path = vec![false; self.nodes.len()];
        let mut cursor = leaf;
        while let Some(position) = cursor {
            if on_path[position] {
                break;
            }
            on_path[position] = true;
            cursor = self.nodes[position].parent;
        }
        on_path
    }
}

/// Pre-order with an explicit stack, so threads thousands of levels deep cannot overflow it.
/// Nodes caught in parent cycles (no root above them) come last, in mapping order.
fn preorder(nodes: &[TreeNode]) -> Vec<usize> {
    let mut order = Vec::with_capacity(nodes.len());
    let mut visited = vec![false; nodes.len()];
    let mut stack: Vec<usize> = Vec::new();
    let roots = (0..nodes.len()).filter(|&position| nodes[position].parent.is_none());
    let everything = 0..nodes.len();
    for start in roots.chain(everything) {
        if visited[start] {
            continue;
        }
        stack.push(start);
        while let Some(position) = stack.pop() {
            if visited[position] {
                continue;
            }
            visited[position] = true;
            order.push(position);
            for &child in nodes[position].children.iter().rev() {
                if !visited[child] {
                    stack.push(child);
                }
            }
        }
    }
    order
}

/// Fills the raw JSON of unknown content types from a full parse of the element (rare path).
fn fill_raw_parts(bytes: &[u8], conversation: &mut Conversation, positions: &[usize]) {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(bytes) else { return };
    let Some(mapping) = value.get("mapping") else { return };
    for &position in positions {
        let message = &mut conversation.messages[position];
        let Some(content) = mapping.get(&message.id).and_then(|node| node.get("message")).and_then(|message| message.get("content")) else {
            continue;
        };
        if let Some(Part::Raw { json, .. }) = message.parts.last_mut() {
            *json = content.to_string();
        }
        message.text = parts_to_text(&message.parts);
    }
}

/// Whether the element has any `\uD800`–`\uDFFF` escape (the only repairable JSON error).
fn has_surrogate_escape(bytes: &[u8]) -> bool {
    memchr::memmem::find_iter(bytes, b"\\u")
        .any(|position| matches!(bytes.get(position + 2..position + 4), Some([b'd' | b'D', b'8'..=b'9' | b'a'..=b'f' | b'A'..=b'F'])))
}

/// Replaces `\uD800`–`\uDFFF` escapes that are not part of a valid pair with `\uFFFD`.
fn replace_lone_surrogates(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut position = 0;
    let parse_escape = |at: usize| -> Option<u16> {
        if bytes.get(at..at + 2)? != b"\\u" {
            return None;
        }
        let hex = std::str::from_utf8(bytes.get(at + 2..at + 6)?).ok()?;
        u16::from_str_radix(hex, 16).ok()
    };
    while position < bytes.len() {
        if bytes[position] == b'\\' && bytes.get(position + 1) == Some(&b'\\') {
            out.extend_from_slice(b"\\\\");
            position += 2;
            continue;
        }
        if let Some(unit) = parse_escape(position) {
            if (0xD800..0xDC00).contains(&unit) {
                if let Some(low) = parse_escape(position + 6).filter(|low| (0xDC00..0xE000).contains(low)) {
                    let _ = low;
                    out.extend_from_slice(&bytes[position..position + 12]);
                    position += 12;
                    continue;
                }
                out.extend_from_slice(b"\\ufffd");
                position += 6;
                continue;
            }
            if (0xDC00..0xE000).contains(&unit) {
                out.extend_from_slice(b"\\ufffd");
                position += 6;
                continue;
            }
        }
        out.push(bytes[position]);
        position += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lone_surrogates_are_replaced_and_pairs_kept() {
        let input = br#""a\ud83d\udd25b\ud83dc\\ud83d\udd25""#;
        let repaired = replace_lone_surrogates(input);
        assert_eq!(std::str::from_utf8(&repaired).unwrap(), r#""a\ud83d\udd25b\ufffdc\\ud83d\ufffd""#);
        let text: String = serde_json::from_slice(&repaired).unwrap();
        assert!(text.starts_with("a\u{1f525}b\u{fffd}c"));
    }
}
