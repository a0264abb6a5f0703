//! The metrics of `DESIGN.md` §Metrics, exactly:
//!
//! - Per question, over *normalised answer sets* (duplicates collapse):
//!   P = |sys ∩ gold| / |sys|, R = |sys ∩ gold| / |gold|, with the reference scorer's conventions
//!   for empty sets: both empty → P = R = 1; system empty, gold not → P = 1, R = 0; gold empty,
//!   system not → P = 0, R = 1 (nothing to recall, everything returned is wrong).
//!   Per-question F1 = 2PR / (P + R), 0 when P + R = 0.
//! - Over questions: macro P and macro R (means), **F1(macro P, macro R)** (the paper's F1) and
//!   **mean per-question F1**, always reported side by side and labelled.
//! - Dialogues: P@1 (the first system answer is gold), MRR (1 / rank of the first gold answer in
//!   the system's order, 0 if none), Hit@5 (a gold answer among the first five); with empty gold
//!   each is 1 when the system is empty too, else 0. Retention = F1(dialogue) / F1(standalone) × 100.
//!
//! Normalisation ([`normalize`]): surrounding whitespace and `<…>` go, IRIs are percent-decoded
//! (`Caf%C3%A9` = `Café`), a literal loses its `@lang` tag and `^^datatype`, numbers compare by
//! value (`1`, `1.0`, `1e0`), booleans by value (`true`, `True`, `"true"^^xsd:boolean`; `1` stays
//! a number), and text compares case-insensitively with whitespace collapsed.

use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// One answer, normalised for comparison.
pub fn normalize(answer: &str) -> String {
    let mut text = answer.trim();
    if let Some(inner) = text.strip_prefix('<').and_then(|t| t.strip_suffix('>')) {
        text = inner.trim();
    }
    // "1994"^^<http://www.w3.org/2001/XMLSchema#gYear> and "Berlin"@en: the lexical form.
    let literal;
    if let Some(rest) = text.strip_prefix('"')
        && let Some(end) = rest.rfind('"')
    {
        let suffix = &rest[end + 1..];
        if suffix.is_empty() || suffix.starts_with("^^") || suffix.starts_with('@') {
            literal = rest[..end].to_owned();
            text = &literal;
        }
    }
    if text.starts_with("http://") || text.starts_with("https://") {
        return percent_encoding::percent_decode_str(text)
            .decode_utf8_lossy()
            .into_owned();
    }
    match text.to_ascii_lowercase().as_str() {
        "true" => return "true".into(),
        "false" => return "false".into(),
        _ => {}
    }
    if let Some(number) = number(text) {
        return number;
    }
    text.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

/// Numbers compare by value: `1`, `01`, `1.0`, `1e0` and `+1` are the same answer. Text that only
/// looks numeric in part (`1994-05-01`, `3 km`) stays text.
fn number(text: &str) -> Option<String> {
    if !text.bytes().any(|b| b.is_ascii_digit())
        || text.bytes().any(|b| b.is_ascii_alphabetic() && b != b'e' && b != b'E')
    {
        return None;
    }
    let value: f64 = text.parse().ok()?;
    if !value.is_finite() {
        return None;
    }
    if value.fract() == 0.0 && value.abs() < 1e15 {
        Some(format!("{}", value as i64))
    } else {
        Some(format!("{value}"))
    }
}

/// A normalised answer set.
pub fn answer_set<S: AsRef<str>>(answers: &[S]) -> BTreeSet<String> {
    answers.iter().map(|a| normalize(a.as_ref())).collect()
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Score {
    pub precision: f64,
    pub recall: f64,
    pub f1: f64,
}

fn f1(p: f64, r: f64) -> f64 {
    if p + r == 0.0 { 0.0 } else { 2.0 * p * r / (p + r) }
}

/// P, R and F1 of one question (see the module docs for the empty-set conventions).
pub fn score<S: AsRef<str>, G: AsRef<str>>(system: &[S], gold: &[G]) -> Score {
    let (system, gold) = (answer_set(system), answer_set(gold));
    let hits = system.intersection(&gold).count() as f64;
    let (precision, recall) = match (system.is_empty(), gold.is_empty()) {
        (true, true) => (1.0, 1.0),
        (true, false) => (1.0, 0.0),
        (false, true) => (0.0, 1.0),
        (false, false) => (hits / system.len() as f64, hits / gold.len() as f64),
    };
    Score {
        precision,
        recall,
        f1: f1(precision, recall),
    }
}

/// Ranking metrics of one dialogue turn: the system's answers in its order.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Ranking {
    pub p_at_1: f64,
    pub reciprocal_rank: f64,
    pub hit_at_5: f64,
}

pub fn ranking<S: AsRef<str>, G: AsRef<str>>(system: &[S], gold: &[G]) -> Ranking {
    let gold = answer_set(gold);
    if gold.is_empty() {
        let v = if system.is_empty() { 1.0 } else { 0.0 };
        return Ranking {
            p_at_1: v,
            reciprocal_rank: v,
            hit_at_5: v,
        };
    }
    // Ranks over distinct answers: a repeated wrong answer does not push a right one down.
    let mut seen = BTreeSet::new();
    let ranked: Vec<String> = system
        .iter()
        .map(|a| normalize(a.as_ref()))
        .filter(|a| seen.insert(a.clone()))
        .collect();
    let first = ranked.iter().position(|a| gold.contains(a));
    Ranking {
        p_at_1: f64::from(u8::from(first == Some(0))),
        reciprocal_rank: first.map_or(0.0, |i| 1.0 / (i + 1) as f64),
        hit_at_5: f64::from(u8::from(first.is_some_and(|i| i < 5))),
    }
}

/// Both F1 definitions over a set of questions, labelled.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
pub struct Aggregate {
    pub questions: usize,
    pub macro_precision: f64,
    pub macro_recall: f64,
    /// The paper's F1: the harmonic mean of macro P and macro R.
    pub f1_of_macro_p_and_macro_r: f64,
    /// The mean of the per-question F1 scores.
    pub mean_per_question_f1: f64,
}

pub fn aggregate<'a>(scores: impl IntoIterator<Item = &'a Score>) -> Aggregate {
    let (mut n, mut p, mut r, mut f) = (0usize, 0.0, 0.0, 0.0);
    for s in scores {
        n += 1;
        p += s.precision;
        r += s.recall;
        f += s.f1;
    }
    if n == 0 {
        return Aggregate::default();
    }
    let (p, r) = (p / n as f64, r / n as f64);
    Aggregate {
        questions: n,
        macro_precision: p,
        macro_recall: r,
        f1_of_macro_p_and_macro_r: f1(p, r),
        mean_per_question_f1: f / n as f64,
    }
}

