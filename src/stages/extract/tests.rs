//! Extraction end to end on single messages, one test per capability: self-disclosure in
//! natural speech (inside questions, in lists, open vocabulary), what is no memory (reactions,
//! small talk, requests, dangling references, pasted text, role play, hypotheticals), other
//! people, clean third-person statements with anchored times, types, current and past values,
//! the five languages, secrets and contact details, and consolidation.

use super::consolidate::{ConsolidateOptions, Consolidator, MemoryCounts};
use super::*;
use crate::model::extracted::Extracted;
use crate::model::{MemoryRecord, Provider};

/// Consolidates `(conversation, text, time)` messages said in that order: the memories written
/// (statement and what extraction knows) and the counts.
fn consolidate_with(messages: &[(&str, &str, i64)], options: ConsolidateOptions) -> (Vec<(MemoryRecord, Extracted)>, MemoryCounts) {
    let mut consolidator = Consolidator::new().expect("a temporary file");
    for (conversation, text, time) in messages {
        let mut extraction = Extraction::default();
        extract_message(text, "m", *time, &mut extraction);
        consolidator.count_secret(extraction.dropped_secret);
        consolidator.add(Provider::ChatGpt, conversation, extraction.candidates).expect("spool");
    }
    let mut consolidated = consolidator.finish(options, Default::default(), &[], &Default::default()).expect("spool");
    let memories = consolidated
        .next_batch(usize::MAX)
        .expect("spool")
        .into_iter()
        .map(|(_, mut memory)| {
            let extracted = *memory.extracted.take().expect("an extracted memory");
            (memory, extracted)
        })
        .collect();
    (memories, consolidated.counts().clone())
}

fn consolidate(messages: &[(&str, &str, i64)]) -> Vec<(MemoryRecord, Extracted)> {
    let (memories, counts) = consolidate_with(messages, ConsolidateOptions::default());
    assert!(counts.balances(), "{counts:?}");
    memories
}

/// 2023-05-08T12:00:00Z, a Monday: the time relative times are anchored to.
const MONDAY: i64 = 1_683_547_200_000_000;

/// `(type, statement)` of every candidate in `text`, said on [`MONDAY`].
fn extracted(text: &str) -> Vec<(MemoryType, String)> {
    let mut extraction = Extraction::default();
    extract_message(text, "m1", MONDAY, &mut extraction);
    extraction.candidates.into_iter().map(|candidate| (candidate.memory_type, candidate.statement)).collect()
}

fn assert_nothing(text: &str) {
    let found = extracted(text);
    assert!(found.is_empty(), "{text:?} should yield nothing, got {found:?}");
}

fn assert_yields(text: &str, memory_type: MemoryType, statement: &str) {
    let found = extracted(text);
    assert!(
        found.iter().any(|(found_type, found_statement)| *found_type == memory_type && found_statement == statement),
        "{text:?} should yield {memory_type:?} {statement:?}, got {found:?}"
    );
}

#[test]
fn english_yields_every_type() {
    assert_yields("I'm a nurse in Leeds.", MemoryType::Identity, "Is a nurse");
    assert_yields("I'm a nurse in Leeds.", MemoryType::Identity, "Lives in Leeds");
    assert_yields("I live in Leeds.", MemoryType::Identity, "Lives in Leeds");
    assert_yields("My name is Ema Novak.", MemoryType::Identity, "Name is Ema Novak");
    assert_yields("I prefer metric units.", MemoryType::Preference, "Prefers metric units");
    assert_yields("My daughter Ema is 7.", MemoryType::Relationship, "Their daughter Ema is 7");
    assert_yields("I'm planning to run a marathon next spring.", MemoryType::Goal, "Is planning to run a marathon in spring 2024");
    assert_yields("We decided to use Postgres.", MemoryType::Decision, "Decided to use Postgres");
    assert_yields("Never suggest npm, we use pnpm.", MemoryType::Procedure, "Never suggest npm");
    assert_yields("Always answer in bullet points.", MemoryType::Procedure, "Always answer in bullet points");
    assert_yields("Webpack didn't work for us.", MemoryType::Pitfall, "Webpack did not work");
    assert_yields("I'm good at chess.", MemoryType::Skill, "Is good at chess");
    assert_yields("I use Arch Linux on my laptop.", MemoryType::Environment, "Uses Arch Linux on their laptop");
    assert_yields("I'm building a budgeting app for my family.", MemoryType::Project, "Is building a budgeting app for their family");
    assert_yields("I'm allergic to peanuts.", MemoryType::Fact, "Is allergic to peanuts");
    assert_yields("I ran a half marathon yesterday.", MemoryType::Context, "Ran a half marathon on 2023-05-07");
}

#[test]
fn any_occupation_place_name_tool_or_hobby_is_read_as_said() {
    assert_yields("I'm a glassblower.", MemoryType::Identity, "Is a glassblower");
    assert_yields("I'm a night owl.", MemoryType::Identity, "Is a night owl");
    assert_yields("I'm Zdenka.", MemoryType::Identity, "Name is Zdenka");
    assert_yields("I'm 34 years old.", MemoryType::Identity, "Is 34 years old");
    assert_yields("I live in Tromsø.", MemoryType::Identity, "Lives in Tromsø");
    assert_yields("I'm on a ThinkPad X1.", MemoryType::Environment, "Is on a ThinkPad X1");
    assert_yields("I volunteer at an otter sanctuary.", MemoryType::Fact, "Volunteers at an otter sanctuary");
    assert_yields("I work as a sommelier at Vinárna U Zlatého.", MemoryType::Identity, "Works as a sommelier at Vinárna U Zlatého");
}

#[test]
fn facts_inside_questions_and_requests_are_read() {
    let found = extracted("As a vegan mom of two in Austin, what should I cook this week?");
    for expected in ["Is a vegan mom", "Has two children", "Lives in Austin"] {
        assert!(found.iter().any(|(_, statement)| statement == expected), "{expected:?} in {found:?}");
    }
    assert_yields("I'm a teacher with two toddlers, how do I keep them busy?", MemoryType::Relationship, "Has two toddlers");
    assert_yields("Any tips for a small kitchen since I'm vegan?", MemoryType::Preference, "Is vegan");
}

#[test]
fn coordinated_clauses_and_lists_become_separate_memories() {
    let found = extracted("I love to bake cookies and knit.");
    assert_eq!(found, [(MemoryType::Preference, "Loves to bake cookies".to_owned()), (MemoryType::Preference, "Loves to knit".to_owned())]);
    let found = extracted("I like to grill, garden, and go fishing.");
    assert_eq!(found.len(), 3, "{found:?}");
    let found = extracted("I live in Leeds and I work as a nurse.");
    assert!(
        found.contains(&(MemoryType::Identity, "Lives in Leeds".into()))
            && found.contains(&(MemoryType::Identity, "Works as a nurse".into())),
        "{found:?}"
    );
    assert_eq!(extracted("I like rock and roll."), [(MemoryType::Preference, "Likes rock and roll".to_owned())]);
}

#[test]
fn a_last_word_joined_to_the_word_before_it_is_no_item_of_its_own() {
    for (text, statement) in [
        ("I love watching my nephews laugh and play.", "Loves watching their nephews laugh and play"),
        ("I enjoy making guests feel welcome and relaxed.", "Enjoys making guests feel welcome and relaxed"),
        ("I like hiking with my cousins and neighbours.", "Likes hiking with their cousins and neighbours"),
        ("I enjoy a long walk every now and then.", "Enjoys a long walk every now and then"),
    ] {
        assert_eq!(extracted(text), [(MemoryType::Preference, statement.to_owned())], "{text:?}");
    }
    // Two doings are two memories.
    let found = extracted("I love painting landscapes and sketching.");
    assert_eq!(found.len(), 2, "{found:?}");
}

