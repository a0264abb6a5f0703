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

#[cfg(test)]
mod tests {
    use super::*;

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
