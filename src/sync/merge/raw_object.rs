//! A JSON object read as its members in file order, each value kept as the bytes it was written
//! with: what a merge passes through keeps its key order and formatting, so a merged store is
//! written as `memport convert --to pam` writes one.

use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::jcs::write_string;

/// One member's value.
#[derive(Debug)]
pub(super) enum Member {
    /// The value as written.
    Raw(Box<RawValue>),
    /// An array read item by item (a member the reader was asked to split), written back one
    /// item per line as the PAM sink writes its long arrays.
    Items(Vec<Box<RawValue>>),
}

/// An object's members in file order.
#[derive(Debug, Default)]
pub(super) struct RawObject {
    /// Name and value of each member, in the order read (or set).
    pub(super) members: Vec<(String, Member)>,
}

/// Reads an object, splitting the members named in `split` into their items.
struct ObjectSeed<'a> {
    split: &'a [&'a str],
}

impl<'de> DeserializeSeed<'de> for ObjectSeed<'_> {
    type Value = RawObject;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<RawObject, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for ObjectSeed<'_> {
    type Value = RawObject;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawObject, A::Error> {
        let mut members = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = if self.split.contains(&key.as_str()) { Member::Items(map.next_value()?) } else { Member::Raw(map.next_value()?) };
            members.push((key, value));
        }
        Ok(RawObject { members })
    }
}

impl RawObject {
    /// Reads the object in `bytes`; the members named in `split` must be arrays and are read
    /// item by item.
    ///
    /// # Errors
    /// When `bytes` is not one JSON object (or a split member is not an array).
    pub(super) fn parse(bytes: &[u8], split: &[&str]) -> Result<RawObject, serde_json::Error> {
        let mut deserializer = serde_json::Deserializer::from_slice(bytes);
        let object = ObjectSeed { split }.deserialize(&mut deserializer)?;
        deserializer.end()?;
        Ok(object)
    }

    /// Reads the object `raw` holds, splitting nothing.
    ///
    /// # Errors
    /// When `raw` is not an object.
    pub(super) fn parse_raw(raw: &RawValue) -> Result<RawObject, serde_json::Error> {
        RawObject::parse(raw.get().as_bytes(), &[])
    }

    /// The value of the first member named `key`, when it is kept as written.
    pub(super) fn raw(&self, key: &str) -> Option<&RawValue> {
        self.members.iter().find(|(name, _)| name == key).and_then(|(_, member)| match member {
            Member::Raw(raw) => Some(&**raw),
            Member::Items(_) => None,
        })
    }

    /// The value of member `key`, parsed; `None` when it is missing or split.
    pub(super) fn value(&self, key: &str) -> Option<Value> {
        self.raw(key).and_then(|raw| serde_json::from_str(raw.get()).ok())
    }

    /// Member `key` as a string, when it is one.
    pub(super) fn string(&self, key: &str) -> Option<String> {
        self.raw(key).and_then(|raw| serde_json::from_str::<String>(raw.get()).ok())
    }

    /// The strings of the array member `key` (other items left out); empty when it is missing.
    pub(super) fn strings(&self, key: &str) -> Vec<String> {
        match self.value(key) {
            Some(Value::Array(items)) => {
                items.into_iter().filter_map(|item| if let Value::String(text) = item { Some(text) } else { None }).collect()
            }
            _ => Vec::new(),
        }
    }

    /// Takes the items of the split member `key`, leaving it empty in its place.
    pub(super) fn take_items(&mut self, key: &str) -> Vec<Box<RawValue>> {
        for (name, member) in &mut self.members {
            if name.as_str() == key
                && let Member::Items(items) = member
            {
                return std::mem::take(items);
            }
        }
        Vec::new()
    }

    /// Sets member `key` to `value`: in its place when it is there, else after the first of
    /// `after` that is there, else last.
    pub(super) fn set(&mut self, key: &str, value: Member, after: &[&str]) {
        if let Some(slot) = self.members.iter_mut().find(|(name, _)| name == key) {
            slot.1 = value;
            return;
        }
        let position = after
            .iter()
            .find_map(|earlier| self.members.iter().position(|(name, _)| name == earlier))
            .map_or(self.members.len(), |position| position + 1);
        self.members.insert(position, (key.to_owned(), value));
    }

    /// Removes every member named `key`.
    pub(super) fn remove(&mut self, key: &str) {
        self.members.retain(|(name, _)| name != key);
    }

    /// Appends the object to `out`: compact, members in order, split members one item a line.
    pub(super) fn write(&self, out: &mut Vec<u8>) {
        out.push(b'{');
        for (position, (key, member)) in self.members.iter().enumerate() {
            if position > 0 {
                out.push(b',');
            }
            write_string(out, key);
            out.push(b':');
            match member {
                Member::Raw(raw) => out.extend_from_slice(raw.get().as_bytes()),
                Member::Items(items) => write_lines(out, items.iter().map(|item| item.get().as_bytes())),
            }
        }
        out.push(b'}');
    }

    /// The object as one compact value.
    ///
    /// # Errors
    /// Never for an object read by [`RawObject::parse`] (its parts are JSON already).
    pub(super) fn to_raw(&self) -> Result<Box<RawValue>, serde_json::Error> {
        let mut out = Vec::new();
        self.write(&mut out);
        RawValue::from_string(String::from_utf8_lossy(&out).into_owned())
    }
}

/// A compact value for `value`.
///
/// # Errors
/// Never for the plain values a merge sets (strings, numbers, lists of strings).
pub(super) fn raw_of<T: serde::Serialize + ?Sized>(value: &T) -> Result<Box<RawValue>, serde_json::Error> {
    serde_json::value::to_raw_value(value)
}

/// Appends `[`, each item on a line of its own, `]`: how the PAM sink writes the index,
/// relations, memories and messages.
pub(super) fn write_lines<'a>(out: &mut Vec<u8>, items: impl IntoIterator<Item = &'a [u8]>) {
    out.push(b'[');
    for (position, item) in items.into_iter().enumerate() {
        out.extend_from_slice(if position == 0 { b"\n" } else { b",\n" });
        out.extend_from_slice(item);
    }
    out.push(b']');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_keep_their_order_and_bytes_and_split_members_go_one_item_a_line() {
        let text = br#"{"schema":"x","id":"c1","title":null,"messages":[
{"id":"m1","n":1.50},
{"id":"m2"}]}"#;
        let mut object = RawObject::parse(text, &["messages"]).unwrap();
        assert_eq!(object.string("id").as_deref(), Some("c1"));
        assert_eq!(object.raw("title").map(RawValue::get), Some("null"));
        let mut out = Vec::new();
        object.write(&mut out);
        assert_eq!(out, text.to_vec(), "written back byte for byte");
        let messages = object.take_items("messages");
        assert_eq!(messages.len(), 2);
        object.set("tags", Member::Raw(raw_of(&["retracted"]).unwrap()), &["title"]);
        object.set("id", Member::Raw(raw_of("c2").unwrap()), &[]);
        object.remove("schema");
        let mut out = Vec::new();
        object.write(&mut out);
        assert_eq!(String::from_utf8(out).unwrap(), r#"{"id":"c2","title":null,"tags":["retracted"],"messages":[]}"#);
    }

    #[test]
    fn a_value_that_is_not_an_object_is_refused() {
        assert!(RawObject::parse(b"[1,2]", &[]).is_err());
        assert!(RawObject::parse(br#"{"messages":{}}"#, &["messages"]).is_err());
        assert!(RawObject::parse(br#"{"a":1} trailing"#, &[]).is_err());
    }
}
