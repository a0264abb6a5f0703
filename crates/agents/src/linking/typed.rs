//! A mention the question types itself: the name of a class of the graph written right after it
//! ("the *dash* source package", "*required* priority", "the Riverton film"), or between an
//! article and it ("the package *gnuplot*", "a film *Crash*"). The class says
//! which of the vertices of that label is meant (the path search takes it), and that a common
//! word there is a name at all (spotting keeps it). Only the graph's own classes count: the words
//! after the mention must be the name of a class in the schema profile, and the vertex must be
//! of it (`rdf:type`, subclasses included), never a list of words.

use crate::context::AgentContext;
use crate::error::AgentError;
use crate::words::singular;
use chatty_kg_graph::text::normalize_tokens;
use chatty_kg_graph::{GraphError, ReadQuery, TypeVocabulary, named_node, var};
use spargebra::algebra::{Expression, GraphPattern};

/// Classes named after a mention, and other vertices of its label, checked for membership at most.
const MAX_KIND_CHECKS: usize = 3;

/// The graph's classes (IRIs) whose names `names` says the question writes where it looks
/// ([`names_class_at`] right after a mention, [`names_class_before`] right before one), each with
/// the name's length in words, the longest first ("source package" before "package").
async fn classes_named(ctx: &AgentContext, names: impl Fn(&str) -> bool) -> Vec<(usize, String)> {
    let Ok(profile) = ctx.kg.profile().await else {
        return Vec::new();
    };
    let mut named: Vec<(usize, String)> = profile
        .classes
        .iter()
        .filter(|class| names(&class.label))
        .map(|class| (normalize_tokens(&class.label).len(), class.iri.clone()))
        .collect();
    named.sort_by_key(|(len, _)| std::cmp::Reverse(*len));
    named
}

/// Whether `words` write the class name `label`, in the singular, right before `start` and
/// after an article. A plural there ("which packages gnuplot …") asks for the answers' class,
/// so the name is read as written.
fn names_class_before(words: &[String], start: usize, label: &str) -> bool {
    let name = normalize_tokens(label);
    let Some(from) = start.checked_sub(name.len()).filter(|_| !name.is_empty()) else {
        return false;
    };
    from > 0
        && matches!(words[from - 1].as_str(), "the" | "a" | "an")
        && name
            .iter()
            .zip(&words[from..start])
            .all(|(n, w)| w == n && singular(w) == *w)
}

/// Whether `words` write the class name `label` starting at `end`, word by word in the singular.
fn names_class_at(words: &[String], end: usize, label: &str) -> bool {
    let name: Vec<String> = normalize_tokens(label).iter().map(|w| singular(w)).collect();
    !name.is_empty()
        && end + name.len() <= words.len()
        && name.iter().zip(&words[end..]).all(|(n, w)| singular(w) == *n)
}

/// Whether `entity` is an instance of `class` (or of a subclass).
pub(crate) async fn is_member(ctx: &AgentContext, entity: &str, class: &str) -> Result<bool, AgentError> {
    let profile = ctx.kg.profile_or_default().await;
    let query = membership_query(entity, class, profile.conventions.types())?;
    Ok(match ctx.kg.query(&query).await? {
        chatty_kg_graph::QueryResults::Solutions(s) => !s.rows.is_empty(),
        chatty_kg_graph::QueryResults::Boolean(b) => b,
    })
}

/// The first of `vertices` (the first and at most [`MAX_KIND_CHECKS`] others, in their order)
/// that is of one of `classes` (at most [`MAX_KIND_CHECKS`], in their order), with that class's
/// name's length in words.
async fn first_member(
    ctx: &AgentContext,
    classes: Vec<(usize, String)>,
    vertices: &[&str],
) -> Result<Option<(String, usize)>, AgentError> {
    for (len, class) in classes.into_iter().take(MAX_KIND_CHECKS) {
        for vertex in vertices.iter().take(1 + MAX_KIND_CHECKS) {
            if is_member(ctx, vertex, &class).await? {
                return Ok(Some(((*vertex).to_owned(), len)));
            }
        }
    }
    Ok(None)
}

/// The first of `vertices` ([`first_member`]) that is of a class the question names right after
/// the span ending at `end` (the longest name first), with that name's length in words; `None`
/// when no class is named there or none of them is of it.
pub(crate) async fn typed_vertex(
    ctx: &AgentContext,
    words: &[String],
    end: usize,
    vertices: &[&str],
) -> Result<Option<(String, usize)>, AgentError> {
    let classes = classes_named(ctx, |label| names_class_at(words, end, label)).await;
    first_member(ctx, classes, vertices).await
}

