//! Decides whether a sentence is a statement the user makes about themselves: questions,
//! hypotheticals, role play, requests to write something and what others said are not;
//! hedged statements ("maybe", "I think") are, but weakly.

use super::language::Language;

/// `None` when the sentence is no self-statement; otherwise whether it is hedged.
pub fn assess(sentence: &str, language: Language) -> Option<bool> {
    let lower = format!(" {} ", sentence.to_lowercase().replace('’', "'"));
    let words = Words::of(language);
    let is_question = sentence.trim_end().ends_with('?') || sentence.trim_start().starts_with('¿');
    let starts_with = |list: &[&str]| list.iter().any(|start| lower.trim_start().starts_with(start));
    let contains = |list: &[&str]| list.iter().any(|word| lower.contains(word));
    // "Do not …" and "Don't …" are standing wishes, not questions.
    let is_wish = lower.trim_start().starts_with("do not ") || lower.trim_start().starts_with("don't ");
    if is_question || (!is_wish && starts_with(words.question_starts)) || starts_with(words.writing_requests) {
        return None;
    }
    if contains(words.hypothetical) || contains(words.reported) {
        return None;
    }
    Some(contains(words.hedges))
}

/// The words each filter looks for, per language (with spaces around whole words).
struct Words {
    question_starts: &'static [&'static str],
    writing_requests: &'static [&'static str],
    hypothetical: &'static [&'static str],
    reported: &'static [&'static str],
    hedges: &'static [&'static str],
}

impl Words {
    fn of(language: Language) -> Words {
        match language {
            Language::English => Words {
                question_starts: &[
                    "do ", "does ", "did ", "can ", "could ", "would ", "should ", "what ", "how ", "why ", "where ", "when ", "who ",
                    "which ", "is ", "are ", "will ", "shall ",
                ],
                writing_requests: &[
                    "write ",
                    "draft ",
                    "compose ",
                    "translate ",
                    "rewrite ",
                    "rephrase ",
                    "summarize ",
                    "summarise ",
                    "generate ",
                    "create a ",
                    "make a ",
                    "pretend ",
                    "act as ",
                    "roleplay",
                    "role-play",
                    "imagine ",
                ],
                hypothetical: &[
                    " if i ",
                    " if we ",
                    " if you ",
                    " suppose ",
                    " supposing ",
                    " imagine ",
                    " let's say ",
                    " hypothetically ",
                    " pretend ",
                    " in a story ",
                    " my character ",
                    " the character ",
                    " in the game ",
                    " would be ",
                    " i'd be ",
                    " i wish ",
                ],
                reported: &[
                    " he said ",
                    " she said ",
                    " they said ",
                    " he says ",
                    " she says ",
                    " they say ",
                    " says that ",
                    " said that ",
                    " according to ",
                    " told me that ",
                    " my boss says ",
                ],
                hedges: &[" maybe ", " perhaps ", " probably ", " might ", " i think i ", " not sure ", " i guess ", " possibly "],
            },
            Language::German => Words {
                question_starts: &[
                    "kannst ",
                    "könntest ",
                    "wie ",
                    "was ",
                    "warum ",
                    "wo ",
                    "wann ",
                    "wer ",
                    "welche",
                    "ist ",
                    "sind ",
                    "gibt es ",
                ],
                writing_requests: &["schreib", "formulier", "übersetz", "fasse ", "erstelle ", "stell dir vor", "tu so"],
                hypothetical: &[
                    " wenn ich ",
                    " falls ich ",
                    " angenommen ",
                    " stell dir vor ",
                    " würde ",
                    " hätte ",
                    " wäre ",
                    " in der geschichte ",
                ],
                reported: &[" er sagt ", " sie sagt ", " sagt, dass ", " sagte, dass ", " laut ", " meint, dass "],
                hedges: &[" vielleicht ", " wahrscheinlich ", " eventuell ", " ich glaube ", " bin mir nicht sicher "],
            },
            Language::French => Words {
                question_starts: &[
                    "est-ce ",
                    "comment ",
                    "pourquoi ",
                    "où ",
                    "quand ",
                    "qui ",
                    "quel",
                    "peux-tu ",
                    "pourrais-tu ",
                    "combien ",
                ],
                writing_requests: &["écris", "rédige", "traduis", "résume", "reformule", "imagine", "fais comme si"],
                hypothetical: &[" si je ", " si j'", " imaginons ", " supposons ", " je serais ", " j'aimerais être ", " dans l'histoire "],
                reported: &[" il dit ", " elle dit ", " dit que ", " a dit que ", " selon ", " d'après "],
                hedges: &[" peut-être ", " probablement ", " je pense ", " je crois ", " pas sûr "],
            },
            Language::Spanish => Words {
                question_starts: &["cómo ", "qué ", "por qué ", "dónde ", "cuándo ", "quién ", "cuál ", "puedes ", "podrías ", "cuánto"],
                writing_requests: &["escribe", "redacta", "traduce", "resume", "reformula", "imagina", "haz como si"],
                hypothetical: &[" si yo ", " si fuera ", " si tuviera ", " imagina ", " supongamos ", " sería ", " en la historia "],
                reported: &[" dice que ", " dijo que ", " según ", " me dijo que "],
                hedges: &[" quizás ", " quizá ", " tal vez ", " probablemente ", " creo que ", " no estoy segur"],
            },
            Language::Czech => Words {
                question_starts: &["jak ", "co ", "proč ", "kde ", "kdy ", "kdo ", "který ", "která ", "můžeš ", "mohl bys ", "mohla bys "],
                writing_requests: &["napiš", "přelož", "shrň", "přeformuluj", "představ si", "předstírej"],
                hypothetical: &[
                    " kdyby ",
                    " kdybych ",
                    " pokud bych ",
                    " představ si ",
                    " dejme tomu ",
                    " byl bych ",
                    " byla bych ",
                    " v příběhu ",
                ],
                reported: &[" říká, že ", " řekl, že ", " řekla, že ", " podle "],
                hedges: &[" možná ", " asi ", " pravděpodobně ", " myslím, že ", " nevím jestli "],
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn questions_hypotheticals_requests_and_reported_speech_are_not_self_statements() {
        for sentence in [
            "Do I need a visa to live in Berlin?",
            "If I lived in Paris I would walk more.",
            "Write a story where I am a pirate.",
            "My friend says that I am a great cook.",
        ] {
            assert_eq!(assess(sentence, Language::English), None, "{sentence}");
        }
        assert_eq!(assess("Wenn ich in Berlin wohnen würde, wäre alles anders.", Language::German), None);
        assert_eq!(assess("¿Dónde vivo yo?", Language::Spanish), None);
    }

    #[test]
    fn plain_and_hedged_statements_pass_with_their_hedge() {
        assert_eq!(assess("I live in Leeds.", Language::English), Some(false));
        assert_eq!(assess("Maybe I'll move to Berlin next year.", Language::English), Some(true));
        assert_eq!(assess("Vielleicht ziehe ich nach Berlin.", Language::German), Some(true));
    }
}
