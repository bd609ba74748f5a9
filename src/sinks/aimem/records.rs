//! Maps canonical messages to AIMEM chunk and edge records and serializes them in RFC 8785 form
//! (fields in canonical order, compact), so the bytes written are the bytes hashed.
//!
//! Mapping (memory-formats.md §2.12): one `episodic` chunk per kept message, split into linked
//! parts above 65,536 code points; a `temporal` edge (weight 1) from each kept message's nearest
//! kept ancestor to it, so the active thread is a chain and, under `--branches all`, branches
//! fork where the conversation forked; provider memories become chunks of their own. Memories
//! memport extracted are mapped in [`memory_records`](super::memory_records), and
//! [`map_conversation`](super::map_conversation) puts the two together.

use crate::hash::{push_hex, push_sha256_label, sha256};
use crate::jcs::write_string;
use crate::model::{Conversation, MemoryRecord, Message, Micros};
use crate::sinks::aimem::Framing;
use crate::sinks::written_tree::{is_written, nearest_written_ancestors};
use crate::timefmt::push_rfc3339_bytes;

/// Most code points a chunk may carry; longer content is split (the reference rejects more).
pub const MAX_CHUNK_CODE_POINTS: usize = 65_536;
/// Longest `<local>` part of a chunk URN.
const MAX_LOCAL_LENGTH: usize = 256;
/// The chunk memory types of the draft.
pub const MEMORY_TYPES: [&str; 8] = ["fact", "preference", "decision", "identity", "pitfall", "procedure", "episodic", "goal"];
/// Longest tag.
const MAX_TAG_LENGTH: usize = 64;

/// Where [`map_conversation`](super::map_conversation) appends records: chunks already framed for the output (see
/// [`Framing`]: `,` + canonical record for the bundle, NDJSON lines for the stream) with their
/// end offsets, and edges framed the same way.
#[derive(Debug, Default)]
pub struct RecordBuffers {
    /// Chunks framed for the output, back to back.
    pub chunks: Vec<u8>,
    /// End offset of each chunk in `chunks`.
    pub chunk_ends: Vec<usize>,
    /// Edges framed for the output like the chunks: `,` + canonical record for the bundle,
    /// [`NDJSON_EDGE_PREFIX`] lines for the stream.
    pub edge_lines: Vec<u8>,
    /// Number of edges.
    pub edge_count: u64,
    /// Entity records in canonical form, one per entity, from the memory that first names it.
    pub entities: Vec<Vec<u8>>,
    /// Chunk-entity link records in canonical form.
    pub chunk_entities: Vec<Vec<u8>>,
}

/// Opening of an NDJSON chunk line; the canonical record is this line with `"_kind":"chunk",`
/// removed and without the newline.
pub const NDJSON_CHUNK_PREFIX: &[u8] = b"{\"_kind\":\"chunk\",";
/// Opening of an NDJSON edge line, likewise.
pub const NDJSON_EDGE_PREFIX: &[u8] = b"{\"_kind\":\"edge\",";
/// Opening of an NDJSON entity line, likewise.
pub const NDJSON_ENTITY_PREFIX: &[u8] = b"{\"_kind\":\"entity\",";
/// Opening of an NDJSON chunk-entity line, likewise.
pub const NDJSON_CHUNK_ENTITY_PREFIX: &[u8] = b"{\"_kind\":\"chunk_entity\",";

