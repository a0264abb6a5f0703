//! The question intermediate representation (QIR) and its validator.
//!
//! QIR = (E, U, R, RF): entities mentioned in the question, unknowns (the target and any
//! intermediate variables), relation phrases, and triples ⟨s, r, o⟩ with s, o ∈ E ∪ U and r ∈ R.
//! We add what query generation needs beyond the paper: the question's kind (list, boolean,
//! count) and an optional ordering for superlatives.

use serde::{Deserialize, Serialize};

/// What the QIR agent's model returns (before validation).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RawQir {
    #[serde(default)]
    pub entities: Vec<String>,
    #[serde(default)]
    pub unknowns: Vec<String>,
    #[serde(default)]
    pub relations: Vec<String>,
    pub triples: Vec<Vec<String>>,
    #[serde(default, rename = "type")]
    pub kind: Option<QuestionKind>,
    #[serde(default)]
    pub order: Option<Order>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum QuestionKind {
    /// Which/who/what: the values of the target variable.
    #[default]
    List,
    /// Yes/no: an ASK query.
    Boolean,
    /// How many: a COUNT query.
    Count,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    Asc,
    Desc,
}

/// A subject or object of a QIR triple.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(tag = "kind", content = "name", rename_all = "lowercase")]
pub enum QirTerm {
    /// A name to link to a vertex of the graph.
    Entity(String),
    /// An unknown, without its leading `?`.
    Variable(String),
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QirTriple {
    pub subject: QirTerm,
    pub relation: String,
    pub object: QirTerm,
}

/// Where a QIR came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum QirSource {
    /// The QIR agent's model, validated.
    #[default]
    Model,
    /// The model gave no valid QIR in θ attempts; the longest span of the question that is exactly
    /// an entity's label became the entity, and the rest of the question the relation phrase.
    EntitySpotting,
    /// The question names no entity but a class of the graph ("how many countries are there?",
    /// "which is the largest city?"): it is about the class's instances.
    Class,
    /// The question names no entity but a value its answers have ("which organizations were
    /// founded in 1950?", "who was born in 1945?").
    Value,
    /// The question names nothing but the earlier answer it restricts and an order ("which
    /// one of those takes the most disk space?"): that answer's members are ordered.
    AnswerSet,
    /// No span of the question is a label, but it writes names (quoted, or in capitals): they
    /// are its entities, linked by search as the model's would be (a name misspelt, written in
    /// part or otherwise than the graph's label: "Allison C. Bonnell" for "A. C. Bonnell").
    WrittenNames,
}

/// A validated QIR.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Qir {
    pub entities: Vec<String>,
    /// Variable names without `?`; the first is the target (projected) variable.
    pub unknowns: Vec<String>,
    pub relations: Vec<String>,
    pub triples: Vec<QirTriple>,
    pub kind: QuestionKind,
    pub order: Option<Order>,
    #[serde(default)]
    pub source: QirSource,
}

impl Qir {
    /// The variable the answer is read from.
    pub fn target(&self) -> Option<&str> {
        self.unknowns.first().map(String::as_str)
    }
}

/// The paper's Triples Validator: well-formed triples; at least one mentions a known entity;
/// non-boolean questions have at least one variable. Returns the QIR, or feedback for a retry.
pub struct TriplesValidator;

