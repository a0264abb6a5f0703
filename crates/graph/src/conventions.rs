//! A graph's conventions, read from the graph: which predicates type a vertex (`rdf:type`,
//! Wikidata's `wdt:P31`, a private Wikibase's "instance of" under whatever number it got there),
//! which say one class is a subclass of another, which literals name vertices and in which
//! languages, where a predicate's own name lives (its label, or the label of the property entity
//! a Wikibase links to it by `wikibase:directClaim`, `wikibase:claim`, `wikibase:statementProperty`
//! or `wikibase:qualifier`) and which predicates describe a vertex (`schema:description`).
//!
//! The schema profile finds them when it is computed ([`discover`]), with bounded queries, and
//! says why in [`Conventions::findings`]; `chatty-kg profile` prints them. What a user sets in
//! [`crate::GraphSettings`] (`type_predicates`, `subclass_predicates`, `property_links`,
//! `description_predicates`) wins over what is found. Well-known vocabularies (RDF, RDFS, OWL,
//! SKOS, schema.org, the `wikibase:` ontology) are known by name; a graph's own property ids never
//! are: a Wikibase's typing property is found by its label or by how its objects behave.
//!
//! The query builders of this crate and of the agents take the conventions ([`TypeVocabulary`]),
//! so an RDFS graph gets the queries it always got and a Wikibase the same shapes over its own
//! predicates.

use crate::counted::PredicateProfile;
use crate::load_counts::LoadCounts;
use crate::query::ranked;
use crate::query::{ReadQuery, named_node, triple, var};
use crate::{GraphError, KnowledgeGraph, QueryResults, Term};
use serde::{Deserialize, Serialize};
use spargebra::algebra::{
    AggregateExpression, AggregateFunction, Expression, Function, GraphPattern, PropertyPathExpression,
};
use spargebra::term::{NamedNodePattern, TermPattern, TriplePattern, Variable};
use std::collections::{BTreeMap, HashMap, HashSet};

pub use crate::vocabulary::{OWL_EQUIVALENT_PROPERTY, RDF_TYPE};

pub const RDFS_SUBCLASS_OF: &str = "http://www.w3.org/2000/01/rdf-schema#subClassOf";
pub const SKOS_BROADER: &str = "http://www.w3.org/2004/02/skos/core#broader";
pub const SCHEMA_DESCRIPTION: &str = "http://schema.org/description";
/// The Wikibase ontology, the same on Wikidata and every other Wikibase.
pub const WIKIBASE: &str = "http://wikiba.se/ontology#";
pub const WIKIBASE_DIRECT_CLAIM: &str = "http://wikiba.se/ontology#directClaim";
pub const WIKIBASE_CLAIM: &str = "http://wikiba.se/ontology#claim";
pub const WIKIBASE_STATEMENT_PROPERTY: &str = "http://wikiba.se/ontology#statementProperty";
pub const WIKIBASE_QUALIFIER: &str = "http://wikiba.se/ontology#qualifier";
pub const WIKIBASE_RANK: &str = "http://wikiba.se/ontology#rank";

/// The links from a property entity to the predicates it names, in the order a predicate's name
/// is looked for (the direct claim is the property itself).
pub const WIKIBASE_LINKS: [&str; 4] = [
    WIKIBASE_DIRECT_CLAIM,
    WIKIBASE_CLAIM,
    WIKIBASE_STATEMENT_PROPERTY,
    WIKIBASE_QUALIFIER,
];

/// Namespaces whose classes describe a schema, not the things a question is about
/// (`wikibase:Property`, `owl:Class`, `rdf:Property`, an endpoint's description of itself, and
/// the classes Virtuoso keeps in every default graph for itself); `owl:Thing` is not among them.
const SCHEMA_NAMESPACES: [&str; 6] = [
    WIKIBASE,
    "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "http://www.w3.org/2000/01/rdf-schema#",
    "http://www.w3.org/2002/07/owl#",
    "http://www.w3.org/ns/sparql-service-description#",
    "http://www.openlinksw.com/schemas/virtrdf#",
];
const OWL_THING: &str = "http://www.w3.org/2002/07/owl#Thing";

/// What a Wikibase property entity is called where its label is "instance of" or "subclass of":
/// the names Wikibase's data model gives the two (Wikidata's P31 and P279), which a private
/// Wikibase creates under its own numbers. Compared without case.
const INSTANCE_OF: &str = "instance of";
const SUBCLASS_OF: &str = "subclass of";

/// Description predicates known by name.
const DESCRIPTIONS: [&str; 1] = [SCHEMA_DESCRIPTION];

/// Property entities kept at most (Wikidata has about 12 000 properties).
pub const MAX_PROPERTIES: usize = 50_000;
/// Predicates with vertices as objects examined for typing by how their objects behave.
const STRUCTURAL_CANDIDATES: usize = 20;
/// Subjects of a candidate subclass predicate sampled to see whether they are classes.
const HIERARCHY_SAMPLE: usize = 200;
/// Languages counted per label predicate.
const LANGUAGES_KEPT: usize = 20;

/// A Wikibase property entity and the predicates it names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct PropertyEntity {
    /// The entity (`wd:P57`): a vertex of the schema, never an answer.
    pub entity: String,
    /// Its direct claim (`wdt:P57`), the truthy value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direct: Option<String>,
    /// From an item to its statements (`p:P57`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claim: Option<String>,
    /// From a statement to its value (`ps:P57`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub statement: Option<String>,
    /// From a statement to a qualifier's value (`pq:P57`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qualifier: Option<String>,
}

/// A predicate whose literals name vertices, and the languages they carry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NamePredicate {
    pub iri: String,
    /// Language tag → literals ("" for none), the most used first when printed.
    #[serde(default)]
    pub languages: BTreeMap<String, u64>,
}

