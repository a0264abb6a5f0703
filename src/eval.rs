//! `chatty-kg eval`: a benchmark file through the pipeline, into a results directory:
//! `answers.jsonl` (one record per question; an interrupted run resumes from it),
//! `summary.json`, `answers.qald.json` (the system's answers for external scorers) and
//! `report.md`. With `--mode both`, dialogue and standalone runs go to `dialogue/` and
//! `standalone/`, and the report adds retention by both F1 definitions (also in `retention.json`).

use anyhow::{Context, Result};
use chatty_kg_agents::Pipeline;
use chatty_kg_eval::runner::{self, RunMode, RunOptions};
use chatty_kg_eval::summary::{self, Retention, Summary};
use chatty_kg_eval::{Format, dialogues, kb, loaders, plots};
use chatty_kg_graph::{EmbeddedStore, GraphSettings, KnowledgeGraph, RdfFile};
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
    /// Load this KB into a temporary embedded store and run on it: name triples
    /// (`subj<TAB>rel<TAB>obj` or `subj|rel|obj`, .txt/.tsv, e.g. PathQuestion's 2H-kb.txt) or an
    /// RDF file.
    #[arg(long)]
    pub kb: Option<PathBuf>,
    /// Build the KG from the benchmark file itself and run on it, in a temporary embedded store:
    /// the union of the `triples` of a Chatty-Gen Subgraph dialogue file (objects with their
    /// values), each vertex named by its name triple, its dialogue's `seed_label`, or its IRI.
    #[arg(long, conflicts_with = "kb")]
    pub kg_from_dialogues: bool,
    /// With --kg-from-dialogues: leave every label triple out (no name triples, no seed labels),
    /// so every vertex is named from its IRI.
    #[arg(long, requires = "kg_from_dialogues")]
    pub drop_labels: bool,
    /// Examples from feedback (a file `GET /api/examples` or `chatty-kg examples export`
    /// wrote) used for every question, as an operator's import would share them.
    #[arg(long)]
    pub examples: Option<PathBuf>,
}

/// Puts the examples of `file` in the pipeline's book, shared; how many.
pub fn load_examples(pipeline: &chatty_kg_agents::Pipeline, file: &Path) -> Result<usize> {
    use chatty_kg_agents::candidates::examples::Holder;
    let examples = chatty_kg_server::examples::read_file(file).map_err(anyhow::Error::msg)?;
    let ctx = pipeline.context();
    for exported in &examples.examples {
        let example = chatty_kg_server::examples::imported(ctx.embedder.as_ref(), exported)?;
        ctx.examples.insert(&exported.id, Holder::Everyone, example)?;
    }
    Ok(examples.examples.len())
}

#[derive(clap::Args)]
pub struct BuildDialoguesArgs {
    /// The MetaQA directory: 1-hop/, 2-hop/ and 3-hop/ with qa_dev.txt (and its qtype and
    /// kb-consistent files).
    #[arg(long)]
    pub metaqa: PathBuf,
    /// How many dialogues.
    #[arg(long, default_value_t = 50)]
    pub dialogues: usize,
    /// Turns per dialogue, at most.
    #[arg(long, default_value_t = 3)]
    pub max_turns: usize,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// The JSON file to write.
    #[arg(long)]
    pub out: PathBuf,
}

/// Writes MetaQA dialogues ([`chatty_kg_eval::dialogues`]) to `args.out`.
pub fn build_dialogues(args: &BuildDialoguesArgs) -> Result<()> {
    let dev = |hops: &str| args.metaqa.join(format!("{hops}-hop")).join("qa_dev.txt");
    let one_hop = loaders::metaqa::load(&dev("1"))?;
    let mut multi_hop = loaders::metaqa::load(&dev("2"))?;
    multi_hop.extend(loaders::metaqa::load(&dev("3"))?);
    let options = dialogues::BuildOptions {
        dialogues: args.dialogues,
        max_turns: args.max_turns,
        seed: args.seed,
    };
    let data = dialogues::build(&one_hop, &multi_hop, &options);
    let sources = ["1", "2", "3"].map(|h| format!("{h}-hop/qa_dev.txt")).to_vec();
    let file = dialogues::DialogueFile {
        description: dialogues::describe(&options, &sources),
        data,
    };
    if let Some(parent) = args.out.parent() {
        std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
    }
    write_json(&args.out, &file)?;
    let turns: usize = file.data.iter().map(|d| d.dialogue.len()).sum();
    let answer = file.data.iter().filter(|d| d.tags[0]["reference"] == "answer").count();
    eprintln!(
        "{} dialogues ({answer} answer-reference, {} entity-reference), {turns} turns, in {}",
        file.data.len(),
        file.data.len() - answer,
        args.out.display()
    );
    if file.data.len() < args.dialogues {
        eprintln!("(only {} could be built from these questions)", file.data.len());
    }
    Ok(())
}

