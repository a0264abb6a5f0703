//! Feedback on answers, and the regression set made from it.
//!
//! A person rates an answered turn up or down (REST `POST /api/sessions/{id}/turns/{n}/feedback`,
//! the WebSocket's `feedback` message, the page's thumbs), optionally with what the answer should
//! have been: words (`{"answer": "Tom Hanks; Meg Ryan"}`, each part looked up in the graph by
//! its exact label, else kept as a literal; "yes"/"no" for a yes/no question) or a read-only
//! query (`{"sparql": "SELECT …"}`, checked and run now, so a correction that does not run is
//! refused at once rather than found broken in the export). The rating is stored with the turn.
//!
//! [`qald_export`] turns the rated turns into QALD-JSON that `chatty-kg eval` reads back: a turn
//! rated up keeps its own query and answers as the gold; a corrected turn gets the correction's;
//! a turn rated down without a correction has no gold and is left out (and counted). Each
//! question is the turn's standalone question, so a follow-up ("and his wife?") replays on its
//! own. `GET /api/feedback` exports the caller's own sessions; `chatty-kg feedback export`
//! reads the session store directly.

use crate::error::ServerError;
use chatty_kg_dialogue::{ContextValue, Correction, Feedback, Rating, SessionInfo, TurnRecord};
use chatty_kg_graph::{GraphError, KnowledgeGraph, QueryResults, Term};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Candidates looked at when the words of a correction are matched to labels.
const LABEL_CANDIDATES: usize = 20;
/// Parts of a correction in words looked up at most (each is a label search).
const MAX_PARTS: usize = 20;

/// A rating as clients send it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RatingRequest {
    pub rating: Rating,
    #[serde(default)]
    pub correction: Option<CorrectionRequest>,
}

/// What the answer should have been: words, a query, or both (the query then decides the values).
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CorrectionRequest {
    #[serde(default)]
    pub answer: Option<String>,
    #[serde(default)]
    pub sparql: Option<String>,
}

fn invalid(message: impl Into<String>) -> ServerError {
    ServerError::InvalidCorrection(message.into())
}

/// The most a correction's answers weigh (values and labels): it is stored with the turn and comes
/// back with every page of the history.
pub const MAX_CORRECTION_BYTES: usize = 64 << 10;

/// Checks `request` against the rated turn and the graph and makes the stored feedback.
/// `max_chars` bounds the correction's words and query; `max_answers` its values.
pub async fn checked(
    request: RatingRequest,
    turn: &TurnRecord,
    kg: &dyn KnowledgeGraph,
    max_chars: usize,
    max_answers: usize,
    now_ms: u64,
) -> Result<Feedback, ServerError> {
    if turn.explanation["outcome"]["status"] == "clarify" {
        return Err(invalid(
            "this turn asked which one you meant; rate the answer that follows your choice",
        ));
    }
    let correction = match request.correction {
        None => None,
        Some(_) if request.rating == Rating::Up => {
            return Err(invalid("a correction goes with a \"down\" rating"));
        }
        Some(c) => Some(correction(c, turn, kg, max_chars, max_answers).await?),
    };
    Ok(Feedback {
        rating: request.rating,
        correction,
        rated_at: now_ms,
    })
}

async fn correction(
    request: CorrectionRequest,
    turn: &TurnRecord,
    kg: &dyn KnowledgeGraph,
    max_chars: usize,
    max_answers: usize,
) -> Result<Correction, ServerError> {
    let text = request.answer.map(|t| t.trim().to_owned()).filter(|t| !t.is_empty());
    let sparql = request.sparql.map(|q| q.trim().to_owned()).filter(|q| !q.is_empty());
    for given in [&text, &sparql].into_iter().flatten() {
        let chars = given.chars().count();
        if chars > max_chars {
            return Err(invalid(format!(
                "the correction has {chars} characters; at most {max_chars}"
            )));
        }
    }
    let mut correction = Correction {
        text: text.clone(),
        sparql: sparql.clone(),
        ..Correction::default()
    };
    if let Some(query) = &sparql {
        let results = kg.query_text(query).await.map_err(|e| match e {
            GraphError::QueryParse { .. }
            | GraphError::InvalidIri { .. }
            | GraphError::NotReadOnly { .. }
            | GraphError::FunctionNotAllowed { .. }
            | GraphError::ValueTooLarge { .. }
            | GraphError::SolutionsTooLarge { .. }
            | GraphError::QueryWorker { .. }
            | GraphError::RiskyPattern { .. } => invalid(e.to_string()),
            other => ServerError::Agent(other.into()),
        })?;
        match results {
            QueryResults::Boolean(b) => correction.boolean = Some(b),
            QueryResults::Solutions(solutions) => {
                let terms: Vec<&Term> = solutions.rows.iter().flatten().flatten().take(max_answers).collect();
                correction.answers = values_of(&terms, kg).await?;
            }
        }
    } else if let Some(words) = &text {
        if turn.explanation["answer_kind"] == "boolean" {
            correction.boolean =
                Some(yes_or_no(words).ok_or_else(|| invalid("answer \"yes\" or \"no\" to a yes/no question"))?);
        } else {
            correction.answers = found_in_graph(words, kg, max_answers).await?;
        }
    } else {
        return Err(invalid("the correction is empty: give \"answer\" or \"sparql\""));
    }
    let weight: usize = correction.answers.iter().map(|a| a.value.len() + a.label.len()).sum();
    if weight > MAX_CORRECTION_BYTES {
        return Err(invalid(format!(
            "the correction's answers take {weight} bytes, more than the {MAX_CORRECTION_BYTES} a correction keeps: \
             ask for fewer or shorter values"
        )));
    }
    if correction.answers.is_empty() && correction.boolean.is_none() {
        return Err(invalid(
            "the correction names no answer (the words had no part, or the query no row)",
        ));
    }
    Ok(correction)
}

