//! The fields of a UMP record that memport reads, and a group of them read straight from the
//! grouping reader's bytes into borrowed strings.
//!
//! Reading a group into `serde_json::Value` first built a map per object and a string per
//! member, then threw them away: most of decoding a UMP file's time. [`Group::parse`] reads
//! only the members below, and gives up (returning `None`) on anything it would read otherwise
//! than the general reading does: a member of another type (an object where an array is, or
//! the reverse), a repeated member, a signed record (`integrity`, checked over its whole JSON),
//! a `consent.redact` list (paths deleted from the whole record) or the reader's error marks.
//! The caller then reads the group as a `Value` and takes the same fields from it with
//! [`Record::from_value`], so both ways give the same records.
//!
//! The one difference: the members memport does not read are skipped, not parsed (it reads an
//! extracted memory's own members of `body.structured`, `supersedes` and `superseded_by` too). A group the
//! general reading refuses whole only for such a member (a lone surrogate escape `\ud800` in
//! a string of it, a number beyond a double's range, nesting deeper than 128) is read; its
//! records lose nothing memport keeps.

use std::borrow::Cow;

use serde::Deserialize;
use std::marker::PhantomData;

use serde::de::value::MapAccessDeserializer;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use crate::model::{Provider, RetractedConversation};
use crate::timefmt::parse_rfc3339;

/// What memport reads of one UMP record.
#[derive(Debug, Default, Deserialize, PartialEq)]
pub struct Record<'a> {
    /// `id`.
    #[serde(borrow, default)]
    pub id: Option<Cow<'a, str>>,
    /// `kind`.
    #[serde(borrow, default)]
    pub kind: Option<Cow<'a, str>>,
    /// `body`.
    #[serde(borrow, default, deserialize_with = "object")]
    pub body: Option<Body<'a>>,
    /// `scope`.
    #[serde(borrow, default, deserialize_with = "object")]
    pub scope: Option<Scope<'a>>,
    /// `time`.
    #[serde(borrow, default, deserialize_with = "object")]
    pub time: Option<Time<'a>>,
    /// `provenance`.
    #[serde(borrow, default, deserialize_with = "object")]
    pub provenance: Option<Provenance<'a>>,
    /// `consent`.
    #[serde(default, deserialize_with = "object")]
    pub consent: Option<Consent>,
    /// `lifecycle`.
    #[serde(borrow, default, deserialize_with = "object")]
    pub lifecycle: Option<Lifecycle<'a>>,
    /// `relations`.
    #[serde(borrow, default, deserialize_with = "objects")]
    pub relations: Option<Vec<Relation<'a>>>,
    /// `supersedes`: record ids.
    #[serde(borrow, default)]
    pub supersedes: Option<Vec<Cow<'a, str>>>,
    /// `superseded_by`: record ids.
    #[serde(borrow, default)]
    pub superseded_by: Option<Vec<Cow<'a, str>>>,
    /// Whether the record has an `integrity` member (of any value).
    #[serde(default, deserialize_with = "present")]
    integrity: bool,
    /// Whether the reader marked the record as unreadable (`_record_error`).
    #[serde(default, rename = "_record_error", deserialize_with = "present")]
    record_error: bool,
    /// Whether the reader marked a framing error here (`_frame_error`).
    #[serde(default, rename = "_frame_error", deserialize_with = "present")]
    frame_error: bool,
}

/// `body`.
#[derive(Debug, Default, Deserialize, PartialEq)]
pub struct Body<'a> {
    /// `body.text`.
    #[serde(borrow, default)]
    pub text: Option<Cow<'a, str>>,
    /// `body.structured`. Boxed: a record is moved several times as it is read (out of each
    /// layer of its deserializer, into its group's vector), and its structured members are
    /// most of its size (copying records took 3% of a store export's CPU).
    #[serde(borrow, default, deserialize_with = "object")]
    pub structured: Option<Box<Structured<'a>>>,
}

