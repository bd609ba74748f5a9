//! The English reader: finds a clause's subject (I, we, my X, "as a X"), reads its verb group
//! (auxiliaries, negation, tense), decides by the main verb's class what kind of memory the
//! clause is, and writes the clause again in the third person with its relative times anchored.

use super::anchor::anchor;
use super::frame_parts::is_home_language;
use super::instruments::names_instrument;
use super::lexicon::Lexicon;
use super::nouns::{is_conversational_state, is_diet, is_kin, is_partner, is_pointer, is_task_noun, looks_like_occupation};
use super::verbs::{VerbClass, english_third_person, is_english_past};
use super::words::{Word, joined, span, tail};
use super::{Context, Found, capitalized, rest_in_third_person};
use crate::stages::extract::MemoryType;
use crate::stages::extract::language::Language;

/// Words that open a clause as a question.
const QUESTION_OPENERS: &[&str] = &[
    "do",
    "does",
    "did",
    "can",
    "could",
    "would",
    "should",
    "what",
    "how",
    "why",
    "where",
    "when",
    "who",
    "which",
    "is",
    "are",
    "am",
    "will",
    "shall",
    "was",
    "were",
    "have",
    "has",
    "whats",
    "hows",
    "whom",
    "whose",
    "may",
    "might",
    "any",
    "anyone",
    "anything",
    "please",
    "pls",
    "let's",
    "lets",
    "tell",
    "give",
    "show",
    "help",
    "explain",
    "write",
    "make",
    "create",
    "find",
    "list",
    "suggest",
    "recommend",
    "thanks",
    "thank",
];

/// Words that may open a time or place phrase before the subject ("Last year I…", "In 2019 we…").
const ADVERBIAL_STARTS: &[&str] = &[
    "in",
    "on",
    "at",
    "last",
    "this",
    "next",
    "since",
    "after",
    "before",
    "every",
    "yesterday",
    "today",
    "tomorrow",
    "recently",
    "lately",
    "back",
    "growing",
    "for",
    "during",
    "two",
    "three",
    "a",
    "few",
    "years",
    "months",
    "weeks",
    "once",
    "when",
    "as",
    "over",
    "about",
    "around",
    "until",
    "right",
    "now",
    "then",
    "earlier",
    "later",
    "most",
    "some",
    "on",
    "each",
    "these",
    "nowadays",
    "tonight",
    "usually",
    "normally",
    "also",
];

/// Hedges that may open a clause: what follows is said, but less surely.
const HEDGES: &[&[&str]] = &[
    &["i", "think"],
    &["i", "guess"],
    &["i", "believe"],
    &["i", "suppose"],
    &["i", "feel", "like"],
    &["i", "would", "say"],
    &["maybe"],
    &["perhaps"],
    &["probably"],
];

/// Frequency adverbs kept in a statement ("Usually runs before work").
const FREQUENCY: &[&str] =
    &["usually", "always", "often", "sometimes", "rarely", "seldom", "occasionally", "mostly", "generally", "normally", "mainly", "only"];

/// Infinitives after "want to", "like to", "will" that are about the conversation or the task
/// ("I want to know", "I'd like to ask", "I'll try that").
const TASK_INFINITIVES: &[&str] = &[
    "know",
    "ask",
    "see",
    "understand",
    "check",
    "try",
    "say",
    "tell",
    "share",
    "thank",
    "mention",
    "add",
    "clarify",
    "point",
    "confirm",
    "continue",
    "change",
    "hear",
    "look",
    "let",
    "keep",
    "give",
    "send",
    "show",
    "explain",
    "help",
    "talk",
    "discuss",
    "focus",
    "note",
    "double-check",
    "verify",
    "test",
    "fix",
    "improve",
    "rewrite",
    "edit",
    "convert",
    "generate",
    "calculate",
    "compare",
    "figure",
    "print",
    "save",
    "define",
    "include",
    "remove",
    "ensure",
    "sure",
    "report",
    "use",
    "do",
    "find",
    "think",
    "create",
    "put",
    "follow",
];

/// Reads one English clause.
pub fn read(words: &[Word], context: &Context, found: &mut Vec<Found>) {
    let lexicon = Lexicon::of(Language::English);
    // "I'm a teacher too", "I love dogs as well": agreeing adds nothing to what is said.
    let mut end = words.len();
    while end > 2 && matches!(words[end - 1].lower.as_str(), "too" | "also" | "either") {
        end -= 1;
    }
    if end > 3 && words[end - 2].lower == "as" && words[end - 1].lower == "well" {
        end -= 2;
    }
    let words = span(words, 0, end);
    let mut at = 0;
    let mut scale = 1.0_f32;
    loop {
        while at < words.len() && lexicon.lead_ins.contains(&words[at].lower.as_str()) && words.len() - at > 2 {
            at += 1;
        }
        let Some(hedge) =
            HEDGES.iter().find(|hedge| words[at..].iter().take(hedge.len()).map(|word| word.lower.as_str()).eq(hedge.iter().copied()))
        else {
            break;
        };
        at += hedge.len();
        if words.get(at).is_some_and(|word| word.lower == "that") {
            at += 1;
        }
        scale = 0.6;
    }
    let Some(first) = words.get(at) else { return };
    if QUESTION_OPENERS.contains(&first.lower.as_str()) {
        return;
    }
    if first.lower == "as" && words.get(at + 1).is_some_and(|word| matches!(word.lower.as_str(), "a" | "an")) {
        let reading = Reading { scale: scale * 0.9, time: context.time, change: false, after_reply: context.after_reply };
        complement(tail(words, at + 1), &[], &reading, found);
        return;
    }
    if let Some(favourite) = inverted_favourite(tail(words, at), scale) {
        found.push(favourite);
        return;
    }
    let Some(subject) = (at..words.len().min(at + 8)).find(|&index| matches!(words[index].lower.as_str(), "i" | "we" | "my" | "our"))
    else {
        pitfall(tail(words, at), found);
        return;
    };
    if subject > at && !ADVERBIAL_STARTS.contains(&words[at].lower.as_str()) {
        return;
    }
    // A subordinator before the subject ("since I'm vegan") is no time or place phrase.
    let subordinate = subject == at + 1
        && matches!(words[at].lower.as_str(), "since" | "as" | "while" | "now" | "because" | "cause" | "before" | "after" | "until");
    // "before I became a nurse", "before we go to Porto next summer" date the other clause by
    // an event of their own, past or ahead, kept; "before I go to bed" only says when the
    // other clause's habit happens, and is no memory.
    let framing_time = subordinate && matches!(words[at].lower.as_str(), "before" | "after" | "until");
    let past_event =
        words.get(subject + 1).is_some_and(|verb| matches!(verb.lower.as_str(), "was" | "were" | "had") || is_english_past(&verb.lower));
    if framing_time && !past_event && !says_when_ahead(tail(words, subject + 1)) {
        return;
    }
    let adverbial = if subordinate { &[][..] } else { span(words, at, subject) };
    let reading = Reading { scale, time: context.time, change: false, after_reply: context.after_reply };
    match words[subject].lower.as_str() {
        "i" => user(tail(words, subject + 1), adverbial, &reading, found),
        "we" => user(tail(words, subject + 1), adverbial, &Reading { scale: scale * 0.9, ..reading }, found),
        _ => possessed(tail(words, subject + 1), adverbial, &reading, found),
    }
}

/// "Mickey Mouse is my favorite character", "Pizza is my favourite food": a favourite said
/// with the thing first. The thing is named, not pointed at ("they're my favorite band").
fn inverted_favourite(words: &[Word], scale: f32) -> Option<Found> {
    let verb = words.iter().position(|word| matches!(word.lower.as_str(), "is" | "are" | "was"))?;
    let thing = span(words, 0, verb);
    let after = tail(words, verb + 1);
    let favourite = after.len() >= 2
        && matches!(after[0].lower.as_str(), "my" | "our")
        && matches!(after[1].lower.as_str(), "favorite" | "favourite" | "fave" | "favorites" | "favourites");
    let named = !thing.is_empty()
        && thing.len() <= 5
        && !thing.iter().any(|word| {
            is_pointer(&word.lower)
                || QUESTION_OPENERS.contains(&word.lower.as_str())
                || matches!(word.lower.as_str(), "i" | "he" | "she" | "they" | "we" | "you" | "there" | "here" | "what" | "which")
        });
    if !favourite || !named {
        return None;
    }
    let kinds = tail(after, 2);
    let kind_end = kinds
        .iter()
        .position(|word| matches!(word.lower.as_str(), "and" | "but" | "because" | "since" | "so" | "ever" | "of" | "in" | "to"))
        .unwrap_or(kinds.len());
    let kind_end = kinds.iter().position(|word| word.comma).map_or(kind_end, |comma| kind_end.min(comma + 1));
    if kind_end > 3 {
        return None;
    }
    let copula = if words[verb].lower == "are" { "are" } else { "is" };
    // "Horror movies are my favorite": the kind is the thing's.
    let statement = if kind_end == 0 {
        format!("{} {copula} their {}", joined(thing), after[1].lower)
    } else {
        format!("Their {} {} {copula} {}", after[1].lower, joined(span(kinds, 0, kind_end)), joined(thing))
    };
    Found::new(MemoryType::Preference, "favourite", thing, capitalized(&statement), 0.85 * scale, false)
}

/// "Webpack didn't work for us", "Docker Desktop never worked on my laptop": what failed the
/// user, named (a pronoun subject, "it still doesn't work", is the task at hand).
fn pitfall(words: &[Word], found: &mut Vec<Found>) {
    let Some(verb) = words.iter().position(|word| matches!(word.lower.as_str(), "did" | "does" | "never")) else { return };
    let subject = span(words, 0, verb);
    let after: Vec<&str> = tail(words, verb).iter().map(|word| word.lower.as_str()).collect();
    let failed = matches!(after.as_slice(), ["did" | "does", "not", "work", ..] | ["never", "worked" | "works", ..]);
    let pronoun = subject.iter().any(|word| is_pointer(&word.lower) || matches!(word.lower.as_str(), "he" | "she" | "they" | "i" | "we"));
    if !failed || subject.is_empty() || subject.len() > 4 || pronoun {
        return;
    }
    let statement = format!("{} did not work", joined(subject));
    push(
        found,
        MemoryType::Pitfall,
        "pitfall",
        subject,
        capitalized(&statement),
        0.75,
        &Reading { scale: 1.0, time: 0, change: false, after_reply: false },
    );
}

/// How a clause is being read.
#[derive(Debug, Clone, Copy)]
struct Reading {
    /// What the confidence is multiplied by (a hedge, "we").
    scale: f32,
    /// The message's time.
    time: crate::model::Micros,
    /// Whether the clause says a value changed.
    change: bool,
    /// Whether the message answers the assistant ([`super::Context::after_reply`]).
    after_reply: bool,
}

/// The verb group after the subject: the words a statement keeps, in the third person, and
/// what they say.
#[derive(Debug, Default)]
struct VerbGroup {
    written: Vec<String>,
    be: bool,
    negated: bool,
    past: bool,
    future: bool,
    perfect: bool,
    modal: Option<String>,
    can: bool,
    change: bool,
    /// Where the main verb (or the copula's complement) starts.
    next: usize,
}

impl VerbGroup {
    fn push(&mut self, word: &str) {
        // The first verb of the group agrees with the third-person subject.
        let finite = self.written.iter().all(|written| FREQUENCY.contains(&written.as_str()));
        let word = if finite { english_third_person(word).unwrap_or_else(|| word.to_owned()) } else { word.to_owned() };
        self.written.push(word);
    }
}

