//! Extraction of what users say about themselves: typed memory candidates from the user's own
//! messages (never the assistant's, never pasted code, quotes or documents, never questions,
//! hypotheticals, role play or what others said), by rules in five languages, each with the
//! verbatim evidence span it came from. [`consolidate`] then merges the candidates of a history
//! into memories.
//!
//! The parts: [`sentences`] picks the user's own sentences, [`language`] tells their language,
//! [`filters`] drops sentences that are not self-statements, [`rules`] holds each language's
//! patterns, [`secrets`] keeps secrets out (and finds them for redaction).
//!
//! The conversion runs [`extract_conversation`] on the worker pool, one conversation at a time;
//! the collector consolidates in input order ([`consolidate`], evidence spilled to disk by
//! [`evidence_spool`]) and the memories, with the [`entities`] they name, go to every sink after
//! the last conversation.

pub mod consolidate;
pub mod entities;
pub mod evidence_spool;
pub mod filters;
pub mod language;
pub mod rule_gate;
pub mod rules;
pub mod secrets;
pub mod sentences;

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;

use crate::model::{Conversation, Disposition, Micros, Role};
use language::Language;

pub use crate::model::extracted::MemoryType;

/// One thing a user said about themselves, as found in one sentence.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// What kind of memory it is.
    pub memory_type: MemoryType,
    /// The slot it fills (`home`, `likes`, …).
    pub slot: &'static str,
    /// Whether a later different value of the slot supersedes this one.
    pub single_valued: bool,
    /// The value as said (`Leeds`).
    pub value: String,
    /// The statement about the user, in the sentence's language (`Lives in Leeds`).
    pub statement: String,
    /// The sentence's language.
    pub language: Language,
    /// How sure the rule is.
    pub confidence: f32,
    /// The message it came from.
    pub message_id: String,
    /// The message's position in its conversation (0 outside a conversation).
    pub message_index: usize,
    /// The sentence, verbatim: the evidence.
    pub evidence: String,
    /// The evidence's byte span in the message text.
    pub span: (usize, usize),
    /// When the message was written.
    pub time: Micros,
}

/// What extraction found in one conversation.
#[derive(Debug, Default)]
pub struct Extraction {
    /// The candidates, in message and sentence order.
    pub candidates: Vec<Candidate>,
    /// Candidates dropped because their sentence holds a secret.
    pub dropped_secret: u64,
}

/// Most words a value may have: longer captures are clauses, not values.
const MAX_VALUE_WORDS: usize = 10;

/// Extracts candidates from the user's written messages of `conversation`.
pub fn extract_conversation(conversation: &Conversation) -> Extraction {
    let mut extraction = Extraction::default();
    for (message_index, message) in conversation.messages.iter().enumerate() {
        if message.role != Role::User || message.is_thought || matches!(message.disposition, Disposition::Skip(_)) {
            continue;
        }
        let before = extraction.candidates.len();
        extract_message(&message.text, &message.id, message.created_at, &mut extraction);
        for candidate in &mut extraction.candidates[before..] {
            candidate.message_index = message_index;
        }
    }
    extraction
}

