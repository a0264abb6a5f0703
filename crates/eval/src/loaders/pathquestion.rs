//! PathQuestion: `question<TAB>answer(ans1/ans2/)<TAB>subj#rel1#e1#rel2#e2[#<end>#ans]`. The
//! third field is the gold relation path (kept as the `path` tag). Entity names are Freebase-style
//! with underscores (`frederica_of_mecklenburg-strelitz`); questions and answers get spaces
//! instead, as [`entity_label`] labels the KB's entities when it is loaded.

use crate::dataset::{DatasetError, Item, read};
use std::collections::BTreeMap;
use std::path::Path;

const FORMAT: &str = "PathQuestion (question<TAB>answer(a/b/)<TAB>path)";

/// How a PathQuestion entity name reads: underscores become spaces.
pub fn entity_label(name: &str) -> String {
    name.replace('_', " ")
}

/// `united_kingdom(united_kingdom/)` → `[united_kingdom]`. Names may contain parentheses
/// themselves (`foo_(bar)(foo_(bar)/)`): the split is the `(` after which the list starts with the
/// name before it.
pub fn parse_answers(field: &str) -> Vec<String> {
    let field = field.trim();
    let Some(body) = field.strip_suffix(')') else {
        return vec![field.to_owned()];
    };
    for (i, _) in body.match_indices('(') {
        let (head, list) = (&body[..i], &body[i + 1..]);
        if list.split('/').next() == Some(head) {
            return list.split('/').filter(|a| !a.is_empty()).map(str::to_owned).collect();
        }
    }
    // No self-consistent split: the part in the last parentheses.
    body.rfind('(')
        .map(|i| {
            body[i + 1..]
                .split('/')
                .filter(|a| !a.is_empty())
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_else(|| vec![field.to_owned()])
}

pub fn load(path: &Path) -> Result<Vec<Item>, DatasetError> {
    let mut items = Vec::new();
    for (line_no, line) in read(path)?.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split('\t').collect();
        let [question, answers, path_field] = fields[..] else {
            return Err(DatasetError::format(
                path,
                FORMAT,
                format!("line {} has not 3 fields", line_no + 1),
            ));
        };
        let relations: Vec<&str> = path_field
            .split('#')
            .skip(1)
            .step_by(2)
            .filter(|r| *r != "<end>")
            .collect();
        let mut tags = BTreeMap::new();
        tags.insert("hops".to_owned(), relations.len().to_string());
        tags.insert("path".to_owned(), relations.join("/"));
        if let Some(topic) = path_field.split('#').next() {
            tags.insert("topic".to_owned(), entity_label(topic));
        }
        items.push(Item {
            id: line_no.to_string(),
            question: entity_label(question.trim()).replace(" 's", "'s"),
            gold: Some(parse_answers(answers).iter().map(|a| entity_label(a)).collect()),
            gold_sparql: None,
            tags,
            dialogue: None,
        });
    }
    Ok(items)
}