fn verb_group(words: &[Word]) -> VerbGroup {
    let lexicon = Lexicon::of(Language::English);
    let mut group = VerbGroup::default();
    let mut index = 0;
    while let Some(word) = words.get(index) {
        let lower = word.lower.as_str();
        let next = words.get(index + 1).map_or("", |next| next.lower.as_str());
        match lower {
            "now" | "recently" | "finally" | "officially" => group.change = true,
            // "I once rode…", "I twice ran…": how often, not the verb.
            "once" | "twice" => {}
            _ if FREQUENCY.contains(&lower) => group.written.push(lower.to_owned()),
            _ if lexicon.fillers.contains(&lower) => {}
            // Other adverbs ("especially", "secretly") say how, not what.
            _ if lower.ends_with("ly")
                && lower.len() > 4
                && !matches!(lower, "fly" | "apply" | "rely" | "reply" | "supply" | "bully")
                && !is_ly_adjective(lower)
                && !next.is_empty()
                && next != "to" => {}
            "am" | "are" | "is" => {
                group.push("am");
                group.be = true;
            }
            "was" | "were" => {
                group.push("was");
                group.be = true;
                group.past = true;
            }
            // "I got married last year", "I got promoted last week": a passive with "get" says
            // what happened to the user, as one with "was" does; "got stuck", "got used to"
            // are no event.
            "got" if is_english_past(next) && !matches!(next, "used" | "got" | "gotten") && !is_conversational_state(next) => {
                group.push("got");
                group.be = true;
                group.past = true;
            }
            // "I had to have a transplant", "I had to quit my job": what they had to do, they
            // did (a present "I have to…" is as often the task at hand, and is not read).
            "had" if next == "to" && words.get(index + 2).is_some_and(|after| looks_like_a_verb(&after.lower)) => {
                group.push("had");
                group.written.push("to".to_owned());
                group.past = true;
                index += 1;
            }
            "have" | "has" | "had" if next == "got" => {
                group.push(lower);
                group.next = index + 1;
                return group;
            }
            "have" | "has" | "had" if next == "been" || next == "not" || next == "never" || is_participle(next) => {
                group.push(lower);
                group.perfect = true;
                group.past |= lower == "had";
            }
            "will" => {
                group.push("will");
                group.future = true;
            }
            "would" | "could" | "should" | "might" | "may" | "must" => {
                group.push(lower);
                group.modal = Some(lower.to_owned());
            }
            "can" => {
                group.push("can");
                group.can = true;
            }
            "do" | "does" if next == "not" || next == "never" => group.push("does"),
            "did" => {
                group.push("did");
                group.past = true;
            }
            "not" | "never" => {
                group.written.push(lower.to_owned());
                group.negated = true;
            }
            "been" => {
                group.written.push("been".to_owned());
                group.be = true;
            }
            "used" if next == "to" => {
                group.push("used");
                group.written.push("to".to_owned());
                group.past = true;
                index += 1;
            }
            "going" if group.be && next == "to" && words.get(index + 2).is_some_and(|after| !after.is_capitalized()) => {
                group.written.push("going".to_owned());
                group.written.push("to".to_owned());
                group.be = false;
                group.future = true;
                index += 1;
            }
            _ => break,
        }
        index += 1;
    }
    group.next = index;
    group
}

/// Whether an English word is a past participle after "have" ("been", "lived", "gone").
fn is_participle(word: &str) -> bool {
    is_english_past(word)
        || matches!(
            word,
            "been"
                | "gone"
                | "done"
                | "seen"
                | "taken"
                | "given"
                | "written"
                | "driven"
                | "eaten"
                | "known"
                | "grown"
                | "flown"
                | "begun"
                | "become"
                | "run"
                | "come"
                | "swum"
                | "ridden"
                | "spoken"
                | "chosen"
                | "broken"
                | "forgotten"
                | "gotten"
                | "worn"
                | "drunk"
                | "sung"
                | "always"
                | "just"
                | "already"
                | "recently"
                | "finally"
                | "also"
                | "lived"
                | "never"
        )
}

/// The lemma of a verb form, as far as the verb classes need it ("living" → "live", "moved" →
/// "moved").
fn lemma(word: &str) -> String {
    if let Some(stem) = word.strip_suffix("ing")
        && stem.len() >= 2
    {
        let mut last = stem.chars().rev();
        let (final_letter, before) = (last.next(), last.next());
        let doubled = final_letter.is_some_and(|c| c.is_ascii_alphabetic())
            && final_letter == before
            && !stem.ends_with("ll")
            && !stem.ends_with("ss");
        if doubled {
            return stem[..stem.len() - 1].to_owned();
        }
        for candidate in [format!("{stem}e"), stem.to_owned()] {
            if Lexicon::of(Language::English).verb_class(&candidate).is_some() {
                return candidate;
            }
        }
        return stem.to_owned();
    }
    word.to_owned()
}

/// A clause whose subject is the user.
fn user(words: &[Word], adverbial: &[Word], reading: &Reading, found: &mut Vec<Found>) {
    // "I have two kids who are about your age", "I'm a nurse who uses your app": a relative
    // clause that speaks of the assistant describes what they have or are, which is still
    // theirs. The clause is left out, not the statement. (What they like is left whole: "I like
    // people who agree with you" says more of the assistant than of them.)
    let has_or_is = words.iter().take(3).any(|word| matches!(word.lower.as_str(), "have" | "had" | "am" | "was"));
    let relative = words.iter().skip(2).position(|word| matches!(word.lower.as_str(), "who" | "whom" | "whose" | "which"));
    let words = match relative {
        Some(at) if has_or_is && mentions_you(tail(words, at + 2)) && !mentions_you(span(words, 0, at + 2)) => span(words, 0, at + 2),
        _ => words,
    };
    let group = verb_group(words);
    let reading = Reading { change: group.change, ..*reading };
    let rest = tail(words, group.next);
    if rest.is_empty() {
        return;
    }
    // "I have a pet cow and drive a big truck": two verb phrases of one subject, each read on
    // its own. Not under a negation or a modal, which may or may not reach the second ("I
    // don't eat meat and drink milk"), nor after an infinitive ("I love to bake and knit", one
    // list).
    if !group.negated
        && group.modal.is_none()
        && rest.get(1).is_none_or(|word| word.lower != "to")
        && let Some(and) = second_verb_phrase(rest)
    {
        user(span(words, 0, group.next + and), adverbial, &reading, found);
        user(tail(rest, and + 1), adverbial, &reading, found);
        return;
    }
    if let Some(modal) = &group.modal {
        // "I would prefer tea", "I'd rather have tea": a preference.
        if modal == "would"
            && matches!(rest[0].lower.as_str(), "prefer" | "rather")
            && rest.len() > 1
            && !is_reaction(tail(rest, 1), reading.after_reply)
        {
            let object = tail(rest, 1);
            let statement = capitalized(&format!("prefers {}", third(object)));
            push(found, MemoryType::Preference, "likes", object, statement, 0.75, &reading);
            return;
        }
        // "I'd love to visit Japan" is a wish worth keeping; "I could", "I should" are not said as so.
        let wish =
            modal == "would" && matches!(rest[0].lower.as_str(), "love" | "like") && rest.get(1).is_some_and(|word| word.lower == "to");
        let wished = tail(rest, 2);
        let bare_light_verb = wished.len() == 1 && is_light_verb(&wished[0].lower);
        // "I'd like to then use that as…": what the wished verb takes points back.
        let verb_at = wished
            .iter()
            .position(|word| !matches!(word.lower.as_str(), "then" | "also" | "just" | "really" | "maybe" | "perhaps"))
            .unwrap_or(0);
        let points_back = wished.len() > verb_at + 1 && is_dangling(tail(wished, verb_at + 1));
        if wish
            && rest.len() > 2
            && !bare_light_verb
            && !points_back
            && !TASK_INFINITIVES.contains(&rest[2].lower.as_str())
            && !mentions_you(wished)
        {
            let statement = format!("Would like to {}", third(tail(rest, 2)));
            push(found, MemoryType::Goal, "goal", tail(rest, 2), statement, 0.7, &reading);
        }
        return;
    }
    let main = &rest[0];
    // "I'm going to be getting married": a progressive after a future.
    if main.lower == "be" && rest.len() > 2 && rest[1].lower.ends_with("ing") && rest[1].lower.len() > 4 {
        let mut written = group.written.clone();
        written.push("be".to_owned());
        let future = VerbGroup { written, be: true, future: group.future, ..VerbGroup::default() };
        return progressive(&future, tail(rest, 1), adverbial, &reading, found);
    }
    // "I'm going to business school next year": "going to" a place, not a verb.
    let going_to = group.future && group.written.iter().any(|word| word == "going");
    if going_to
        && (!looks_like_a_verb(&main.lower) || matches!(main.lower.as_str(), "the" | "a" | "my"))
        && says_when_ahead(rest)
        && !is_dangling(rest)
        && !mentions_you(rest)
    {
        let statement = anchored(&sentence(&["is going to".to_owned()], &third(rest), adverbial), reading.time, false);
        return push(found, MemoryType::Goal, "goal", rest, statement, 0.6, &reading);
    }
    // "I used to be a painter", "I will be a father": the complement says what.
    if main.lower == "be" && rest.len() > 1 {
        let mut verb = group.written.clone();
        verb.push("be".to_owned());
        return complement(tail(rest, 1), &verb, &reading, found);
    }
    // "I try to walk three miles every day": the habit tried is the habit.
    if matches!(main.lower.as_str(), "try" | "tried") && rest.get(1).is_some_and(|word| word.lower == "to") && rest.len() > 3 {
        let object = tail(rest, 2);
        let tried = if group.written.is_empty() && main.lower == "try" { "tries".to_owned() } else { main.lower.to_string() };
        let verb_text = format!("{tried} to");
        if !mentions_you(object)
            && !is_dangling(tail(object, 1))
            && !names_task(object)
            && !TASK_INFINITIVES.contains(&object[0].lower.as_str())
        {
            let statement = anchored(&sentence(&[verb_text], &third(object), adverbial), reading.time, false);
            push(found, MemoryType::Fact, "habit", object, statement, 0.7, &reading);
        }
        return;
    }
    if group.be && main.lower.ends_with("ing") && main.lower.len() > 4 {
        return progressive(&group, rest, adverbial, &reading, found);
    }
    if group.be || (group.perfect && group.written.last().is_some_and(|last| last == "been") && !main.lower.ends_with("ing")) {
        if group.perfect && main.lower == "to" {
            let statement = sentence(&group.written, &third(rest), adverbial);
            let confidence = if group.negated { 0.45 } else { 0.7 };
            if !is_dangling(tail(rest, 1)) {
                push(found, MemoryType::Context, "experience", tail(rest, 1), statement, confidence, &reading);
            }
            return;
        }
        return complement(rest, &group.written, &reading, found);
    }
    if group.perfect && main.lower.ends_with("ing") {
        return progressive(&group, rest, adverbial, &reading, found);
    }
    let lemma = lemma(&main.lower);
    let class = Lexicon::of(Language::English).verb_class(&lemma);
    let object = tail(rest, 1);
    let mut verb_written = group.written.clone();
    // "I hurt my jaw last week": a verb whose past is its present reads as past with a past time.
    let past_by_time = object.iter().any(|word| matches!(word.lower.as_str(), "yesterday" | "ago" | "last")) && group.written.is_empty();
    verb_written.push(if group.written.iter().all(|word| FREQUENCY.contains(&word.as_str())) && !past_by_time {
        english_third_person(&main.lower).unwrap_or_else(|| main.lower.to_string())
    } else {
        main.lower.to_string()
    });
    let past = group.past || is_english_past(&main.lower) || past_by_time;
    let statement_of = |object: &[Word]| anchored(&sentence(&verb_written, &third(object), adverbial), reading.time, past);
    if group.can {
        if group.negated {
            if class == Some(VerbClass::Eat) {
                return push(found, MemoryType::Preference, "does_not_eat", object, statement_of(object), 0.8, &reading);
            }
            // "I can't stand horror movies": a dislike.
            if main.lower == "stand"
                && !object.is_empty()
                && !mentions_you(object)
                && !is_dangling(object)
                && !is_reaction(object, reading.after_reply)
            {
                for item in list_items(object) {
                    push(found, MemoryType::Preference, "dislikes", &item, statement_of(&item), 0.8, &reading);
                }
            }
        } else if class.is_none() && !object.is_empty() && !mentions_you(object) && !is_dangling(object) && !is_light_verb(&main.lower) {
            return push(found, MemoryType::Skill, "skill", object, statement_of(object), 0.7, &reading);
        }
        return;
    }
    // "I play the cello": an instrument played is a skill, a game or sport a pastime.
    if lemma == "play" && !past && !group.negated && names_instrument(&object.iter().map(|word| word.lower.as_str()).collect::<Vec<_>>()) {
        return push(found, MemoryType::Skill, "skill", object, statement_of(object), 0.8, &reading);
    }
    // "I'm going to see my grandmother next week", "I'll see the Stones in May": seeing someone
    // or something on a day ahead is a plan, not an understanding.
    if group.future && lemma == "see" && says_when_ahead(object) {
        return generic(object, &verb_written, adverbial, past, &reading, found);
    }
    match class {
        Some(VerbClass::Have) => have(object, &verb_written, adverbial, past, &reading, found),
        Some(VerbClass::Like | VerbClass::Prefer | VerbClass::Dislike) => {
            let negative = group.negated || class == Some(VerbClass::Dislike);
            let slot = if negative { "dislikes" } else { "likes" };
            let memory_type = MemoryType::Preference;
            for item in list_items(object) {
                if is_reaction(&item, reading.after_reply) {
                    continue;
                }
                push(found, memory_type, slot, &item, statement_of(&item), 0.8, &reading);
            }
        }
        Some(VerbClass::Live) => {
            // "I live (here) with my husband".
            let with = if object.first().is_some_and(|word| matches!(word.lower.as_str(), "here" | "there")) { 1 } else { 0 };
            if object.get(with).is_some_and(|word| word.lower == "with") && object.len() > with + 1 {
                let companion = tail(object, with + 1);
                return push(found, MemoryType::Relationship, "lives_with", companion, statement_of(tail(object, with)), 0.8, &reading);
            }
            let place = place_after_preposition(object);
            if !is_place(place) {
                return;
            }
            if past && !group.perfect {
                return push(
                    found,
                    MemoryType::Fact,
                    "former_home",
                    place,
                    anchored(&sentence(&["used to live".into()], &third(object), adverbial), reading.time, true),
                    0.75,
                    &reading,
                );
            }
            push(found, MemoryType::Identity, "home", place, format!("Lives {}", third(object)), 0.85, &reading);
        }
        // "I move south for the winter": a habit, not a move.
        Some(VerbClass::Move) if main.lower == "move" && !object.iter().any(|word| matches!(word.lower.as_str(), "to" | "from")) => {
            generic(object, &verb_written, adverbial, past, &reading, found);
        }
        Some(VerbClass::Move) => moved(object, &group, adverbial, &reading, found),
        Some(VerbClass::Origin) if object.first().is_some_and(|word| word.lower == "up") && object.len() > 2 => {
            push(found, MemoryType::Identity, "origin", place_after_preposition(tail(object, 1)), statement_of(object), 0.8, &reading);
        }
        Some(VerbClass::Work) => work(object, &verb_written, adverbial, past, &reading, found),
        Some(VerbClass::Study | VerbClass::Teach) if !object.is_empty() && !is_dangling(object) => {
            let slot = if class == Some(VerbClass::Teach) { "teaches" } else { "education" };
            push(found, MemoryType::Identity, slot, object, statement_of(object), 0.8, &reading);
        }
        // The languages one speaks are skills, each its own; the language of home says who
        // the user is.
        Some(VerbClass::Speak) if object.first().is_some_and(Word::is_capitalized) => {
            let memory_type = if is_home_language(object) { MemoryType::Identity } else { MemoryType::Skill };
            for item in list_items(object) {
                push(found, memory_type, "languages", &item, statement_of(&item), 0.85, &reading);
            }
        }
        Some(VerbClass::Plan) => plan(object, &verb_written, adverbial, past, &reading, found),
        Some(VerbClass::Decide) if !object.is_empty() && !is_dangling(strip_to(object)) && !mentions_you(object) => {
            push(found, MemoryType::Decision, "decision", object, statement_of(object), 0.8, &reading);
        }
        Some(VerbClass::Use) if !object.is_empty() && !is_dangling(object) && !mentions_you(object) && !names_task(object) => {
            if main.lower == "run" || main.lower == "ran" {
                if object.iter().any(|word| word.is_capitalized() || word.is_number()) && !past {
                    push(found, MemoryType::Environment, "environment", object, statement_of(object), 0.75, &reading);
                } else {
                    generic(object, &verb_written, adverbial, past, &reading, found);
                }
                return;
            }
            if past || object.iter().any(|word| word.lower == "to") {
                return;
            }
            // "I'm going to use lyrics from my favourite songs": a plan, not a tool of theirs.
            if group.future {
                return push(found, MemoryType::Goal, "goal", object, statement_of(object), 0.55, &reading);
            }
            push(found, MemoryType::Environment, "environment", object, statement_of(object), 0.8, &reading);
        }
        Some(VerbClass::Learn) if !object.is_empty() && !is_dangling(object) && !mentions_you(object) => {
            let (memory_type, slot) = if past { (MemoryType::Skill, "skill") } else { (MemoryType::Goal, "learning") };
            push(found, memory_type, slot, object, statement_of(object), 0.8, &reading);
        }
        Some(VerbClass::Eat) if !object.is_empty() && !is_dangling(object) && !mentions_you(object) => {
            let slot = if group.negated { "does_not_eat" } else { "eats" };
            push(found, MemoryType::Preference, slot, object, statement_of(object), 0.8, &reading);
        }
        Some(VerbClass::Called) => {}
        // "I see the Rolling Stones in concert every year": what they do again and again.
        Some(VerbClass::Conversational | VerbClass::Task)
            if !group.negated && says_how_often(object) && !is_dangling(object) && !mentions_you(object) && !names_task(object) =>
        {
            push(found, MemoryType::Fact, "habit", object, statement_of(object), 0.7, &reading);
        }
        // "I help tend the fields": a habit of helping with something named; "help me" asks.
        Some(VerbClass::Conversational | VerbClass::Task)
            if main.lower == "help"
                && object.len() >= 2
                && looks_like_a_verb(&object[0].lower)
                && !is_pointer(&object[0].lower)
                && !matches!(object[0].lower.as_str(), "me" | "us" | "out" | "him" | "her" | "them")
                && !mentions_you(object) =>
        {
            generic(object, &verb_written, adverbial, past, &reading, found);
        }
        // "I believe in god", "I don't believe in ghosts": a belief; any other believing is talk.
        Some(VerbClass::Conversational)
            if main.lower == "believe"
                && object.len() >= 2
                && object[0].lower == "in"
                && !is_dangling(tail(object, 1))
                && !mentions_you(object) =>
        {
            push(found, MemoryType::Identity, "trait", tail(object, 1), statement_of(object), 0.75, &reading);
        }
        // "I know how to weld": a skill; any other knowing is talk.
        Some(VerbClass::Conversational)
            if main.lower == "know" && !group.negated && object.len() > 2 && object[0].lower == "how" && object[1].lower == "to" =>
        {
            push(found, MemoryType::Skill, "skill", object, statement_of(object), 0.75, &reading);
        }
        Some(_) => {}
        None if looks_like_a_verb(&main.lower) && object.len() <= 12 => generic(object, &verb_written, adverbial, past, &reading, found),
        None => {}
    }
}

