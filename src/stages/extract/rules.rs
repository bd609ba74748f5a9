//! The extraction rules of each language: first-person patterns that say something durable
//! about the speaker, each with the memory type it yields, the slot it fills (a slot holds one
//! current value, like a home; an open slot like `likes` holds many) and the statement it writes.
//!
//! A pattern's `value` group is the part of the sentence the statement keeps; the statement is
//! written in the sentence's language with `{}` standing for it (and `{rel}` for a relation
//! word where the pattern names one). Patterns match on the whole sentence, case-insensitively,
//! after the sentence filters (questions, hypotheticals, reported speech) have run.

use std::sync::{LazyLock, OnceLock};

use regex::Regex;

use super::MemoryType;
use super::language::Language;
use super::rule_gate::RuleGate;

/// One rule: a pattern and what it yields.
#[derive(Debug)]
pub struct Rule {
    /// What kind of memory it yields.
    pub memory_type: MemoryType,
    /// The slot it fills; [`Rule::single_valued`] slots hold one current value.
    pub slot: &'static str,
    /// Whether a new value of the slot supersedes the old one (home, employer), or adds to it.
    pub single_valued: bool,
    /// The statement, with `{}` for the value and `{rel}` for the `rel` group.
    pub template: &'static str,
    /// How sure a match is, before repetition raises it.
    pub confidence: f32,
    /// The pattern as written (case-insensitive when compiled), with a `value` group (and a
    /// `rel` group where the template has `{rel}`).
    source: String,
    /// The compiled pattern, made the first time the gate lets a sentence through to it: most
    /// rules never see a sentence in a run, and compiling all of them took longer than
    /// extracting from 64 MB.
    compiled: OnceLock<Regex>,
}

impl Rule {
    /// The compiled pattern.
    pub fn pattern(&self) -> &Regex {
        self.compiled.get_or_init(|| {
            #[expect(clippy::expect_used, reason = "the patterns are literals; every rule of every language is compiled by the tests")]
            Regex::new(&format!("(?i){}", self.source)).expect("a valid rule pattern")
        })
    }
}

/// A value: a few words, up to a clause boundary.
const VALUE: &str = r"(?P<value>[^,.;:!?()\[\]]{2,80}?)";
/// Where a value ends: a clause boundary, or (`{C}`, the language's) a connector that starts a
/// new clause.
const END: &str = r"(?:\s*(?:[,.;:!?)]|$)|\s(?:{C})\s)";

/// A capitalized name of one to three words (case-sensitive inside the case-insensitive rule).
const NAME: &str = r"(?P<value>(?-i:\p{Lu}[\p{L}'’\-]+(?:\s\p{Lu}[\p{L}'’\-]+){0,2}))";

/// A language's rules.
pub struct LanguageRules {
    /// The rules, from specific to general.
    pub rules: Vec<Rule>,
}

/// Builds the rules of one language from `(type, slot, single-valued, template, confidence,
/// pattern)` rows; `{V}`, `{E}` and `{N}` in a pattern stand for [`VALUE`], [`END`] (with the
/// language's `connectors`) and [`NAME`].
fn build(connectors: &str, rows: &[(MemoryType, &'static str, bool, &'static str, f32, &str)]) -> LanguageRules {
    let end = END.replace("{C}", connectors);
    let expanded: Vec<String> = rows.iter().map(|row| row.5.replace("{V}", VALUE).replace("{E}", &end).replace("{N}", NAME)).collect();
    let rules = rows
        .iter()
        .zip(&expanded)
        .map(|((memory_type, slot, single_valued, template, confidence, _), expanded)| Rule {
            memory_type: *memory_type,
            slot,
            single_valued: *single_valued,
            template,
            confidence: *confidence,
            source: expanded.clone(),
            compiled: OnceLock::new(),
        })
        .collect();
    LanguageRules { rules }
}

use MemoryType::{Decision, Environment, Fact, Goal, Identity, Pitfall, Preference, Procedure, Project, Relationship, Skill};

