//! `AgentState`: the one value every agent reads and writes while a question goes through the
//! graph, and the routing decision each agent leaves in it.

use crate::answer::Answer;
use crate::candidates::paths::{Anchor, RelationPath, SearchReport};
use crate::candidates::queries::PredicateChoice;
use crate::candidates::ranking::ScoredPath;
use crate::dialogue::clarification::{Clarification, Clarified};
use crate::dialogue::referents::{Candidate, Member, Reference};
pub use crate::linking::link::{EntityLink, LinkMethod};
use crate::qir::Qir;
use crate::understanding::classes::ClassMention;
use crate::understanding::form::QuestionForm;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// One previous turn of the dialogue: what the context Cq shows, and what a follow-up can refer
/// to (its linked entities and its answer values, with IRIs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Turn {
    pub question: String,
    /// Answers as text, already truncated to L items.
    pub answers: Vec<String>,
    /// The entities the question named, with their vertices.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub entities: Vec<TurnEntity>,
    /// The answer values (at most L), IRIs and literals; empty for yes/no and count answers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<Member>,
    /// How many answer values there were (more than `values` when they were cut).
    #[serde(default)]
    pub total: usize,
    /// The turn asked which vertex a mention means: the next turn may answer it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clarification: Option<Clarification>,
    /// The earlier answer the turn worked over ("which of them …"): a follow-up that puts
    /// another entity in its place ("and in 5.2?") works over the same one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer_set: Option<AnswerSet>,
    /// The SPARQL whose answers the turn gave (the used query), kept so that a follow-up can ask
    /// it again of another entity. Only the server's own turns carry one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
}

impl Turn {
    /// A turn known only by its text (a dialogue written before referents were kept).
    pub fn text(question: impl Into<String>, answers: Vec<String>) -> Self {
        Turn {
            question: question.into(),
            total: answers.len(),
            answers,
            entities: Vec::new(),
            values: Vec::new(),
            clarification: None,
            answer_set: None,
            query: None,
        }
    }
}

/// An entity a turn's question named.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnEntity {
    /// As written in the question.
    pub mention: String,
    pub iri: String,
    pub label: String,
}

/// How the referring expressions of a follow-up were resolved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Resolution {
    pub references: Vec<ResolvedReference>,
}

/// One referring expression: the candidates that fitted it and the one chosen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResolvedReference {
    pub reference: Reference,
    /// The candidates left once kind, the graph's path fit, evidence and recency have spoken
    /// (when several, exactly those the model chose among).
    pub fitting: Vec<Candidate>,
    /// How many candidates the dialogue offered in all.
    pub offered: usize,
    pub chosen: Option<Candidate>,
    pub method: ResolutionMethod,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResolutionMethod {
    /// Exactly one candidate fitted: no model call.
    Only,
    /// Several fitted: the model chose one of them.
    Model,
    /// Nothing fitted the pronoun's kind ("they" of a paper): the one entity of the most recent
    /// turn that fits its shape, chosen without a model call.
    Relaxed,
    /// Nothing in the dialogue fits: the words are left as written.
    Unresolved,
}

/// A follow-up about a listed answer as a whole: the planner works over its values (VALUES).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnswerSet {
    pub members: Vec<Member>,
    pub role: SetRole,
    /// "How many are there?": the previous question again, counted (over all its answers).
    #[serde(default)]
    pub count: bool,
    /// The dialogue kept only the first L values of that answer: the plan covers those.
    #[serde(default)]
    pub partial: bool,
    /// The turn (1 for the dialogue's first) whose answer it is, for the explanation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<usize>,
    /// The question whose answers they are when no turn's: an earlier one with another entity
    /// in its place ("How about Unicode 13.0?" after "Which of them are marks?" of what 15.0
    /// added: what 13.0 added).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub of_question: Option<String>,
}

impl AnswerSet {
    /// The question keeps its answers among the members ("which of them …"), rather than
    /// counting the earlier question again or asking of each member.
    pub fn restricts(&self) -> bool {
        self.role == SetRole::Filter && !self.count
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "as")]
pub enum SetRole {
    /// "Which of them …": the answers must be among the members.
    Filter,
    /// "When were they released?": the members take the place of one vertex, `representative`,
    /// which the question names so that linking and the path search have a vertex to start from.
    Anchor { representative: String },
}

/// Whether the question may depend on earlier turns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Every question stands alone (benchmarks, `ask`).
    #[default]
    SingleTurn,
    /// A dialogue: questions may refer back (`chat`, sessions).
    MultiTurn,
}

/// The Classifier's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Classification {
    SelfContained,
    Dependent,
}

/// How long one node took.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeTiming {
    pub node: String,
    pub elapsed: Duration,
}

