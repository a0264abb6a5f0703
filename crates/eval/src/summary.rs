//! A run's numbers from its records: both F1 definitions overall and per tag (hops, question
//! type, answer type, template, turn), dialogue ranking metrics, failures by class, errors by
//! kind, and efficiency per question (LLM calls and tokens, SPARQL queries, latency p50/p95,
//! mean time per stage). Also the system's answers as QALD-JSON for external scorers (GERBIL),
//! and a Markdown report.

use crate::metrics::{self, Aggregate, RankingAggregate};
use crate::runner::Record;
use chatty_kg_agents::explanation::StageTimings;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write;

/// Tags whose values reports break F1 down by.
const BREAKDOWN_TAGS: [&str; 7] = ["hops", "qtype", "answertype", "template", "turn", "reference", "move"];

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Efficiency {
    pub llm_calls: f64,
    pub input_tokens: f64,
    pub output_tokens: f64,
    pub sparql_queries: f64,
    pub latency_ms_p50: f64,
    pub latency_ms_p95: f64,
    pub latency_ms_mean: f64,
    /// The question's time minus its model calls' time: what the graph, the embeddings and the
    /// agents' own work cost.
    #[serde(default)]
    pub non_llm_ms_p50: f64,
    #[serde(default)]
    pub non_llm_ms_p95: f64,
    /// Mean milliseconds per stage: understanding, linking, query_selection, execution, reply.
    pub stage_ms: BTreeMap<String, f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Summary {
    pub label: String,
    pub questions: usize,
    /// Questions whose gold could not be computed on this KG (not scored).
    pub unscored: usize,
    pub overall: Aggregate,
    pub ranking: Option<RankingAggregate>,
    pub by_tag: BTreeMap<String, BTreeMap<String, Aggregate>>,
    pub failures: BTreeMap<String, usize>,
    pub errors: BTreeMap<String, usize>,
    /// Per question (means, except the latency percentiles).
    pub efficiency: Efficiency,
    /// Dialogue benchmarks: the same for the turns after the first (what a follow-up costs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub follow_ups: Option<FollowUps>,
}

/// What the turns after a dialogue's first cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct FollowUps {
    pub questions: usize,
    /// Mean LLM calls.
    pub llm_calls: f64,
    pub latency_ms_p50: f64,
    pub latency_ms_p95: f64,
}