#[test]
fn a_degree_or_stress_word_leaves_no_stub_in_the_statement() {
    assert_yields("I'm into board games right now.", MemoryType::Preference, "Is into board games");
    assert_yields("I love my rabbits so much.", MemoryType::Preference, "Loves their rabbits");
    assert_yields("I don't like horror films very much.", MemoryType::Preference, "Does not like horror films very much");
    assert_yields("I have three sisters myself.", MemoryType::Relationship, "Has three sisters");
    // A perfect stays a perfect.
    assert_yields("I've been a vegetarian for six years.", MemoryType::Preference, "Has been a vegetarian for six years");
    assert_yields("I've been a fan of jazz for ages.", MemoryType::Preference, "Has been a fan of jazz for ages");
    // A negation stays a negation.
    assert_yields("I'm not a big fan of horror movies.", MemoryType::Preference, "Is not a big fan of horror movies");
    assert_yields("I've never been a fan of opera.", MemoryType::Preference, "Has never been a fan of opera");
    // An object stays.
    let found = extracted("I taught myself to juggle.");
    assert!(found.iter().any(|(_, statement)| statement == "Taught themselves to juggle"), "{found:?}");
}

#[test]
fn reactions_small_talk_requests_and_dangling_references_are_no_memories() {
    for text in [
        "I love number 8, could you expand it?",
        "I like your examples.",
        "I love that!",
        "I want the result row-wise.",
        "I need a regex for e-mail addresses.",
        "I want to quit that.",
        "I see.",
        "I agree.",
        "Thanks, I appreciate it.",
        "I'm glad to hear that.",
        "I'm not sure.",
        "I'll try that.",
        "I love watching it.",
        "I've always wanted to be able to do that.",
        "I enjoy playing them.",
        "I love him too.",
        "Hi! How are you today?",
        "What is the capital of France?",
        "Can you tell me where I live?",
        "Never mind.",
        "It still doesn't work.",
        "I don't want you to rewrite the whole function.",
        "I'm going to paste the error below.",
        "ok",
    ] {
        assert_nothing(text);
    }
}

#[test]
fn a_like_of_what_the_assistant_just_stated_is_a_reaction() {
    let mut extraction = Extraction::default();
    extract_reply("I love the fresh air!", Some("The valley has fresh air and quiet trails."), "m1", 0, &mut extraction);
    assert!(extraction.candidates.is_empty(), "{:?}", extraction.candidates);
    extract_reply("I love hiking!", Some("That sounds lovely. Do you like hiking?"), "m2", 0, &mut extraction);
    assert_eq!(extraction.candidates.len(), 1, "an answer to the assistant's question is kept");
}

#[test]
fn pasted_text_role_play_and_hypotheticals_are_no_memories() {
    for text in [
        "Can you check my brother's cover letter?\nDear Hiring Manager,\nI am a welder from Cork and I live in Dublin.",
        "Proofread this: I am a carpenter in Oslo and I have three kids.",
        "Here is the e-mail from my landlord:\nI live in the flat above you and I work nights.",
        "Role play: you are a pirate and I am a sailor from Lisbon.",
        "Pretend I'm a doctor in Paris.",
        "Write a cover letter saying I am a nurse in Leeds.",
        "If I lived in Paris, what would I eat?",
        "If I were a doctor I would work less.",
        "```\nI live in a container; // comment\n```",
        "> I live in Leeds\nWhat does this quote mean?",
        "I'm [name] and I work at [company].",
    ] {
        assert_nothing(text);
    }
}

#[test]
fn a_fact_about_someone_else_is_theirs_not_the_users() {
    let found = extracted("My husband is allergic to peanuts.");
    assert_eq!(found, [(MemoryType::Relationship, "Their husband is allergic to peanuts".to_owned())]);
    assert_yields("My sister lives in Lima.", MemoryType::Relationship, "Their sister lives in Lima");
    assert_nothing("My boss says I'm lazy.");
}

#[test]
fn statements_are_third_person_with_pronouns_resolved_and_times_anchored() {
    assert_yields("I hurt my jaw last week.", MemoryType::Context, "Hurt their jaw in the week of 2023-05-01");
    assert_yields("I have three children with my partner.", MemoryType::Relationship, "Has three children with their partner");
    assert_yields("I moved from Lisbon to Oslo last year.", MemoryType::Identity, "Lives in Oslo");
    assert_yields("I moved from Lisbon to Oslo last year.", MemoryType::Fact, "Used to live in Lisbon");
    assert_yields("I moved from Lisbon to Oslo last year.", MemoryType::Context, "Moved from Lisbon to Oslo in 2022");
    assert_yields("Last year I ran the Prague marathon.", MemoryType::Context, "Ran the Prague marathon in 2022");
}

#[test]
fn relative_times_are_anchored_in_every_language() {
    assert_yields("Ich bin vor zwei Monaten nach Graz gezogen.", MemoryType::Context, "Ist im März 2023 nach Graz gezogen");
    assert_yields("Letztes Jahr bin ich nach Wien gezogen.", MemoryType::Context, "Ist nach Wien gezogen im Jahr 2022");
    assert_yields("Ich habe gestern einen Halbmarathon gelaufen.", MemoryType::Context, "Hat am 2023-05-07 einen Halbmarathon gelaufen");
    assert_yields("J'ai déménagé à Lyon l'année dernière.", MemoryType::Context, "A déménagé à Lyon en 2022");
    assert_yields("Hier j'ai couru un semi-marathon.", MemoryType::Context, "A couru un semi-marathon le 2023-05-07");
    assert_yields("Včera jsem běžel půlmaraton.", MemoryType::Context, "Běžel půlmaraton dne 2023-05-07");
    // A time phrase cut off from its clause by a comma still dates it.
    assert_yields("Two months ago, I adopted a cat.", MemoryType::Context, "Adopted a cat in March 2023");
    assert_yields("L'année dernière, j'ai déménagé à Lyon.", MemoryType::Context, "A déménagé à Lyon en 2022");
    assert_yields("L'été prochain, je vais courir un marathon.", MemoryType::Context, "Va courir un marathon en été 2024");
    assert_yields("Nächsten Monat fange ich bei der Bahn an.", MemoryType::Goal, "Fängt bei der Bahn an im Juni 2023");
    // A phrase that only looks like a time stays as said: every morning is no tomorrow.
    assert_yields("Ich laufe jeden Morgen fünf Kilometer.", MemoryType::Fact, "Läuft jeden Morgen fünf Kilometer");
    assert_yields("Corro por la mañana.", MemoryType::Fact, "Corre por la mañana");
}

#[test]
fn a_czech_past_with_its_auxiliary_before_a_reflexive_is_read_and_a_move_said_as_it_was() {
    // "jsem se přestěhoval": the auxiliary is no "is" ("Je se přestěhoval" was written).
    assert_yields("Loni jsem se přestěhoval do Brna.", MemoryType::Identity, "Přestěhoval se do Brna");
    assert_yields("Jsem se přestěhovala do Olomouce.", MemoryType::Identity, "Přestěhovala se do Olomouce");
    assert_yields("Loni jsem si koupil nové kolo.", MemoryType::Context, "Koupil si nové kolo v roce 2022");
    // "do Brna" is no place "v" takes ("Bydlí v Brna" was written).
    assert_yields("Přestěhoval jsem se do Brna.", MemoryType::Identity, "Přestěhoval se do Brna");
    for text in ["Loni jsem se přestěhoval do Brna.", "Přestěhoval jsem se do Brna."] {
        assert!(!extracted(text).iter().any(|(_, statement)| statement.starts_with("Je ") || statement.contains("v Brna")), "{text}");
    }
}