/// `body.structured`: memport's own members.
#[derive(Debug, Default, Deserialize, PartialEq)]
pub struct Structured<'a> {
    /// The provider the record came from.
    #[serde(borrow, default)]
    pub source_kind: Option<Cow<'a, str>>,
    /// The conversation of a turn.
    #[serde(borrow, default)]
    pub conversation_id: Option<Cow<'a, str>>,
    /// The conversation's title.
    #[serde(borrow, default)]
    pub conversation_title: Option<Cow<'a, str>>,
    /// The zone a zoneless time was read in.
    #[serde(borrow, default)]
    pub assumed_time_zone: Option<Cow<'a, str>>,
    /// The message of a turn.
    #[serde(borrow, default)]
    pub message_id: Option<Cow<'a, str>>,
    /// The author's role.
    #[serde(borrow, default)]
    pub role: Option<Cow<'a, str>>,
    /// The model that wrote it.
    #[serde(borrow, default)]
    pub model: Option<Cow<'a, str>>,
    /// Reasoning rather than an answer.
    #[serde(default)]
    pub is_thought: Option<bool>,
    /// On the conversation's active thread.
    #[serde(default)]
    pub on_active_branch: Option<bool>,
    /// The turn's place in its conversation.
    #[serde(default)]
    pub turn_index: Option<u64>,
    /// A memory's own kind.
    #[serde(borrow, default)]
    pub memory_kind: Option<Cow<'a, str>>,
    /// A provider memory's id.
    #[serde(borrow, default)]
    pub provider_memory_id: Option<Cow<'a, str>>,
    /// A memory's labels.
    #[serde(borrow, default)]
    pub labels: Option<Vec<Cow<'a, str>>>,
    /// The conversation a sync retracted, on memport's tombstone of it.
    #[serde(borrow, default, deserialize_with = "object")]
    pub retracted_conversation: Option<RetractedMention<'a>>,
    /// The message a sync withdrew (erased from its memory store), on memport's tombstone of it.
    #[serde(borrow, default, deserialize_with = "object")]
    pub retracted_message: Option<RetractedMention<'a>>,
    /// An extracted memory's type in memport's taxonomy.
    #[serde(borrow, default)]
    pub memport_type: Option<Cow<'a, str>>,
    /// The slot it fills.
    #[serde(borrow, default)]
    pub slot: Option<Cow<'a, str>>,
    /// The value as first said.
    #[serde(borrow, default)]
    pub value: Option<Cow<'a, str>>,
    /// The statement's language.
    #[serde(borrow, default)]
    pub language: Option<Cow<'a, str>>,
    /// How sure extraction is.
    #[serde(default)]
    pub confidence: Option<f64>,
    /// How many pieces of evidence there are.
    #[serde(default)]
    pub evidence_count: Option<u64>,
    /// When it was first said.
    #[serde(borrow, default)]
    pub first_seen: Option<Cow<'a, str>>,
    /// When it was last said.
    #[serde(borrow, default)]
    pub last_seen: Option<Cow<'a, str>>,
    /// A contact detail kept on request.
    #[serde(default)]
    pub personal: Option<bool>,
    /// Each place it was said.
    #[serde(borrow, default, deserialize_with = "objects")]
    pub evidence: Option<Vec<EvidenceMention<'a>>>,
    /// The entities it names.
    #[serde(borrow, default, deserialize_with = "objects")]
    pub entities: Option<Vec<EntityMention<'a>>>,
}

/// One of an extracted memory's `body.structured.evidence`.
#[derive(Debug, Default, Deserialize, PartialEq)]
pub struct EvidenceMention<'a> {
    /// The message's provider.
    #[serde(borrow, default)]
    pub provider: Option<Cow<'a, str>>,
    /// Its conversation.
    #[serde(borrow, default)]
    pub conversation_id: Option<Cow<'a, str>>,
    /// The message.
    #[serde(borrow, default)]
    pub message_id: Option<Cow<'a, str>>,
    /// The sentence's byte span in the message text.
    #[serde(default)]
    pub span: Option<Vec<u64>>,
    /// The sentence.
    #[serde(borrow, default)]
    pub quote: Option<Cow<'a, str>>,
    /// When it was said.
    #[serde(borrow, default)]
    pub said_at: Option<Cow<'a, str>>,
}

/// One of an extracted memory's `body.structured.entities`.
#[derive(Debug, Default, Deserialize, PartialEq)]
pub struct EntityMention<'a> {
    /// Its id.
    #[serde(borrow, default)]
    pub id: Option<Cow<'a, str>>,
    /// Its name.
    #[serde(borrow, default)]
    pub name: Option<Cow<'a, str>>,
    /// Its kind.
    #[serde(borrow, default)]
    pub kind: Option<Cow<'a, str>>,
}

