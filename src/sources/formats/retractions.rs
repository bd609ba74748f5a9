//! The conversations a sync's delta retracted and the messages it withdrew, read back from a
//! memory-format input as each format lists them (AIMEM `x-memport-retracted` and
//! `x-memport-withdrawn-messages`, MIF and AIME extensions, PAM index entries tagged
//! `retracted` and `messages-withdrawn`; UMP tombstones are read with their records), so a
//! delta converted to another format is still a delta: the run hands them to every output,
//! which writes them in its own terms.

use serde_json::Value;

use crate::model::{Provider, RetractedConversation, RetractionMemberNames};
use crate::timefmt::parse_rfc3339;

/// The retraction of a whole conversation `object` describes, or `None` when it lacks a
/// provider, conversation id, retracting run or readable retraction time.
pub fn from_object(object: &Value, names: &RetractionMemberNames) -> Option<RetractedConversation> {
    let mut retraction = read_object(object, names)?;
    retraction.messages.clear();
    Some(retraction)
}

/// The withdrawal of messages `object` describes, or `None` when it lacks a provider,
/// conversation id, retracting run, readable retraction time or message ids.
pub fn withdrawal_from_object(object: &Value, names: &RetractionMemberNames) -> Option<RetractedConversation> {
    read_object(object, names).filter(RetractedConversation::is_of_messages)
}

fn read_object(object: &Value, names: &RetractionMemberNames) -> Option<RetractedConversation> {
    let text = |name: &str| object[name].as_str().filter(|text| !text.is_empty());
    Some(RetractedConversation {
        provider: Provider::named(text(names.provider)?),
        conversation_id: text(names.conversation_id)?.to_owned(),
        title: text(names.title).map(str::to_owned),
        created_at: text(names.created_at).and_then(parse_rfc3339),
        retracted_by: text(names.retracted_by)?.to_owned(),
        retracted_at: text(names.retracted_at).and_then(parse_rfc3339)?,
        messages: message_ids(&object[names.message_ids]),
    })
}

/// The message ids a withdrawal lists, sorted, each once; the empty strings and other values
/// left out.
fn message_ids(list: &Value) -> Vec<String> {
    let mut ids: Vec<String> =
        list.as_array().into_iter().flatten().filter_map(Value::as_str).filter(|id| !id.is_empty()).map(str::to_owned).collect();
    ids.sort();
    ids.dedup();
    ids
}

/// Each withdrawal of messages of a list (a JSON array of objects named by `names`, each with
/// its message ids); returns them and how many entries could not be read.
pub fn withdrawals_from_list(list: &Value, names: &RetractionMemberNames) -> (Vec<RetractedConversation>, u64) {
    let entries = list.as_array().map(Vec::as_slice).unwrap_or_default();
    let read: Vec<RetractedConversation> = entries.iter().filter_map(|entry| withdrawal_from_object(entry, names)).collect();
    let unreadable = (entries.len() - read.len()) as u64;
    (read, unreadable)
}

/// Each retraction of a list (a JSON array of objects named by `names`); returns them and how
/// many entries could not be read.
pub fn from_list(list: &Value, names: &RetractionMemberNames) -> (Vec<RetractedConversation>, u64) {
    let entries = list.as_array().map(Vec::as_slice).unwrap_or_default();
    let read: Vec<RetractedConversation> = entries.iter().filter_map(|entry| from_object(entry, names)).collect();
    let unreadable = (entries.len() - read.len()) as u64;
    (read, unreadable)
}

/// The retraction a PAM `conversations_index` entry tagged `retracted` stands for. PAM names
/// the conversation by its own id (`<platform>-<conversation id>`, which memport's writer
/// makes) and not the retracting run: `export_id`, the delta store's, stands for it.
pub fn from_pam_index_entry(entry: &Value, export_id: &str) -> Option<RetractedConversation> {
    let platform = entry["platform"].as_str().filter(|platform| !platform.is_empty())?;
    let pam_id = entry["id"].as_str().filter(|id| !id.is_empty())?;
    let conversation_id =
        pam_id.strip_prefix(platform).and_then(|rest| rest.strip_prefix('-')).filter(|id| !id.is_empty()).unwrap_or(pam_id);
    let temporal = &entry["temporal"];
    Some(RetractedConversation {
        provider: Provider::named(platform),
        conversation_id: conversation_id.to_owned(),
        title: entry["title"].as_str().map(str::to_owned),
        created_at: temporal["created_at"].as_str().and_then(parse_rfc3339),
        retracted_by: export_id.to_owned(),
        retracted_at: temporal["updated_at"].as_str().and_then(parse_rfc3339)?,
        messages: Vec::new(),
    })
}

