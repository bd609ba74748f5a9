//! Verbs: the classes of the few verbs whose meaning decides a memory's type (be, have, like,
//! live, work, plan, decide, use, …, and the conversational ones that say nothing about the
//! person: think, see, agree), and each language's rules that turn a first-person verb into a
//! third-person one ("wohne" → "wohnt", "vivo" → "vive", "bydlím" → "bydlí"). Every other
//! verb is an open word: it is kept as said, in the third person.

use std::sync::LazyLock;

use rustc_hash::FxHashMap;

use crate::stages::extract::language::Language;

/// What a verb says about the clause it heads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VerbClass {
    /// be: the complement says what the user is.
    Be,
    /// have: what the user has (family, pets, things, conditions).
    Have,
    /// like, love, enjoy.
    Like,
    /// hate, dislike.
    Dislike,
    /// prefer.
    Prefer,
    /// live, reside.
    Live,
    /// move, relocate.
    Move,
    /// grow up, be born.
    Origin,
    /// work.
    Work,
    /// study, major.
    Study,
    /// teach.
    Teach,
    /// speak (a language).
    Speak,
    /// want, plan, hope, intend: a goal.
    Plan,
    /// decide, choose.
    Decide,
    /// use, run (tools, devices).
    Use,
    /// learn.
    Learn,
    /// be called ("je m'appelle", "me llamo", "ich heiße").
    Called,
    /// eat, drink: diet.
    Eat,
    /// think, see, agree, understand, wonder, hope that…: conversation, not a fact.
    Conversational,
    /// need, ask, try, look for, help: the task at hand, not a fact.
    Task,
}

/// The class of `word` (lowercase) in `language`, if it is one of the verbs that decide a type.
pub fn class_of(language: Language, word: &str) -> Option<VerbClass> {
    CLASSES[language as usize].get(word).copied()
}

/// Each language's verb forms and their classes, in the order of [`Language::ALL`], looked up
/// at once: the readers ask for the class of nearly every word of a clause. A form listed in two
/// classes has the first.
static CLASSES: LazyLock<[FxHashMap<&'static str, VerbClass>; 5]> = LazyLock::new(|| {
    Language::ALL.map(|language| {
        let table: &[(&[&str], VerbClass)] = match language {
            Language::English => ENGLISH,
            Language::German => GERMAN,
            Language::French => FRENCH,
            Language::Spanish => SPANISH,
            Language::Czech => CZECH,
        };
        let mut classes = FxHashMap::default();
        for (forms, class) in table {
            for form in *forms {
                classes.entry(*form).or_insert(*class);
            }
        }
        classes
    })
});

use VerbClass::*;

const ENGLISH: &[(&[&str], VerbClass)] = &[
    (&["am", "was", "are", "were", "is", "be", "been"], Be),
    (&["have", "has", "had", "got"], Have),
    (&["like", "liked", "love", "loved", "enjoy", "enjoyed", "adore", "adored", "dig", "fancy"], Like),
    (&["hate", "hated", "dislike", "disliked", "detest", "loathe"], Dislike),
    (&["prefer", "preferred"], Prefer),
    (&["live", "lived", "reside", "resided", "stay"], Live),
    (&["moved", "move", "relocated", "relocate", "emigrated"], Move),
    (&["grew", "born"], Origin),
    (&["work", "worked"], Work),
    (&["study", "studied", "major", "majored", "graduated", "graduate"], Study),
    (&["teach", "taught"], Teach),
    (&["speak", "spoke"], Speak),
    (&["want", "wanted", "plan", "planned", "hope", "intend", "aim", "dream", "aspire", "wish", "considering"], Plan),
    (&["decide", "decided", "chose", "choose", "opted", "settled"], Decide),
    (&["use", "used", "run", "ran"], Use),
    (&["learn", "learned", "learnt"], Learn),
    (&["eat", "ate", "drink", "drank"], Eat),
    (
        &[
            "think",
            "thought",
            "believe",
            "guess",
            "suppose",
            "know",
            "knew",
            "understand",
            "understood",
            "see",
            "saw",
            "agree",
            "disagree",
            "mean",
            "meant",
            "wonder",
            "wondered",
            "feel",
            "felt",
            "bet",
            "doubt",
            "appreciate",
            "apologize",
            "apologise",
            "promise",
            "assume",
            "get",
            "noticed",
            "notice",
            "realize",
            "realise",
            "realized",
            "heard",
            "hear",
            "imagine",
            "thank",
            "recommend",
            "suggest",
            "said",
            "say",
            "told",
            "tell",
            "asked",
            "mentioned",
            "mention",
            "figured",
            "reckon",
            "care",
            "admit",
            "trust",
            "recall",
            "expect",
            "remember",
            "forgot",
            "forget",
            "read",
            "found",
            "find",
            "hate",
            "bet",
            "owe",
            "gotta",
            "wish",
            "got",
        ],
        Conversational,
    ),
    (
        &[
            "need", "needed", "ask", "try", "tried", "trying", "looking", "look", "help", "want", "wanted", "would", "could", "should",
            "must", "might", "may", "write", "wrote", "give", "send", "make", "create", "fix", "show", "explain", "check", "let",
        ],
        Task,
    ),
];