/// `body.structured.retracted_conversation`.
#[derive(Debug, Default, Deserialize, PartialEq)]
pub struct RetractedMention<'a> {
    /// The conversation's provider.
    #[serde(borrow, default)]
    pub provider: Option<Cow<'a, str>>,
    /// Its id.
    #[serde(borrow, default)]
    pub conversation_id: Option<Cow<'a, str>>,
    /// Its title, when known.
    #[serde(borrow, default)]
    pub title: Option<Cow<'a, str>>,
    /// When it started, when known.
    #[serde(borrow, default)]
    pub created_at: Option<Cow<'a, str>>,
    /// The run that retracted it.
    #[serde(borrow, default)]
    pub retracted_by: Option<Cow<'a, str>>,
    /// The message withdrawn (`retracted_message` only).
    #[serde(borrow, default)]
    pub message_id: Option<Cow<'a, str>>,
}

/// `scope`.
#[derive(Debug, Default, Deserialize, PartialEq)]
pub struct Scope<'a> {
    /// `scope.agent`.
    #[serde(borrow, default)]
    pub agent: Option<Cow<'a, str>>,
}

/// `time`.
#[derive(Debug, Default, Deserialize, PartialEq)]
pub struct Time<'a> {
    /// `time.created`.
    #[serde(borrow, default)]
    pub created: Option<Cow<'a, str>>,
}

/// `provenance`.
#[derive(Debug, Default, Deserialize, PartialEq)]
pub struct Provenance<'a> {
    /// `provenance.source`.
    #[serde(borrow, default, deserialize_with = "object")]
    pub source: Option<Source<'a>>,
}

/// `provenance.source`.
#[derive(Debug, Default, Deserialize, PartialEq)]
pub struct Source<'a> {
    /// `provenance.source.provider`.
    #[serde(borrow, default)]
    pub provider: Option<Cow<'a, str>>,
}

/// `consent`.
#[derive(Debug, Default, Deserialize, PartialEq)]
pub struct Consent {
    /// `consent.exportable`.
    #[serde(default)]
    pub exportable: Option<bool>,
    /// Whether there is a `consent.redact` member (of any value).
    #[serde(default, deserialize_with = "present")]
    redact: bool,
}

/// `lifecycle`.
#[derive(Debug, Default, Deserialize, PartialEq)]
pub struct Lifecycle<'a> {
    /// `lifecycle.status`: `active`, `candidate` or `tombstoned`.
    #[serde(borrow, default)]
    pub status: Option<Cow<'a, str>>,
}

/// One of `relations`.
#[derive(Debug, Default, Deserialize, PartialEq)]
pub struct Relation<'a> {
    /// `type`.
    #[serde(borrow, default, rename = "type")]
    pub kind: Option<Cow<'a, str>>,
    /// `target`.
    #[serde(borrow, default)]
    pub target: Option<Cow<'a, str>>,
}

/// `T` read from a JSON object only. sonic-rs also fills a struct from an array, member by
/// member in order, where the general reading finds no member at all.
struct Object<T>(T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Object<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ObjectVisitor<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for ObjectVisitor<T> {
            type Value = Object<T>;
            fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
                formatter.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Object<T>, A::Error> {
                T::deserialize(MapAccessDeserializer::new(map)).map(Object)
            }
        }
        deserializer.deserialize_map(ObjectVisitor(PhantomData))
    }
}

/// A member that must be an object (or `null`).
fn object<'de, D: Deserializer<'de>, T: Deserialize<'de>>(deserializer: D) -> Result<Option<T>, D::Error> {
    Ok(Option::<Object<T>>::deserialize(deserializer)?.map(|object| object.0))
}

/// A member that must be an array of objects (or `null`).
fn objects<'de, D: Deserializer<'de>, T: Deserialize<'de>>(deserializer: D) -> Result<Option<Vec<T>>, D::Error> {
    Ok(Option::<Vec<Object<T>>>::deserialize(deserializer)?.map(|items| items.into_iter().map(|item| item.0).collect()))
}

/// Reads any value and says it was there.
fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<bool, D::Error> {
    IgnoredAny::deserialize(deserializer)?;
    Ok(true)
}

