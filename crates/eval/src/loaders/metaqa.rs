//! MetaQA: `question<TAB>ans1|ans2` with the topic entity in `[...]` (the brackets are removed
//! before asking). Beside `qa_dev.txt` the loader reads, when present, `qa_dev_qtype.txt` (one
//! relation chain per line, e.g. `movie_to_director_to_movie`: the `qtype` tag) and
//! `qa_dev_kb_consistent_ids.txt` (0-based line numbers of the questions whose gold answer the
//! shipped KB reproduces: only those are kept). Ids are the 0-based line numbers; the `hops` tag
//! comes from the qtype (or a `N-hop` directory name).

use crate::dataset::{DatasetError, Item, read};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const FORMAT: &str = "MetaQA (question<TAB>answers)";

fn sibling(path: &Path, suffix: &str) -> Option<PathBuf> {
    let stem = path.file_stem()?.to_string_lossy().into_owned();
    let candidate = path.with_file_name(format!("{stem}{suffix}"));
    candidate.exists().then_some(candidate)
}

pub fn load(path: &Path) -> Result<Vec<Item>, DatasetError> {
    let text = read(path)?;
    let qtypes: Option<Vec<String>> = match sibling(path, "_qtype.txt") {
        Some(p) => Some(read(&p)?.lines().map(|l| l.trim().to_owned()).collect()),
        None => None,
    };
    let consistent: Option<BTreeSet<usize>> = match sibling(path, "_kb_consistent_ids.txt") {
        Some(p) => Some(
            read(&p)?
                .lines()
                .filter(|l| !l.trim().is_empty())
                .map(|l| {
                    l.trim()
                        .parse()
                        .map_err(|e| DatasetError::format(&p, "a list of line numbers", e))
                })
                .collect::<Result<_, _>>()?,
        ),
        None => None,
    };
    let dir_hops = path
        .parent()
        .and_then(|d| d.file_name())
        .and_then(|d| d.to_string_lossy().strip_suffix("-hop").map(str::to_owned));
    let mut items = Vec::new();
    for (line_no, line) in text.lines().enumerate() {
        if line.trim().is_empty() || consistent.as_ref().is_some_and(|ids| !ids.contains(&line_no)) {
            continue;
        }
        let (question, answers) = line
            .split_once('\t')
            .ok_or_else(|| DatasetError::format(path, FORMAT, format!("line {} has no tab", line_no + 1)))?;
        let mut tags = BTreeMap::new();
        if let Some(topic) = question.split_once('[').and_then(|(_, rest)| rest.split_once(']')) {
            tags.insert("topic".to_owned(), topic.0.trim().to_owned());
        }
        if let Some(qtype) = qtypes.as_ref().and_then(|q| q.get(line_no)) {
            tags.insert("qtype".to_owned(), qtype.clone());
            tags.insert("hops".to_owned(), (qtype.matches("_to_").count()).to_string());
        } else if let Some(hops) = &dir_hops {
            tags.insert("hops".to_owned(), hops.clone());
        }
        items.push(Item {
            id: line_no.to_string(),
            question: question.replace(['[', ']'], "").trim().to_owned(),
            gold: Some(
                answers
                    .split('|')
                    .map(|a| a.trim().to_owned())
                    .filter(|a| !a.is_empty())
                    .collect(),
            ),
            gold_sparql: None,
            tags,
            dialogue: None,
        });
    }
    Ok(items)
}
