//! Grok exports (provider-formats.md §5): `prod-grok-backend.json`, nested four folders deep in
//! a zip named after a UUID. The `conversations` member of its top-level object is framed
//! element by element (the file is one line, 60 MB and more); projects, tasks and media posts
//! are not conversations and are skipped. The identity and billing files
//! (`prod-mc-auth-mgmt-api.json`, `prod-mc-billing.json`) are never opened.

pub mod normalize;
pub mod raw;

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::model::Origin;
use crate::sources::container::Entry;
use crate::sources::contract::{DecodeOptions, Decoded, Decoder, Framing, InputPlan, RecordReject, Stream};

/// The member of the backend file that holds the conversations, as an array. Any other value
/// there (an object, a string) is an input problem the framer reports, never an export with no
/// conversations.
const CONVERSATIONS_MEMBER: &str = "conversations";

/// Plans a Grok export: the `conversations` member of each backend file, with the export's
/// uploaded files indexed for the decoder.
pub fn plan(plan: &mut InputPlan, container_kind: &str, entries: &[Entry], backend_files: Vec<Entry>) {
    let assets = GrokAssets::build(entries);
    plan.asset_count = assets.len();
    let decoder = Arc::new(GrokDecoder { assets }) as Arc<dyn Decoder>;
    plan.layout = format!("{container_kind}, Grok prod-grok-backend.json");
    plan.streams.extend(backend_files.into_iter().map(|entry| Stream::new(entry, Framing::Member(CONVERSATIONS_MEMBER), decoder.clone())));
}

/// Uploaded files the export carries: `prod-mc-asset-server/<asset id>/content`.
#[derive(Debug, Default)]
pub struct GrokAssets {
    by_id: BTreeMap<String, String>,
}

impl GrokAssets {
    /// Indexes the asset files among `entries`.
    pub fn build(entries: &[Entry]) -> Self {
        let mut by_id = BTreeMap::new();
        for entry in entries {
            let mut components = entry.name.rsplit('/');
            let (Some("content"), Some(asset_id), Some("prod-mc-asset-server")) = (components.next(), components.next(), components.next())
            else {
                continue;
            };
            by_id.insert(asset_id.to_owned(), entry.name.clone());
        }
        GrokAssets { by_id }
    }

    /// The export path of asset `asset_id`, when the export has it.
    pub fn resolve(&self, asset_id: &str) -> Option<String> {
        self.by_id.get(asset_id).cloned()
    }

    /// How many assets the export has.
    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    /// Whether the export has no assets.
    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }
}

/// Decodes Grok `{conversation, responses}` elements.
pub struct GrokDecoder {
    /// The export's uploaded files.
    pub assets: GrokAssets,
}

impl Decoder for GrokDecoder {
    fn decode(&self, bytes: &[u8], origin: Origin, options: &DecodeOptions) -> Result<Decoded, RecordReject> {
        let mut decoded = normalize::decode_conversation(bytes, origin, &self.assets, options)?;
        if options.keep_provider_fields {
            crate::sources::provider_fields::attach(&mut decoded.conversation, crate::sources::provider_fields::grok(bytes));
        }
        Ok(decoded)
    }
}

#[cfg(test)]
mod tests {
    use super::CONVERSATIONS_MEMBER;
    use crate::sources::json_array::{ArrayFramer, FrameError};

    /// Guards Grok framing (`Framing::Member`): a `conversations` member that is an object, not
    /// the array of conversations, must stop the input with a problem that says so, not read as
    /// an export without conversations (0 conversations, exit 0, no warning).
    #[test]
    fn a_conversations_object_is_an_input_problem_not_an_empty_export() {
        let backend: &[u8] = br#"{"conversations": {"c1": {"conversation": {"id": "c1"}, "responses": []}}, "projects": []}"#;
        let mut framer = ArrayFramer::member_array(backend, CONVERSATIONS_MEMBER);
        let error = framer.next_element().err();
        assert!(matches!(error, Some(FrameError::NotAnArray { .. })), "{error:?}");
        let message = error.map(|error| error.to_string()).unwrap_or_default();
        assert!(message.contains("an object") && message.contains("conversations"), "{message}");
        // The array it expects still frames.
        let backend: &[u8] = br#"{"conversations": [{"conversation": {"id": "c1"}, "responses": []}]}"#;
        assert!(ArrayFramer::member_array(backend, CONVERSATIONS_MEMBER).next_element().is_ok_and(|element| element.is_some()));
    }
}