/// The string at `value`, borrowed; `None` for any other value.
fn text(value: &Value) -> Option<Cow<'_, str>> {
    value.as_str().map(Cow::Borrowed)
}

impl<'a> Record<'a> {
    /// The same fields read from a record parsed whole, as the general reading takes them: a
    /// member of another type counts as absent, a list keeps its strings.
    pub fn from_value(record: &'a Value) -> Record<'a> {
        // memport's tombstone of a retracted conversation or a withdrawn message: what it names.
        fn mention(listed: &Value) -> Option<RetractedMention<'_>> {
            listed.as_object().map(|_| RetractedMention {
                provider: text(&listed["provider"]),
                conversation_id: text(&listed["conversation_id"]),
                title: text(&listed["title"]),
                created_at: text(&listed["created_at"]),
                retracted_by: text(&listed["retracted_by"]),
                message_id: text(&listed["message_id"]),
            })
        }
        fn evidence(listed: &Value) -> Option<EvidenceMention<'_>> {
            listed.as_object().map(|_| EvidenceMention {
                provider: text(&listed["provider"]),
                conversation_id: text(&listed["conversation_id"]),
                message_id: text(&listed["message_id"]),
                span: listed["span"].as_array().map(|span| span.iter().filter_map(Value::as_u64).collect()),
                quote: text(&listed["quote"]),
                said_at: text(&listed["said_at"]),
            })
        }
        fn entity(listed: &Value) -> Option<EntityMention<'_>> {
            listed.as_object().map(|_| EntityMention { id: text(&listed["id"]), name: text(&listed["name"]), kind: text(&listed["kind"]) })
        }
        let body = &record["body"];
        let structured = &body["structured"];
        let strings = |value: &'a Value| value.as_array().map(|items| items.iter().filter_map(text).collect());
        Record {
            id: text(&record["id"]),
            kind: text(&record["kind"]),
            body: Some(Body {
                text: text(&body["text"]),
                structured: Some(Box::new(Structured {
                    source_kind: text(&structured["source_kind"]),
                    conversation_id: text(&structured["conversation_id"]),
                    conversation_title: text(&structured["conversation_title"]),
                    assumed_time_zone: text(&structured["assumed_time_zone"]),
                    message_id: text(&structured["message_id"]),
                    role: text(&structured["role"]),
                    model: text(&structured["model"]),
                    is_thought: structured["is_thought"].as_bool(),
                    on_active_branch: structured["on_active_branch"].as_bool(),
                    turn_index: structured["turn_index"].as_u64(),
                    memory_kind: text(&structured["memory_kind"]),
                    provider_memory_id: text(&structured["provider_memory_id"]),
                    labels: strings(&structured["labels"]),
                    retracted_conversation: mention(&structured["retracted_conversation"]),
                    retracted_message: mention(&structured["retracted_message"]),
                    memport_type: text(&structured["memport_type"]),
                    slot: text(&structured["slot"]),
                    value: text(&structured["value"]),
                    language: text(&structured["language"]),
                    confidence: structured["confidence"].as_f64(),
                    evidence_count: structured["evidence_count"].as_u64(),
                    first_seen: text(&structured["first_seen"]),
                    last_seen: text(&structured["last_seen"]),
                    personal: structured["personal"].as_bool(),
                    evidence: structured["evidence"].as_array().map(|items| items.iter().filter_map(evidence).collect()),
                    entities: structured["entities"].as_array().map(|items| items.iter().filter_map(entity).collect()),
                })),
            }),
            scope: Some(Scope { agent: text(&record["scope"]["agent"]) }),
            time: Some(Time { created: text(&record["time"]["created"]) }),
            provenance: Some(Provenance { source: Some(Source { provider: text(&record["provenance"]["source"]["provider"]) }) }),
            consent: Some(Consent { exportable: record["consent"]["exportable"].as_bool(), redact: false }),
            lifecycle: Some(Lifecycle { status: text(&record["lifecycle"]["status"]) }),
            // Only a relation's type and target are read; one that is not an object has neither.
            relations: record["relations"].as_array().map(|relations| {
                relations.iter().map(|relation| Relation { kind: text(&relation["type"]), target: text(&relation["target"]) }).collect()
            }),
            supersedes: strings(&record["supersedes"]),
            superseded_by: strings(&record["superseded_by"]),
            integrity: false,
            record_error: false,
            frame_error: false,
        }
    }

    /// `body.structured`, empty when absent.
    pub fn structured(&self) -> &Structured<'a> {
        static NONE: Structured<'static> = Structured {
            source_kind: None,
            conversation_id: None,
            conversation_title: None,
            assumed_time_zone: None,
            message_id: None,
            role: None,
            model: None,
            is_thought: None,
            on_active_branch: None,
            turn_index: None,
            memory_kind: None,
            provider_memory_id: None,
            labels: None,
            retracted_conversation: None,
            retracted_message: None,
            memport_type: None,
            slot: None,
            value: None,
            language: None,
            confidence: None,
            evidence_count: None,
            first_seen: None,
            last_seen: None,
            personal: None,
            evidence: None,
            entities: None,
        };
        self.body.as_ref().and_then(|body| body.structured.as_deref()).unwrap_or(&NONE)
    }

    /// `body.text`.
    pub fn text(&self) -> Option<&str> {
        self.body.as_ref().and_then(|body| body.text.as_deref())
    }

    /// `time.created`.
    pub fn created(&self) -> Option<&str> {
        self.time.as_ref().and_then(|time| time.created.as_deref())
    }

    /// `scope.agent`.
    pub fn agent(&self) -> Option<&str> {
        self.scope.as_ref().and_then(|scope| scope.agent.as_deref())
    }

    /// `provenance.source.provider`.
    pub fn source_provider(&self) -> Option<&str> {
        self.provenance.as_ref().and_then(|provenance| provenance.source.as_ref()).and_then(|source| source.provider.as_deref())
    }

    /// False only when the owner marked the record as not for export.
    pub fn exportable(&self) -> bool {
        self.consent.as_ref().and_then(|consent| consent.exportable) != Some(false)
    }

    /// Whether the record was forgotten (`lifecycle.status: tombstoned`, UMP §3's `forget`).
    pub fn tombstoned(&self) -> bool {
        self.lifecycle.as_ref().and_then(|lifecycle| lifecycle.status.as_deref()) == Some("tombstoned")
    }

    /// Whether the record is memport's tombstone of a conversation a sync retracted or of a
    /// message it withdrew (tombstoned, with `body.structured.retracted_conversation` or
    /// `retracted_message`), readable or not.
    pub fn names_a_retraction(&self) -> bool {
        let structured = self.structured();
        self.tombstoned() && (structured.retracted_conversation.is_some() || structured.retracted_message.is_some())
    }

    /// The retraction memport's tombstone of a conversation stands for (a tombstoned record
    /// naming provider, conversation and retracting run), retracted at its `time.created`; or
    /// the withdrawal of the one message its tombstone of a message names.
    pub fn retraction(&self) -> Option<RetractedConversation> {
        let structured = self.structured();
        let (listed, of_message) = match (&structured.retracted_conversation, &structured.retracted_message) {
            (Some(listed), _) => (listed, false),
            (None, Some(listed)) => (listed, true),
            (None, None) => return None,
        };
        if !self.tombstoned() {
            return None;
        }
        let text = |value: &Option<Cow<'a, str>>| value.as_deref().filter(|text| !text.is_empty()).map(str::to_owned);
        Some(RetractedConversation {
            provider: Provider::named(&text(&listed.provider)?),
            conversation_id: text(&listed.conversation_id)?,
            title: text(&listed.title),
            created_at: listed.created_at.as_deref().and_then(parse_rfc3339),
            retracted_by: text(&listed.retracted_by)?,
            retracted_at: self.created().and_then(parse_rfc3339)?,
            messages: if of_message { vec![text(&listed.message_id)?] } else { Vec::new() },
        })
    }

    /// The target of the first `depends_on` relation, when it is a string.
    pub fn depends_on(&self) -> Option<&str> {
        let relation = self.relations.iter().flatten().find(|relation| relation.kind.as_deref() == Some("depends_on"))?;
        relation.target.as_deref()
    }

    /// `body.structured.labels`: its strings.
    pub fn labels(&self) -> Vec<String> {
        self.structured().labels.iter().flatten().map(|label| label.clone().into_owned()).collect()
    }

    /// Whether the general reading must read this record: what [`Group::parse`] does not.
    fn needs_whole_reading(&self) -> bool {
        self.integrity || self.record_error || self.frame_error || self.consent.as_ref().is_some_and(|consent| consent.redact)
    }
}

