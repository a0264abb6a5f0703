//! Runs a benchmark through the pipeline and writes one JSON line per question
//! (`answers.jsonl`), resumably: questions (or whole dialogues) already in the file are skipped,
//! and a dialogue's lines are written only once all its turns are answered, so an interrupted
//! run continues where it stopped.
//!
//! Gold answers are the benchmark's own, or, when it ships only gold SPARQL (LC-QuAD,
//! Chatty-Gen), that query's results on the KG in use. A system answer counts in whichever form
//! the gold uses: its IRI/value when gold answers are IRIs, else its label.

use crate::dataset::Item;
use crate::metrics::{self, Ranking, Score};
use crate::taxonomy::{self, ErrorInfo, Failure};
use chatty_kg_agents::explanation::{LlmUsage, StageTimings};
use chatty_kg_agents::{Dialogue, Explanation, Mode, Pipeline, Unanswered};
use chatty_kg_graph::{KnowledgeGraph, QueryResults, term_text};
use futures_util::StreamExt;
use rand::SeedableRng;
use rand::seq::SliceRandom;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("cannot read {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("cannot write {path}: {source}")]
    Write { path: PathBuf, source: std::io::Error },
    #[error("{path} line {line}: not a record of an earlier run ({message}); move it away to start afresh")]
    Resume {
        path: PathBuf,
        line: usize,
        message: String,
    },
}

/// How dialogue benchmarks are asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum RunMode {
    /// Turns in order, each seeing the earlier ones (pronouns and all).
    #[default]
    Dialogue,
    /// Every question on its own; a dialogue turn is asked in its standalone version.
    Standalone,
}

#[derive(Debug, Clone)]
pub struct RunOptions {
    pub mode: RunMode,
    /// Keep the first N questions (dialogues, for dialogue benchmarks).
    pub limit: Option<usize>,
    /// A seeded random sample of N questions (dialogues), taken before `limit`.
    pub sample: Option<(usize, u64)>,
    /// Questions (dialogues) answered at once.
    pub concurrency: usize,
    /// Answers kept per turn for the next questions' context (L).
    pub context_answers: usize,
    pub progress: bool,
}

/// One answered (or failed) question: a line of `answers.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub id: String,
    /// The text asked (standalone version in standalone mode).
    pub question: String,
    pub mode: RunMode,
    pub tags: BTreeMap<String, String>,
    pub gold: Vec<String>,
    /// The gold SPARQL could not run on this KG: the question is not scored.
    pub gold_error: Option<String>,
    /// The system's answers in the gold's form, in the system's order.
    pub system: Vec<String>,
    pub score: Score,
    /// Dialogue turns only.
    pub ranking: Option<Ranking>,
    /// Why the answer is not fully right (F1 < 1).
    pub failure: Option<Failure>,
    pub error: Option<ErrorInfo>,
    /// What the question cost, answered or not (records written before failed questions were
    /// accounted have none for those).
    pub timings: Option<StageTimings>,
    pub llm: Option<LlmUsage>,
    pub sparql_queries: usize,
    /// Answered questions only.
    pub explanation: Option<Explanation>,
}

impl Record {
    pub fn scored(&self) -> bool {
        self.gold_error.is_none()
    }
}

/// The questions a run asks: whole dialogues stay together.
pub fn select(items: Vec<Item>, options: &RunOptions) -> Vec<Vec<Item>> {
    let mut units: Vec<Vec<Item>> = Vec::new();
    for item in items {
        let same_dialogue = match (units.last().and_then(|u| u.last()), &item.dialogue) {
            (Some(last), Some(turn)) => last.dialogue.as_ref().is_some_and(|d| d.dialogue == turn.dialogue),
            _ => false,
        };
        match units.last_mut() {
            Some(unit) if same_dialogue => unit.push(item),
            _ => units.push(vec![item]),
        }
    }
    if let Some((n, seed)) = options.sample {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        units.shuffle(&mut rng);
        units.truncate(n);
    }
    if let Some(n) = options.limit {
        units.truncate(n);
    }
    units
}

/// Ids already in `path` (an earlier, interrupted run).
pub fn done_ids(path: &Path) -> Result<HashSet<String>, RunError> {
    if !path.exists() {
        return Ok(HashSet::new());
    }
    Ok(read_records(path)?.into_iter().map(|r| r.id).collect())
}

/// Reads every record of a run.
pub fn read_records(path: &Path) -> Result<Vec<Record>, RunError> {
    let text = std::fs::read_to_string(path).map_err(|source| RunError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(n, l)| {
            serde_json::from_str(l).map_err(|e| RunError::Resume {
                path: path.to_path_buf(),
                line: n + 1,
                message: e.to_string(),
            })
        })
        .collect()
}