static ENGLISH: LazyLock<LanguageRules> = LazyLock::new(|| {
    build(
        "and|but|because|so|since|while|which|who|as",
        &[
            (Identity, "name", true, "Name is {}", 0.9, r"\bmy name is {N}"),
            (Identity, "name", true, "Name is {}", 0.8, r"\b(?:please )?call me {N}\s*(?:[,.;!]|$)"),
            (Identity, "age", true, "Is {} years old", 0.85, r"\bI(?:'m|’m| am|m) (?P<value>\d{1,2}) (?:years old|yo|y/o)\b"),
            (Identity, "pronouns", true, "Pronouns are {}", 0.9, r"\bmy pronouns are (?P<value>\w+/\w+(?:/\w+)?)"),
            (
                Identity,
                "home",
                true,
                "Lives in {}",
                0.85,
                r"\bI(?:'m|’m| am|m)? (?:currently )?(?:live|living|reside|residing|based|located) in {V}{E}",
            ),
            (Identity, "home", true, "Lives in {}", 0.8, r"\bI (?:just |recently )?moved to {V}{E}"),
            (Identity, "origin", true, "Comes from {}", 0.8, r"\bI(?:'m|’m| am|m) (?:originally )?from {N}"),
            (
                Identity,
                "nationality",
                true,
                "Is {}",
                0.8,
                r"\bI(?:'m|’m| am|m) (?:a )?(?P<value>(?:American|British|English|Scottish|Irish|Canadian|Australian|German|French|Spanish|Czech|Italian|Polish|Dutch|Indian|Chinese|Japanese|Mexican|Brazilian|Ukrainian|Swiss|Austrian|Swedish|Norwegian|Danish|Slovak) (?:citizen|national)|(?:American|British|Canadian|Australian|German|French|Spanish|Czech|Italian|Polish|Dutch|Indian|Mexican|Brazilian|Ukrainian|Austrian|Swedish|Slovak))\b",
            ),
            (Identity, "languages", false, "Speaks {}", 0.85, r"\bI speak (?P<value>(?-i:\p{Lu})[^,.;:!?]{1,60}?){E}"),
            (Identity, "languages", false, "Native language is {}", 0.85, r"\bmy (?:native|first|mother) (?:language|tongue) is {V}{E}"),
            (
                Identity,
                "occupation",
                true,
                "Works as {}",
                0.85,
                r"\bI(?: work| have been working|'ve been working|’ve been working) as (?P<value>an? [^,.;:!?]{2,60}?){E}",
            ),
            (
                Identity,
                "occupation",
                true,
                "Works as {}",
                0.8,
                r"\bI(?:'m|’m| am|m) (?P<value>an? (?:\w+ )?(?:nurse|teacher|doctor|physician|developer|programmer|software engineer|engineer|designer|lawyer|accountant|manager|writer|researcher|scientist|architect|chef|photographer|consultant|analyst|pharmacist|dentist|professor|journalist|electrician|farmer|artist|musician|student|freelancer|entrepreneur|translator|librarian|therapist|paramedic|pilot|mechanic|plumber|carpenter|veterinarian|vet|economist|marketer|recruiter|founder|data scientist|product manager|project manager|sysadmin|devops engineer))\b",
            ),
            (Identity, "employer", true, "Works at {}", 0.8, r"\bI work (?:at|for) {N}"),
            (Identity, "education", false, "Studies {}", 0.8, r"\bI(?:'m|’m| am|m)? (?:study|studying|majoring in) {V}{E}"),
            (
                Identity,
                "education",
                false,
                "Has a degree in {}",
                0.85,
                r"\bI have an? (?:degree|phd|master'?s|bachelor'?s|msc|bsc|ba|ma)(?: degree)? in {V}{E}",
            ),
            (
                Preference,
                "diet",
                true,
                "Is {}",
                0.85,
                r"\bI(?:'m|’m| am|m) (?:a )?(?P<value>vegetarian|vegan|pescatarian|lactose intolerant|gluten[- ]free)\b",
            ),
            (Preference, "does_not_eat", false, "Does not eat {}", 0.85, r"\bI (?:don't|don’t|do not|never) (?:eat|drink) {V}{E}"),
            (Preference, "dislikes", false, "Dislikes {}", 0.8, r"\bI (?:really )?(?:don't|don’t|do not) (?:like|enjoy) {V}{E}"),
            (Preference, "dislikes", false, "Dislikes {}", 0.8, r"\bI (?:really )?(?:hate|dislike|can't stand|can’t stand|detest) {V}{E}"),
            (Preference, "likes", false, "Prefers {}", 0.8, r"\bI(?: would|'d|’d)? (?:really |much |strongly )?prefer {V}{E}"),
            (Preference, "likes", false, "Likes {}", 0.75, r"\bI (?:really |absolutely )?(?:love|like|enjoy|adore) {V}{E}"),
            (
                Preference,
                "favourite",
                false,
                "Favourite {rel} is {}",
                0.85,
                r"\bmy (?:all[- ]time )?favou?rite (?P<rel>\w+(?: \w+)?) (?:is|are) {V}{E}",
            ),
            (Procedure, "instruction", false, "Always {}", 0.85, r"^(?:please,? )?always {V}{E}"),
            (Procedure, "instruction", false, "Never {}", 0.85, r"^(?:please,? )?(?:never|don't ever|do not ever) {V}{E}"),
            (Procedure, "instruction", false, "From now on: {}", 0.85, r"\bfrom now on,? {V}{E}"),
            (Procedure, "instruction", false, "Remember: {}", 0.8, r"^(?:please )?remember that {V}{E}"),
            (
                Procedure,
                "instruction",
                false,
                "Never suggest {}",
                0.85,
                r"\b(?:never|don't|don’t|do not) (?:suggest|recommend|use) (?P<value>[^,.;:!?]{2,60}?),? (?:we|I) (?:use|prefer)\b",
            ),
            (
                Relationship,
                "relation",
                false,
                "Has a {rel} named {}",
                0.85,
                r"\bmy (?P<rel>wife|husband|partner|girlfriend|boyfriend|fiancée?|son|daughter|mother|mom|mum|father|dad|brother|sister|grandmother|grandfather|grandma|grandpa|aunt|uncle|cousin|niece|nephew|dog|cat|puppy|kitten|horse|boss|manager|colleague|coworker|best friend|friend|roommate)(?:'s name is|’s name is| is called| is named| named|,)? {N}",
            ),
            (
                Relationship,
                "children",
                false,
                "Has {}",
                0.8,
                r"\bI have (?P<value>(?:a|an|one|two|three|four|five|\d) (?:\w+ )?(?:kids?|children|child|sons?|daughters?|dogs?|cats?|grandchildren|siblings|brothers?|sisters?))\b",
            ),
            (Relationship, "partner", true, "Is married", 0.8, r"\bI(?:'m|’m| am|m) (?P<value>married)\b"),
            (Goal, "goal", false, "Plans to {}", 0.7, r"\bI(?:'m|’m| am|m) (?:planning|hoping|aiming) to {V}{E}"),
            (
                Goal,
                "goal",
                false,
                "Wants to {}",
                0.7,
                r"\bI (?:want|would like|'d like|’d like) to (?P<value>(?:learn|become|move|start|build|get|run|lose|switch|improve|write|buy|find|travel|study|finish|launch|open|quit|retire)\b[^,.;:!?]{0,70}?){E}",
            ),
            (Goal, "goal", false, "Goal: {}", 0.8, r"\bmy (?:main |long-term )?goal is to {V}{E}"),
            (Goal, "learning", false, "Is learning {}", 0.8, r"\bI(?:'m|’m| am|m) (?:currently )?learning {V}{E}"),
            (Decision, "decision", false, "Decided to {}", 0.8, r"\b(?:we|I)(?:'ve|’ve| have)? decided to {V}{E}"),
            (
                Decision,
                "decision",
                false,
                "Decided on {}",
                0.8,
                r"\b(?:(?:we|I)(?:'ll|’ll| will) go|we went|we're going|we’re going|we are going) with {V}{E}",
            ),
            (
                Pitfall,
                "pitfall",
                false,
                "{} did not work",
                0.7,
                r"^(?P<value>[^,.;:!?]{3,60}?) (?:didn't|didn’t|did not|doesn't|doesn’t|does not) work\b",
            ),
            (Pitfall, "pitfall", false, "Avoid {}", 0.7, r"\b(?:we|I) (?:have to|must|need to|should) avoid {V}{E}"),
            (Fact, "allergy", false, "Is allergic to {}", 0.9, r"\bI(?:'m|’m| am|m) allergic to {V}{E}"),
            (
                Skill,
                "skill",
                false,
                "Skilled in {}",
                0.75,
                r"\bI(?:'m|’m| am|m) (?:good|experienced|fluent|proficient|an expert) (?:at|in|with) {V}{E}",
            ),
            (
                Skill,
                "skill",
                false,
                "Has experience with {}",
                0.75,
                r"\bI(?:'ve|’ve| have) been (?:programming|coding|working|writing) (?:in|with) {V} for\b",
            ),
            (
                Environment,
                "environment",
                false,
                "Uses {}",
                0.75,
                r"\b(?:I|we)(?: use| am using|'m using|’m using| are using|'re using|’re using| run| am running|'m running|’m running| work on|'m on|’m on| am on) (?P<value>(?:Linux|Ubuntu|Debian|Fedora|Arch|Windows|macOS|Mac|iPhone|Android|Pixel|iPad|VS ?Code|Vim|Neovim|Emacs|IntelliJ|PyCharm|Postgres(?:QL)?|MySQL|SQLite|Docker|Kubernetes|AWS|GCP|Azure|React|Vue|Angular|Django|Flask|Rails|Node(?:\.js)?|pnpm|npm|yarn|Python|Rust|Go|Java|TypeScript|JavaScript|Kotlin|Swift|C\+\+|C#)\b[^,.;:!?]{0,30}?){E}",
            ),
            (
                Environment,
                "environment",
                false,
                "Uses {}",
                0.75,
                r"\bmy (?:os|operating system|stack|tech stack|setup|editor|ide) is {V}{E}",
            ),
            (
                Project,
                "project",
                false,
                "Works on {}",
                0.7,
                r"\bI(?:'m|’m| am|m) (?:currently )?(?:building|developing|working on|writing) (?P<value>(?:an?|my|our|the) [^,.;:!?]{2,70}?){E}",
            ),
            (Project, "project", false, "Project: {}", 0.8, r"\bmy (?:side |current |main )?project is {V}{E}"),
            (Fact, "former_home", false, "Used to live in {}", 0.8, r"\bI used to live in {V}{E}"),
            (Fact, "life_event", false, "Was born in {}", 0.85, r"\bI was born in {V}{E}"),
            // Contact details: written only under `--extract-pii keep` (see `is_personal_slot`).
            (
                Identity,
                "email",
                true,
                "E-mail is {}",
                0.9,
                r"\bmy (?:e-?mail|email address|e-mail address) is (?P<value>[\w.+\-]+@[\w\-]+(?:\.[\w\-]+)+)",
            ),
            (
                Identity,
                "phone",
                true,
                "Phone number is {}",
                0.9,
                r"\bmy (?:phone|mobile|cell)(?: number)? is (?P<value>\+?\d[\d \-/().]{5,18}\d)",
            ),
            (Identity, "address", true, "Address is {}", 0.9, r"\bmy (?:home |street |postal )?address is {V}{E}"),
        ],
    )
});