/// Appends the chunk and edge records of one conversation's kept messages to `out`.
pub fn map_messages(conversation: &Conversation, producer: &str, framing: Framing, out: &mut RecordBuffers) {
    let provider = conversation.provider.as_str();
    let conversation_tag = tag_for("conv-", &conversation.id);
    // Times read without a zone say which zone was assumed (`tz-assumed-utc`, `…-p02-00`).
    let zone_tag = conversation.assumed_time_zone.as_deref().map(|zone| tag_for("tz-assumed-", &zone.replace('+', "p").replace('-', "m")));
    // For each written message (by position): the id of its last chunk, which the edge to its
    // written descendants starts from.
    let ancestors = nearest_written_ancestors(conversation);
    let mut last_chunk_of: Vec<Option<String>> = vec![None; conversation.messages.len()];
    for (position, message) in conversation.messages.iter().enumerate() {
        if !is_written(message) {
            continue;
        }
        // An ancestor written before this message is in `earlier`; one not written yet has no
        // chunk to start an edge from.
        let (earlier, current) = last_chunk_of.split_at_mut(position);
        let inherited = ancestors[position].and_then(|ancestor| earlier.get(ancestor)).and_then(Option::as_deref);
        let mut base_id = chunk_urn(producer, provider, &conversation.id, &message.id);
        let pieces = split_content(&message.text);
        let piece_count = pieces.len();
        // The chunk written last for this message.
        let mut previous: Option<String> = None;
        for (piece_index, piece) in pieces.into_iter().enumerate() {
            let chunk_id = piece_id(&mut base_id, piece_index, piece_count);
            match framing {
                Framing::Bundle => {
                    out.chunks.push(b',');
                    write_chunk(
                        &mut out.chunks,
                        b"{",
                        piece,
                        &chunk_id,
                        message,
                        &conversation_tag,
                        zone_tag.as_deref(),
                        provider,
                        piece_index,
                        piece_count,
                    );
                }
                Framing::Ndjson => {
                    write_chunk(
                        &mut out.chunks,
                        NDJSON_CHUNK_PREFIX,
                        piece,
                        &chunk_id,
                        message,
                        &conversation_tag,
                        zone_tag.as_deref(),
                        provider,
                        piece_index,
                        piece_count,
                    );
                    out.chunks.push(b'\n');
                }
            }
            out.chunk_ends.push(out.chunks.len());
            if let Some(source) = previous.as_deref().or(inherited) {
                push_edge(out, framing, TEMPORAL, source, &chunk_id, message.created_at);
            }
            previous = Some(chunk_id);
        }
        current[0] = previous;
    }
}

/// Whether `id` goes into a chunk URN as it is: non-empty, of `[A-Za-z0-9_~-]` (no `.`, which
/// separates the URN's parts).
fn is_safe_id(id: &str) -> bool {
    !id.is_empty() && id.bytes().all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'~' | b'-'))
}

/// The URN prefix the chunks of a conversation start with,
/// `urn:aimem:<producer>:<provider>.<conversation>.`, when its id goes into them as it is (see
/// [`chunk_urn`]; a message whose own id is not plain, or too long, still gets a hashed URN);
/// `None` when the conversation's chunks have hashed URNs, which name no conversation.
pub fn conversation_urn_prefix(producer: &str, provider: &str, conversation_id: &str) -> Option<String> {
    // Room for a message id of one character, as `chunk_urn` counts.
    let fits = provider.len() + conversation_id.len() + 3 <= MAX_LOCAL_LENGTH - 8;
    (fits && is_safe_id(conversation_id)).then(|| format!("urn:aimem:{producer}:{provider}.{conversation_id}."))
}

/// `urn:aimem:<producer>:<provider>.<conversation>.<message>`, falling back to a hash of the
/// ids when they hold characters outside `[A-Za-z0-9._~-]` or are too long.
pub fn chunk_urn(producer: &str, provider: &str, conversation_id: &str, message_id: &str) -> String {
    let plain_length = provider.len() + conversation_id.len() + message_id.len() + 2;
    let mut urn = String::with_capacity(11 + producer.len() + plain_length.max(48) + 8);
    urn.push_str("urn:aimem:");
    urn.push_str(producer);
    urn.push(':');
    urn.push_str(provider);
    urn.push('.');
    // The part suffix `.pN` must still fit in 256 characters.
    if plain_length <= MAX_LOCAL_LENGTH - 8 && is_safe_id(conversation_id) && is_safe_id(message_id) {
        urn.push_str(conversation_id);
        urn.push('.');
        urn.push_str(message_id);
    } else {
        let mut joined = Vec::with_capacity(conversation_id.len() + message_id.len() + 1);
        joined.extend_from_slice(conversation_id.as_bytes());
        joined.push(0);
        joined.extend_from_slice(message_id.as_bytes());
        urn.push_str("h.");
        push_hex(&mut urn, &sha256(&joined)[..16]);
    }
    urn
}