/// The first of `vertices` ([`first_member`]) that is of a class the question names between an
/// article and the span starting at `start` ("the package gnuplot"); `None` when no class is
/// named there or none of them is of it.
pub(crate) async fn typed_vertex_before(
    ctx: &AgentContext,
    words: &[String],
    start: usize,
    vertices: &[&str],
) -> Result<Option<String>, AgentError> {
    let classes = classes_named(ctx, |label| names_class_before(words, start, label)).await;
    Ok(first_member(ctx, classes, vertices).await?.map(|(vertex, _)| vertex))
}

/// Predicates of a vertex read to see whether the question names one of them before it.
const RELATED_PREDICATES: usize = 60;

/// Whether `words` write, right before the span starting at `start`, a noun and "of" that name a
/// relation of the vertex ("the *versions of* less", "the *maintainer of* ed"): the noun, in the
/// singular, is a word of the name of one of the vertex's own predicates (read from its
/// labels, or its property entity's). The graph, not a list of words, says that a common word
/// there is the name of the thing the relation holds of.
pub(crate) fn relation_noun_before(words: &[String], start: usize) -> Option<String> {
    (start >= 2 && words[start - 1] == "of").then(|| singular(&words[start - 2]))
}

/// The first of `vertices` (at most [`MAX_KIND_CHECKS`]) that has a relation the question names
/// right before the span starting at `start` ([`relation_noun_before`]); `None` when the question
/// names none there or no vertex has it.
pub(crate) async fn related_vertex(
    ctx: &AgentContext,
    words: &[String],
    start: usize,
    vertices: &[&str],
) -> Result<Option<String>, AgentError> {
    let Some(noun) = relation_noun_before(words, start) else {
        return Ok(None);
    };
    for vertex in vertices.iter().take(MAX_KIND_CHECKS) {
        if has_relation_named(ctx, vertex, &noun).await? {
            return Ok(Some((*vertex).to_owned()));
        }
    }
    Ok(None)
}