/// One thing discovery found, and why (`chatty-kg profile` prints these).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// Which convention: "typing", "subclass", "names", "predicate names", "descriptions",
    /// "schema vertices".
    pub convention: String,
    /// What was found (a predicate's IRI, a count).
    pub value: String,
    /// Why: the graph fact, or "set in the configuration".
    pub why: String,
}

/// How a graph says what things are and what they are called (see the module docs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "Unindexed")]
pub struct Conventions {
    /// Predicates that type a vertex: `rdf:type`, or a Wikibase's "instance of".
    pub type_predicates: Vec<String>,
    /// Predicates from a class to a broader class: `rdfs:subClassOf`, a Wikibase's "subclass of".
    pub subclass_predicates: Vec<String>,
    /// The configured label predicates the graph uses, with their languages.
    pub name_predicates: Vec<NamePredicate>,
    /// Predicates whose literals describe a vertex (`schema:description`): shown to tell
    /// homonyms apart, never a relation.
    pub description_predicates: Vec<String>,
    /// Predicates linking a property entity to the predicate it names (`wikibase:directClaim`
    /// …, `owl:equivalentProperty`), where the graph has them.
    pub property_links: Vec<String>,
    /// The graph's property entities, by entity (at most [`MAX_PROPERTIES`]).
    pub properties: Vec<PropertyEntity>,
    /// Predicates whose name (their property entity's label) holds one of the settings'
    /// `predicate_blacklist_patterns`, which a Wikibase's IRIs never do ("wiki page wiki link"
    /// under `wdt:P139`): blacklisted as the pattern blacklists `dbo:wikiPageWikiLink`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blacklisted: Vec<String>,
    /// What was found and why.
    pub findings: Vec<Finding>,
    /// Entity IRI → index in `properties`, and predicate IRI → (index, role); rebuilt by
    /// [`Conventions::indexed`].
    #[serde(skip)]
    index: ConventionIndex,
}

/// [`Conventions`] as saved: indexed when read.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Unindexed {
    type_predicates: Vec<String>,
    subclass_predicates: Vec<String>,
    name_predicates: Vec<NamePredicate>,
    description_predicates: Vec<String>,
    property_links: Vec<String>,
    properties: Vec<PropertyEntity>,
    blacklisted: Vec<String>,
    findings: Vec<Finding>,
}

impl From<Unindexed> for Conventions {
    fn from(u: Unindexed) -> Self {
        Self {
            type_predicates: u.type_predicates,
            subclass_predicates: u.subclass_predicates,
            name_predicates: u.name_predicates,
            description_predicates: u.description_predicates,
            property_links: u.property_links,
            properties: u.properties,
            blacklisted: u.blacklisted,
            findings: u.findings,
            index: ConventionIndex::default(),
        }
        .indexed()
    }
}

#[derive(Debug, Clone, Default)]
struct ConventionIndex {
    entities: HashMap<String, usize>,
    predicates: HashMap<String, (usize, PropertyRole)>,
    schema_predicates: HashSet<String>,
}

impl PartialEq for ConventionIndex {
    fn eq(&self, _: &Self) -> bool {
        // Derived from the fields around it.
        true
    }
}

/// What a predicate is to the property entity that names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PropertyRole {
    /// `wdt:P…`: item → value.
    Direct,
    /// `p:P…`: item → statement.
    Claim,
    /// `ps:P…`: statement → value.
    Statement,
    /// `pq:P…`: statement → qualifier value.
    Qualifier,
}

impl Default for Conventions {
    /// RDFS: `rdf:type`, `rdfs:subClassOf`, nothing else known.
    fn default() -> Self {
        Self {
            type_predicates: vec![RDF_TYPE.to_owned()],
            subclass_predicates: vec![RDFS_SUBCLASS_OF.to_owned()],
            name_predicates: Vec::new(),
            description_predicates: Vec::new(),
            property_links: Vec::new(),
            properties: Vec::new(),
            blacklisted: Vec::new(),
            findings: Vec::new(),
            index: ConventionIndex::default(),
        }
        .indexed()
    }
}

impl Conventions {
    /// The same conventions with their lookups built (after deserializing or editing).
    pub fn indexed(mut self) -> Self {
        let mut index = ConventionIndex::default();
        for (i, p) in self.properties.iter().enumerate() {
            index.entities.insert(p.entity.clone(), i);
            for (predicate, role) in [
                (&p.direct, PropertyRole::Direct),
                (&p.claim, PropertyRole::Claim),
                (&p.statement, PropertyRole::Statement),
                (&p.qualifier, PropertyRole::Qualifier),
            ] {
                if let Some(predicate) = predicate {
                    index.predicates.entry(predicate.clone()).or_insert((i, role));
                }
            }
        }
        // Not the subclass predicates: "what is X a subclass of" is a question about the graph.
        index.schema_predicates = self
            .type_predicates
            .iter()
            .chain(&self.description_predicates)
            .chain(&self.property_links)
            .chain(&self.blacklisted)
            .cloned()
            .collect();
        self.index = index;
        self
    }

    /// Whether `predicate` belongs to the schema and is never a relation a question asks
    /// about: a typing, description or property-naming predicate, one whose name the blacklist's
    /// patterns hold, or any predicate of the `wikibase:` ontology (ranks, links, counts).
    /// Typing is asked about through classes, as `rdf:type` always was.
    pub fn is_schema_predicate(&self, predicate: &str) -> bool {
        self.index.schema_predicates.contains(predicate) || predicate.starts_with(WIKIBASE)
    }

    /// Whether `iri` is a vertex of the schema, never an entity a question is about: a property
    /// entity (`wd:P57` is where "director" is written, not a director), or a term of the
    /// `wikibase:` ontology (`wikibase:Property`, `wikibase:Time`).
    pub fn is_schema_vertex(&self, iri: &str) -> bool {
        self.index.entities.contains_key(iri) || iri.starts_with(WIKIBASE)
    }