static GERMAN: LazyLock<LanguageRules> = LazyLock::new(|| {
    build(
        "und|aber|weil|denn|da|sondern|damit",
        &[
            (Identity, "name", true, "Heißt {}", 0.9, r"\b(?:ich heiße|mein name ist) {N}"),
            (Identity, "age", true, "Ist {} Jahre alt", 0.85, r"\bich bin (?P<value>\d{1,2}) (?:jahre alt|jahre)\b"),
            (
                Identity,
                "home",
                true,
                "Wohnt in {}",
                0.85,
                r"\b(?:ich (?:wohne|lebe)|(?:wohne|lebe) ich) (?:jetzt |derzeit |seit \w+ )?in {V}{E}",
            ),
            (Identity, "home", true, "Wohnt in {}", 0.8, r"\bich bin (?:gerade |kürzlich )?nach {V} gezogen"),
            (Identity, "origin", true, "Kommt aus {}", 0.8, r"\bich komme (?:ursprünglich )?aus {V}{E}"),
            (Identity, "languages", false, "Spricht {}", 0.85, r"\bich spreche {V}{E}"),
            (Identity, "occupation", true, "Arbeitet als {}", 0.85, r"\b(?:ich arbeite|arbeite ich) (?:jetzt |derzeit )?als {V}{E}"),
            (
                Identity,
                "occupation",
                true,
                "Ist {}",
                0.8,
                r"\bich bin (?P<value>(?:\w+ )?(?:krankenschwester|krankenpfleger(?:in)?|lehrer(?:in)?|arzt|ärztin|entwickler(?:in)?|programmierer(?:in)?|ingenieur(?:in)?|designer(?:in)?|anwalt|anwältin|student(?:in)?|softwareentwickler(?:in)?|informatiker(?:in)?|journalist(?:in)?|architekt(?:in)?|koch|köchin|rentner(?:in)?))\b",
            ),
            (Identity, "employer", true, "Arbeitet bei {}", 0.8, r"\bich arbeite (?:bei|für) {N}"),
            (Identity, "education", false, "Studiert {}", 0.8, r"\bich studiere {V}{E}"),
            (Preference, "diet", true, "Ist {}", 0.85, r"\bich bin (?P<value>vegetarier(?:in)?|veganer(?:in)?|vegan)\b"),
            (Preference, "does_not_eat", false, "Isst kein {}", 0.85, r"\bich (?:esse|trinke) (?:kein|keine|keinen|nie) {V}{E}"),
            (Preference, "dislikes", false, "Mag {} nicht", 0.8, r"\bich mag {V} nicht\b"),
            (Preference, "dislikes", false, "Mag kein {}", 0.8, r"\bich mag (?:kein|keine|keinen) {V}{E}"),
            (Preference, "dislikes", false, "Hasst {}", 0.8, r"\bich hasse {V}{E}"),
            (Preference, "likes", false, "Mag {}", 0.75, r"\bich (?:mag|liebe) {V}{E}"),
            (Preference, "likes", false, "Bevorzugt {}", 0.8, r"\bich bevorzuge {V}{E}"),
            (Preference, "favourite", false, "Lieblings{rel}: {}", 0.85, r"\bmein(?:e)? lieblings(?P<rel>\w+) (?:ist|sind) {V}{E}"),
            (Procedure, "instruction", false, "Immer {}", 0.85, r"^(?:bitte )?immer {V}{E}"),
            (Procedure, "instruction", false, "Nie {}", 0.85, r"^(?:bitte )?(?:nie|niemals) {V}{E}"),
            (Procedure, "instruction", false, "Ab jetzt: {}", 0.85, r"\bab (?:jetzt|sofort),? {V}{E}"),
            (Procedure, "instruction", false, "Merke dir: {}", 0.8, r"^(?:bitte )?merk(?:e)? dir,? dass {V}{E}"),
            (
                Relationship,
                "relation",
                false,
                "{rel}: {}",
                0.85,
                r"\bmeine? (?P<rel>frau|mann|partner|partnerin|freundin|freund|sohn|tochter|mutter|vater|bruder|schwester|hund|katze|chef|chefin|kollege|kollegin)(?: heißt|,)? {N}",
            ),
            (
                Relationship,
                "children",
                false,
                "Hat {}",
                0.8,
                r"\bich habe (?P<value>(?:ein|eine|einen|zwei|drei|vier|\d) (?:kind|kinder|sohn|söhne|tochter|töchter|hund|hunde|katze|katzen))\b",
            ),
            (Goal, "goal", false, "Plant {}", 0.7, r"\bich (?:plane|habe vor),? {V}{E}"),
            (
                Goal,
                "goal",
                false,
                "Möchte {}",
                0.7,
                r"\bich (?:möchte|will) (?P<value>[^,.;:!?]{2,70}?(?:lernen|werden|umziehen|starten|bauen|schreiben|abnehmen)){E}",
            ),
            (Goal, "learning", false, "Lernt {}", 0.8, r"\b(?:ich lerne|lerne ich) (?:gerade |jetzt )?{V}{E}"),
            (
                Decision,
                "decision",
                false,
                "Entschieden: {}",
                0.8,
                r"\b(?:wir haben|ich habe) (?:uns |mich )?(?:entschieden|beschlossen),? {V}{E}",
            ),
            (
                Pitfall,
                "pitfall",
                false,
                "{} hat nicht funktioniert",
                0.7,
                r"^(?P<value>[^,.;:!?]{3,60}?) (?:hat nicht funktioniert|funktioniert nicht)\b",
            ),
            (Fact, "allergy", false, "Ist allergisch gegen {}", 0.9, r"\bich bin allergisch gegen {V}{E}"),
            (Skill, "skill", false, "Kennt sich aus mit {}", 0.75, r"\bich kenne mich (?:gut )?(?:mit|in) {V} aus\b"),
            (
                Environment,
                "environment",
                false,
                "Nutzt {}",
                0.75,
                r"\b(?:ich|wir) (?:nutze|benutze|verwende|nutzen|benutzen|verwenden) {V}{E}",
            ),
            (
                Project,
                "project",
                false,
                "Arbeitet an {}",
                0.7,
                r"\bich arbeite (?:gerade )?an (?P<value>(?:einem|einer|meinem|meiner|unserem|unserer) [^,.;:!?]{2,70}?){E}",
            ),
            (Fact, "former_home", false, "Hat früher in {} gewohnt", 0.8, r"\bich habe früher in {V} gewohnt"),
            (Fact, "life_event", false, "Ist in {} geboren", 0.85, r"\bich bin in {V} geboren"),
            // Contact details: written only under `--extract-pii keep` (see `is_personal_slot`).
            (
                Identity,
                "email",
                true,
                "E-Mail-Adresse ist {}",
                0.9,
                r"\bmeine (?:e-?mail|e-?mail-adresse|mailadresse) (?:ist|lautet) (?P<value>[\w.+\-]+@[\w\-]+(?:\.[\w\-]+)+)",
            ),
            (
                Identity,
                "phone",
                true,
                "Telefonnummer ist {}",
                0.9,
                r"\bmeine (?:telefonnummer|handynummer|nummer) (?:ist|lautet) (?P<value>\+?\d[\d \-/().]{5,18}\d)",
            ),
            (Identity, "address", true, "Adresse ist {}", 0.9, r"\bmeine (?:adresse|anschrift|wohnadresse) (?:ist|lautet) {V}{E}"),
        ],
    )
});

