//! Decodes one Grok `{conversation, responses}` element into the canonical model: rebuilds the
//! `parent_response_id` tree (a parent the export does not contain makes a root), picks the
//! active leaf (`leaf_response_id` when it names an exported response, else the newest leaf),
//! orders by the tree (answers can be stamped before their question), and classifies every
//! response.

use std::fmt::Write as _;

use rustc_hash::FxHashMap;

use crate::hash::ContentKey;
use crate::model::{Asset, AssetKind, Conversation, Disposition, Message, Micros, Origin, Part, Provider, Role, SkipReason, Warnings};
use crate::sources::chatgpt::render::parts_to_text;
use crate::sources::contract::{BranchPolicy, DecodeOptions, Decoded, RecordReject};
use crate::sources::grok::GrokAssets;
use crate::sources::grok::raw::{RawElement, RawResponse};
use crate::sources::lenient::ArrayField;
use crate::sources::lenient::{List, Object, Text};
use crate::sources::tree::Tree;

/// Decodes one element. `Err` rejects the whole conversation.
pub fn decode_conversation(bytes: &[u8], origin: Origin, assets: &GrokAssets, options: &DecodeOptions) -> Result<Decoded, RecordReject> {
    let mut warnings = Warnings::default();
    let reject = |conversation_id: Option<&str>, reason: String| RecordReject::new(&origin, conversation_id, reason);
    let raw: RawElement = sonic_rs::from_slice(bytes).map_err(|error| reject(None, format!("invalid JSON: {error}")))?;
    let Object::Present(meta) = &raw.conversation else {
        return Err(reject(None, "element has no `conversation` object".into()));
    };
    let Some(id) = meta.id.as_deref().or(meta.conversation_id.as_deref()).filter(|id| !id.is_empty()) else {
        return Err(reject(None, "conversation has no `id` or `conversation_id`".into()));
    };
    let entries = match raw.responses.as_ref() {
        Some(ArrayField::Array(entries)) => entries.as_slice(),
        // The responses are lost, not absent: the conversation is not written as an empty one.
        Some(ArrayField::Not(found)) => return Err(reject(Some(id), format!("`responses` is {found}, not an array of responses"))),
        // A conversation the export keeps without responses.
        None => &[][..],
    };
    // The conversation's times date the responses without one; a time that cannot be right
    // would date them wrongly, so the conversation is rejected with it.
    for (field, time) in [("create_time", &meta.create_time), ("modify_time", &meta.modify_time)] {
        if let Some(reason) = time.problem(field) {
            return Err(reject(Some(id), reason));
        }
    }

    let mut rejected_messages = Vec::new();
    let mut usable: Vec<(&str, &RawResponse)> = Vec::with_capacity(entries.len());
    let mut position_of: FxHashMap<&str, usize> = FxHashMap::with_capacity_and_hasher(entries.len(), Default::default());
    for (index, entry) in entries.iter().enumerate() {
        let response = entry.as_ref().and_then(|entry| entry.response.as_ref());
        let problem = match response {
            Some(response) => match response.mongo_id.as_deref().or(response.response_id.as_deref()).filter(|id| !id.is_empty()) {
                Some(response_id) if position_of.contains_key(response_id) => {
                    Some((Some(response_id), format!("response `{response_id}` appears twice")))
                }
                Some(response_id) => match response.create_time.problem("create_time") {
                    // Rejected rather than given its parent's time without a word.
                    Some(reason) => Some((Some(response_id), reason)),
                    None => {
                        position_of.insert(response_id, usable.len());
                        usable.push((response_id, response));
                        None
                    }
                },
                None => Some((None, format!("responses[{index}] has no `_id` or `response_id`"))),
            },
            None => Some((None, format!("responses[{index}] has no `response` object"))),
        };
        if let Some((message_id, reason)) = problem {
            let mut rejected = reject(Some(id), reason);
            rejected.message_id = message_id.map(str::to_owned);
            rejected_messages.push(rejected);
        }
    }

    let parents: Vec<Option<usize>> = usable
        .iter()
        .enumerate()
        .map(|(position, (_, response))| {
            let parent = response.parent_response_id.as_deref().filter(|parent| !parent.is_empty())?;
            let found = position_of.get(parent).copied().filter(|&parent| parent != position);
            if found.is_none() {
                // The first turn points at a root the export never contains.
                warnings.add("grok_dangling_parent");
            }
            found
        })
        .collect();
    let times: Vec<Option<Micros>> = usable.iter().map(|(_, response)| response.create_time.micros()).collect();
    let mut tree = Tree::new(parents);
    // Siblings in time order (regenerations); document order is not reliable.
    for children in &mut tree.children {
        children.sort_by_key(|&child| (times[child].unwrap_or(Micros::MIN), child));
    }
    let named_leaf = meta.leaf_response_id.as_deref().and_then(|leaf| position_of.get(leaf).copied());
    if meta.leaf_response_id.as_deref().is_some_and(|leaf| !leaf.is_empty()) && named_leaf.is_none() {
        warnings.add("grok_leaf_not_exported");
    }
    let on_path = tree.path_to(named_leaf.or_else(|| tree.newest_leaf(&times)));

    let conversation_time = meta.create_time.micros();
    let fallback_time = conversation_time.unwrap_or(options.exported_at);
    let mut effective_time = vec![fallback_time; usable.len()];
    let mut messages = Vec::with_capacity(usable.len());
    let mut conversation_model = None;
    for position in tree.preorder() {
        let (response_id, response) = usable[position];
        let parent_time = tree.parents[position].map(|parent| effective_time[parent]);
        let created_at = times[position].or(parent_time).unwrap_or(fallback_time);
        effective_time[position] = created_at;
        let sender = response.sender.as_deref().unwrap_or("").trim();
        let role = if sender.eq_ignore_ascii_case("human") || sender.eq_ignore_ascii_case("user") { Role::User } else { Role::Assistant };
        if sender.is_empty() {
            warnings.add("grok_sender_missing");
        }
        let parts = render(response, assets, &mut warnings);
        let text = match parts.as_slice() {
            [Part::Text(only)] => only.clone(),
            _ => parts_to_text(&parts),
        };
        let parts = if matches!(parts.as_slice(), [Part::Text(_)]) { Vec::new() } else { parts };
        let model = if role == Role::Assistant { model_of(response, sender) } else { None };
        if conversation_model.is_none() {
            conversation_model.clone_from(&model);
        }
        let on_active_branch = on_path[position];
        let disposition = if options.branches == BranchPolicy::Active && !on_active_branch {
            Disposition::Skip(SkipReason::OffBranch)
        } else if text.trim().is_empty() {
            Disposition::Skip(SkipReason::Empty)
        } else {
            Disposition::Keep
        };
        let status = if response.error.as_deref().is_some_and(|error| !error.is_empty()) {
            Some("error".to_owned())
        } else if response.partial == Some(true) {
            Some("partial".to_owned())
        } else {
            None
        };
        messages.push(Message {
            id: response_id.to_owned(),
            parent_id: tree.parents[position].map(|parent| usable[parent].0.to_owned()),
            role,
            author_name: (role == Role::Assistant && !sender.eq_ignore_ascii_case("assistant") && !sender.is_empty())
                .then(|| sender.to_owned()),
            created_at,
            time_known: times[position].is_some(),
            content_key: if disposition == Disposition::Keep { options.content_key(&text) } else { ContentKey::default() },
            parts,
            text,
            is_thought: false,
            provider_fields: None,
            model,
            status,
            on_active_branch,
            disposition,
            discloses: false,
        });
    }
    let conversation = Conversation {
        provider: Provider::Grok,
        id: id.to_owned(),
        title: meta.title.as_deref().map(str::to_owned).filter(|title| !title.is_empty()),
        created_at: conversation_time,
        updated_at: meta.modify_time.micros(),
        model: conversation_model,
        system_instruction: meta.system_prompt_name.as_deref().map(str::to_owned).filter(|name| !name.is_empty()),
        is_archived: false,
        messages,
        memories: Vec::new(),
        memories_only: false,
        is_repeat: false,
        assumed_time_zone: None,
        origin: origin.clone(),
    };
    Ok(Decoded { conversation, rejected_messages, warnings, retractions: Vec::new() })
}

