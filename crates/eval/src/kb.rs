//! Knowledge bases shipped as name triples (PathQuestion's `2H-kb.txt`: `subj<TAB>rel<TAB>obj`;
//! MetaQA's `kb.txt`: `subj|rel|obj`) turned into N-Triples, so `eval --kb FILE` can load them
//! into a temporary embedded store on the fly.
//!
//! Each name becomes `<namespace>entity/<name, percent-encoded>` with one `rdfs:label`: the name
//! as the benchmark's questions and answers read it ([`crate::loaders::pathquestion::entity_label`]:
//! underscores become spaces). Relations become `<namespace>relation/<rel>`; relation linking
//! reads their local names (`__film__cinematographer__film` → "film cinematographer film").

use crate::dataset::{DatasetError, read};
use crate::loaders::pathquestion::entity_label;
use chatty_kg_graph::{Literal, NamedNode};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use std::collections::BTreeSet;
use std::io::Write;
use std::path::Path;

const FORMAT: &str = "name triples (subject<TAB>relation<TAB>object, or subject|relation|object)";
const RDFS_LABEL: &str = "http://www.w3.org/2000/01/rdf-schema#label";
/// What stays unescaped in an IRI path segment made from a name.
const KEEP: &AsciiSet = &NON_ALPHANUMERIC.remove(b'_').remove(b'-').remove(b'.').remove(b'~');

/// What a conversion wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Converted {
    pub triples: usize,
    pub entities: usize,
    pub relations: usize,
}

/// The namespace of a KB loaded from a file named `stem`: `http://kb.example.org/<stem>/`.
pub fn namespace(stem: &str) -> String {
    format!("http://kb.example.org/{}/", utf8_percent_encode(stem, KEEP))
}

/// The IRI of a name in `namespace` (which ends with `/` or `#`).
pub fn entity_iri(namespace: &str, name: &str) -> String {
    format!("{namespace}entity/{}", utf8_percent_encode(name, KEEP))
}

/// Writes the name triples of `path` as N-Triples to `out`: every triple, then one label per
/// entity. A line that is not three fields is an error naming it; blank lines are skipped.
pub fn name_triples_to_ntriples(path: &Path, namespace: &str, out: &mut impl Write) -> Result<Converted, DatasetError> {
    let text = read(path)?;
    let io = |e: std::io::Error| DatasetError::format(path, FORMAT, format!("writing: {e}"));
    let mut entities = BTreeSet::new();
    let mut relations = BTreeSet::new();
    let mut triples = 0;
    for (line_no, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let separator = if line.contains('\t') { '\t' } else { '|' };
        let fields: Vec<&str> = line.split(separator).map(str::trim).collect();
        let [subject, relation, object] = fields[..] else {
            return Err(DatasetError::format(
                path,
                FORMAT,
                format!("line {} has {} fields, not 3", line_no + 1, fields.len()),
            ));
        };
        if subject.is_empty() || relation.is_empty() || object.is_empty() {
            return Err(DatasetError::format(
                path,
                FORMAT,
                format!("line {} has an empty field", line_no + 1),
            ));
        }
        let node = |iri: String| {
            NamedNode::new(iri).map_err(|e| DatasetError::format(path, FORMAT, format!("line {}: {e}", line_no + 1)))
        };
        let predicate = node(format!("{namespace}relation/{}", utf8_percent_encode(relation, KEEP)))?;
        writeln!(
            out,
            "{} {predicate} {} .",
            node(entity_iri(namespace, subject))?,
            node(entity_iri(namespace, object))?
        )
        .map_err(io)?;
        triples += 1;
        entities.insert(subject.to_owned());
        entities.insert(object.to_owned());
        relations.insert(relation.to_owned());
    }
    if triples == 0 {
        return Err(DatasetError::format(path, FORMAT, "no triples"));
    }
    let label = NamedNode::new_unchecked(RDFS_LABEL);
    for name in &entities {
        let subject = NamedNode::new_unchecked(entity_iri(namespace, name));
        writeln!(
            out,
            "{subject} {label} {} .",
            Literal::new_simple_literal(entity_label(name))
        )
        .map_err(io)?;
    }
    Ok(Converted {
        triples,
        entities: entities.len(),
        relations: relations.len(),
    })
}

const DIALOGUE_FORMAT: &str = "Chatty-Gen dialogue JSON with `triples` (the Subgraph files)";

/// Label predicates a dialogue's triples may already name their vertices with.
const NAME_PREDICATES: &[&str] = &[
    RDFS_LABEL,
    "http://xmlns.com/foaf/0.1/name",
    "http://www.w3.org/2004/02/skos/core#prefLabel",
    "http://schema.org/name",
    "https://dblp.org/rdf/schema#title",
];