/// Where a second verb phrase of the same subject starts after "and" or "but" in `rest` (the
/// words after the subject's verb group), as the index of the conjunction: the word after it is
/// a verb the lexicon knows, or a word that can be a verb followed by what opens its object
/// ("and drive a big truck"). Not a gerund ("swimming and running" are one list), not a name.
fn second_verb_phrase(rest: &[Word]) -> Option<usize> {
    let lexicon = Lexicon::of(Language::English);
    (1..rest.len().saturating_sub(2)).find(|&at| {
        if !matches!(rest[at].lower.as_str(), "and" | "but") {
            return false;
        }
        let verb = &rest[at + 1];
        let next = rest[at + 2].lower.as_str();
        if verb.is_capitalized() || verb.lower.ends_with("ing") || verb.is_number() {
            return false;
        }
        let known =
            lexicon.verb_class(&lemma(&verb.lower)).is_some_and(|class| !matches!(class, VerbClass::Be | VerbClass::Conversational));
        let opens_object = matches!(
            next,
            "a" | "an" | "the" | "my" | "our" | "some" | "every" | "to" | "in" | "at" | "for" | "with" | "on" | "two" | "three" | "lots"
        );
        (known && next != "and") || (looks_like_a_verb(&verb.lower) && opens_object && !is_english_past(&rest[at - 1].lower))
    })
}

/// "I moved to Oslo (from Lisbon)": the new home, and the old one as a former home.
fn moved(object: &[Word], group: &VerbGroup, adverbial: &[Word], reading: &Reading, found: &mut Vec<Found>) {
    let Some(to) = object.iter().position(|word| word.lower == "to") else {
        // "I just moved into my first home": a move, to no named place.
        if object.first().is_some_and(|word| word.lower == "into") && object.len() > 2 && (group.future || group.be) {
            let statement = anchored(&sentence(&["is moving".into()], &third(object), adverbial), reading.time, false);
            if !is_dangling(tail(object, 1)) {
                push(found, MemoryType::Goal, "goal", tail(object, 1), statement, 0.7, reading);
            }
            return;
        }
        if object.first().is_some_and(|word| word.lower == "into") && object.len() > 2 {
            let whole = anchored(&sentence(&["moved".into()], &third(object), adverbial), reading.time, true);
            if !is_dangling(tail(object, 1)) {
                push(found, MemoryType::Context, "life_event", tail(object, 1), whole, 0.7, reading);
            }
            return;
        }
        // "I just moved here from Germany": where the user lived before.
        let from = object.iter().position(|word| word.lower == "from");
        if let Some(from) = from
            && !group.future
            && !group.be
        {
            let origin = trim_time(tail(object, from + 1));
            if !origin.is_empty() && !is_dangling(origin) && origin[0].is_capitalized() {
                push(found, MemoryType::Fact, "former_home", origin, format!("Used to live in {}", third(origin)), 0.8, reading);
                let whole = anchored(&sentence(&["moved".into()], &third(object), adverbial), reading.time, true);
                push(found, MemoryType::Context, "life_event", object, whole, 0.7, reading);
            }
        }
        return;
    };
    let from = object.iter().position(|word| word.lower == "from");
    let destination_end = from.filter(|&from| from > to).unwrap_or(object.len());
    let destination = trim_time(span(object, to + 1, destination_end));
    if destination.is_empty() || is_dangling(destination) {
        return;
    }
    if group.future || group.be {
        let statement = anchored(&sentence(&["is moving to".into()], &third(destination), adverbial), reading.time, false);
        return push(found, MemoryType::Goal, "goal", destination, statement, 0.75, reading);
    }
    let change = Reading { change: true, ..*reading };
    push(found, MemoryType::Identity, "home", destination, format!("Lives in {}", third(destination)), 0.85, &change);
    if let Some(from) = from {
        let origin_end = if to > from { to } else { object.len() };
        let origin = trim_time(span(object, from + 1, origin_end));
        if !origin.is_empty() && !is_dangling(origin) {
            push(found, MemoryType::Fact, "former_home", origin, format!("Used to live in {}", third(origin)), 0.8, reading);
        }
    }
    let whole = anchored(&sentence(&["moved".into()], &third(object), adverbial), reading.time, true);
    push(found, MemoryType::Context, "life_event", object, whole, 0.7, reading);
}

/// "I work as a welder at Acme in Leeds": occupation, employer, field, project.
fn work(object: &[Word], verb: &[String], adverbial: &[Word], past: bool, reading: &Reading, found: &mut Vec<Found>) {
    let Some(first) = object.first() else { return };
    let statement = anchored(&sentence(verb, &third(object), adverbial), reading.time, past);
    // "I work out four times a week": exercise, a habit; once in the past, only that day's.
    if first.lower == "out" {
        if !past && !is_dangling(tail(object, 1)) && !mentions_you(object) {
            push(found, MemoryType::Fact, "habit", object, statement, 0.7, reading);
        }
        return;
    }
    if past {
        if !is_dangling(tail(object, 1)) && object.len() > 1 {
            push(found, MemoryType::Fact, "former_work", object, statement, 0.75, reading);
        }
        return;
    }
    let value = trim_time(tail(object, 1.min(object.len())));
    if value.is_empty() || is_dangling(value) || mentions_you(value) {
        return;
    }
    match first.lower.as_str() {
        "as" => push(found, MemoryType::Identity, "occupation", value, capitalized(&format!("works as {}", third(value))), 0.85, reading),
        "at" | "for" => {
            push(found, MemoryType::Identity, "employer", value, capitalized(&format!("works at {}", third(value))), 0.85, reading)
        }
        "on" if !names_task(value)
            && !matches!(value[0].lower.as_str(), "in" | "at" | "for" | "with" | "from" | "on" | "to" | "it" | "this" | "that") =>
        {
            push(found, MemoryType::Project, "project", value, statement, 0.75, reading);
        }
        "on" => {}
        "in" | "with" | "from" | "remotely" | "part-time" | "full-time" | "full" | "part" | "nights" | "night" | "two" | "three" => {
            push(found, MemoryType::Identity, "work", object, statement, 0.75, reading);
        }
        // "I work the night shift", "I work my parents' farm": what they work, not an amount
        // ("a lot") or a way ("my way through it").
        "the" | "my" | "our" | "a" | "an"
            if !matches!(value[0].lower.as_str(), "lot" | "bit" | "little" | "few" | "ton")
                && !object.iter().any(|word| word.lower == "way")
                && !names_task(value)
                && !is_pointer(&value[0].lower) =>
        {
            push(found, MemoryType::Identity, "work", object, statement, 0.75, reading);
        }
        _ => {}
    }
}