fn follow_ups(records: &[Record]) -> Option<FollowUps> {
    let later: Vec<&Record> = records
        .iter()
        .filter(|r| r.tags.get("turn").is_some_and(|t| t != "0"))
        .collect();
    if later.is_empty() {
        return None;
    }
    let mut latencies: Vec<f64> = later
        .iter()
        .filter_map(|r| r.timings.as_ref().map(|t| t.total_ms))
        .collect();
    latencies.sort_by(f64::total_cmp);
    Some(FollowUps {
        questions: later.len(),
        llm_calls: later
            .iter()
            .map(|r| r.llm.as_ref().map_or(0.0, |l| f64::from(l.calls)))
            .sum::<f64>()
            / later.len() as f64,
        latency_ms_p50: percentile(&latencies, 0.5),
        latency_ms_p95: percentile(&latencies, 0.95),
    })
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

pub fn summarize(label: &str, records: &[Record]) -> Summary {
    let scored: Vec<&Record> = records.iter().filter(|r| r.scored()).collect();
    let mut by_tag: BTreeMap<String, BTreeMap<String, Vec<metrics::Score>>> = BTreeMap::new();
    for record in &scored {
        for tag in BREAKDOWN_TAGS {
            if let Some(value) = record.tags.get(tag) {
                by_tag
                    .entry(tag.to_owned())
                    .or_default()
                    .entry(value.clone())
                    .or_default()
                    .push(record.score);
            }
        }
    }
    let rankings: Vec<_> = scored.iter().filter_map(|r| r.ranking).collect();
    let mut failures = BTreeMap::new();
    for failure in scored.iter().filter_map(|r| r.failure) {
        *failures.entry(failure.name().to_owned()).or_default() += 1;
    }
    let mut errors = BTreeMap::new();
    for error in records.iter().filter_map(|r| r.error.as_ref()) {
        *errors.entry(error.kind.clone()).or_default() += 1;
    }
    let n = records.len().max(1) as f64;
    let mut latencies: Vec<f64> = records
        .iter()
        .filter_map(|r| r.timings.as_ref().map(|t| t.total_ms))
        .collect();
    latencies.sort_by(f64::total_cmp);
    let mut non_llm: Vec<f64> = records
        .iter()
        .filter_map(|r| {
            let total = r.timings.as_ref()?.total_ms;
            let llm: f64 = r
                .llm
                .as_ref()
                .map_or(0.0, |l| l.by_agent.values().map(|c| c.latency_ms).sum());
            Some((total - llm).max(0.0))
        })
        .collect();
    non_llm.sort_by(f64::total_cmp);
    let mut stage_ms = BTreeMap::new();
    for record in records {
        if let Some(t) = &record.timings {
            for (stage, ms) in t.stages() {
                *stage_ms.entry(stage.to_owned()).or_insert(0.0) += ms / latencies.len().max(1) as f64;
            }
        }
    }
    let sum = |f: &dyn Fn(&Record) -> f64| records.iter().map(f).sum::<f64>() / n;
    Summary {
        label: label.to_owned(),
        questions: records.len(),
        unscored: records.len() - scored.len(),
        overall: metrics::aggregate(scored.iter().map(|r| &r.score)),
        ranking: (!rankings.is_empty()).then(|| metrics::aggregate_ranking(&rankings)),
        by_tag: by_tag
            .into_iter()
            .map(|(tag, values)| {
                (
                    tag,
                    values.into_iter().map(|(v, s)| (v, metrics::aggregate(&s))).collect(),
                )
            })
            .collect(),
        failures,
        errors,
        efficiency: Efficiency {
            llm_calls: sum(&|r| r.llm.as_ref().map_or(0.0, |l| f64::from(l.calls))),
            input_tokens: sum(&|r| r.llm.as_ref().map_or(0.0, |l| l.input_tokens as f64)),
            output_tokens: sum(&|r| r.llm.as_ref().map_or(0.0, |l| l.output_tokens as f64)),
            sparql_queries: sum(&|r| r.sparql_queries as f64),
            latency_ms_p50: percentile(&latencies, 0.5),
            latency_ms_p95: percentile(&latencies, 0.95),
            latency_ms_mean: latencies.iter().sum::<f64>() / latencies.len().max(1) as f64,
            non_llm_ms_p50: percentile(&non_llm, 0.5),
            non_llm_ms_p95: percentile(&non_llm, 0.95),
            stage_ms,
        },
        follow_ups: follow_ups(records),
    }
}

/// The system's answers in QALD-JSON (what GERBIL and the QALD scorers read).
pub fn qald_json(dataset: &str, records: &[Record]) -> serde_json::Value {
    let questions: Vec<_> = records
        .iter()
        .map(|r| {
            let answers = match &r.explanation {
                Some(e) if e.answers.len() == 1 && e.answers[0].kind == chatty_kg_agents::ValueKind::Boolean => {
                    serde_json::json!([{"head": {}, "boolean": e.answers[0].value == "true"}])
                }
                Some(e) => {
                    let bindings: Vec<_> = e
                        .answers
                        .iter()
                        .map(|a| {
                            let kind = if a.kind == chatty_kg_agents::ValueKind::Iri { "uri" } else { "literal" };
                            serde_json::json!({"answer": {"type": kind, "value": a.value}})
                        })
                        .collect();
                    serde_json::json!([{"head": {"vars": ["answer"]}, "results": {"bindings": bindings}}])
                }
                None => serde_json::json!([]),
            };
            serde_json::json!({
                "id": r.id,
                "question": [{"language": "en", "string": r.question}],
                "query": {"sparql": r.explanation.as_ref().and_then(|e| e.sparql.iter().find(|q| q.used)).map(|q| q.sparql.clone())},
                "answers": answers,
            })
        })
        .collect();
    serde_json::json!({"dataset": {"id": dataset}, "questions": questions})
}

fn aggregate_row(out: &mut String, name: &str, a: &Aggregate) {
    let _ = writeln!(
        out,
        "| {name} | {} | {:.3} | {:.3} | {:.3} | {:.3} |",
        a.questions, a.macro_precision, a.macro_recall, a.f1_of_macro_p_and_macro_r, a.mean_per_question_f1
    );
}

/// Retention (dialogue F1 / standalone F1, in %) by each F1 definition; `None` where the
/// standalone F1 is 0.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Retention {
    pub f1_of_macro_p_and_macro_r: Option<f64>,
    pub mean_per_question_f1: Option<f64>,
}

