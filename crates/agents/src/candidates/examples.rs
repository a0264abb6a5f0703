//! Examples: answers people rated up or corrected, kept as evidence for later questions.
//!
//! An example keeps the question with the vertices it names masked ("who directed X?"), that
//! text's sentence embedding, and the query that answered it (the answer's own query when rated
//! up, the correction's when corrected) with its anchors — the IRIs it starts from
//! ([`ReadQuery::anchor_iris`]) — in the order the question names them. Predicates, classes,
//! filters, order and form stay: that is the shape.
//!
//! A later question whose masked text is close enough to an example's (cosine of the embeddings
//! at least `example_similarity`), that asks in the same form and names as many vertices, gets
//! the example's query with its own anchors in their place ([`ReadQuery::with_iris_replaced`]),
//! in the order the question names them and then the other orders. The query planner runs it on
//! the graph like any candidate: an answer the graph gives is taken (and the explanation names
//! the example), an empty one leaves the ranking's own candidates to answer. An example never
//! answers from what it stored, only from the graph.
//!
//! Examples belong to the key that gave the feedback; an operator's imports are shared. The
//! [`ExampleBook`] holds a knowledge graph's examples in memory for the questions; the session
//! store keeps them.

use crate::context::AgentContext;
use crate::error::AgentError;
pub use crate::example_book::{
    Example, ExampleBook, ExampleUse, Holder, MASK, MAX_ANCHORS, MAX_EXAMPLES, NoExample, SaidBy, Tried,
    WORDS_TOLERANCE,
};
use crate::qir::QuestionKind;
use chatty_kg_graph::ReadQuery;
use spargebra::Query;
use spargebra::algebra::{AggregateExpression, AggregateFunction, GraphPattern};
use spargebra::term::{NamedNodePattern, TermPattern, TriplePattern};
use std::collections::HashMap;

impl Example {
    /// The example of `question`, answered by `sparql`, whose mentions the pipeline linked as
    /// `links` (mention, IRI); `form` is the question's form as the pipeline read it.
    pub async fn make(
        ctx: &AgentContext,
        question: &str,
        links: &[(String, String)],
        sparql: &str,
        form: Option<QuestionKind>,
    ) -> Result<Self, NoExample> {
        let query = ReadQuery::parse(sparql).map_err(|e| NoExample::Unreadable(e.to_string()))?;
        let profile = ctx.kg.profile_or_default().await;
        let typing = profile.conventions.types().type_iris();
        let iris = query.anchor_iris(&typing);
        if iris.is_empty() {
            return Err(NoExample::NoAnchor);
        }
        if iris.len() > MAX_ANCHORS {
            return Err(NoExample::TooManyAnchors(iris.len()));
        }
        // Where the question names each anchor: its linked mention, else its label.
        let refs: Vec<&str> = iris.iter().map(String::as_str).collect();
        let labels = ctx.kg.labels(&refs).await.map_err(AgentError::from)?;
        let mut named: Vec<(usize, String, Option<String>)> = iris
            .iter()
            .map(|iri| {
                let found = links
                    .iter()
                    .filter(|(_, linked)| linked == iri)
                    .map(|(m, _)| m.clone())
                    .chain(labels.get(iri).cloned())
                    .find_map(|m| Some((position(question, &m)?, m)));
                match found {
                    Some((at, mention)) => (at, iri.clone(), Some(mention)),
                    None => (usize::MAX, iri.clone(), None),
                }
            })
            .collect();
        named.sort_by_key(|(at, _, _)| *at);
        let mut mentions: Vec<String> = named.iter().filter_map(|(_, _, m)| m.clone()).collect();
        mentions.extend(links.iter().map(|(m, _)| m.clone()));
        let masked = mask(question, &mentions);
        let embedding = crate::similarity::embed(ctx, vec![masked.clone()])
            .await?
            .pop()
            .unwrap_or_default();
        Ok(Self {
            question: question.to_owned(),
            masked,
            embedding,
            sparql: sparql.trim().to_owned(),
            anchors: named.into_iter().map(|(_, iri, _)| iri).collect(),
            form: form.unwrap_or_else(|| form_of(&query)),
        })
    }
}

/// Where `mention` starts in `question` (ignoring case), if it does.
fn position(question: &str, mention: &str) -> Option<usize> {
    let mention = mention.trim().to_lowercase();
    if mention.is_empty() {
        return None;
    }
    question.to_lowercase().find(&mention)
}

/// `question` with each of `mentions` (longest first, ignoring case) replaced by [`MASK`].
pub fn mask(question: &str, mentions: &[String]) -> String {
    let mut masked = question.to_owned();
    let mut mentions: Vec<&str> = mentions.iter().map(|m| m.trim()).filter(|m| !m.is_empty()).collect();
    mentions.sort_by_key(|m| std::cmp::Reverse(m.len()));
    for mention in mentions {
        // Lowercasing keeps byte offsets only for text whose case maps keep lengths.
        let lower = masked.to_lowercase();
        if lower.len() != masked.len() {
            masked = masked.replace(mention, MASK);
            continue;
        }
        if let Some(at) = lower.find(&mention.to_lowercase()) {
            masked.replace_range(at..at + mention.len(), MASK);
        }
    }
    masked
}