/// "I want to / plan to / hope to / will …": a goal, unless it is about the task at hand or
/// points at nothing said ("I want to quit that").
fn plan(object: &[Word], verb: &[String], adverbial: &[Word], past: bool, reading: &Reading, found: &mut Vec<Found>) {
    // "I've always wanted a pet cow": a wish held until now.
    let held = verb.iter().any(|word| word == "always") && verb.iter().any(|word| matches!(word.as_str(), "has" | "have"));
    if (past && !held) || object.is_empty() || mentions_you(object) {
        return;
    }
    let (first, action) = match object[0].lower.as_str() {
        "to" | "on" | "of" | "about" => (1, object.get(1)),
        _ => (0, None),
    };
    let Some(action) = action else {
        // "I want a dog", "I want kids": wants that name people or animals are goals; "I want
        // the result row-wise" is a request.
        if object.iter().any(|word| is_kin(&word.lower, Language::English)) || (held && !is_dangling(object)) {
            push(found, MemoryType::Goal, "goal", object, sentence(verb, &third(object), adverbial), 0.75, reading);
        }
        return;
    };
    let action_lemma = lemma(&action.lower);
    if TASK_INFINITIVES.contains(&action_lemma.as_str())
        && !matches!(action_lemma.as_str(), "start" | "learn" | "move" | "run" | "build" | "stop" | "work")
    {
        return;
    }
    let after = tail(object, first + 1);
    if (after.is_empty() && !matches!(action_lemma.as_str(), "retire" | "travel" | "graduate" | "marry" | "relocate"))
        || is_dangling(after)
        || names_task(after)
    {
        return;
    }
    if matches!(action_lemma.as_str(), "move" | "relocate") && after.first().is_some_and(|word| word.lower == "to") {
        let destination = trim_time(tail(after, 1));
        if !destination.is_empty() && !is_dangling(destination) {
            let statement = anchored(&sentence(verb, &third(object), adverbial), reading.time, false);
            return push(found, MemoryType::Goal, "goal", destination, statement, 0.75, reading);
        }
        return;
    }
    let statement = anchored(&sentence(verb, &third(object), adverbial), reading.time, false);
    push(found, MemoryType::Goal, "goal", tail(object, first), statement, 0.75, reading);
}

/// "I have two kids", "I have a Tesla", "I have diabetes", "I've got a question" (no memory).
fn have(object: &[Word], verb: &[String], adverbial: &[Word], past: bool, reading: &Reading, found: &mut Vec<Found>) {
    // A list goes on past "and" ("one brother and three sisters"); a time phrase ends it.
    let end = object
        .iter()
        .position(|word| {
            !word.is_capitalized() && matches!(word.lower.as_str(), "for" | "since" | "last" | "ago" | "because" | "when" | "but" | "so")
        })
        .unwrap_or(object.len());
    let object = span(object, 0, end);
    // "I have only read it once", "I've ever had": a perfect the verb group did not see, not a
    // possession.
    let after_adverbs = object
        .iter()
        .find(|word| !matches!(word.lower.as_str(), "only" | "just" | "never" | "ever" | "already" | "also" | "actually" | "really"));
    if after_adverbs.is_some_and(|word| is_participle(&word.lower) || (is_english_past(&word.lower) && !word.is_capitalized())) {
        return;
    }
    if object.is_empty() || object[0].lower == "to" || object[0].lower == "been" || is_dangling(object) || mentions_you(object) {
        return;
    }
    for item in list_items(object) {
        let head: Vec<&str> = item.iter().take(5).map(|word| word.lower.as_str()).collect();
        if head.iter().any(|word| is_task_noun(word) || matches!(*word, "fun" | "common" | "blast" | "chat" | "talk" | "conversation"))
            || matches!(head.first(), Some(&("no" | "nothing" | "something" | "time" | "fun" | "trouble" | "a" | "an")) if head.len() == 1)
        {
            continue;
        }
        // "Has two", "has theirs", "with lots of…", "a lot of favorite books": a count or a
        // pronoun of what was said before, or a reply to "what's your favorite…".
        let only_count = item.iter().all(|word| {
            word.is_number() || is_count(&word.lower) || matches!(word.lower.as_str(), "few" | "couple" | "each" | "of" | "a" | "both")
        });
        let pronoun =
            matches!(head.first(), Some(&("mine" | "yours" | "theirs" | "his" | "hers" | "ours" | "with" | "in" | "at" | "for" | "on")));
        let favourites = head.iter().any(|word| matches!(*word, "favorite" | "favourite" | "favorites" | "favourites"));
        if only_count || pronoun || favourites {
            continue;
        }
        if head.first().is_some_and(|word| matches!(*word, "no" | "any"))
            && head.get(1).is_some_and(|word| matches!(*word, "idea" | "clue" | "problem" | "worries" | "time" | "plans" | "experience"))
        {
            continue;
        }
        let statement = anchored(&sentence(verb, &third(&item), adverbial), reading.time, past);
        let kin = item.iter().find(|word| is_kin(&word.lower, Language::English));
        match kin {
            Some(kin) => {
                let slot = if is_partner(&kin.lower) {
                    "partner"
                } else if item.iter().any(|word| word.is_number() || is_count(&word.lower)) && is_child(&kin.lower) {
                    "children"
                } else {
                    "relation"
                };
                push(found, MemoryType::Relationship, slot, &item, statement, 0.85, reading);
            }
            None if past => push(found, MemoryType::Context, "life_event", &item, statement, 0.65, reading),
            None => push(found, MemoryType::Fact, "has", &item, statement, 0.7, reading),
        }
    }
}

/// "I'm …": what the user is, by the complement's form.
fn complement(words: &[Word], verb: &[String], reading: &Reading, found: &mut Vec<Found>) {
    let lexicon = Lexicon::of(Language::English);
    let mut start = 0;
    while words.get(start).is_some_and(|word| {
        lexicon.fillers.contains(&word.lower.as_str()) || matches!(word.lower.as_str(), "so" | "very" | "quite" | "a bit")
    }) {
        start += 1;
    }
    let words = tail(words, start);
    let Some(first) = words.first() else { return };
    let negated = verb.iter().any(|word| word == "not" || word == "never");
    let past = verb.iter().any(|word| word == "was" || word == "got") && !verb.iter().any(|word| word == "been");
    let verb_text = if verb.is_empty() { vec!["is".to_owned()] } else { verb.to_vec() };
    let say = |rest: &[Word]| anchored(&sentence(&verb_text, &third(rest), &[]), reading.time, past);
    let first_lower = first.lower.as_str();
    if first.is_number() && !past && !negated {
        let years = words.get(1).is_none_or(|word| matches!(word.lower.as_str(), "years" | "year" | "yo" | "y/o" | "yrs" | "now" | "and"));
        if years && first_lower.len() <= 3 && first_lower.parse::<u32>().is_ok_and(|age| (5..=110).contains(&age)) {
            return push(found, MemoryType::Identity, "age", span(words, 0, 1), format!("Is {first_lower} years old"), 0.85, reading);
        }
        return;
    }
    // "I'm in my thirties", "I'm in my early 40s": an age said by its decade.
    if first_lower == "in" && !negated && words.get(1).is_some_and(|word| word.lower == "my") {
        let decade = tail(words, 2);
        let named = decade.iter().take(2).any(|word| is_decade(&word.lower));
        if named && decade.len() <= 2 {
            let statement = format!("Is in their {}", joined(decade));
            return push(found, MemoryType::Identity, "age", decade, statement, 0.8, reading);
        }
    }
    let followed_by = |wanted: &[&str]| words.get(1).is_some_and(|word| wanted.contains(&word.lower.as_str()));
    let skill_or_fear = (matches!(first_lower, "afraid" | "scared" | "terrified") && followed_by(&["of"]))
        || (matches!(first_lower, "good" | "great" | "bad" | "terrible") && followed_by(&["at", "with"]));
    // "I'm so excited to go to Disney World this year": what they look forward to.
    let looking_forward = matches!(first_lower, "excited" | "eager" | "thrilled") && followed_by(&["to"]) && words.len() > 3;
    if looking_forward && !negated && !past {
        let plan = tail(words, 2);
        let light = is_light_verb(&plan[0].lower) && plan.len() < 3;
        if !light
            && looks_like_a_verb(&plan[0].lower)
            && (says_when_ahead(plan) || is_their_own_doing(plan))
            && !is_dangling(tail(plan, 1))
            && !mentions_you(plan)
            && !names_task(plan)
        {
            return push(found, MemoryType::Goal, "goal", plan, say(words), 0.6, reading);
        }
        return;
    }
    let interest = first_lower == "interested" && followed_by(&["in"]) && words.len() > 2;
    if is_conversational_state(first_lower) && !skill_or_fear && !interest {
        return;
    }
    if matches!(first_lower, "afraid" | "scared" | "terrified") {
        return push(found, MemoryType::Fact, "fear", tail(words, 2), say(words), 0.8, reading);
    }
    if mentions_you(words) || is_dangling(words) {
        return;
    }
    match first_lower {
        "from" if words.len() > 1 => {
            let place = trim_time(tail(words, 1));
            let statement = capitalized(&format!("{} from {}", if past { "was" } else { "comes" }, third(place)));
            return push(found, MemoryType::Identity, "origin", place, statement, 0.85, reading);
        }
        "born" => {
            if words.len() > 2 {
                return push(found, MemoryType::Identity, "origin", place_after_preposition(tail(words, 1)), say(words), 0.85, reading);
            }
            return;
        }
        "based" | "located" | "living" | "settled" if words.len() > 2 => {
            let place = place_after_preposition(tail(words, 1));
            return push(found, MemoryType::Identity, "home", place, format!("Lives in {}", third(place)), 0.85, reading);
        }
        "called" | "named" if words.len() > 1 && words[1].is_capitalized() => {
            return push(found, MemoryType::Identity, "name", span(words, 1, 2), format!("Name is {}", words[1].text), 0.85, reading);
        }
        "allergic" | "intolerant" => return push(found, MemoryType::Fact, "allergy", words, say(words), 0.85, reading),
        "married" | "engaged" | "divorced" | "single" | "widowed" | "separated" => {
            return push(found, MemoryType::Relationship, "partner", span(words, 0, 1), say(words), 0.85, reading);
        }
        "into" | "passionate" | "obsessed" | "fond" | "keen" | "crazy" | "addicted" if words.len() > 2 || first_lower == "into" => {
            if !is_reaction(tail(words, 1), reading.after_reply) {
                return push(found, MemoryType::Preference, "likes", tail(words, 1), say(words), 0.8, reading);
            }
            return;
        }
        "interested" if words.get(1).is_some_and(|word| word.lower == "in") && !mentions_you(words) => {
            if !is_reaction(tail(words, 2), reading.after_reply)
                && !tail(words, 2).first().is_some_and(|word| {
                    word.lower.ends_with("ing") && matches!(word.lower.as_str(), "hearing" | "learning" | "knowing" | "seeing")
                })
            {
                return push(found, MemoryType::Preference, "likes", tail(words, 2), say(words), 0.75, reading);
            }
            return;
        }
        "good" | "great" | "bad" | "terrible" | "fluent" | "skilled" | "proficient" | "experienced" | "decent" | "expert"
            if words.len() > 2 =>
        {
            // "I'm not good at it", "good at either": at what was said before.
            if is_dangling(tail(words, 2)) || tail(words, 2).iter().all(|word| matches!(word.lower.as_str(), "either" | "neither" | "both"))
            {
                return;
            }
            let memory_type = if first_lower == "fluent" { MemoryType::Identity } else { MemoryType::Skill };
            return push(
                found,
                memory_type,
                if first_lower == "fluent" { "languages" } else { "skill" },
                tail(words, 2),
                say(words),
                0.8,
                reading,
            );
        }
        "on" if words.len() > 1 => {
            if words.iter().skip(1).any(|word| word.is_capitalized() || word.is_number()) {
                return push(found, MemoryType::Environment, "environment", tail(words, 1), say(words), 0.8, reading);
            }
            if words.iter().any(|word| matches!(word.lower.as_str(), "diet" | "medication" | "meds" | "keto")) {
                return push(found, MemoryType::Fact, "health", tail(words, 1), say(words), 0.75, reading);
            }
            // "I'm on the soccer team", "I'm on the school board": a group they belong to.
            let group = words.iter().take(5).any(|word| {
                matches!(word.lower.as_str(), "team" | "board" | "committee" | "council" | "squad" | "crew" | "staff" | "faculty" | "jury")
            });
            if group && !past && !negated && !is_dangling(tail(words, 1)) && !mentions_you(words) && !names_task(words) {
                return push(found, MemoryType::Identity, "member_of", tail(words, 1), say(words), 0.75, reading);
            }
            return;
        }
        // "I've been with my boyfriend for three years", "been with the same company since
        // 2010": how long they have been with someone, or with an employer.
        "with" if verb.iter().any(|word| word == "been") && !negated && words.len() > 3 => {
            let Some(until) = words.iter().position(|word| matches!(word.lower.as_str(), "for" | "since")).filter(|&at| at > 1) else {
                return;
            };
            let whom = span(words, 1, until);
            if whom.iter().any(|word| is_kin(&word.lower, Language::English)) {
                return push(found, MemoryType::Relationship, "relation", whom, say(words), 0.8, reading);
            }
            let employer = whom.iter().any(|word| {
                matches!(word.lower.as_str(), "company" | "firm" | "employer" | "organization" | "organisation" | "agency" | "business")
            });
            if employer || (whom.iter().any(Word::is_capitalized) && !is_pointer(&whom[0].lower)) {
                return push(found, MemoryType::Context, "experience", whom, say(words), 0.7, reading);
            }
            return;
        }
        "in" | "at" if words.len() > 1 => {
            if words
                .iter()
                .skip(1)
                .any(|word| matches!(word.lower.as_str(), "school" | "college" | "university" | "grade" | "uni" | "year" | "class"))
            {
                return push(found, MemoryType::Identity, "education", tail(words, 1), say(words), 0.75, reading);
            }
            if words[1].is_capitalized() && !past {
                return push(found, MemoryType::Context, "location", tail(words, 1), say(words), 0.65, reading);
            }
            // "I'm in a juvenile detention center", "I'm in an open relationship", "I'm in the army".
            let the_group = words[1].lower == "the" && (3..=5).contains(&words.len()) && !is_pointer(&words[2].lower);
            if (matches!(words[1].lower.as_str(), "a" | "an") && words.len() >= 4 || the_group) && !names_task(words) {
                return push(found, MemoryType::Context, "situation", tail(words, 1), say(words), 0.65, reading);
            }
            return;
        }
        _ => {}
    }
    // "I'm Ana", "I'm George": a name; "I'm Canadian": a nationality.
    if first.is_capitalized() && words.len() <= 3 && words.iter().all(Word::is_capitalized) && !past && !negated {
        let nationality = ["an", "ish", "ese", "ch", "i", "ic"].iter().any(|ending| first_lower.ends_with(ending)) && words.len() == 1;
        if nationality {
            return push(found, MemoryType::Identity, "nationality", words, capitalized(&format!("is {}", joined(words))), 0.8, reading);
        }
        // A role, not a name ("I'm User 2").
        if matches!(first_lower, "user" | "assistant" | "bot" | "ai" | "human" | "speaker" | "person") {
            return;
        }
        return push(found, MemoryType::Identity, "name", words, format!("Name is {}", joined(words)), 0.8, reading);
    }
    // "I was raised in…", "I'm employed by…": a passive says what happened to the user.
    if words.len() > 2 && is_english_past(first_lower) && !matches!(first_lower, "used" | "born") {
        let memory_type = if past { MemoryType::Context } else { MemoryType::Fact };
        return push(found, memory_type, "experience", tail(words, 1), say(words), 0.75, reading);
    }
    // "I'm vegan", "I'm a strict vegetarian"; "a vegan mom of two" is a noun phrase whose
    // modifiers are read below.
    let diet_head =
        |at: usize| words.get(at + 1).is_none_or(|next| matches!(next.lower.as_str(), "and" | "since" | "now" | "too" | "for" | "so"));
    let diet = (is_diet(first_lower) && diet_head(0))
        || (words.len() > 1 && is_diet(&words[1].lower) && matches!(first_lower, "a" | "an" | "strict" | "fully") && diet_head(1));
    if diet {
        // "I've been vegetarian for years" keeps its perfect.
        let perfect = verb.iter().any(|word| word == "been");
        let statement = if negated || perfect { say(words) } else { capitalized(&format!("is {}", third(words))) };
        return push(found, MemoryType::Preference, "diet", words, statement, 0.85, reading);
    }
    if matches!(first_lower, "a" | "an" | "the") {
        return noun_phrase(words, &verb_text, negated, past, reading, found);
    }
    // "I'm pregnant with my first child", "I'm afraid of heights": a state and what it is of.
    let state_with_object = words.len() > 4
        && words.len() <= 8
        && matches!(words[1].lower.as_str(), "with" | "of" | "about" | "for")
        && !is_dangling(tail(words, 2))
        && !names_task(words)
        && looks_like_a_verb(first_lower);
    if state_with_object && !negated {
        let memory_type = if past { MemoryType::Context } else { MemoryType::Identity };
        return push(found, memory_type, "trait", words, say(words), 0.7, reading);
    }
    // "I'm name", "I was all like", "I'm the opposite": a placeholder, a quote's frame, a pointer.
    let empty = words.iter().any(|word| matches!(word.lower.as_str(), "name" | "like" | "opposite" | "same" | "user" | "one"));
    if words.len() <= 4
        && !empty
        && words.iter().all(|word| !is_task_noun(&word.lower))
        && first.lower.chars().all(|c| c.is_alphabetic() || c == '-')
    {
        let memory_type = if past { MemoryType::Context } else { MemoryType::Identity };
        push(found, memory_type, "trait", words, say(words), 0.7, reading);
    }
}

