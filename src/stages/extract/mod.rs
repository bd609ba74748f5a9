//! Extraction of what users say about themselves: typed memory candidates from the user's own
//! messages (never the assistant's, never pasted code, quotes, letters or documents, never
//! questions, hypotheticals, role play or what others said), by reading each clause of the
//! user's sentences in five languages ([`clause`]), each with the verbatim clause it came from
//! as its evidence. [`consolidate`] then merges the candidates of a history into memories.
//!
//! The parts: [`sentences`] picks the user's own sentences, [`language`] tells their language,
//! [`clause`] cuts them into clauses and reads each one's subject and verb into a third-person
//! statement, [`slots`] says which slots hold one value, [`secrets`] keeps secrets out (and
//! finds them for redaction).
//!
//! The conversion runs [`extract_conversation`] on the worker pool, one conversation at a time;
//! the collector consolidates in input order ([`consolidate`], evidence spilled to disk by
//! [`evidence_spool`]) and the memories, with the [`entities`] they name, go to every sink after
//! the last conversation.

pub mod answer;
pub mod clause;
pub mod consolidate;
pub mod echo;
pub mod entities;
pub mod evidence_spool;
pub mod gate;
pub mod language;
pub mod lowered;
pub mod polarity;
pub mod secrets;
pub mod sentences;
pub use crate::model::slots;
pub mod word_table;

use crate::model::{Conversation, Disposition, Micros, Role, SkipReason};
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
    /// How sure the reading is.
    pub confidence: f32,
    /// Whether the user said the value changed ("I moved to", "I now work at"): such a value
    /// of a single-valued slot supersedes the current one even when said once.
    pub change: bool,
    /// Whether the statement says something is not so ([`polarity::says_not`]): never the same
    /// memory as the statement without the negation.
    pub negated: bool,
    /// The message it came from.
    pub message_id: String,
    /// The message's position in its conversation (0 outside a conversation).
    pub message_index: usize,
    /// The clause, verbatim: the evidence.
    pub evidence: String,
    /// The evidence's byte span in the message text.
    pub span: (usize, usize),
    /// Whether the evidence holds no contact detail (it holds no secret: a candidate whose
    /// clause holds one is dropped), so its quote is written as it is.
    pub evidence_clean: bool,
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

/// Builds the patterns and tables extraction compiles on first use (the secret cues, the
/// contact-detail shapes, the relative times, the verb classes), so that a thread started with
/// the run can make them while the reader starts, instead of the first worker to need them
/// stopping to. Each is built once, by whoever asks first: calling this changes no result.
pub fn prepare() {
    secrets::contains_secret("");
    secrets::contacts::find("@ 0");
    for language in Language::ALL {
        clause::relative_times::is_only_a_time("", language);
        clause::verbs::class_of(language, "");
    }
    clause::anchor::anchor("", 1, false);
}

/// Longest reply read as a subjectless answer to a question about a favourite.
const MOST_ANSWER_BYTES: usize = 80;

/// Extracts candidates from the user's written messages of `conversation`.
pub fn extract_conversation(conversation: &Conversation) -> Extraction {
    let mut extraction = Extraction::default();
    let mut assistant_said: Option<&str> = None;
    for (message_index, message) in conversation.messages.iter().enumerate() {
        // An erased turn is not read at all, not even as what the next reply answers.
        if message.disposition == Disposition::Skip(SkipReason::Erased) {
            continue;
        }
        if message.role == Role::Assistant && !message.is_thought {
            assistant_said = Some(&message.text);
        }
        if message.role != Role::User || message.is_thought || matches!(message.disposition, Disposition::Skip(_)) {
            continue;
        }
        let before = extraction.candidates.len();
        extract_reply(&message.text, assistant_said.take(), &message.id, message.created_at, &mut extraction);
        for candidate in &mut extraction.candidates[before..] {
            candidate.message_index = message_index;
        }
    }
    extraction
}

/// Extracts candidates from one user message's text.
pub fn extract_message(text: &str, message_id: &str, time: Micros, extraction: &mut Extraction) {
    extract_reply(text, None, message_id, time, extraction);
}