/// A group from the grouping reader (`[<offset>, <record>, …]`), read directly.
#[derive(Debug, Default)]
pub struct Group<'a> {
    /// Where the group starts in its file.
    pub offset: u64,
    /// Its records.
    pub records: Vec<Record<'a>>,
}

/// About the fewest bytes a record of a group takes: its records are counted from the group's
/// length at most so, for the vector they go in, which otherwise grows by doubling and copies
/// its records each time (a record read is some 600 bytes; 2% of a store export's CPU went to
/// those copies).
const LEAST_RECORD_BYTES: usize = 512;

impl<'a> Group<'a> {
    /// The group in `bytes`, or `None` where the general reading must read it (see the module's
    /// comment), the group has no record, or the bytes are not such a group.
    pub fn parse(bytes: &'a [u8]) -> Option<Group<'a>> {
        // Checked as `sonic_rs::from_slice` checks: no invalid UTF-8 anywhere.
        let text = std::str::from_utf8(bytes).ok()?;
        let mut deserializer = sonic_rs::Deserializer::from_str(text);
        let records = (bytes.len() / LEAST_RECORD_BYTES).clamp(1, 4096);
        let group = GroupVisitor { records }.deserialize(&mut deserializer).ok()?;
        deserializer.end().ok()?;
        if group.records.is_empty() || group.records.iter().any(Record::needs_whole_reading) {
            return None;
        }
        Some(group)
    }
}

/// Reads a group into a vector with room for about `records` records.
struct GroupVisitor {
    records: usize,
}

impl<'de> DeserializeSeed<'de> for GroupVisitor {
    type Value = Group<'de>;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Group<'de>, D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for GroupVisitor {
    type Value = Group<'de>;
    fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
        formatter.write_str("an offset and the records of a group")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Group<'de>, A::Error> {
        let offset = seq.next_element::<u64>()?.ok_or_else(|| serde::de::Error::custom("an empty group"))?;
        let mut records = Vec::with_capacity(seq.size_hint().unwrap_or(self.records));
        while let Some(Object(record)) = seq.next_element::<Object<Record<'de>>>()? {
            records.push(record);
        }
        Ok(Group { offset, records })
    }
}