impl TriplesValidator {
    pub fn validate(raw: &RawQir) -> Result<Qir, String> {
        if raw.triples.is_empty() {
            return Err("there are no triples; write at least one [subject, relation, object]".into());
        }
        let mut entities: Vec<String> = raw
            .entities
            .iter()
            .map(|e| e.trim().to_owned())
            .filter(|e| !e.is_empty())
            .collect();
        let mut unknowns: Vec<String> = Vec::new();
        for u in &raw.unknowns {
            let name = u.trim().trim_start_matches('?');
            if !name.is_empty() && !unknowns.contains(&sanitize_variable(name)) {
                unknowns.push(sanitize_variable(name));
            }
        }
        let mut relations: Vec<String> = raw
            .relations
            .iter()
            .map(|r| r.trim().to_owned())
            .filter(|r| !r.is_empty())
            .collect();
        let repaired = repair_answer_slots(raw);
        let mut triples = Vec::new();
        for triple in &repaired {
            let [s, r, o] = triple.as_slice() else {
                return Err(format!(
                    "{triple:?} is not a triple: write exactly [subject, relation, object]"
                ));
            };
            let (s, r, o) = (s.trim(), r.trim(), o.trim());
            if s.is_empty() || r.is_empty() || o.is_empty() {
                return Err(format!("{triple:?} has an empty part"));
            }
            let term = |text: &str, entities: &mut Vec<String>, unknowns: &mut Vec<String>| {
                if let Some(name) = text.strip_prefix('?') {
                    let name = sanitize_variable(name);
                    if !unknowns.contains(&name) {
                        unknowns.push(name.clone());
                    }
                    QirTerm::Variable(name)
                } else {
                    if !entities.iter().any(|e| e == text) {
                        entities.push(text.to_owned());
                    }
                    QirTerm::Entity(text.to_owned())
                }
            };
            let subject = term(s, &mut entities, &mut unknowns);
            let object = term(o, &mut entities, &mut unknowns);
            if !relations.iter().any(|x| x == r) {
                relations.push(r.to_owned());
            }
            triples.push(QirTriple {
                subject,
                relation: r.to_owned(),
                object,
            });
        }
        let kind = raw.kind.unwrap_or_default();
        if !triples
            .iter()
            .any(|t| matches!(t.subject, QirTerm::Entity(_)) || matches!(t.object, QirTerm::Entity(_)))
        {
            return Err("no triple mentions an entity named in the question".into());
        }
        if kind != QuestionKind::Boolean && unknowns.is_empty() {
            return Err("the question asks for something, but no triple has a variable such as ?answer".into());
        }
        // Keep only unknowns that occur in a triple; the target is the first declared one used.
        unknowns.retain(|u| {
            triples
                .iter()
                .any(|t| t.subject == QirTerm::Variable(u.clone()) || t.object == QirTerm::Variable(u.clone()))
        });
        entities.retain(|e| {
            triples
                .iter()
                .any(|t| t.subject == QirTerm::Entity(e.clone()) || t.object == QirTerm::Entity(e.clone()))
        });
        if kind != QuestionKind::Boolean && unknowns.is_empty() {
            return Err("no triple uses a declared unknown".into());
        }
        relations.retain(|r| triples.iter().any(|t| &t.relation == r));
        Ok(Qir {
            entities,
            unknowns,
            relations,
            triples,
            kind,
            order: raw.order,
            source: QirSource::Model,
        })
    }
}

/// Beyond the paper: every entity must be written in the question. Small models copy names from
/// the few-shot examples ("Stephen King" in a question about "Big"); this catches it and says so.
/// Words match exactly, with one typo, or as a prefix; words of three letters or fewer may be
/// missing ("the", "of").
pub fn entities_in_question(qir: &Qir, question: &str) -> Result<(), String> {
    let words = chatty_kg_graph::text::normalize_tokens(question);
    let found = |token: &str| {
        token.len() <= 3
            || words.iter().any(|w| {
                w == token
                    || (token.len() >= 4 && chatty_kg_graph::text::within_one_edit(w, token))
                    || (w.len() >= 3 && token.starts_with(w.as_str()))
            })
    };
    for entity in &qir.entities {
        if !chatty_kg_graph::text::normalize_tokens(entity).iter().all(|t| found(t)) {
            return Err(format!(
                "{entity:?} is not written in the question; use only names that appear in the question"
            ));
        }
    }
    Ok(())
}

/// A repair for a habit of small models: they fill the answer's slot with a guessed value
/// (`["Penthouse", "genre", "Drama"]`) while declaring `?answer` and never using it. A term that is
/// neither a declared entity nor a variable takes the place of the first declared, unused unknown.
/// (The guess is never kept: only the graph answers.)
fn repair_answer_slots(raw: &RawQir) -> Vec<Vec<String>> {
    let mut triples = raw.triples.clone();
    let declared: Vec<&str> = raw
        .entities
        .iter()
        .map(|e| e.trim())
        .filter(|e| !e.is_empty())
        .collect();
    if declared.is_empty() {
        return triples;
    }
    let used = |triples: &[Vec<String>], name: &str| {
        triples
            .iter()
            .flatten()
            .any(|t| t.trim().strip_prefix('?').is_some_and(|v| sanitize_variable(v) == name))
    };
    for unknown in &raw.unknowns {
        let name = sanitize_variable(unknown.trim().trim_start_matches('?'));
        if used(&triples, &name) {
            continue;
        }
        let guess = triples.iter_mut().find_map(|t| {
            let len = t.len();
            t.iter_mut()
                .enumerate()
                .find(|(i, term)| {
                    (*i == 0 || *i + 1 == len) && !term.trim().starts_with('?') && !declared.contains(&term.trim())
                })
                .map(|(_, term)| term)
        });
        match guess {
            Some(term) => *term = format!("?{name}"),
            None => break,
        }
    }
    triples
}

