//! A graph of the size and class shape an embedded query once hung on: about 200 000 triples, a
//! class of 34 000 members, one of 300 and one of 250. "In which <class> is the <relation> of
//! <entity>?" constrains the answer to a class; it is answered with the class's instances and
//! without any query cut for time. (This shape does not reproduce the reported hang: the join
//! with the class's members that the class queries made then answers it in time too. The class
//! queries now test membership with FILTER EXISTS, and a class query that runs out of time cuts
//! the class order, noted in the search's `cut`, instead of failing the question.)

// Helpers outside #[test] functions unwrap too: a failed setup is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use std::fmt::Write;

const PEOPLE: usize = 250;
const REGIONS: usize = 300;
const CITIES: usize = 34_000;

/// A made-up name, different for every `n` (six syllables of twelve: 12^6 names).
fn name(mut n: usize) -> String {
    const SYLLABLES: [&str; 12] = ["ka", "lo", "mi", "ru", "sa", "te", "vo", "ni", "pe", "zu", "da", "fe"];
    let mut syllables = Vec::new();
    for _ in 0..6 {
        syllables.push(SYLLABLES[n % 12]);
        n /= 12;
    }
    let word = |s: &[&str]| {
        let w: String = s.concat();
        let mut chars = w.chars();
        chars.next().unwrap().to_uppercase().chain(chars).collect::<String>()
    };
    format!("{} {}", word(&syllables[..3]), word(&syllables[3..]))
}

fn graph() -> String {
    let mut ttl = String::from(
        "@prefix ex: <http://example.org/> .\n\
         @prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n\
         @prefix xsd: <http://www.w3.org/2001/XMLSchema#> .\n\
         ex:Person rdfs:label \"person\" . ex:City rdfs:label \"city\" . ex:Region rdfs:label \"region\" .\n\
         ex:birthPlace rdfs:label \"birth place\" . ex:region rdfs:label \"region\" .\n\
         ex:knows rdfs:label \"knows\" . ex:birthYear rdfs:label \"birth year\" .\n\
         ex:twin rdfs:label \"twin town\" . ex:founded rdfs:label \"founded\" .\n",
    );
    for r in 0..REGIONS {
        writeln!(
            ttl,
            "ex:r{r} a ex:Region ; rdfs:label \"{} Land\" .",
            name(1_000_000 + r)
        )
        .unwrap();
    }
    for c in 0..CITIES {
        writeln!(
            ttl,
            "ex:c{c} a ex:City ; rdfs:label \"{} Town\" ; ex:region ex:r{} ; ex:twin ex:c{} ; \
             ex:founded \"{}\"^^xsd:gYear .",
            name(2_000_000 + c),
            (c * 7) % REGIONS,
            (c * 31 + 7) % CITIES,
            1000 + c % 900
        )
        .unwrap();
    }
    for p in 0..PEOPLE {
        writeln!(
            ttl,
            "ex:p{p} a ex:Person ; rdfs:label \"{}\" ; ex:birthPlace ex:c{} ; ex:knows ex:p{} ; \
             ex:birthYear \"{}\"^^xsd:gYear .",
            name(p),
            (p * 13) % CITIES,
            (p * 31 + 7) % PEOPLE,
            1900 + p % 100
        )
        .unwrap();
    }
    ttl
}

#[tokio::test(flavor = "multi_thread")]
async fn a_class_of_the_answer_is_a_filter_not_a_join_with_its_members() {
    let Some(fixture) = from_turtle(&graph()) else { return };
    let pipeline = silent_pipeline(&fixture);
    let person = 123;
    let city = (person * 13) % CITIES;
    let region = name(1_000_000 + (city * 7) % REGIONS) + " Land";
    let who = name(person);
    for question in [
        format!("In which region is the birth place of {who}?"),
        format!("Which region is the birth place of {who} in?"),
    ] {
        let e = ask_silently(&pipeline, &question).await;
        assert_eq!(sorted(&e), vec![region.clone()], "{question}: {:?}", e.sparql);
        assert!(
            e.path_search.as_ref().is_none_or(|s| s.cut.is_none()),
            "{question}: the search was not cut: {:?}",
            e.path_search
        );
    }
}