/// "a vegan mom of two in Austin", "a teacher with two toddlers in Denver", "a big fan of
/// jazz": the core noun phrase and each modifier on its own.
fn noun_phrase(words: &[Word], verb: &[String], negated: bool, past: bool, reading: &Reading, found: &mut Vec<Found>) {
    let lower: Vec<&str> = words.iter().map(|word| word.lower.as_str()).collect();
    if lower.iter().take(4).any(|word| matches!(*word, "fan" | "lover" | "enthusiast" | "nerd" | "junkie" | "buff" | "geek" | "fanatic")) {
        let of = lower.iter().position(|word| *word == "of").map_or(1, |of| of + 1);
        let value = if of < words.len() { tail(words, of) } else { tail(words, 1) };
        if !is_reaction(value, reading.after_reply) {
            // "I've been a fan of jazz for years" keeps its perfect, and "I'm not a big fan of
            // horror" its negation: a dislike.
            let copula = if negated || verb.iter().any(|word| word == "been") { verb.join(" ") } else { "is".to_owned() };
            let slot = if negated { "dislikes" } else { "likes" };
            push(found, MemoryType::Preference, slot, value, capitalized(&format!("{copula} {}", third(words))), 0.8, reading);
        }
        return;
    }
    // "a bit of a party animal" is a party animal.
    if lower.len() > 4 && lower[1] == "bit" && lower[2] == "of" && matches!(lower[3], "a" | "an") {
        return noun_phrase(tail(words, 3), verb, negated, past, reading, found);
    }
    if matches!(lower.get(1), Some(&("bit" | "little" | "lot" | "huge" | "big" | "quick" | "few" | "couple")))
        && lower.get(2).is_some_and(|word| *word == "of" || is_conversational_state(word))
    {
        return;
    }
    let boundary = lower.iter().enumerate().skip(1).find(|(index, word)| {
        matches!(
            **word,
            "with" | "in" | "from" | "who" | "that" | "and" | "based" | "living" | "working" | "since" | "during" | "every" | "to"
        ) || (**word == "of" && lower.get(index - 1).is_some_and(|previous| is_parent(previous)))
    });
    let core_end = boundary.map_or(words.len(), |(index, _)| index);
    let core = span(words, 0, core_end);
    // The head noun stands before any "for"/"at"/"of" phrase the core keeps ("a mail carrier
    // for the US Postal Service").
    let head_end =
        core.iter().skip(1).position(|word| matches!(word.lower.as_str(), "for" | "at" | "of" | "on")).map_or(core.len(), |at| at + 1);
    let head = span(core, 0, head_end).last().map_or("", |word| word.lower.as_str());
    if core.len() < 2 || head_end > 6 || core.len() > 12 || is_task_noun(head) || is_pointer(head) {
        return;
    }
    let verb_text = verb.join(" ");
    let core_statement = capitalized(&format!("{verb_text} {}", third(core)));
    if negated {
        // "I'm not a good swimmer", "not a great writer": what they are not good at, said of
        // themselves; no correction of the assistant.
        let agent = ["er", "or", "ist", "ian"].iter().any(|ending| head.ends_with(ending)) && head.len() > 4;
        if matches!(lower.get(1), Some(&("good" | "great" | "strong" | "fast" | "confident" | "natural" | "skilled")))
            && agent
            && core.len() <= 4
        {
            return push(found, MemoryType::Skill, "skill", tail(core, 2), core_statement, 0.7, reading);
        }
        // "I'm not a morning person", "not really a people person": a kind of person they are
        // not, said to describe themselves (no assistant takes them for a "dog person").
        if head == "person" && (3..=4).contains(&head_end) {
            return push(found, MemoryType::Identity, "trait", tail(core, 1), core_statement, 0.7, reading);
        }
        // "I'm not a doctor": true, but said to correct the assistant, not to describe oneself.
        return push(found, MemoryType::Identity, "trait", tail(core, 1), core_statement, 0.45, reading);
    }
    let occupation = looks_like_occupation(head) && !past;
    if occupation {
        push(found, MemoryType::Identity, "occupation", tail(core, 1), core_statement, 0.8, reading);
    } else if is_parent(head) {
        push(found, MemoryType::Relationship, "relation", tail(core, 1), core_statement, 0.75, reading);
    } else {
        let memory_type = if past { MemoryType::Context } else { MemoryType::Identity };
        push(found, memory_type, "trait", tail(core, 1), core_statement, 0.75, reading);
    }
    if negated || past {
        return;
    }
    // The modifiers, each a memory of its own.
    let mut index = core_end;
    while index < words.len() {
        // A relative clause ("who volunteers at a soup kitchen") runs on to its end.
        let relative = matches!(lower[index], "who" | "that");
        let end = (index + 1..words.len())
            .find(|&next| {
                if relative {
                    matches!(lower[next], "who" | "and")
                } else {
                    matches!(lower[next], "with" | "in" | "at" | "from" | "who" | "and" | "based" | "living" | "working" | "since")
                }
            })
            .unwrap_or(words.len());
        let part = span(words, index + 1, end);
        match lower[index] {
            "of" if part.first().is_some_and(|word| word.is_number() || is_count(&word.lower)) => {
                let statement = format!("Has {} children", part[0].lower);
                push(found, MemoryType::Relationship, "children", part, statement, 0.75, reading);
            }
            "with" | "and" if part.iter().any(|word| is_kin(&word.lower, Language::English)) => {
                let statement = capitalized(&format!("has {}", third(part)));
                push(found, MemoryType::Relationship, "relation", part, statement, 0.75, reading);
            }
            "in" | "based" | "living" if !part.is_empty() && part.iter().any(Word::is_capitalized) => {
                let place = if matches!(part.first().map(|word| word.lower.as_str()), Some("in")) { tail(part, 1) } else { part };
                push(found, MemoryType::Identity, "home", place, format!("Lives in {}", third(place)), 0.7, reading);
            }
            "at" if part.first().is_some_and(Word::is_capitalized) && occupation => {
                push(found, MemoryType::Identity, "employer", part, format!("Works at {}", third(part)), 0.75, reading);
            }
            "who" | "that" if part.len() >= 2 && !mentions_you(part) && !is_dangling(tail(part, 1)) => {
                let verb = part[0].lower.as_str();
                let told = Lexicon::of(Language::English)
                    .verb_class(verb)
                    .is_some_and(|class| matches!(class, VerbClass::Conversational | VerbClass::Task));
                if (verb.ends_with('s') || is_english_past(verb)) && !told {
                    push(found, MemoryType::Fact, "habit", part, capitalized(&third(part)), 0.7, reading);
                }
            }
            "from" if part.first().is_some_and(Word::is_capitalized) => {
                push(found, MemoryType::Identity, "origin", part, format!("Comes from {}", third(part)), 0.75, reading);
            }
            _ => {}
        }
        index = end;
    }
}

