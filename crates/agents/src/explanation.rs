//! What every answer shows about itself: the values (with labels and supporting triples), the
//! resolved question, the QIR, entity and relation links, the SPARQL that ran, time per stage and
//! per agent, and the model calls and tokens per agent. `chatty-kg ask --json` prints this.

use crate::answer::AnswerValue;
use crate::qir::{Qir, QuestionKind};
use crate::state::{AgentState, Classification, EntityLink, ExecutedQuery, Outcome, RelationLink};
use chatty_kg_llm::accounting::{CallLedger, CallTotals};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Duration;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Explanation {
    /// The question as asked.
    pub question: String,
    /// What the user is told.
    pub text: String,
    pub outcome: Outcome,
    pub answers: Vec<AnswerValue>,
    /// List, boolean or count; absent when the question stopped before a QIR.
    pub answer_kind: Option<QuestionKind>,
    /// The graph returned more rows than allowed; answers are cut.
    pub truncated: bool,
    /// The standalone (rephrased or translated) question the agents worked on.
    pub resolved_question: String,
    pub classification: Option<Classification>,
    /// The detected language, when translation is on.
    pub language: Option<String>,
    pub qir: Option<Qir>,
    pub entities: Vec<EntityLink>,
    pub relations: Vec<RelationLink>,
    /// Every query that ran, in order, with its row count and whether it fed the answer.
    pub sparql: Vec<ExecutedQuery>,
    pub timings: StageTimings,
    pub llm: LlmUsage,
}

/// Milliseconds per stage (the reference server's four) and per agent run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct StageTimings {
    /// Chat (in), classifier, rephraser and QIR agent.
    pub understanding_ms: f64,
    /// Matching agent: entity and relation linking.
    pub linking_ms: f64,
    /// Query planning minus the time waiting for the graph: generation and predicate selection.
    pub query_selection_ms: f64,
    /// Waiting for the graph to run the selected queries.
    pub execution_ms: f64,
    /// Chat (out): composing the reply, verbalization included.
    pub reply_ms: f64,
    pub total_ms: f64,
    /// Each node run, in order.
    pub agents: Vec<AgentTiming>,
}

impl StageTimings {
    /// The five stages by name, in order (without the total).
    pub fn stages(&self) -> [(&'static str, f64); 5] {
        [
            ("understanding", self.understanding_ms),
            ("linking", self.linking_ms),
            ("query_selection", self.query_selection_ms),
            ("execution", self.execution_ms),
            ("reply", self.reply_ms),
        ]
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentTiming {
    pub agent: String,
    pub ms: f64,
}

/// Model calls of one question.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct LlmUsage {
    pub calls: u32,
    pub failed: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub by_agent: BTreeMap<String, CallTotals>,
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

impl Explanation {
    /// Assembles the explanation from a finished state and the question's call ledger.
    pub fn from_state(state: &AgentState, ledger: &CallLedger, total: Duration) -> Self {
        let mut timings = StageTimings {
            total_ms: ms(total),
            ..StageTimings::default()
        };
        let mut chat_runs = 0;
        for t in &state.timings {
            let elapsed = ms(t.elapsed);
            match t.node.as_str() {
                crate::agents::chat::NAME => {
                    chat_runs += 1;
                    if chat_runs == 1 {
                        timings.understanding_ms += elapsed;
                    } else {
                        timings.reply_ms += elapsed;
                    }
                }
                crate::agents::matching::NAME => timings.linking_ms += elapsed,
                crate::agents::query_planning::NAME => {
                    let execution = ms(state.execution_time).min(elapsed);
                    timings.execution_ms += execution;
                    timings.query_selection_ms += elapsed - execution;
                }
                _ => timings.understanding_ms += elapsed,
            }
            timings.agents.push(AgentTiming {
                agent: t.node.clone(),
                ms: elapsed,
            });
        }
        let totals = ledger.totals();
        Self {
            question: state.question.clone(),
            text: state.reply.clone().unwrap_or_default(),
            outcome: state.outcome.clone().unwrap_or(Outcome::NoAnswer),
            answers: state.answer.as_ref().map(|a| a.values.clone()).unwrap_or_default(),
            answer_kind: state
                .answer
                .as_ref()
                .map(|a| a.kind)
                .or(state.qir.as_ref().map(|q| q.kind)),
            truncated: state.answer.as_ref().is_some_and(|a| a.truncated),
            resolved_question: state.working_question().to_owned(),
            classification: state.classification,
            language: state.language.clone(),
            qir: state.qir.clone(),
            entities: state.entities.clone(),
            relations: state.relations.clone(),
            sparql: state.queries.clone(),
            timings,
            llm: LlmUsage {
                calls: totals.calls,
                failed: totals.failed,
                input_tokens: totals.input_tokens,
                output_tokens: totals.output_tokens,
                by_agent: ledger.by_agent(),
            },
        }
    }

    /// The answer values as a person reads them.
    pub fn display_answers(&self) -> Vec<String> {
        self.answers.iter().map(|a| a.display().to_owned()).collect()
    }
}