const GERMAN: &[(&[&str], VerbClass)] = &[
    (&["bin", "war", "bleibe"], Be),
    (&["habe", "hab", "hatte", "besitze"], Have),
    (&["mag", "liebe", "genieße", "mochte", "liebte"], Like),
    (&["hasse", "hasste", "verabscheue"], Dislike),
    (&["bevorzuge", "ziehe"], Prefer),
    (&["wohne", "lebe", "wohnte", "lebte"], Live),
    (&["ziehe", "zog"], Move),
    (&["komme", "stamme"], Origin),
    (&["arbeite", "arbeitete", "jobbe"], Work),
    (&["studiere", "studierte"], Study),
    (&["unterrichte", "lehre"], Teach),
    (&["spreche"], Speak),
    (&["will", "möchte", "plane", "hoffe", "vorhabe", "träume", "wollte"], Plan),
    (&["entschied", "entscheide", "beschloss"], Decide),
    (&["nutze", "benutze", "verwende"], Use),
    (&["lerne"], Learn),
    (&["heiße"], Called),
    (&["esse", "trinke", "aß", "trank"], Eat),
    (
        &[
            "denke", "glaube", "weiß", "verstehe", "sehe", "meine", "finde", "frage", "wundere", "danke", "stimme", "vermute", "erinnere",
            "hoffe",
        ],
        Conversational,
    ),
    (&["brauche", "suche", "versuche", "bräuchte", "würde", "könnte", "sollte", "muss"], Task),
];

const FRENCH: &[(&[&str], VerbClass)] = &[
    (&["suis", "étais"], Be),
    (&["ai", "avais"], Have),
    (&["aime", "adore", "apprécie", "aimais", "adorais", "kiffe", "supporte"], Like),
    (&["déteste", "hais", "détestais"], Dislike),
    (&["préfère"], Prefer),
    (&["habite", "vis", "habitais", "vivais", "réside"], Live),
    (&["déménage", "installe"], Move),
    (&["viens", "suis né", "née"], Origin),
    (&["travaille", "travaillais", "bosse"], Work),
    (&["étudie", "étudiais"], Study),
    (&["enseigne"], Teach),
    (&["parle"], Speak),
    (&["veux", "voudrais", "compte", "prévois", "espère", "rêve", "aimerais", "souhaite"], Plan),
    (&["décidé", "décide"], Decide),
    (&["utilise", "sers"], Use),
    (&["apprends"], Learn),
    (&["appelle"], Called),
    (&["mange", "bois", "mangeais"], Eat),
    (&["pense", "crois", "sais", "comprends", "vois", "trouve", "demande", "remercie", "imagine", "suppose"], Conversational),
    (&["besoin", "cherche", "essaie", "essaye", "dois", "pourrais", "devrais"], Task),
];

