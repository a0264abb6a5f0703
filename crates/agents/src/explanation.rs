//! What every answer shows about itself: the values (with labels and supporting triples), the
//! resolved question, the QIR, entity and relation links, the SPARQL that ran, time per stage and
//! per agent, and the model calls and tokens per agent. `chatty-kg ask --json` prints this.

use crate::answer::AnswerValue;
use crate::candidates::paths::SearchReport;
use crate::candidates::ranking::ScoredPath;
use crate::dialogue::clarification::Clarified;
use crate::qir::{Qir, QuestionKind};
use crate::state::{
    AgentState, AnswerSet, Classification, EntityLink, ExecutedQuery, Outcome, PathChoice, RelationLink, Resolution,
};
use crate::understanding::classes::ClassMention;
use crate::understanding::form::QuestionForm;
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
    /// "What *else* …": the vertices the previous turn named, left out of the answers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub excluded: Vec<crate::answer::Member>,
    /// List, boolean or count; absent when the question stopped before a QIR.
    pub answer_kind: Option<QuestionKind>,
    /// The graph returned more rows than allowed; answers are cut.
    pub truncated: bool,
    /// The standalone (rephrased or translated) question the agents worked on.
    pub resolved_question: String,
    pub classification: Option<Classification>,
    /// A follow-up's referring expressions, the candidates from the dialogue that fitted each,
    /// and the one chosen (and how).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolution: Option<Resolution>,
    /// The question chose an option of the previous turn's clarifying question: the vertex,
    /// for the waiting question that ran again (`resolved_question`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clarified: Option<Clarified>,
    /// A listed answer the question was about as a whole (planned over with VALUES).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer_set: Option<AnswerSet>,
    /// The question's language, when it is not the configured one (answers are named in it
    /// where the graph can), or the model detected it for translation.
    pub language: Option<String>,
    pub qir: Option<Qir>,
    pub entities: Vec<EntityLink>,
    pub relations: Vec<RelationLink>,
    /// The question's form (list, yes/no, count, superlative) and how it was decided.
    #[serde(default)]
    pub form: Option<QuestionForm>,
    /// A class of the graph the question names, its role, and whether the answer was held to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<ClassMention>,
    /// The best relation paths found around the linked vertices, ranked, with their scores.
    #[serde(default)]
    pub paths: Vec<ScoredPath>,
    /// Which path the answer started from, and why (margin, model pick, only one).
    #[serde(default)]
    pub path_choice: Option<PathChoice>,
    /// What the path search did: queries, hops, frontier sizes, and whether a budget cut it.
    #[serde(default)]
    pub path_search: Option<SearchReport>,
    /// Every query that ran to answer, in order, with its row count and whether it fed the answer
    /// (the path search's queries are counted in `path_search`).
    pub sparql: Vec<ExecutedQuery>,
    /// The example made from feedback on a similar question that was tried on this question's
    /// vertices (its query is among `sparql`, reason `example`), and whether it answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub example: Option<crate::candidates::examples::ExampleUse>,
    pub timings: StageTimings,
    pub llm: LlmUsage,
}

/// Milliseconds per stage (the reference server's four) and per agent run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct StageTimings {
    /// Chat (in), classifier, rephraser and QIR agent.
    pub understanding_ms: f64,
    /// Matching and path search: entity linking, relation paths.
    pub linking_ms: f64,
    /// Query planning minus the time waiting for the graph: building the queries from the path.
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

/// Ranked paths kept in the explanation (the model picks among the first five at most).
const SHOWN_PATHS: usize = 10;

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
        for t in &state.timings {
            let elapsed = ms(t.elapsed);
            match t.node.as_str() {
                crate::agents::chat::REPLY => timings.reply_ms += elapsed,
                crate::agents::matching::NAME | crate::agents::path_search::NAME | crate::agents::clarify::NAME => {
                    timings.linking_ms += elapsed
                }
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
            resolution: state.resolution.clone(),
            clarified: state.clarified.clone(),
            answer_set: state.answer_set.clone(),
            excluded: state.excluded.clone(),
            language: state.language.clone(),
            qir: state.qir.clone(),
            entities: state.entities.clone(),
            relations: state.relations.clone(),
            form: state.form.clone(),
            class: state.class.clone(),
            paths: state.paths.iter().take(SHOWN_PATHS).cloned().collect(),
            path_choice: state.path_choice,
            path_search: state.path_search.clone(),
            sparql: state.queries.clone(),
            example: state.example.clone(),
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

    /// SPARQL queries run for this question: the path search's (its neighbourhoods and its
    /// class queries) and the answer's.
    pub fn sparql_queries(&self) -> usize {
        self.sparql.len()
            + self
                .path_search
                .as_ref()
                .map_or(0, |s| s.queries + s.class_queries.len())
    }

    /// The chosen relation path, as text.
    pub fn chosen_path(&self) -> Option<&ScoredPath> {
        self.paths.get(self.path_choice?.index)
    }

    /// The answer values as a person reads them.
    pub fn display_answers(&self) -> Vec<String> {
        self.answers.iter().map(|a| a.display().to_owned()).collect()
    }
}