/// Extracts candidates from one user message's text, written in reply to `assistant_said`
/// (the assistant's previous turn, if any): a like or dislike of what the assistant just
/// stated is a reaction, not a memory ([`echo`]).
pub fn extract_reply(text: &str, assistant_said: Option<&str>, message_id: &str, time: Micros, extraction: &mut Extraction) {
    if !gate::may_disclose(text) {
        // "Insane Clown Posse." to "What's your favorite band?": the question says what the
        // short answer, which has no first-person word, is.
        if text.len() <= MOST_ANSWER_BYTES
            && let Some(kind) = assistant_said.and_then(answer::favourite_asked)
            && let Some(&sentence) = sentences::own_sentences(text).first()
            && let Some(item) = answer::answer(sentence.text(text), &kind)
        {
            add_candidate(item, Language::English, sentence.text(text), sentence, message_id, time, extraction);
        }
        return;
    }
    let sentences = sentences::own_sentences(text);
    if sentences.is_empty() {
        return;
    }
    // The language is told from the user's own sentences, not from pasted code or documents:
    // each sentence's from its own words where they tell one.
    let own_words: Vec<&str> = sentences.iter().map(|sentence| sentence.text(text)).collect();
    let languages_by_sentence = language::likely_by_sentence(&own_words);
    // What the assistant just stated, against which a like or dislike is checked.
    let echo = assistant_said.map(echo::Echo::of);
    for (&sentence, languages) in sentences.iter().zip(languages_by_sentence) {
        let as_written = sentence.text(text);
        let context = clause::Context { time, sure: languages.len() == 1, after_reply: assistant_said.is_some() };
        // Where the words leave several languages possible, each is tried in turn until one
        // finds something.
        for language in languages.iter() {
            let found = clause::disclosures(as_written, language, &context);
            if found.is_empty() {
                continue;
            }
            for item in found {
                if matches!(item.slot, "likes" | "dislikes") && echo.as_ref().is_some_and(|echo| echo.repeats(&item.value)) {
                    continue;
                }
                add_candidate(item, language, as_written, sentence, message_id, time, extraction);
            }
            break;
        }
    }
}

/// Adds one clause's disclosure as a candidate, unless its clause or statement holds a secret.
fn add_candidate(
    found: clause::Found,
    language: Language,
    sentence_text: &str,
    sentence: sentences::Sentence,
    message_id: &str,
    time: Micros,
    extraction: &mut Extraction,
) {
    let evidence = &sentence_text[found.span.clone()];
    if secrets::contains_secret(evidence) || secrets::contains_secret(&found.statement) {
        extraction.dropped_secret += 1;
        return;
    }
    let mut found = found;
    // Looked for once: the contact-detail memory below, the statement's masking and the quote's
    // cleaning all ask.
    let contacts = secrets::contacts::find(evidence);
    // "Meine Handynummer ist 0171 …", "mon mail pro c'est jo@…": a thing of the user's whose
    // value is a contact detail is that contact detail, personal like "my email is …" (written
    // only under `--extract-pii keep`), not a fact that would say nothing once masked.
    if found.slot == "about"
        && let Some(contact) = contacts.first()
    {
        found.slot = match contact.kind {
            secrets::contacts::ContactKind::Email => "email",
            secrets::contacts::ContactKind::Phone => "phone",
        };
        found.memory_type = MemoryType::Identity;
        found.value = evidence[contact.start..contact.end].to_owned();
    }
    let single_valued = slots::is_single_valued(found.slot);
    // A contact detail said with another fact ("I'm a nurse, reach me at jo@example.org") is
    // no part of that fact: masked in its statement and value as in its quote. Only the
    // contact-detail memories themselves keep it (and are written only on request).
    // The statement and value are written from the clause's words: with no contact detail in
    // the clause, there is none in them.
    let (statement, value) = if slots::is_personal_slot(found.slot) || contacts.is_empty() {
        (found.statement, found.value)
    } else {
        (secrets::clean_quote(&found.statement).into_owned(), secrets::clean_quote(&found.value).into_owned())
    };
    let negated = polarity::says_not(&statement, evidence, language);
    extraction.candidates.push(Candidate {
        memory_type: found.memory_type,
        slot: found.slot,
        single_valued,
        value,
        statement,
        language,
        confidence: found.confidence,
        change: found.change,
        negated,
        message_id: message_id.to_owned(),
        message_index: 0,
        evidence: evidence.to_owned(),
        span: (sentence.start + found.span.start, sentence.start + found.span.end),
        evidence_clean: contacts.is_empty(),
        time,
    });
}

#[cfg(test)]
mod tests;