/// What [`dialogue_triples_to_ntriples`] wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DialogueKg {
    pub dialogues: usize,
    pub triples: usize,
    pub vertices: usize,
    /// Labels taken from a dialogue's `seed_label`.
    pub seed_labels: usize,
    /// Labels made from IRIs (vertices without a name triple or a seed label).
    pub iri_labels: usize,
    /// Vertices left without any label triple (`drop_labels`: the store names them from their
    /// IRIs).
    pub unnamed: usize,
    /// Name triples left out (`drop_labels`).
    pub dropped: usize,
}

/// The small KG of a Chatty-Gen Subgraph dialogue file (`data[].triples`: per turn, the
/// `[subject, predicate, object]` triples its answer rests on, objects with their values), as
/// N-Triples: the union of the triples (an object starting with `http://`/`https://` is an IRI,
/// anything else a plain literal: the file gives no datatypes), then an `rdfs:label` for every
/// IRI vertex that has no name triple: its dialogue's `seed_label` for the `seed_entity`, else a
/// name made from its IRI ([`chatty_kg_graph::text::iri_name`]). The labels are triples of the
/// graph, as the gold queries expect (some ask for `rdfs:label`).
///
/// With `drop_labels`, no vertex has a label triple: those of the file (`rdfs:label`,
/// `foaf:name`, …) are left out and none is added, so every name comes from an IRI, given by the
/// store ([`chatty_kg_graph::GraphSettings::iri_names`]).
pub fn dialogue_triples_to_ntriples(
    path: &Path,
    drop_labels: bool,
    out: &mut impl Write,
) -> Result<DialogueKg, DatasetError> {
    let text = read(path)?;
    let bad = |m: String| DatasetError::format(path, DIALOGUE_FORMAT, m);
    let json: serde_json::Value = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
    let dialogues = json["data"].as_array().ok_or_else(|| bad("no `data` array".into()))?;
    let mut triples: BTreeSet<(String, String, String)> = BTreeSet::new();
    let mut seeds: std::collections::BTreeMap<String, String> = std::collections::BTreeMap::new();
    for (d, dialogue) in dialogues.iter().enumerate() {
        if let (Some(seed), Some(label)) = (dialogue["seed_entity"].as_str(), dialogue["seed_label"].as_str()) {
            seeds.entry(seed.to_owned()).or_insert_with(|| label.trim().to_owned());
        }
        let turns = dialogue["triples"]
            .as_array()
            .ok_or_else(|| bad(format!("dialogue {d} has no `triples`")))?;
        for triple in turns.iter().flat_map(|t| t.as_array().into_iter().flatten()) {
            let parts: Vec<&str> = triple
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|v| v.as_str())
                .collect();
            let [s, p, o] = parts[..] else {
                return Err(bad(format!("dialogue {d}: a triple is not three strings: {triple}")));
            };
            triples.insert((s.to_owned(), p.to_owned(), o.to_owned()));
        }
    }
    if triples.is_empty() {
        return Err(bad("no triples".into()));
    }
    let io = |e: std::io::Error| bad(format!("writing: {e}"));
    let is_iri = |t: &str| t.starts_with("http://") || t.starts_with("https://");
    let mut vertices: BTreeSet<String> = BTreeSet::new();
    let mut named: BTreeSet<String> = BTreeSet::new();
    let mut report = DialogueKg {
        dialogues: dialogues.len(),
        ..DialogueKg::default()
    };
    for (s, p, o) in &triples {
        let (Ok(subject), Ok(predicate)) = (NamedNode::new(s.as_str()), NamedNode::new(p.as_str())) else {
            // An IRI the benchmark wrote with spaces or quotes: not RDF, left out.
            continue;
        };
        let name_triple = NAME_PREDICATES.contains(&p.as_str()) && !is_iri(o);
        vertices.insert(s.clone());
        if name_triple && drop_labels {
            report.dropped += 1;
            continue;
        }
        let object = if is_iri(o) {
            match NamedNode::new(o.as_str()) {
                Ok(node) => {
                    vertices.insert(o.clone());
                    node.to_string()
                }
                Err(_) => Literal::new_simple_literal(o).to_string(),
            }
        } else {
            Literal::new_simple_literal(o).to_string()
        };
        writeln!(out, "{subject} {predicate} {object} .").map_err(io)?;
        report.triples += 1;
        if name_triple {
            named.insert(s.clone());
        }
    }
    let label = NamedNode::new_unchecked(RDFS_LABEL);
    for vertex in vertices.iter().filter(|v| !named.contains(*v)) {
        let Ok(subject) = NamedNode::new(vertex.as_str()) else {
            continue;
        };
        let name = match seeds.get(vertex) {
            _ if drop_labels => None,
            Some(seed) if !seed.is_empty() => {
                report.seed_labels += 1;
                Some(seed.clone())
            }
            _ => chatty_kg_graph::text::iri_name(vertex).inspect(|_| report.iri_labels += 1),
        };
        match name {
            Some(name) => writeln!(out, "{subject} {label} {} .", Literal::new_simple_literal(name)).map_err(io)?,
            None => report.unnamed += 1,
        }
    }
    report.vertices = vertices.len();
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dialogue_files_triples_become_a_kg_with_names() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("dialogues.json");
        std::fs::write(
            &path,
            r#"{"data": [
                {"seed_entity": "https://makg.org/entity/1", "seed_label": "Donald E. Thrall",
                 "triples": [[["https://makg.org/entity/1", "http://purl.org/dc/terms/created", "2016-06-24"]],
                             [["https://makg.org/entity/1", "http://www.w3.org/ns/org#memberOf", "https://makg.org/entity/2"]]]},
                {"seed_entity": "http://dbpedia.org/resource/Antony_Cheng", "seed_label": "Antony Cheng",
                 "triples": [[["http://dbpedia.org/resource/Antony_Cheng", "http://xmlns.com/foaf/0.1/name", "Tony Cheng"],
                              ["http://dbpedia.org/resource/Antony_Cheng", "http://dbpedia.org/property/birthPlace", "http://dbpedia.org/resource/Vancouver_%28BC%29"]]]}
            ]}"#,
        )
        .unwrap();
        let mut out = Vec::new();
        let kg = dialogue_triples_to_ntriples(&path, false, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!((kg.dialogues, kg.triples, kg.vertices), (2, 4, 4));
        // The seed has no name triple: its dialogue's seed_label names it.
        assert!(text.contains(
            r#"<https://makg.org/entity/1> <http://www.w3.org/2000/01/rdf-schema#label> "Donald E. Thrall" ."#
        ));
        // A vertex named by a name predicate gets no other label; the others are named from
        // their IRIs.
        assert!(
            !text
                .contains(r#"<http://dbpedia.org/resource/Antony_Cheng> <http://www.w3.org/2000/01/rdf-schema#label>"#)
        );
        assert!(
            text.contains(
                r#"<http://dbpedia.org/resource/Antony_Cheng> <http://xmlns.com/foaf/0.1/name> "Tony Cheng" ."#
            )
        );
        assert!(text.contains(r#"<http://dbpedia.org/resource/Vancouver_%28BC%29> <http://www.w3.org/2000/01/rdf-schema#label> "Vancouver (BC)" ."#));
        assert!(text.contains(r#"<https://makg.org/entity/2> <http://www.w3.org/2000/01/rdf-schema#label> "2" ."#));
        assert!(text.contains(r#"<http://purl.org/dc/terms/created> "2016-06-24" ."#));
        assert_eq!((kg.seed_labels, kg.iri_labels, kg.unnamed, kg.dropped), (1, 2, 0, 0));

        // Without label triples: no name triple, no seed label.
        let mut out = Vec::new();
        let kg = dialogue_triples_to_ntriples(&path, true, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            !text.contains("rdf-schema#label") && !text.contains("foaf/0.1/name"),
            "{text}"
        );
        assert_eq!((kg.triples, kg.seed_labels, kg.unnamed, kg.dropped), (3, 0, 4, 1));
    }

    #[test]
    fn tab_and_bar_triples_become_escaped_iris_with_labels() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kb.txt");
        std::fs::write(
            &path,
            "ludwig_ii_of_bavaria\tparents\tmaximilian_ii_of_bavaria\n\n\
             Gert Fröbe|starred_in|\"Goldfinger\" (1964)\n",
        )
        .unwrap();
        let mut out = Vec::new();
        let converted = name_triples_to_ntriples(&path, "http://pq.example.org/", &mut out).unwrap();
        assert_eq!(
            converted,
            Converted {
                triples: 2,
                entities: 4,
                relations: 2
            }
        );
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains(
            "<http://pq.example.org/entity/ludwig_ii_of_bavaria> <http://pq.example.org/relation/parents> \
             <http://pq.example.org/entity/maximilian_ii_of_bavaria> ."
        ));
        // A quote and spaces cannot appear in an IRI: they are escaped; the label keeps them.
        assert!(text.contains("<http://pq.example.org/entity/%22Goldfinger%22%20%281964%29>"));
        assert!(text.contains("<http://pq.example.org/entity/Gert%20Fr%C3%B6be>"));
        assert!(text.contains(r#"<http://www.w3.org/2000/01/rdf-schema#label> "\"Goldfinger\" (1964)" ."#));
        assert!(text.contains(r#"<http://www.w3.org/2000/01/rdf-schema#label> "ludwig ii of bavaria" ."#));
        assert_eq!(text.lines().count(), 6);
    }

    #[test]
    fn a_short_line_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kb.txt");
        std::fs::write(&path, "a\tr\tb\nc\tr\n").unwrap();
        let error = name_triples_to_ntriples(&path, "http://x.org/", &mut Vec::new()).unwrap_err();
        assert!(error.to_string().contains("line 2 has 2 fields"), "{error}");
    }
}