/// The model that answered: `metadata.request_metadata.resolved_model` (2026; `model` is only
/// the UI picker), `metadata.requestModelDetails.modelId` (2025), or a model name in `sender`.
fn model_of(response: &RawResponse, sender: &str) -> Option<String> {
    let metadata = response.metadata.as_ref();
    metadata
        .and_then(|metadata| metadata.request_metadata.as_ref())
        .and_then(|request| request.resolved_model.as_deref())
        .or_else(|| metadata.and_then(|metadata| metadata.request_model_details.as_ref()).and_then(|details| details.model_id.as_deref()))
        .or_else(|| (!sender.eq_ignore_ascii_case("assistant") && !sender.is_empty()).then_some(sender))
        .filter(|model| !model.is_empty())
        .map(str::to_owned)
}

/// The answer text, reasoning kept apart, cited sources as a list, and attachments and
/// generated images as asset parts.
fn render(response: &RawResponse, assets: &GrokAssets, warnings: &mut Warnings) -> Vec<Part> {
    let mut parts = Vec::new();
    if let Some(trace) = response.thinking_trace.as_deref().filter(|trace| !trace.trim().is_empty()) {
        parts.push(Part::Thinking(trace.to_owned()));
    }
    if let Some(message) = response.message.as_deref().filter(|message| !message.is_empty()) {
        parts.push(Part::Text(message.to_owned()));
    }
    let citations: Vec<_> = response.cited_web_search_results.iter().flat_map(|list| list.0.iter()).filter_map(Object::as_ref).collect();
    if !citations.is_empty() {
        let mut sources = String::from("Sources:");
        for citation in citations {
            let url = citation.url.as_deref().unwrap_or("");
            match citation.title.as_deref().filter(|title| !title.is_empty()) {
                Some(title) => {
                    let _ = write!(sources, "\n- [{title}]({url})");
                }
                None => {
                    let _ = write!(sources, "\n- {url}");
                }
            }
        }
        parts.push(Part::Text(sources));
    }
    let strings = |list: &Option<List<Text>>| -> Vec<String> {
        list.iter()
            .flat_map(|list| list.0.iter())
            .filter_map(|text| text.0.as_deref())
            .filter(|text| !text.is_empty())
            .map(str::to_owned)
            .collect()
    };
    for url in strings(&response.generated_image_urls) {
        parts.push(Part::Asset(Asset { kind: AssetKind::Image, pointer: url.clone(), resolved: Some(url), name: None }));
    }
    for (kind, list) in [(AssetKind::Image, &response.image_attachments), (AssetKind::File, &response.file_attachments)] {
        for asset_id in strings(list) {
            let resolved = assets.resolve(&asset_id);
            if resolved.is_none() {
                warnings.add("asset_missing");
            }
            parts.push(Part::Asset(Asset { kind, pointer: asset_id, resolved, name: None }));
        }
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(element: &[u8]) -> Result<Decoded, RecordReject> {
        let options = DecodeOptions {
            branches: BranchPolicy::Active,
            exported_at: 0,
            keep_provider_fields: false,
            dedup_keys: false,
            pam_digests: false,
        };
        decode_conversation(
            element,
            Origin { file: "prod-grok-backend.json".into(), offset: 0, index: 1 },
            &GrokAssets::default(),
            &options,
        )
    }

    /// Guards the shape of `responses`: an object there read as an empty list, and the
    /// conversation was written with 0 messages without a word.
    #[test]
    fn a_responses_object_rejects_the_conversation_naming_the_field() {
        let reject = decode(br#"{"conversation":{"id":"g2"},"responses":{"r":1}}"#).err();
        assert_eq!(reject.as_ref().map(|reject| reject.reason.as_str()), Some("`responses` is an object, not an array of responses"));
        assert_eq!(reject.and_then(|reject| reject.conversation_id).as_deref(), Some("g2"));
        // No `responses` at all is a conversation the export keeps empty.
        assert!(decode(br#"{"conversation":{"id":"g2"}}"#).is_ok_and(|decoded| decoded.conversation.messages.is_empty()));
    }

    /// Guards the year range of response times: a time past 9999 was read as no time and the
    /// response silently took its parent's. It is rejected, saying why; its siblings stay.
    #[test]
    fn a_response_time_outside_the_years_rejects_that_response_naming_it() {
        let element = br#"{"conversation":{"id":"g2","create_time":"2025-10-24T20:50:04Z"},"responses":[
            {"response":{"_id":"q","sender":"human","message":"question","create_time":{"$date":{"$numberLong":"1761339005114"}}}},
            {"response":{"_id":"a","sender":"assistant","message":"answer","parent_response_id":"q",
                "create_time":{"$date":{"$numberLong":"253402300800000"}}}},
            {"response":{"_id":"b","sender":"assistant","message":"again","parent_response_id":"q",
                "create_time":"9999-12-31T23:30:00-05:00"}}]}"#;
        let decoded = decode(element).unwrap();
        let rejected: Vec<(Option<&str>, &str)> =
            decoded.rejected_messages.iter().map(|reject| (reject.message_id.as_deref(), reject.reason.as_str())).collect();
        assert_eq!(
            rejected,
            [
                (Some("a"), "`create_time` 253402300800000 (epoch milliseconds): outside years 0001-9999 once converted to UTC"),
                (Some("b"), "`create_time` `9999-12-31T23:30:00-05:00`: outside years 0001-9999 once converted to UTC"),
            ]
        );
        let kept: Vec<&str> = decoded.conversation.messages.iter().map(|message| message.id.as_str()).collect();
        assert_eq!(kept, ["q"]);
        // The conversation's own time dates the responses without one: it is rejected whole.
        let reject = decode(br#"{"conversation":{"id":"g3","create_time":9223372036854775807},"responses":[]}"#).err();
        assert_eq!(
            reject.map(|reject| reject.reason).as_deref(),
            Some("`create_time` 9223372036854775807 (epoch milliseconds): outside years 0001-9999 once converted to UTC")
        );
    }
}