/// Relation linking of one QIR triple: its phrase and the ranked predicates around its vertices.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RelationLink {
    /// Index of the QIR triple.
    pub triple: usize,
    pub phrase: String,
    pub predicates: Vec<PredicateChoice>,
}

/// One SPARQL query the planner ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExecutedQuery {
    pub sparql: String,
    /// Predicate IRIs the query uses.
    pub predicates: Vec<String>,
    /// Why it ran: its predicates were selected, it was the only candidate, or a fallback.
    pub reason: QueryReason,
    /// Result rows (1 for ASK and COUNT).
    pub rows: usize,
    /// Whether its result became (part of) the answer.
    pub used: bool,
    pub elapsed_ms: f64,
    /// The error, when the endpoint refused or timed out (the planner goes on with the others).
    pub error: Option<String>,
    /// The attribute it orders or filters by, and which words of the question chose it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attribute: Option<crate::candidates::values::AttributeReading>,
}

/// Which ranked path the planner starts from, and why.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PathChoice {
    /// Index into the ranked paths.
    pub index: usize,
    pub reason: ChoiceReason,
    /// Score of the best path minus the runner-up's.
    pub margin: Option<f32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChoiceReason {
    /// The only path that fits.
    Only,
    /// The best path won by at least the configured margin: no model call.
    Margin,
    /// The margin was small: the model picked among the best few.
    Model,
    /// The class the question names decided: of the paths the words tell no more apart (scores
    /// within a tie, as much of the question said, no relation against its words), the shortest
    /// reaching most of its instances.
    Class,
    /// "How many" or a plural asked-for noun wants several: the path that reaches several
    /// values, scored within a tie of one that reaches a single value.
    Several,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QueryReason {
    /// The chosen relation path (or, when its rows were cut, its answers alone).
    ChosenPath,
    /// Two anchors' paths joined at the answer.
    Join,
    /// The chosen path's query was empty: the next paths in rank order, within a budget.
    Fallback,
    /// The class the question names: its instances ("how many countries are there"), or
    /// whether an entity is one ("is Lima a city").
    Class,
    /// The answers' attribute held to a value the question writes ("founded in 1950"), with no
    /// vertex to start from.
    Value,
    /// The members of an earlier answer the question restricts, with nothing else named,
    /// ordered by their attribute most like the question's words ("which one of those takes the
    /// most disk space").
    AnswerSet,
    /// An example made from feedback on a similar question, on this question's vertices.
    Example,
    /// Whether the answer's path also answers from another vertex of the same label (the
    /// clarify agent's check; never an answer).
    Homonym,
    /// One solution of a true ASK: the bindings that made it true, for its provenance.
    Witness,
    /// An earlier turn's query asked again with another entity in its place ("How about X?"
    /// after a restriction of its answers): its answers are the set the question restricts,
    /// never the answer itself.
    EarlierQuestion,
}

/// How a question ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Outcome {
    /// The graph answered.
    Answered,
    /// Queries ran but the graph holds no answer.
    NoAnswer,
    /// Some entity named in the question is not in the graph.
    UnknownEntity { mentions: Vec<String> },
    /// A follow-up refers to something ("it", "the publication") that nothing earlier in the
    /// dialogue resolves, and names nothing else the graph holds.
    UnresolvedReference { expressions: Vec<String> },
    /// The entities were found, but no predicate around them yields a query.
    NoQuery,
    /// The question fits several vertices of one label equally: the reply asks which is meant,
    /// and the next turn's answer runs the question again with that one.
    Clarify { clarification: Clarification },
}

/// The outcome of an agent that ended the question (an answer, or why there is none).
pub const STOPPED: &str = "stopped";