/// The withdrawal of messages a PAM conversation file memport wrote for one stands for (its
/// `raw_metadata.memport_withdrawn_messages`, see [`crate::sinks::pam::conversation::withdrawal_files`]).
pub fn from_pam_withdrawal_file(file: &Value) -> Option<RetractedConversation> {
    let listed = &file["raw_metadata"][crate::spec::pam::WITHDRAWN_MEMBER];
    let text = |value: &Value| value.as_str().filter(|text| !text.is_empty()).map(str::to_owned);
    let withdrawal = RetractedConversation {
        provider: Provider::named(&text(&file["provider"]["name"])?),
        conversation_id: text(&listed["conversation_id"])?,
        title: text(&file["title"]),
        created_at: file["temporal"]["created_at"].as_str().and_then(parse_rfc3339),
        retracted_by: text(&listed["retracted_by"])?,
        retracted_at: listed["retracted_at"].as_str().and_then(parse_rfc3339)?,
        messages: message_ids(&listed["message_ids"]),
    };
    withdrawal.is_of_messages().then_some(withdrawal)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_formats_list_reads_back_to_the_same_retraction() {
        let snake = json!({"provider": "chatgpt", "conversation_id": "c1", "title": "Plans", "created_at": "2026-01-01T00:00:00Z",
            "retracted_by": "run-2", "retracted_at": "2026-02-01T00:00:00Z"});
        let aime = json!({"platform": "chatgpt", "session": "c1", "conversationTitle": "Plans", "created": "2026-01-01T00:00:00Z",
            "retractedBy": "run-2", "retractedAt": "2026-02-01T00:00:00Z"});
        let read = from_object(&snake, &RetractionMemberNames::SNAKE_CASE).unwrap();
        assert_eq!(from_object(&aime, &RetractionMemberNames::AIME).unwrap(), read);
        assert_eq!((read.provider, read.conversation_id.as_str(), read.title.as_deref()), (Provider::ChatGpt, "c1", Some("Plans")));
        assert_eq!(read.retracted_at, parse_rfc3339("2026-02-01T00:00:00Z").unwrap());
    }

    #[test]
    fn a_withdrawal_of_messages_reads_back_as_written_in_each_style() {
        for names in [RetractionMemberNames::SNAKE_CASE, RetractionMemberNames::AIME] {
            let withdrawal = RetractedConversation {
                provider: Provider::Claude,
                conversation_id: "c1".into(),
                title: Some("Plans".into()),
                created_at: None,
                retracted_by: "run-2".into(),
                retracted_at: parse_rfc3339("2026-02-01T00:00:00Z").unwrap(),
                messages: vec!["m1".into(), "m2".into()],
            };
            let mut written = Vec::new();
            crate::sinks::retraction_json::write_object(&mut written, &withdrawal, &names);
            let list = Value::Array(vec![serde_json::from_slice(&written).unwrap(), json!({"provider": "claude"})]);
            assert_eq!(withdrawals_from_list(&list, &names), (vec![withdrawal], 1));
        }
        let whole =
            json!([{"provider": "chatgpt", "conversation_id": "c1", "retracted_by": "run", "retracted_at": "2026-02-01T00:00:00Z"}]);
        assert_eq!(withdrawals_from_list(&whole, &RetractionMemberNames::SNAKE_CASE).1, 1, "a whole retraction is not a withdrawal");
    }

    #[test]
    fn an_entry_without_its_run_or_time_is_not_a_retraction() {
        let (read, unreadable) = from_list(
            &json!([{"provider": "chatgpt", "conversation_id": "c1", "retracted_at": "2026-02-01T00:00:00Z"},
                {"provider": "chatgpt", "conversation_id": "c2", "retracted_by": "run", "retracted_at": "soon"},
                {"provider": "chatgpt", "conversation_id": "c3", "retracted_by": "run", "retracted_at": "2026-02-01T00:00:00Z"}, 7]),
            &RetractionMemberNames::SNAKE_CASE,
        );
        assert_eq!(read.iter().map(|retraction| retraction.conversation_id.as_str()).collect::<Vec<_>>(), ["c3"]);
        assert_eq!(unreadable, 3);
        assert_eq!(from_list(&json!({"not": "a list"}), &RetractionMemberNames::SNAKE_CASE), (Vec::new(), 0));
    }

    #[test]
    fn a_pam_entry_names_the_conversation_by_its_id_without_the_platform() {
        let entry = json!({"id": "claude-a-b", "platform": "claude", "title": null,
            "temporal": {"created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-02-01T00:00:00Z"}, "tags": ["retracted"]});
        let read = from_pam_index_entry(&entry, "export-2").unwrap();
        assert_eq!((read.provider, read.conversation_id.as_str(), read.retracted_by.as_str()), (Provider::Claude, "a-b", "export-2"));
        assert_eq!(read.title, None);
    }
}