/// What the grouping reader reads of a record to tell its conversation: read in one pass, where
/// looking each member up on its own skips the record's text once per member.
#[derive(Debug, Deserialize)]
pub struct GroupFields<'a> {
    /// `kind`.
    #[serde(borrow, default)]
    kind: Option<Cow<'a, str>>,
    /// `body`, for `body.structured`.
    #[serde(borrow, default, deserialize_with = "object")]
    body: Option<GroupBody<'a>>,
    /// `scope`.
    #[serde(borrow, default, deserialize_with = "object")]
    scope: Option<Scope<'a>>,
}

/// `body`, as [`GroupFields`] reads it.
#[derive(Debug, Deserialize)]
struct GroupBody<'a> {
    /// `body.structured`.
    #[serde(borrow, default, deserialize_with = "object")]
    structured: Option<GroupStructured<'a>>,
}

/// `body.structured`, as [`GroupFields`] reads it.
#[derive(Debug, Deserialize)]
struct GroupStructured<'a> {
    /// The conversation of a turn.
    #[serde(borrow, default)]
    conversation_id: Option<Cow<'a, str>>,
    /// The message of a turn.
    #[serde(borrow, default)]
    message_id: Option<Cow<'a, str>>,
}

impl<'a> GroupFields<'a> {
    /// The members of `record`, or `None` when it does not read as a record of these types
    /// (then each member is looked up on its own).
    pub fn parse(record: &'a [u8]) -> Option<GroupFields<'a>> {
        sonic_rs::from_slice::<Object<GroupFields>>(record).ok().map(|object| object.0)
    }

    /// `kind`.
    pub fn kind(&self) -> Option<&str> {
        self.kind.as_deref()
    }

    /// `body.structured.conversation_id`.
    pub fn conversation_id(&self) -> Option<&str> {
        self.structured().and_then(|structured| structured.conversation_id.as_deref())
    }

    /// `body.structured.message_id`.
    pub fn message_id(&self) -> Option<&str> {
        self.structured().and_then(|structured| structured.message_id.as_deref())
    }

    /// `scope.agent`.
    pub fn agent(&self) -> Option<&str> {
        self.scope.as_ref().and_then(|scope| scope.agent.as_deref())
    }

    fn structured(&self) -> Option<&GroupStructured<'a>> {
        self.body.as_ref().and_then(|body| body.structured.as_ref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Everything memport takes from a record, through the accessors.
    fn taken(record: &Record) -> String {
        let structured = record.structured();
        format!(
            "{:?}",
            (
                (&record.id, &record.kind, record.text(), record.created(), record.agent(), record.source_provider()),
                (record.exportable(), record.depends_on(), record.labels()),
                (&structured.source_kind, &structured.conversation_id, &structured.conversation_title, &structured.assumed_time_zone),
                (&structured.message_id, &structured.role, &structured.model, structured.is_thought, structured.on_active_branch),
                (structured.turn_index, &structured.memory_kind, &structured.provider_memory_id),
                (record.tombstoned(), record.names_a_retraction(), record.retraction()),
            )
        )
    }

    /// `record` as the only record of a group.
    fn group_of(record: &str) -> Vec<u8> {
        format!("[7,{record}]").into_bytes()
    }

    #[test]
    fn a_plain_turn_reads_the_same_both_ways() {
        let record = r#"{"id":"urn:ump:a","kind":"episodic","body":{"text":"Hi \"there\"","structured":{"source_kind":"chatgpt",
            "conversation_id":"c","message_id":"m","role":"user","turn_index":3,"is_thought":false,"labels":["a","b"],"other":{"x":[1]}}},
            "scope":{"agent":"chatgpt"},"time":{"created":"2024-01-01T00:00:00Z"},"consent":{"exportable":false},
            "relations":[{"type":"derived_from","target":"x"},{"type":"depends_on","target":"urn:ump:p"}],"extra":null}"#;
        let bytes = group_of(record);
        let group = Group::parse(&bytes).unwrap();
        let value: Value = serde_json::from_str(record).unwrap();
        assert_eq!(group.offset, 7);
        assert_eq!(group.records.len(), 1);
        assert_eq!(taken(&group.records[0]), taken(&Record::from_value(&value)));
        let read = &group.records[0];
        assert_eq!(read.text(), Some("Hi \"there\""));
        assert_eq!(read.depends_on(), Some("urn:ump:p"));
        assert!(!read.exportable());
        assert_eq!(read.structured().turn_index, Some(3));
    }

    #[test]
    fn a_tombstone_of_a_retracted_conversation_reads_the_same_both_ways() {
        let record = r#"{"id":"urn:ump:t","kind":"episodic","body":{"text":"Conversation \"Plans\" was deleted.",
            "structured":{"retracted_conversation":{"provider":"chatgpt","conversation_id":"c0","title":"Plans",
            "created_at":"2024-01-01T00:00:00Z","retracted_by":"run-2"}}},"scope":{"agent":"chatgpt","session":"c0"},
            "time":{"created":"2024-02-01T00:00:00Z"},"lifecycle":{"status":"tombstoned"}}"#;
        let bytes = group_of(record);
        let group = Group::parse(&bytes).unwrap();
        let value: Value = serde_json::from_str(record).unwrap();
        assert_eq!(taken(&group.records[0]), taken(&Record::from_value(&value)));
        let retraction = group.records[0].retraction().unwrap();
        assert_eq!(
            (retraction.provider, retraction.conversation_id.as_str(), retraction.title.as_deref(), retraction.retracted_by.as_str()),
            (Provider::ChatGpt, "c0", Some("Plans"), "run-2")
        );
        assert_eq!(retraction.created_at, parse_rfc3339("2024-01-01T00:00:00Z"));
        assert_eq!(Some(retraction.retracted_at), parse_rfc3339("2024-02-01T00:00:00Z"));
        // Not tombstoned: no retraction; without a provider: named, but not readable.
        let active = record.replace("tombstoned", "active");
        let bytes = group_of(&active);
        assert_eq!(Group::parse(&bytes).unwrap().records[0].retraction(), None);
        let nameless = record.replace(r#""provider":"chatgpt","#, r#""provider":"","#);
        let bytes = group_of(&nameless);
        let read = &Group::parse(&bytes).unwrap().records[0];
        assert_eq!((read.names_a_retraction(), read.retraction()), (true, None));
    }

    #[test]
    fn a_tombstone_of_a_withdrawn_message_reads_the_same_both_ways_as_a_withdrawal_of_it() {
        let record = r#"{"id":"urn:ump:m","kind":"episodic","body":{"text":"A message was erased.",
            "structured":{"retracted_message":{"provider":"claude","conversation_id":"c0","message_id":"m7","retracted_by":"run-2"}}},
            "scope":{"agent":"claude","session":"c0"},"time":{"created":"2024-02-01T00:00:00Z"},"lifecycle":{"status":"tombstoned"}}"#;
        let bytes = group_of(record);
        let group = Group::parse(&bytes).unwrap();
        let value: Value = serde_json::from_str(record).unwrap();
        assert_eq!(taken(&group.records[0]), taken(&Record::from_value(&value)));
        let withdrawal = group.records[0].retraction().unwrap();
        assert_eq!(
            (withdrawal.provider, withdrawal.conversation_id.as_str(), withdrawal.messages.as_slice()),
            (Provider::Claude, "c0", &["m7".to_owned()][..])
        );
        // Without its message id it names a withdrawal that cannot be read.
        let nameless = record.replace(r#""message_id":"m7","#, "");
        let bytes = group_of(&nameless);
        let read = &Group::parse(&bytes).unwrap().records[0];
        assert_eq!((read.names_a_retraction(), read.retraction()), (true, None));
    }

    /// Guards the fast reading against reading a record otherwise than the general one: each of
    /// these sends the group to it.
    #[test]
    fn what_the_fast_reading_would_read_otherwise_goes_to_the_general_one() {
        for record in [
            r#"{"kind":5}"#,
            r#"{"body":{"structured":{"turn_index":-1}}}"#,
            r#"{"body":{"structured":{"turn_index":2.0}}}"#,
            r#"{"body":{"structured":{"labels":["a",1]}}}"#,
            r#"{"relations":{"type":"depends_on"}}"#,
            r#"{"relations":[5]}"#,
            r#"{"id":"a","id":"b"}"#,
            r#"{"integrity":null}"#,
            r#"{"consent":{"redact":[]}}"#,
            r#"{"_record_error":"unreadable"}"#,
            r#"{"_frame_error":"cut"}"#,
            r#"[1]"#,
            r#"["urn:x","semantic",{"text":"hi"},null,{"created":"2024-01-01T00:00:00Z"}]"#,
            r#"{"kind":"semantic","body":["hello"],"time":{"created":"2024-01-01T00:00:00Z"}}"#,
            r#"{"consent":[false]}"#,
            r#"{"relations":[["depends_on","urn:ump:p"]]}"#,
            r#"{"body":{"structured":["chatgpt","c"]}}"#,
        ] {
            assert!(Group::parse(&group_of(record)).is_none(), "{record}");
        }
    }

    #[test]
    fn the_group_members_are_read_in_one_pass_and_give_up_on_other_types() {
        let record = br#"{"kind":"episodic","body":{"text":"long \" text","structured":{"conversation_id":"c","message_id":"m"}},"scope":{"agent":"a"}}"#;
        let fields = GroupFields::parse(record).unwrap();
        assert_eq!(
            (fields.kind(), fields.conversation_id(), fields.message_id(), fields.agent()),
            (Some("episodic"), Some("c"), Some("m"), Some("a"))
        );
        for other in [
            &br#"{"kind":1}"#[..],
            br#"{"body":{"structured":5}}"#,
            br#"{"kind":"a","kind":"b"}"#,
            br#"["episodic",{"structured":{"conversation_id":"c","message_id":"m"}}]"#,
            br#"{"kind":"episodic","body":[{"conversation_id":"c","message_id":"m"}]}"#,
        ] {
            assert!(GroupFields::parse(other).is_none());
        }
    }

    #[test]
    fn a_record_read_whole_takes_a_member_of_another_type_as_absent() {
        let value: Value = serde_json::from_str(r#"{"kind":5,"body":{"structured":{"labels":["a",1],"turn_index":-1}}}"#).unwrap();
        let record = Record::from_value(&value);
        assert_eq!(record.kind, None);
        assert_eq!(record.labels(), ["a"]);
        assert_eq!(record.structured().turn_index, None);
    }
}
