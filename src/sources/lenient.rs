//! Lenient serde helpers: a field of the wrong JSON type reads as absent instead of failing
//! the whole record.
//!
//! Provider exports change shape between eras, so a conversation must not be rejected because
//! one message has, say, a string where a number was expected. Policies then decide what an
//! absent field means (a message without `author.role` is rejected on its own).

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// Visitor methods that drain containers and answer `None` for every other JSON kind.
macro_rules! ignore_non_matching {
    () => {
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Ok(None)
        }
        ignore_containers!();
    };
}

/// Visitor methods that drain arrays and objects and answer `None` (also for `null`).
macro_rules! ignore_containers {
    () => {
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok(None)
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok(None)
        }
    };
}

/// Reads a string, borrowing from the input when it has no escapes; any other JSON is `None`.
pub fn string<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Cow<'de, str>>, D::Error> {
    deserializer.deserialize_any(StringVisitor)
}

struct StringVisitor;

impl<'de> Visitor<'de> for StringVisitor {
    type Value = Option<Cow<'de, str>>;
    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("any JSON value")
    }
    fn visit_borrowed_str<E: de::Error>(self, value: &'de str) -> Result<Self::Value, E> {
        Ok(Some(Cow::Borrowed(value)))
    }
    fn visit_str<E: de::Error>(self, value: &str) -> Result<Self::Value, E> {
        Ok(Some(Cow::Owned(value.to_owned())))
    }
    fn visit_string<E: de::Error>(self, value: String) -> Result<Self::Value, E> {
        Ok(Some(Cow::Owned(value)))
    }
    ignore_non_matching!();
}

/// Reads a string and hands it to `convert` where the parser holds it, so a string the parser
/// had to unescape (into its scratch buffer) is not copied into a `String` of its own first;
/// any other JSON is `None`.
pub fn converted_string<'de, D: Deserializer<'de>, T>(deserializer: D, convert: fn(&str) -> T) -> Result<Option<T>, D::Error> {
    deserializer.deserialize_any(ConvertedStringVisitor(convert))
}

struct ConvertedStringVisitor<T>(fn(&str) -> T);

impl<'de, T> Visitor<'de> for ConvertedStringVisitor<T> {
    type Value = Option<T>;
    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("any JSON value")
    }
    fn visit_str<E: de::Error>(self, value: &str) -> Result<Self::Value, E> {
        Ok(Some((self.0)(value)))
    }
    ignore_non_matching!();
}

/// Reads a number as `f64`; any other JSON is `None`.
pub fn number<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<f64>, D::Error> {
    deserializer.deserialize_any(NumberVisitor)
}

struct NumberVisitor;

impl<'de> Visitor<'de> for NumberVisitor {
    type Value = Option<f64>;
    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("any JSON value")
    }
    fn visit_f64<E: de::Error>(self, value: f64) -> Result<Self::Value, E> {
        Ok(Some(value))
    }
    fn visit_i64<E: de::Error>(self, value: i64) -> Result<Self::Value, E> {
        Ok(Some(value as f64))
    }
    fn visit_u64<E: de::Error>(self, value: u64) -> Result<Self::Value, E> {
        Ok(Some(value as f64))
    }
    fn visit_borrowed_str<E: de::Error>(self, _: &'de str) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(None)
    }
    ignore_containers!();
}

/// Reads `true`/`false`; any other JSON is `None`.
pub fn boolean<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<bool>, D::Error> {
    deserializer.deserialize_any(BoolVisitor)
}

struct BoolVisitor;

impl<'de> Visitor<'de> for BoolVisitor {
    type Value = Option<bool>;
    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("any JSON value")
    }
    fn visit_bool<E: de::Error>(self, value: bool) -> Result<Self::Value, E> {
        Ok(Some(value))
    }
    fn visit_borrowed_str<E: de::Error>(self, _: &'de str) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(None)
    }
    ignore_containers!();
}

/// A string list item read leniently: anything but a string is `None`.
#[derive(Debug, Default)]
pub struct Text<'a>(pub Option<Cow<'a, str>>);

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        string(deserializer).map(Text)
    }
}