    /// The property entity naming `predicate`, and what the predicate is to it.
    pub fn property_of(&self, predicate: &str) -> Option<(&PropertyEntity, PropertyRole)> {
        let (i, role) = self.index.predicates.get(predicate)?;
        Some((self.properties.get(*i)?, *role))
    }

    /// The property entity `entity`.
    pub fn property(&self, entity: &str) -> Option<&PropertyEntity> {
        self.properties.get(*self.index.entities.get(entity)?)
    }

    /// The qualifier predicates of the graph (`pq:P…`).
    pub fn qualifiers(&self) -> impl Iterator<Item = &str> {
        self.properties.iter().filter_map(|p| p.qualifier.as_deref())
    }

    /// The typing of this graph, for the query builders.
    pub fn types(&self) -> TypeVocabulary<'_> {
        TypeVocabulary {
            type_predicates: &self.type_predicates,
            subclass_predicates: &self.subclass_predicates,
        }
    }

    /// Whether the graph types its vertices exactly as RDFS does (and only so).
    pub fn is_rdfs(&self) -> bool {
        self.type_predicates == [RDF_TYPE] && self.subclass_predicates == [RDFS_SUBCLASS_OF]
    }

    /// What the settings set for a convention (`key`), noted as found there; `None` when unset.
    fn configured(&mut self, convention: &str, key: &str, set: &[String]) -> Option<Vec<String>> {
        if set.is_empty() {
            return None;
        }
        self.found(convention, set.join(", "), format!("set in the configuration ({key})"));
        Some(set.to_vec())
    }

    fn found(&mut self, convention: &str, value: impl Into<String>, why: impl Into<String>) {
        self.findings.push(Finding {
            convention: convention.to_owned(),
            value: value.into(),
            why: why.into(),
        });
    }

    /// A plain-text account of the conventions and why each was taken (`chatty-kg profile`).
    pub fn render(&self) -> String {
        use std::fmt::Write as _;
        let mut out = String::new();
        let list = |items: &[String]| {
            if items.is_empty() {
                "none".to_owned()
            } else {
                items.join(", ")
            }
        };
        let _ = writeln!(out, "typing: {}", list(&self.type_predicates));
        let _ = writeln!(out, "subclass: {}", list(&self.subclass_predicates));
        for name in &self.name_predicates {
            let mut languages: Vec<(&String, &u64)> = name.languages.iter().collect();
            languages.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
            let shown: Vec<String> = languages
                .iter()
                .map(|(l, n)| format!("{} {n}", if l.is_empty() { "(no tag)" } else { l.as_str() }))
                .collect();
            let _ = writeln!(out, "names: {} ({})", name.iri, shown.join(", "));
        }
        let _ = writeln!(out, "descriptions: {}", list(&self.description_predicates));
        let _ = writeln!(
            out,
            "predicate names: own labels{}",
            if self.property_links.is_empty() {
                String::new()
            } else {
                format!(", then property entities through {}", self.property_links.join(", "))
            }
        );
        if !self.properties.is_empty() {
            let _ = writeln!(out, "property entities: {}", self.properties.len());
        }
        if !self.findings.is_empty() {
            let _ = writeln!(out, "\nconvention\tfound\twhy");
            for f in &self.findings {
                let _ = writeln!(out, "{}\t{}\t{}", f.convention, f.value, f.why);
            }
        }
        out
    }
}

/// The predicates that type a vertex and relate its classes, as the query builders use them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TypeVocabulary<'a> {
    pub type_predicates: &'a [String],
    pub subclass_predicates: &'a [String],
}

/// RDFS's typing, for queries built without a graph's conventions (tests, defaults).
pub const RDFS_TYPES: TypeVocabulary<'static> = TypeVocabulary {
    type_predicates: &[],
    subclass_predicates: &[],
};

impl TypeVocabulary<'_> {
    fn typing(&self) -> Vec<&str> {
        if self.type_predicates.is_empty() {
            vec![RDF_TYPE]
        } else {
            self.type_predicates.iter().map(String::as_str).collect()
        }
    }

    fn subclassing(&self) -> Vec<&str> {
        if self.type_predicates.is_empty() && self.subclass_predicates.is_empty() {
            vec![RDFS_SUBCLASS_OF]
        } else {
            self.subclass_predicates.iter().map(String::as_str).collect()
        }
    }

    /// The typing predicates (`rdf:type` for RDFS).
    pub fn type_iris(&self) -> Vec<String> {
        self.typing().into_iter().map(str::to_owned).collect()
    }

    /// The subclass predicates (`rdfs:subClassOf` for RDFS; none where the graph has none).
    pub fn subclass_iris(&self) -> Vec<String> {
        self.subclassing().into_iter().map(str::to_owned).collect()
    }

    /// Whether `predicate` types vertices here.
    pub fn is_type_predicate(&self, predicate: &str) -> bool {
        self.typing().contains(&predicate)
    }

    /// `subject <type> object`: one triple where one predicate types, else a path of the
    /// alternatives (`rdf:type|wdt:P31`).
    pub fn typed(
        &self,
        subject: impl Into<TermPattern>,
        object: impl Into<TermPattern>,
    ) -> Result<GraphPattern, GraphError> {
        path_pattern(subject.into(), &self.typing(), false, object.into())
    }

    /// `subject <type> object` as a triple pattern, when one predicate types (`None` otherwise):
    /// for the places that keep triples (a candidate's provenance patterns).
    pub fn typed_triple(
        &self,
        subject: impl Into<TermPattern>,
        object: impl Into<TermPattern>,
    ) -> Result<Option<TriplePattern>, GraphError> {
        match self.typing().as_slice() {
            [one] => Ok(Some(triple(subject, named_node(one)?, object))),
            _ => Ok(None),
        }
    }

    /// `sub <subclass>+ class`, or `None` when the graph has no subclass predicate.
    pub fn subclass_path(
        &self,
        sub: impl Into<TermPattern>,
        class: impl Into<TermPattern>,
    ) -> Result<Option<GraphPattern>, GraphError> {
        let subclassing = self.subclassing();
        if subclassing.is_empty() {
            return Ok(None);
        }
        path_pattern(sub.into(), &subclassing, true, class.into()).map(Some)
    }
}

