//! Knowledge-graph access for chatty-kg.
//!
//! One async trait, [`KnowledgeGraph`], with two backends: [`EmbeddedStore`] (Oxigraph on RocksDB,
//! with a persisted label index for entity search) and [`SparqlEndpoint`] (any SPARQL 1.1 endpoint
//! over HTTP). Both run only read-only queries ([`ReadQuery`]), search entities by label and list
//! the predicates around a vertex.
//!
//! ```no_run
//! # async fn demo() -> Result<(), chatty_kg_graph::GraphError> {
//! use chatty_kg_graph::{EmbeddedStore, GraphSettings, KnowledgeGraph};
//! let kg = EmbeddedStore::open("store".as_ref(), GraphSettings::default())?;
//! for candidate in kg.search_entities("tom hanks", 5).await? {
//!     println!("{}\t{}", candidate.iri, candidate.label);
//! }
//! # Ok(()) }
//! ```

pub mod conventions;
mod counted;
mod error;
mod facts;
mod label_index;
mod label_source;
mod load;
mod load_counts;
mod lock;
mod oxigraph;
pub mod profile;
mod query;
mod settings;
mod sparql_endpoint;
pub mod text;
mod vocabulary;
mod worker;

pub use crate::conventions::{Conventions, PropertyEntity, PropertyRole, RDFS_TYPES, TypeVocabulary};
pub use crate::error::GraphError;
pub use crate::facts::GraphFacts;
pub use crate::label_index::{LabelEntry, LabelIndex};
pub use crate::load::{LoadReport, RdfFile};
pub use crate::load_counts::{LoadCounts, PredicateCounts};
pub use crate::oxigraph::EmbeddedStore;
pub use crate::query::{
    MAX_DEPTH, MAX_NESTING, ReadQuery, direct_instances_query, entity_search_query, instance_of, instances_query,
    labelled_neighbours_query, listed_instance_of, named_node, neighbourhood_query, neighbourhood_sample_query,
    predicates_around_query, predicates_between_query, subclasses_of_query, subjects_query, triple,
    value_subjects_query, var,
};
use crate::query::{classes_query, degrees_query, labels_query};
pub use crate::settings::{
    EndpointAuth, EndpointSettings, GraphSettings, HttpMethod, RDFS_LABEL, REDACTED, ResultsFormat, SearchStrategy,
    redact_url,
};
pub use crate::sparql_endpoint::SparqlEndpoint;
pub use crate::worker::{WORKER_COMMAND, use_program as use_worker_program};

/// The worker's side of a user-written query (`chatty-kg sparql-worker DIR MEMORY_BYTES
/// CPU_SECONDS`, started by the binary itself): its exit code. See `worker.rs`.
pub fn serve_worker(args: &[String]) -> i32 {
    worker::serve(args, oxigraph::evaluate_read_only)
}
pub use ::oxigraph::model::{Literal, NamedNode, Term};

use async_trait::async_trait;
use serde::Serialize;
use std::collections::HashMap;
use std::sync::Arc;

/// The rows of a SELECT, or the answer of an ASK.
#[derive(Debug, Clone, PartialEq)]
pub enum QueryResults {
    Solutions(Solutions),
    Boolean(bool),
}

/// SELECT results: variable names (without `?`) and one row per solution, `None` for unbound.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Solutions {
    pub variables: Vec<String>,
    pub rows: Vec<Vec<Option<Term>>>,
    /// True when rows were dropped to respect [`GraphSettings::max_rows`].
    pub truncated: bool,
}

impl Solutions {
    /// The values of one variable, in row order, unbound ones skipped.
    pub fn column(&self, variable: &str) -> impl Iterator<Item = &Term> {
        let index = self.variables.iter().position(|v| v == variable);
        self.rows
            .iter()
            .filter_map(move |row| index.and_then(|i| row.get(i)).and_then(Option::as_ref))
    }

    /// The IRIs one variable is bound to, in row order (literals, blank nodes and unbound
    /// values skipped).
    pub fn iris(&self, variable: &str) -> impl Iterator<Item = &str> {
        self.column(variable).filter_map(|t| match t {
            Term::NamedNode(n) => Some(n.as_str()),
            _ => None,
        })
    }

    /// Rows whose first two values are an IRI and a literal (`?entity ?label`, `?entity ?count`).
    pub fn iri_literal_pairs(&self) -> impl Iterator<Item = (&str, &Literal)> {
        self.rows
            .iter()
            .filter_map(|row| match (row.first()?.as_ref()?, row.get(1)?.as_ref()?) {
                (Term::NamedNode(iri), Term::Literal(literal)) => Some((iri.as_str(), literal)),
                _ => None,
            })
    }
}