/// `urn:aimem:<producer>:<memory id>`, or with a hash of the id (`<provider>.mem.h<hex>`) when
/// the id holds characters a URN's local part must not (a PAM store's `mem:1`) or is too long.
pub fn memory_urn(producer: &str, provider: &str, memory_id: &str) -> String {
    let is_safe = !memory_id.is_empty()
        && memory_id.len() <= MAX_LOCAL_LENGTH - 8
        && memory_id.bytes().all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'.' | b'_' | b'~' | b'-'));
    if is_safe {
        return format!("urn:aimem:{producer}:{memory_id}");
    }
    let mut urn = format!("urn:aimem:{producer}:{provider}.mem.h");
    push_hex(&mut urn, &sha256(memory_id.as_bytes())[..16]);
    urn
}

/// Splits content into pieces of at most [`MAX_CHUNK_CODE_POINTS`] code points.
pub(super) fn split_content(text: &str) -> Vec<&str> {
    // Fast path: byte length bounds the code point count.
    if text.len() <= MAX_CHUNK_CODE_POINTS {
        return vec![text];
    }
    let mut pieces = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let cut = rest.char_indices().nth(MAX_CHUNK_CODE_POINTS).map_or(rest.len(), |(byte_index, _)| byte_index);
        pieces.push(&rest[..cut]);
        rest = &rest[cut..];
    }
    pieces
}

/// The id of piece `piece_index` of `piece_count`: the base id for the first (taken, not
/// copied, when it is the only piece), `<base>.pN` for the others.
pub(super) fn piece_id(base_id: &mut String, piece_index: usize, piece_count: usize) -> String {
    match (piece_index, piece_count) {
        (0, 1) => std::mem::take(base_id),
        (0, _) => base_id.clone(),
        _ => format!("{base_id}.p{}", piece_index + 1),
    }
}

/// `prefix` + `id`, lowercase, with characters other than letters, digits and `-` as `-`, at
/// most 64 bytes.
pub(super) fn tag_for(prefix: &str, id: &str) -> String {
    let mut tag = String::with_capacity(MAX_TAG_LENGTH);
    tag.push_str(prefix);
    for c in id.chars() {
        if tag.len() >= MAX_TAG_LENGTH {
            break;
        }
        let c = c.to_ascii_lowercase();
        tag.push(if c.is_ascii_alphanumeric() || c == '-' { c } else { '-' });
    }
    tag
}

#[allow(clippy::too_many_arguments)]
fn write_chunk(
    out: &mut Vec<u8>,
    open: &[u8],
    content: &str,
    id: &str,
    message: &Message,
    conversation_tag: &str,
    zone_tag: Option<&str>,
    provider: &str,
    piece_index: usize,
    piece_count: usize,
) {
    write_chunk_head(out, open, content, id, message.created_at, "episodic");
    out.extend_from_slice(b"\"role-");
    out.extend_from_slice(message.role.as_str().as_bytes());
    out.extend_from_slice(b"\",\"src-");
    out.extend_from_slice(provider.as_bytes());
    out.extend_from_slice(b"\",");
    write_string(out, conversation_tag);
    if message.is_thought {
        out.extend_from_slice(b",\"thought\"");
    }
    if !message.on_active_branch {
        out.extend_from_slice(b",\"off-branch\"");
    }
    if let Some(zone_tag) = zone_tag {
        out.push(b',');
        write_string(out, zone_tag);
    }
    write_chunk_tail(out, piece_index, piece_count, "standard");
}

/// Writes a chunk's fields up to and including `"tags":[`, in canonical key order.
pub(super) fn write_chunk_head(out: &mut Vec<u8>, open: &[u8], content: &str, id: &str, created_at: Micros, memory_type: &str) {
    out.extend_from_slice(open);
    out.extend_from_slice(b"\"content\":");
    write_string(out, content);
    out.extend_from_slice(b",\"content_hash\":\"");
    push_sha256_label(out, &sha256(content.as_bytes()));
    out.extend_from_slice(b"\",\"created_at\":\"");
    push_rfc3339_bytes(out, created_at);
    out.extend_from_slice(b"\",\"id\":");
    write_string(out, id);
    out.extend_from_slice(b",\"is_pinned\":false,\"memory_type\":\"");
    out.extend_from_slice(memory_type.as_bytes());
    out.extend_from_slice(b"\",\"tags\":[");
}