/// Whether `noun` (singular, no function word) is a word of the name of one of `vertex`'s own
/// (outgoing) predicates, read from their labels or their property entities'.
pub(crate) async fn has_relation_named(ctx: &AgentContext, vertex: &str, noun: &str) -> Result<bool, AgentError> {
    if crate::words::is_function_word(noun) {
        return Ok(false);
    }
    let links = ctx.kg.predicates_around(vertex, RELATED_PREDICATES).await?;
    let outgoing: Vec<&str> = links
        .iter()
        .filter(|l| l.direction == chatty_kg_graph::Direction::Outgoing)
        .map(|l| l.iri.as_str())
        .collect();
    let names = ctx.kg.predicate_names(&outgoing).await?;
    Ok(outgoing.iter().any(|p| {
        let name = names.get(*p).map(String::as_str).unwrap_or(p);
        normalize_tokens(name).iter().any(|w| singular(w) == noun)
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linking::find_span;

    fn words(text: &str) -> Vec<String> {
        normalize_tokens(text)
    }

    #[test]
    fn a_class_name_is_read_right_after_the_span() {
        let q = words("Is bash built from the dash source package?");
        let (_, end) = find_span(&q, &words("dash")).unwrap();
        assert!(names_class_at(&q, end, "source package"));
        assert!(!names_class_at(&q, end, "package"), "the word after is 'source'");
        let q = words("Which shells have required priority?");
        let (_, end) = find_span(&q, &words("required")).unwrap();
        assert!(names_class_at(&q, end, "Priority"));
        // In the plural.
        let q = words("Are nano and vim packages?");
        let (_, end) = find_span(&q, &words("vim")).unwrap();
        assert!(names_class_at(&q, end, "package"));
        // A word between, the question's end, no name.
        let q = words("Which shells have required the priority?");
        let (_, end) = find_span(&q, &words("required")).unwrap();
        assert!(!names_class_at(&q, end, "priority"));
        assert!(!names_class_at(&words("dash"), 1, "package"));
        assert!(!names_class_at(&q, 0, ""));
    }

    #[test]
    fn a_class_name_is_read_between_an_article_and_the_span() {
        let q = words("Which packages are built from the source package of the package gnuplot depends on?");
        let (start, _) = find_span(&q, &words("gnuplot")).unwrap();
        assert!(names_class_before(&q, start, "package"));
        assert!(
            !names_class_before(&q, start, "source package"),
            "'the package', not 'source package'"
        );
        // No article before it, a plural (the answers' class), no name.
        let q = words("Which packages gnuplot depends on are in libs?");
        let (start, _) = find_span(&q, &words("gnuplot")).unwrap();
        assert!(!names_class_before(&q, start, "package"));
        let q = words("Which are the packages gnuplot depends on?");
        let (start, _) = find_span(&q, &words("gnuplot")).unwrap();
        assert!(!names_class_before(&q, start, "package"));
        assert!(!names_class_before(&q, 0, "package"));
        assert!(!names_class_before(&q, start, ""));
    }

    #[test]
    fn a_relation_is_read_as_the_noun_and_of_right_before_the_span() {
        let q = words("Which versions of less did Salvatore Bonaccorso upload?");
        let (start, _) = find_span(&q, &words("less")).unwrap();
        assert_eq!(relation_noun_before(&q, start).as_deref(), Some("version"));
        // No "of" before it, or nothing before "of".
        let q = words("Did less come before ed?");
        let (start, _) = find_span(&q, &words("less")).unwrap();
        assert_eq!(relation_noun_before(&q, start), None);
        let q = words("of less");
        assert_eq!(relation_noun_before(&q, 1), None);
    }
}

/// Subclasses a sample of a class's instances is spread over at most.
pub(crate) const SAMPLED_SUBCLASSES: usize = 20;

/// Some instances of `class` (at most `limit`), spread over its subclasses: a class whose
/// instances are all its subclasses' ("character": letters, symbols, numbers …) gives some of
/// each, not the first `limit` of whichever the store lists first, so what a sample says of the
/// class's attributes ("numeric value", which only numbers have) does not depend on the order
/// of its IRIs.
pub(crate) async fn instances_of(ctx: &AgentContext, class: &str, limit: usize) -> Result<Vec<String>, AgentError> {
    let profile = ctx.kg.profile_or_default().await;
    let types = profile.conventions.types();
    let column = |results: chatty_kg_graph::QueryResults, variable: &str| -> Vec<String> {
        match results {
            chatty_kg_graph::QueryResults::Solutions(s) => s.iris(variable).map(str::to_owned).collect(),
            chatty_kg_graph::QueryResults::Boolean(_) => Vec::new(),
        }
    };
    let subclasses = match chatty_kg_graph::subclasses_of_query(class, SAMPLED_SUBCLASSES, types)? {
        Some(query) => column(ctx.kg.query(&query).await?, "sub"),
        None => Vec::new(),
    };
    if subclasses.is_empty() {
        let query = chatty_kg_graph::instances_query(class, limit, types)?;
        return Ok(column(ctx.kg.query(&query).await?, "s"));
    }
    let each = (limit / (subclasses.len() + 1)).max(1);
    let mut found: Vec<String> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for kind in std::iter::once(class).chain(subclasses.iter().map(String::as_str)) {
        let query = chatty_kg_graph::direct_instances_query(kind, each, types)?;
        for iri in column(ctx.kg.query(&query).await?, "s") {
            if found.len() < limit && seen.insert(iri.clone()) {
                found.push(iri);
            }
        }
    }
    Ok(found)
}

/// The variable a membership query binds to the entity's own class.
pub const TYPE_VARIABLE: &str = "type";

/// `SELECT ?type WHERE { { <entity> rdf:type ?type FILTER(sameTerm(?type, <class>)) } UNION {
/// <entity> rdf:type ?type . ?type rdfs:subClassOf+ <class> } } LIMIT 1`: whether `entity` is of
/// `class` ("is Lima a city?"), with the type that makes it one (its provenance: `Lima rdf:type
/// Capital`, where `Capital rdfs:subClassOf City`). Spelled out so for Virtuoso 7.2, which loses
/// rows on `subClassOf*` and on `sameTerm(…) || EXISTS {…}` (the backend tests showed both).
pub(crate) fn membership_query(entity: &str, class: &str, types: TypeVocabulary<'_>) -> Result<ReadQuery, GraphError> {
    let t = var(TYPE_VARIABLE);
    let class = named_node(class)?;
    let entity = named_node(entity)?;
    let typed = types.typed(entity, t.clone())?;
    let direct = GraphPattern::Filter {
        expr: Expression::SameTerm(
            Box::new(Expression::Variable(t.clone())),
            Box::new(Expression::NamedNode(class.clone())),
        ),
        inner: Box::new(typed.clone()),
    };
    let pattern = match types.subclass_path(t.clone(), class)? {
        Some(up) => GraphPattern::Union {
            left: Box::new(direct),
            right: Box::new(GraphPattern::Join {
                left: Box::new(typed),
                right: Box::new(up),
            }),
        },
        None => direct,
    };
    ReadQuery::select(GraphPattern::Slice {
        inner: Box::new(GraphPattern::Project {
            inner: Box::new(pattern),
            variables: vec![t],
        }),
        start: 0,
        length: Some(1),
    })
}
