//! LC-QuAD 1.0 JSON: `[{_id, corrected_question, intermediary_question, sparql_query,
//! sparql_template_id}]`. There are no gold answers: they come from running `sparql_query` on the
//! KG in use (DBpedia 2016-04 for the published numbers).

use crate::dataset::{DatasetError, Item, read};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

const FORMAT: &str = "LC-QuAD 1.0 JSON";

pub fn load(path: &Path) -> Result<Vec<Item>, DatasetError> {
    let json: Value = serde_json::from_str(&read(path)?).map_err(|e| DatasetError::format(path, FORMAT, e))?;
    let rows = json
        .as_array()
        .ok_or_else(|| DatasetError::format(path, FORMAT, "not a JSON array"))?;
    let mut items = Vec::with_capacity(rows.len());
    for (n, row) in rows.iter().enumerate() {
        let id = row["_id"].as_str().map_or_else(|| n.to_string(), str::to_owned);
        // A few corrected questions are missing or "n/a": the intermediary one is the fallback.
        let question = [&row["corrected_question"], &row["intermediary_question"]]
            .into_iter()
            .filter_map(Value::as_str)
            .map(str::trim)
            .find(|q| q.chars().filter(|c| c.is_alphabetic()).count() > 3)
            .ok_or_else(|| DatasetError::format(path, FORMAT, format!("item {id} has no question")))?;
        let sparql = row["sparql_query"]
            .as_str()
            .ok_or_else(|| DatasetError::format(path, FORMAT, format!("item {id} has no sparql_query")))?;
        let mut tags = BTreeMap::new();
        if let Some(template) = row["sparql_template_id"].as_i64() {
            tags.insert("template".to_owned(), template.to_string());
        }
        items.push(Item {
            id,
            question: question.to_owned(),
            gold: None,
            gold_sparql: Some(sparql.trim().to_owned()),
            tags,
            dialogue: None,
        });
    }
    Ok(items)
}