/// Means of the ranking metrics.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
pub struct RankingAggregate {
    pub p_at_1: f64,
    pub mrr: f64,
    pub hit_at_5: f64,
}

pub fn aggregate_ranking<'a>(rankings: impl IntoIterator<Item = &'a Ranking>) -> RankingAggregate {
    let (mut n, mut p, mut m, mut h) = (0usize, 0.0, 0.0, 0.0);
    for r in rankings {
        n += 1;
        p += r.p_at_1;
        m += r.reciprocal_rank;
        h += r.hit_at_5;
    }
    if n == 0 {
        return RankingAggregate::default();
    }
    let n = n as f64;
    RankingAggregate {
        p_at_1: p / n,
        mrr: m / n,
        hit_at_5: h / n,
    }
}

/// Retention in percent: how much of the standalone F1 survives in dialogue. `None` when the
/// standalone F1 is 0 (no ratio exists).
pub fn retention(dialogue_f1: f64, standalone_f1: f64) -> Option<f64> {
    (standalone_f1 > 0.0).then(|| dialogue_f1 / standalone_f1 * 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const EMPTY: [&str; 0] = [];

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn empty_sets_follow_the_reference_conventions() {
        assert_eq!(
            score(&EMPTY, &EMPTY),
            Score {
                precision: 1.0,
                recall: 1.0,
                f1: 1.0
            }
        );
        // The system says nothing, gold has answers: nothing wrong was said, nothing was found.
        assert_eq!(
            score(&EMPTY, &["a"]),
            Score {
                precision: 1.0,
                recall: 0.0,
                f1: 0.0
            }
        );
        // Gold is empty, the system answers: everything it said is wrong.
        assert_eq!(
            score(&["a"], &EMPTY),
            Score {
                precision: 0.0,
                recall: 1.0,
                f1: 0.0
            }
        );
    }

    #[test]
    fn partial_overlap_by_hand() {
        // sys {a, b, c}, gold {b, c, d, e}: 2 hits → P = 2/3, R = 2/4, F1 = 2·(2/3)(1/2)/(2/3 + 1/2) = 4/7.
        let s = score(&["a", "b", "c"], &["b", "c", "d", "e"]);
        assert!(
            close(s.precision, 2.0 / 3.0) && close(s.recall, 0.5) && close(s.f1, 4.0 / 7.0),
            "{s:?}"
        );
        let none = score(&["x"], &["y"]);
        assert_eq!((none.precision, none.recall, none.f1), (0.0, 0.0, 0.0));
    }

    #[test]
    fn duplicates_count_once() {
        // {a, a, b} is {a, b}: P = 1/2, not 2/3.
        let s = score(&["a", "a", "b"], &["a", "A "]);
        assert!(close(s.precision, 0.5) && close(s.recall, 1.0), "{s:?}");
    }

    #[test]
    fn numbers_booleans_literals_and_iris_are_normalised() {
        for (a, b) in [
            ("1", "1.0"),
            ("42", "\"42\"^^<http://www.w3.org/2001/XMLSchema#integer>"),
            ("+7", "7e0"),
            ("0.5", ".5"),
            ("True", "true"),
            ("FALSE", "\"false\"^^<http://www.w3.org/2001/XMLSchema#boolean>"),
            ("Berlin", "\"berlin\"@en"),
            ("Tom  Hanks", "tom hanks"),
            (
                "http://dbpedia.org/resource/Caf%C3%A9",
                "<http://dbpedia.org/resource/Café>",
            ),
            (
                "http://dbpedia.org/resource/AC%2FDC",
                "http://dbpedia.org/resource/AC/DC",
            ),
        ] {
            assert_eq!(normalize(a), normalize(b), "{a} vs {b}");
        }
        for (a, b) in [
            ("1994", "1994-01-01"),
            ("3", "3 km"),
            ("1", "true"),
            ("http://x.org/A", "http://x.org/a"),
            ("10", "1e2"),
        ] {
            assert_ne!(normalize(a), normalize(b), "{a} vs {b}");
        }
        // IRIs keep their case (two resources), text does not.
        assert_eq!(normalize("http://x.org/Paris"), "http://x.org/Paris");
    }

    #[test]
    fn both_f1_definitions_by_hand() {
        // Q1: P = 1, R = 1/2 (F1 2/3). Q2: P = 0, R = 1 (gold empty, system answered; F1 0).
        // Macro P = 1/2, macro R = 3/4, F1(macro) = 2·(1/2)(3/4)/(5/4) = 3/5; mean F1 = 1/3.
        let scores = [score(&["a"], &["a", "b"]), score(&["z"], &EMPTY)];
        let agg = aggregate(&scores);
        assert_eq!(agg.questions, 2);
        assert!(close(agg.macro_precision, 0.5) && close(agg.macro_recall, 0.75));
        assert!(close(agg.f1_of_macro_p_and_macro_r, 0.6), "{agg:?}");
        assert!(close(agg.mean_per_question_f1, 1.0 / 3.0), "{agg:?}");
        assert_eq!(aggregate(&[]), Aggregate::default());
    }

    #[test]
    fn ranking_metrics_by_hand() {
        assert_eq!(
            ranking(&["a", "b"], &["a"]),
            Ranking {
                p_at_1: 1.0,
                reciprocal_rank: 1.0,
                hit_at_5: 1.0
            }
        );
        // The first right answer is third, after a duplicate wrong one: rank 2 among distinct answers.
        let r = ranking(&["x", "x", "b", "a"], &["b"]);
        assert_eq!((r.p_at_1, r.reciprocal_rank, r.hit_at_5), (0.0, 0.5, 1.0));
        let late = ranking(&["1", "2", "3", "4", "5", "6"], &["6"]);
        assert!(close(late.reciprocal_rank, 1.0 / 6.0) && late.hit_at_5 == 0.0);
        assert_eq!(ranking(&EMPTY, &["a"]).reciprocal_rank, 0.0);
        assert_eq!(ranking(&EMPTY, &EMPTY).p_at_1, 1.0);
        assert_eq!(ranking(&["a"], &EMPTY).p_at_1, 0.0);
        let agg = aggregate_ranking(&[ranking(&["a"], &["a"]), r]);
        assert!(close(agg.p_at_1, 0.5) && close(agg.mrr, 0.75) && close(agg.hit_at_5, 1.0));
    }

    #[test]
    fn retention_is_a_percentage() {
        assert!(close(retention(0.6, 0.8).unwrap(), 75.0));
        assert_eq!(retention(0.5, 0.0), None);
    }
}