/// `subject (p1|p2…) object`, or `(p1|p2…)+` when `one_or_more`: a triple when it is one
/// predicate once.
fn path_pattern(
    subject: TermPattern,
    predicates: &[&str],
    one_or_more: bool,
    object: TermPattern,
) -> Result<GraphPattern, GraphError> {
    if let ([one], false) = (predicates, one_or_more) {
        return Ok(GraphPattern::Bgp {
            patterns: vec![TriplePattern {
                subject,
                predicate: NamedNodePattern::NamedNode(named_node(one)?),
                object,
            }],
        });
    }
    let mut path: Option<PropertyPathExpression> = None;
    for p in predicates {
        let next = PropertyPathExpression::NamedNode(named_node(p)?);
        path = Some(match path {
            None => next,
            Some(before) => PropertyPathExpression::Alternative(Box::new(before), Box::new(next)),
        });
    }
    let Some(mut path) = path else {
        return Err(GraphError::QueryParse {
            message: "a typing path needs at least one predicate".into(),
        });
    };
    if one_or_more {
        path = PropertyPathExpression::OneOrMore(Box::new(path));
    }
    Ok(GraphPattern::Path { subject, path, object })
}

fn iri(term: Option<&Option<Term>>) -> Option<String> {
    match term {
        Some(Some(Term::NamedNode(n))) => Some(n.as_str().to_owned()),
        _ => None,
    }
}

fn number(term: Option<&Option<Term>>) -> u64 {
    match term {
        Some(Some(Term::Literal(l))) => l.value().parse().unwrap_or(0),
        _ => 0,
    }
}

fn string(term: Option<&Option<Term>>) -> Option<String> {
    match term {
        Some(Some(Term::Literal(l))) => Some(l.value().to_owned()),
        _ => None,
    }
}

fn bgp(patterns: Vec<TriplePattern>) -> GraphPattern {
    GraphPattern::Bgp { patterns }
}

fn project(inner: GraphPattern, variables: Vec<Variable>, limit: Option<usize>) -> GraphPattern {
    crate::query::limited(
        GraphPattern::Project {
            inner: Box::new(inner),
            variables,
        },
        limit,
    )
}

fn count_all(variable: &Variable, distinct_of: Option<&Variable>) -> (Variable, AggregateExpression) {
    (
        variable.clone(),
        match distinct_of {
            Some(v) => AggregateExpression::FunctionCall {
                name: AggregateFunction::Count,
                expr: Expression::Variable(v.clone()),
                distinct: true,
            },
            None => AggregateExpression::CountSolutions { distinct: false },
        },
    )
}

/// `SELECT ?e ?p WHERE { ?e <link> ?p } LIMIT n`: the property entities a link names.
pub fn links_query(link: &str, limit: usize) -> Result<ReadQuery, GraphError> {
    let (e, p) = (var("e"), var("p"));
    ReadQuery::select(project(
        bgp(vec![triple(e.clone(), named_node(link)?, p.clone())]),
        vec![e, p],
        Some(limit),
    ))
}

/// `SELECT ?p WHERE { ?e <link> ?p . ?e ?lp ?l FILTER(?lp IN (…) && LCASE(STR(?l)) = name) }
/// LIMIT 10`: the predicates whose property entity is labelled `name`.
pub fn labelled_property_query(link: &str, label_predicates: &[String], name: &str) -> Result<ReadQuery, GraphError> {
    let (e, p, lp, l) = (var("e"), var("p"), var("lp"), var("l"));
    let predicates = label_predicates
        .iter()
        .map(|p| Ok(Expression::NamedNode(named_node(p)?)))
        .collect::<Result<Vec<_>, GraphError>>()?;
    let named = GraphPattern::Filter {
        expr: Expression::And(
            Box::new(Expression::In(Box::new(Expression::Variable(lp.clone())), predicates)),
            Box::new(Expression::Equal(
                Box::new(Expression::FunctionCall(
                    Function::LCase,
                    vec![Expression::FunctionCall(
                        Function::Str,
                        vec![Expression::Variable(l.clone())],
                    )],
                )),
                Box::new(Expression::Literal(name.into())),
            )),
        ),
        inner: Box::new(bgp(vec![
            triple(e.clone(), named_node(link)?, p.clone()),
            triple(e, lp, l),
        ])),
    };
    ReadQuery::select(GraphPattern::Distinct {
        inner: Box::new(project(named, vec![p], Some(10))),
    })
}

/// `SELECT (COUNT(DISTINCT ?s) AS ?subjects) (COUNT(DISTINCT ?o) AS ?objects) WHERE { ?s <p> ?o }`.
pub fn spread_query(predicate: &str) -> Result<ReadQuery, GraphError> {
    let (s, o, subjects, objects) = (var("s"), var("o"), var("subjects"), var("objects"));
    ReadQuery::select(project(
        GraphPattern::Group {
            inner: Box::new(bgp(vec![triple(s.clone(), named_node(predicate)?, o.clone())])),
            variables: vec![],
            aggregates: vec![count_all(&subjects, Some(&s)), count_all(&objects, Some(&o))],
        },
        vec![subjects, objects],
        None,
    ))
}

