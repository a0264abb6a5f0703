//! `chatty-kg eval`: a benchmark file through the pipeline, into a results directory:
//! `answers.jsonl` (one record per question; an interrupted run resumes from it),
//! `summary.json`, `answers.qald.json` (the system's answers for external scorers) and
//! `report.md`. With `--mode both`, dialogue and standalone runs go to `dialogue/` and
//! `standalone/`, and the report adds retention.

use anyhow::{Context, Result};
use chatty_kg_agents::Pipeline;
use chatty_kg_eval::runner::{self, RunMode, RunOptions};
use chatty_kg_eval::summary::{self, Summary};
use chatty_kg_eval::{Format, loaders, metrics};
use chatty_kg_graph::KnowledgeGraph;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct EvalArgs {
    /// The benchmark file (QALD-JSON, LC-QuAD JSON, MetaQA qa_*.txt, PathQuestion .txt, Chatty-Gen JSON).
    pub file: PathBuf,
    /// The file's format, when its name and contents do not tell.
    #[arg(long, value_parser = parse_format)]
    pub format: Option<Format>,
    /// The language of QALD questions.
    #[arg(long, default_value = "en")]
    pub language: String,
    /// The first N questions (dialogues).
    #[arg(long)]
    pub limit: Option<usize>,
    /// A seeded random sample of N questions (dialogues).
    #[arg(long)]
    pub sample: Option<usize>,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Questions (dialogues) answered at once.
    #[arg(long, default_value_t = 1)]
    pub concurrency: usize,
    /// Dialogue benchmarks: turns in context, each standalone version alone, or both (retention).
    #[arg(long, value_enum, default_value = "dialogue")]
    pub mode: ModeArg,
    /// Results directory (default: reports/<file name>).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ModeArg {
    Dialogue,
    Standalone,
    Both,
}

fn parse_format(text: &str) -> Result<Format, String> {
    Format::ALL
        .into_iter()
        .find(|f| f.name() == text)
        .ok_or_else(|| format!("one of {}", Format::ALL.map(Format::name).join(", ")))
}

pub async fn eval(pipeline: &Pipeline, kg: &dyn KnowledgeGraph, args: &EvalArgs) -> Result<()> {
    let format = match args.format {
        Some(f) => f,
        None => Format::detect(&args.file)?,
    };
    let items = loaders::load(format, &args.file, &args.language)?;
    let name = args
        .file
        .file_stem()
        .map_or_else(|| "benchmark".into(), |s| s.to_string_lossy().into_owned());
    let out = args.out.clone().unwrap_or_else(|| PathBuf::from("reports").join(&name));
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    let modes: &[RunMode] = match args.mode {
        ModeArg::Dialogue => &[RunMode::Dialogue],
        ModeArg::Standalone => &[RunMode::Standalone],
        ModeArg::Both => &[RunMode::Dialogue, RunMode::Standalone],
    };
    let mut summaries = Vec::new();
    for &mode in modes {
        let options = RunOptions {
            mode,
            limit: args.limit,
            sample: args.sample.map(|n| (n, args.seed)),
            concurrency: args.concurrency,
            context_answers: pipeline.context().params.context_answers,
            progress: !args.quiet,
        };
        let dir = if modes.len() > 1 {
            out.join(mode_name(mode))
        } else {
            out.clone()
        };
        std::fs::create_dir_all(&dir)?;
        let units = runner::select(items.clone(), &options);
        let ids: std::collections::HashSet<String> = units.iter().flatten().map(|i| i.id.clone()).collect();
        let answers = dir.join("answers.jsonl");
        let asked = runner::run(pipeline, kg, units, &options, &answers).await?;
        // The summary covers this selection only (a resumed file may hold more).
        let records: Vec<_> = runner::read_records(&answers)?
            .into_iter()
            .filter(|r| ids.contains(&r.id))
            .collect();
        let dialogues = items.iter().any(|i| i.dialogue.is_some());
        let label = if dialogues {
            format!("{name} ({})", mode_name(mode))
        } else {
            name.clone()
        };
        let summary = summary::summarize(&label, &records);
        write_json(&dir.join("summary.json"), &summary)?;
        write_json(&dir.join("answers.qald.json"), &summary::qald_json(&name, &records))?;
        eprintln!(
            "{label}: {} questions ({asked} asked now), F1(macro P, macro R) {:.3}, mean per-question F1 {:.3}",
            summary.questions, summary.overall.f1_of_macro_p_and_macro_r, summary.overall.mean_per_question_f1
        );
        summaries.push(summary);
    }
    let retention = retention(&summaries);
    let report = summary::markdown(&format!("{name} on {}", kg.describe()), &summaries, retention);
    std::fs::write(out.join("report.md"), report).with_context(|| format!("writing {}", out.display()))?;
    if let Some(r) = retention {
        eprintln!("retention: {r:.1} %");
    }
    eprintln!("results in {}", out.display());
    Ok(())
}

fn mode_name(mode: RunMode) -> &'static str {
    match mode {
        RunMode::Dialogue => "dialogue",
        RunMode::Standalone => "standalone",
    }
}

fn retention(summaries: &[Summary]) -> Option<f64> {
    let [dialogue, standalone] = summaries else {
        return None;
    };
    metrics::retention(
        dialogue.overall.f1_of_macro_p_and_macro_r,
        standalone.overall.f1_of_macro_p_and_macro_r,
    )
}

fn write_json(path: &Path, value: &impl serde::Serialize) -> Result<()> {
    let text = serde_json::to_string_pretty(value)?;
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
}