/// SPARQL variable names allow letters, digits and `_`; only ASCII ones are kept (SPARQL's
/// Unicode letters are ranges that `char::is_alphanumeric` does not match: `µ`, `²`).
fn sanitize_variable(name: &str) -> String {
    let cleaned: String = name
        .trim()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' })
        .collect();
    if cleaned.is_empty() { "answer".into() } else { cleaned }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variables_are_always_sparql_names() {
        for name in ["answer", "µ", "x²", "film year", "", "?", "ü_1"] {
            let cleaned = sanitize_variable(name);
            assert!(
                spargebra::term::Variable::new(&cleaned).is_ok(),
                "{name:?} -> {cleaned:?}"
            );
        }
        assert_eq!(sanitize_variable("film year"), "film_year");
    }

    fn raw(triples: &[[&str; 3]], kind: Option<QuestionKind>) -> RawQir {
        RawQir {
            entities: vec![],
            unknowns: vec![],
            relations: vec![],
            triples: triples
                .iter()
                .map(|t| t.iter().map(|s| (*s).to_owned()).collect())
                .collect(),
            kind,
            order: None,
        }
    }

    #[test]
    fn multi_hop_qir_keeps_declared_target_first() {
        let mut r = raw(
            &[
                ["?movie", "written by", "Stephen King"],
                ["?movie", "directed by", "?answer"],
            ],
            None,
        );
        r.unknowns = vec!["?answer".into(), "?movie".into()];
        r.entities = vec!["Stephen King".into(), "Maine".into()];
        let qir = TriplesValidator::validate(&r).unwrap();
        assert_eq!(qir.target(), Some("answer"));
        assert_eq!(qir.unknowns, vec!["answer", "movie"]);
        assert_eq!(
            qir.entities,
            vec!["Stephen King"],
            "entities no triple uses are dropped"
        );
        assert_eq!(qir.relations, vec!["written by", "directed by"]);
        assert_eq!(qir.triples[0].object, QirTerm::Entity("Stephen King".into()));
        assert_eq!(qir.kind, QuestionKind::List);
    }

    #[test]
    fn the_papers_four_conditions() {
        // (2) every triple has a subject, a relation and an object.
        assert!(TriplesValidator::validate(&raw(&[["Alien", "", "?x"]], None)).is_err());
        let mut two = raw(&[], None);
        two.triples = vec![vec!["Alien".into(), "directed by".into()]];
        assert!(TriplesValidator::validate(&two).unwrap_err().contains("exactly"));
        assert!(TriplesValidator::validate(&raw(&[], None)).is_err());
        // (3) at least one triple mentions an entity.
        assert!(
            TriplesValidator::validate(&raw(&[["?x", "directed", "?y"]], None))
                .unwrap_err()
                .contains("entity")
        );
        // (4) non-boolean questions need a variable; boolean ones may be fully grounded.
        assert!(TriplesValidator::validate(&raw(&[["Michelle", "wife of", "Barack Obama"]], None)).is_err());
        let ask = TriplesValidator::validate(&raw(
            &[["Michelle", "wife of", "Barack Obama"]],
            Some(QuestionKind::Boolean),
        ))
        .unwrap();
        assert_eq!(ask.kind, QuestionKind::Boolean);
        assert!(ask.unknowns.is_empty());
    }

    #[test]
    fn a_guessed_answer_gives_its_slot_back_to_the_unused_unknown() {
        let mut r = raw(&[["Penthouse", "genre", "Drama"]], None);
        r.entities = vec!["Penthouse".into()];
        r.unknowns = vec!["?answer".into()];
        let qir = TriplesValidator::validate(&r).unwrap();
        assert_eq!(qir.triples[0].object, QirTerm::Variable("answer".into()));
        assert_eq!(qir.entities, vec!["Penthouse"]);
        // Nothing is repaired when the unknown is used, or when no entities are declared.
        let mut used = raw(&[["Penthouse", "genre", "?answer"], ["?answer", "like", "Drama"]], None);
        used.entities = vec!["Penthouse".into()];
        used.unknowns = vec!["?answer".into()];
        let qir = TriplesValidator::validate(&used).unwrap();
        assert_eq!(qir.triples[1].object, QirTerm::Entity("Drama".into()));
        let mut undeclared = raw(&[["Penthouse", "genre", "Drama"]], None);
        undeclared.unknowns = vec!["?answer".into()];
        assert!(TriplesValidator::validate(&undeclared).is_err());
    }

    #[test]
    fn entities_must_come_from_the_question() {
        let qir = TriplesValidator::validate(&raw(&[["Stephen King", "wrote", "?answer"]], None)).unwrap();
        assert!(entities_in_question(&qir, "What did Stephen King write?").is_ok());
        assert!(
            entities_in_question(&qir, "what did stephen kings write").is_ok(),
            "one typo"
        );
        assert!(
            entities_in_question(&qir, "Who directed Big?")
                .unwrap_err()
                .contains("Stephen King")
        );
        let the = TriplesValidator::validate(&raw(&[["The Matrix", "released", "?y"]], None)).unwrap();
        assert!(entities_in_question(&the, "When was Matrix released?").is_ok());
    }

    #[test]
    fn variables_become_sparql_names() {
        let qir = TriplesValidator::validate(&raw(
            &[["Alien", "release year", "?release year!"]],
            Some(QuestionKind::List),
        ))
        .unwrap();
        assert_eq!(qir.unknowns, vec!["release_year_"]);
        let qir = TriplesValidator::validate(&raw(&[["Alien", "release year", "?"]], None)).unwrap();
        assert_eq!(qir.unknowns, vec!["answer"]);
    }
}