/// An object read as `T` (whose fields should all be lenient); any other JSON is `Invalid`,
/// and `null` is `Null`, so callers can tell "absent" from "wrong shape".
#[derive(Debug, Default)]
pub enum Object<T> {
    /// The key was absent.
    #[default]
    Absent,
    /// The value was `null`.
    Null,
    /// The value was not an object.
    Invalid,
    /// The value, read.
    Present(T),
}

impl<T> Object<T> {
    /// The value when it was an object.
    pub fn as_ref(&self) -> Option<&T> {
        match self {
            Object::Present(value) => Some(value),
            _ => None,
        }
    }

    /// The value when it was an object, to change.
    pub fn as_mut(&mut self) -> Option<&mut T> {
        match self {
            Object::Present(value) => Some(value),
            _ => None,
        }
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Object<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ObjectVisitor(PhantomData))
    }
}

struct ObjectVisitor<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for ObjectVisitor<T> {
    type Value = Object<T>;
    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("any JSON value")
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        T::deserialize(de::value::MapAccessDeserializer::new(map)).map(Object::Present)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Object::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Object::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Object::Invalid)
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Object::Invalid)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Object::Invalid)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(Object::Invalid)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(Object::Invalid)
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Ok(Object::Invalid)
    }
}

/// A list read element by element with `T`; any other JSON is an empty list.
#[derive(Debug)]
pub struct List<T>(pub Vec<T>);

impl<T> Default for List<T> {
    fn default() -> Self {
        List(Vec::new())
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for List<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(match ArrayField::deserialize(deserializer)? {
            ArrayField::Array(items) => List(items),
            ArrayField::Not(_) => List(Vec::new()),
        })
    }
}

/// A field that must hold an array: its elements, each read with `T`, or the kind of JSON
/// value found instead. [`List`] reads any other value as an empty list, which is right for
/// lists inside a message but not for the list that holds the messages: a `chat_messages`
/// object would pass for a conversation without messages (0 messages, no reject), so this
/// keeps what was there for the decoder to name. Grok's `responses` use it too.
#[derive(Debug)]
pub enum ArrayField<T> {
    /// The elements, in order.
    Array(Vec<T>),
    /// What the field held instead, for people: "an object", "a string", ….
    Not(&'static str),
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for ArrayField<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ArrayFieldVisitor(PhantomData))
    }
}

struct ArrayFieldVisitor<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for ArrayFieldVisitor<T> {
    type Value = ArrayField<T>;
    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("any JSON value")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
        while let Some(item) = seq.next_element::<T>()? {
            items.push(item);
        }
        Ok(ArrayField::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(ArrayField::Not("an object"))
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Ok(ArrayField::Not("a string"))
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(ArrayField::Not("a boolean"))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(ArrayField::Not("a number"))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(ArrayField::Not("a number"))
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(ArrayField::Not("a number"))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(ArrayField::Not("null"))
    }
    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(ArrayField::Not("null"))
    }
}

/// A JSON object read into a `Vec` of entries in file order (serde maps lose the order, and
/// ChatGPT's `mapping` order is the tie-breaker for roots and newest leaves).
#[derive(Debug)]
pub struct OrderedEntries<'de, T>(pub Vec<(Cow<'de, str>, T)>);

impl<'de: 'a, 'a, T: Deserialize<'de>> Deserialize<'de> for OrderedEntries<'a, T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(EntriesVisitor(PhantomData))
    }
}

struct EntriesVisitor<'a, T>(PhantomData<(&'a (), T)>);

/// A map key as a `Cow` that borrows when the key has no escapes.
struct Key<'a>(Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Key<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match string(deserializer)? {
            Some(text) => Ok(Key(text)),
            None => Err(de::Error::custom("object key is not a string")),
        }
    }
}

impl<'de: 'a, 'a, T: Deserialize<'de>> Visitor<'de> for EntriesVisitor<'a, T> {
    type Value = OrderedEntries<'a, T>;
    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("an object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(0).min(4096));
        while let Some(Key(key)) = map.next_key::<Key<'a>>()? {
            entries.push((key, map.next_value::<T>()?));
        }
        Ok(OrderedEntries(entries))
    }
}
