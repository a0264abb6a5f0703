//! Chatty-Gen dialogues (`{dbpedia,yago,dblp}_e11_20_5_original.json`): `data[]` with
//! `dialogue[]` (turns as asked, with pronouns), `original[]` (each turn standalone) and
//! `queries[]` (gold SPARQL per turn). The files carry no answers: the gold answers are the
//! queries' results on the KG in use. The same format, with `answers[]` and per-turn `tags[]`, is what
//! `chatty-kg build-dialogues` writes ([`crate::dialogues`]).

use crate::dataset::{DatasetError, DialogueTurn, Item, read};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

const FORMAT: &str = "Chatty-Gen dialogue JSON";

/// A turn's gold answers: a list of strings (numbers and booleans as written), or a SPARQL-JSON
/// result; `None` for anything else.
fn gold_values(gold: &Value) -> Option<Vec<String>> {
    match gold {
        Value::Array(values) => values
            .iter()
            .map(|v| match v {
                Value::String(s) => Some(s.trim().to_owned()),
                Value::Number(n) => Some(n.to_string()),
                Value::Bool(b) => Some(b.to_string()),
                _ => None,
            })
            .collect(),
        Value::Object(result)
            if result.get("boolean").is_some_and(Value::is_boolean)
                || result
                    .get("results")
                    .and_then(|r| r.get("bindings"))
                    .is_some_and(Value::is_array) =>
        {
            Some(crate::loaders::qald::sparql_json_values(gold))
        }
        _ => None,
    }
}

pub fn load(path: &Path) -> Result<Vec<Item>, DatasetError> {
    let json: Value = serde_json::from_str(&read(path)?).map_err(|e| DatasetError::format(path, FORMAT, e))?;
    let dialogues = json["data"]
        .as_array()
        .ok_or_else(|| DatasetError::format(path, FORMAT, "no `data` array"))?;
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(|s| s.trim().to_owned()))
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut items = Vec::new();
    for (d, dialogue) in dialogues.iter().enumerate() {
        let id = dialogue["id"].as_str().map_or_else(|| d.to_string(), str::to_owned);
        let (turns, originals, queries) = (
            strings(&dialogue["dialogue"]),
            strings(&dialogue["original"]),
            strings(&dialogue["queries"]),
        );
        if turns.len() != originals.len() || (!queries.is_empty() && queries.len() != turns.len()) {
            return Err(DatasetError::format(
                path,
                FORMAT,
                format!(
                    "dialogue {id}: {} turns, {} standalone, {} queries",
                    turns.len(),
                    originals.len(),
                    queries.len()
                ),
            ));
        }
        // Gold answers, when the file has them: a list of values per turn (the dialogue builder
        // writes them), or a SPARQL-JSON result per turn (the QALD form). Anything else is refused
        // with the turn's index: scoring against a gold that was not read would be silently 0.
        let answers: Vec<Option<Vec<String>>> = (0..turns.len())
            .map(|i| {
                dialogue["answers"]
                    .get(i)
                    .map(|gold| {
                        gold_values(gold).ok_or_else(|| {
                            DatasetError::format(
                                path,
                                FORMAT,
                                format!(
                                    "dialogue {id}, turn {i}: `answers[{i}]` is neither a list of values nor a \
                                     SPARQL-JSON result (`head` and `results.bindings`, or `boolean`)"
                                ),
                            )
                        })
                    })
                    .transpose()
            })
            .collect::<Result<_, _>>()?;
        for (turn, question) in turns.iter().enumerate() {
            let mut tags = BTreeMap::new();
            if let Some(seed) = dialogue["seed_label"].as_str() {
                tags.insert("seed".to_owned(), seed.to_owned());
            }
            // Per-turn tags, when the file has them (the dialogue builder writes them).
            if let Some(extra) = dialogue["tags"].get(turn).and_then(Value::as_object) {
                for (k, v) in extra {
                    if let Some(v) = v.as_str() {
                        tags.insert(k.clone(), v.to_owned());
                    }
                }
            }
            tags.insert("turn".to_owned(), turn.to_string());
            items.push(Item {
                id: format!("{id}-{turn}"),
                question: question.clone(),
                gold: answers[turn].clone(),
                gold_sparql: queries.get(turn).cloned(),
                tags,
                dialogue: Some(DialogueTurn {
                    dialogue: id.clone(),
                    turn,
                    standalone: originals[turn].clone(),
                }),
            });
        }
    }
    Ok(items)
}