#[test]
fn a_move_with_its_time_gives_a_timeless_home_and_the_dated_move_in_every_language() {
    // The home is where the user lives now, with no time in it ("Vive en Bilbao en 2022"
    // was written); when they moved is the move, anchored, as English keeps it.
    for (text, home, event) in [
        ("Me mudé a Bilbao el año pasado.", "Vive en Bilbao", "Se mudó a Bilbao en 2022"),
        ("J'ai déménagé à Lyon l'année dernière.", "Habite à Lyon", "A déménagé à Lyon en 2022"),
        ("Přestěhoval jsem se do Brna loni.", "Přestěhoval se do Brna", "Přestěhoval se do Brna v roce 2022"),
        ("V roce 2020 jsem se přestěhoval do Brna.", "Přestěhoval se do Brna", "Přestěhoval se do Brna v roce 2020"),
    ] {
        assert_yields(text, MemoryType::Identity, home);
        assert_yields(text, MemoryType::Context, event);
        assert!(
            !extracted(text).iter().any(|(memory_type, statement)| *memory_type == MemoryType::Identity && statement.contains("20")),
            "{text}"
        );
    }
    // Said without a time, the move is the home alone.
    assert_eq!(extracted("Me mudé a Bilbao.").len(), 1);
}

#[test]
fn what_the_user_is_said_with_where_is_kept_however_long() {
    assert_yields(
        "Soy profesora de matemáticas en un instituto de Valencia.",
        MemoryType::Identity,
        "Es profesora de matemáticas en un instituto de Valencia",
    );
    assert_yields(
        "Je suis infirmière dans un hôpital à Lyon depuis deux ans.",
        MemoryType::Identity,
        "Est infirmière dans un hôpital à Lyon depuis deux ans",
    );
    // Long and with no place, it is an opinion or a story.
    assert_nothing("Je suis vraiment pas sûr que cette idée soit la bonne pour nous.");
}

#[test]
fn a_word_of_the_task_in_english_is_an_everyday_noun_in_another_language() {
    // French "chat" is a cat and German "Bad" a bathroom, not words of the task.
    assert_yields("J'ai un chat.", MemoryType::Relationship, "A un chat");
    assert_yields("Mon chat s'appelle Minou.", MemoryType::Relationship, "Son chat s'appelle Minou");
    assert_yields("J'ai adopté un chat.", MemoryType::Context, "A adopté un chat");
    assert_yields("Wir haben ein neues Bad.", MemoryType::Fact, "Hat ein neues Bad");
    // In English the chat is still the conversation.
    assert_nothing("I have a chat.");
}

#[test]
fn negation_keeps_its_verb() {
    assert_yields("I don't drink alcohol.", MemoryType::Preference, "Does not drink alcohol");
    assert_yields("I don't eat meat.", MemoryType::Preference, "Does not eat meat");
    assert_yields("I don't like coffee.", MemoryType::Preference, "Does not like coffee");
    assert!(!extracted("I don't like coffee.").iter().any(|(_, statement)| statement == "Likes coffee"));
    assert_yields("Je ne mange pas de viande.", MemoryType::Preference, "Ne mange pas de viande");
    assert_yields("No como carne.", MemoryType::Preference, "No come carne");
    assert_yields("Nepiju alkohol.", MemoryType::Preference, "Nepije alkohol");
    assert_yields("Ich trinke keinen Alkohol.", MemoryType::Preference, "Trinkt keinen Alkohol");
}

#[test]
fn a_negated_statement_is_never_merged_into_its_positive_one() {
    // Said in that order and in the other: two memories, each with its own words as evidence,
    // where the key once left the negation out and kept the first one's text for both.
    for (first, second) in [("I'm a vegetarian.", "I'm not a vegetarian."), ("Nejím maso.", "Jím maso.")] {
        for (earlier, later) in [(first, second), (second, first)] {
            let memories = consolidate(&[("c1", earlier, MONDAY), ("c2", later, MONDAY + 1)]);
            assert_eq!(memories.len(), 2, "{earlier:?} then {later:?}: {memories:?}");
            for (memory, extracted) in &memories {
                assert_eq!(extracted.evidence.len(), 1, "{}", memory.text);
                let negated = memory.text.contains("not") || memory.text.starts_with("Ne");
                assert_eq!(negated, extracted.evidence[0].text.contains("not") || extracted.evidence[0].text.starts_with("Ne"));
            }
        }
    }
}

#[test]
fn german_french_spanish_and_czech_yield_in_their_own_language() {
    assert_yields("Ich wohne seit drei Jahren in Graz und arbeite als Tischlerin.", MemoryType::Identity, "Wohnt seit drei Jahren in Graz");
    assert_yields("Ich wohne seit drei Jahren in Graz und arbeite als Tischlerin.", MemoryType::Identity, "Arbeitet als Tischlerin");
    assert_yields("Meine Frau ist allergisch gegen Nüsse.", MemoryType::Relationship, "Ihre Frau ist allergisch gegen Nüsse");
    assert_yields("übrigens wohne ich in Wien", MemoryType::Identity, "Wohnt in Wien");
    assert_yields("Je suis infirmière à Lyon et j'ai deux enfants.", MemoryType::Relationship, "A deux enfants");
    assert_yields("Mon mari est allergique aux arachides.", MemoryType::Relationship, "Son mari est allergique aux arachides");
    assert_yields("L'année dernière, j'ai couru un semi-marathon.", MemoryType::Context, "A couru un semi-marathon en 2022");
    assert_yields("Trabajo como carpintero en Sevilla.", MemoryType::Identity, "Trabaja como carpintero en Sevilla");
    assert_yields("Me encanta cocinar.", MemoryType::Preference, "Le encanta cocinar");
    assert_yields("Estoy aprendiendo alemán.", MemoryType::Goal, "Está aprendiendo alemán");
    assert_yields("Bydlím v Brně a pracuji jako zedník.", MemoryType::Identity, "Bydlí v Brně");
    assert_yields("Bydlím v Brně a pracuji jako zedník.", MemoryType::Identity, "Pracuje jako zedník");
    assert_yields("Můj manžel je alergický na ořechy.", MemoryType::Relationship, "Její manžel je alergický na ořechy");
    assert_yields("Učím se španělsky.", MemoryType::Goal, "Učí se španělsky");
    assert_yields("Loni jsem běžel půlmaraton.", MemoryType::Context, "Běžel půlmaraton v roce 2022");
}

/// Guards against a word of another language read as a Czech verb by its ending alone
/// ("Emoji" as "-ji", giving *Emoje time…*): such a verb counts only in a sentence told Czech.
#[test]
fn a_czech_verb_ending_alone_needs_a_sentence_told_czech() {
    assert_nothing("Emoji time 🎉🚀🔥 😂🤖🧠");
    assert_nothing("Joachim 🎉 ✅ 👍🏽");
    // Told Czech by its own words, an ending still makes a verb, known or not.
    assert_yields("Pěstuji rajčata na balkoně.", MemoryType::Fact, "Pěstuje rajčata na balkoně");
    assert_yields("Mám dvě děti.", MemoryType::Relationship, "Má dvě děti");
    // A negated known verb is read, and keeps its negation: "nemám rád" is a dislike.
    let mut extraction = Extraction::default();
    extract_message("Nemám rád kávu.", "m1", MONDAY, &mut extraction);
    let read: Vec<(String, String)> =
        extraction.candidates.iter().map(|candidate| (candidate.slot.to_string(), candidate.statement.clone())).collect();
    assert_eq!(read, [("dislikes".to_owned(), "Nemá rád kávu".to_owned())]);
}