/// An IRI or a literal's lexical form, as answers and provenance show terms; `None` for a blank
/// node.
pub fn term_text(term: &Term) -> Option<String> {
    match term {
        Term::NamedNode(n) => Some(n.as_str().to_owned()),
        Term::Literal(l) => Some(l.value().to_owned()),
        _ => None,
    }
}

/// An entity found by label search.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EntityCandidate {
    pub iri: String,
    pub label: String,
    /// Match quality from [`text::match_score`]; higher is better.
    pub score: f32,
}

/// Whether a predicate leaves the vertex (`<v> p ?o`) or arrives at it (`?s p <v>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    Outgoing,
    Incoming,
}

/// A predicate next to a vertex, with the human label relation linking compares to phrases.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PredicateLink {
    pub iri: String,
    pub label: String,
    pub direction: Direction,
}

/// Access to one knowledge graph. Every backend answers the same calls the same way; the backend
/// test suite (`crates/graph/tests/backend_suite.rs`) runs against each.
#[async_trait]
pub trait KnowledgeGraph: Send + Sync {
    /// A short description for logs and explanations (store path or endpoint URL).
    fn describe(&self) -> String;

    /// The settings this graph was opened with (label predicates, blacklist, limits).
    fn settings(&self) -> &GraphSettings;

    /// Runs a read-only query, bounded by the configured timeout and row limit.
    async fn query(&self, query: &ReadQuery) -> Result<QueryResults, GraphError>;

    /// What the backend remembers about its whole graph ([`GraphFacts`]), kept for its lifetime
    /// like its profile; `None` (this default) remembers nothing.
    fn facts(&self) -> Option<&GraphFacts> {
        None
    }

    /// Runs a query whose answer is a fact about the whole graph, the same whatever the question
    /// ("does this relation anywhere hold of something outside this class?"): a backend with
    /// [`facts`](Self::facts) asks the graph once and remembers a small answer.
    async fn query_fact(&self, query: &ReadQuery) -> Result<QueryResults, GraphError> {
        match self.facts() {
            Some(facts) => facts.answer(self, query).await,
            None => self.query(query).await,
        }
    }

    /// Raw `(iri, label)` pairs whose label matches `text`, unranked and possibly more than
    /// `limit` (backends fetch extra so the shared ranking can choose).
    async fn label_matches(&self, text: &str, limit: usize) -> Result<Vec<(String, String)>, GraphError>;

    /// `(iri, label)` pairs whose label of several words has `acronym` as its initials ("US":
    /// "United States"; every word's first letter, or every word but the small ones), up to
    /// `limit`, unranked. A backend without an index of initials (a remote endpoint, whose
    /// labels are searched by its own full-text index) finds none.
    async fn initials_matches(&self, acronym: &str, limit: usize) -> Result<Vec<(String, String)>, GraphError> {
        let _ = (acronym, limit);
        Ok(Vec::new())
    }

    /// Number of triples in which each IRI appears as subject or object, counted up to
    /// `DEGREE_CAP` (100 000) each, in one grouped COUNT query (the same on every backend; a
    /// backend may override it with something cheaper).
    async fn degrees(&self, iris: &[&str]) -> Result<HashMap<String, u64>, GraphError> {
        let query = degrees_query(iris)?;
        let QueryResults::Solutions(solutions) = self.query(&query).await? else {
            return Ok(HashMap::new());
        };
        Ok(solutions
            .iri_literal_pairs()
            .filter_map(|(iri, count)| Some((iri.to_owned(), count.value().parse().ok()?)))
            .collect())
    }

    /// A label for each IRI that has one in the graph (the earliest configured label predicate
    /// wins, so rdfs:label before skos:altLabel; `[]` → no query).
    async fn graph_labels(&self, iris: &[&str]) -> Result<HashMap<String, String>, GraphError> {
        preferred_literals(
            self,
            iris,
            &self.settings().label_predicates,
            &[&self.settings().language],
        )
        .await
    }

    /// [`labels`](Self::labels) in `language` where the graph has them (a question asked in
    /// German is answered with German names), else in the configured language, then untagged,
    /// then any.
    async fn labels_in(&self, iris: &[&str], language: &str) -> Result<HashMap<String, String>, GraphError> {
        let configured = self.settings().language.as_str();
        let labels = preferred_literals(self, iris, &self.settings().label_predicates, &[language, configured]).await?;
        Ok(named_from_iris(self.settings(), iris, labels))
    }