const SPANISH: &[(&[&str], VerbClass)] = &[
    (&["soy", "estoy", "era", "estaba", "fui"], Be),
    (&["tengo", "tenía", "tuve"], Have),
    (&["gusta", "gustan", "encanta", "encantan", "disfruto", "amo", "adoro", "gustaba", "encantaba", "soporto", "aguanto"], Like),
    (&["odio", "detesto"], Dislike),
    (&["prefiero"], Prefer),
    (&["vivo", "viví", "vivía", "resido"], Live),
    (&["mudé", "mudo", "trasladé"], Move),
    (&["nací", "crecí", "vengo"], Origin),
    (&["trabajo", "trabajé", "trabajaba", "curro"], Work),
    (&["estudio", "estudié", "estudiaba"], Study),
    (&["enseño", "doy"], Teach),
    (&["hablo"], Speak),
    (&["quiero", "planeo", "pienso", "espero", "sueño", "quisiera", "voy"], Plan),
    (&["decidí", "elegí"], Decide),
    (&["uso", "utilizo"], Use),
    (&["aprendo", "aprendiendo"], Learn),
    (&["llamo"], Called),
    (&["como", "bebo", "tomo"], Eat),
    (&["creo", "sé", "entiendo", "veo", "imagino", "supongo", "agradezco", "pregunto", "recuerdo", "opino"], Conversational),
    (&["necesito", "busco", "intento", "debo", "podría", "quería", "necesitaría"], Task),
];

const CZECH: &[(&[&str], VerbClass)] = &[
    (&["jsem", "byl", "byla"], Be),
    (&["mám", "měl", "měla"], Have),
    (&["miluju", "miluji", "zbožňuju", "zbožňuji", "baví"], Like),
    (&["nesnáším", "nenávidím"], Dislike),
    (&["preferuji", "preferuju", "upřednostňuji"], Prefer),
    (&["bydlím", "žiju", "žiji", "bydlel", "bydlela", "žil", "žila"], Live),
    (&["přestěhoval", "přestěhovala", "stěhuji", "stěhuju"], Move),
    (&["pocházím", "narodil", "narodila", "vyrostl", "vyrostla"], Origin),
    (&["pracuji", "pracuju", "pracoval", "pracovala", "dělám"], Work),
    (&["studuji", "studuju", "studoval", "studovala"], Study),
    (&["učím"], Teach),
    (&["mluvím"], Speak),
    (&["chci", "plánuji", "plánuju", "doufám", "chystám", "chtěl", "chtěla"], Plan),
    (&["rozhodl", "rozhodla"], Decide),
    (&["používám", "používáme"], Use),
    (&["jmenuji", "jmenuju"], Called),
    (&["jím", "piju", "piji"], Eat),
    (&["myslím", "vím", "chápu", "rozumím", "vidím", "souhlasím", "děkuji", "děkuju", "zajímá", "ptám"], Conversational),
    (&["potřebuji", "potřebuju", "hledám", "zkouším", "snažím", "musím", "mohl", "mohla"], Task),
];

/// An English verb's third-person singular form ("live" → "lives", "go" → "goes", "try" →
/// "tries"); a past form stays as it is.
pub fn english_third_person(verb: &str) -> Option<String> {
    let irregular = match verb {
        "am" | "are" | "be" => Some("is"),
        "have" => Some("has"),
        "do" => Some("does"),
        "go" => Some("goes"),
        "was" | "were" => Some("was"),
        "can" | "could" | "will" | "would" | "shall" | "should" | "may" | "might" | "must" | "did" | "had" | "used" => Some(verb),
        _ => None,
    };
    if let Some(form) = irregular {
        return Some(form.to_owned());
    }
    let participle = matches!(
        verb,
        "done"
            | "gone"
            | "been"
            | "seen"
            | "taken"
            | "given"
            | "written"
            | "known"
            | "grown"
            | "begun"
            | "eaten"
            | "driven"
            | "spoken"
            | "chosen"
            | "broken"
            | "forgotten"
            | "gotten"
    );
    if participle || is_english_past(verb) || !verb.chars().all(|c| c.is_alphabetic() || c == '-') {
        return Some(verb.to_owned());
    }
    let consonant_y = verb.len() > 2 && verb.ends_with('y') && !verb[..verb.len() - 1].ends_with(['a', 'e', 'i', 'o', 'u']);
    Some(if consonant_y {
        format!("{}ies", &verb[..verb.len() - 1])
    } else if verb.ends_with("ss")
        || verb.ends_with("sh")
        || verb.ends_with("ch")
        || verb.ends_with('x')
        || verb.ends_with('z')
        || verb.ends_with('o')
    {
        format!("{verb}es")
    } else if verb.ends_with('s') && !verb.ends_with("ss") {
        verb.to_owned()
    } else {
        format!("{verb}s")
    })
}