/// `SELECT (COUNT(DISTINCT ?s) AS ?n) WHERE { ?s <label> ?l }`: the vertices a label predicate
/// names.
pub fn named_vertices_query(label: &str) -> Result<ReadQuery, GraphError> {
    let (s, l, n) = (var("s"), var("l"), var("n"));
    ReadQuery::select(project(
        GraphPattern::Group {
            inner: Box::new(bgp(vec![triple(s.clone(), named_node(label)?, l)])),
            variables: vec![],
            aggregates: vec![count_all(&n, Some(&s))],
        },
        vec![n],
        None,
    ))
}

/// `SELECT (COUNT(*) AS ?n) (SUM(IF(?typed, 1, 0)) AS ?classes) WHERE { { SELECT DISTINCT ?s
/// WHERE { ?s <candidate> ?o } LIMIT n } BIND(EXISTS { ?x <typing> ?s } AS ?typed) }`: how many
/// of a sample of the candidate's subjects are classes (objects of the typing predicate).
pub fn hierarchy_query(candidate: &str, typing: &str) -> Result<ReadQuery, GraphError> {
    let (s, o, x, typed, n, classes) = (var("s"), var("o"), var("x"), var("typed"), var("n"), var("classes"));
    let sample = GraphPattern::Slice {
        inner: Box::new(GraphPattern::Distinct {
            inner: Box::new(GraphPattern::Project {
                inner: Box::new(bgp(vec![triple(s.clone(), named_node(candidate)?, o)])),
                variables: vec![s.clone()],
            }),
        }),
        start: 0,
        length: Some(HIERARCHY_SAMPLE),
    };
    let marked = GraphPattern::Extend {
        inner: Box::new(sample),
        variable: typed.clone(),
        expression: Expression::Exists(Box::new(bgp(vec![triple(x, named_node(typing)?, s)]))),
    };
    ReadQuery::select(project(
        GraphPattern::Group {
            inner: Box::new(marked),
            variables: vec![],
            aggregates: vec![
                count_all(&n, None),
                (
                    classes.clone(),
                    AggregateExpression::FunctionCall {
                        name: AggregateFunction::Sum,
                        expr: Expression::If(
                            Box::new(Expression::Variable(typed)),
                            Box::new(Expression::Literal(1.into())),
                            Box::new(Expression::Literal(0.into())),
                        ),
                        distinct: false,
                    },
                ),
            ],
        },
        vec![n, classes],
        None,
    ))
}

/// `SELECT ?c (COUNT(*) AS ?n) WHERE { ?s <typing> ?c } GROUP BY ?c ORDER BY DESC(?n) LIMIT n`
/// for one predicate: what `rdf:type` types things as.
fn objects_query(predicate: &str, limit: usize) -> Result<ReadQuery, GraphError> {
    class_counts_query(
        limit,
        TypeVocabulary {
            type_predicates: &[predicate.to_owned()],
            subclass_predicates: &[],
        },
    )
}

/// `SELECT ?lang (COUNT(*) AS ?n) WHERE { ?s <label> ?l BIND(LANG(?l) AS ?lang) } GROUP BY
/// ?lang ORDER BY DESC(?n) LIMIT n`.
pub fn languages_query(label: &str, limit: usize) -> Result<ReadQuery, GraphError> {
    let (s, l, lang, n) = (var("s"), var("l"), var("lang"), var("n"));
    let tagged = GraphPattern::Extend {
        inner: Box::new(GraphPattern::Filter {
            expr: Expression::FunctionCall(Function::IsLiteral, vec![Expression::Variable(l.clone())]),
            inner: Box::new(bgp(vec![triple(s, named_node(label)?, l.clone())])),
        }),
        variable: lang.clone(),
        expression: Expression::FunctionCall(Function::Lang, vec![Expression::Variable(l)]),
    };
    ReadQuery::select(GraphPattern::Slice {
        inner: Box::new(GraphPattern::Project {
            inner: Box::new(GraphPattern::OrderBy {
                inner: Box::new(GraphPattern::Group {
                    inner: Box::new(tagged),
                    variables: vec![lang.clone()],
                    aggregates: vec![count_all(&n, None)],
                }),
                expression: vec![spargebra::algebra::OrderExpression::Desc(Expression::Variable(
                    n.clone(),
                ))],
            }),
            variables: vec![lang, n],
        }),
        start: 0,
        length: Some(limit),
    })
}

/// The `n` keys with the highest counts, as a grouped query ordered by count would give them.
fn most_counted(counts: &BTreeMap<String, u64>, n: usize) -> Vec<String> {
    let mut ranked: Vec<(&String, &u64)> = counts.iter().collect();
    crate::counted::most_first(&mut ranked, |(key, count)| (**count, key.as_str()));
    ranked.into_iter().take(n).map(|(k, _)| k.clone()).collect()
}

/// Runs a discovery query; a failure (a timeout on a big endpoint) is logged and reads as no
/// rows, so one convention that cannot be checked does not cost the others.
async fn rows(kg: &(impl KnowledgeGraph + ?Sized), query: &ReadQuery, what: &str) -> Vec<Vec<Option<Term>>> {
    match kg.query(query).await {
        Ok(QueryResults::Solutions(s)) => s.rows,
        Ok(QueryResults::Boolean(_)) => Vec::new(),
        Err(error) => {
            tracing::warn!(%error, what, "a convention could not be checked");
            Vec::new()
        }
    }
}

/// Whether an IRI is a class of a schema vocabulary rather than a kind of thing.
fn is_schema_class(iri: &str) -> bool {
    iri != OWL_THING && SCHEMA_NAMESPACES.iter().any(|ns| iri.starts_with(ns))
}

