//! A word that joins a relation's name to another ("architecture-independent", "GPL-licensed",
//! "French-language") names one of that relation's values, though no label holds it: the
//! architecture "all". The graph gives the candidates — the vertices the relation reaches, a
//! bounded sample of them — and each is read with the relation's name, as the word reads it
//! ("architecture all", "architecture amd64"); the word's embedding against those readings
//! chooses, when one is clearly closest. No list of words says what "independent" means.

use crate::context::AgentContext;
use crate::error::AgentError;
use crate::linking::link::{EntityLink, LinkMethod};
use crate::similarity::closest_in_meaning;
use chatty_kg_graph::text::normalize_tokens;
use chatty_kg_graph::{QueryResults, ReadQuery, named_node, triple, var};
use spargebra::algebra::{Expression, Function, GraphPattern};

/// Relations whose names the word holds, tried at most (the most used first).
const RELATIONS: usize = 3;
/// Triples of a relation read for its values (the first ones the store gives).
const TRIPLES_READ: usize = 20_000;
/// Distinct values of a relation compared with the word at most.
const VALUES: usize = 100;
/// The least similarity at which "relation value" says what the word says ("architecture-
/// independent" / "architecture all" is 0.71; "architecture amd64" 0.52).
const SIMILARITY: f32 = 0.6;
/// The best reading must be this much closer to the word than the next.
const MARGIN: f32 = 0.05;

/// The words of a compound written with a hyphen ("architecture-independent"), lower case;
/// empty for anything else.
fn compound_words(mention: &str) -> Vec<String> {
    let mention = mention.trim();
    if !mention.contains('-') || mention.contains(char::is_whitespace) {
        return Vec::new();
    }
    let words: Vec<String> = mention
        .split('-')
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()).to_lowercase())
        .collect();
    if words.len() < 2 || words.iter().any(|w| w.len() < 2) {
        return Vec::new();
    }
    words
}

/// Whether a word of the compound is a word of the relation's name, or that word inflected
/// ("licensed": "license"; "architecture": "architecture"), never one merely holding its letters
/// ("independent" holds "depend").
fn names_relation(label: &str, word: &str) -> bool {
    normalize_tokens(label).iter().any(|l| {
        l == word || (l.len() >= 4 && word.len() >= 4 && (word.starts_with(l.as_str()) || l.starts_with(word)))
    })
}

/// `SELECT DISTINCT ?o WHERE { { SELECT ?o WHERE { ?s <predicate> ?o } LIMIT 20000 }
/// FILTER(isIRI(?o)) } LIMIT 100`: some of the vertices a relation reaches, bounded however many
/// triples it has.
fn values_query(predicate: &str) -> Result<ReadQuery, chatty_kg_graph::GraphError> {
    let o = var("o");
    let read = GraphPattern::Slice {
        inner: Box::new(GraphPattern::Project {
            inner: Box::new(GraphPattern::Bgp {
                patterns: vec![triple(var("s"), named_node(predicate)?, o.clone())],
            }),
            variables: vec![o.clone()],
        }),
        start: 0,
        length: Some(TRIPLES_READ),
    };
    ReadQuery::select(GraphPattern::Slice {
        inner: Box::new(GraphPattern::Distinct {
            inner: Box::new(GraphPattern::Project {
                inner: Box::new(GraphPattern::Filter {
                    expr: Expression::FunctionCall(Function::IsIri, vec![Expression::Variable(o.clone())]),
                    inner: Box::new(read),
                }),
                variables: vec![o],
            }),
        }),
        start: 0,
        length: Some(VALUES),
    })
}

/// The value of a relation named in the compound `mention` that the compound says, linked as
/// [`LinkMethod::RelationValue`] (its candidates' readings with their similarity in
/// `top_candidates`); `None` when the mention is no such compound, no relation's name is in it,
/// or no reading is close enough and clearly closest.
pub(crate) async fn relation_value(ctx: &AgentContext, mention: &str) -> Option<EntityLink> {
    // A graph error (a timeout reading the values) links nothing: the mention is left as it was.
    match read_relation_value(ctx, mention).await {
        Ok(link) => link,
        Err(error) => {
            tracing::info!(%error, mention, "a compound's relation values not read");
            None
        }
    }
}

async fn read_relation_value(ctx: &AgentContext, mention: &str) -> Result<Option<EntityLink>, AgentError> {
    let words = compound_words(mention);
    if words.is_empty() {
        return Ok(None);
    }
    let profile = ctx.kg.profile_or_default().await;
    let relations: Vec<(String, String)> = profile
        .predicates
        .iter()
        .filter(|p| p.iri_objects > 0 && words.iter().any(|w| names_relation(&p.label, w)))
        .take(RELATIONS)
        .map(|p| (p.iri.clone(), p.label.clone()))
        .collect();
    // (value IRI, its name, the reading compared with the word).
    let mut readings: Vec<(String, String, String)> = Vec::new();
    for (predicate, relation) in &relations {
        let QueryResults::Solutions(s) = ctx.kg.query(&values_query(predicate)?).await? else {
            continue;
        };
        let values: Vec<&str> = s.iris("o").collect();
        let names = ctx.kg.labels(&values).await?;
        for value in values {
            if let Some(name) = names.get(value) {
                readings.push((value.to_owned(), name.clone(), format!("{relation} {name}")));
            }
        }
    }
    if readings.is_empty() {
        return Ok(None);
    }
    let texts: Vec<String> = readings.iter().map(|r| r.2.clone()).collect();
    let (scored, clear) = closest_in_meaning(ctx, mention, &texts, SIMILARITY, MARGIN).await?;
    let (best, i) = scored[0];
    tracing::debug!(mention, best = %readings[i].2, similarity = best, clear, "a compound naming a relation's value");
    if !clear {
        return Ok(None);
    }
    Ok(Some(EntityLink {
        mention: mention.to_owned(),
        iri: Some(readings[i].0.clone()),
        label: Some(readings[i].1.clone()),
        method: LinkMethod::RelationValue,
        candidates: readings.len(),
        top_candidates: scored
            .iter()
            .take(3)
            .map(|&(s, j)| format!("{} ({s:.2})", readings[j].2))
            .collect(),
        homonyms: Vec::new(),
        homonym_retried: false,
        read_as_words: false,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_hyphenated_word_is_a_compound() {
        assert_eq!(
            compound_words("architecture-independent"),
            ["architecture", "independent"]
        );
        assert_eq!(compound_words("GPL-licensed"), ["gpl", "licensed"]);
        assert!(compound_words("architecture independent").is_empty());
        assert!(compound_words("Jean-Paul Sartre").is_empty());
        assert!(compound_words("x-ray").is_empty());
        assert!(compound_words("emacs").is_empty());
    }

    #[test]
    fn a_relation_is_named_by_its_own_words() {
        assert!(names_relation("architecture", "architecture"));
        assert!(names_relation("license", "licensed"));
        assert!(names_relation("original language", "language"));
        assert!(!names_relation("depends on", "independent"));
        assert!(!names_relation("in block", "independent"));
    }
}
