//! One JSON object read from a stream without holding its large arrays (an AIMEM bundle's
//! chunks): [`scan`] keeps every other member and says which of the named arrays are there,
//! and [`for_each_item`], on a second read, hands each item of those arrays over in turn. The
//! object is parsed exactly as a whole `serde_json::Value` would be (the same parser, the same
//! depth limit, every string checked as UTF-8 and every number as in range, the last of a
//! repeated key winning), but for one thing: an object whose first key is serde_json's
//! raw-value token (`$serde_json::private::RawValue`) is read here as any other, where a parsed
//! value reads it in its own way. Only one item is held at a time.

use std::fmt;
use std::io::Read;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// What the first read found.
#[derive(Debug)]
pub enum Scan {
    /// The stream holds valid JSON that is not an object.
    NotAnObject,
    /// An object: its members other than the named arrays, and what each named key held.
    Object {
        /// The other members (the last of a repeated key).
        members: Map<String, Value>,
        /// By the position of the key in the names given to [`scan`].
        arrays: Vec<NamedMember>,
    },
}

/// One named key's occurrences in the object.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NamedMember {
    /// How many times the key occurs (0: absent).
    pub occurrences: usize,
    /// Whether its last occurrence, the one a parsed object keeps, is an array.
    pub last_is_array: bool,
}

/// Reads the JSON value of `reader` whole (to its end, as `serde_json::from_reader` does),
/// keeping the members that are not in `names` and only the shape of those that are.
///
/// # Errors
/// When the stream is not one valid JSON value (or cannot be read).
pub fn scan(reader: impl Read, names: &[&str]) -> serde_json::Result<Scan> {
    let mut deserializer = serde_json::Deserializer::from_reader(reader);
    let found = deserializer.deserialize_any(ScanVisitor { names })?;
    deserializer.end()?;
    Ok(found)
}

/// Reads the object of `reader` again, as [`scan`] found it (`arrays`), and calls `visit`
/// with each item of the named arrays' kept occurrences: the array's position in `names`, the
/// item's index and the item. Stops at the first error `visit` returns, and returns it.
///
/// # Errors
/// The outer error when the stream no longer parses as it did (it changed between the reads,
/// or cannot be read); the inner one is `visit`'s.
pub fn for_each_item<E>(
    reader: impl Read,
    names: &[&str],
    arrays: &[NamedMember],
    visit: &mut dyn FnMut(usize, usize, Value) -> Result<(), E>,
) -> serde_json::Result<Result<(), E>> {
    let mut deserializer = serde_json::Deserializer::from_reader(reader);
    let mut stopped = None;
    let read = deserializer.deserialize_any(ItemsVisitor { names, arrays, visit, stopped: &mut stopped });
    match (read, stopped) {
        (_, Some(error)) => Ok(Err(error)),
        (Err(error), None) => Err(error),
        (Ok(()), None) => deserializer.end().map(Ok),
    }
}

struct ScanVisitor<'a> {
    names: &'a [&'a str],
}