/// Runs `units` (from [`select`]) and appends their records to `out`. Returns how many
/// questions were asked now (units already in `out` are skipped).
pub async fn run(
    pipeline: &Pipeline,
    kg: &dyn KnowledgeGraph,
    units: Vec<Vec<Item>>,
    options: &RunOptions,
    out: &Path,
) -> Result<usize, RunError> {
    let done = done_ids(out)?;
    let todo: Vec<Vec<Item>> = units
        .into_iter()
        .filter(|unit| !unit.iter().all(|item| done.contains(&item.id)))
        .collect();
    let total: usize = todo.iter().map(Vec::len).sum();
    let write_error = |source| RunError::Write {
        path: out.to_path_buf(),
        source,
    };
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(out)
        .map_err(write_error)?;
    let mut writer = std::io::BufWriter::new(file);
    let bar = if options.progress {
        indicatif::ProgressBar::new(total as u64)
    } else {
        indicatif::ProgressBar::hidden()
    };
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} {elapsed_precise} ETA {eta} {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let mut scores = Vec::<Score>::new();
    let mut results = futures_util::stream::iter(todo)
        .map(|unit| answer_unit(pipeline, kg, unit, options))
        .buffer_unordered(options.concurrency.max(1));
    let mut asked = 0;
    while let Some(records) = results.next().await {
        for record in &records {
            let line = serde_json::to_string(record).map_err(|e| write_error(e.into()))?;
            writeln!(writer, "{line}").map_err(write_error)?;
        }
        writer.flush().map_err(write_error)?;
        asked += records.len();
        scores.extend(records.iter().filter(|r| r.scored()).map(|r| r.score));
        let agg = metrics::aggregate(scores.iter());
        bar.set_message(format!(
            "F1(macro P, macro R) {:.3}  mean F1 {:.3}",
            agg.f1_of_macro_p_and_macro_r, agg.mean_per_question_f1
        ));
        bar.inc(records.len() as u64);
    }
    bar.finish();
    Ok(asked)
}

/// One question, or one dialogue turn by turn.
async fn answer_unit(
    pipeline: &Pipeline,
    kg: &dyn KnowledgeGraph,
    unit: Vec<Item>,
    options: &RunOptions,
) -> Vec<Record> {
    let mut dialogue = Dialogue::default();
    let mut records = Vec::with_capacity(unit.len());
    for item in unit {
        let (question, mode) = match (&item.dialogue, options.mode) {
            (Some(_), RunMode::Dialogue) => (item.question.clone(), Mode::MultiTurn),
            (Some(turn), RunMode::Standalone) => (turn.standalone.clone(), Mode::SingleTurn),
            (None, _) => (item.question.clone(), Mode::SingleTurn),
        };
        let (gold, gold_error) = gold_answers(kg, &item).await;
        let answered = pipeline
            .ask_accounted(&question, mode, &dialogue.turns, None, &mut |_, _| {})
            .await;
        if let Ok(explanation) = &answered {
            dialogue.record(explanation, options.context_answers);
        }
        records.push(record(item, question, options.mode, gold, gold_error, answered));
    }
    records
}

async fn gold_answers(kg: &dyn KnowledgeGraph, item: &Item) -> (Vec<String>, Option<String>) {
    if let Some(gold) = &item.gold {
        return (gold.clone(), None);
    }
    let Some(sparql) = &item.gold_sparql else {
        return (
            Vec::new(),
            Some("the benchmark gives neither answers nor a query".into()),
        );
    };
    match kg.query_text(sparql).await {
        Ok(QueryResults::Boolean(b)) => (vec![b.to_string()], None),
        Ok(QueryResults::Solutions(solutions)) => (
            solutions
                .rows
                .iter()
                .flat_map(|row| row.iter().flatten().filter_map(term_text))
                .collect(),
            None,
        ),
        Err(e) => (Vec::new(), Some(e.to_string())),
    }
}

/// The system's answers in the form the gold uses.
pub fn system_answers(explanation: &Explanation, gold: &[String]) -> Vec<String> {
    let gold_set = metrics::answer_set(gold);
    let gold_are_iris = gold
        .iter()
        .any(|g| g.starts_with("http://") || g.starts_with("https://"));
    explanation
        .answers
        .iter()
        .map(|a| {
            let forms = [Some(a.value.as_str()), a.label.as_deref()];
            forms
                .iter()
                .flatten()
                .find(|f| gold_set.contains(&metrics::normalize(f)))
                .map(|f| (*f).to_owned())
                .unwrap_or_else(|| match (&a.label, gold_are_iris) {
                    (Some(label), false) => label.clone(),
                    _ => a.value.clone(),
                })
        })
        .collect()
}

fn record(
    item: Item,
    question: String,
    mode: RunMode,
    gold: Vec<String>,
    gold_error: Option<String>,
    answered: Result<Explanation, Unanswered>,
) -> Record {
    // A failed question keeps its cost (timings, LLM usage, SPARQL run) but no explanation:
    // nothing was answered.
    let spent = match &answered {
        Ok(e) => e,
        Err(unanswered) => &unanswered.partial,
    };
    let (timings, llm, sparql_queries) = (spent.timings.clone(), spent.llm.clone(), spent.sparql_queries());
    let (system, error, explanation) = match answered {
        Ok(e) => (system_answers(&e, &gold), None, Some(e)),
        Err(Unanswered { error, .. }) => (
            Vec::new(),
            Some(ErrorInfo {
                kind: error.kind().to_owned(),
                message: error.to_string(),
            }),
            None,
        ),
    };
    let score = metrics::score(&system, &gold);
    let ranking = item.dialogue.as_ref().map(|_| metrics::ranking(&system, &gold));
    let failure = (score.f1 < 1.0 && gold_error.is_none())
        .then(|| taxonomy::classify(&item, explanation.as_ref(), error.as_ref(), &system));
    Record {
        id: item.id,
        question,
        mode,
        tags: item.tags,
        gold,
        gold_error,
        system,
        score,
        ranking,
        failure,
        error,
        timings: Some(timings),
        llm: Some(llm),
        sparql_queries,
        explanation,
    }
}