static FRENCH: LazyLock<LanguageRules> = LazyLock::new(|| {
    build(
        "et|mais|parce|car|donc|puisque",
        &[
            (Identity, "name", true, "S'appelle {}", 0.9, r"\b(?:je m'appelle|je m’appelle|mon nom est) {N}"),
            (Identity, "age", true, "A {} ans", 0.85, r"\bj'ai (?P<value>\d{1,2}) ans\b"),
            (
                Identity,
                "home",
                true,
                "Habite à {}",
                0.85,
                r"\b(?:j'habite|j’habite|je vis|je réside) (?:maintenant |actuellement )?(?:à|a|en|au) {V}{E}",
            ),
            (Identity, "home", true, "Habite à {}", 0.8, r"\bje (?:viens de |)(?:déménager|me suis installée?) à {V}{E}"),
            (Identity, "origin", true, "Vient de {}", 0.8, r"\bje viens (?:de |du |d'|d’)(?:la |l')?{N}"),
            (Identity, "languages", false, "Parle {}", 0.85, r"\bje parle {V}{E}"),
            (Identity, "occupation", true, "Travaille comme {}", 0.85, r"\bje travaille comme {V}{E}"),
            (
                Identity,
                "occupation",
                true,
                "Est {}",
                0.8,
                r"\bje suis (?P<value>(?:infirmière?|infirmier|enseignante?|professeure?|médecin|développeuse|développeur|ingénieure?|designer|avocate?|étudiante?|journaliste|architecte|comptable|chercheuse|chercheur|retraitée?))\b",
            ),
            (Identity, "employer", true, "Travaille chez {}", 0.8, r"\bje travaille (?:chez|pour) {N}"),
            (Identity, "education", false, "Étudie {}", 0.8, r"\bj'étudie {V}{E}"),
            (Preference, "diet", true, "Est {}", 0.85, r"\bje suis (?P<value>végétarienne?|végane?|vegan)\b"),
            (
                Preference,
                "does_not_eat",
                false,
                "Ne mange pas de {}",
                0.85,
                r"\bje ne (?:mange|bois) (?:pas|jamais) (?:de |d'|du |des )?{V}{E}",
            ),
            (Preference, "dislikes", false, "N'aime pas {}", 0.8, r"\bje n'aime pas {V}{E}"),
            (Preference, "dislikes", false, "Déteste {}", 0.8, r"\bje déteste {V}{E}"),
            (Preference, "likes", false, "Préfère {}", 0.8, r"\bje préfère {V}{E}"),
            (Preference, "likes", false, "Aime {}", 0.75, r"\b(?:j'aime|j’aime|j'adore|j’adore) {V}{E}"),
            (Preference, "favourite", false, "{rel} préféré : {}", 0.85, r"\bmon (?P<rel>\w+) préféré est {V}{E}"),
            (Procedure, "instruction", false, "Toujours {}", 0.85, r"^(?:s'il te plaît,? |stp,? )?toujours {V}{E}"),
            (Procedure, "instruction", false, "Ne jamais {}", 0.85, r"^(?:ne )?jamais {V}{E}"),
            (Procedure, "instruction", false, "Désormais : {}", 0.85, r"\b(?:désormais|à partir de maintenant),? {V}{E}"),
            (Procedure, "instruction", false, "Retiens : {}", 0.8, r"^(?:souviens-toi|rappelle-toi|retiens) que {V}{E}"),
            (
                Relationship,
                "relation",
                false,
                "{rel} : {}",
                0.85,
                r"\b(?:ma|mon) (?P<rel>femme|mari|partenaire|copine|copain|fils|fille|mère|père|frère|sœur|soeur|chien|chat|chatte|patron|patronne|collègue)(?: s'appelle| s’appelle|,)? {N}",
            ),
            (
                Relationship,
                "children",
                false,
                "A {}",
                0.8,
                r"\bj'ai (?P<value>(?:un|une|deux|trois|quatre|\d) (?:enfants?|fils|filles?|chiens?|chats?))\b",
            ),
            (Goal, "goal", false, "Prévoit de {}", 0.7, r"\bje (?:prévois|projette) de {V}{E}"),
            (
                Goal,
                "goal",
                false,
                "Veut {}",
                0.7,
                r"\bje (?:veux|voudrais|souhaite) (?P<value>(?:apprendre|devenir|déménager|créer|lancer|écrire|perdre|changer)\b[^,.;:!?]{0,70}?){E}",
            ),
            (Goal, "learning", false, "Apprend {}", 0.8, r"\bj'apprends {V}{E}"),
            (Decision, "decision", false, "A décidé de {}", 0.8, r"\b(?:nous avons|on a|j'ai) décidé (?:de |d')?{V}{E}"),
            (Pitfall, "pitfall", false, "{} n'a pas marché", 0.7, r"^(?P<value>[^,.;:!?]{3,60}?) n'a pas (?:marché|fonctionné)\b"),
            (Fact, "allergy", false, "Est allergique à {}", 0.9, r"\bje suis allergique (?:à|au|aux) {V}{E}"),
            (Skill, "skill", false, "Maîtrise {}", 0.75, r"\bje maîtrise {V}{E}"),
            (Environment, "environment", false, "Utilise {}", 0.75, r"\b(?:j'utilise|j’utilise|nous utilisons|on utilise) {V}{E}"),
            (
                Project,
                "project",
                false,
                "Travaille sur {}",
                0.7,
                r"\bje travaille sur (?P<value>(?:un|une|mon|ma|notre) [^,.;:!?]{2,70}?){E}",
            ),
            (Fact, "former_home", false, "Habitait à {}", 0.8, r"\b(?:j'habitais|j’habitais|je vivais) (?:à|a|en|au) {V}{E}"),
            (Fact, "life_event", false, "Est né à {}", 0.85, r"\bje suis née? (?:à|a|en|au) {V}{E}"),
            // Contact details: written only under `--extract-pii keep` (see `is_personal_slot`).
            (
                Identity,
                "email",
                true,
                "E-mail : {}",
                0.9,
                r"\bmon (?:adresse )?(?:e-?mail|courriel|mail) est (?P<value>[\w.+\-]+@[\w\-]+(?:\.[\w\-]+)+)",
            ),
            (
                Identity,
                "phone",
                true,
                "Numéro de téléphone : {}",
                0.9,
                r"\bmon (?:numéro(?: de téléphone| de portable)?|téléphone|portable) est (?:le )?(?P<value>\+?\d[\d \-/().]{5,18}\d)",
            ),
            (Identity, "address", true, "Adresse : {}", 0.9, r"\bmon adresse (?:postale )?est {V}{E}"),
        ],
    )
});