fn yes_or_no(words: &str) -> Option<bool> {
    match words.trim().trim_end_matches(['.', '!']).to_lowercase().as_str() {
        "yes" | "true" | "y" => Some(true),
        "no" | "false" | "n" => Some(false),
        _ => None,
    }
}

/// The values named by `words` (parts split at `;` or new lines): a part is the vertex whose
/// label it is (the best ranked, ignoring case), else a literal.
async fn found_in_graph(words: &str, kg: &dyn KnowledgeGraph, max: usize) -> Result<Vec<ContextValue>, ServerError> {
    let mut values = Vec::new();
    for part in words
        .split([';', '\n'])
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .take(max.min(MAX_PARTS))
    {
        let candidates = kg
            .search_entities(part, LABEL_CANDIDATES)
            .await
            .map_err(|e| ServerError::Agent(e.into()))?;
        let wanted = part.to_lowercase();
        values.push(
            match candidates.into_iter().find(|c| c.label.trim().to_lowercase() == wanted) {
                Some(c) => ContextValue {
                    value: c.iri,
                    label: c.label,
                    iri: true,
                    datatype: None,
                },
                None => ContextValue {
                    value: part.to_owned(),
                    label: part.to_owned(),
                    iri: false,
                    datatype: None,
                },
            },
        );
    }
    Ok(values)
}

/// Query results as stored values, IRIs with their labels.
async fn values_of(terms: &[&Term], kg: &dyn KnowledgeGraph) -> Result<Vec<ContextValue>, ServerError> {
    let iris: Vec<&str> = terms
        .iter()
        .filter_map(|t| match t {
            Term::NamedNode(n) => Some(n.as_str()),
            _ => None,
        })
        .collect();
    let labels = kg.labels(&iris).await.map_err(|e| ServerError::Agent(e.into()))?;
    Ok(terms
        .iter()
        .filter_map(|term| match term {
            Term::NamedNode(n) => Some(ContextValue {
                value: n.as_str().to_owned(),
                label: labels.get(n.as_str()).cloned().unwrap_or_else(|| n.as_str().to_owned()),
                iri: true,
                datatype: None,
            }),
            Term::Literal(l) => Some(ContextValue {
                value: l.value().to_owned(),
                label: l.value().to_owned(),
                iri: false,
                datatype: Some(l.datatype().as_str().to_owned()),
            }),
            _ => None,
        })
        .collect())
}

/// What an export holds and what it left out.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ExportCounts {
    /// Questions written.
    pub exported: usize,
    /// Rated down without a correction: no gold answer.
    pub without_gold: usize,
}

/// The rated turns (of the knowledge graph `kg`, when given) as a QALD-JSON benchmark. With
/// `reveal_sessions` false (anonymous callers of a server without keys, for whom a session id is
/// the only capability) the session ids are replaced by an opaque digest.
pub fn qald_export(
    rated: &[(SessionInfo, TurnRecord)],
    kg: Option<&str>,
    reveal_sessions: bool,
) -> (Value, ExportCounts) {
    let mut counts = ExportCounts::default();
    let mut questions = Vec::new();
    for (session, turn) in rated {
        if kg.is_some_and(|kg| kg != session.kg) {
            continue;
        }
        let Some(feedback) = &turn.feedback else { continue };
        match qald_question(session, turn, feedback, reveal_sessions) {
            Some(question) => questions.push(question),
            None => counts.without_gold += 1,
        }
    }
    counts.exported = questions.len();
    (
        json!({ "dataset": { "id": "chatty-kg-feedback" }, "questions": questions }),
        counts,
    )
}