#[test]
fn a_french_or_spanish_article_before_a_kind_liked_is_no_reaction() {
    assert_yields("Je préfère le thé.", MemoryType::Preference, "Préfère le thé");
    assert_yields("Me gusta la playa.", MemoryType::Preference, "Le gusta la playa");
    assert_yields("Me encanta la música clásica.", MemoryType::Preference, "Le encanta la música clásica");
    for text in [
        "Je préfère la deuxième.",
        "Me encanta la segunda.",
        "Prefiero la más corta.",
        "Je préfère le faire moi-même.",
        "Me gusta la de arriba.",
    ] {
        assert_nothing(text);
    }
}

#[test]
fn other_languages_yield_nothing_for_talk_and_requests() {
    for text in [
        "Je viens de finir le rapport.",
        "Je vais regarder ça demain.",
        "Pienso que es una buena idea.",
        "Jsem z toho nadšený.",
        "Ich bin kein Arzt.",
    ] {
        let found = extracted(text);
        // Said once, a negated trait stays below the confidence floor; nothing else is kept.
        assert!(found.is_empty() || text == "Ich bin kein Arzt.", "{text:?} yields {found:?}");
    }
}

#[test]
fn a_past_home_is_not_the_current_home() {
    let found = extracted("I used to live in Lyon.");
    assert!(found.iter().all(|(memory_type, _)| *memory_type != MemoryType::Identity), "{found:?}");
    assert_yields("I used to live in Lyon.", MemoryType::Fact, "Used to live in Lyon");
    assert_nothing("I live in hope.");
}

#[test]
fn a_clause_with_a_secret_is_dropped_and_counted_and_its_neighbours_are_kept_clean() {
    let mut extraction = Extraction::default();
    extract_message("I work at Acme and my password is hunter22!", "m1", 0, &mut extraction);
    extract_message("I use Linux, token: ghp_abcdefghijklmnopqrstuvwxyz0123456789", "m2", 0, &mut extraction);
    let statements: Vec<&str> = extraction.candidates.iter().map(|candidate| candidate.statement.as_str()).collect();
    assert_eq!(statements, ["Works at Acme", "Uses Linux"]);
    assert!(extraction.candidates.iter().all(|candidate| !candidate.evidence.contains("hunter22") && !candidate.evidence.contains("ghp_")));
    assert_eq!(extraction.dropped_secret, 1, "the password's own clause");
}

/// Found by fuzzing: the rules read the sentence with `’` made plain, where the password
/// pattern stops at `'` and saw too short a value, so the sentence (the evidence) kept it.
#[test]
fn a_secret_with_a_typographic_apostrophe_never_reaches_the_evidence() {
    let mut extraction = Extraction::default();
    extract_message("I work as a nurse, password: ab’cdef2.", "m1", 0, &mut extraction);
    assert!(extraction.candidates.iter().all(|candidate| !candidate.evidence.contains("ab’cdef2")), "{:?}", extraction.candidates);
}

#[test]
fn a_contact_detail_said_with_a_fact_is_masked_in_the_statement() {
    let found = extracted("I'm a locksmith in Leeds, call me on +44 7700 900123.");
    assert!(found.iter().all(|(_, statement)| !statement.contains("7700")), "{found:?}");
    assert_yields("I'm a locksmith in Leeds, call me on +44 7700 900123.", MemoryType::Identity, "Is a locksmith");
}

#[test]
fn the_same_fact_said_again_is_one_memory_with_more_evidence() {
    let memories = consolidate(&[("c1", "I live in Leeds.", 10), ("c2", "I live in Leeds.", 20), ("c3", "I live in Leeds.", 30)]);
    assert_eq!(memories.len(), 1);
    let (_, extracted) = &memories[0];
    assert_eq!(extracted.evidence.len(), 3);
    let conversations: Vec<&str> = extracted.evidence.iter().map(|evidence| evidence.conversation_id.as_str()).collect();
    assert_eq!(conversations, ["c1", "c2", "c3"], "evidence in the order it was said");
    assert_eq!((extracted.first_seen, extracted.last_seen), (10, 30));
    assert!(extracted.confidence > 0.99, "{}", extracted.confidence);
}

#[test]
fn near_duplicates_are_one_memory() {
    let memories = consolidate(&[
        ("c1", "I want to start making videos for social media.", 10),
        ("c2", "I want to start making social media videos.", 20),
    ]);
    assert_eq!(memories.len(), 1, "{:?}", memories.iter().map(|(memory, _)| &memory.text).collect::<Vec<_>>());
}

#[test]
fn a_move_supersedes_the_old_home_which_stays() {
    let memories = consolidate(&[("c1", "I live in Lyon.", 10), ("c2", "I moved to Berlin.", 20)]);
    let homes: Vec<&(MemoryRecord, Extracted)> = memories.iter().filter(|(_, extracted)| extracted.slot == "home").collect();
    let statements: Vec<&str> = homes.iter().map(|(memory, _)| memory.text.as_str()).collect();
    assert_eq!(statements, ["Lives in Lyon", "Lives in Berlin"]);
    assert_eq!(homes[1].1.supersedes.as_deref(), Some(homes[0].0.id.as_str()));
    assert_eq!(homes[0].1.superseded_by.as_deref(), Some(homes[1].0.id.as_str()));
}

#[test]
fn a_one_off_mention_never_makes_the_established_value_no_longer_current() {
    // A home said twice, then another said once without saying it changed (a slip, a letter
    // that got through): both stay current.
    let memories = consolidate(&[("c1", "I live in Leeds.", 10), ("c2", "I live in Leeds.", 20), ("c3", "I live in Lisbon.", 30)]);
    assert!(
        memories.iter().all(|(_, extracted)| extracted.superseded_by.is_none()),
        "{:?}",
        memories.iter().map(|(m, e)| (&m.text, &e.superseded_by)).collect::<Vec<_>>()
    );
    // Said again, it is the new current value.
    let memories = consolidate(&[("c1", "I live in Leeds.", 10), ("c2", "I live in Lisbon.", 30), ("c3", "I live in Lisbon.", 40)]);
    let leeds = memories.iter().find(|(memory, _)| memory.text == "Lives in Leeds").expect("Leeds");
    assert!(leeds.1.superseded_by.is_some());
}

#[test]
fn supersession_follows_time_not_input_order() {
    // Next month's export read before last month's: the later statement is still current.
    let memories = consolidate(&[("c2", "I moved to Berlin.", 20), ("c1", "I live in Lyon.", 10)]);
    let berlin = memories.iter().find(|(memory, _)| memory.text == "Lives in Berlin").expect("Berlin");
    let lyon = memories.iter().find(|(memory, _)| memory.text == "Lives in Lyon").expect("Lyon");
    assert_eq!(berlin.1.supersedes.as_deref(), Some(lyon.0.id.as_str()));
    assert_eq!(lyon.1.supersedes, None);
}

#[test]
fn memory_ids_come_from_the_content() {
    let run = || consolidate(&[("c", "I live in Leeds. I prefer tea.", 5)]).into_iter().map(|(memory, _)| memory.id).collect::<Vec<_>>();
    assert_eq!(run(), run());
    assert_eq!(run().len(), 2);
}

#[test]
fn low_confidence_and_contact_details_are_dropped_and_counted() {
    let messages = [("c", "Maybe I want to learn Rust.", 5), ("c", "My email is jo@example.org.", 6), ("c", "I prefer tea.", 7)];
    let (memories, counts) = consolidate_with(&messages, ConsolidateOptions { min_confidence: 0.5, keep_personal: false });
    assert!(counts.balances(), "{counts:?}");
    assert_eq!(memories.iter().map(|(memory, _)| memory.text.as_str()).collect::<Vec<_>>(), ["Prefers tea"]);
    assert_eq!((counts.dropped_low_confidence, counts.dropped_personal), (1, 1), "{counts:?}");
    let (kept, counts) = consolidate_with(&messages, ConsolidateOptions { min_confidence: 0.0, keep_personal: true });
    assert!(counts.balances() && counts.written == 3, "{counts:?}");
    assert!(kept.iter().any(|(_, extracted)| extracted.personal && extracted.slot == "email"));
}

