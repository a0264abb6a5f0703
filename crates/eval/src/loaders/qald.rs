//! QALD-JSON (QALD-9, QALD-9-plus, the KGQAn YAGO and DBLP sets): `questions[]` with `id`
//! (string or number), `question[]` per language, `query.sparql`, and `answers[]` in SPARQL-JSON
//! (`results.bindings`, or `boolean`). Every bound value of every answer row is a gold answer.
//! `answertype`, `aggregation`, `onlydbo`, `hybrid` and `rating` (in `chatty-kg feedback export`'s
//! files) become tags that reports break F1 down by.

use crate::dataset::{DatasetError, Item, read};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

const FORMAT: &str = "QALD-JSON";

pub fn load(path: &Path, language: &str) -> Result<Vec<Item>, DatasetError> {
    let json: Value = serde_json::from_str(&read(path)?).map_err(|e| DatasetError::format(path, FORMAT, e))?;
    let questions = json["questions"]
        .as_array()
        .ok_or_else(|| DatasetError::format(path, FORMAT, "no `questions` array"))?;
    let mut items = Vec::with_capacity(questions.len());
    for (n, q) in questions.iter().enumerate() {
        let id = match &q["id"] {
            Value::String(s) => s.clone(),
            Value::Number(n) => n.to_string(),
            _ => n.to_string(),
        };
        let texts = q["question"].as_array().map(Vec::as_slice).unwrap_or_default();
        let text = texts
            .iter()
            .find(|t| t["language"] == language)
            .and_then(|t| t["string"].as_str())
            .ok_or_else(|| DatasetError::format(path, FORMAT, format!("question {id} has no {language:?} text")))?;
        let gold = q["answers"]
            .as_array()
            .map(|answers| answers.iter().flat_map(sparql_json_values).collect());
        let mut tags = BTreeMap::new();
        for key in ["answertype", "aggregation", "onlydbo", "hybrid", "rating"] {
            match &q[key] {
                Value::String(s) => tags.insert(key.to_owned(), s.clone()),
                Value::Bool(b) => tags.insert(key.to_owned(), b.to_string()),
                _ => None,
            };
        }
        items.push(Item {
            id,
            question: text.trim().to_owned(),
            gold,
            // A gold query in one engine's dialect (Virtuoso's `ORDER BY COUNT(?x)` without
            // GROUP BY) may come with its standard form, which any store runs.
            gold_sparql: q["query"]["sparql_standard"]
                .as_str()
                .or_else(|| q["query"]["sparql"].as_str())
                .map(|s| s.trim().to_owned()),
            tags,
            dialogue: None,
        });
    }
    Ok(items)
}

/// The values of a SPARQL-JSON result: every binding's value, or the boolean.
pub fn sparql_json_values(result: &Value) -> Vec<String> {
    if let Some(b) = result["boolean"].as_bool() {
        return vec![b.to_string()];
    }
    let mut values = Vec::new();
    for row in result["results"]["bindings"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
    {
        if let Some(row) = row.as_object() {
            values.extend(row.values().filter_map(|b| b["value"].as_str().map(str::to_owned)));
        }
    }
    values
}