    /// A description of each IRI that has one (the graph's description predicates,
    /// `schema:description`: "Debian source package"), in the configured language where there
    /// is one; what tells homonyms apart in a clarifying question.
    async fn descriptions(&self, iris: &[&str]) -> Result<HashMap<String, String>, GraphError> {
        let profile = self.profile_or_default().await;
        let predicates = &profile.conventions.description_predicates;
        if predicates.is_empty() {
            return Ok(HashMap::new());
        }
        preferred_literals(self, iris, predicates, &[&self.settings().language]).await
    }

    /// A name for each IRI: its label in the graph ([`graph_labels`](Self::graph_labels)); with
    /// `iri_names`, every other IRI is named from its IRI ([`text::iri_name`]).
    async fn labels(&self, iris: &[&str]) -> Result<HashMap<String, String>, GraphError> {
        let labels = self.graph_labels(iris).await?;
        Ok(named_from_iris(self.settings(), iris, labels))
    }

    /// How relation linking reads each predicate: its own label in the graph where it has one
    /// (Wikidata's `P57` is "director"), else [`text::predicate_label`] of its IRI.
    async fn predicate_names(&self, iris: &[&str]) -> Result<HashMap<String, String>, GraphError> {
        look_up_predicate_names(self, iris).await
    }

    /// The classes (`rdf:type`, or the graph's own typing predicate) of each IRI, named by their
    /// `rdfs:label` where the graph has one and by their IRI's local name otherwise, in one
    /// bounded query (at most 20 per IRI, `[]` → no query).
    async fn classes(&self, iris: &[&str]) -> Result<HashMap<String, Vec<String>>, GraphError> {
        const PER_IRI: usize = 20;
        let mut out: HashMap<String, Vec<String>> = HashMap::new();
        if iris.is_empty() {
            return Ok(out);
        }
        let profile = self.profile_or_default().await;
        let types = profile.conventions.types();
        for chunk in iris.chunks(LABELS_PER_QUERY) {
            let query = classes_query(chunk, chunk.len() * PER_IRI, types, &self.settings().label_predicates)?;
            let QueryResults::Solutions(solutions) = self.query(&query).await? else {
                continue;
            };
            // (IRI, class) in order → (rank of the label's language, name): a class labelled in
            // several languages is named once, in the configured one first.
            let mut named: Vec<((String, String), (u8, String))> = Vec::new();
            let mut at: HashMap<(String, String), usize> = HashMap::new();
            for row in &solutions.rows {
                let (Some(Some(Term::NamedNode(iri))), Some(Some(Term::NamedNode(class)))) = (row.first(), row.get(1))
                else {
                    continue;
                };
                let (rank, name) = match row.get(2) {
                    Some(Some(Term::Literal(label))) => (
                        language_rank(label.language(), &self.settings().language),
                        label.value().to_owned(),
                    ),
                    _ => (u8::MAX, text::predicate_label(class.as_str())),
                };
                let key = (iri.as_str().to_owned(), class.as_str().to_owned());
                match at.get(&key) {
                    Some(&i) if rank < named[i].1.0 => named[i].1 = (rank, name),
                    Some(_) => {}
                    None => {
                        at.insert(key.clone(), named.len());
                        named.push((key, (rank, name)));
                    }
                }
            }
            for ((iri, _), (_, name)) in named {
                let names = out.entry(iri).or_default();
                if !names.contains(&name) {
                    names.push(name);
                }
            }
        }
        Ok(out)
    }

    /// The vertices that store `value` as a literal (plain, or tagged with the configured
    /// language), with the predicate that holds it, at most `limit`: "the book with ISBN
    /// 0-306-40615-2", "the paper titled '…'". Exact, as stored.
    async fn value_subjects(&self, value: &str, limit: usize) -> Result<Vec<(String, String)>, GraphError> {
        let value = value.trim();
        if value.is_empty() {
            return Ok(Vec::new());
        }
        let query = value_subjects_query(value, &self.settings().language, limit)?;
        let QueryResults::Solutions(solutions) = self.query(&query).await? else {
            return Ok(Vec::new());
        };
        Ok(solutions
            .rows
            .iter()
            .filter_map(|row| match (row.first()?.as_ref()?, row.get(1)?.as_ref()?) {
                (Term::NamedNode(s), Term::NamedNode(p)) => Some((s.as_str().to_owned(), p.as_str().to_owned())),
                _ => None,
            })
            .collect())
    }