/// Finds the conventions of `kg` from its predicates (the profile's, most used first) and
/// bounded queries, the settings' overrides applied.
///
/// With the `counts` a load took, the two whole-graph questions (which classes `rdf:type` names,
/// which languages the names are in) are answered from them.
pub async fn discover(
    kg: &(impl KnowledgeGraph + ?Sized),
    predicates: &[PredicateProfile],
    counts: Option<&LoadCounts>,
) -> Conventions {
    let settings = kg.settings();
    let used: HashMap<&str, &PredicateProfile> = predicates.iter().map(|p| (p.iri.as_str(), p)).collect();
    let mut found = Conventions {
        type_predicates: Vec::new(),
        subclass_predicates: Vec::new(),
        ..Conventions::default()
    };

    // Property entities, through the wikibase: links (or the configured ones).
    let links: Vec<String> = if settings.property_links.is_empty() {
        WIKIBASE_LINKS
            .iter()
            .chain(&[OWL_EQUIVALENT_PROPERTY])
            .filter(|l| used.contains_key(**l))
            .map(|l| (*l).to_owned())
            .collect()
    } else {
        settings.property_links.clone()
    };
    let mut properties: BTreeMap<String, PropertyEntity> = BTreeMap::new();
    for link in &links {
        let role = match link.as_str() {
            WIKIBASE_DIRECT_CLAIM => Some(PropertyRole::Direct),
            WIKIBASE_CLAIM => Some(PropertyRole::Claim),
            WIKIBASE_STATEMENT_PROPERTY => Some(PropertyRole::Statement),
            WIKIBASE_QUALIFIER => Some(PropertyRole::Qualifier),
            _ => None,
        };
        let Ok(query) = links_query(link, MAX_PROPERTIES + 1) else {
            continue;
        };
        for row in rows(kg, &query, "property entities").await {
            let (Some(entity), Some(predicate)) = (iri(row.first()), iri(row.get(1))) else {
                continue;
            };
            if properties.len() >= MAX_PROPERTIES && !properties.contains_key(&entity) {
                continue;
            }
            let property = properties.entry(entity.clone()).or_insert_with(|| PropertyEntity {
                entity,
                ..PropertyEntity::default()
            });
            match role {
                Some(PropertyRole::Direct) => property.direct = Some(predicate),
                Some(PropertyRole::Claim) => property.claim = Some(predicate),
                Some(PropertyRole::Statement) => property.statement = Some(predicate),
                Some(PropertyRole::Qualifier) => property.qualifier = Some(predicate),
                // owl:equivalentProperty and configured links name a predicate as a direct one.
                None => property.direct = property.direct.take().or(Some(predicate)),
            }
        }
    }
    found.properties = properties.into_values().collect();
    if !links.is_empty() {
        let why = if settings.property_links.is_empty() {
            "the graph links property entities to predicates by these"
        } else {
            "set in the configuration (property_links)"
        };
        found.found("predicate names", links.join(", "), why);
        found.property_links = links;
    }
    if !found.properties.is_empty() {
        found.found(
            "schema vertices",
            format!("{} property entities", found.properties.len()),
            "subjects of the property links: where predicates are named, never an answer",
        );
    }
    found.blacklisted = blacklisted_by_name(kg, &found.properties).await;
    if !found.blacklisted.is_empty() {
        found.found(
            "blacklist",
            format!("{} predicates", found.blacklisted.len()),
            "their property entities' names hold a pattern of predicate_blacklist_patterns",
        );
    }
    let direct_link = found.property_links.iter().any(|l| l == WIKIBASE_DIRECT_CLAIM);

    // Typing.
    if let Some(set) = found.configured("typing", "type_predicates", &settings.type_predicates) {
        found.type_predicates = set;
    } else {
        let classes: Option<Vec<String>> = match counts {
            _ if !used.contains_key(RDF_TYPE) => None,
            Some(counts) => Some(most_counted(&counts.types, 50)),
            None => match objects_query(RDF_TYPE, 50) {
                Ok(query) => Some(
                    rows(kg, &query, "rdf:type classes")
                        .await
                        .iter()
                        .filter_map(|row| iri(row.first()))
                        .collect(),
                ),
                Err(_) => None,
            },
        };
        if let Some(classes) = classes {
            match classes.iter().find(|c| !is_schema_class(c)) {
                Some(class) => {
                    found.type_predicates.push(RDF_TYPE.to_owned());
                    found.found("typing", RDF_TYPE, format!("types vertices as classes such as {class}"));
                }
                None if !classes.is_empty() => found.found(
                    "typing",
                    format!("not {RDF_TYPE}"),
                    format!("it only types schema terms ({})", classes.join(", ")),
                ),
                None => {}
            }
        }
        if direct_link {
            for p in labelled_properties(kg, INSTANCE_OF).await {
                if !found.type_predicates.contains(&p) {
                    found.found(
                        "typing",
                        &p,
                        format!("its property entity is labelled \"{INSTANCE_OF}\""),
                    );
                    found.type_predicates.push(p);
                }
            }
        }
        if found.type_predicates.is_empty()
            && let Some((p, why)) = typing_by_behaviour(kg, predicates, &found).await
        {
            found.found("typing", &p, why);
            found.type_predicates.push(p);
        }
    }

    // Subclasses.
    if let Some(set) = found.configured("subclass", "subclass_predicates", &settings.subclass_predicates) {
        found.subclass_predicates = set;
    } else {
        // RDFS's beside rdf:type; otherwise (a Wikibase whose store keeps its own classes'
        // hierarchy) only where it orders the graph's classes, as any other candidate.
        if found.type_predicates.iter().any(|t| t == RDF_TYPE) {
            found.subclass_predicates.push(RDFS_SUBCLASS_OF.to_owned());
            found.found(
                "subclass",
                RDFS_SUBCLASS_OF,
                if used.contains_key(RDFS_SUBCLASS_OF) {
                    "the graph states subclasses with it"
                } else {
                    "RDFS's, beside rdf:type"
                },
            );
        }
        if direct_link {
            for p in labelled_properties(kg, SUBCLASS_OF).await {
                if !found.subclass_predicates.contains(&p) && !found.type_predicates.contains(&p) {
                    found.found(
                        "subclass",
                        &p,
                        format!("its property entity is labelled \"{SUBCLASS_OF}\""),
                    );
                    found.subclass_predicates.push(p);
                }
            }
        }
        if let Some(typing) = found.type_predicates.first().cloned() {
            let known: Vec<String> = found.subclass_predicates.clone();
            let typing_all = found.type_predicates.clone();
            let candidates: Vec<String> = [RDFS_SUBCLASS_OF, SKOS_BROADER]
                .iter()
                .map(|s| (*s).to_owned())
                .chain(
                    predicates
                        .iter()
                        .filter(|p| is_vertex_valued(p) && !typing_all.contains(&p.iri))
                        .take(STRUCTURAL_CANDIDATES)
                        .map(|p| p.iri.clone()),
                )
                .filter(|c| used.contains_key(c.as_str()) && !known.contains(c))
                .collect();
            for candidate in candidates {
                if let Some(why) = hierarchy_of(kg, &candidate, &typing).await
                    && !found.subclass_predicates.contains(&candidate)
                {
                    found.found("subclass", &candidate, why);
                    found.subclass_predicates.push(candidate);
                }
            }
        }
    }

    // Names and their languages: the configured label predicates the graph uses.
    for label in &settings.label_predicates {
        if !used.contains_key(label.as_str()) {
            continue;
        }
        let mut languages = BTreeMap::new();
        if let Some(counted) = counts.map(|c| c.predicates.get(label.as_str())) {
            let counted = counted.map(|p| &p.languages);
            for language in counted.map(|l| most_counted(l, LANGUAGES_KEPT)).unwrap_or_default() {
                let n = counted.and_then(|l| l.get(&language)).copied().unwrap_or(0);
                languages.insert(language, n);
            }
        } else if let Ok(query) = languages_query(label, LANGUAGES_KEPT) {
            for row in rows(kg, &query, "label languages").await {
                languages.insert(string(row.first()).unwrap_or_default(), number(row.get(1)));
            }
        }
        found.name_predicates.push(NamePredicate {
            iri: label.clone(),
            languages,
        });
    }

    // Descriptions.
    if let Some(set) = found.configured(
        "descriptions",
        "description_predicates",
        &settings.description_predicates,
    ) {
        found.description_predicates = set;
    } else {
        for d in DESCRIPTIONS.iter().filter(|d| used.contains_key(**d)) {
            found.found("descriptions", *d, "schema.org's description, used by the graph");
            found.description_predicates.push((*d).to_owned());
        }
    }
    found.indexed()
}

