//! `chatty-kg ask` and `chatty-kg chat`: the pipeline on the terminal, and how an explanation
//! reads there.

use anyhow::{Context, Result};
use chatty_kg_agents::{AttributeOf, ChoiceReason, Dialogue, Explanation, GenerateOnly, Mode, Pipeline, QueryReason};
use chatty_kg_config::{Config, LlmBackend};
use chatty_kg_graph::KnowledgeGraph;
use clap::Args;
use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::sync::Arc;

/// Which model answers, replacing the configuration for one command.
#[derive(Args, Clone)]
pub struct LlmArgs {
    /// An embedded model (catalog name or .gguf path) instead of the configured one.
    #[arg(long, conflicts_with = "llm_url")]
    pub model: Option<String>,
    /// Base URL of an OpenAI-compatible server (e.g. http://localhost:8000/v1) instead.
    #[arg(long)]
    pub llm_url: Option<String>,
    /// Model name to request from --llm-url.
    #[arg(long, requires = "llm_url")]
    pub llm_model: Option<String>,
    /// Also state each answer in a sentence (one more model call per question).
    #[arg(long)]
    pub verbalize: bool,
    /// Translate non-English questions to English first (one more model call per question).
    #[arg(long)]
    pub translate: bool,
}

impl LlmArgs {
    pub fn apply(&self, config: &mut Config) {
        if let Some(model) = &self.model {
            config.llm.backend = LlmBackend::Embedded;
            config.llm.embedded.model.clone_from(model);
        }
        if let Some(url) = &self.llm_url {
            config.llm.backend = LlmBackend::Openai;
            config.llm.openai.base_url.clone_from(url);
        }
        if let Some(model) = &self.llm_model {
            config.llm.openai.model.clone_from(model);
        }
        config.agents.verbalize |= self.verbalize;
        config.agents.translate |= self.translate;
    }
}

pub fn pipeline(config: &Config, kg: Arc<dyn KnowledgeGraph>) -> Result<Pipeline> {
    eprintln!("loading models…");
    Ok(Pipeline::new(config.agent_context(kg)?))
}

/// What `ask` prints per question.
#[derive(Debug, Clone, Copy)]
pub struct Output {
    /// The explanation as one JSON line.
    pub json: bool,
    /// How the answer was found, after it.
    pub explain: bool,
    /// The query instead of the answer.
    pub query_only: bool,
}

/// One question, or one per line of `questions` (`-`: stdin), each on its own (no dialogue).
pub async fn ask(
    pipeline: &Pipeline,
    question: Option<String>,
    questions: Option<PathBuf>,
    output: Output,
) -> Result<()> {
    let Output {
        json,
        explain,
        query_only,
    } = output;
    let list: Vec<String> = match (question, questions) {
        (Some(q), _) => vec![q],
        (None, Some(path)) => {
            let text = if path.as_os_str() == "-" {
                std::io::read_to_string(std::io::stdin()).context("reading questions from stdin")?
            } else {
                std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?
            };
            text.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(str::to_owned)
                .collect()
        }
        (None, None) => anyhow::bail!("give a question, or --questions FILE"),
    };
    let single = list.len() == 1;
    let mut failures = 0;
    for question in &list {
        let result = pipeline.ask(question, Mode::SingleTurn, &[]).await;
        let mut out = std::io::stdout().lock();
        match result {
            Ok(e) if query_only => {
                let GenerateOnly {
                    generated, explanation, ..
                } = e.generate_only();
                if json {
                    writeln!(out, "{}", serde_json::to_string(&explanation)?)?;
                    continue;
                }
                if !single {
                    writeln!(out, "> {question}")?;
                }
                match generated {
                    Some(q) if q.answered => writeln!(out, "{}", q.sparql)?,
                    Some(q) => writeln!(out, "# no answer on this graph; the best query tried:\n{}", q.sparql)?,
                    None => writeln!(out, "# no query: {}", explanation.text)?,
                }
                if explain {
                    write!(out, "{}", render(&explanation))?;
                }
            }
            Ok(e) if json => writeln!(out, "{}", serde_json::to_string(&e)?)?,
            Ok(e) => {
                if !single {
                    writeln!(out, "> {question}")?;
                }
                writeln!(out, "{}", e.text)?;
                if explain {
                    write!(out, "{}", render(&e))?;
                }
            }
            Err(error) if single => return Err(error.into()),
            Err(error) => {
                failures += 1;
                if json {
                    let line = serde_json::json!({"question": question, "error": error.to_string(), "error_kind": error.kind()});
                    writeln!(out, "{line}")?;
                } else {
                    writeln!(out, "error: {error}")?;
                }
            }
        }
    }
    if failures > 0 {
        eprintln!("{failures} of {} questions failed", list.len());
    }
    Ok(())
}