static SPANISH: LazyLock<LanguageRules> = LazyLock::new(|| {
    build(
        "y|pero|porque|pues|ya que",
        &[
            (Identity, "name", true, "Se llama {}", 0.9, r"\b(?:me llamo|mi nombre es) {N}"),
            (Identity, "age", true, "Tiene {} años", 0.85, r"\btengo (?P<value>\d{1,2}) años\b"),
            (Identity, "home", true, "Vive en {}", 0.85, r"\b(?:vivo|resido) (?:ahora |actualmente )?en {V}{E}"),
            (Identity, "home", true, "Vive en {}", 0.8, r"\bme (?:acabo de mudar|mudé) a {V}{E}"),
            (Identity, "origin", true, "Es de {}", 0.8, r"\bsoy (?:de |del ){N}"),
            (Identity, "languages", false, "Habla {}", 0.85, r"(?:^|\byo )hablo {V}{E}"),
            (Identity, "occupation", true, "Trabaja como {}", 0.85, r"(?:^|\byo )trabajo (?:como|de) {V}{E}"),
            (
                Identity,
                "occupation",
                true,
                "Es {}",
                0.8,
                r"\bsoy (?P<value>(?:enfermer[oa]|profesora?|maestr[oa]|médic[oa]|desarrollador(?:a)?|programador(?:a)?|ingenier[oa]|diseñador(?:a)?|abogad[oa]|estudiante|periodista|arquitect[oa]|contador(?:a)?|investigador(?:a)?|jubilad[oa]))\b",
            ),
            (Identity, "employer", true, "Trabaja en {}", 0.8, r"(?:^|\byo )trabajo (?:en|para) {N}"),
            (Identity, "education", false, "Estudia {}", 0.8, r"(?:^|\byo )estudio {V}{E}"),
            (Preference, "diet", true, "Es {}", 0.85, r"\bsoy (?P<value>vegetarian[oa]|vegan[oa])\b"),
            (Preference, "does_not_eat", false, "No come {}", 0.85, r"\bno (?:como|bebo|tomo) {V}{E}"),
            (Preference, "dislikes", false, "No le gusta {}", 0.8, r"\bno me gusta(?:n)? {V}{E}"),
            (Preference, "dislikes", false, "Odia {}", 0.8, r"\bodio {V}{E}"),
            (Preference, "likes", false, "Prefiere {}", 0.8, r"\bprefiero {V}{E}"),
            (Preference, "likes", false, "Le gusta {}", 0.75, r"\bme (?:gusta|gustan|encanta|encantan) {V}{E}"),
            (Preference, "favourite", false, "{rel} favorito: {}", 0.85, r"\bmi (?P<rel>\w+) favorit[oa] es {V}{E}"),
            (Procedure, "instruction", false, "Siempre {}", 0.85, r"^(?:por favor,? )?siempre {V}{E}"),
            (Procedure, "instruction", false, "Nunca {}", 0.85, r"^(?:por favor,? )?nunca {V}{E}"),
            (Procedure, "instruction", false, "De ahora en adelante: {}", 0.85, r"\bde ahora en adelante,? {V}{E}"),
            (Procedure, "instruction", false, "Recuerda: {}", 0.8, r"^recuerda que {V}{E}"),
            (
                Relationship,
                "relation",
                false,
                "{rel}: {}",
                0.85,
                r"\bmi (?P<rel>esposa|esposo|mujer|marido|pareja|novia|novio|hijo|hija|madre|padre|hermano|hermana|perro|gato|gata|jefe|jefa|compañero|compañera)(?: se llama|,)? {N}",
            ),
            (
                Relationship,
                "children",
                false,
                "Tiene {}",
                0.8,
                r"\btengo (?P<value>(?:un|una|dos|tres|cuatro|\d) (?:hij[oa]s?|niños|perros?|gatos?))\b",
            ),
            (Goal, "goal", false, "Planea {}", 0.7, r"\bplaneo {V}{E}"),
            (
                Goal,
                "goal",
                false,
                "Quiere {}",
                0.7,
                r"\bquiero (?P<value>(?:aprender|ser|mudarme|crear|empezar|escribir|perder|cambiar)\b[^,.;:!?]{0,70}?){E}",
            ),
            (Goal, "learning", false, "Aprende {}", 0.8, r"\bestoy aprendiendo {V}{E}"),
            (Decision, "decision", false, "Decidió {}", 0.8, r"\b(?:hemos|he) decidido {V}{E}"),
            (Decision, "decision", false, "Decidió {}", 0.8, r"\bdecidimos {V}{E}"),
            (Pitfall, "pitfall", false, "{} no funcionó", 0.7, r"^(?P<value>[^,.;:!?]{3,60}?) no (?:funcionó|funciona)\b"),
            (Fact, "allergy", false, "Es alérgic@ a {}", 0.9, r"\bsoy alérgic[oa] (?:a|al) {V}{E}"),
            (Skill, "skill", false, "Domina {}", 0.75, r"\bdomino {V}{E}"),
            (Environment, "environment", false, "Usa {}", 0.75, r"(?:^|\byo |\bnosotros )(?:uso|usamos|utilizo|utilizamos) {V}{E}"),
            (
                Project,
                "project",
                false,
                "Trabaja en {}",
                0.7,
                r"\bestoy (?:trabajando en|construyendo|desarrollando) (?P<value>(?:un|una|mi|nuestro|nuestra) [^,.;:!?]{2,70}?){E}",
            ),
            (Fact, "former_home", false, "Vivía en {}", 0.8, r"\b(?:vivía|viví) en {V}{E}"),
            (Fact, "life_event", false, "Nació en {}", 0.85, r"\bnací en {V}{E}"),
            // Contact details: written only under `--extract-pii keep` (see `is_personal_slot`).
            (
                Identity,
                "email",
                true,
                "Correo electrónico: {}",
                0.9,
                r"\bmi (?:correo(?: electrónico)?|e-?mail|email) es (?P<value>[\w.+\-]+@[\w\-]+(?:\.[\w\-]+)+)",
            ),
            (
                Identity,
                "phone",
                true,
                "Teléfono: {}",
                0.9,
                r"\bmi (?:número de teléfono|teléfono|móvil|celular|número) es (?:el )?(?P<value>\+?\d[\d \-/().]{5,18}\d)",
            ),
            (Identity, "address", true, "Dirección: {}", 0.9, r"\bmi dirección (?:postal )?es {V}{E}"),
        ],
    )
});