/// "I'm learning Rust", "I'm training for a marathon", "I'm building a budgeting app", "I've
/// been working as a nurse for ten years".
fn progressive(group: &VerbGroup, rest: &[Word], adverbial: &[Word], reading: &Reading, found: &mut Vec<Found>) {
    let main = &rest[0];
    let object = tail(rest, 1);
    let Some(first) = object.first().map(|word| word.lower.as_str()) else { return };
    let passing = match main.lower.as_str() {
        "doing" | "feeling" | "wondering" | "asking" | "saying" | "talking" | "telling" | "trying" | "kidding" | "joking" => true,
        "thinking" => !(matches!(first, "about" | "of") && object.get(1).is_some_and(|word| word.lower.ends_with("ing"))),
        "having" => matches!(first, "a" | "fun" | "trouble" | "issues" | "problems" | "difficulty" | "some" | "the"),
        "looking" => first != "for" || names_task(object),
        "getting" => !matches!(first, "married" | "divorced" | "engaged" | "ready" | "a" | "my" | "into" | "back"),
        "going" => !object.iter().any(Word::is_capitalized) && first != "to",
        _ => false,
    };
    // "I'm getting an error", "I'm going to try": told first, as most progressives are the
    // task at hand ("looking" goes on: "looking forward to" is a plan).
    if passing && main.lower != "looking" {
        return;
    }
    if mentions_you(object) || is_dangling(object) {
        return;
    }
    let lemma = lemma(&main.lower);
    // "I'm looking forward to going to business school": a plan.
    if main.lower == "looking" && first == "forward" && object.get(1).is_some_and(|word| word.lower == "to") && object.len() > 2 {
        let plan = tail(object, 2);
        if !is_dangling(plan) && !mentions_you(plan) && !names_task(plan) && (says_when_ahead(plan) || is_their_own_doing(plan)) {
            let statement = anchored(&sentence(&["is looking forward to".to_owned()], &third(plan), adverbial), reading.time, false);
            push(found, MemoryType::Goal, "goal", plan, statement, 0.65, reading);
        }
        return;
    }
    if passing {
        return;
    }
    if main.lower == "looking" {
        // "looking for new recipes to try" is the task of the day; "looking for a job" is a situation.
        if object.iter().any(|word| word.lower == "to") || object.len() > 8 {
            return;
        }
        let statement = anchored(&sentence(&["is looking".to_owned()], &third(object), adverbial), reading.time, false);
        return push(found, MemoryType::Context, "situation", tail(object, 1), statement, 0.7, reading);
    }
    let class = Lexicon::of(Language::English).verb_class(&lemma);
    let mut verb = group.written.clone();
    verb.push(main.lower.to_string());
    let statement = anchored(&sentence(&verb, &third(object), adverbial), reading.time, group.past);
    // "I'm getting married in June", "I'm expecting twins": what is about to happen in their life.
    let life_change = (main.lower == "getting" && matches!(first, "married" | "engaged" | "divorced"))
        || (main.lower == "expecting" && !matches!(first, "that" | "to" | "a" | "an" | "the" | "it" | "some" | "more"));
    if life_change && !group.negated {
        return push(found, MemoryType::Context, "life_event", object, statement, 0.75, reading);
    }
    // "I'm helping my dad tend the fields": what they are doing with their people.
    let with_their_people = object.len() > 2 && object[0].lower == "my" && is_kin(&object[1].lower, Language::English);
    match class {
        Some(VerbClass::Conversational | VerbClass::Task) if lemma == "help" && with_their_people => {
            push(found, MemoryType::Context, "situation", object, statement, 0.7, reading);
        }
        Some(VerbClass::Conversational | VerbClass::Task) if lemma != "think" => {}
        Some(VerbClass::Conversational) => {
            // "I'm thinking about moving to Spain": a plan.
            let statement = anchored(&sentence(&verb, &third(object), adverbial), reading.time, false);
            push(found, MemoryType::Goal, "goal", tail(object, 1), statement, 0.7, reading);
        }
        Some(VerbClass::Live) if !group.past => {
            let place = place_after_preposition(object);
            if !place.is_empty() {
                push(found, MemoryType::Identity, "home", place, format!("Lives {}", third(object)), 0.85, reading);
            }
        }
        Some(VerbClass::Move) => moved(object, &VerbGroup { be: true, ..VerbGroup::default() }, adverbial, reading, found),
        Some(VerbClass::Work) => work(object, &verb, adverbial, group.past, reading, found),
        Some(VerbClass::Study) => push(found, MemoryType::Identity, "education", object, statement, 0.8, reading),
        Some(VerbClass::Learn) => {
            if !matches!(first, "from" | "about" | "a" | "so" | "more" | "lots" | "that" | "how" | "to") {
                push(found, MemoryType::Goal, "learning", object, statement, 0.8, reading);
            }
        }
        Some(VerbClass::Plan) => plan(tail(rest, 1), &verb, adverbial, group.past, reading, found),
        Some(VerbClass::Use) => {
            if !names_task(object) && !group.past {
                push(found, MemoryType::Environment, "environment", object, statement, 0.75, reading);
            }
        }
        _ => {
            if names_task(object) {
                return;
            }
            let (memory_type, slot) = match lemma.as_str() {
                "build" | "develop" | "write" | "make" | "create" | "design" | "code" | "launch" | "start" | "run" | "found" | "plan"
                | "organize" | "organise" => (MemoryType::Project, "project"),
                "train" | "prepare" | "save" => (MemoryType::Goal, "goal"),
                "get" if object.first().is_some_and(|word| word.lower == "married") => (MemoryType::Goal, "goal"),
                _ => (MemoryType::Context, "situation"),
            };
            push(found, memory_type, slot, object, statement, 0.7, reading);
        }
    }
}

/// Any other verb: a habit in the present ("I volunteer at a shelter"), an event in the past
/// ("I ran a half marathon last May").
fn generic(object: &[Word], verb: &[String], adverbial: &[Word], past: bool, reading: &Reading, found: &mut Vec<Found>) {
    if object.is_empty() || mentions_you(object) || is_dangling(object) || names_task(object) {
        return;
    }
    let statement = anchored(&sentence(verb, &third(object), adverbial), reading.time, past);
    let negated = verb.iter().any(|word| word == "not" || word == "never");
    if past && !verb.iter().any(|word| word == "used") {
        // "I've never tried sushi" answers the conversation; said again, it is kept.
        let confidence = if negated { 0.45 } else { 0.7 };
        push(found, MemoryType::Context, "life_event", object, statement, confidence, reading);
    } else if verb.iter().any(|word| word == "will" || word == "going") {
        // "I'll bring my tools", "I'm going to check": the next few minutes, not a plan; but
        // "I'm going to start a bakery" is one.
        let starts_something = verb.last().is_some_and(|main| main == "start")
            && object.first().is_some_and(|word| matches!(word.lower.as_str(), "a" | "an" | "my" | "our"));
        // "I'll bring my kids to Disney next summer", "I'm going to take my mom to Paris in
        // May": a day or month ahead makes a plan of what would otherwise be the next few
        // minutes; checking, looking, trying and doing something stay the task at hand.
        let dated_ahead =
            says_when_ahead(object) && verb.last().is_some_and(|main| !matches!(main.as_str(), "check" | "look" | "let" | "try" | "do"));
        if !starts_something
            && !dated_ahead
            && verb.last().is_some_and(|main| {
                matches!(
                    main.as_str(),
                    "bring"
                        | "come"
                        | "get"
                        | "take"
                        | "check"
                        | "see"
                        | "let"
                        | "try"
                        | "start"
                        | "make"
                        | "do"
                        | "give"
                        | "send"
                        | "look"
                        | "keep"
                )
            })
        {
            return;
        }
        // What the user will do: a plan, weakly (most are the evening's plans).
        let statement = anchored(&sentence(verb, &third(object), adverbial), reading.time, false);
        push(found, MemoryType::Goal, "goal", object, statement, 0.55, reading);
    } else {
        let confidence = if negated { 0.7 } else { 0.75 };
        push(found, MemoryType::Fact, "habit", object, statement, confidence, reading);
    }
}

/// Whether the word after the subject can be the verb of a habit or an event: not an adjective,
/// adverb or noun by its ending ("we useful…", "I also…"), not a function word. Any other
/// word stands as said: the verbs of habits are open.
fn looks_like_a_verb(word: &str) -> bool {
    const NOT_VERB_ENDINGS: &[&str] =
        &["ful", "less", "ous", "ive", "able", "ible", "al", "ic", "ly", "ness", "ment", "tion", "sion", "ity", "ish"];
    const FUNCTION_WORDS: &[&str] = &[
        "the", "a", "an", "also", "too", "all", "both", "each", "it", "this", "that", "they", "you", "he", "she", "what", "how", "in",
        "on", "at", "for", "with", "not", "so", "very", "really", "of", "to", "and", "or", "but", "if", "then", "than", "just", "only",
        "some", "any", "no", "more", "most", "here", "there", "my", "your", "our", "their", "its", "his", "her", "who", "which", "when",
        "where", "why",
    ];
    word.chars().all(|c| c.is_alphabetic() || c == '-' || c == '\'')
        && !FUNCTION_WORDS.contains(&word)
        && !NOT_VERB_ENDINGS.iter().any(|ending| word.len() > ending.len() + 2 && word.ends_with(ending))
}

/// "my husband is allergic to peanuts", "my name is Ana", "my favourite food is pho": what
/// the user's people and things are.
fn possessed(words: &[Word], adverbial: &[Word], reading: &Reading, found: &mut Vec<Found>) {
    let lexicon = Lexicon::of(Language::English);
    // The noun phrase ends where its verb starts: a finite verb, or "used to" ("my father used
    // to work for NASA"; "my used car" is no verb).
    let Some(verb_at) = words
        .iter()
        .enumerate()
        .skip(1)
        .find(|(index, word)| {
            is_finite_after_noun(word, &words[index - 1])
                || (word.lower == "used" && words.get(index + 1).is_some_and(|next| next.lower == "to"))
        })
        .map(|(index, _)| index)
    else {
        return;
    };
    let noun = span(words, 0, verb_at);
    let rest = tail(words, verb_at);
    let noun_lower: Vec<&str> = noun.iter().map(|word| word.lower.as_str()).collect();
    let head = *noun_lower.last().unwrap_or(&"");
    if noun_lower.iter().any(|word| is_task_noun(word)) || rest.len() < 2 {
        return;
    }
    let predicate = tail(rest, 1);
    let verb = &rest[0].lower;
    // "My name is name": a template's placeholder.
    if predicate.iter().all(|word| noun_lower.contains(&word.lower.as_str())) {
        return;
    }
    if mentions_you(predicate) || (is_dangling(predicate) && !verb.starts_with("is")) {
        return;
    }
    let statement =
        anchored(&format!("Their {} {}", joined(noun), rest_in_third_person(rest, lexicon)), reading.time, is_english_past(verb));
    let statement = with_adverbial(statement, adverbial, reading.time);
    let copula = matches!(verb.as_str(), "is" | "are" | "was" | "were");
    match noun_lower.as_slice() {
        ["name"] if copula && predicate[0].is_capitalized() => {
            let name = words_until_break(predicate);
            push(found, MemoryType::Identity, "name", name, format!("Name is {}", joined(name)), 0.9, reading);
        }
        ["pronouns"] if copula => {
            push(found, MemoryType::Identity, "pronouns", predicate, format!("Pronouns are {}", joined(predicate)), 0.9, reading)
        }
        ["email" | "e-mail"] | ["email", "address"] if copula => {
            push(found, MemoryType::Identity, "email", predicate, format!("E-mail is {}", joined(predicate)), 0.9, reading)
        }
        ["phone" | "mobile" | "cell"] | ["phone" | "mobile" | "cell", "number"] | ["number"] if copula => {
            push(found, MemoryType::Identity, "phone", predicate, format!("Phone number is {}", joined(predicate)), 0.9, reading)
        }
        ["address"] | ["home", "address"] if copula => {
            push(found, MemoryType::Identity, "address", predicate, format!("Address is {}", joined(predicate)), 0.9, reading)
        }
        ["birthday"] if copula => push(found, MemoryType::Identity, "birthday", predicate, statement, 0.85, reading),
        // "My dream job is to be a park ranger", "my dream car is a Porsche": a wish, never
        // the job or the car they have (an occupation would replace the one they said).
        ["dream", _, ..] if copula => push(found, MemoryType::Goal, "goal", predicate, statement, 0.8, reading),
        [.., "job" | "occupation" | "profession"] if copula => {
            push(found, MemoryType::Identity, "occupation", predicate, statement, 0.8, reading)
        }
        [.., "goal" | "dream" | "plan" | "resolution" | "ambition"] if copula => {
            push(found, MemoryType::Goal, "goal", predicate, statement, 0.8, reading)
        }
        ["favorite" | "favourite", ..] | [.., "hobby" | "hobbies" | "passion"] => {
            push(found, MemoryType::Preference, "favourite", words, statement, 0.85, reading);
        }
        _ if noun_lower.iter().any(|word| is_kin(word, Language::English)) => {
            // What others say of the user is theirs to say.
            if matches!(verb.as_str(), "says" | "said" | "thinks" | "thought" | "told" | "believes" | "wants" | "asked" | "calls") {
                return;
            }
            let slot = if is_partner(head) { "partner_fact" } else { "relation" };
            push(found, MemoryType::Relationship, slot, words, statement, 0.8, reading);
        }
        _ => {
            if noun.len() > 3 || is_pointer(head) || predicate.iter().all(|word| is_pointer(&word.lower)) {
                return;
            }
            // Said once, "my car is red" is too thin to keep; said again, it is kept.
            push(found, MemoryType::Fact, "about", words, statement, 0.45, reading);
        }
    }
}