/// The shared state of one question.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AgentState {
    pub mode: Mode,
    /// The question as the user asked it.
    pub question: String,
    /// The context Cq: previous turns, answers truncated to L.
    pub history: Vec<Turn>,
    pub classification: Option<Classification>,
    /// The referring expressions the classifier found in the question's words.
    pub references: Vec<Reference>,
    /// What they were resolved to (the rephraser).
    pub resolution: Option<Resolution>,
    /// A listed answer the question is about as a whole.
    pub answer_set: Option<AnswerSet>,
    /// The standalone question the later agents work on.
    pub resolved_question: Option<String>,
    /// The question answers the previous turn's clarifying question: the vertex chosen (the
    /// waiting question runs again with it, as `resolved_question`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clarified: Option<Clarified>,
    /// The language of the question: detected by the model when translation is on, else by the
    /// words (whatlang) when the graph has labels in it and it is not the configured one.
    pub language: Option<String>,
    /// The question in English, when it was translated.
    pub translated_question: Option<String>,
    pub qir: Option<Qir>,
    pub entities: Vec<EntityLink>,
    pub relations: Vec<RelationLink>,
    /// The question's form (list, yes/no, count, superlative), from its words.
    pub form: Option<QuestionForm>,
    /// A class of the graph the question names ("which cities", "is Lima a city").
    pub class: Option<ClassMention>,
    /// The linked vertices the path search started from.
    pub anchors: Vec<Anchor>,
    /// The best relation paths, ranked.
    pub paths: Vec<ScoredPath>,
    pub path_choice: Option<PathChoice>,
    pub path_search: Option<SearchReport>,
    /// Every path the search found (the planner's extensions for superlatives).
    #[serde(skip)]
    pub path_pool: Vec<RelationPath>,
    pub queries: Vec<ExecutedQuery>,
    /// The hash of the API key asking (`None`: anonymous): whose examples may be used.
    #[serde(skip)]
    pub asker: Option<String>,
    /// The example made from feedback that was tried, and whether it answered.
    pub example: Option<crate::candidates::examples::ExampleUse>,
    /// Words the QIR agent grounded itself (a word modifying the class), linked as they are.
    #[serde(default)]
    pub modifier_links: Vec<EntityLink>,
    /// Time spent waiting for the graph in the query-planning stage.
    pub execution_time: Duration,
    pub answer: Option<Answer>,
    /// "What *else* …": the vertices the previous turn named, left out of the answers.
    pub excluded: Vec<Member>,
    pub outcome: Option<Outcome>,
    /// What the user is told (the chat agent writes it last).
    pub reply: Option<String>,
    pub timings: Vec<NodeTiming>,
}

impl AgentState {
    pub fn new(question: impl Into<String>, mode: Mode, history: Vec<Turn>) -> Self {
        Self {
            mode,
            question: question.into(),
            history,
            classification: None,
            references: Vec::new(),
            resolution: None,
            answer_set: None,
            resolved_question: None,
            clarified: None,
            language: None,
            translated_question: None,
            qir: None,
            entities: Vec::new(),
            relations: Vec::new(),
            form: None,
            class: None,
            anchors: Vec::new(),
            paths: Vec::new(),
            path_choice: None,
            path_search: None,
            path_pool: Vec::new(),
            queries: Vec::new(),
            asker: None,
            example: None,
            modifier_links: Vec::new(),
            execution_time: Duration::ZERO,
            answer: None,
            excluded: Vec::new(),
            outcome: None,
            reply: None,
            timings: Vec::new(),
        }
    }

    /// The question later agents should read: the rephrased one, else the translated one, else
    /// the question as asked.
    pub fn working_question(&self) -> &str {
        self.resolved_question
            .as_deref()
            .or(self.translated_question.as_deref())
            .unwrap_or(&self.question)
    }

    /// The QIR, which `agent` needs (an error if the QIR agent has not run).
    pub fn require_qir(&self, agent: &'static str) -> Result<crate::qir::Qir, crate::error::AgentError> {
        self.qir
            .clone()
            .ok_or(crate::error::AgentError::MissingState { agent, what: "a QIR" })
    }

    /// Entity mentions with the vertex each was linked to.
    pub fn linked_vertices(&self) -> std::collections::HashMap<String, String> {
        self.entities
            .iter()
            .filter_map(|l| Some((l.mention.clone(), l.iri.clone()?)))
            .collect()
    }

    /// Vertices the dialogue already decided: each chosen referent's label and IRI (matching
    /// links a mention equal to the label to this vertex, not to a homonym).
    pub fn pinned_vertices(&self) -> Vec<(String, String)> {
        let mut pins: Vec<(String, String)> = Vec::new();
        for r in self.resolution.iter().flat_map(|r| &r.references) {
            if let Some(c) = &r.chosen
                && let Some(iri) = c.iri()
            {
                pins.push((c.label.clone(), iri.to_owned()));
            }
        }
        if let Some(AnswerSet {
            role: SetRole::Anchor { representative },
            members,
            ..
        }) = &self.answer_set
            && let Some(m) = members.iter().find(|m| &m.value == representative)
        {
            pins.push((m.label.clone(), m.value.clone()));
        }
        if let Some(c) = &self.clarified {
            pins.push((c.label.clone(), c.iri.clone()));
        }
        pins
    }

    /// The user's question in English: translated if it was, else as asked.
    pub fn english_question(&self) -> &str {
        self.translated_question.as_deref().unwrap_or(&self.question)
    }

    /// Ends the question early (the chat agent tells the user why); returns [`STOPPED`], the
    /// outcome the graph routes to the reply.
    pub fn stop(&mut self, outcome: Outcome) -> &'static str {
        self.outcome = Some(outcome);
        STOPPED
    }
}