static CZECH: LazyLock<LanguageRules> = LazyLock::new(|| {
    build(
        "a|ale|protože|takže|když",
        &[
            (Identity, "name", true, "Jmenuje se {}", 0.9, r"\b(?:jmenuji se|jmenuju se|mé jméno je) {N}"),
            (Identity, "age", true, "Je {} let", 0.85, r"\bje mi (?P<value>\d{1,2}) let\b"),
            (Identity, "home", true, "Bydlí v {}", 0.85, r"\b(?:bydlím|žiju|žiji) (?:teď |momentálně )?(?:v|ve) {V}{E}"),
            (Identity, "home", true, "Bydlí v {}", 0.8, r"\bpřestěhoval(?:a)? jsem se do {V}{E}"),
            (Identity, "origin", true, "Pochází z {}", 0.8, r"\bpocházím z {V}{E}"),
            (
                Identity,
                "languages",
                false,
                "Mluví {}",
                0.85,
                r"\bmluvím (?P<value>(?:česky|slovensky|anglicky|německy|francouzsky|španělsky|italsky|polsky|rusky|ukrajinsky|japonsky|čínsky)(?:[ ,]+(?:a )?(?:česky|slovensky|anglicky|německy|francouzsky|španělsky|italsky|polsky|rusky|ukrajinsky|japonsky|čínsky))*)",
            ),
            (Identity, "occupation", true, "Pracuje jako {}", 0.85, r"\bpracuj(?:i|u) jako {V}{E}"),
            (
                Identity,
                "occupation",
                true,
                "Je {}",
                0.8,
                r"\bjsem (?P<value>(?:\w+ )?(?:zdravotní sestra|sestra|učitel(?:ka)?|lékař(?:ka)?|doktor(?:ka)?|vývojář(?:ka)?|programátor(?:ka)?|inženýr(?:ka)?|student(?:ka)?|právník|právnička|novinář(?:ka)?|architekt(?:ka)?|účetní|designér(?:ka)?|důchodce|důchodkyně))\b",
            ),
            (Identity, "employer", true, "Pracuje v {}", 0.8, r"\bpracuj(?:i|u) (?:v|ve|pro) {N}"),
            (Identity, "education", false, "Studuje {}", 0.8, r"\bstuduj(?:i|u) {V}{E}"),
            (Preference, "diet", true, "Je {}", 0.85, r"\bjsem (?P<value>vegetarián(?:ka)?|vegan(?:ka)?)\b"),
            (Preference, "does_not_eat", false, "Nejí {}", 0.85, r"\b(?:nejím|nepiju|nepiji) {V}{E}"),
            (Preference, "dislikes", false, "Nemá rád {}", 0.8, r"\b(?:nemám rád|nemám ráda|nesnáším) {V}{E}"),
            (Preference, "likes", false, "Preferuje {}", 0.8, r"\bpreferuj(?:i|u) {V}{E}"),
            (Preference, "likes", false, "Má rád {}", 0.75, r"\b(?:mám rád|mám ráda|miluji|miluju|zbožňuji) {V}{E}"),
            (Preference, "favourite", false, "Oblíbené {rel}: {}", 0.85, r"\bmoje oblíbené (?P<rel>\w+) je {V}{E}"),
            (Procedure, "instruction", false, "Vždy {}", 0.85, r"^(?:prosím,? )?vždy(?:cky)? {V}{E}"),
            (Procedure, "instruction", false, "Nikdy {}", 0.85, r"^(?:prosím,? )?nikdy {V}{E}"),
            (Procedure, "instruction", false, "Od teď: {}", 0.85, r"\bod teď(?:ka)?,? {V}{E}"),
            (Procedure, "instruction", false, "Zapamatuj si: {}", 0.8, r"^zapamatuj si,? že {V}{E}"),
            (
                Relationship,
                "relation",
                false,
                "{rel}: {}",
                0.85,
                r"\b(?:moje|můj|moji|mé) (?P<rel>žena|manželka|manžel|partner|partnerka|přítelkyně|přítel|syn|dcera|máma|matka|táta|otec|bratr|sestra|pes|kočka|šéf|šéfová|kolega|kolegyně)(?: se jmenuje|,)? {N}",
            ),
            (
                Relationship,
                "children",
                false,
                "Má {}",
                0.8,
                r"\bmám (?P<value>(?:jedno|jednu|jednoho|dvě|dva|tři|čtyři|\d) (?:dítě|děti|syny?|syna|dcery?|dceru|psy?|psa|kočky?|kočku))\b",
            ),
            (Goal, "goal", false, "Plánuje {}", 0.7, r"\bplánuj(?:i|u) {V}{E}"),
            (
                Goal,
                "goal",
                false,
                "Chce {}",
                0.7,
                r"\bchci (?P<value>(?:se naučit|naučit se|být|se přestěhovat|založit|začít|napsat|zhubnout|změnit)\b[^,.;:!?]{0,70}?){E}",
            ),
            (Goal, "learning", false, "Učí se {}", 0.8, r"\bučím se {V}{E}"),
            (Decision, "decision", false, "Rozhodl se {}", 0.8, r"\b(?:rozhodli jsme se|rozhodl jsem se|rozhodla jsem se) {V}{E}"),
            (Pitfall, "pitfall", false, "{} nefungovalo", 0.7, r"^(?P<value>[^,.;:!?]{3,60}?) (?:nefungoval[oa]?|nefunguje)\b"),
            (Fact, "allergy", false, "Je alergický na {}", 0.9, r"\bjsem alergick(?:ý|á) na {V}{E}"),
            (Skill, "skill", false, "Umí {}", 0.75, r"\b(?:umím dobře|ovládám) {V}{E}"),
            (Environment, "environment", false, "Používá {}", 0.75, r"\b(?:používám|používáme) {V}{E}"),
            (
                Project,
                "project",
                false,
                "Pracuje na {}",
                0.7,
                r"\b(?:pracuji|pracuju) na (?P<value>(?:svém|své|našem|naší|jednom|jedné) [^,.;:!?]{2,70}?){E}",
            ),
            (Fact, "former_home", false, "Dříve bydlel v {}", 0.8, r"\b(?:dříve jsem bydlel(?:a)?|bydlel(?:a)? jsem dřív) (?:v|ve) {V}{E}"),
            (Fact, "life_event", false, "Narodil se v {}", 0.85, r"\bnarodil(?:a)? jsem se (?:v|ve) {V}{E}"),
            // Contact details: written only under `--extract-pii keep` (see `is_personal_slot`).
            (Identity, "email", true, "E-mail: {}", 0.9, r"\b(?:můj )?e-?mail je (?P<value>[\w.+\-]+@[\w\-]+(?:\.[\w\-]+)+)"),
            (
                Identity,
                "phone",
                true,
                "Telefon: {}",
                0.9,
                r"\b(?:moje )?(?:telefonní číslo|číslo na mě|telefon) je (?P<value>\+?\d[\d \-/().]{5,18}\d)",
            ),
            (Identity, "address", true, "Adresa: {}", 0.9, r"\bmoje adresa je {V}{E}"),
        ],
    )
});