#[test]
fn a_thing_of_the_users_whose_value_is_a_contact_detail_is_that_contact_detail() {
    let messages = [
        ("c1", "Meine Handynummer ist 0176 4419023, ich bin Bäcker in Kiel.", 5),
        ("c2", "je suis fleuriste, mon mail pro c'est lea.roux@example.fr.", 6),
        ("c3", "Můj mail je petr.novak@example.cz, jsem zedník.", 7),
    ];
    let (memories, counts) = consolidate_with(&messages, ConsolidateOptions { min_confidence: 0.0, keep_personal: false });
    assert!(counts.balances(), "{counts:?}");
    let texts: Vec<&str> = memories.iter().map(|(memory, _)| memory.text.as_str()).collect();
    assert!(texts.iter().all(|text| !text.contains("REDACTED") && !text.contains('@') && !text.contains("0176")), "{texts:?}");
    assert_eq!(counts.dropped_personal, 3, "{counts:?}");
    let (kept, _) = consolidate_with(&messages, ConsolidateOptions { min_confidence: 0.0, keep_personal: true });
    let personal: Vec<(&str, &str)> =
        kept.iter().filter(|(_, extracted)| extracted.personal).map(|(_, extracted)| (extracted.slot, extracted.value.as_str())).collect();
    assert_eq!(personal.len(), 3, "{personal:?}");
    assert!(personal.contains(&("phone", "0176 4419023")) && personal.contains(&("email", "lea.roux@example.fr")), "{personal:?}");
}

#[test]
fn a_password_or_identity_number_said_beside_a_fact_never_reaches_a_memory() {
    for text in [
        "I run the club's website, login jo@example.org and the password Kestrel_42.",
        "Llevo la web del coro, entro con ana@example.es y la contraseña Limon$71.",
        "Ich pflege die Vereinsseite, Login kai@example.de mit dem Passwort Holunder!38.",
        "Je gère le site du club, login eve@example.fr et le mdp Glycine1999.",
        "Spravuju web oddílu, účet jan@example.cz s heslem Sumec_1987.",
        "Mi DNI es 71530246P y trabajo de fontanero en Murcia.",
        "My SSN is 123-45-6789 and I'm a welder in Ohio.",
    ] {
        let mut extraction = Extraction::default();
        extract_message(text, "m1", MONDAY, &mut extraction);
        for candidate in &extraction.candidates {
            for secret in ["Kestrel_42", "Limon$71", "Holunder!38", "Glycine1999", "Sumec_1987", "71530246P", "123-45-6789"] {
                assert!(!candidate.statement.contains(secret) && !candidate.value.contains(secret), "{text}: {candidate:?}");
                assert!(!secrets::clean_quote(&candidate.evidence).contains(secret), "{text}: {candidate:?}");
            }
        }
    }
}

#[test]
fn a_closing_aside_after_a_comma_leaves_no_stub() {
    assert_yields("I'm a welder, by the way.", MemoryType::Identity, "Is a welder");
    assert_yields("I live in Hull, btw", MemoryType::Identity, "Lives in Hull");
    assert_yields("I have two cats, haha", MemoryType::Relationship, "Has two cats");
    assert_yields("I'm Dave, by the way.", MemoryType::Identity, "Name is Dave");
    assert!(extracted("I have two cats, haha").iter().all(|(_, statement)| !statement.contains("haha")));
}

#[test]
fn a_move_in_a_season_month_or_year_leaves_the_time_out_of_the_home() {
    assert_yields("I moved to Tromsø in spring.", MemoryType::Identity, "Lives in Tromsø");
    assert_yields("We moved to Cape Town back in 2019.", MemoryType::Identity, "Lives in Cape Town");
    assert_yields("I moved from Porto to Ghent in early March.", MemoryType::Identity, "Lives in Ghent");
    assert_yields("I moved from Porto to Ghent in early March.", MemoryType::Fact, "Used to live in Porto");
    assert_yields("I moved to a flat in Leeds.", MemoryType::Identity, "Lives in a flat in Leeds");
}

#[test]
fn hedged_guesses_never_set_a_current_value() {
    assert!(extracted("Maybe I'll move to Berlin.").iter().all(|(_, statement)| statement != "Lives in Berlin"));
    assert_nothing("I think I might live in Berlin someday.");
}

#[test]
fn the_user_as_an_object_yields_only_wishes_and_pitfalls() {
    assert_nothing("Help me plan a birthday party. Give us five ideas for dinner.");
    assert_yields("From now on, call me Sam.", MemoryType::Procedure, "From now on call me Sam");
    assert_yields("By default answer me in German.", MemoryType::Procedure, "By default answer me in German");
    assert_yields("Webpack didn’t work for us.", MemoryType::Pitfall, "Webpack did not work");
}

#[test]
fn wishes_curly_apostrophes_and_mail_words_do_not_hide_statements() {
    assert_yields("I would prefer tea.", MemoryType::Preference, "Prefers tea");
    assert_yields("Do not ever use tabs.", MemoryType::Procedure, "Do not ever use tabs");
    assert_yields("J’ai 34 ans.", MemoryType::Identity, "A 34 ans");
    assert_yields("Ich mag keine Tomaten.", MemoryType::Preference, "Mag keine Tomaten");
    assert_yields("Ich schrieb meine Masterarbeit in Wien.\nIch wohne in Berlin.", MemoryType::Identity, "Wohnt in Berlin");
}

#[test]
fn a_value_said_again_after_another_is_current_again_without_a_cycle() {
    let memories = consolidate(&[
        ("c1", "I live in Lyon.", 10),
        ("c2", "I live in Berlin.", 20),
        ("c2", "I live in Berlin.", 21),
        ("c3", "I live in Lyon.", 30),
    ]);
    assert_eq!(memories.len(), 2);
    let (lyon, berlin) = (&memories[0], &memories[1]);
    assert_eq!(lyon.1.supersedes.as_deref(), Some(berlin.0.id.as_str()), "Lyon, said last, is current");
    assert_eq!(berlin.1.supersedes, None, "no cycle");
    assert_eq!(lyon.1.superseded_by, None);
}

proptest::proptest! {
    /// Any text made of the words the readers give meaning to, with secrets and odd characters
    /// among them: each candidate's evidence is the text at its span, and holds no secret.
    #[test]
    fn evidence_is_the_text_at_its_span_and_holds_no_secret(picks in proptest::collection::vec(0..WORDS.len(), 0..24)) {
        let text: Vec<&str> = picks.iter().map(|&pick| WORDS[pick]).collect();
        let text = text.join(" ");
        let mut extraction = Extraction::default();
        extract_message(&text, "m", MONDAY, &mut extraction);
        for candidate in &extraction.candidates {
            let (start, end) = candidate.span;
            proptest::prop_assert_eq!(text.get(start..end), Some(candidate.evidence.as_str()));
            proptest::prop_assert!(!secrets::contains_secret(&candidate.evidence));
        }
    }
}

const WORDS: &[&str] = &[
    "I",
    "I'm",
    "my",
    "we",
    "am",
    "have",
    "not",
    "to",
    "a",
    "the",
    "and",
    "love",
    "live",
    "in",
    "moved",
    "work",
    "as",
    "at",
    "Leeds",
    "nurse",
    "password",
    "is",
    "hunter22!",
    "token:",
    "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    "jo@example.org",
    "+44 7700 900123",
    ",",
    ".",
    "?",
    "\n",
    "Dear",
    "Ana,",
    "ich",
    "wohne",
    "je",
    "suis",
    "vivo",
    "bydlím",
    "’",
    "yesterday",
    "last",
    "year",
    "because",
    "so",
    "if",
];