impl Retention {
    pub fn of(dialogue: &Summary, standalone: &Summary) -> Self {
        let (d, s) = (&dialogue.overall, &standalone.overall);
        Retention {
            f1_of_macro_p_and_macro_r: metrics::retention(d.f1_of_macro_p_and_macro_r, s.f1_of_macro_p_and_macro_r),
            mean_per_question_f1: metrics::retention(d.mean_per_question_f1, s.mean_per_question_f1),
        }
    }
}

/// A retention figure as the report and the CLI print it.
pub fn percent(value: Option<f64>) -> String {
    value.map_or_else(|| "undefined (standalone F1 is 0)".to_owned(), |v| format!("{v:.1} %"))
}

/// One plot of a report: its file name, title and SVG text (drawn by `plots`, linked from the
/// report's Markdown here).
pub struct Plot {
    pub file: String,
    pub title: String,
    pub svg: String,
}

/// A Markdown report of one or more summaries (e.g. dialogue and standalone), with retention.
/// The human report; `plots` (written beside it) are linked at the end.
pub fn markdown(title: &str, summaries: &[Summary], retention: Option<Retention>, plots: &[Plot]) -> String {
    let mut out = format!("# {title}\n\n");
    out.push_str("F1 is given both ways: **F1(macro P, macro R)** (the paper's) and **mean per-question F1**.\n\n");
    out.push_str("| run | questions | macro P | macro R | F1(macro P, macro R) | mean per-question F1 |\n|---|---|---|---|---|---|\n");
    for s in summaries {
        aggregate_row(&mut out, &s.label, &s.overall);
    }
    if let Some(r) = retention {
        let _ = writeln!(
            out,
            "\n**Retention** (dialogue F1 / standalone F1): {} with F1(macro P, macro R), {} with mean per-question F1",
            percent(r.f1_of_macro_p_and_macro_r),
            percent(r.mean_per_question_f1)
        );
    }
    for s in summaries {
        let _ = writeln!(out, "\n## {}\n", s.label);
        if s.unscored > 0 {
            let _ = writeln!(
                out,
                "{} questions not scored: their gold SPARQL did not run on this KG.\n",
                s.unscored
            );
        }
        if let Some(r) = &s.ranking {
            let _ = writeln!(
                out,
                "P@1 {:.3} · MRR {:.3} · Hit@5 {:.3}\n",
                r.p_at_1, r.mrr, r.hit_at_5
            );
        }
        let e = &s.efficiency;
        let _ = writeln!(
            out,
            "Per question: {:.2} LLM calls, {:.0} input + {:.0} output tokens, {:.2} SPARQL queries; latency p50 {:.0} ms, p95 {:.0} ms; without the model calls p50 {:.0} ms, p95 {:.0} ms.\n",
            e.llm_calls,
            e.input_tokens,
            e.output_tokens,
            e.sparql_queries,
            e.latency_ms_p50,
            e.latency_ms_p95,
            e.non_llm_ms_p50,
            e.non_llm_ms_p95
        );
        if let Some(f) = &s.follow_ups {
            let _ = writeln!(
                out,
                "Per follow-up (the {} turns after a dialogue's first): {:.2} LLM calls; latency p50 {:.0} ms, p95 {:.0} ms.\n",
                f.questions, f.llm_calls, f.latency_ms_p50, f.latency_ms_p95
            );
        }
        // In pipeline order.
        let stages: Vec<String> = StageTimings::default()
            .stages()
            .iter()
            .filter_map(|(k, _)| e.stage_ms.get(*k).map(|v| format!("{k} {v:.0} ms")))
            .collect();
        let _ = writeln!(out, "Mean time per stage: {}.\n", stages.join(", "));
        for (tag, values) in &s.by_tag {
            let _ = writeln!(
                out,
                "| {tag} | questions | macro P | macro R | F1(macro P, macro R) | mean per-question F1 |\n|---|---|---|---|---|---|"
            );
            for (value, a) in values {
                aggregate_row(&mut out, value, a);
            }
            out.push('\n');
        }
        if !s.failures.is_empty() {
            out.push_str("| failure | questions |\n|---|---|\n");
            for (failure, n) in &s.failures {
                let _ = writeln!(out, "| {failure} | {n} |");
            }
            out.push('\n');
        }
        if !s.errors.is_empty() {
            let errors: Vec<String> = s.errors.iter().map(|(k, n)| format!("{k} {n}")).collect();
            let _ = writeln!(out, "Errors: {}.\n", errors.join(", "));
        }
    }
    if !plots.is_empty() {
        out.push_str("## Plots\n\n");
        for plot in plots {
            let _ = writeln!(out, "![{}]({})\n", plot.title, plot.file);
        }
    }
    out
}