/// Extracts candidates from one user message's text.
pub fn extract_message(text: &str, message_id: &str, time: Micros, extraction: &mut Extraction) {
    // Most messages hold no rule's opening words anywhere: one pass over the text says so.
    if !rules::gate().may_match_in(text) {
        return;
    }
    let sentences = sentences::own_sentences(text);
    // The language is told from the user's own sentences, not from pasted code or documents,
    // and only once one of them gets through the gate: a message can pass the whole-message
    // pass on a rule's words inside a longer word or a pasted part, and then needs none.
    let mut languages: Option<Vec<Language>> = None;
    let mut wanted = Vec::new();
    for &sentence in &sentences {
        let as_written = sentence.text(text);
        // Typographic apostrophes read as plain ones ("J’ai 34 ans"); the evidence keeps the
        // sentence as written.
        let normalized = if as_written.contains('’') { Cow::Owned(as_written.replace('’', "'")) } else { Cow::Borrowed(as_written) };
        let lowercase = normalized.to_lowercase();
        // Only the rules whose opening words the sentence holds are run (most sentences hold
        // none of any rule's).
        if !rules::gate().rules_to_try(&lowercase, &mut wanted) {
            continue;
        }
        let languages = languages.get_or_insert_with(|| {
            let own_words: Vec<&str> = sentences.iter().map(|sentence| sentence.text(text)).collect();
            language::likely(&own_words.join(" "))
        });
        // Where the message's words leave several languages possible, each is tried in turn
        // until one finds something.
        for language in languages.iter() {
            let wanted = &wanted[rules::gate_range(*language)];
            if !wanted.contains(&true) {
                continue;
            }
            let before = extraction.candidates.len() + extraction.dropped_secret as usize;
            let read = SentenceRead { as_written, normalized: &normalized, span: sentence, language: *language, wanted };
            extract_sentence(&read, message_id, time, extraction);
            if extraction.candidates.len() + extraction.dropped_secret as usize > before {
                break;
            }
        }
    }
}

/// One sentence as the rules of one language read it.
struct SentenceRead<'a> {
    /// The sentence as written: the evidence.
    as_written: &'a str,
    /// With typographic apostrophes made plain: what the rules match.
    normalized: &'a str,
    /// Where it is in the message.
    span: sentences::Sentence,
    /// The language whose rules read it.
    language: Language,
    /// Which of those rules the gate let through.
    wanted: &'a [bool],
}

/// Extracts the candidates of one sentence, read with the rules of its language that the gate
/// let through.
fn extract_sentence(read: &SentenceRead<'_>, message_id: &str, time: Micros, extraction: &mut Extraction) {
    let (as_written, sentence_text, language, sentence) = (read.as_written, read.normalized, read.language, read.span);
    let Some(hedged) = filters::assess(as_written, language) else { return };
    // The value spans matched so far, by type: rules go from specific to general, and a later
    // rule of the same type may not take a value an earlier one took ("ich mag Tee nicht" is
    // a dislike, not also a like), while different facts of one type in one sentence ("I live
    // in Leeds and I work as a nurse") are all kept.
    let mut taken: Vec<(MemoryType, std::ops::Range<usize>)> = Vec::new();
    for (rule, _) in rules::of(language).iter().zip(read.wanted).filter(|(_, wanted)| **wanted) {
        let Some(captures) = rule.pattern().captures(sentence_text) else { continue };
        let Some(value_span) = captures.name("value").map(|value| value.range()) else { continue };
        if taken
            .iter()
            .any(|(memory_type, span)| *memory_type == rule.memory_type && span.start < value_span.end && value_span.start < span.end)
        {
            continue;
        }
        let Some(value) = captures.name("value").map(|value| without_time_phrase(value.as_str().trim(), language)) else { continue };
        if value.is_empty() || value.split_whitespace().count() > MAX_VALUE_WORDS || !is_a_value(value, rule.slot) {
            continue;
        }
        // A guess never replaces a current value ("maybe I'll move to Berlin").
        if hedged && rule.single_valued {
            continue;
        }
        taken.push((rule.memory_type, value_span));
        // Both forms, when they differ: the evidence keeps the sentence as written, where a
        // typographic apostrophe inside a password ("ab’cd1") does not cut it short as the
        // plain one does.
        if secrets::contains_secret(sentence_text) || (as_written != sentence_text && secrets::contains_secret(as_written)) {
            extraction.dropped_secret += 1;
            continue;
        }
        let mut relation = captures.name("rel").map_or(String::new(), |relation| relation.as_str().to_lowercase());
        if rule.template.starts_with("{rel}") {
            relation = capitalized(&relation);
        }
        let statement = rule.template.replace("{rel}", &relation).replace("{}", value);
        extraction.candidates.push(Candidate {
            memory_type: rule.memory_type,
            slot: rule.slot,
            single_valued: rule.single_valued,
            value: value.to_owned(),
            statement,
            language,
            confidence: if hedged { rule.confidence * 0.6 } else { rule.confidence },
            message_id: message_id.to_owned(),
            message_index: 0,
            evidence: as_written.to_owned(),
            span: (sentence.start, sentence.end),
            time,
        });
    }
}

