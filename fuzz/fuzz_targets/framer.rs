#![no_main]
//! The JSON array framer (`sources::json_array::ArrayFramer`) in every mode: a top-level array,
//! the array under a member (`member_array`) or a member path (`member_path`), a member's value
//! (`member_value`), the whole document (`whole_document`), and an array whose elements keep only
//! some members (`keeping_members`, Gemini's key members).
//!
//! Besides never panicking, for each mode:
//!
//! - the same elements and the same error come out whether the input is read whole or in uneven
//!   pieces (escapes, quotes and brackets cut by a read);
//! - elements and elements skipped on their own are numbered 0, 1, 2, … in order, and there are
//!   never more of them than input bytes (framing always moves on);
//! - an element is exactly the input's bytes at its offset, after the previous one, and the
//!   framer has consumed exactly its end (all modes but `keeping_members`);
//! - after an error that ends framing, or after the end, the framer returns `Ok(None)`
//!   (documented);
//! - `keeping_members` frames the same elements at the same places as the plain array, each kept
//!   part is an object (`{}` for an element that is none), and where the element is a JSON
//!   object, the kept part parses as one whose members are among the wanted ones and present in
//!   the element.

use std::io::{Cursor, Read};

use libfuzzer_sys::fuzz_target;
use memport::sources::gemini::keys::KEY_MEMBERS;
use memport::sources::json_array::ArrayFramer;
use memport_fuzz::Trickle;
use serde_json::Value;

/// One thing framing gave.
#[derive(Debug, PartialEq)]
enum Item {
    /// An element: offset, index, bytes, and the bytes consumed once it was framed.
    Element(u64, u64, Vec<u8>, u64),
    /// An element skipped on its own (too large or too deep): offset and index.
    Skipped(u64, Option<u64>),
}

/// Everything framing gave, and the error that ended it, as text.
#[derive(Debug, Default, PartialEq)]
struct Framed {
    items: Vec<Item>,
    end: Option<String>,
}

fn frame<R: Read>(mode: &str, mut framer: ArrayFramer<R>, input_length: usize) -> Framed {
    let mut framed = Framed::default();
    loop {
        assert!(framed.items.len() <= input_length + 1, "{mode}: the framer returns more elements than the input has bytes");
        let mut bytes = Vec::new();
        match framer.next_element_into(&mut bytes) {
            Ok(Some((offset, index))) => framed.items.push(Item::Element(offset, index, bytes, framer.bytes_consumed())),
            Ok(None) => break,
            Err(error) if error.is_element_only() => framed.items.push(Item::Skipped(error.offset(), error.element_index())),
            Err(error) => {
                framed.end = Some(error.to_string());
                break;
            }
        }
    }
    assert!(matches!(framer.next_element_into(&mut Vec::new()), Ok(None)), "{mode}: the framer goes on after its end or an error");
    framed
}

/// The framers of every mode over one reader each.
fn framers<R: Read>(reader: impl Fn() -> R) -> Vec<(&'static str, ArrayFramer<R>)> {
    vec![
        ("array", ArrayFramer::new(reader())),
        ("member_array conversations", ArrayFramer::member_array(reader(), "conversations")),
        ("member_array a", ArrayFramer::member_array(reader(), "a")),
        ("member_path extensions.memport.memories", ArrayFramer::member_path(reader(), &["extensions", "memport", "memories"])),
        ("member_path a.b", ArrayFramer::member_path(reader(), &["a", "b"])),
        ("member_value vendor_extensions", ArrayFramer::member_value(reader(), "vendor_extensions")),
        ("whole_document", ArrayFramer::whole_document(reader())),
        ("keeping_members", ArrayFramer::new(reader()).keeping_members(&KEY_MEMBERS)),
    ]
}

fn check_numbering(mode: &str, framed: &Framed) {
    for (position, item) in framed.items.iter().enumerate() {
        let index = match item {
            Item::Element(_, index, _, _) => Some(*index),
            Item::Skipped(_, index) => *index,
        };
        assert_eq!(index, Some(position as u64), "{mode}: item {position} is numbered {index:?}");
    }
}