/// Whether `word` is where a subject noun phrase's verb starts ("my husband |works", "my
/// kids |are").
fn is_finite_after_noun(word: &Word, previous: &Word) -> bool {
    let lower = word.lower.as_str();
    if matches!(
        lower,
        "is" | "are"
            | "was"
            | "were"
            | "has"
            | "have"
            | "had"
            | "will"
            | "can"
            | "does"
            | "did"
            | "do"
            | "loves"
            | "likes"
            | "hates"
            | "works"
            | "lives"
    ) {
        return true;
    }
    if word.is_capitalized() || word.is_number() {
        return false;
    }
    // "my two grown children never visit", "my father used to drive": the predicate opens with
    // an adverb or "used to".
    if matches!(lower, "never" | "always" | "often" | "usually" | "sometimes" | "rarely" | "still") {
        return true;
    }
    if is_english_past(lower) && !matches!(lower, "used" | "born" | "named" | "called") {
        return true;
    }
    let plural_subject =
        previous.lower.ends_with('s') || matches!(previous.lower.as_str(), "children" | "parents" | "kids" | "people" | "and");
    (lower.ends_with('s')
        && !lower.ends_with("ss")
        && !previous.lower.ends_with('s')
        && lower.len() > 3
        && !is_kin(lower, Language::English))
        || (lower.ends_with("ed") && lower.len() > 4)
        || (plural_subject && Lexicon::of(Language::English).verb_class(lower).is_some())
}

/// Whether the words mention the assistant ("you", "your").
fn mentions_you(words: &[Word]) -> bool {
    words.iter().any(|word| {
        matches!(word.lower.as_str(), "you" | "your" | "yours" | "yourself" | "chatgpt" | "gpt" | "claude" | "gemini" | "copilot")
            // Chat shorthand, not a name ("U Zlatého").
            || (matches!(word.lower.as_str(), "u" | "ur") && !word.is_capitalized())
    })
}

/// Whether an object points only at something said before ("that", "it", "this one"): the
/// clause says nothing on its own.
fn is_dangling(words: &[Word]) -> bool {
    const THIN: &[&str] = &[
        "a",
        "an",
        "the",
        "to",
        "of",
        "out",
        "up",
        "again",
        "more",
        "too",
        "as",
        "well",
        "now",
        "all",
        "only",
        "just",
        "really",
        "also",
        "before",
        "yet",
        "sometimes",
        "once",
        "twice",
        "ever",
        "anymore",
        "either",
        "much",
        "lot",
        "bunch",
        "few",
        "times",
        "time",
        "while",
        "in",
        "for",
        "a",
        "couple",
        "sometime",
        "someday",
        "soon",
        "later",
        "today",
        "then",
        "there",
        "here",
        "back",
        "with",
        "about",
        "on",
        "at",
    ];
    let content: Vec<&Word> = words.iter().filter(|word| !THIN.contains(&word.lower.as_str())).collect();
    // Someone said before ("I love him too").
    if let [only] = content.as_slice()
        && matches!(only.lower.as_str(), "him" | "her")
    {
        return true;
    }
    // "IT" (the field) written in capitals points at nothing.
    let pointer = |word: &Word| is_pointer(&word.lower) && word.text != "IT";
    if content.is_empty() || content.iter().all(|word| pointer(word) || word.lower.chars().all(|c| !c.is_alphanumeric())) {
        return true;
    }
    // It ends pointing back ("added some breath work with it"), or is only a measure ("an
    // hour", "more than 20 minutes"): what it is about was said before.
    let last_two: Vec<&str> = words.iter().rev().take(2).map(|word| word.lower.as_str()).collect();
    if matches!(
        last_two.as_slice(),
        ["it" | "that" | "this" | "them" | "those", "with" | "for" | "about" | "on" | "of" | "to" | "in" | "from" | "like"]
    ) {
        return true;
    }
    let measure = |word: &&Word| {
        word.is_number()
            || matches!(
                word.lower.as_str(),
                "hour"
                    | "hours"
                    | "minute"
                    | "minutes"
                    | "day"
                    | "days"
                    | "week"
                    | "weeks"
                    | "month"
                    | "months"
                    | "than"
                    | "less"
                    | "least"
                    | "most"
                    | "half"
            )
    };
    if content.iter().all(measure) {
        return true;
    }
    // The object the verb takes points back ("do them", "seen that before", "go there").
    let first = words.iter().find(|word| {
        !matches!(word.lower.as_str(), "a" | "an" | "the" | "to" | "only" | "just" | "really" | "also" | "all" | "ever" | "never")
    });
    // A verb and a pointer, nothing else ("watching it", "to be able to do that", "trying
    // them"): the doing is said, what is done was said before.
    if let [before @ .., last] = content.as_slice()
        && !before.is_empty()
        && last.text != "IT"
        && matches!(last.lower.as_str(), "it" | "that" | "this" | "them" | "those" | "these")
        && before.iter().all(|word| is_gerund(&word.lower) || is_verb_before_pointer(&word.lower))
    {
        return true;
    }
    // "those things", "that stuff": what was said before.
    if words.windows(2).any(|pair| {
        matches!(pair[0].lower.as_str(), "those" | "these" | "that" | "this" | "such")
            && matches!(
                pair[1].lower.as_str(),
                "things" | "thing" | "stuff" | "kinds" | "kind" | "sorts" | "sort" | "types" | "type" | "ones" | "activities" | "places"
            )
    }) {
        return true;
    }
    // "one brother" counts; "that one", "one of them" point back.
    let counted_one =
        words.windows(2).any(|pair| pair[0].lower == "one" && !matches!(pair[1].lower.as_str(), "of" | "too" | "more" | "day" | "time"));
    !counted_one
        && first.is_some_and(|word| {
            // "their songs", "his energy": someone said before, not the user.
            word.text != "IT"
                && matches!(
                    word.lower.as_str(),
                    "it" | "that" | "this" | "them" | "those" | "these" | "there" | "one" | "so" | "too" | "his" | "her" | "their" | "its"
                )
        })
}

/// Whether a word is a gerund ("watching", "trying"), by its ending.
fn is_gerund(word: &str) -> bool {
    word.len() > 4 && word.ends_with("ing") && word.is_ascii()
}

/// The verbs (and the words of their groups) that take a pointer as their whole object in
/// talk ("do that", "be able to try it", "see them"): closed, the doing words of everyday
/// replies.
fn is_verb_before_pointer(word: &str) -> bool {
    matches!(
        word,
        "do" | "did"
            | "done"
            | "does"
            | "be"
            | "been"
            | "able"
            | "how"
            | "try"
            | "tried"
            | "see"
            | "seen"
            | "watch"
            | "watched"
            | "get"
            | "got"
            | "make"
            | "made"
            | "have"
            | "had"
            | "use"
            | "used"
            | "keep"
            | "give"
            | "take"
            | "learn"
            | "practice"
            | "eat"
            | "ate"
            | "play"
            | "played"
            | "read"
            | "hear"
            | "heard"
            | "visit"
            | "buy"
            | "bought"
            | "find"
            | "found"
            | "start"
            | "started"
            | "stop"
            | "quit"
            | "love"
            | "like"
            | "enjoy"
            | "hate"
            | "want"
            | "wanted"
            | "need"
    )
}

/// A reaction to the assistant's output: "number 8", "your examples", "the second one", "it".
fn is_reaction(words: &[Word], after_reply: bool) -> bool {
    let words = strip_to(words);
    if words.is_empty() || is_dangling(words) || mentions_you(words) {
        return true;
    }
    let first = words[0].lower.as_str();
    let second = words.get(1).map_or("", |word| word.lower.as_str());
    // "the color pink", "the song Hey Jude": named, not pointed at.
    let named =
        matches!(second, "color" | "colour" | "song") && words.len() >= 3 && !matches!(words[2].lower.as_str(), "of" | "you" | "in");
    // "the characters", "the atmosphere", "the fresh air": a quality of something said before,
    // which only a name makes a thing of its own ("the Beatles", "the Harry Potter series").
    if first == "the"
        && after_reply
        && !named
        && words.len() >= 2
        && tail(words, 1).iter().all(|word| !word.is_capitalized() && !word.is_number())
    {
        return true;
    }
    (matches!(first, "the" | "this" | "that" | "these" | "those")
        && !named
        && (is_pointer(second)
            || is_task_noun(second)
            || matches!(
                second,
                "idea"
                    | "way"
                    | "list"
                    | "name"
                    | "names"
                    | "title"
                    | "plan"
                    | "story"
                    | "poem"
                    | "song"
                    | "image"
                    | "picture"
                    | "logo"
                    | "design"
                    | "format"
                    | "tone"
                    | "color"
                    | "colour"
                    | "font"
                    | "structure"
                    | "layout"
            )))
        || (matches!(first, "this" | "that" | "these" | "those" | "it" | "them") && words.len() <= 3)
        || matches!(first, "number" | "option" | "how" | "what" | "when" | "where" | "which")
        || words.iter().take(3).any(|word| is_task_noun(&word.lower))
        || (words.len() == 2 && matches!(second, "one" | "ones"))
}

/// Whether an object names the task at hand ("a function", "the code", "an error").
fn names_task(words: &[Word]) -> bool {
    words.iter().take(4).any(|word| is_task_noun(&word.lower))
}

/// Coordinated objects as separate items: "to bake cookies and knit" → "to bake cookies",
/// "to knit"; "two cats and a dog" → "two cats", "a dog". Two single words ("rock and roll",
/// "salt and pepper") stay one item.
fn list_items(words: &[Word]) -> Vec<Vec<Word>> {
    let (prefix, body) =
        if words.first().is_some_and(|word| word.lower == "to") { (span(words, 0, 1), tail(words, 1)) } else { (span(words, 0, 0), words) };
    let mut items: Vec<Vec<Word>> = vec![Vec::new()];
    let mut conjunction: Option<&Word> = None;
    for (index, word) in body.iter().enumerate() {
        // "every now and then", "now and again" are one time phrase.
        let in_now_and_then = index > 0
            && body[index - 1].lower == "now"
            && body.get(index + 1).is_some_and(|next| matches!(next.lower.as_str(), "then" | "again"));
        if matches!(word.lower.as_str(), "and" | "or" | "&" | "plus") && !in_now_and_then {
            items.push(Vec::new());
            conjunction = Some(word);
            continue;
        }
        if let Some(item) = items.last_mut() {
            item.push(Word { comma: false, ..word.clone() });
        }
        if word.comma {
            items.push(Vec::new());
        }
    }
    items.retain(|item| !item.is_empty());
    let no_comma = !body.iter().any(|word| word.comma);
    // "see the animals grow and develop", "feel happy and comfortable", "time with my family and
    // friends": a last word joined to the word before it, not to the phrase, unless both are
    // doings ("watching movies and reading"). After "to", the verbs are the items ("to bake
    // cookies and knit").
    if let ([.., previous, last], Some(conjunction)) = (items.as_slice(), conjunction)
        && prefix.is_empty()
        && no_comma
        && previous.len() > 1
        && last.len() == 1
        && !(is_gerund(&previous[0].lower) && is_gerund(&last[0].lower))
    {
        let last = items.pop().unwrap_or_default();
        if let Some(previous) = items.last_mut() {
            previous.push(Word { comma: false, ..conjunction.clone() });
            previous.extend(last);
        }
    }
    let two_single_words = items.len() == 2 && items.iter().all(|item| item.len() == 1) && no_comma;
    if items.len() < 2 || two_single_words || items.len() > 8 {
        return vec![words.iter().map(|word| Word { comma: false, ..word.clone() }).collect()];
    }
    // After "to", an item opens with its verb ("to watch comedies"); a later item that opens
    // with a noun phrase ("thrillers", "the news", "Mario Kart") is the object of the verb
    // before it, and a gerund ("kayaking") takes no "to".
    let mut last_verb: Option<Vec<Word>> = None;
    items
        .into_iter()
        .enumerate()
        .map(|(index, item)| {
            let opener = &item[0];
            let noun_phrase = opener.is_capitalized()
                || opener.is_number()
                || !looks_like_a_verb(&opener.lower)
                || is_y_noun(&opener.lower)
                || (opener.lower.ends_with('s') && !opener.lower.ends_with("ss"))
                || matches!(opener.lower.as_str(), "a" | "an" | "the" | "some" | "my" | "our");
            let gerund = opener.lower.ends_with("ing") && opener.lower.len() > 4;
            // What a later noun phrase joins: the verb, or everything up to the last
            // preposition ("spend time with" my family and friends).
            let joins_next = (!noun_phrase && item.len() >= 2).then(|| {
                let joins = item
                    .iter()
                    .rposition(|word| matches!(word.lower.as_str(), "with" | "to" | "in" | "at" | "on" | "for" | "about" | "of"))
                    .filter(|&at| at > 0)
                    .map_or(1, |at| at + 1);
                item[..joins].to_vec()
            });
            let written = match &last_verb {
                _ if prefix.is_empty() || index == 0 => prefix.iter().cloned().chain(item).collect(),
                _ if gerund => item,
                Some(verb) if noun_phrase => prefix.iter().chain(verb).cloned().chain(item).collect(),
                // No verb to take it ("to read and fantasy"): the thing itself, without "to".
                None if noun_phrase => item,
                _ => prefix.iter().cloned().chain(item).collect(),
            };
            if joins_next.is_some() {
                last_verb = joins_next;
            }
            written
        })
        .collect()
}

