//! The WebSocket message schema (documented in docs/server.md) and the stage events built from the
//! agents' state as each one finishes. Frames are JSON text with a `type` tag.

use crate::error::ServerError;
use crate::feedback::CorrectionRequest;
use chatty_kg_agents::AgentState;
use chatty_kg_dialogue::{Feedback, Rating, SessionInfo, TurnRecord};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// What a client sends.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum ClientMessage {
    /// Start a new session on `kg` (default: the configured default KG).
    Open {
        #[serde(default)]
        kg: Option<String>,
    },
    /// Continue an existing session; the reply carries a page of its history (default: the
    /// last 100 turns; `from`, `limit` as in REST).
    Resume {
        session: String,
        #[serde(default)]
        from: Option<u32>,
        #[serde(default)]
        limit: Option<usize>,
    },
    /// Ask in the current session (one is opened on the default KG if none is).
    Ask { question: String },
    /// Rate turn `turn` of the current session (`rating: null` withdraws the rating); allowed
    /// while an answer is under way.
    Feedback {
        turn: u32,
        rating: Option<Rating>,
        #[serde(default)]
        correction: Option<CorrectionRequest>,
    },
}

/// What the server sends.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ServerMessage {
    /// The connection's session, after `open`, `resume`, or an `ask` that opened one.
    Session {
        session: String,
        kg: String,
        /// True when the session was created just now.
        created: bool,
        /// Turns in the session.
        turn_count: u32,
        /// Index of the first turn in `turns`.
        from: u32,
        /// Earlier turns, oldest first (empty for a new session; a page, see `resume`).
        turns: Vec<TurnRecord>,
    },
    /// Progress while the agents work.
    Stage {
        stage: Stage,
        /// The agent that just finished.
        agent: String,
        /// Since the question was received.
        elapsed_ms: f64,
        data: Value,
    },
    /// The final answer, written durably before this frame was sent.
    Answer {
        session: String,
        turn: u32,
        /// The agents' explanation, as stored with the turn.
        explanation: Value,
    },
    /// A rating was stored (or withdrawn: `feedback` is null).
    Feedback {
        session: String,
        turn: u32,
        feedback: Option<Feedback>,
    },
    /// Something went wrong with one message or question; the connection and session stay.
    Error { kind: String, message: String },
}

impl ServerMessage {
    pub fn session(info: &SessionInfo, created: bool, from: u32, turns: Vec<TurnRecord>) -> Self {
        ServerMessage::Session {
            session: info.id.to_string(),
            kg: info.kg.clone(),
            created,
            turn_count: info.turns,
            from,
            turns,
        }
    }

    pub fn answer(session: &str, record: TurnRecord) -> Self {
        ServerMessage::Answer {
            session: session.to_owned(),
            turn: record.index,
            explanation: record.explanation,
        }
    }