fn check_slices(mode: &str, input: &[u8], framed: &Framed) {
    let mut previous_end = 0u64;
    for item in &framed.items {
        let Item::Element(offset, index, bytes, consumed) = item else { continue };
        let end = offset + bytes.len() as u64;
        assert!(*offset >= previous_end, "{mode}: element {index} at byte {offset} starts before the previous one ended ({previous_end})");
        let in_input = usize::try_from(*offset).ok().and_then(|start| input.get(start..start + bytes.len()));
        assert!(in_input == Some(bytes.as_slice()), "{mode}: element {index} is not the input's bytes at {offset}..{end}");
        assert_eq!(*consumed, end, "{mode}: element {index} ends at byte {end} but the framer consumed {consumed} bytes");
        previous_end = end;
    }
}

fn check_kept(array: &Framed, keeping: &Framed) {
    assert_eq!(array.end, keeping.end, "keeping_members: framing ends differently from the plain array");
    assert_eq!(array.items.len(), keeping.items.len(), "keeping_members: a different number of elements from the plain array");
    let wanted: Vec<String> = KEY_MEMBERS.iter().map(|key| String::from_utf8_lossy(&key[1..key.len() - 1]).into_owned()).collect();
    for (plain, kept) in array.items.iter().zip(&keeping.items) {
        let (Item::Element(offset, index, element, consumed), Item::Element(kept_offset, kept_index, members, kept_consumed)) =
            (plain, kept)
        else {
            let describe = |item: &Item| match item {
                Item::Element(offset, index, _, _) => format!("element {index} at byte {offset}"),
                Item::Skipped(offset, index) => format!("element {index:?} at byte {offset}, skipped"),
            };
            assert!(plain == kept, "keeping_members: {} where the plain array has {}", describe(kept), describe(plain));
            continue;
        };
        assert_eq!(
            (offset, index, consumed),
            (kept_offset, kept_index, kept_consumed),
            "keeping_members: element {index} is at a different place from the plain array's"
        );
        assert!(members.starts_with(b"{") && members.ends_with(b"}"), "keeping_members: element {index}'s kept members are no object");
        match serde_json::from_slice::<Value>(element) {
            Ok(Value::Object(object)) => {
                let kept_object = match serde_json::from_slice::<Value>(members) {
                    Ok(Value::Object(kept_object)) => kept_object,
                    other => {
                        panic!("keeping_members: element {index} is a JSON object but its kept members do not parse as one: {other:?}")
                    }
                };
                for key in kept_object.keys() {
                    assert!(wanted.contains(key), "keeping_members: element {index} kept member {key:?}, which is not wanted");
                    assert!(object.contains_key(key), "keeping_members: element {index} kept member {key:?}, which it does not have");
                }
            }
            Ok(_) => assert_eq!(members.as_slice(), b"{}", "keeping_members: element {index} is no object but kept members"),
            Err(_) => {}
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let whole = framers(|| Cursor::new(data));
    let trickled = framers(|| Trickle::new(data.to_vec()));
    let mut array = None;
    for ((mode, framer), (_, trickle_framer)) in whole.into_iter().zip(trickled) {
        let framed = frame(mode, framer, data.len());
        let framed_in_pieces = frame(mode, trickle_framer, data.len());
        assert!(
            framed == framed_in_pieces,
            "{mode}: framing depends on how the input is read: {:?} against {:?}",
            framed.end,
            framed_in_pieces.end
        );
        check_numbering(mode, &framed);
        match mode {
            "keeping_members" => {
                if let Some(array) = &array {
                    check_kept(array, &framed);
                }
            }
            "array" => {
                check_slices(mode, data, &framed);
                array = Some(framed);
            }
            _ => check_slices(mode, data, &framed),
        }
    }
});