/// Whether a captured value names something rather than pointing back or negating: "it",
/// "this", "mind" ("never mind"), "you" are no values, and a value that starts with a negation
/// ("kein Arzt", "no time") is no value of a positive slot (negative slots have rules of their
/// own, which come first).
fn is_a_value(value: &str, slot: &str) -> bool {
    const POINTERS: [&str; 24] = [
        "it",
        "this",
        "that",
        "these",
        "those",
        "there",
        "here",
        "mind",
        "you",
        "him",
        "her",
        "them",
        "he",
        "she",
        "they",
        "something",
        "nothing",
        "everything",
        "anything",
        "es",
        "das",
        "ça",
        "cela",
        "to",
    ];
    const NEGATIONS: [&str; 10] = ["kein", "keine", "keinen", "keinem", "nicht", "not", "no", "pas", "nada", "žádný"];
    let first = value.split_whitespace().next().unwrap_or("").to_lowercase();
    let negative_slot = matches!(slot, "dislikes" | "does_not_eat" | "pitfall");
    !POINTERS.contains(&first.as_str()) && (negative_slot || !NEGATIONS.contains(&first.as_str()))
}

/// A value without the time phrase that often ends it ("a nurse for ten years", "Berlin since
/// 2019", "Linux these days"): the memory keeps its first and last time of its own.
fn without_time_phrase(value: &str, language: Language) -> &str {
    let pattern = match language {
        Language::English => &*ENGLISH_TIME_PHRASE,
        Language::German => &*GERMAN_TIME_PHRASE,
        Language::French => &*FRENCH_TIME_PHRASE,
        Language::Spanish => &*SPANISH_TIME_PHRASE,
        Language::Czech => &*CZECH_TIME_PHRASE,
    };
    match pattern.find(value) {
        Some(phrase) if phrase.start() > 0 => value[..phrase.start()].trim_end(),
        _ => value,
    }
}

/// Builds a pattern of trailing time phrases.
fn time_phrase(alternatives: &str) -> Regex {
    #[expect(clippy::expect_used, reason = "the alternatives are literals, checked by the tests")]
    Regex::new(&format!(r"(?i)\s+(?:{alternatives})$")).expect("a valid time-phrase pattern")
}

static ENGLISH_TIME_PHRASE: LazyLock<Regex> = LazyLock::new(|| {
    time_phrase(
        r"for (?:\w+ )?(?:years?|months?|weeks?|days?|a while|ages)|since \S+|last (?:year|month|week|summer|winter|spring|autumn|fall)|(?:\w+ )?(?:years?|months?|weeks?) ago|a while ago|recently|these days|right now|at the moment|nowadays|for now|now",
    )
});
static GERMAN_TIME_PHRASE: LazyLock<Regex> = LazyLock::new(|| {
    time_phrase(r"seit \S+(?: \S+)?|letztes jahr|letzten monat|vor \S+ (?:jahren|monaten)|gerade|jetzt|derzeit|momentan|zurzeit")
});
static FRENCH_TIME_PHRASE: LazyLock<Regex> = LazyLock::new(|| time_phrase(r"depuis .+|maintenant|en ce moment|actuellement"));
static SPANISH_TIME_PHRASE: LazyLock<Regex> = LazyLock::new(|| time_phrase(r"desde hace .+|desde \S+|ahora|actualmente|en este momento"));
static CZECH_TIME_PHRASE: LazyLock<Regex> = LazyLock::new(|| time_phrase(r"od \S+|teď|momentálně|už \S+ let"));

/// `text` with its first letter in upper case.
fn capitalized(text: &str) -> String {
    let mut characters = text.chars();
    characters.next().map_or(String::new(), |first| first.to_uppercase().chain(characters).collect())
}

#[cfg(test)]
mod tests;