/// Whether an English verb form is a past form (regular "-ed" or one of the common irregular
/// ones).
pub fn is_english_past(verb: &str) -> bool {
    (verb.len() > 3 && verb.ends_with("ed") && !matches!(verb, "need" | "feed" | "bleed" | "seed" | "breed" | "speed"))
        || ENGLISH_IRREGULAR_PAST.contains(&verb)
}

const ENGLISH_IRREGULAR_PAST: &[&str] = &[
    "went",
    "ran",
    "got",
    "had",
    "was",
    "were",
    "made",
    "took",
    "came",
    "saw",
    "bought",
    "began",
    "became",
    "broke",
    "brought",
    "built",
    "caught",
    "chose",
    "did",
    "drove",
    "ate",
    "fell",
    "felt",
    "found",
    "flew",
    "forgot",
    "gave",
    "grew",
    "heard",
    "held",
    "kept",
    "knew",
    "left",
    "lost",
    "met",
    "paid",
    "rode",
    "rose",
    "said",
    "sold",
    "sent",
    "sang",
    "sat",
    "slept",
    "spent",
    "spoke",
    "stood",
    "swam",
    "taught",
    "told",
    "thought",
    "threw",
    "understood",
    "woke",
    "won",
    "wrote",
    "drank",
    "fought",
    "hung",
    "led",
    "lent",
    "lit",
    "meant",
    "quit",
    "set",
    "shot",
    "shut",
    "sold",
    "stole",
    "struck",
    "swore",
    "tore",
    "wore",
    "learnt",
    "burnt",
    "dreamt",
    "born",
];

/// A German first-person verb's third-person form ("wohne" → "wohnt", "arbeite" →
/// "arbeitet", "bin" → "ist", "esse" → "isst", "fange" → "fängt", "verlasse" → "verlässt").
pub fn german_third_person(verb: &str) -> Option<String> {
    if let Some(irregular) = german_strong_third_person(verb) {
        return Some(irregular);
    }
    let irregular = match verb {
        "bin" => "ist",
        "habe" | "hab" => "hat",
        "war" => "war",
        "hatte" => "hatte",
        "mag" | "kann" | "will" | "muss" | "darf" | "soll" | "weiß" | "möchte" | "mochte" | "wollte" | "konnte" | "musste" => verb,
        "werde" => "wird",
        "weiss" => "weiss",
        "heiße" => "heißt",
        _ => "",
    };
    if !irregular.is_empty() {
        return Some(irregular.to_owned());
    }
    if let Some(stem) = verb.strip_suffix('e') {
        if stem.len() < 2 {
            return None;
        }
        let joint = stem.ends_with('t') || stem.ends_with('d') || stem.ends_with("chn") || stem.ends_with("ffn");
        return Some(if joint { format!("{stem}et") } else { format!("{stem}t") });
    }
    // Past forms of weak verbs ("wohnte") are the same in the third person.
    verb.ends_with("te").then(|| verb.to_owned())
}