/// Closes the tag list (adding the part tag of a split chunk) and the chunk, whose `zone`
/// (the last member in canonical order) is `zone`.
pub(super) fn write_chunk_tail(out: &mut Vec<u8>, piece_index: usize, piece_count: usize, zone: &str) {
    if piece_count > 1 {
        out.extend_from_slice(format!(",\"part-{}-of-{piece_count}\"", piece_index + 1).as_bytes());
    }
    out.extend_from_slice(b"],\"zone\":\"");
    out.extend_from_slice(zone.as_bytes());
    out.extend_from_slice(b"\"}");
}

/// Appends the chunks of a provider memory of `provider`: one chunk with its kind's
/// `memory_type`, split and linked like long messages.
pub(super) fn map_provider_memory(memory: &MemoryRecord, provider: &str, producer: &str, framing: Framing, out: &mut RecordBuffers) {
    let mut base_id = memory_urn(producer, provider, &memory.id);
    // A type read from another AIMEM producer is written as it was.
    let memory_type = memory.format_type("aimem-type").filter(|kind| MEMORY_TYPES.contains(kind)).unwrap_or(memory.kind.aimem_type());
    let pieces = split_content(&memory.text);
    let piece_count = pieces.len();
    let mut previous: Option<String> = None;
    for (piece_index, piece) in pieces.into_iter().enumerate() {
        let chunk_id = piece_id(&mut base_id, piece_index, piece_count);
        let open: &[u8] = match framing {
            Framing::Bundle => {
                out.chunks.push(b',');
                b"{"
            }
            Framing::Ndjson => NDJSON_CHUNK_PREFIX,
        };
        write_chunk_head(&mut out.chunks, open, piece, &chunk_id, memory.created_at, memory_type);
        out.chunks.extend_from_slice(b"\"provider-memory\",\"src-");
        out.chunks.extend_from_slice(provider.as_bytes());
        out.chunks.extend_from_slice(b"\",");
        write_string(&mut out.chunks, &tag_for("kind-", memory.kind.as_str()));
        // The tag `retracted` says the flag below: a label of that name (another format's tag)
        // would make a reader take the memory for withdrawn.
        for label in memory.labels.iter().filter(|label| tag_for("", label) != "retracted") {
            out.chunks.push(b',');
            write_string(&mut out.chunks, &tag_for("", label));
        }
        // AIMEM has no deletion: one its input withdrew is tagged, as a retracted extracted
        // memory is.
        if memory.retracted_in_input {
            out.chunks.extend_from_slice(b",\"retracted\"");
        }
        write_chunk_tail(&mut out.chunks, piece_index, piece_count, "standard");
        if framing == Framing::Ndjson {
            out.chunks.push(b'\n');
        }
        out.chunk_ends.push(out.chunks.len());
        if let Some(source) = &previous {
            push_edge(out, framing, TEMPORAL, source, &chunk_id, memory.created_at);
        }
        previous = Some(chunk_id);
    }
}

/// An edge's type and weight.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct EdgeKind {
    /// `edge_type`: one of the draft's or an `x-` extension.
    pub edge_type: &'static str,
    /// `weight`, in [0, 1].
    pub weight: f64,
}

/// From a message (or a piece of a split chunk) to the next: weight 1.
pub(super) const TEMPORAL: EdgeKind = EdgeKind { edge_type: "temporal", weight: 1.0 };

/// Appends an edge framed for the output, as chunks are.
pub(super) fn push_edge(out: &mut RecordBuffers, framing: Framing, kind: EdgeKind, source: &str, target: &str, created_at: Micros) {
    let open: &[u8] = match framing {
        Framing::Bundle => b",{",
        Framing::Ndjson => NDJSON_EDGE_PREFIX,
    };
    write_edge(&mut out.edge_lines, open, kind, source, target, created_at);
    if framing == Framing::Ndjson {
        out.edge_lines.push(b'\n');
    }
    out.edge_count += 1;
}

