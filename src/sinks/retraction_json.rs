//! A retracted conversation as a JSON object, for the formats that list a sync's retractions in
//! an extension member of their own (AIMEM `x-memport-…`, MIF `vendor_extensions`, AIME
//! `extensions`): the same members, named in each format's style; a withdrawal of some
//! messages also names them.

use crate::jcs::write_string;
use crate::model::{RetractedConversation, RetractionMemberNames};
use crate::timefmt::format_rfc3339;

/// Appends `conversation` as one compact object with `names`, in their order.
pub fn write_object(out: &mut Vec<u8>, conversation: &RetractedConversation, names: &RetractionMemberNames) {
    let member = |out: &mut Vec<u8>, name: &str, value: &str, first: bool| {
        out.extend_from_slice(if first { b"{" } else { b"," });
        write_string(out, name);
        out.push(b':');
        write_string(out, value);
    };
    member(out, names.provider, conversation.provider.as_str(), true);
    member(out, names.conversation_id, &conversation.conversation_id, false);
    if let Some(title) = &conversation.title {
        member(out, names.title, title, false);
    }
    if let Some(created_at) = conversation.created_at {
        member(out, names.created_at, &format_rfc3339(created_at), false);
    }
    member(out, names.retracted_by, &conversation.retracted_by, false);
    member(out, names.retracted_at, &format_rfc3339(conversation.retracted_at), false);
    if conversation.is_of_messages() {
        out.push(b',');
        write_string(out, names.message_ids);
        out.push(b':');
        for (at, message) in conversation.messages.iter().enumerate() {
            out.push(if at == 0 { b'[' } else { b',' });
            write_string(out, message);
        }
        out.push(b']');
    }
    out.push(b'}');
}