/// Whether a slot holds a contact detail (e-mail, phone, street address): personal data that
/// is written only when the user asks (`--extract-pii keep`), and marked not exportable.
pub fn is_personal_slot(slot: &str) -> bool {
    matches!(slot, "email" | "phone" | "address")
}

/// The slot called `name` as the rules spell it (a `'static` name) and whether it holds one
/// current value; `None` when no rule fills a slot of that name (a state an older memport
/// wrote). Scans every rule: called for memories a sync reads back, not per sentence.
pub fn slot_named(name: &str) -> Option<(&'static str, bool)> {
    Language::ALL.into_iter().flat_map(of).find(|rule| rule.slot == name).map(|rule| (rule.slot, rule.single_valued))
}

/// The rules of `language`.
pub fn of(language: Language) -> &'static [Rule] {
    &rules_of(language).rules
}

/// The gate in front of every language's rules: one pass over a sentence tells which rules of
/// which language can match it. Rules are numbered one language after the other, in
/// [`Language::ALL`] order; [`gate_range`] gives a language's numbers.
pub fn gate() -> &'static RuleGate {
    &GATE.0
}

/// The gate's numbers of `language`'s rules.
pub fn gate_range(language: Language) -> std::ops::Range<usize> {
    GATE.1[language as usize].clone()
}