    /// The graph's schema profile (predicates, classes, conventions; [`profile`]). Backends
    /// cache it; this default computes it on every call.
    async fn profile(&self) -> Result<Arc<profile::SchemaProfile>, GraphError> {
        Ok(Arc::new(profile::compute(self, None).await?))
    }

    /// [`profile`](Self::profile), or an empty one with RDFS's conventions when it cannot be had
    /// (an endpoint that fails): what the graph layer reads conventions from. Never called
    /// while the profile is being computed.
    async fn profile_or_default(&self) -> Arc<profile::SchemaProfile> {
        match self.profile().await {
            Ok(profile) => profile,
            Err(error) => {
                tracing::debug!(%error, "no schema profile: RDFS's conventions");
                Arc::new(profile::SchemaProfile::default())
            }
        }
    }

    /// Up to `limit` entities whose label matches `text`, best first: by match tier
    /// ([`text::match_score`]), then shorter label, then IRI; entities at the top that share the
    /// same label are ordered by degree (the actor "Tom Hanks" before the tag "tom hanks").
    async fn search_entities(&self, text: &str, limit: usize) -> Result<Vec<EntityCandidate>, GraphError> {
        let limit = limit.min(label_index::MAX_SEARCH_RESULTS);
        if limit == 0 {
            return Ok(Vec::new());
        }
        let matches = self.label_matches(text, limit).await?;
        self.ranked_matches(text, matches, limit).await
    }

    /// The entities whose whole label is `text` (up to case, accents and punctuation), as
    /// [`search_entities`](Self::search_entities) ranks them: what spotting a name among a
    /// question's words needs, which never looks at a partial match. A backend with a label
    /// index reads its exact keys alone ([`exact_label_matches`](Self::exact_label_matches));
    /// one without searches as `search_entities` does.
    async fn search_exact_entities(&self, text: &str, limit: usize) -> Result<Vec<EntityCandidate>, GraphError> {
        let limit = limit.min(label_index::MAX_SEARCH_RESULTS);
        if limit == 0 {
            return Ok(Vec::new());
        }
        match self.exact_label_matches(text, limit).await? {
            Some(matches) => self.ranked_matches(text, matches, limit).await,
            None => self.search_entities(text, limit).await,
        }
    }

    /// `(iri, label)` pairs whose whole label is `text` once normalised, from an index of exact
    /// keys; `None` for a backend without one.
    async fn exact_label_matches(&self, text: &str, limit: usize) -> Result<Option<Vec<(String, String)>>, GraphError> {
        let _ = (text, limit);
        Ok(None)
    }

    /// Label matches ranked as [`search_entities`](Self::search_entities) returns them.
    async fn ranked_matches(
        &self,
        text: &str,
        matches: Vec<(String, String)>,
        limit: usize,
    ) -> Result<Vec<EntityCandidate>, GraphError> {
        let mut ranked = rank_candidates(text, matches);
        // A property entity ("director", where Wikidata writes P57's name) or a term of the
        // wikibase: ontology is the schema's, never a thing the question is about.
        if !ranked.is_empty() {
            let profile = self.profile_or_default().await;
            ranked.retain(|c| !profile.conventions.is_schema_vertex(&c.iri));
        }
        // Homonyms at the top ("Tom Hanks" the actor, "tom hanks" the tag) are ordered by degree.
        // Only they: fetching degrees for every tie would cost a query per search.
        let best = ranked.first().map(|c| (c.score, text::normalize_tokens(&c.label)));
        let homonyms: Vec<&str> = ranked
            .iter()
            .take_while(|c| {
                best.as_ref()
                    .is_some_and(|(score, tokens)| c.score == *score && text::normalize_tokens(&c.label) == *tokens)
            })
            .take(TIE_BREAK_MAX)
            .map(|c| c.iri.as_str())
            .collect();
        if homonyms.len() > 1 {
            let degrees = self.degrees(&homonyms).await?;
            sort_candidates(&mut ranked, &degrees);
        }
        ranked.truncate(limit);
        Ok(ranked)
    }

    /// Runs a query a person wrote (MCP `sparql`, a correction, an imported example, the CLI's
    /// `sparql`) where it cannot hurt the process: an embedded store evaluates it in a worker
    /// process under memory, CPU and time limits (see `worker.rs`); a remote endpoint evaluates
    /// every query on its own server anyway.
    async fn query_untrusted(&self, query: &ReadQuery) -> Result<QueryResults, GraphError> {
        self.query(query).await
    }