fn qald_question(session: &SessionInfo, turn: &TurnRecord, feedback: &Feedback, reveal: bool) -> Option<Value> {
    let explanation = &turn.explanation;
    let boolean_question = explanation["answer_kind"] == "boolean";
    let (sparql, answers, answertype) = match (&feedback.rating, &feedback.correction) {
        (Rating::Up, _) => {
            // Several queries made one answer together: the answers are the gold, no one query.
            let sparql = used_query(explanation);
            let values = explanation["answers"].as_array().cloned().unwrap_or_default();
            if explanation["outcome"]["status"] == "clarify" || (explanation["truncated"] == true && sparql.is_none()) {
                // A question back, or a cut list no single query gives in full: no gold.
                return None;
            }
            if boolean_question && let [value] = values.as_slice() {
                (sparql, json!({ "boolean": value["value"] == "true" }), "boolean")
            } else if explanation["truncated"] == true && sparql.is_some() {
                // The stored answers were cut: the query gives them all.
                (sparql, Value::Null, answer_type(explanation))
            } else {
                let bindings: Vec<Value> = values.iter().map(explained_binding).collect();
                (sparql, select_result(bindings), answer_type(explanation))
            }
        }
        (Rating::Down, None) => return None,
        (Rating::Down, Some(correction)) => match correction.boolean {
            Some(b) => (correction.sparql.clone(), json!({ "boolean": b }), "boolean"),
            None => {
                let bindings: Vec<Value> = correction.answers.iter().map(stored_binding).collect();
                let kind = if correction.answers.iter().all(|v| v.iri) {
                    "resource"
                } else {
                    "literal"
                };
                (correction.sparql.clone(), select_result(bindings), kind)
            }
        },
    };
    let name = if reveal {
        session.id.to_string()
    } else {
        opaque(session.id.as_str())
    };
    let mut question = json!({
        "id": format!("{name}-{}", turn.index),
        "question": [{ "language": "en", "string": turn.context.question }],
        "answertype": answertype,
        "rating": feedback.rating,
        "chatty_kg": {
            "kg": session.kg,
            "session": reveal.then(|| session.id.to_string()),
            "turn": turn.index,
            "asked": explanation["question"],
            "asked_at": turn.asked_at,
            "rated_at": feedback.rated_at,
            "correction": feedback.correction.as_ref().and_then(|c| c.text.as_ref()),
        },
    });
    if let Some(sparql) = sparql {
        question["query"] = json!({ "sparql": sparql });
    }
    if !answers.is_null() {
        question["answers"] = json!([answers]);
    }
    Some(question)
}

/// The one query whose result became the answer of an explained turn; `None` when several made
/// it together (or none did).
pub fn used_query(explanation: &Value) -> Option<String> {
    let used: Vec<&str> = explanation["sparql"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter(|q| q["used"] == true)
        .filter_map(|q| q["sparql"].as_str())
        .collect();
    match used.as_slice() {
        [one] => Some((*one).to_owned()),
        _ => None,
    }
}

/// A stable name for a session that does not give its id away (a digest of it).
fn opaque(id: &str) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(format!("chatty-kg-export:{id}").as_bytes());
    format!(
        "s{}",
        digest[..8].iter().map(|b| format!("{b:02x}")).collect::<String>()
    )
}

fn select_result(bindings: Vec<Value>) -> Value {
    json!({ "head": { "vars": ["answer"] }, "results": { "bindings": bindings } })
}

/// QALD's answer type from the explanation's answer kind.
fn answer_type(explanation: &Value) -> &'static str {
    match explanation["answer_kind"].as_str() {
        Some("boolean") => "boolean",
        Some("count") => "number",
        _ if explanation["answers"]
            .as_array()
            .is_some_and(|a| !a.is_empty() && a.iter().all(|v| v["kind"] == "iri")) =>
        {
            "resource"
        }
        _ => "literal",
    }
}

/// One answer value of an explanation as a SPARQL-JSON binding.
fn explained_binding(value: &Value) -> Value {
    let mut term = json!({
        "type": if value["kind"] == "iri" { "uri" } else { "literal" },
        "value": value["value"],
    });
    if let Some(datatype) = value["datatype"].as_str() {
        term["datatype"] = json!(datatype);
    }
    if let Some(language) = value["language"].as_str() {
        term["xml:lang"] = json!(language);
    }
    json!({ "answer": term })
}

fn stored_binding(value: &ContextValue) -> Value {
    let mut term = json!({ "type": if value.iri { "uri" } else { "literal" }, "value": value.value });
    if let Some(datatype) = &value.datatype {
        term["datatype"] = json!(datatype);
    }
    json!({ "answer": term })
}

#[cfg(test)]
mod tests {
    use super::*;
    use chatty_kg_dialogue::{SessionId, TurnContext};

