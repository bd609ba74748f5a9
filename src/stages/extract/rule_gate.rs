//! The literal gate in front of a language's rules. Every rule's pattern starts with words it
//! must see ("my name is", "I live", "ich wohne"): those prefixes are taken from the pattern
//! itself (regex-syntax's literal extractor) and searched for in one Aho-Corasick pass over the
//! sentence, and only the rules whose prefix occurs are run; a rule that opens with its value
//! ("X did not work") is gated by the words it ends with. Most sentences people type to an
//! assistant say nothing about themselves; without the gate each of them ran every rule of
//! every likely language, which made extraction cost four times the rest of a conversion
//! (docs/design-decisions.md).
//!
//! The gate matches the lowercased sentence against lowercased prefixes, as the rules match
//! case-insensitively. A rule whose matches have no literal prefix (it starts with a value, as
//! "X did not work" does) is always run.

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, AhoCorasickKind};
use regex_syntax::hir::literal::{ExtractKind, Extractor};

/// Which of a set of rules can match a sentence.
#[derive(Debug)]
pub struct RuleGate {
    /// The prefixes of every gated rule; `None` when no rule has one.
    searcher: Option<AhoCorasick>,
    /// For each prefix (by pattern id), the rule it belongs to and where a match may start.
    rule_of_prefix: Vec<(usize, Anchor)>,
    /// Rules run on every sentence.
    always: Vec<usize>,
    /// How many rules there are.
    rule_count: usize,
    /// The same literals matched ASCII-case-insensitively, with a capitalized and a
    /// typographic-apostrophe form of each, for [`RuleGate::may_match_in`].
    whole_text: Option<AhoCorasick>,
}

impl RuleGate {
    /// The gate of rules whose patterns (as written, without the case-insensitive flag) are
    /// `patterns`, in rule order.
    pub fn new(patterns: &[String]) -> RuleGate {
        let mut prefixes = Vec::new();
        let mut rule_of_prefix = Vec::new();
        let mut always = Vec::new();
        for (rule, pattern) in patterns.iter().enumerate() {
            // A pattern that opens with its value ("X did not work") is gated by how it ends.
            let (anchor, literals) = match literals_of(pattern, ExtractKind::Prefix) {
                Some(literals) => (Anchor::of(pattern), Some(literals)),
                None => (Anchor::Anywhere, literals_of(pattern, ExtractKind::Suffix)),
            };
            match literals {
                Some(literals) => {
                    for literal in literals {
                        // A word boundary before a literal that does not start a word holds
                        // anywhere: no check then.
                        let anchor = if anchor == Anchor::WordStart && !literal.starts_with(char::is_alphanumeric) {
                            Anchor::Anywhere
                        } else {
                            anchor
                        };
                        prefixes.push(literal);
                        rule_of_prefix.push((rule, anchor));
                    }
                }
                None => always.push(rule),
            }
        }
        // An automaton that cannot be built gates nothing: every rule runs, as before the gate.
        let searcher = if prefixes.is_empty() { None } else { automaton(&mut AhoCorasick::builder(), &prefixes) };
        if searcher.is_none() {
            always = (0..patterns.len()).collect();
        }
        let mut variants: Vec<String> = Vec::with_capacity(prefixes.len() * 2);
        for prefix in &prefixes {
            let mut characters = prefix.chars();
            let capitalized: String = characters.next().map(|first| first.to_uppercase().chain(characters).collect()).unwrap_or_default();
            for variant in [prefix.clone(), capitalized] {
                if variant.contains('\'') {
                    variants.push(variant.replace('\'', "’"));
                }
                variants.push(variant);
            }
        }
        let whole_text = if always.is_empty() { automaton(AhoCorasick::builder().ascii_case_insensitive(true), &variants) } else { None };
        RuleGate { searcher, rule_of_prefix, always, rule_count: patterns.len(), whole_text }
    }

    /// Whether any rule may match anywhere in `text` (a whole message, as written): one pass,
    /// before the message is split into sentences, so a message without any rule's words
    /// costs only that pass. Letters outside ASCII match in lower case or, at a literal's
    /// start, capitalized.
    pub fn may_match_in(&self, text: &str) -> bool {
        match &self.whole_text {
            Some(searcher) => searcher.is_match(text),
            None => true,
        }
    }

    /// Marks in `wanted` (one flag per rule) the rules that may match `lowercase_sentence`;
    /// returns whether any may.
    pub fn rules_to_try(&self, lowercase_sentence: &str, wanted: &mut Vec<bool>) -> bool {
        wanted.clear();
        wanted.resize(self.rule_count, false);
        let mut any = false;
        for &rule in &self.always {
            wanted[rule] = true;
            any = true;
        }
        if let Some(searcher) = &self.searcher {
            for found in searcher.find_overlapping_iter(lowercase_sentence) {
                let (rule, anchor) = self.rule_of_prefix[found.pattern().as_usize()];
                let allowed = match anchor {
                    Anchor::Anywhere => true,
                    Anchor::SentenceStart => found.start() == 0,
                    Anchor::WordStart => !lowercase_sentence[..found.start()]
                        .chars()
                        .next_back()
                        .is_some_and(|before| before.is_alphanumeric() || before == '_'),
                };
                if allowed {
                    wanted[rule] = true;
                    any = true;
                }
            }
        }
        any
    }
}