#[test]
fn verb_phrases_of_one_subject_joined_by_and_are_read_one_by_one() {
    assert_yields("I have a pet cow and drive a big truck.", MemoryType::Fact, "Drives a big truck");
    assert_yields("I work at a bank and live in Leeds.", MemoryType::Identity, "Lives in Leeds");
    assert_yields("I work at a bank and live in Leeds.", MemoryType::Identity, "Works at a bank");
    // Under a negation the second verb may or may not be negated: not split.
    assert!(!extracted("I don't eat meat and drink milk.").iter().any(|(_, statement)| statement == "Drinks milk"));
}

#[test]
fn a_list_after_to_keeps_its_verb_and_a_gerund_takes_no_to() {
    assert_yields("I like to watch comedies and thrillers.", MemoryType::Preference, "Likes to watch thrillers");
    assert_yields("I like to spend time with my family and friends.", MemoryType::Preference, "Likes to spend time with friends");
    assert_yields("I like to read sci-fi and fantasy.", MemoryType::Preference, "Likes to read fantasy");
    assert_yields("I love to bake cookies and knit.", MemoryType::Preference, "Loves to knit");
}

#[test]
fn favourites_ages_beliefs_and_contracted_is_are_read() {
    assert_yields("Mickey Mouse is my favorite character.", MemoryType::Preference, "Their favorite character is Mickey Mouse");
    assert_yields("Horror movies are my favorite!", MemoryType::Preference, "Horror movies are their favorite");
    assert_nothing("They're my favorite band.");
    assert_yields("I'm in my early 40s.", MemoryType::Identity, "Is in their early 40s");
    assert_yields("I don't believe in ghosts.", MemoryType::Identity, "Does not believe in ghosts");
    assert_yields("My dad's a plumber.", MemoryType::Relationship, "Their dad is a plumber");
    assert!(!extracted("My dad's car is red.").iter().any(|(_, statement)| statement.starts_with("Their dad is")));
    assert_yields("I have one brother and three sisters.", MemoryType::Relationship, "Has three sisters");
    assert_yields("I work in IT.", MemoryType::Identity, "Works in IT");
}

#[test]
fn habits_moves_and_life_changes_in_progress_are_read() {
    assert_yields("I see the Rolling Stones in concert every year.", MemoryType::Fact, "Sees the Rolling Stones in concert every year");
    assert_yields("I read about 20 books a year.", MemoryType::Fact, "Reads about 20 books a year");
    assert_yields("I move south for the winter.", MemoryType::Fact, "Moves south for the winter");
    assert_yields("I just moved here from Germany.", MemoryType::Fact, "Used to live in Germany");
    assert_yields("I just moved into my first home.", MemoryType::Context, "Moved into their first home");
    assert_yields("I'm getting married to my best friend.", MemoryType::Context, "Is getting married to their best friend");
    assert_yields("I'm going to business school next year.", MemoryType::Goal, "Is going to business school in 2024");
    assert_nothing("I'm going to the store.");
    assert_nothing("I'm going to the gym after work today.");
    assert_nothing("I'd like to then use that as the moment to start.");
    assert_yields("I'd love to learn more about beekeeping.", MemoryType::Goal, "Would like to learn more about beekeeping");
    assert_nothing("I'll bring my tools.");
}

#[test]
fn a_plan_days_or_weeks_ahead_is_read() {
    assert_yields("I'm going to a wedding next week.", MemoryType::Goal, "Is going to a wedding in the week of 2023-05-15");
    assert_yields("I'm going to a wedding on Saturday.", MemoryType::Goal, "Is going to a wedding on 2023-05-13");
    assert_yields("I'm going to a conference in two weeks.", MemoryType::Goal, "Is going to a conference in two weeks");
    assert_yields(
        "I'm looking forward to my sister's wedding this weekend.",
        MemoryType::Goal,
        "Is looking forward to their sister's wedding on the weekend of 2023-05-13",
    );
}

#[test]
fn a_relative_clause_about_the_assistant_leaves_the_fact_before_it() {
    assert_yields("I have two kids who are about your age.", MemoryType::Relationship, "Has two kids");
    assert_yields("I'm a nurse who uses your app every day.", MemoryType::Identity, "Is a nurse");
    assert_nothing("I like people who agree with you.");
}

#[test]
fn a_clause_before_or_after_another_is_read_on_its_own() {
    assert_yields("I used to be a teacher before I became a nurse.", MemoryType::Identity, "Used to be a teacher");
    assert_yields("Before I became a nurse, I used to be a teacher.", MemoryType::Identity, "Used to be a teacher");
    assert!(!extracted("Before I became a nurse, I used to be a teacher.").iter().any(|(_, statement)| statement.contains("Before")));
    // A time that only frames a habit is no memory of its own.
    let found = extracted("I always brush my teeth before I go to bed.");
    assert!(!found.iter().any(|(_, statement)| statement.contains("bed")), "{found:?}");
}

#[test]
fn working_out_is_a_habit_not_a_job() {
    assert_yields("I work out four times a week.", MemoryType::Fact, "Works out four times a week");
    assert!(!extracted("I worked out yesterday.").iter().any(|(memory_type, _)| *memory_type == MemoryType::Fact), "a day's workout");
}

#[test]
fn what_someone_of_theirs_used_to_do_is_theirs() {
    assert_yields("My father used to work for NASA.", MemoryType::Relationship, "Their father used to work for NASA");
    assert_yields("My brother used to live in Tokyo.", MemoryType::Relationship, "Their brother used to live in Tokyo");
}

#[test]
fn a_doing_of_their_own_looked_forward_to_is_a_plan_without_a_time() {
    assert_yields(
        "I'm looking forward to moving into my new apartment with my boyfriend.",
        MemoryType::Goal,
        "Is looking forward to moving into their new apartment with their boyfriend",
    );
    assert_yields("I'm so excited to start my new job.", MemoryType::Goal, "Is excited to start their new job");
    assert_nothing("I'm looking forward to the weekend.");
    assert_nothing("I'm excited to try it.");
}

#[test]
fn a_group_they_are_on_and_what_they_are_not_good_at_are_read() {
    assert_yields("I'm on the soccer team.", MemoryType::Identity, "Is on the soccer team");
    assert_yields("I'm on the school board of my town.", MemoryType::Identity, "Is on the school board of their town");
    assert_nothing("I'm on the phone.");
    assert_yields("I'm not a good swimmer.", MemoryType::Skill, "Is not a good swimmer");
    assert_yields("I'm not a great writer.", MemoryType::Skill, "Is not a great writer");
    assert_nothing("I'm not a good fit for that.");
}

#[test]
fn a_dream_job_is_a_goal_that_leaves_the_job_they_have_current() {
    assert_yields("My dream car is a vintage Porsche 911.", MemoryType::Goal, "Their dream car is a vintage Porsche 911");
    assert_yields("My dream job is to be a park ranger.", MemoryType::Goal, "Their dream job is to be a park ranger");
    let memories = consolidate(&[("c1", "I'm a nurse.", MONDAY), ("c2", "My dream job is to be a park ranger.", MONDAY + 1)]);
    let nurse = memories.iter().find(|(memory, _)| memory.text == "Is a nurse").expect("the job");
    assert!(nurse.1.superseded_by.is_none(), "{memories:?}");
}