/// The form a query answers in: yes/no for ASK, a count when it projects a COUNT, else a list.
fn form_of(query: &ReadQuery) -> QuestionKind {
    fn counts(pattern: &GraphPattern) -> bool {
        match pattern {
            GraphPattern::Group { aggregates, .. } => aggregates.iter().any(|(_, a)| {
                matches!(a, AggregateExpression::CountSolutions { .. })
                    || matches!(
                        a,
                        AggregateExpression::FunctionCall {
                            name: AggregateFunction::Count,
                            ..
                        }
                    )
            }),
            GraphPattern::Project { inner, .. }
            | GraphPattern::Distinct { inner }
            | GraphPattern::Reduced { inner }
            | GraphPattern::Slice { inner, .. }
            | GraphPattern::OrderBy { inner, .. }
            | GraphPattern::Extend { inner, .. } => counts(inner),
            _ => false,
        }
    }
    match query.as_query() {
        Query::Ask { .. } => QuestionKind::Boolean,
        Query::Select { pattern, .. } if counts(pattern) => QuestionKind::Count,
        _ => QuestionKind::List,
    }
}

impl ExampleBook {
    /// The nearest usable example within `example_similarity`, tried on `anchors` (mention,
    /// IRI): its query with them in its anchors' places, in each order (the order the question
    /// names them first), unless the question says the example's relations less than the
    /// example's question did.
    pub async fn tried(
        &self,
        ctx: &AgentContext,
        question: &str,
        anchors: &[(String, String)],
        form: QuestionKind,
        asker: Option<&str>,
    ) -> Result<Option<Tried>, AgentError> {
        if anchors.is_empty() || anchors.len() > MAX_ANCHORS || !self.any_usable(asker, form, anchors.len()) {
            return Ok(None);
        }
        let mentions: Vec<String> = anchors.iter().map(|(m, _)| m.clone()).collect();
        let masked = mask(question, &mentions);
        let embedding = crate::similarity::embed(ctx, vec![masked.clone()])
            .await?
            .pop()
            .unwrap_or_default();
        let Some((id, example, query, similarity)) = self.nearest(&embedding, asker, form, anchors.len()) else {
            return Ok(None);
        };
        if similarity < ctx.params.example_similarity {
            return Ok(None);
        }
        // What the example's query says (its predicates' and classes' names), said by each question.
        let profile = ctx.kg.profile_or_default().await;
        let terms = shape_terms(&query, &profile.conventions.types().type_iris());
        let refs: Vec<&str> = terms.iter().map(String::as_str).collect();
        let names = ctx.kg.predicate_names(&refs).await?;
        let mut names: Vec<String> = terms.iter().filter_map(|t| names.get(t).cloned()).collect();
        names.dedup();
        // The words only one of the two questions has are where they differ: the example's
        // relations must be said by this question's own words as well as by the example's.
        // A question with no words of its own says nothing of a relation (0).
        let own = [only_in(&masked, &example.masked), only_in(&example.masked, &masked)];
        let mut texts = names.clone();
        texts.extend(own.iter().filter(|t| !t.is_empty()).cloned());
        let vectors = crate::similarity::embed(ctx, texts).await?;
        let (names_v, own_v) = vectors.split_at(names.len().min(vectors.len()));
        let mut own_v = own_v.iter();
        let [mine_v, theirs_v] = own.map(|t| if t.is_empty() { None } else { own_v.next() });
        let said = |name: &Vec<f32>, words: Option<&Vec<f32>>| words.map_or(0.0, |w| chatty_kg_embed::cosine(name, w));
        let words: Vec<SaidBy> = names
            .into_iter()
            .zip(names_v)
            .map(|(name, v)| SaidBy {
                name,
                example: said(v, theirs_v),
                question: said(v, mine_v),
            })
            .collect();
        let fits = words.iter().all(|w| w.question >= w.example - WORDS_TOLERANCE);
        let mut used = ExampleUse {
            id,
            question: example.question.clone(),
            similarity,
            words,
            fits,
            anchors: Vec::new(),
            answered: false,
        };
        let mut named: Vec<(usize, &str)> = anchors
            .iter()
            .map(|(m, iri)| (position(question, m).unwrap_or(usize::MAX), iri.as_str()))
            .collect();
        named.sort_by_key(|(at, _)| *at);
        let ordered: Vec<&str> = named.into_iter().map(|(_, iri)| iri).collect();
        used.anchors = example
            .anchors
            .iter()
            .zip(&ordered)
            .map(|(slot, iri)| (slot.clone(), (*iri).to_owned()))
            .collect();
        let mut queries = Vec::new();
        if fits {
            for order in orders(ordered.len()) {
                let pairs: Vec<(String, String)> = example
                    .anchors
                    .iter()
                    .zip(&order)
                    .map(|(slot, &i)| (slot.clone(), ordered[i].to_owned()))
                    .collect();
                let replace: HashMap<String, String> = pairs.iter().cloned().collect();
                queries.push((pairs, query.with_iris_replaced(&replace)?));
            }
        }
        Ok(Some(Tried { used, queries }))
    }
}