/// The third person of a German strong verb whose vowel changes there ("fange" → "fängt",
/// "wasche" → "wäscht", "werfe" → "wirft"), also after an inseparable prefix ("verlasse" →
/// "verlässt", "empfange" → "empfängt", "erfahre" → "erfährt"). The separable prefix stands
/// apart in a main clause ("ich fange … an"), so the verb is found without it.
fn german_strong_third_person(verb: &str) -> Option<String> {
    const STRONG: &[(&str, &str)] = &[
        ("fange", "fängt"),
        ("wasche", "wäscht"),
        ("lasse", "lässt"),
        ("backe", "bäckt"),
        ("falle", "fällt"),
        ("wachse", "wächst"),
        ("grabe", "gräbt"),
        ("lade", "lädt"),
        ("rate", "rät"),
        ("brate", "brät"),
        ("stoße", "stößt"),
        ("werfe", "wirft"),
        ("sterbe", "stirbt"),
        ("breche", "bricht"),
        ("empfehle", "empfiehlt"),
        ("stehle", "stiehlt"),
        ("messe", "misst"),
        ("trete", "tritt"),
        ("gelte", "gilt"),
        ("fahre", "fährt"),
        ("laufe", "läuft"),
        ("schlafe", "schläft"),
        ("trage", "trägt"),
        ("halte", "hält"),
        ("gebe", "gibt"),
        ("nehme", "nimmt"),
        ("treffe", "trifft"),
        ("helfe", "hilft"),
        ("spreche", "spricht"),
        ("lese", "liest"),
        ("sehe", "sieht"),
        ("esse", "isst"),
        ("vergesse", "vergisst"),
    ];
    const PREFIXES: &[&str] = &["", "be", "emp", "ent", "er", "ge", "miss", "ver", "zer", "unter", "über", "hinter", "wider"];
    STRONG.iter().find_map(|(first, third)| {
        let prefix = verb.strip_suffix(first)?;
        // "empfange" is "emp" + "fange"; "empfehle" is a strong verb of its own.
        PREFIXES.contains(&prefix).then(|| format!("{prefix}{third}"))
    })
}

/// A French first-person verb's third-person form ("habite" → "habite", "vis" → "vit",
/// "suis" → "est", "ai" → "a", "prends" → "prend").
pub fn french_third_person(verb: &str) -> Option<String> {
    let irregular = match verb {
        "suis" => "est",
        "ai" => "a",
        "vais" => "va",
        "peux" => "peut",
        "veux" => "veut",
        "étais" => "était",
        "avais" => "avait",
        "fais" => "fait",
        "dois" => "doit",
        "sais" => "sait",
        "crois" => "croit",
        "bois" => "boit",
        "vois" => "voit",
        "connais" => "connaît",
        "voudrais" => "voudrait",
        "aimerais" => "aimerait",
        _ => "",
    };
    if !irregular.is_empty() {
        return Some(irregular.to_owned());
    }
    if let Some(stem) = verb.strip_suffix("ais") {
        return Some(format!("{stem}ait"));
    }
    if let Some(stem) = verb.strip_suffix("ds") {
        return Some(format!("{stem}d"));
    }
    if let Some(stem) = verb.strip_suffix('s') {
        return Some(format!("{stem}t"));
    }
    verb.ends_with('e').then(|| verb.to_owned())
}

/// Spanish first-person forms that are not regular "-o" verbs.
const SPANISH_IRREGULAR: &[(&str, &str)] = &[
    ("soy", "es"),
    ("estoy", "está"),
    ("voy", "va"),
    ("doy", "da"),
    ("he", "ha"),
    ("sé", "sabe"),
    ("fui", "fue"),
    ("tuve", "tuvo"),
    ("estuve", "estuvo"),
    ("hice", "hizo"),
    ("pude", "pudo"),
    ("quise", "quiso"),
    ("vine", "vino"),
    ("dije", "dijo"),
    ("tengo", "tiene"),
    ("vengo", "viene"),
    ("hago", "hace"),
    ("digo", "dice"),
    ("pongo", "pone"),
    ("salgo", "sale"),
    ("quiero", "quiere"),
    ("prefiero", "prefiere"),
    ("pienso", "piensa"),
    ("puedo", "puede"),
    ("juego", "juega"),
    ("duermo", "duerme"),
    ("vuelvo", "vuelve"),
    ("entiendo", "entiende"),
    ("empiezo", "empieza"),
    ("conozco", "conoce"),
    ("nací", "nació"),
    ("crecí", "creció"),
    ("mudé", "mudó"),
    ("llamo", "llama"),
    ("era", "era"),
    ("estaba", "estaba"),
    ("tenía", "tenía"),
    ("gusta", "gusta"),
    ("gustan", "gustan"),
    ("encanta", "encanta"),
    ("encantan", "encantan"),
    ("sueño", "sueña"),
    ("quisiera", "quisiera"),
];