fn write_edge(out: &mut Vec<u8>, open: &[u8], kind: EdgeKind, source: &str, target: &str, created_at: Micros) {
    out.extend_from_slice(open);
    out.extend_from_slice(b"\"created_at\":\"");
    push_rfc3339_bytes(out, created_at);
    // Edge types are memport's own constants: nothing in them needs escaping.
    out.extend_from_slice(b"\",\"edge_type\":\"");
    out.extend_from_slice(kind.edge_type.as_bytes());
    out.extend_from_slice(b"\",\"source_id\":");
    write_string(out, source);
    out.extend_from_slice(b",\"target_id\":");
    write_string(out, target);
    out.extend_from_slice(b",\"weight\":");
    push_weight(out, kind.weight);
    out.push(b'}');
}

/// Writes an edge weight as JCS numbers are written (`1`, `0.85`); the weight every temporal
/// edge has is written without the general formatter, which is slower.
fn push_weight(out: &mut Vec<u8>, weight: f64) {
    if weight.to_bits() == 1.0_f64.to_bits() {
        out.push(b'1');
    } else {
        crate::jcs::write_canonical(out, &serde_json::Value::from(weight));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urns_are_plain_when_safe_and_hashed_otherwise() {
        assert_eq!(chunk_urn("memport", "chatgpt", "abc-1", "m_2"), "urn:aimem:memport:chatgpt.abc-1.m_2");
        let hashed = chunk_urn("memport", "chatgpt", "a b", "m");
        assert!(hashed.starts_with("urn:aimem:memport:chatgpt.h."));
        assert_eq!(hashed.len(), "urn:aimem:memport:chatgpt.h.".len() + 32);
        assert_ne!(chunk_urn("p", "chatgpt", "a.b", "c"), chunk_urn("p", "chatgpt", "a", "b.c"));
    }

    #[test]
    fn a_plain_conversation_has_the_prefix_of_its_chunks_and_a_hashed_one_none() {
        let prefix = conversation_urn_prefix("memport", "chatgpt", "abc-1").unwrap();
        assert_eq!(prefix, "urn:aimem:memport:chatgpt.abc-1.");
        assert!(chunk_urn("memport", "chatgpt", "abc-1", "m_2").starts_with(&prefix));
        assert_eq!(conversation_urn_prefix("memport", "chatgpt", "a b"), None);
        assert_eq!(conversation_urn_prefix("memport", "chatgpt", "a.b"), None);
        assert_eq!(conversation_urn_prefix("memport", "chatgpt", &"x".repeat(300)), None);
    }

    #[test]
    fn split_respects_code_points() {
        let text = "é".repeat(MAX_CHUNK_CODE_POINTS + 5);
        let pieces = split_content(&text);
        assert_eq!(pieces.len(), 2);
        assert_eq!(pieces[0].chars().count(), MAX_CHUNK_CODE_POINTS);
        assert_eq!(pieces[1].chars().count(), 5);
    }

    #[test]
    fn temporal_edges_keep_their_bytes_and_other_kinds_their_type_and_weight() {
        let mut out = Vec::new();
        write_edge(&mut out, b"{", TEMPORAL, "urn:aimem:p:a", "urn:aimem:p:b", 0);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#"{"created_at":"1970-01-01T00:00:00Z","edge_type":"temporal","source_id":"urn:aimem:p:a","target_id":"urn:aimem:p:b","weight":1}"#
        );
        let mut out = Vec::new();
        write_edge(&mut out, b"{", EdgeKind { edge_type: "x-custom", weight: 0.85 }, "a", "b", 0);
        assert!(String::from_utf8(out).unwrap().ends_with(r#""edge_type":"x-custom","source_id":"a","target_id":"b","weight":0.85}"#));
    }

    #[test]
    fn tags_are_lowercase_and_bounded() {
        assert_eq!(tag_for("conv-", "AB_c"), "conv-ab-c");
        assert_eq!(tag_for("conv-", &"x".repeat(100)).len(), MAX_TAG_LENGTH);
    }
}