    pub fn error(error: &ServerError) -> Self {
        ServerMessage::Error {
            kind: error.kind().to_owned(),
            message: error.to_string(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    Translated,
    Classified,
    Rephrased,
    QirBuilt,
    EntitiesLinked,
    RelationsLinked,
    PathsRanked,
    QueriesSelected,
    Executed,
}

/// The stage events for `agent` having just finished with `state`.
pub fn stage_events(agent: &str, state: &AgentState) -> Vec<(Stage, Value)> {
    match agent {
        // The chat agent's first node (context, translation); its reply node's text rides in the
        // answer frame. Only a translation is news.
        "chat" => state
            .translated_question
            .as_ref()
            .map(|q| (Stage::Translated, json!({ "question": q, "language": state.language })))
            .into_iter()
            .collect(),
        "classifier" => state
            .classification
            .map(|c| {
                (
                    Stage::Classified,
                    json!({ "classification": c, "references": state.references }),
                )
            })
            .into_iter()
            .collect(),
        "rephraser" => vec![(
            Stage::Rephrased,
            json!({
                "question": state.resolved_question.as_deref().unwrap_or(&state.question),
                "resolution": state.resolution,
                "answer_set": state.answer_set,
            }),
        )],
        "qir" => state
            .qir
            .as_ref()
            .map(|qir| (Stage::QirBuilt, json!({ "qir": qir })))
            .into_iter()
            .collect(),
        "matching" => vec![(Stage::EntitiesLinked, json!({ "entities": state.entities }))],
        "path_search" => {
            let mut events = Vec::new();
            if !state.relations.is_empty() {
                events.push((Stage::RelationsLinked, json!({ "relations": state.relations })));
            }
            let chosen = state.path_choice.and_then(|c| state.paths.get(c.index));
            events.push((
                Stage::PathsRanked,
                json!({
                    "form": state.form,
                    "paths": state.paths.iter().map(|p| json!({"path": p.text, "score": p.score})).collect::<Vec<_>>(),
                    "chosen": chosen.map(|p| &p.text),
                    "choice": state.path_choice,
                    "search": state.path_search,
                }),
            ));
            events
        }
        "query_planning" => {
            let selected: Vec<_> = state
                .queries
                .iter()
                .map(|q| json!({ "sparql": q.sparql, "reason": q.reason, "predicates": q.predicates }))
                .collect();
            let executed: Vec<_> = state
                .queries
                .iter()
                .map(|q| json!({ "sparql": q.sparql, "rows": q.rows, "used": q.used, "elapsed_ms": q.elapsed_ms, "error": q.error }))
                .collect();
            let answers = state.answer.as_ref().map_or(0, |a| a.values.len());
            vec![
                (Stage::QueriesSelected, json!({ "queries": selected })),
                (Stage::Executed, json!({ "queries": executed, "answers": answers })),
            ]
        }
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_messages_parse_strictly() {
        let ask: ClientMessage = serde_json::from_str(r#"{"type":"ask","question":"Who?"}"#).unwrap();
        assert_eq!(
            ask,
            ClientMessage::Ask {
                question: "Who?".into()
            }
        );
        let open: ClientMessage = serde_json::from_str(r#"{"type":"open"}"#).unwrap();
        assert_eq!(open, ClientMessage::Open { kg: None });
        let rate: ClientMessage =
            serde_json::from_str(r#"{"type":"feedback","turn":2,"rating":"down","correction":{"answer":"Tom Hanks"}}"#)
                .unwrap();
        assert_eq!(
            rate,
            ClientMessage::Feedback {
                turn: 2,
                rating: Some(Rating::Down),
                correction: Some(CorrectionRequest {
                    answer: Some("Tom Hanks".into()),
                    sparql: None
                }),
            }
        );
        for bad in [
            r#"{"type":"ask"}"#,
            r#"{"type":"ask","question":"Who?","extra":1}"#,
            r#"{"type":"delete_everything"}"#,
            r#"{"type":"feedback","turn":-1,"rating":"up"}"#,
            r#"{"type":"feedback","turn":0,"rating":"meh"}"#,
            r#"{"type":"feedback","turn":0,"rating":"up","correction":{"answer":"x","why":"y"}}"#,
            r#"{"question":"Who?"}"#,
            r#"["ask"]"#,
            "ask: who",
        ] {
            assert!(serde_json::from_str::<ClientMessage>(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn server_messages_are_tagged() {
        let error = serde_json::to_value(ServerMessage::error(&ServerError::Busy)).unwrap();
        assert_eq!(error["type"], "error");
        assert_eq!(error["kind"], "busy");
        let mut state = AgentState::new("Who directed Big?", Default::default(), Vec::new());
        assert!(stage_events("classifier", &state).is_empty());
        state.classification = Some(chatty_kg_agents::Classification::Dependent);
        let events = stage_events("classifier", &state);
        assert_eq!(events[0].0, Stage::Classified);
        assert_eq!(events[0].1["classification"], "dependent");
        let events = stage_events("query_planning", &state);
        let stages: Vec<_> = events.iter().map(|e| e.0).collect();
        assert_eq!(stages, [Stage::QueriesSelected, Stage::Executed]);
        assert_eq!(events[1].1["answers"], 0);
    }
}