/// The terminal chat: each line is a question in one dialogue.
pub async fn chat(pipeline: &Pipeline) -> Result<()> {
    let max_answers = pipeline.context().params.context_answers;
    let mut dialogue = Dialogue::default();
    let mut last: Option<Explanation> = None;
    eprintln!(
        "Ask about the knowledge graph ({}). Commands: /explain, /json, /reset, /quit.",
        pipeline.context().kg.describe()
    );
    let stdin = std::io::stdin();
    loop {
        eprint!("> ");
        std::io::stderr().flush()?;
        let mut line = String::new();
        if stdin.lock().read_line(&mut line)? == 0 {
            break;
        }
        let line = line.trim();
        match line {
            "" => continue,
            "/quit" | "/exit" => break,
            "/reset" => {
                dialogue = Dialogue::default();
                last = None;
                eprintln!("(new dialogue)");
            }
            "/explain" => match &last {
                Some(e) => print!("{}", render(e)),
                None => eprintln!("(nothing asked yet)"),
            },
            "/json" => match &last {
                Some(e) => println!("{}", serde_json::to_string_pretty(e)?),
                None => eprintln!("(nothing asked yet)"),
            },
            question => match pipeline.ask(question, Mode::MultiTurn, &dialogue.turns).await {
                Ok(e) => {
                    println!("{}", e.text);
                    dialogue.record(&e, max_answers);
                    last = Some(e);
                }
                // The dialogue keeps going: the failed question is not a turn.
                Err(error) => eprintln!("error: {error}"),
            },
        }
    }
    Ok(())
}

