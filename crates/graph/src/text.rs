//! Text helpers shared by every backend: label normalisation, the one ranking function that orders
//! entity candidates (so the embedded index and a remote endpoint rank alike), and human labels for
//! predicate IRIs.

/// Lower-cases, transliterates to ASCII ("Fröbe" → "frobe") and splits on anything that is not a
/// letter or digit. The label index stores exactly these tokens, so search and ranking agree.
pub fn normalize_tokens(text: &str) -> Vec<String> {
    deunicode::deunicode(text)
        .to_lowercase()
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Words of user text for a remote full-text/CONTAINS search: lower-cased, split on non-alphanumeric
/// characters, accents kept (the endpoint compares against its own, unfolded labels).
pub fn search_words(text: &str) -> Vec<String> {
    text.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
        .collect()
}

/// [`match_score`] of a label that equals the query (up to case, accents and punctuation).
pub const EXACT_MATCH_SCORE: f32 = 1000.0;

/// How well `label` matches the search `query`; `None` when no word matches at all.
///
/// Tiers, best first: the whole normalised label equals the query (1000); every query word is a
/// word of the label, the last one possibly as a prefix (500 + share of the label covered);
/// otherwise the share of query words found exactly, by prefix or with one typo (up to 300).
pub fn match_score(query_tokens: &[String], label: &str) -> Option<f32> {
    if query_tokens.is_empty() {
        return None;
    }
    let label_tokens = normalize_tokens(label);
    if label_tokens.is_empty() {
        return None;
    }
    if label_tokens == query_tokens {
        return Some(EXACT_MATCH_SCORE);
    }
    let last = query_tokens.len() - 1;
    let mut weights = 0.0f32;
    let mut all_words = true;
    for (i, q) in query_tokens.iter().enumerate() {
        let best = label_tokens
            .iter()
            .map(|l| word_match(q, l, i == last))
            .fold(0.0f32, f32::max);
        if best < 1.0 && !(i == last && best >= PREFIX) {
            all_words = false;
        }
        weights += best;
    }
    if weights == 0.0 {
        return None;
    }
    let covered = label_tokens
        .iter()
        .filter(|l| query_tokens.iter().any(|q| q == *l))
        .count() as f32
        / label_tokens.len() as f32;
    if all_words {
        Some(500.0 + 100.0 * covered)
    } else {
        Some(300.0 * weights / query_tokens.len() as f32 + 10.0 * covered)
    }
}

const PREFIX: f32 = 0.7;

fn word_match(query: &str, label: &str, may_be_prefix: bool) -> f32 {
    if query == label {
        1.0
    } else if label.starts_with(query) && (may_be_prefix || query.len() >= 3) {
        PREFIX
    } else if query.len() >= 4 && within_one_edit(query, label) {
        0.5
    } else {
        0.0
    }
}

/// Damerau-free Levenshtein distance ≤ 1 (one substitution, insertion or deletion).
pub fn within_one_edit(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if long.len() - short.len() > 1 {
        return false;
    }
    let prefix = short.iter().zip(long).take_while(|(x, y)| x == y).count();
    if prefix == short.len() {
        return true; // equal, or one extra trailing byte
    }
    if short.len() == long.len() {
        short[prefix + 1..] == long[prefix + 1..]
    } else {
        short[prefix..] == long[prefix + 1..]
    }
}

/// A name for a vertex the graph gives no label, from its IRI's last segment: percent-decoded,
/// `_` as a space, and camelCase split when the segment has no separator of its own
/// (`…/Antony_Cheng` → "Antony Cheng", `…/AlanMTuring` → "Alan M Turing", `…/Ray_McDonald` →
/// "Ray McDonald", `…/entity/245811625` → "245811625"). `None` when nothing readable is left.
pub fn iri_name(iri: &str) -> Option<String> {
    let trimmed = iri.trim_end_matches(['/', '#']);
    let segment = trimmed.rsplit(['/', '#']).next().unwrap_or(trimmed);
    let decoded = percent_encoding::percent_decode_str(segment).decode_utf8_lossy();
    let separated = decoded.contains(['_', ' ', '-', '+']);
    let mut name = String::with_capacity(decoded.len() + 4);
    let chars: Vec<char> = decoded
        .chars()
        .map(|c| if c == '_' || c == '+' { ' ' } else { c })
        .collect();
    for (i, &c) in chars.iter().enumerate() {
        if !separated && i > 0 && c.is_uppercase() {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            if prev.is_lowercase() || prev.is_ascii_digit() || (prev.is_uppercase() && next_lower) {
                name.push(' ');
            }
        }
        name.push(c);
    }
    let name = name.split_whitespace().collect::<Vec<_>>().join(" ");
    name.chars().any(char::is_alphanumeric).then_some(name)
}

/// A human label for a predicate from the last segment of its IRI:
/// `http://dbpedia.org/ontology/birthPlace` → "birth place", `.../directed_by` → "directed by",
/// `.../P569` → "p 569".
pub fn predicate_label(iri: &str) -> String {
    let trimmed = iri.trim_end_matches(['/', '#']);
    let segment = trimmed.rsplit(['/', '#', ':']).next().unwrap_or(trimmed);
    let mut words: Vec<String> = Vec::new();
    let mut current = String::new();
    let mut previous: Option<char> = None;
    for c in segment.chars() {
        let boundary = match previous {
            _ if !c.is_alphanumeric() => {
                flush(&mut current, &mut words);
                previous = None;
                continue;
            }
            Some(p) => (p.is_lowercase() && c.is_uppercase()) || (p.is_alphabetic() != c.is_alphabetic()),
            None => false,
        };
        if boundary {
            flush(&mut current, &mut words);
        }
        current.extend(c.to_lowercase());
        previous = Some(c);
    }
    flush(&mut current, &mut words);
    if words.is_empty() {
        segment.to_owned()
    } else {
        words.join(" ")
    }
}

fn flush(current: &mut String, words: &mut Vec<String>) {
    if !current.is_empty() {
        words.push(std::mem::take(current));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_from_iris() {
        let name = |iri: &str| iri_name(iri);
        assert_eq!(
            name("http://dbpedia.org/resource/Antony_Cheng").as_deref(),
            Some("Antony Cheng")
        );
        assert_eq!(
            name("https://dblp.org/pid/t/AlanMTuring").as_deref(),
            Some("Alan M Turing")
        );
        assert_eq!(
            name("http://dbpedia.org/resource/Ray_McDonald").as_deref(),
            Some("Ray McDonald")
        );
        assert_eq!(name("https://makg.org/entity/245811625").as_deref(), Some("245811625"));
        assert_eq!(name("http://e.org/Malm%C3%B6_FF").as_deref(), Some("Malmö FF"));
        assert_eq!(name("http://e.org/x#HTMLParser").as_deref(), Some("HTML Parser"));
        assert_eq!(name("http://e.org/things/"), Some("things".into()));
        assert_eq!(name("http://e.org/_%20_"), None);
    }

    fn toks(s: &str) -> Vec<String> {
        normalize_tokens(s)
    }

    #[test]
    fn normalisation_folds_case_accents_and_punctuation() {
        assert_eq!(toks("Gert Fröbe"), vec!["gert", "frobe"]);
        assert_eq!(toks("  O'Brien,  Conan!"), vec!["o", "brien", "conan"]);
        assert!(toks("!!!").is_empty());
    }

    #[test]
    fn exact_beats_all_words_beats_partial() {
        let q = toks("tom hanks");
        let exact = match_score(&q, "Tom Hanks").unwrap();
        let all = match_score(&q, "Tom Hanks filmography").unwrap();
        let partial = match_score(&q, "Tom Cruise").unwrap();
        assert!(exact > all && all > partial, "{exact} {all} {partial}");
        assert_eq!(match_score(&q, "Meryl Streep"), None);
    }

    #[test]
    fn single_word_prefix_and_typo_match() {
        assert!(match_score(&toks("hanks"), "Tom Hanks").unwrap() >= 500.0);
        assert!(match_score(&toks("tom han"), "Tom Hanks").unwrap() >= 500.0);
        let typo = match_score(&toks("tom hamks"), "Tom Hanks").unwrap();
        assert!(typo > 0.0 && typo < 500.0);
    }

    #[test]
    fn one_edit() {
        assert!(within_one_edit("hanks", "hanks"));
        assert!(within_one_edit("hanks", "hank"));
        assert!(within_one_edit("hanks", "hamks"));
        assert!(within_one_edit("hnks", "hanks"));
        assert!(!within_one_edit("hanks", "hnaks"));
        assert!(!within_one_edit("hanks", "ha"));
    }

    #[test]
    fn predicate_labels_split_camel_case_underscores_and_digits() {
        assert_eq!(predicate_label("http://dbpedia.org/ontology/birthPlace"), "birth place");
        assert_eq!(
            predicate_label("http://metaqa.example.org/relation/directed_by"),
            "directed by"
        );
        assert_eq!(predicate_label("http://www.wikidata.org/prop/direct/P569"), "p 569");
        assert_eq!(predicate_label("http://xmlns.com/foaf/0.1/name"), "name");
        assert_eq!(predicate_label("http://example.org/onto#hasISBN13/"), "has isbn 13");
    }
}