impl<'de> Visitor<'de> for ScanVisitor<'_> {
    type Value = Scan;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Scan, A::Error> {
        let mut members = Map::new();
        let mut arrays = vec![NamedMember::default(); self.names.len()];
        while let Some(key) = map.next_key::<String>()? {
            match self.names.iter().position(|name| *name == key) {
                Some(position) => {
                    let Checked { array } = map.next_value()?;
                    arrays[position].occurrences += 1;
                    arrays[position].last_is_array = array;
                }
                None => {
                    members.insert(key, map.next_value()?);
                }
            }
        }
        Ok(Scan::Object { members, arrays })
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Scan, A::Error> {
        CheckedVisitor.visit_seq(seq).map(|_| Scan::NotAnObject)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Scan, E> {
        Ok(Scan::NotAnObject)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Scan, E> {
        Ok(Scan::NotAnObject)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Scan, E> {
        Ok(Scan::NotAnObject)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Scan, E> {
        Ok(Scan::NotAnObject)
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Scan, E> {
        Ok(Scan::NotAnObject)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Scan, E> {
        Ok(Scan::NotAnObject)
    }
}

/// A value read as a `serde_json::Value` is, and dropped; only whether it was an array is
/// kept. `IgnoredAny` is no substitute: it skips a string without checking it is UTF-8 and an
/// exponent without checking the number is in range, so the second read would find what the
/// first let through.
struct Checked {
    array: bool,
}

impl<'de> de::Deserialize<'de> for Checked {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Checked, D::Error> {
        deserializer.deserialize_any(CheckedVisitor)
    }
}

struct CheckedVisitor;

impl<'de> Visitor<'de> for CheckedVisitor {
    type Value = Checked;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a JSON value")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Checked, A::Error> {
        while seq.next_element::<Checked>()?.is_some() {}
        Ok(Checked { array: true })
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Checked, A::Error> {
        while map.next_entry::<Checked, Checked>()?.is_some() {}
        Ok(Checked { array: false })
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Checked, E> {
        Ok(Checked { array: false })
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Checked, E> {
        Ok(Checked { array: false })
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Checked, E> {
        Ok(Checked { array: false })
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Checked, E> {
        Ok(Checked { array: false })
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Checked, E> {
        Ok(Checked { array: false })
    }

    fn visit_unit<E: de::Error>(self) -> Result<Checked, E> {
        Ok(Checked { array: false })
    }
}

struct ItemsVisitor<'a, 'v, E> {
    names: &'a [&'a str],
    arrays: &'a [NamedMember],
    visit: &'v mut dyn FnMut(usize, usize, Value) -> Result<(), E>,
    stopped: &'v mut Option<E>,
}

impl<'de, E> Visitor<'de> for ItemsVisitor<'_, '_, E> {
    type Value = ();

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("the object read before")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = vec![0usize; self.names.len()];
        while let Some(key) = map.next_key::<String>()? {
            let position = self.names.iter().position(|name| *name == key);
            let kept = position.filter(|&position| {
                seen[position] += 1;
                let member = self.arrays.get(position).copied().unwrap_or_default();
                member.last_is_array && seen[position] == member.occurrences
            });
            match kept {
                Some(position) => map.next_value_seed(ItemsSeed { position, visit: &mut *self.visit, stopped: &mut *self.stopped })?,
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

struct ItemsSeed<'v, E> {
    position: usize,
    visit: &'v mut dyn FnMut(usize, usize, Value) -> Result<(), E>,
    stopped: &'v mut Option<E>,
}

impl<'de, E> DeserializeSeed<'de> for ItemsSeed<'_, E> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de, E> Visitor<'de> for ItemsSeed<'_, E> {
    type Value = ();

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("an array")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut index = 0;
        while let Some(item) = seq.next_element::<Value>()? {
            if let Err(error) = (self.visit)(self.position, index, item) {
                *self.stopped = Some(error);
                return Err(de::Error::custom("stopped by the item's check"));
            }
            index += 1;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAMES: [&str; 2] = ["items", "more"];

    fn items_of(text: &str) -> (Scan, Vec<(usize, usize, Value)>) {
        let scanned = scan(text.as_bytes(), &NAMES).expect("valid JSON");
        let mut items = Vec::new();
        if let Scan::Object { arrays, .. } = &scanned {
            for_each_item::<()>(text.as_bytes(), &NAMES, arrays, &mut |position, index, item| {
                items.push((position, index, item));
                Ok(())
            })
            .expect("parses again")
            .expect("not stopped");
        }
        (scanned, items)
    }

    #[test]
    fn the_named_arrays_come_item_by_item_and_the_rest_as_members() {
        let (scanned, items) = items_of(r#"{"more":[{"a":1}],"name":"x","items":[1,[2],{"b":null}],"n":2.5}"#);
        let Scan::Object { members, arrays } = scanned else { panic!("an object") };
        assert_eq!(Value::Object(members), serde_json::json!({"name": "x", "n": 2.5}));
        assert_eq!(arrays, [NamedMember { occurrences: 1, last_is_array: true }; 2]);
        let expected =
            [(1, 0, serde_json::json!({"a": 1})), (0, 0, 1.into()), (0, 1, serde_json::json!([2])), (0, 2, serde_json::json!({"b": null}))];
        assert_eq!(items, expected);
    }

    #[test]
    fn a_repeated_key_keeps_its_last_occurrence_as_a_parsed_object_does() {
        let (scanned, items) = items_of(r#"{"items":[1,2],"name":"a","items":[3],"name":"b","more":[4],"more":{"x":[5]}}"#);
        let Scan::Object { members, arrays } = scanned else { panic!("an object") };
        assert_eq!(members.get("name"), Some(&Value::from("b")));
        assert_eq!(arrays[0], NamedMember { occurrences: 2, last_is_array: true });
        assert_eq!(arrays[1], NamedMember { occurrences: 2, last_is_array: false });
        assert_eq!(items, [(0, 0, Value::from(3))]);
    }

    #[test]
    fn other_values_are_not_objects_and_bad_json_is_an_error() {
        for text in ["[1,{\"items\":[]}]", "\"text\"", "3", "null", "true"] {
            assert!(matches!(scan(text.as_bytes(), &NAMES), Ok(Scan::NotAnObject)), "{text}");
        }
        let texts: [&[u8]; 10] = [
            b"{\"items\":[1,]}",
            b"{\"a\":1} trailing",
            b"",
            b"{\"items\":[1]",
            // What a `Value` refuses but a skipped value would let through: a string that is not
            // UTF-8 (in an item, a key of an item, a member of another shape, a top-level array)
            // and a number out of range.
            b"{\"items\":[\"\x9c\"]}",
            b"{\"items\":[{\"\x9c\":1}]}",
            b"{\"items\":{\"a\":\"\x9c\"}}",
            b"[\"\x9c\"]",
            b"{\"items\":[1e400]}",
            b"{\"more\":[[2e999]]}",
        ];
        for text in texts {
            let whole = serde_json::from_reader::<_, Value>(text).expect_err("invalid");
            let streamed = scan(text, &NAMES).expect_err("invalid");
            assert_eq!(streamed.to_string(), whole.to_string(), "{}", String::from_utf8_lossy(text));
        }
    }

    #[test]
    fn an_error_of_the_visit_stops_the_read_and_is_returned() {
        let text = r#"{"items":[1,2,3]}"#;
        let Ok(Scan::Object { arrays, .. }) = scan(text.as_bytes(), &NAMES) else { panic!("an object") };
        let mut seen = 0;
        let result = for_each_item(text.as_bytes(), &NAMES, &arrays, &mut |_, index, _| {
            seen += 1;
            if index == 1 { Err("second") } else { Ok(()) }
        });
        assert_eq!(result.expect("parses"), Err("second"));
        assert_eq!(seen, 2);
    }
}