#[test]
fn agreement_and_the_qualities_of_what_was_said_are_no_news() {
    let mut extraction = Extraction::default();
    extract_reply("I love to dance too.", Some("I love to dance."), "m1", 0, &mut extraction);
    assert!(extraction.candidates.is_empty(), "{:?}", extraction.candidates);
    for text in ["I love their songs.", "Likes to do those things.", "I'm not good at it.", "I have two."] {
        assert_nothing(text);
    }
    // After the assistant's turn, "the characters" are the ones it spoke of; with nothing said
    // before, "the beach" is a thing of its own.
    let mut extraction = Extraction::default();
    extract_reply("I love the characters.", Some("The film follows two sisters in Oslo."), "m1", 0, &mut extraction);
    assert!(extraction.candidates.is_empty(), "{:?}", extraction.candidates);
    assert_yields("I love the beach.", MemoryType::Preference, "Loves the beach");
    assert_yields("I love the Beatles.", MemoryType::Preference, "Loves the Beatles");
    assert_yields("I hate the color pink.", MemoryType::Preference, "Hates the color pink");
    assert_yields("I'm a skateboarder too.", MemoryType::Identity, "Is a skateboarder");
}

#[test]
fn a_question_back_after_a_comma_leaves_the_fact_before_it() {
    assert_yields("I'm George, what's your name?", MemoryType::Identity, "Name is George");
    assert_yields("I'm from Ohio, have you ever been?", MemoryType::Identity, "Comes from Ohio");
    assert_nothing("I'm User 2.");
}

#[test]
fn a_short_answer_to_a_question_about_a_favourite_is_that_favourite() {
    let mut extraction = Extraction::default();
    extract_reply("Insane Clown Posse.", Some("Nice! What's your favorite band?"), "m1", 0, &mut extraction);
    let statements: Vec<&str> = extraction.candidates.iter().map(|candidate| candidate.statement.as_str()).collect();
    assert_eq!(statements, ["Their favorite band is Insane Clown Posse"]);
    let mut extraction = Extraction::default();
    extract_reply("Insane Clown Posse.", Some("They played here last night."), "m1", 0, &mut extraction);
    assert!(extraction.candidates.is_empty(), "no question, no answer");
}

#[test]
fn a_list_after_one_verb_gives_one_memory_an_item_in_every_language() {
    for (text, statements) in [
        (
            "J'adore la randonnée, la photo et les jeux de société.",
            &["Adore la randonnée", "Adore la photo", "Adore les jeux de société"][..],
        ),
        ("Ich liebe Schach, Sudoku und Kreuzworträtsel.", &["Liebt Schach", "Liebt Sudoku", "Liebt Kreuzworträtsel"]),
        ("Me encanta bucear y pintar acuarelas.", &["Le encanta bucear", "Le encanta pintar acuarelas"]),
        ("Miluju hory, kolo a dobré jídlo.", &["Miluje hory", "Miluje kolo", "Miluje dobré jídlo"]),
    ] {
        let found: Vec<String> = extracted(text).into_iter().map(|(_, statement)| statement).collect();
        assert_eq!(found, statements, "{text}");
    }
    // Two single words without a comma are one thing.
    assert_yields("Ich mag Salz und Pfeffer.", MemoryType::Preference, "Mag Salz und Pfeffer");
}

#[test]
fn languages_spoken_and_instruments_played_are_skills() {
    let found = extracted("I speak Hindi, Marathi and a bit of French.");
    assert_eq!(
        found,
        [
            (MemoryType::Skill, "Speaks Hindi".to_owned()),
            (MemoryType::Skill, "Speaks Marathi".to_owned()),
            (MemoryType::Skill, "Speaks a bit of French".to_owned())
        ]
    );
    assert_yields("Hablo gallego y un poco de alemán.", MemoryType::Skill, "Habla un poco de alemán");
    assert_yields("Mluvím slovensky a trochu polsky.", MemoryType::Skill, "Mluví slovensky");
    // The language of home says who the user is.
    assert_yields("I speak Gujarati at home.", MemoryType::Identity, "Speaks Gujarati at home");
    assert_yields("I play the cello in a community orchestra.", MemoryType::Skill, "Plays the cello in a community orchestra");
    assert_yields("Ich spiele Geige seit zwanzig Jahren.", MemoryType::Skill, "Spielt Geige seit zwanzig Jahren");
    assert_yields("Hraju na klavír.", MemoryType::Skill, "Hraje na klavír");
    // A game or a sport is no instrument.
    assert!(extracted("I play chess on Sundays.").iter().all(|(memory_type, _)| *memory_type != MemoryType::Skill));
}

#[test]
fn not_standing_something_is_a_dislike_in_every_language() {
    assert_yields("I can't stand horror movies.", MemoryType::Preference, "Can not stand horror movies");
    assert_yields("Je ne supporte pas le bruit.", MemoryType::Preference, "Ne supporte pas le bruit");
    assert_yields("No soporto el frío.", MemoryType::Preference, "No soporta el frío");
    assert_yields("Ich kann Lärm nicht ausstehen.", MemoryType::Preference, "Kann Lärm nicht ausstehen");
}

#[test]
fn a_spanish_or_french_past_and_a_time_phrase_before_the_verb_are_read() {
    // The regular Spanish preterite, told by its ending in a sentence told Spanish.
    assert_yields("Terminé el máster en junio.", MemoryType::Context, "Terminó el máster en junio");
    assert_yields("Me casé con Laura en 2019.", MemoryType::Context, "Se casó con Laura en 2019");
    // A time phrase before the verb goes behind it.
    assert_yields("Actualmente vivo en Bilbao.", MemoryType::Identity, "Vive en Bilbao actualmente");
    assert_yields("Ahora trabajo de enfermera en un hospital.", MemoryType::Identity, "Trabaja de enfermera en un hospital ahora");
    // Where to, not where from, and a year is no place.
    assert_yields("Me mudé de Madrid a Granada en 2021.", MemoryType::Identity, "Vive en Granada");
    // A French perfect with a participle in -i is an event.
    assert_yields("J'ai réussi mon permis la semaine dernière.", MemoryType::Context, "A réussi son permis la semaine du 2023-05-01");
    // A word with the ending that is no verb opens nothing.
    assert_nothing("Café con leche, por favor.");
}

#[test]
fn starting_a_venture_is_a_plan_and_a_name_said_with_an_apostrophe_is_read() {
    assert_yields("I'm going to start a small landscaping business.", MemoryType::Goal, "Is going to start a small landscaping business");
    assert_nothing("I'm going to start the download now.");
    assert_yields("my name's Tomasz.", MemoryType::Identity, "Name is Tomasz");
}

#[test]
fn the_user_with_others_is_read_in_every_language() {
    assert_yields("Wir wohnen seit drei Jahren in Graz.", MemoryType::Identity, "Wohnt seit drei Jahren in Graz");
    assert_yields("Nous avons trois enfants.", MemoryType::Relationship, "A trois enfants");
    assert_yields("Nosotros queremos abrir un bar.", MemoryType::Goal, "Quiere abrir un bar");
    // Said without the pronoun, the plural verb still opens a clause of its own.
    let found = extracted("Vivimos en Cádiz y tenemos dos hijos, ¿qué colegio me recomiendas?");
    assert!(found.contains(&(MemoryType::Relationship, "Tiene dos hijos".to_owned())), "{found:?}");
    assert!(found.iter().all(|(_, statement)| !statement.contains("tenemos")), "{found:?}");
    // A plan of the moment or a task said of "us" is none.
    assert_nothing("Wir machen das morgen.");
    assert_nothing("Wir brauchen eine Funktion, die das sortiert.");
}

#[test]
fn a_decision_in_the_perfect_is_a_decision_and_a_clause_ends_before_a_dash() {
    assert_yields("Ich habe mich entschieden, Postgres zu nutzen.", MemoryType::Decision, "Hat sich entschieden Postgres zu nutzen");
    let found = extracted("Als Pflegerin im Nachtdienst – wie schlafe ich tagsüber besser?");
    assert_eq!(found, [(MemoryType::Identity, "Ist Pflegerin im Nachtdienst".to_owned())]);
}