/// The words of `text` that `other` does not have (ignoring case), in order.
fn only_in(text: &str, other: &str) -> String {
    let words = |t: &str| -> Vec<String> {
        t.split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect()
    };
    let theirs = words(other);
    words(text)
        .into_iter()
        .filter(|w| !theirs.contains(w))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The predicates (but the typing ones, `rdf:type` and `typing`) and classes of a query's
/// patterns, in order.
fn shape_terms(query: &ReadQuery, typing: &[String]) -> Vec<String> {
    const RDF_TYPE: &str = chatty_kg_graph::conventions::RDF_TYPE;
    let types = |p: &str| p == RDF_TYPE || typing.iter().any(|t| t == p);
    let mut terms: Vec<String> = Vec::new();
    for pattern in triple_patterns(query) {
        let NamedNodePattern::NamedNode(predicate) = &pattern.predicate else {
            continue;
        };
        let term = match (&pattern.object, predicate.as_str()) {
            (TermPattern::NamedNode(class), p) if types(p) => class.as_str(),
            (_, p) if types(p) => continue,
            (_, p) => p,
        };
        if !terms.iter().any(|t| t == term) {
            terms.push(term.to_owned());
        }
    }
    terms
}

/// The triple patterns of a query's basic graph patterns (its answers' provenance).
pub fn triple_patterns(query: &ReadQuery) -> Vec<TriplePattern> {
    fn collect(pattern: &GraphPattern, out: &mut Vec<TriplePattern>) {
        match pattern {
            GraphPattern::Bgp { patterns } => out.extend(patterns.iter().cloned()),
            GraphPattern::Join { left, right } | GraphPattern::LeftJoin { left, right, .. } => {
                collect(left, out);
                collect(right, out);
            }
            GraphPattern::Minus { left, .. } => collect(left, out),
            GraphPattern::Filter { inner, .. }
            | GraphPattern::Project { inner, .. }
            | GraphPattern::Distinct { inner }
            | GraphPattern::Reduced { inner }
            | GraphPattern::Slice { inner, .. }
            | GraphPattern::OrderBy { inner, .. }
            | GraphPattern::Extend { inner, .. }
            | GraphPattern::Group { inner, .. }
            | GraphPattern::Graph { inner, .. } => collect(inner, out),
            _ => {}
        }
    }
    let mut out = Vec::new();
    match query.as_query() {
        Query::Select { pattern, .. } | Query::Ask { pattern, .. } => collect(pattern, &mut out),
        _ => {}
    }
    out
}

/// The orders of `n` things, the given one first.
fn orders(n: usize) -> Vec<Vec<usize>> {
    fn extend(prefix: &mut Vec<usize>, n: usize, out: &mut Vec<Vec<usize>>) {
        if prefix.len() == n {
            out.push(prefix.clone());
            return;
        }
        for i in 0..n {
            if !prefix.contains(&i) {
                prefix.push(i);
                extend(prefix, n, out);
                prefix.pop();
            }
        }
    }
    let mut out = Vec::new();
    extend(&mut Vec::new(), n, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mentions_are_masked_longest_first_ignoring_case() {
        let masked = mask(
            "Who directed the Dark Knight and Dark Knight Rises?",
            &["dark knight".into(), "Dark Knight Rises".into()],
        );
        assert_eq!(masked, "Who directed the X and X?");
        assert_eq!(mask("Who is Ça?", &["ça".into()]), "Who is X?");
    }

    #[test]
    fn the_given_order_comes_first() {
        assert_eq!(orders(2), vec![vec![0, 1], vec![1, 0]]);
        assert_eq!(orders(3).len(), 6);
        assert_eq!(orders(3)[0], vec![0, 1, 2]);
    }

    #[test]
    fn a_query_tells_its_form() {
        let form = |q: &str| form_of(&ReadQuery::parse(q).unwrap());
        assert_eq!(
            form("ASK { <http://e/a> <http://e/p> <http://e/b> }"),
            QuestionKind::Boolean
        );
        assert_eq!(
            form("SELECT (COUNT(DISTINCT ?x) AS ?c) WHERE { ?x <http://e/p> <http://e/b> }"),
            QuestionKind::Count
        );
        assert_eq!(
            form("SELECT ?x WHERE { ?x <http://e/p> <http://e/b> }"),
            QuestionKind::List
        );
    }
}