/// The predicates of the property entities whose label, read without case and spaces, holds one
/// of the settings' blacklist patterns (`wikiPage` in "wiki page wiki link").
async fn blacklisted_by_name(kg: &(impl KnowledgeGraph + ?Sized), properties: &[PropertyEntity]) -> Vec<String> {
    let patterns: Vec<String> = kg
        .settings()
        .predicate_blacklist_patterns
        .iter()
        .map(|p| squeezed(p))
        .filter(|p| !p.is_empty())
        .collect();
    if patterns.is_empty() || properties.is_empty() {
        return Vec::new();
    }
    let entities: Vec<&str> = properties.iter().map(|p| p.entity.as_str()).collect();
    let labels = match kg.graph_labels(&entities).await {
        Ok(labels) => labels,
        Err(error) => {
            tracing::warn!(%error, "property names could not be read for the blacklist");
            return Vec::new();
        }
    };
    let mut out = Vec::new();
    for property in properties {
        let Some(label) = labels.get(&property.entity) else {
            continue;
        };
        let name = squeezed(label);
        if patterns.iter().any(|p| name.contains(p.as_str())) {
            out.extend(
                [
                    &property.direct,
                    &property.claim,
                    &property.statement,
                    &property.qualifier,
                ]
                .into_iter()
                .flatten()
                .cloned(),
            );
        }
    }
    out
}