#[test]
fn a_second_person_word_is_told_in_the_clauses_own_language() {
    // French "du" is "some", not German "du": these were read as speaking to the assistant.
    assert_yields("Je joue du piano.", MemoryType::Skill, "Joue du piano");
    assert_yields("Je bois du café le matin.", MemoryType::Preference, "Boit du café le matin");
    assert_yields("Je fais du vélo tous les week-ends.", MemoryType::Context, "Fait du vélo tous les week-ends");
    // Czech "tu" points at a thing.
    assert_yields("Mám ráda tu kavárnu u nádraží.", MemoryType::Preference, "Má ráda tu kavárnu u nádraží");
    // Speaking to the assistant still says nothing of the user.
    assert_nothing("J'aime ton idée.");
    assert_nothing("Ich mag deine Beispiele.");
}

#[test]
fn the_users_possessive_gives_the_statements_one() {
    // "fils" ends in s but is one son; "Eltern" has no -e but is plural.
    assert_yields("Mon fils a sept ans.", MemoryType::Relationship, "Son fils a sept ans");
    assert_yields("Mes parents habitent à Lyon.", MemoryType::Relationship, "Ses parents habitent à Lyon");
    assert_yields("Meine Eltern wohnen in Graz.", MemoryType::Relationship, "Ihre Eltern wohnen in Graz");
    assert_yields("Mis padres viven en Quito.", MemoryType::Relationship, "Sus padres viven en Quito");
}

#[test]
fn spanish_verbs_outside_the_lists_are_read() {
    // A short first-person verb in "-oy" opens the gate.
    assert_yields("Soy profesora de matemáticas.", MemoryType::Identity, "Es profesora de matemáticas");
    // The user's clitic on an infinitive is written in the third person.
    assert_yields("Voy a casarme en octubre.", MemoryType::Goal, "Va a casarse en octubre");
    // A preterite keeps its stem's spelling in the third person, and opens a sentence.
    assert_yields("Busqué trabajo durante meses.", MemoryType::Context, "Buscó trabajo durante meses");
    let found = extracted("Empecé a correr hace seis meses.");
    assert!(
        found.iter().any(|(memory_type, statement)| *memory_type == MemoryType::Context && statement.starts_with("Empezó a correr")),
        "{found:?}"
    );
}

#[test]
fn a_state_of_what_was_said_before_is_no_memory() {
    assert_nothing("estoy harta de eso, la verdad");
    assert_nothing("Ich bin müde davon.");
    assert_yields("Estoy harta de mi trabajo.", MemoryType::Identity, "Está harta de su trabajo");
}

#[test]
fn a_time_said_before_the_verb_dates_the_clause_in_every_language() {
    // Written on MONDAY (2023-05-08).
    assert_yields("Hace seis meses empecé a correr.", MemoryType::Context, "Empezó a correr en noviembre de 2022");
    assert_yields("Il y a deux ans j'ai déménagé à Lille.", MemoryType::Context, "A déménagé à Lille en 2021");
    assert_yields("Před třemi lety jsem se odstěhoval z Ostravy.", MemoryType::Context, "Odstěhoval se z Ostravy v roce 2020");
    assert_yields("A veces trabajo desde casa.", MemoryType::Identity, "Trabaja desde casa a veces");
    // "luego" is no verb.
    assert_nothing("Y luego trabajo en casa.");
}

#[test]
fn a_move_still_ahead_is_a_plan_not_the_home() {
    assert_yields("La semana que viene me mudo a Bilbao.", MemoryType::Goal, "Se muda a Bilbao la semana del 2023-05-15");
    assert_yields("Le mois prochain je déménage à Nantes.", MemoryType::Goal, "Déménage à Nantes en juin 2023");
    assert_yields("Je déménage à Nantes.", MemoryType::Identity, "Habite à Nantes");
}

#[test]
fn a_doing_said_ahead_is_a_plan() {
    assert_yields(
        "El mes que viene empiezo a trabajar en Mercadona.",
        MemoryType::Goal,
        "Empieza a trabajar en Mercadona en junio de 2023",
    );
    assert_yields("Demain je commence un nouveau travail.", MemoryType::Goal, "Commence un nouveau travail le 2023-05-09");
    assert_yields("Juego al pádel dos veces por semana.", MemoryType::Fact, "Juega al pádel dos veces por semana");
}

#[test]
fn the_morning_is_no_tomorrow() {
    assert_yields("Ich laufe jeden Morgen fünf Kilometer.", MemoryType::Fact, "Läuft jeden Morgen fünf Kilometer");
    assert_yields("Corro por la mañana.", MemoryType::Fact, "Corre por la mañana");
}

#[test]
fn seeing_someone_or_something_on_a_day_ahead_is_a_plan() {
    assert_yields(
        "I'm going to see the Rolling Stones in concert next month!",
        MemoryType::Goal,
        "Is going to see the Rolling Stones in concert in June 2023",
    );
    assert_yields(
        "I'm going to see a doctor tomorrow about my knee.",
        MemoryType::Goal,
        "Is going to see a doctor on 2023-05-09 about their knee",
    );
    assert_yields("I'll bring my kids to Disney next summer.", MemoryType::Goal, "Will bring their kids to Disney in summer 2024");
    // The next few minutes, and understanding, stay nothing.
    assert_nothing("I'll see you tomorrow.");
    assert_nothing("I'm going to see if it works tomorrow.");
    assert_nothing("I'll check it tomorrow.");
    assert_nothing("I'll look into it next week.");
    assert_nothing("I see what you mean now.");
}

#[test]
fn how_long_they_have_been_with_someone_or_an_employer_is_read() {
    assert_yields(
        "I've been with my boyfriend for three years.",
        MemoryType::Relationship,
        "Has been with their boyfriend for three years",
    );
    assert_yields("I have been with my wife since high school.", MemoryType::Relationship, "Has been with their wife since high school");
    assert_yields("I've been with the same company for 15 years now.", MemoryType::Context, "Has been with the same company for 15 years");
    assert_nothing("I've been with this problem for days.");
    assert_nothing("I've been with you for an hour.");
}

#[test]
fn a_kind_of_person_they_are_not_describes_them() {
    assert_yields("I'm not a morning person.", MemoryType::Identity, "Is not a morning person");
    assert_yields("I'm not really a people person.", MemoryType::Identity, "Is not a people person");
    // Neither a correction of the assistant (kept only when said again) nor the positive
    // statement's memory.
    assert!(consolidate(&[("c1", "I'm not a doctor.", MONDAY)]).is_empty());
    let memories = consolidate(&[("c1", "I'm a morning person.", MONDAY), ("c2", "I'm not a morning person.", MONDAY + 1)]);
    assert_eq!(memories.len(), 2, "{memories:?}");
}

#[test]
fn what_happened_to_them_said_with_got_is_read_as_with_was() {
    assert_yields("I got married last year.", MemoryType::Relationship, "Got married in 2022");
    assert_yields("I got diagnosed with diabetes last year.", MemoryType::Context, "Got diagnosed with diabetes in 2022");
    assert_yields("I got fired from my job last month.", MemoryType::Context, "Got fired from their job in April 2023");
    assert_nothing("I got stuck on this error.");
    assert_nothing("I got used to it.");
    assert_nothing("I got confused by your answer.");
}

#[test]
fn what_they_work_is_their_work() {
    assert_yields("I work the night shift at a hospital.", MemoryType::Identity, "Works the night shift at a hospital");
    assert_yields("I work the family farm.", MemoryType::Identity, "Works the family farm");
    assert_nothing("I work a lot.");
    assert_nothing("I work my way through the tutorial.");
}

#[test]
fn what_they_had_to_do_is_what_they_did() {
    assert_yields("I had to quit my job to take care of my mom.", MemoryType::Context, "Had to quit their job to take care of their mom");
    assert!(!extracted("I had to have a kidney transplant last year.").is_empty());
    assert_nothing("I had to google it.");
    assert_nothing("I have to restart my computer.");
}