/// "How I got this", as text.
pub fn render(e: &Explanation) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let _ = writeln!(s, "  question: {}", e.resolved_question);
    for r in e.resolution.iter().flat_map(|r| &r.references) {
        let fitting: Vec<&str> = r.fitting.iter().map(|c| c.label.as_str()).collect();
        let chosen = r
            .chosen
            .as_ref()
            .map_or("nothing (left as written)", |c| c.label.as_str());
        let _ = writeln!(
            s,
            "  referent: {:?} ({:?}) → {chosen} ({:?}; fitting: {}; {} offered by the dialogue)",
            r.reference.text,
            r.reference.kind,
            r.method,
            fitting.join(", "),
            r.offered
        );
    }
    if let Some(c) = &e.clarified {
        let _ = writeln!(s, "  your choice: {:?} → option {}, {}", c.mention, c.option + 1, c.iri);
    }
    if let Some(set) = &e.answer_set {
        let of = match (&set.of_question, set.turn) {
            (Some(q), _) => format!("the answer to {q:?} (an earlier question with another entity)"),
            (None, Some(t)) => format!("the answer of turn {t}"),
            (None, None) => "an earlier answer".to_owned(),
        };
        let operation = match (&set.role, set.count) {
            (_, true) => format!("counted the {} values of {of}", set.members.len()),
            (chatty_kg_agents::state::SetRole::Filter, _) => {
                format!("restricted to the {} values of {of}", set.members.len())
            }
            (chatty_kg_agents::state::SetRole::Anchor { .. }, _) => {
                format!("asked of each of the {} values of {of}", set.members.len())
            }
        };
        let _ = writeln!(s, "  {operation}");
    }
    if !e.excluded.is_empty() {
        let _ = writeln!(
            s,
            "  \"else\": left out what the previous turn named: {}",
            e.excluded
                .iter()
                .map(|m| m.label.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    if let Some(qir) = &e.qir {
        let triples: Vec<String> = qir
            .triples
            .iter()
            .map(|t| format!("⟨{}, {}, {}⟩", term(&t.subject), t.relation, term(&t.object)))
            .collect();
        let _ = writeln!(s, "  QIR ({:?}): {}", qir.kind, triples.join(" "));
    }
    for link in &e.entities {
        match (&link.label, &link.iri) {
            (Some(label), Some(iri)) => {
                let words = if link.read_as_words {
                    "; read as words of the relation: no path joined it with the other mention"
                } else {
                    ""
                };
                let _ = writeln!(
                    s,
                    "  entity: {:?} → {label} <{iri}> ({:?}, {} candidates{words})",
                    link.mention, link.method, link.candidates
                );
            }
            _ => {
                let _ = writeln!(s, "  entity: {:?} → not in the graph", link.mention);
            }
        }
    }
    if let Some(form) = &e.form {
        let mut order = match form.order {
            Some(o) => format!(", order {o:?} by {}", form.superlative_words.join(" ")),
            None => String::new(),
        };
        if form.offset > 0 {
            let _ = write!(order, ", skipping {}", form.offset);
        }
        if let Some(c) = &form.constraint {
            let and = c
                .and
                .map(|b| format!(" and {:?} {}", b.comparison, b.value))
                .unwrap_or_default();
            let _ = write!(
                order,
                ", value: {:?} {}{and} (\"{}\", an attribute like \"{}\")",
                c.comparison,
                c.value,
                c.phrase,
                c.attribute_words.join(" ")
            );
        }
        let _ = writeln!(
            s,
            "  form: {:?} (expects {:?}{order}; from the {:?})",
            form.kind, form.expects, form.decided_by
        );
    }
    if let Some(class) = &e.class {
        let _ = writeln!(
            s,
            "  class: {:?} → {} <{}> ({:?}{})",
            class.mention,
            class.label,
            class.iri,
            class.role,
            if class.applied {
                ""
            } else {
                ", not applied: no path reached its instances"
            }
        );
    }
    if let Some(search) = &e.path_search {
        let _ = writeln!(
            s,
            "  path search: {} paths, {} hops, {} queries, {:.0} ms{}",
            search.paths_found,
            search.hops,
            search.queries,
            search.elapsed_ms,
            search.cut.as_deref().map(|c| format!(" ({c})")).unwrap_or_default()
        );
        if let Some(only) = search.only_relation {
            let _ = writeln!(s, "  no relation's name fits the words: {}", only.describe());
        }
        if !search.class_queries.is_empty() {
            let slowest = search.class_queries.iter().map(|q| q.elapsed_ms).fold(0.0, f64::max);
            let _ = writeln!(
                s,
                "  class queries: {}, slowest {:.0} ms{}",
                search.class_queries.len(),
                slowest,
                match search.timed_out() {
                    0 => String::new(),
                    n => format!(", {n} timed out"),
                }
            );
        }
    }
    let chosen = e.path_choice.map(|c| c.index);
    for (i, path) in e.paths.iter().enumerate().take(5) {
        let mark = if Some(i) == chosen { "*" } else { " " };
        let held = match (path.reaches_class, path.class_selects, path.kinds_elsewhere) {
            (false, ..) => "",
            (true, false, _) => "  (reaches the class)",
            (true, true, false) => "  (reaches the class among other kinds: only its instances answer)",
            (true, true, true) => {
                "  (reaches the class, few typed; the relation holds of other kinds elsewhere: only its instances answer)"
            }
        };
        let _ = writeln!(s, "  path{mark} {:.3}  {}{held}", path.score, path.text);
        for hop in path.path.hops.iter().filter(|h| !h.also.is_empty()) {
            let predicates: Vec<String> = hop.predicates().map(|p| format!("<{p}>")).collect();
            let _ = writeln!(s, "        \"{}\" is any of {}", hop.label, predicates.join(", "));
        }
    }
    if let Some(choice) = e.path_choice {
        let why = match choice.reason {
            ChoiceReason::Only => "the only path that fits".to_owned(),
            ChoiceReason::Margin => format!("best by a margin of {:.3}", choice.margin.unwrap_or(0.0)),
            ChoiceReason::Model => format!("picked by the model (margin {:.3})", choice.margin.unwrap_or(0.0)),
            ChoiceReason::Class => {
                "of the paths the words tell no more apart, the shortest reaching most of the class named".to_owned()
            }
            ChoiceReason::Several => {
                "'how many' or a plural wants several: the tied path that reaches several values".to_owned()
            }
        };
        let _ = writeln!(s, "  chosen: {why}");
    }
    if let Some(example) = &e.example {
        let _ = writeln!(
            s,
            "  example {} (similarity {:.2}, {}): {}",
            example.id,
            example.similarity,
            if example.answered { "answered" } else { "no answer here" },
            example.question
        );
    }
    for q in &e.sparql {
        let reason = match q.reason {
            QueryReason::ChosenPath => "chosen path",
            QueryReason::Join => "two anchors joined",
            QueryReason::Fallback => "next path",
            QueryReason::Class => "the class named",
            QueryReason::Value => "an attribute held to the question's value",
            QueryReason::AnswerSet => "an earlier answer's members, ordered",
            QueryReason::Homonym => "same path from a homonym",
            QueryReason::Example => "an example from feedback",
            QueryReason::Witness => "what made the yes true",
            QueryReason::EarlierQuestion => "an earlier question of another entity: the set restricted",
        };
        let status = match &q.error {
            Some(error) => format!("error: {error}"),
            None => format!("{} rows{}", q.rows, if q.used { ", used" } else { "" }),
        };
        let _ = writeln!(s, "  sparql ({reason}; {status}; {:.1} ms): {}", q.elapsed_ms, q.sparql);
        if let Some(a) = &q.attribute {
            let _ = writeln!(
                s,
                "    {} by \"{}\" <{}>: most like \"{}\" ({:.2}) of {} number or date attributes",
                match a.of {
                    AttributeOf::Superlative => "ordered",
                    AttributeOf::Value => "held to the value",
                },
                a.label,
                a.predicate,
                a.words,
                a.similarity,
                a.compared
            );
        }
    }
    for value in e.answers.iter().take(3) {
        for [subject, predicate, object] in value.provenance.iter().take(3) {
            let _ = writeln!(
                s,
                "  because: {} {} {}",
                local(subject),
                local(predicate),
                local(object)
            );
        }
    }
    let t = &e.timings;
    let _ = writeln!(
        s,
        "  time: understanding {:.0} ms, linking {:.0} ms, query selection {:.0} ms, execution {:.0} ms, total {:.0} ms",
        t.understanding_ms, t.linking_ms, t.query_selection_ms, t.execution_ms, t.total_ms
    );
    let per_agent: Vec<String> = e
        .llm
        .by_agent
        .iter()
        .map(|(agent, c)| format!("{agent} {}", c.calls))
        .collect();
    let _ = writeln!(
        s,
        "  LLM: {} calls ({}), {} input + {} output tokens",
        e.llm.calls,
        per_agent.join(", "),
        e.llm.input_tokens,
        e.llm.output_tokens
    );
    s
}

/// The last segment of an IRI, for reading (`…/entity/Tom_Hanks` → `Tom_Hanks`); literals as they are.
fn local(value: &str) -> &str {
    if value.contains("://") {
        value
            .trim_end_matches(['/', '#'])
            .rsplit(['/', '#'])
            .next()
            .unwrap_or(value)
    } else {
        value
    }
}

fn term(t: &chatty_kg_agents::QirTerm) -> String {
    match t {
        chatty_kg_agents::QirTerm::Entity(name) => name.clone(),
        chatty_kg_agents::QirTerm::Variable(name) => format!("?{name}"),
    }
}