    /// Parses and runs SPARQL text a person wrote, refusing anything but a read-only SELECT/ASK
    /// (see [`ReadQuery`]), as [`Self::query_untrusted`].
    async fn query_text(&self, text: &str) -> Result<QueryResults, GraphError> {
        self.query_untrusted(&ReadQuery::parse(text)?).await
    }

    /// Predicates leaving and entering `vertex` (at most `limit` each way), blacklist and the
    /// schema's predicates removed.
    async fn predicates_around(&self, vertex: &str, limit: usize) -> Result<Vec<PredicateLink>, GraphError> {
        let profile = self.profile_or_default().await;
        let mut links = Vec::new();
        for (outgoing, direction) in [(true, Direction::Outgoing), (false, Direction::Incoming)] {
            // Ask for extra rows so blacklisted predicates do not eat the limit.
            let asked = limit.saturating_add(self.settings().predicate_blacklist.len() + 8);
            let results = self.query(&predicates_around_query(vertex, outgoing, asked)?).await?;
            links.extend(
                predicate_links(self.settings(), &results, "p", direction)
                    .into_iter()
                    .filter(|l| !profile.conventions.is_schema_predicate(&l.iri))
                    .take(limit),
            );
        }
        Ok(links)
    }

    /// The edges leaving (or entering) a frontier of vertices, blacklisted predicates removed: all
    /// of them when there are at most `limit`, else every (vertex, predicate) pair with one sample
    /// neighbour (a second, grouped query). One query per call whatever the frontier's size: the
    /// relation-path search expands a whole hop at once.
    async fn neighbourhood(
        &self,
        frontier: &[&str],
        direction: Direction,
        limit: usize,
    ) -> Result<Neighbourhood, GraphError> {
        let mut out = Neighbourhood::default();
        if frontier.is_empty() {
            return Ok(out);
        }
        let outgoing = direction == Direction::Outgoing;
        let limit = limit.clamp(1, self.settings().max_rows.max(2) - 1);
        let profile = self.profile_or_default().await;
        // Each vertex once, in order: the sample's counts would count a repeated one twice.
        let mut seen = std::collections::HashSet::new();
        let frontier: Vec<&str> = frontier.iter().copied().filter(|v| seen.insert(*v)).collect();
        let frontier = frontier.as_slice();
        // A frontier whose vertices are known to have more edges than the limit together (a
        // hub among them) would fill it: straight to the sample, without fetching the limit's
        // worth of edges to throw away.
        let known_over = self.facts().is_some_and(|f| f.known_over(frontier, outgoing, limit));
        let mut results = None;
        if !known_over {
            let all = self.query(&neighbourhood_query(frontier, outgoing, limit + 1)?).await?;
            out.queries += 1;
            let too_many = match &all {
                QueryResults::Solutions(s) => s.rows.len() > limit || s.truncated,
                QueryResults::Boolean(_) => false,
            };
            if !too_many {
                results = Some(all);
            }
        }
        let results = match results {
            Some(all) => all,
            None => {
                out.queries += 1;
                out.sampled = true;
                self.query(&neighbourhood_sample_query(frontier, outgoing)?).await?
            }
        };
        let QueryResults::Solutions(solutions) = results else {
            return Ok(out);
        };
        out.sampled |= solutions.truncated;
        let column = |name: &str| solutions.variables.iter().position(|v| v == name);
        let (Some(v), Some(p), Some(o)) = (column("v"), column("p"), column("o")) else {
            return Ok(out);
        };
        // What the results say of each vertex's edges: counted by the sample, or every one of
        // them fetched (a vertex with none has none). A truncated result says too little.
        if let Some(facts) = self.facts().filter(|_| !solutions.truncated) {
            let count = column("n").filter(|_| out.sampled);
            if out.sampled == count.is_some() {
                let mut edges: HashMap<&str, u64> = frontier.iter().map(|f| (*f, 0)).collect();
                for row in &solutions.rows {
                    let Some(Some(Term::NamedNode(vertex))) = row.get(v) else {
                        continue;
                    };
                    let n = match count.and_then(|n| row.get(n)) {
                        Some(Some(Term::Literal(n))) => n.value().parse::<u64>().unwrap_or(0),
                        _ => 1,
                    };
                    if let Some(known) = edges.get_mut(vertex.as_str()) {
                        *known += n;
                    }
                }
                facts.note_edges(outgoing, edges);
            }
        }
        for row in &solutions.rows {
            let (Some(Some(Term::NamedNode(vertex))), Some(Some(Term::NamedNode(predicate))), Some(Some(neighbour))) =
                (row.get(v), row.get(p), row.get(o))
            else {
                continue;
            };
            if self.settings().is_blacklisted(predicate.as_str())
                || profile.conventions.is_schema_predicate(predicate.as_str())
            {
                continue;
            }
            out.edges.push(NeighbourEdge {
                vertex: vertex.as_str().to_owned(),
                predicate: predicate.as_str().to_owned(),
                direction,
                neighbour: neighbour.clone(),
            });
        }
        Ok(out)
    }