/// Spanish "-er"/"-ir" verbs common in self-statements (their third person ends in "-e"; every
/// other regular "-o" verb is taken for an "-ar" verb, whose third person ends in "-a").
const SPANISH_ER_IR_STEMS: &[&str] = &[
    "viv", "com", "beb", "escrib", "le", "corr", "aprend", "comprend", "vend", "sub", "sufr", "recib", "asist", "compart", "decid", "cre",
    "deb", "resid", "cos", "vend", "cog", "romp", "barr", "abr", "describ", "depend", "prend", "teng", "pertenec", "parec", "conozc",
    "ofrezc",
];

/// A Spanish first-person verb's third-person form ("vivo" → "vive", "trabajo" → "trabaja",
/// "soy" → "es", "trabajé" → "trabajó").
pub fn spanish_third_person(verb: &str) -> Option<String> {
    if let Some((_, third)) = SPANISH_IRREGULAR.iter().find(|(first, _)| *first == verb) {
        return Some((*third).to_owned());
    }
    if verb.ends_with("aba") || verb.ends_with("ía") {
        return Some(verb.to_owned());
    }
    if let Some(stem) = verb.strip_suffix('é') {
        // The spelling keeps the stem's sound before "é" and takes it back before "ó":
        // "busqué" → buscó, "llegué" → llegó, "averigüé" → averiguó, "empecé" → empezó.
        let stem = if let Some(root) = stem.strip_suffix("qu") {
            format!("{root}c")
        } else if let Some(root) = stem.strip_suffix("gü") {
            format!("{root}gu")
        } else if let Some(root) = stem.strip_suffix("gu") {
            format!("{root}g")
        } else if let Some(root) = stem.strip_suffix('c') {
            format!("{root}z")
        } else {
            stem.to_owned()
        };
        return Some(format!("{stem}ó"));
    }
    if let Some(stem) = verb.strip_suffix('í')
        && stem.len() >= 2
    {
        return Some(format!("{stem}ió"));
    }
    let stem = verb.strip_suffix('o')?;
    if stem.len() < 2 {
        return None;
    }
    Some(if SPANISH_ER_IR_STEMS.contains(&stem) { format!("{stem}e") } else { format!("{stem}a") })
}

/// Whether a Spanish word is a first-person singular verb form that opens a clause without
/// its subject ("Vivo en…", "Trabajo como…", "Soy…", "Me encanta…" is read by its pronoun).
pub fn spanish_first_person(word: &str) -> bool {
    if SPANISH_IRREGULAR.iter().any(|(first, _)| *first == word) && !matches!(word, "gusta" | "gustan" | "encanta" | "encantan" | "era") {
        return true;
    }
    class_of(Language::Spanish, word).is_some_and(|class| class != Eat || word != "como")
        && word.chars().last().is_some_and(|c| matches!(c, 'o' | 'é' | 'í'))
}

/// Whether `word` has the ending of a regular Spanish first-person preterite ("dejé",
/// "terminé", "perdí", "conocí"), and is none of the nouns and adverbs that end the same way.
pub fn is_spanish_preterite(word: &str) -> bool {
    word.chars().count() >= 4
        && (word.ends_with('é') || word.ends_with('í'))
        && !matches!(
            word,
            "café"
                | "bebé"
                | "puré"
                | "comité"
                | "josé"
                | "canapé"
                | "chalé"
                | "carné"
                | "bufé"
                | "consomé"
                | "cliché"
                | "aquí"
                | "allí"
                | "así"
                | "rubí"
                | "esquí"
                | "maniquí"
                | "colibrí"
                | "jabalí"
                | "iraní"
                | "marroquí"
                | "israelí"
                | "saudí"
                | "paquistaní"
                | "bengalí"
                | "porqué"
                | "según"
        )
}