/// Lower case, letters and digits only: "wiki page wiki link" → "wikipagewikilink".
fn squeezed(text: &str) -> String {
    text.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// Whether nearly every object of a predicate is a vertex.
fn is_vertex_valued(p: &PredicateProfile) -> bool {
    p.triples >= 2 && p.iri_objects * 20 >= p.triples * 19
}

/// The direct claims whose property entity is labelled `name` (any configured label predicate,
/// any language, without case).
async fn labelled_properties(kg: &(impl KnowledgeGraph + ?Sized), name: &str) -> Vec<String> {
    let Ok(query) = labelled_property_query(WIKIBASE_DIRECT_CLAIM, &kg.settings().label_predicates, name) else {
        return Vec::new();
    };
    let mut found: Vec<String> = rows(kg, &query, "labelled properties")
        .await
        .iter()
        .filter_map(|row| iri(row.first()))
        .collect();
    found.sort();
    found.dedup();
    found
}

/// The predicate whose objects behave as classes, where the graph says nothing else: few objects
/// (at most one for two triples) shared by the subjects of most named vertices (nine in ten,
/// or half when another predicate orders its objects as a hierarchy). The candidates are the most
/// used predicates with vertices as objects, never the schema's.
async fn typing_by_behaviour(
    kg: &(impl KnowledgeGraph + ?Sized),
    predicates: &[PredicateProfile],
    found: &Conventions,
) -> Option<(String, String)> {
    let label = kg
        .settings()
        .label_predicates
        .iter()
        .find(|l| predicates.iter().any(|p| &p.iri == *l))?
        .clone();
    // Property entities are named too, but are no things to type.
    let named = match named_vertices_query(&label) {
        Ok(query) => number(rows(kg, &query, "named vertices").await.first().and_then(|r| r.first())),
        Err(_) => 0,
    }
    .saturating_sub(found.properties.len() as u64);
    if named == 0 {
        return None;
    }
    let mut best: Option<(String, u64, u64)> = None;
    for p in predicates
        .iter()
        .filter(|p| is_vertex_valued(p) && !found.is_schema_predicate(&p.iri))
        .take(STRUCTURAL_CANDIDATES)
    {
        let Ok(query) = spread_query(&p.iri) else { continue };
        let row = rows(kg, &query, "predicate spread").await;
        let (subjects, objects) = match row.first() {
            Some(row) => (number(row.first()), number(row.get(1))),
            None => continue,
        };
        // Each object shared: two subjects or more each, on average.
        let few = objects >= 2 && objects * 2 <= p.triples;
        if few && best.as_ref().is_none_or(|(_, s, _)| subjects > *s) {
            best = Some((p.iri.clone(), subjects, objects));
        }
    }
    let (p, subjects, objects) = best?;
    let share = subjects as f64 / named as f64;
    let hierarchy = if (0.5..0.9).contains(&share) {
        let mut any = false;
        for q in predicates
            .iter()
            .filter(|q| is_vertex_valued(q) && q.iri != p)
            .take(STRUCTURAL_CANDIDATES)
        {
            if hierarchy_of(kg, &q.iri, &p).await.is_some() {
                any = true;
                break;
            }
        }
        any
    } else {
        false
    };
    (share >= 0.9 || hierarchy).then(|| {
        (
            p,
            format!(
                "its {objects} objects are shared by {subjects} of the {named} named vertices ({:.0} %){}",
                share * 100.0,
                if hierarchy {
                    ", and another predicate orders them as a hierarchy"
                } else {
                    ""
                }
            ),
        )
    })
}

/// Why `candidate` orders classes (the objects of `typing`) as a hierarchy: most of a sample of
/// its subjects are classes. `None` when it does not.
async fn hierarchy_of(kg: &(impl KnowledgeGraph + ?Sized), candidate: &str, typing: &str) -> Option<String> {
    let query = hierarchy_query(candidate, typing).ok()?;
    let rows = rows(kg, &query, "hierarchy").await;
    let row = rows.first()?;
    let (sampled, classes) = (number(row.first()), number(row.get(1)));
    (sampled > 0 && classes * 5 >= sampled * 4)
        .then(|| format!("{classes} of {sampled} of its subjects sampled are classes (objects of {typing})"))
}

/// `SELECT ?c (COUNT(*) AS ?n) WHERE { ?s rdf:type ?c } GROUP BY ?c ORDER BY DESC(?n) LIMIT limit`
/// (the graph's typing predicates for `rdf:type`).
pub fn class_counts_query(limit: usize, types: TypeVocabulary<'_>) -> Result<ReadQuery, GraphError> {
    let (s, c, n) = (var("s"), var("c"), var("n"));
    let grouped = GraphPattern::Group {
        inner: Box::new(types.typed(s, c.clone())?),
        variables: vec![c.clone()],
        aggregates: vec![(n.clone(), AggregateExpression::CountSolutions { distinct: false })],
    };
    ranked(grouped, vec![c, n.clone()], n, limit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rdfs_typing_is_one_triple_and_a_subclass_path() {
        let types = RDFS_TYPES;
        let typed = types.typed(var("x"), var("c")).unwrap();
        assert!(matches!(&typed, GraphPattern::Bgp { patterns } if patterns.len() == 1));
        let sub = types.subclass_path(var("t"), var("c")).unwrap().unwrap();
        assert!(matches!(sub, GraphPattern::Path { .. }));
    }

    #[test]
    fn several_typing_predicates_are_a_path_of_alternatives() {
        let typing = vec![
            RDF_TYPE.to_owned(),
            "http://www.wikidata.org/prop/direct/P31".to_owned(),
        ];
        let types = TypeVocabulary {
            type_predicates: &typing,
            subclass_predicates: &[],
        };
        let typed = types.typed(var("x"), var("c")).unwrap();
        let GraphPattern::Path { path, .. } = typed else {
            panic!("not a path: {typed:?}")
        };
        assert!(matches!(path, PropertyPathExpression::Alternative(..)));
        assert_eq!(types.subclass_path(var("t"), var("c")).unwrap(), None);
    }

    #[test]
    fn property_entities_and_wikibase_terms_are_schema() {
        let conventions = Conventions {
            properties: vec![PropertyEntity {
                entity: "http://www.wikidata.org/entity/P57".into(),
                direct: Some("http://www.wikidata.org/prop/direct/P57".into()),
                qualifier: Some("http://www.wikidata.org/prop/qualifier/P57".into()),
                ..PropertyEntity::default()
            }],
            description_predicates: vec![SCHEMA_DESCRIPTION.into()],
            ..Conventions::default()
        }
        .indexed();
        assert!(conventions.is_schema_vertex("http://www.wikidata.org/entity/P57"));
        assert!(conventions.is_schema_vertex("http://wikiba.se/ontology#Property"));
        assert!(!conventions.is_schema_vertex("http://www.wikidata.org/entity/Q42"));
        assert!(conventions.is_schema_predicate(RDF_TYPE));
        assert!(conventions.is_schema_predicate(SCHEMA_DESCRIPTION));
        assert!(conventions.is_schema_predicate(WIKIBASE_RANK));
        assert!(!conventions.is_schema_predicate("http://www.wikidata.org/prop/direct/P57"));
        let (entity, role) = conventions
            .property_of("http://www.wikidata.org/prop/qualifier/P57")
            .unwrap();
        assert_eq!(entity.entity, "http://www.wikidata.org/entity/P57");
        assert_eq!(role, PropertyRole::Qualifier);
    }

    #[test]
    fn schema_classes_are_those_of_the_vocabularies_but_owl_thing() {
        assert!(is_schema_class("http://wikiba.se/ontology#Property"));
        assert!(is_schema_class("http://www.w3.org/2002/07/owl#Class"));
        assert!(!is_schema_class(OWL_THING));
        assert!(!is_schema_class("http://dbpedia.org/ontology/City"));
    }
}