    /// Predicates on edges between two vertices, in either direction (blacklist and the schema's
    /// predicates removed).
    async fn predicates_between(&self, a: &str, b: &str) -> Result<Vec<PredicateLink>, GraphError> {
        let profile = self.profile_or_default().await;
        let mut links = Vec::new();
        for (from, to, direction) in [(a, b, Direction::Outgoing), (b, a, Direction::Incoming)] {
            let results = self.query(&predicates_between_query(from, to)?).await?;
            links.extend(
                predicate_links(self.settings(), &results, "p", direction)
                    .into_iter()
                    .filter(|l| !profile.conventions.is_schema_predicate(&l.iri)),
            );
        }
        Ok(links)
    }
}

/// One edge next to a frontier vertex: `vertex predicate neighbour` (outgoing) or
/// `neighbour predicate vertex` (incoming).
#[derive(Debug, Clone, PartialEq)]
pub struct NeighbourEdge {
    pub vertex: String,
    pub predicate: String,
    pub direction: Direction,
    pub neighbour: Term,
}

/// An edge with its ends named for people: the predicate's name and, for an IRI neighbour, its
/// label (a literal's name is its lexical form; a blank node has none).
#[derive(Debug, Clone, PartialEq)]
pub struct NamedEdge {
    pub edge: NeighbourEdge,
    pub predicate_name: String,
    pub neighbour_name: Option<String>,
}

/// The edges around `vertices` in one direction (at most `limit` queried), those `keep` accepts,
/// named: one label lookup for the neighbours and one name lookup for the predicates. What the
/// clarifying question's options and an entity's description both show.
pub async fn named_neighbourhood(
    kg: &dyn KnowledgeGraph,
    vertices: &[&str],
    direction: Direction,
    limit: usize,
    keep: &(dyn Fn(&NeighbourEdge) -> bool + Sync),
) -> Result<Vec<NamedEdge>, GraphError> {
    let edges: Vec<NeighbourEdge> = kg
        .neighbourhood(vertices, direction, limit)
        .await?
        .edges
        .into_iter()
        .filter(|e| keep(e))
        .collect();
    let mut neighbours: Vec<&str> = edges
        .iter()
        .filter_map(|e| match &e.neighbour {
            Term::NamedNode(n) => Some(n.as_str()),
            _ => None,
        })
        .collect();
    neighbours.sort_unstable();
    neighbours.dedup();
    let labels = kg.labels(&neighbours).await?;
    let mut predicates: Vec<&str> = edges.iter().map(|e| e.predicate.as_str()).collect();
    predicates.sort_unstable();
    predicates.dedup();
    let names = kg.predicate_names(&predicates).await?;
    Ok(edges
        .iter()
        .map(|edge| NamedEdge {
            predicate_name: names
                .get(&edge.predicate)
                .cloned()
                .unwrap_or_else(|| text::predicate_label(&edge.predicate)),
            neighbour_name: match &edge.neighbour {
                Term::NamedNode(n) => labels.get(n.as_str()).cloned(),
                Term::Literal(l) => Some(l.value().to_owned()),
                _ => None,
            },
            edge: edge.clone(),
        })
        .collect())
}

/// The edges around a frontier, one direction.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Neighbourhood {
    pub edges: Vec<NeighbourEdge>,
    /// The frontier had more than the limit of edges: `edges` holds every (vertex, predicate)
    /// pair with one neighbour each, not every neighbour.
    pub sampled: bool,
    /// Queries it took (1, or 2 when the first hit the limit; 1 when the frontier's vertices are
    /// known to have more edges than the limit, [`GraphFacts`]).
    pub queries: usize,
}

/// The predicate column `variable` of a query's results as links, blacklisted predicates removed.
pub fn predicate_links(
    settings: &GraphSettings,
    results: &QueryResults,
    variable: &str,
    direction: Direction,
) -> Vec<PredicateLink> {
    let QueryResults::Solutions(solutions) = results else {
        return Vec::new();
    };
    solutions
        .column(variable)
        .filter_map(|term| match term {
            Term::NamedNode(n) if !settings.is_blacklisted(n.as_str()) => Some(PredicateLink {
                iri: n.as_str().to_owned(),
                label: text::predicate_label(n.as_str()),
                direction,
            }),
            _ => None,
        })
        .collect()
}