    fn session() -> SessionInfo {
        SessionInfo {
            id: SessionId::parse("0123456789abcdef0123456789abcdef").unwrap(),
            kg: "movies".into(),
            created_at: 0,
            updated_at: 0,
            turns: 3,
            owner: None,
        }
    }

    fn turn(index: u32, explanation: Value, feedback: Feedback) -> TurnRecord {
        TurnRecord {
            format: chatty_kg_dialogue::TURN_FORMAT,
            index,
            asked_at: 5,
            context: TurnContext {
                question: format!("standalone {index}"),
                answers: Vec::new(),
                entities: Vec::new(),
                values: Vec::new(),
                total: 0,
                clarification: None,
                answer_set: None,
                query: None,
            },
            explanation,
            feedback: Some(feedback),
        }
    }

    fn rated(rating: Rating, correction: Option<Correction>) -> Feedback {
        Feedback {
            rating,
            correction,
            rated_at: 9,
        }
    }

    #[test]
    fn the_export_keeps_what_has_gold_and_reads_back_as_qald() {
        let answered = json!({
            "question": "who directed it?",
            "answer_kind": "list",
            "answers": [
                {"kind": "iri", "value": "http://ex.org/ramsay", "label": "Lynne Ramsay"},
                {"kind": "literal", "value": "1999", "datatype": "http://www.w3.org/2001/XMLSchema#integer"}
            ],
            "sparql": [
                {"sparql": "SELECT ?x WHERE { <http://ex.org/m> <http://ex.org/d> ?x }", "used": true},
                {"sparql": "SELECT ?x WHERE { ?x ?p ?o }", "used": false}
            ]
        });
        let yes_no = json!({"question": "is it?", "answer_kind": "boolean", "answers": [{"kind": "boolean", "value": "true"}], "sparql": []});
        let corrected = Correction {
            text: Some("Tom Hanks".into()),
            answers: vec![ContextValue {
                value: "http://ex.org/hanks".into(),
                label: "Tom Hanks".into(),
                iri: true,
                datatype: None,
            }],
            ..Correction::default()
        };
        let turns = vec![
            (session(), turn(0, answered.clone(), rated(Rating::Up, None))),
            (session(), turn(1, yes_no, rated(Rating::Up, None))),
            (
                session(),
                turn(2, answered.clone(), rated(Rating::Down, Some(corrected))),
            ),
            (session(), turn(3, answered, rated(Rating::Down, None))),
        ];
        let (export, counts) = qald_export(&turns, None, true);
        assert_eq!(
            counts,
            ExportCounts {
                exported: 3,
                without_gold: 1
            }
        );
        let questions = export["questions"].as_array().unwrap();
        assert_eq!(
            questions[0]["query"]["sparql"],
            "SELECT ?x WHERE { <http://ex.org/m> <http://ex.org/d> ?x }"
        );
        assert_eq!(questions[0]["question"][0]["string"], "standalone 0");
        assert_eq!(questions[0]["chatty_kg"]["asked"], "who directed it?");
        assert_eq!(questions[1]["answers"][0]["boolean"], true);
        assert_eq!(questions[2]["rating"], "down");
        assert!(questions[2].get("query").is_none());

        // `chatty-kg eval` reads it back: the same questions and gold values.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("feedback.json");
        std::fs::write(&path, export.to_string()).unwrap();
        let items = chatty_kg_eval::loaders::qald::load(&path, "en").unwrap();
        let gold: Vec<_> = items.iter().map(|i| i.gold.clone().unwrap()).collect();
        assert_eq!(gold[0], ["http://ex.org/ramsay", "1999"]);
        assert_eq!(gold[1], ["true"]);
        assert_eq!(gold[2], ["http://ex.org/hanks"]);
        assert_eq!(items[2].tags["rating"], "down");
        assert_eq!(items[0].id, format!("{}-0", session().id));

        // Another KG's turns are not in its export.
        assert_eq!(qald_export(&turns, Some("dbpedia"), true).1.exported, 0);
        // Without keys the ids are not given away, and one session keeps one name.
        let (anonymous, _) = qald_export(&turns, None, false);
        let text = anonymous.to_string();
        assert!(!text.contains(session().id.as_str()), "{text}");
        let id = |i: usize| anonymous["questions"][i]["id"].as_str().unwrap().to_owned();
        assert_eq!(id(0).trim_end_matches("-0"), id(2).trim_end_matches("-2"));
    }

    #[test]
    fn yes_and_no_are_read_loosely_but_nothing_else() {
        assert_eq!(yes_or_no(" Yes."), Some(true));
        assert_eq!(yes_or_no("false"), Some(false));
        assert_eq!(yes_or_no("maybe"), None);
    }
}
