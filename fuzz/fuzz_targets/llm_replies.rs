//! A model's reply through each agent's parse-and-validate step, the very functions the agents
//! call (`check_*`, which run `chatty_kg_llm::reply::parse_reply` and the validator): the QIR
//! (Triples Validator and entities-in-question), the vertex pick (matching), the path pick (path
//! search), the rephraser's choice of referent and the translation.
//!
//! Input: `context 0xFF reply`, both UTF-8; the context's first line is the question and the
//! other lines the candidate labels and shown paths. Without `0xFF` the whole input is the reply
//! and a fixed context is used.
//!
//! Must hold: no panic; `extract_json` returns a piece of the reply; a pick is one of the shown
//! labels / an index into the shown paths; a QIR passes its own checks again (every triple has an
//! entity or a variable, a non-yes/no question has a target, the unknowns are valid SPARQL
//! variable names and all used, the entities are all written in the question).
#![no_main]
use chatty_kg_agents::agents::{chat, matching, path_search, qir, rephraser};
use chatty_kg_agents::qir::{QirTerm, QuestionKind, entities_in_question};
use chatty_kg_llm::reply::{extract_json, parse_reply};
use libfuzzer_sys::fuzz_target;

fn default_context() -> (String, Vec<String>) {
    (
        "Who directed Alien and what else did Ridley Scott direct?".to_owned(),
        ["Alien", "alien", "Aliens", "Ridley Scott", "Alien → directed by", "Zürich"]
            .map(str::to_owned)
            .to_vec(),
    )
}

fuzz_target!(|data: &[u8]| {
    let (context, reply) = match data.iter().position(|&b| b == 0xFF) {
        Some(i) => (Some(&data[..i]), &data[i + 1..]),
        None => (None, data),
    };
    let Ok(reply) = std::str::from_utf8(reply) else {
        return;
    };
    let (question, labels) = match context.map(std::str::from_utf8) {
        None => default_context(),
        Some(Err(_)) => return,
        Some(Ok(text)) => {
            let mut lines = text.split('\n').map(str::to_owned);
            let question = lines.next().unwrap_or_default();
            (question, lines.collect())
        }
    };

    if let Some(json) = extract_json(reply) {
        let start = json.as_ptr() as usize - reply.as_ptr() as usize;
        assert!(start + json.len() <= reply.len());
        assert_eq!(&reply[start..start + json.len()], json);
        assert!(json.starts_with(['{', '[']) && json.ends_with(['}', ']']), "{json:?}");
    }
    let _ = parse_reply::<serde_json::Value>(reply).map_err(|e| e.to_string());

    match matching::check_vertex_pick(reply, &labels) {
        Ok(label) => assert!(labels.contains(&label), "{label:?} not in {labels:?}"),
        Err(feedback) => assert!(!feedback.is_empty()),
    }
    match path_search::check_path_pick(reply, &labels) {
        Ok(index) => assert!(index < labels.len()),
        Err(feedback) => assert!(!feedback.is_empty()),
    }
    match qir::check_qir(reply, &question) {
        Ok(qir) => {
            assert!(!qir.triples.is_empty());
            assert!(qir.kind == QuestionKind::Boolean || qir.target().is_some(), "{qir:?}");
            for triple in &qir.triples {
                assert!(!triple.relation.is_empty() && triple.relation.trim() == triple.relation);
                for term in [&triple.subject, &triple.object] {
                    match term {
                        QirTerm::Entity(e) => assert!(qir.entities.contains(e), "{qir:?}"),
                        QirTerm::Variable(v) => assert!(qir.unknowns.contains(v), "{qir:?}"),
                    }
                }
            }
            for unknown in &qir.unknowns {
                assert!(
                    spargebra::term::Variable::new(unknown.as_str()).is_ok(),
                    "{unknown:?} is not a SPARQL variable name (from {reply:?})"
                );
            }
            entities_in_question(&qir, &question).unwrap_or_else(|e| panic!("accepted, then {e}"));
            // The QIR goes into the explanation and the stage event as JSON.
            let _ = serde_json::to_string(&qir).map_err(|e| panic!("{e}"));
        }
        Err(feedback) => assert!(!feedback.is_empty()),
    }
    let options = ["Forrest Gump".to_owned(), "Robert Zemeckis".to_owned()];
    if let Ok(referent) = rephraser::check_choice(reply, &options) {
        assert!(options.contains(&referent), "{referent:?} is not an option");
    }
    if let Ok(translation) = chat::check_translation(reply) {
        assert!(translation.english.trim().chars().filter(|c| c.is_alphanumeric()).count() >= 3);
    }
});