/// A Czech first-person verb's third-person form ("bydlím" → "bydlí", "pracuji" → "pracuje",
/// "jsem" → "je", "mám" → "má", "jdu" → "jde").
pub fn czech_third_person(verb: &str) -> Option<String> {
    let irregular = match verb {
        "jsem" => "je",
        "jdu" => "jde",
        "chci" => "chce",
        "můžu" | "mohu" => "může",
        "budu" => "bude",
        "vím" => "ví",
        "jím" => "jí",
        _ => "",
    };
    if !irregular.is_empty() {
        return Some(irregular.to_owned());
    }
    if let Some(stem) = verb.strip_suffix("ím") {
        return Some(format!("{stem}í"));
    }
    if let Some(stem) = verb.strip_suffix("ám") {
        return Some(format!("{stem}á"));
    }
    if let Some(stem) = verb.strip_suffix("ju").or_else(|| verb.strip_suffix("ji")) {
        return Some(format!("{stem}je"));
    }
    // Past participles ("pracoval", "bydlela") stay: the auxiliary "jsem" is dropped.
    if verb.ends_with('l') || verb.ends_with("la") {
        return Some(verb.to_owned());
    }
    if let Some(stem) = verb.strip_suffix('u') {
        return Some(format!("{stem}e"));
    }
    None
}

/// Whether a Czech word is a first-person singular verb form ("bydlím", "pracuji", "mám",
/// "jsem"): Czech drops the subject.
pub fn czech_first_person(word: &str) -> bool {
    czech_known_first_person(word) || {
        let negated = word.strip_prefix("ne").unwrap_or(word);
        negated.chars().count() >= 4
            && (negated.ends_with("ím") || negated.ends_with("ám") || negated.ends_with("ji") || negated.ends_with("ju"))
    }
}

/// Whether a Czech word is a first-person singular form of a verb the lexicon knows, or its
/// negation ("mám", "jsem", "nepiju"), not one told by its ending alone: an ending such as
/// "-ji" is also the end of words of other languages ("emoji").
pub fn czech_known_first_person(word: &str) -> bool {
    let known =
        |form: &str| class_of(Language::Czech, form).is_some_and(|_| !form.ends_with('l') && !form.ends_with("la")) || form == "jsem";
    known(word) || word.strip_prefix("ne").is_some_and(known)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_person_verbs_become_third_person_in_every_language() {
        for (verb, third) in [("live", "lives"), ("go", "goes"), ("try", "tries"), ("watch", "watches"), ("play", "plays"), ("ran", "ran")]
        {
            assert_eq!(english_third_person(verb).as_deref(), Some(third), "{verb}");
        }
        for (verb, third) in [("wohne", "wohnt"), ("arbeite", "arbeitet"), ("bin", "ist"), ("esse", "isst"), ("tanze", "tanzt")] {
            assert_eq!(german_third_person(verb).as_deref(), Some(third), "{verb}");
        }
        // Strong verbs change their vowel, also after an inseparable prefix.
        for (verb, third) in [
            ("fange", "fängt"),
            ("wasche", "wäscht"),
            ("verlasse", "verlässt"),
            ("empfange", "empfängt"),
            ("erfahre", "erfährt"),
            ("unterhalte", "unterhält"),
            ("vergesse", "vergisst"),
            ("empfehle", "empfiehlt"),
        ] {
            assert_eq!(german_third_person(verb).as_deref(), Some(third), "{verb}");
        }
        // A weak verb ending as a strong one does is not taken for it.
        assert_eq!(german_third_person("fasse").as_deref(), Some("fasst"));
        for (verb, third) in [("habite", "habite"), ("vis", "vit"), ("suis", "est"), ("prends", "prend"), ("ai", "a")] {
            assert_eq!(french_third_person(verb).as_deref(), Some(third), "{verb}");
        }
        for (verb, third) in [("vivo", "vive"), ("trabajo", "trabaja"), ("soy", "es"), ("trabajé", "trabajó"), ("viví", "vivió")] {
            assert_eq!(spanish_third_person(verb).as_deref(), Some(third), "{verb}");
        }
        for (verb, third) in [("bydlím", "bydlí"), ("pracuji", "pracuje"), ("jsem", "je"), ("mám", "má"), ("hraju", "hraje")] {
            assert_eq!(czech_third_person(verb).as_deref(), Some(third), "{verb}");
        }
    }

    #[test]
    fn pro_drop_languages_know_a_first_person_verb() {
        assert!(spanish_first_person("trabajo"));
        assert!(spanish_first_person("soy"));
        assert!(!spanish_first_person("casa"));
        assert!(czech_first_person("bydlím"));
        assert!(czech_first_person("nesnáším"));
        assert!(!czech_first_person("dům"));
    }
}
