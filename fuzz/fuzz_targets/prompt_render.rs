//! Prompt rendering with untrusted text in every variable an agent fills (the question, history
//! turns and answers, a mention, graph labels, relation paths, the validator's feedback), on each
//! built-in template: `PromptLibrary::builtin().render(name, context)`.
//!
//! Input: up to nine pieces separated by `0xFF` (UTF-8, lossily): eight texts and the feedback.
//! Must hold (as in the property test `no_text_changes_the_roles`): rendering succeeds; the roles
//! of the messages are those of the same template with neutral text; the question appears in the
//! last message as printed; no message contains the role-marker sentinel.
#![no_main]
use chatty_kg_llm::Role;
use chatty_kg_llm::prompts::{BUILTIN, PromptLibrary, SENTINEL};
use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};
use std::sync::OnceLock;

/// Each built-in template with the variables its agent gives it (as in the prompts tests).
fn contexts(t: &[String; 8], feedback: Option<&str>) -> Vec<(&'static str, Value)> {
    let history = json!([{"question": t[1], "answers": [t[2], t[3]]}, {"question": "Who?", "answers": []}]);
    let contexts = vec![
        (
            "rephraser",
            json!({"history": history, "question": t[0], "expression": t[4], "replaces": false,
                   "candidates": [t[5], t[6]], "feedback": feedback}),
        ),
        ("qir", json!({"question": t[0], "feedback": feedback})),
        (
            "matching",
            json!({"question": t[0], "mention": t[4], "candidates": [t[5], t[6], "Alien"], "feedback": feedback}),
        ),
        (
            "path_search",
            json!({"question": t[0], "paths": [t[7], t[5], "Alien → directed by"], "feedback": feedback}),
        ),
        ("chat_verbalize", json!({"question": t[0], "answers": [t[2], t[3], t[6]], "kind": "list"})),
        ("chat_translate", json!({"question": t[0], "feedback": feedback})),
    ];
    assert_eq!(contexts.len(), BUILTIN.len(), "a built-in template without a context here");
    contexts
}

/// How text from a value appears in a message: lines joined with \n, the sentinel replaced, and
/// what the message's trimming may cut.
fn as_printed(value: &str) -> String {
    value
        .replace(SENTINEL, "\u{FFFD}")
        .lines()
        .collect::<Vec<_>>()
        .join("\n")
        .trim()
        .to_owned()
}

struct Fixed {
    prompts: PromptLibrary,
    plain: Vec<Vec<Role>>,
}

fn fixed() -> &'static Fixed {
    static FIXED: OnceLock<Fixed> = OnceLock::new();
    FIXED.get_or_init(|| {
        let prompts = PromptLibrary::builtin().unwrap_or_else(|e| panic!("{e}"));
        let neutral: [String; 8] = std::array::from_fn(|i| format!("text {i}"));
        let plain = contexts(&neutral, None)
            .into_iter()
            .map(|(name, context)| {
                let messages = prompts.render(name, context).unwrap_or_else(|e| panic!("{name}: {e}"));
                messages.iter().map(|m| m.role).collect()
            })
            .collect();
        Fixed { prompts, plain }
    })
}

fuzz_target!(|data: &[u8]| {
    let fixed = fixed();
    let mut pieces = data.split(|&b| b == 0xFF).map(|p| String::from_utf8_lossy(p).into_owned());
    let texts: [String; 8] = std::array::from_fn(|_| pieces.next().unwrap_or_default());
    let feedback = pieces.next();
    let question = as_printed(&texts[0]);
    for ((name, context), plain) in contexts(&texts, feedback.as_deref()).into_iter().zip(&fixed.plain) {
        let messages = fixed
            .prompts
            .render(name, &context)
            .unwrap_or_else(|e| panic!("{name}: {e} with {context}"));
        let roles: Vec<Role> = messages.iter().map(|m| m.role).collect();
        assert_eq!(&roles, plain, "{name}: the text changed the roles: {context}");
        let last = &messages.last().unwrap_or_else(|| panic!("{name}: no message")).content;
        assert!(last.contains(&question), "{name}: {question:?} not in {last:?}");
        assert!(
            !messages.iter().any(|m| m.content.contains(SENTINEL)),
            "{name}: a sentinel in a message"
        );
    }
});