/// `labels` with, when `iri_names` is on, a name made from its IRI for each of `iris` without one.
fn named_from_iris(
    settings: &GraphSettings,
    iris: &[&str],
    mut labels: HashMap<String, String>,
) -> HashMap<String, String> {
    if settings.iri_names {
        for iri in iris {
            if !labels.contains_key(*iri)
                && let Some(name) = text::iri_name(iri)
            {
                labels.insert((*iri).to_owned(), name);
            }
        }
    }
    labels
}

/// One literal of `predicates` for each IRI that has one: the earliest of the `languages` first
/// (then untagged, then any: [`languages_rank`]), then the earliest predicate; chunked so a long
/// list does not become one huge VALUES block. With one language, the predicate decides first
/// (rdfs:label before skos:altLabel), as a vertex's own name is what it is called.
async fn preferred_literals(
    kg: &(impl KnowledgeGraph + ?Sized),
    iris: &[&str],
    predicates: &[String],
    languages: &[&str],
) -> Result<HashMap<String, String>, GraphError> {
    // IRI → ((rank of its literal's predicate, rank of its language), literal).
    let mut best: HashMap<String, ((usize, u8), String)> = HashMap::new();
    let several = languages.iter().filter(|l| !l.is_empty()).count() > 1;
    for chunk in iris.chunks(LABELS_PER_QUERY).filter(|_| !predicates.is_empty()) {
        let QueryResults::Solutions(solutions) = kg.query(&labels_query(chunk, predicates)?).await? else {
            continue;
        };
        for row in &solutions.rows {
            let (Some(Some(Term::NamedNode(iri))), Some(Some(Term::Literal(label)))) = (row.first(), row.get(1)) else {
                continue;
            };
            let predicate = match row.get(2) {
                Some(Some(Term::NamedNode(p))) => predicates.iter().position(|lp| lp == p.as_str()),
                _ => None,
            }
            .unwrap_or(usize::MAX);
            let language = languages_rank(label.language(), languages);
            // The question's language before the label predicate's order, when one is asked.
            let rank = if several {
                (
                    usize::from(language),
                    u8::try_from(predicate.min(255)).unwrap_or(u8::MAX),
                )
            } else {
                (predicate, language)
            };
            if best.get(iri.as_str()).is_none_or(|(known, _)| rank < *known) {
                best.insert(iri.as_str().to_owned(), (rank, label.value().to_owned()));
            }
        }
    }
    Ok(best.into_iter().map(|(iri, (_, label))| (iri, label)).collect())
}

/// [`language_rank`] over several languages, the first preferred: the position of the first
/// that matches, then untagged, then any other.
fn languages_rank(tag: Option<&str>, preferred: &[&str]) -> u8 {
    let known = preferred.iter().filter(|p| !p.is_empty()).count() as u8;
    for (i, p) in preferred.iter().filter(|p| !p.is_empty()).enumerate() {
        if language_rank(tag, p) == 0 {
            return i as u8;
        }
    }
    match tag {
        None => known,
        Some(_) => known + 1,
    }
}

/// [`KnowledgeGraph::predicate_names`] without a cache: the graph's labels, else the label of the
/// entity that names the predicate (a Wikibase's property entity, through
/// [`GraphSettings::property_links`] or, unset, the `wikibase:` links and
/// `owl:equivalentProperty`), else names from the IRIs.
async fn look_up_predicate_names(
    kg: &(impl KnowledgeGraph + ?Sized),
    iris: &[&str],
) -> Result<HashMap<String, String>, GraphError> {
    let mut names = kg.graph_labels(iris).await?;
    let unnamed: Vec<&str> = iris.iter().copied().filter(|i| !names.contains_key(*i)).collect();
    let settings = kg.settings();
    if !unnamed.is_empty() && !settings.label_predicates.is_empty() {
        let links: Vec<String> = if settings.property_links.is_empty() {
            conventions::WIKIBASE_LINKS
                .iter()
                .chain(&[conventions::OWL_EQUIVALENT_PROPERTY])
                .map(|l| (*l).to_owned())
                .collect()
        } else {
            settings.property_links.clone()
        };
        let language = settings.language.as_str();
        // Predicate → ((rank of the label's predicate, rank of its language), label).
        let mut best: HashMap<String, ((usize, u8), String)> = HashMap::new();
        for chunk in unnamed.chunks(LABELS_PER_QUERY) {
            let query = query::property_names_query(chunk, &links, &settings.label_predicates)?;
            let QueryResults::Solutions(solutions) = kg.query(&query).await? else {
                continue;
            };
            for row in &solutions.rows {
                let (Some(Some(Term::NamedNode(p))), Some(Some(Term::Literal(label)))) = (row.first(), row.get(1))
                else {
                    continue;
                };
                let predicate = match row.get(2) {
                    Some(Some(Term::NamedNode(lp))) => settings.label_predicates.iter().position(|x| x == lp.as_str()),
                    _ => None,
                }
                .unwrap_or(usize::MAX);
                let rank = (predicate, language_rank(label.language(), language));
                if best.get(p.as_str()).is_none_or(|(known, _)| rank < *known) {
                    best.insert(p.as_str().to_owned(), (rank, label.value().to_owned()));
                }
            }
        }
        names.extend(best.into_iter().map(|(p, (_, label))| (p, label)));
    }
    for iri in iris {
        names
            .entry((*iri).to_owned())
            .or_insert_with(|| text::predicate_label(iri));
    }
    Ok(names)
}