static GATE: LazyLock<(RuleGate, [std::ops::Range<usize>; 5])> = LazyLock::new(|| {
    let mut patterns = Vec::new();
    let ranges = Language::ALL.map(|language| {
        let start = patterns.len();
        patterns.extend(rules_of(language).rules.iter().map(|rule| rule.source.clone()));
        start..patterns.len()
    });
    (RuleGate::new(&patterns), ranges)
});

fn rules_of(language: Language) -> &'static LanguageRules {
    match language {
        Language::English => &ENGLISH,
        Language::German => &GERMAN,
        Language::French => &FRENCH,
        Language::Spanish => &SPANISH,
        Language::Czech => &CZECH,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gate_numbers_each_languages_rules_in_order() {
        for (index, language) in Language::ALL.into_iter().enumerate() {
            assert_eq!(language as usize, index, "gate_range indexes by the enum's order");
            assert_eq!(gate_range(language).len(), of(language).len());
        }
    }

    #[test]
    fn every_languages_rules_build_and_cover_the_same_core_slots() {
        for language in Language::ALL {
            let rules = of(language);
            for rule in rules {
                let _ = rule.pattern();
            }
            for slot in [
                "name",
                "age",
                "home",
                "occupation",
                "employer",
                "likes",
                "dislikes",
                "instruction",
                "relation",
                "goal",
                "decision",
                "allergy",
                "former_home",
            ] {
                assert!(rules.iter().any(|rule| rule.slot == slot), "{language:?} has a rule for {slot}");
            }
        }
    }
}