/// The object without a leading "to" ("to bake" → "bake").
fn strip_to(words: &[Word]) -> &[Word] {
    if words.first().is_some_and(|word| word.lower == "to") { tail(words, 1) } else { words }
}

/// Whether words name a place: a name ("Leeds", "New York") or a noun phrase with its
/// determiner ("a small town", "the city"); "hope" in "I live in hope" is none.
fn is_place(words: &[Word]) -> bool {
    !words.is_empty()
        && !is_dangling(words)
        && (words[0].is_capitalized() || matches!(words[0].lower.as_str(), "a" | "an" | "the" | "their" | "my" | "our"))
}

/// The place after "in", "at", "near", "to" ("in Leeds" → "Leeds"), without a trailing time.
fn place_after_preposition(words: &[Word]) -> &[Word] {
    let start =
        usize::from(words.first().is_some_and(|word| matches!(word.lower.as_str(), "in" | "at" | "near" | "to" | "on" | "outside" | "by")));
    trim_time(tail(words, start.min(words.len())))
}

/// Words up to a time phrase or a clause break ("Oslo last year" → "Oslo", "Leeds for ten years" → "Leeds").
fn trim_time(words: &[Word]) -> &[Word] {
    let end = words
        .iter()
        .enumerate()
        .position(|(index, word)| {
            // "to Oslo in spring", "to Leeds back in 2019", "to Lyon during the summer".
            let when_follows = matches!(word.lower.as_str(), "in" | "during" | "over" | "around" | "back" | "early" | "late")
                && says_a_time(&words[index + 1..]);
            when_follows
                || !word.is_capitalized()
                    && matches!(
                        word.lower.as_str(),
                        "for"
                            | "since"
                            | "last"
                            | "this"
                            | "next"
                            | "ago"
                            | "recently"
                            | "now"
                            | "because"
                            | "when"
                            | "yesterday"
                            | "today"
                            | "and"
                            | "but"
                            | "so"
                    )
        })
        .unwrap_or(words.len());
    span(words, 0, end)
}

/// Whether `words` open with a time of year: a season, a month or a year, after "the", "early",
/// "late", "mid" or "in" ("spring", "the summer", "early March", "in 2019").
fn says_a_time(words: &[Word]) -> bool {
    let opening =
        words.iter().position(|word| !matches!(word.lower.as_str(), "the" | "early" | "late" | "mid" | "in")).unwrap_or(words.len());
    words.get(opening).is_some_and(|word| {
        let year =
            word.lower.len() == 4 && (word.lower.starts_with("19") || word.lower.starts_with("20")) && word.lower.parse::<u32>().is_ok();
        let season = matches!(word.lower.as_str(), "spring" | "summer" | "autumn" | "fall" | "winter");
        let month = matches!(
            word.lower.as_str(),
            "january" | "february" | "march" | "april" | "june" | "july" | "august" | "september" | "october" | "november" | "december"
        );
        year || season || month
    })
}

/// A name: capitalized words, up to the first word that is not.
fn words_until_break(words: &[Word]) -> &[Word] {
    let end = words.iter().position(|word| !word.is_capitalized()).unwrap_or(words.len()).max(1);
    &words[..end.min(words.len())]
}

/// A verb of getting things done rather than of an ability: "I can go for a walk", "I can
/// bring snacks", "I can figure it out" offer or allow; they say no skill.
fn is_light_verb(word: &str) -> bool {
    matches!(
        word,
        "go" | "come"
            | "get"
            | "take"
            | "bring"
            | "pick"
            | "change"
            | "figure"
            | "do"
            | "give"
            | "send"
            | "check"
            | "tell"
            | "find"
            | "call"
            | "meet"
            | "wait"
            | "stop"
            | "start"
            | "put"
            | "look"
            | "try"
            | "see"
            | "let"
            | "make"
            | "buy"
            | "pay"
            | "leave"
            | "stay"
            | "ask"
            | "imagine"
            | "relate"
            | "understand"
            | "help"
            | "handle"
            | "afford"
            | "manage"
            | "hear"
            | "say"
            | "think"
    )
}

/// A word in "-y" after a consonant that is a noun ("fantasy", "poetry", "pottery") rather
/// than one of the few verbs so written ("carry", "study", "worry").
fn is_y_noun(word: &str) -> bool {
    let bytes = word.as_bytes();
    bytes.len() > 3
        && bytes[bytes.len() - 1] == b'y'
        && !matches!(bytes[bytes.len() - 2], b'a' | b'e' | b'o' | b'u' | b'i')
        && !matches!(
            word,
            "carry"
                | "marry"
                | "worry"
                | "hurry"
                | "bury"
                | "study"
                | "copy"
                | "apply"
                | "rely"
                | "deny"
                | "supply"
                | "reply"
                | "vary"
                | "tidy"
                | "empty"
                | "party"
                | "ready"
        )
}

/// Adjectives that end like adverbs: "I'm lonely", "I'm an early riser".
fn is_ly_adjective(word: &str) -> bool {
    matches!(
        word,
        "lonely"
            | "friendly"
            | "lovely"
            | "elderly"
            | "ugly"
            | "silly"
            | "early"
            | "curly"
            | "lively"
            | "holy"
            | "jolly"
            | "costly"
            | "unfriendly"
            | "homely"
            | "lowly"
            | "manly"
            | "motherly"
            | "fatherly"
            | "orderly"
            | "sickly"
            | "smelly"
            | "chilly"
            | "hilly"
    )
}

/// Whether words say when, ahead of now, beyond today: "next year", "this summer", "in the
/// fall", "next week", "on Saturday", "in two weeks", "tomorrow", "soon". "I'm going to the
/// store" (or "to the gym tonight") is the day's errand; "I'm going to business school next
/// year" and "to a wedding on Saturday" are plans.
fn says_when_ahead(words: &[Word]) -> bool {
    const WHEN: &[&str] = &[
        "year",
        "month",
        "summer",
        "winter",
        "spring",
        "fall",
        "autumn",
        "semester",
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ];
    const WEEKDAYS: &[&str] = &["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"];
    const UNITS: &[&str] = &["day", "days", "week", "weeks", "month", "months", "year", "years"];
    words.iter().any(|word| matches!(word.lower.as_str(), "soon" | "someday" | "eventually" | "tomorrow"))
        || words.windows(2).any(|pair| {
            let (first, second) = (pair[0].lower.as_str(), pair[1].lower.as_str());
            (matches!(first, "next" | "this" | "in" | "the") && WHEN.contains(&second))
                // "next week", "this weekend", "on Saturday", "next Friday".
                || (matches!(first, "next" | "this") && matches!(second, "week" | "weekend"))
                || (matches!(first, "next" | "this" | "on") && WEEKDAYS.contains(&second))
        })
        // "in two weeks", "in a few days", "in 3 months": a count of days to weeks ahead.
        || words.iter().enumerate().any(|(index, word)| {
            word.lower == "in"
                && words[index + 1..]
                    .iter()
                    .take(3)
                    .take_while(|word| !UNITS.contains(&word.lower.as_str()))
                    .all(|word| word.is_number() || is_count(&word.lower) || matches!(word.lower.as_str(), "few" | "couple" | "of"))
                && words[index + 1..].iter().take(4).any(|word| UNITS.contains(&word.lower.as_str()))
                && words.get(index + 1).is_some_and(|word| !UNITS.contains(&word.lower.as_str()))
        })
}

/// Whether a plan looked forward to is a doing of the user's own life, told without a time:
/// a verb and something of theirs ("moving into my new apartment", "to start my new job");
/// what is looked forward to without either ("to see it", "the weekend") says no plan.
fn is_their_own_doing(plan: &[Word]) -> bool {
    plan.len() > 2
        && (plan[0].lower.ends_with("ing") || looks_like_a_verb(&plan[0].lower))
        && plan.iter().skip(1).any(|word| matches!(word.lower.as_str(), "my" | "our"))
}

/// Whether words say how often: "every year", "each summer", "twice a week", "on weekends".
fn says_how_often(words: &[Word]) -> bool {
    words.windows(2).any(|pair| {
        matches!(pair[0].lower.as_str(), "every" | "each")
            || (matches!(pair[0].lower.as_str(), "once" | "twice" | "times") && matches!(pair[1].lower.as_str(), "a" | "per" | "every"))
            || (pair[0].lower == "on" && matches!(pair[1].lower.as_str(), "weekends" | "sundays" | "saturdays" | "fridays"))
    }) || words.len() > 3 && {
        // "20 books a year", "three times per week".
        let last = &words[words.len() - 2..];
        matches!(last[0].lower.as_str(), "a" | "per") && matches!(last[1].lower.as_str(), "day" | "week" | "month" | "year" | "night")
    }
}

/// A decade of life: "thirties", "40s", "20's".
fn is_decade(word: &str) -> bool {
    matches!(word, "teens" | "twenties" | "thirties" | "forties" | "fifties" | "sixties" | "seventies" | "eighties" | "nineties")
        || (word.len() <= 4
            && word.trim_end_matches('s').trim_end_matches('\'').parse::<u32>().is_ok_and(|n| n % 10 == 0 && (10..=90).contains(&n)))
}

fn is_parent(word: &str) -> bool {
    matches!(
        word,
        "mom" | "mum" | "mother" | "dad" | "father" | "parent" | "mama" | "papa" | "grandma" | "grandpa" | "grandmother" | "grandfather"
    )
}

fn is_child(word: &str) -> bool {
    matches!(
        word,
        "kid"
            | "kids"
            | "child"
            | "children"
            | "son"
            | "sons"
            | "daughter"
            | "daughters"
            | "boys"
            | "girls"
            | "toddlers"
            | "teenagers"
            | "twins"
            | "babies"
            | "grandkids"
            | "grandchildren"
    )
}

fn is_count(word: &str) -> bool {
    matches!(word, "two" | "three" | "four" | "five" | "six" | "seven" | "eight" | "nine" | "ten" | "a" | "an" | "one")
}

/// `words` in the third person.
fn third(words: &[Word]) -> String {
    rest_in_third_person(words, Lexicon::of(Language::English))
}

/// A statement: the verb group, the rest, and the adverbial that opened the clause.
fn sentence(verb: &[String], rest: &str, adverbial: &[Word]) -> String {
    let mut text = verb.join(" ");
    if !rest.is_empty() {
        if !text.is_empty() {
            text.push(' ');
        }
        text.push_str(rest);
    }
    if !adverbial.is_empty() {
        text.push(' ');
        text.push_str(&third(adverbial));
    }
    capitalized(&text)
}

fn with_adverbial(statement: String, adverbial: &[Word], time: crate::model::Micros) -> String {
    if adverbial.is_empty() {
        return statement;
    }
    anchor(&format!("{statement} {}", third(adverbial)), time, true)
}

fn anchored(statement: &str, time: crate::model::Micros, past: bool) -> String {
    anchor(statement, time, past)
}

/// Adds one disclosure.
fn push(
    found: &mut Vec<Found>,
    memory_type: MemoryType,
    slot: &'static str,
    value: &[Word],
    statement: String,
    confidence: f32,
    reading: &Reading,
) {
    found.extend(Found::new(memory_type, slot, value, statement, confidence * reading.scale, reading.change));
}