/// Loads `file` into a fresh temporary embedded store (the directory is removed on drop).
pub fn load_kb(file: &Path, settings: &GraphSettings, progress: bool) -> Result<tempfile::TempDir> {
    let name_triples = matches!(file.extension().and_then(|e| e.to_str()), Some("txt" | "tsv"));
    if !name_triples {
        return temporary_store(settings, progress, |_| Ok(RdfFile::new(file)?));
    }
    temporary_store(settings, progress, |dir| {
        let stem = file
            .file_stem()
            .map_or_else(|| "kb".into(), |s| s.to_string_lossy().into_owned());
        let namespace = kb::namespace(&stem);
        let (rdf, converted) = write_ntriples(dir, |out| Ok(kb::name_triples_to_ntriples(file, &namespace, out)?))?;
        eprintln!(
            "{}: {} triples, {} entities, {} relations (as <{namespace}…>)",
            file.display(),
            converted.triples,
            converted.entities,
            converted.relations
        );
        Ok(rdf)
    })
}

/// Builds the KG of a dialogue file's triples ([`kb::dialogue_triples_to_ntriples`]) in a fresh
/// temporary embedded store (removed on drop).
pub fn load_dialogue_kg(
    file: &Path,
    drop_labels: bool,
    settings: &GraphSettings,
    progress: bool,
) -> Result<tempfile::TempDir> {
    temporary_store(settings, progress, |dir| {
        let (rdf, kg) = write_ntriples(dir, |out| Ok(kb::dialogue_triples_to_ntriples(file, drop_labels, out)?))?;
        eprintln!(
            "{}: {} dialogues, {} triples, {} vertices ({})",
            file.display(),
            kg.dialogues,
            kg.triples,
            kg.vertices,
            if drop_labels {
                format!(
                    "{} label triples left out: the store names every vertex from its IRI",
                    kg.dropped
                )
            } else {
                format!("{} named by seed_label, {} by their IRI", kg.seed_labels, kg.iri_labels)
            }
        );
        Ok(rdf)
    })
}

/// `write` into `<dir>/kb.nt`, flushed: the file to load and what `write` reported.
fn write_ntriples<T>(
    dir: &Path,
    write: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> Result<T>,
) -> Result<(RdfFile, T)> {
    let nt = dir.join("kb.nt");
    let mut out =
        std::io::BufWriter::new(std::fs::File::create(&nt).with_context(|| format!("creating {}", nt.display()))?);
    let report = write(&mut out)?;
    std::io::Write::flush(&mut out).with_context(|| format!("writing {}", nt.display()))?;
    Ok((RdfFile::new(&nt)?, report))
}

/// A temporary directory with a store at `store/`, loaded from the file `rdf` names (it may
/// write that file into the directory first).
fn temporary_store(
    settings: &GraphSettings,
    progress: bool,
    rdf: impl FnOnce(&Path) -> Result<RdfFile>,
) -> Result<tempfile::TempDir> {
    let dir = tempfile::Builder::new()
        .prefix("chatty-kg-kb-")
        .tempdir()
        .context("creating a temporary store directory")?;
    let file = rdf(dir.path())?;
    let report = EmbeddedStore::load(&dir.path().join("store"), &[file], settings, progress)?;
    eprintln!(
        "loaded into a temporary store {}: {} triples, {} labels, in {:.1} s",
        dir.path().display(),
        report.store_size,
        report.labels,
        report.seconds
    );
    Ok(dir)
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
    let stem = args
        .file
        .file_stem()
        .map_or_else(|| "benchmark".into(), |s| s.to_string_lossy().into_owned());
    let out = args.out.clone().unwrap_or_else(|| PathBuf::from("reports").join(&stem));
    // The run's name: the results directory's (MetaQA's files are all called qa_dev.txt).
    let name = out.file_name().map_or(stem, |n| n.to_string_lossy().into_owned());
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
    let plots = plots::plots(&summaries);
    for plot in &plots {
        let path = out.join(&plot.file);
        std::fs::write(&path, &plot.svg).with_context(|| format!("writing {}", path.display()))?;
    }
    let graph = match (&args.kb, args.kg_from_dialogues) {
        (Some(kb), _) => format!("the KB {} (in a temporary store)", kb.display()),
        (None, true) => format!(
            "the KG built from the triples of {}{} (in a temporary store)",
            args.file
                .file_name()
                .map_or_else(|| args.file.display().to_string(), |n| n.to_string_lossy().into_owned()),
            if args.drop_labels {
                ", every label triple left out"
            } else {
                ""
            }
        ),
        (None, false) => kg.describe(),
    };
    let graph = match &args.examples {
        Some(file) => format!(
            "{graph}, with the {} examples from feedback of {}",
            pipeline.context().examples.len(),
            file.display()
        ),
        None => graph,
    };
    let report = summary::markdown(&format!("{name} on {graph}"), &summaries, retention, &plots);
    std::fs::write(out.join("report.md"), report).with_context(|| format!("writing {}", out.display()))?;
    if let Some(r) = retention {
        write_json(&out.join("retention.json"), &r)?;
        eprintln!(
            "retention: {} (F1(macro P, macro R)), {} (mean per-question F1)",
            summary::percent(r.f1_of_macro_p_and_macro_r),
            summary::percent(r.mean_per_question_f1)
        );
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

fn retention(summaries: &[Summary]) -> Option<Retention> {
    let [dialogue, standalone] = summaries else {
        return None;
    };
    Some(Retention::of(dialogue, standalone))
}

fn write_json(path: &Path, value: &impl serde::Serialize) -> Result<()> {
    let text = serde_json::to_string_pretty(value)?;
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
}