/// The automaton `builder` makes of `literals`: a full DFA, which the crate does not pick on
/// its own for this many literals (it takes a contiguous NFA), or that NFA when the DFA cannot
/// be built; `None` when neither can. The gate reads every byte of every user message: on the
/// 1 GB bench its whole-message pass took 0.29 s of CPU with the DFA against 0.50 s with the
/// NFA, for about 60 ms to build the DFA once (docs/design-decisions.md).
fn automaton(builder: &mut AhoCorasickBuilder, literals: &[String]) -> Option<AhoCorasick> {
    builder.kind(Some(AhoCorasickKind::DFA)).build(literals).or_else(|_| builder.kind(None).build(literals)).ok()
}

/// Where a rule's match may start, from how its pattern opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Anchor {
    /// `^`: at the start of the sentence.
    SentenceStart,
    /// `\b`: where a word starts.
    WordStart,
    /// Anywhere.
    Anywhere,
}

impl Anchor {
    fn of(pattern: &str) -> Anchor {
        if pattern.starts_with('^') {
            Anchor::SentenceStart
        } else if pattern.starts_with("\\b") {
            Anchor::WordStart
        } else {
            Anchor::Anywhere
        }
    }
}

/// The lowercased literals every match of `pattern` starts (or ends) with, or `None` when its
/// matches need not start (end) with a literal, or the pattern cannot be read.
fn literals_of(pattern: &str, kind: ExtractKind) -> Option<Vec<String>> {
    let is_prefix = matches!(kind, ExtractKind::Prefix);
    let hir = regex_syntax::Parser::new().parse(pattern).ok()?;
    let prefixes = Extractor::new().kind(kind).extract(&hir);
    let mut literals = Vec::new();
    for literal in prefixes.literals()? {
        let bytes = literal.as_bytes();
        // A literal trimmed inside a character keeps its whole characters (a suffix is not
        // trimmed at its start: one that is not whole text gates nothing).
        let text = match std::str::from_utf8(bytes) {
            Ok(text) => text,
            Err(error) if is_prefix => std::str::from_utf8(&bytes[..error.valid_up_to()]).ok()?,
            Err(_) => return None,
        };
        if text.trim().is_empty() {
            return None;
        }
        let lowercase = text.to_lowercase();
        if !literals.contains(&lowercase) {
            literals.push(lowercase);
        }
    }
    if literals.is_empty() { None } else { Some(literals) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_come_from_the_pattern_and_value_first_rules_are_gated_by_their_ending() {
        let patterns = vec![
            r"\bmy name is (?P<value>\w+)".to_owned(),
            r"\bI(?:'m| am) (?:living|based) in (?P<value>\w+)".to_owned(),
            r"^(?P<value>[^,.]{3,60}?) did not work".to_owned(),
        ];
        let gate = RuleGate::new(&patterns);
        let mut wanted = Vec::new();
        assert!(gate.rules_to_try("my name is ema", &mut wanted));
        assert_eq!(wanted, [true, false, false]);
        gate.rules_to_try("so i am based in leeds", &mut wanted);
        assert_eq!(wanted, [false, true, false]);
        assert!(!gate.rules_to_try("how do i flatten a list?", &mut wanted));
        assert!(!gate.rules_to_try("dummy name is x", &mut wanted), "a prefix inside a word is no match of a rule that starts at a word");
        gate.rules_to_try("the cache did not work", &mut wanted);
        assert_eq!(wanted, [false, false, true]);
    }

    #[test]
    fn a_message_without_any_rules_words_is_passed_over_whole() {
        let gate = RuleGate::new(&[r"\bich wohne in (?P<value>\w+)".to_owned(), r"\bučím se (?P<value>\w+)".to_owned()]);
        assert!(!gate.may_match_in("How do I flatten a list?\n\nfn main() {}"));
        assert!(gate.may_match_in("Hallo! ICH WOHNE IN Graz."));
        assert!(gate.may_match_in("Učím se Rust."), "a capitalized first letter outside ASCII");
    }

    #[test]
    fn a_gate_without_always_rules_lets_ordinary_sentences_through_untouched() {
        let gate = RuleGate::new(&[r"\bich wohne in (?P<value>\w+)".to_owned(), r"\bbydlím v (?P<value>\w+)".to_owned()]);
        let mut wanted = Vec::new();
        assert!(!gate.rules_to_try("wie spät ist es?", &mut wanted));
        assert!(gate.rules_to_try("bydlím v brně", &mut wanted));
        assert_eq!(wanted, [false, true]);
    }
}