/// Predicate names once looked up, per open graph: its predicates are few and their labels do
/// not change while it is open, so the path search's lookup at every hop costs a query only the
/// first time a predicate is seen.
#[derive(Default)]
pub(crate) struct NameCache(std::sync::Mutex<HashMap<String, String>>);

/// Names kept at most (a graph with more predicates looks the rest up each time).
const NAME_CACHE_SIZE: usize = 100_000;

impl NameCache {
    pub(crate) async fn names(
        &self,
        kg: &(impl KnowledgeGraph + ?Sized),
        iris: &[&str],
    ) -> Result<HashMap<String, String>, GraphError> {
        let lock = || self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut names = HashMap::with_capacity(iris.len());
        let mut missing: Vec<&str> = Vec::new();
        {
            let cache = lock();
            for iri in iris {
                match cache.get(*iri) {
                    Some(name) => {
                        names.insert((*iri).to_owned(), name.clone());
                    }
                    None => missing.push(iri),
                }
            }
        }
        if missing.is_empty() {
            return Ok(names);
        }
        let fetched = look_up_predicate_names(kg, &missing).await?;
        let mut cache = lock();
        for (iri, name) in fetched {
            if cache.len() < NAME_CACHE_SIZE {
                cache.insert(iri.clone(), name.clone());
            }
            names.insert(iri, name);
        }
        Ok(names)
    }
}

/// How much a label's language tag is preferred (lower first): the configured language (or one
/// of its regional forms, `en-GB` for `en`), then no tag, then any other.
fn language_rank(tag: Option<&str>, preferred: &str) -> u8 {
    match tag {
        Some(tag)
            if !preferred.is_empty()
                && (tag.eq_ignore_ascii_case(preferred)
                    || tag
                        .split('-')
                        .next()
                        .is_some_and(|primary| primary.eq_ignore_ascii_case(preferred))) =>
        {
            0
        }
        None => 1,
        Some(_) => 2,
    }
}

/// IRIs per label query.
const LABELS_PER_QUERY: usize = 200;

/// How many homonyms at the top get their degree fetched to order them.
const TIE_BREAK_MAX: usize = 16;

/// Scores every match with [`text::match_score`], drops non-matches, keeps one entry per IRI (its
/// best label) and sorts best first (without degrees).
fn rank_candidates(query: &str, found: Vec<(String, String)>) -> Vec<EntityCandidate> {
    let tokens = text::normalize_tokens(query);
    let mut candidates: Vec<EntityCandidate> = found
        .into_iter()
        .filter_map(|(iri, label)| {
            let score = text::match_score(&tokens, &label)?;
            Some(EntityCandidate { iri, label, score })
        })
        .collect();
    sort_candidates(&mut candidates, &HashMap::new());
    let mut seen = std::collections::HashSet::new();
    candidates.retain(|c| seen.insert(c.iri.clone()));
    candidates
}

/// Best first: score, then degree (when known), then shorter label, then IRI for determinism.
fn sort_candidates(candidates: &mut [EntityCandidate], degrees: &HashMap<String, u64>) {
    let degree = |c: &EntityCandidate| degrees.get(&c.iri).copied().unwrap_or(0);
    candidates.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then(degree(b).cmp(&degree(a)))
            .then(a.label.len().cmp(&b.label.len()))
            .then(a.iri.cmp(&b.iri))
    });
}
