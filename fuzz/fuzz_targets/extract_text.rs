#![no_main]
//! Extraction on one user message's text, where any UTF-8 text may arrive (the decoder targets
//! reach it only through what a decoder writes): the user's own sentences, language guessing,
//! the clause readers of each language and the secret check (`stages::extract::
//! extract_message`), and secret finding and masking (`stages::extract::secrets`).
//!
//! Besides never panicking: each candidate's evidence is the text at its span and holds no secret
//! ("a clause holding a secret never becomes a memory", README); each sentence's span lies on
//! character boundaries in order; secrets come sorted, apart and on character boundaries, and
//! masking replaces each of them once.

use libfuzzer_sys::fuzz_target;
use memport::stages::extract::sentences::own_sentences;
use memport::stages::extract::{extract_message, secrets, Extraction};
use memport_fuzz::EXPORTED_AT;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };

    let mut extraction = Extraction::default();
    extract_message(text, "message", EXPORTED_AT, &mut extraction);
    for candidate in &extraction.candidates {
        let (start, end) = candidate.span;
        assert!(
            text.get(start..end) == Some(candidate.evidence.as_str()),
            "extraction: the evidence {:?} is not the text at its span {start}..{end}",
            candidate.evidence
        );
        // README: "A clause holding a secret never becomes a memory."
        assert!(
            !secrets::contains_secret(&candidate.evidence),
            "extraction: candidate {:?} comes from a sentence that holds a secret: {:?}",
            candidate.statement,
            candidate.evidence
        );
    }

    let mut previous_end = 0;
    for sentence in own_sentences(text) {
        assert!(
            previous_end <= sentence.start
                && sentence.start <= sentence.end
                && text.is_char_boundary(sentence.start)
                && text.is_char_boundary(sentence.end)
                && sentence.end <= text.len(),
            "sentences: a sentence at {}..{} after one that ended at {previous_end}",
            sentence.start,
            sentence.end
        );
        previous_end = sentence.end;
    }

    let found = secrets::find(text);
    let mut previous_end = 0;
    for secret in &found {
        assert!(
            previous_end <= secret.start
                && secret.start < secret.end
                && secret.end <= text.len()
                && text.is_char_boundary(secret.start)
                && text.is_char_boundary(secret.end),
            "secrets: a {:?} at {}..{} after one that ended at {previous_end}",
            secret.kind,
            secret.start,
            secret.end
        );
        previous_end = secret.end;
    }
    let (_, masked) = secrets::redact(text);
    assert_eq!(masked, found.len(), "secrets: masking replaced another number of secrets than were found");
});
