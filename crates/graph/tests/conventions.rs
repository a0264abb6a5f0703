//! A graph's conventions, found by its schema profile (`src/conventions.rs`) in a real embedded
//! store: RDFS, SKOS, schema.org, a Wikidata-numbered and a privately numbered Wikibase (with
//! statements, qualifiers and two languages), one whose "instance of" is labelled in another
//! language only (found by how its objects behave), and the settings' overrides. The same
//! discovery on Virtuoso is in `backend_suite.rs`.

// Helpers outside #[test] functions unwrap too: a failed setup is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use chatty_kg_graph::conventions::{RDF_TYPE, RDFS_SUBCLASS_OF, SCHEMA_DESCRIPTION, SKOS_BROADER};
use chatty_kg_graph::{EmbeddedStore, GraphSettings, KnowledgeGraph, PropertyRole, QueryResults, RdfFile, Term};
use std::path::{Path, PathBuf};

const WD: &str = "http://www.wikidata.org/entity/";
const WDT: &str = "http://www.wikidata.org/prop/direct/";
const KB: &str = "https://kb.example.org/entity/";
const KBT: &str = "https://kb.example.org/prop/direct/";

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(name)
}

/// `file` loaded into a fresh store opened with `settings` (the directory lives as long as the
/// store is used).
fn store_of(file: &Path, settings: GraphSettings) -> (tempfile::TempDir, EmbeddedStore) {
    let dir = tempfile::tempdir().unwrap();
    EmbeddedStore::load(
        dir.path(),
        &[RdfFile::new(file.to_path_buf()).unwrap()],
        &settings,
        false,
    )
    .unwrap();
    let store = EmbeddedStore::open(dir.path(), settings).unwrap();
    (dir, store)
}

fn store(name: &str) -> (tempfile::TempDir, EmbeddedStore) {
    store_of(&fixture(name), GraphSettings::default())
}

/// A fixture with some text replaced, in a temporary file.
fn edited(name: &str, replace: &[(&str, &str)]) -> (tempfile::NamedTempFile, PathBuf) {
    let mut text = std::fs::read_to_string(fixture(name)).unwrap();
    for (from, to) in replace {
        assert!(text.contains(from), "{from} is not in {name}");
        text = text.replace(from, to);
    }
    let file = tempfile::Builder::new().suffix(".ttl").tempfile().unwrap();
    std::fs::write(file.path(), text).unwrap();
    let path = file.path().to_path_buf();
    (file, path)
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

#[tokio::test]
async fn an_rdfs_graph_keeps_rdf_type_and_rdfs_subclass_of() {
    let (_dir, kg) = store("classes.ttl");
    let profile = kg.profile().await.unwrap();
    let c = &profile.conventions;
    assert_eq!(c.type_predicates, [RDF_TYPE]);
    assert_eq!(c.subclass_predicates, [RDFS_SUBCLASS_OF]);
    assert!(c.is_rdfs());
    assert!(c.properties.is_empty() && c.description_predicates.is_empty());
    assert!(
        c.findings
            .iter()
            .any(|f| f.convention == "typing" && f.why.contains("classes such as")),
        "{:#?}",
        c.findings
    );
    // Capital under City under Place: the superclass counts its subclasses' instances.
    let place = profile.classes.iter().find(|c| c.label == "place").unwrap();
    assert!(place.instances >= 6, "{place:?}");
}

#[tokio::test]
async fn wikidata_types_by_p31_and_names_predicates_by_their_property_entities() {
    let (_dir, kg) = store("wikidata.ttl");
    let profile = kg.profile().await.unwrap();
    let c = &profile.conventions;
    assert_eq!(c.type_predicates, [format!("{WDT}P31")], "{:#?}", c.findings);
    assert_eq!(c.subclass_predicates, [format!("{WDT}P279")], "{:#?}", c.findings);
    assert!(
        !c.type_predicates.iter().any(|t| t == RDF_TYPE),
        "rdf:type types only properties here"
    );
    assert_eq!(c.description_predicates, [SCHEMA_DESCRIPTION]);
    assert_eq!(c.properties.len(), 13);
    let (entity, role) = c.property_of("http://www.wikidata.org/prop/qualifier/P580").unwrap();
    assert_eq!(
        (entity.entity.as_str(), role),
        ("http://www.wikidata.org/entity/P580", PropertyRole::Qualifier)
    );
    let labels = c
        .name_predicates
        .iter()
        .find(|n| n.iri.ends_with("rdf-schema#label"))
        .unwrap();
    assert!(labels.languages.get("en").copied().unwrap_or(0) > 30, "{labels:?}");
    assert!(labels.languages.get("es").copied().unwrap_or(0) > 10, "{labels:?}");

    // Predicates are read by their property entities' labels, in English.
    let population = format!("{WDT}P1082");
    let names = kg
        .predicate_names(&[
            &population,
            "http://www.wikidata.org/prop/P6",
            "http://www.wikidata.org/prop/statement/P6",
            "http://www.wikidata.org/prop/qualifier/P580",
        ])
        .await
        .unwrap();
    assert_eq!(names[&population], "population");
    assert_eq!(names["http://www.wikidata.org/prop/P6"], "head of government");
    assert_eq!(names["http://www.wikidata.org/prop/statement/P6"], "head of government");
    assert_eq!(names["http://www.wikidata.org/prop/qualifier/P580"], "start time");
    let profiled = profile.predicates.iter().find(|p| p.iri == population).unwrap();
    assert_eq!(profiled.label, "population");

    // Classes by P31, their instances counted through P279 too.
    let city = profile.classes.iter().find(|c| c.iri == format!("{WD}Q515")).unwrap();
    assert_eq!(city.label, "city");
    assert_eq!(city.instances, 4, "{city:?}");
    let place = profile
        .classes
        .iter()
        .find(|c| c.iri == format!("{WD}Q2221906"))
        .unwrap();
    assert!(
        place.instances >= 8,
        "a class only the hierarchy names counts its subclasses': {place:?}"
    );
    assert!(!profile.classes.iter().any(|c| c.iri.starts_with("http://wikiba.se/")));

    // A property entity is where a name is written, never a thing searched for.
    let found = kg.search_entities("population", 5).await.unwrap();
    assert!(!found.iter().any(|c| c.iri.ends_with("/P1082")), "{found:?}");
    let found = kg.search_entities("Peru", 5).await.unwrap();
    assert_eq!(
        found.first().map(|c| c.iri.as_str()),
        Some("http://www.wikidata.org/entity/Q419")
    );

    // Typing and descriptions are the schema's, never relations; statements and qualifiers are.
    let around = kg.predicates_around(&format!("{WD}Q2868"), 50).await.unwrap();
    let iris: Vec<&str> = around.iter().map(|l| l.iri.as_str()).collect();
    assert!(!iris.contains(&format!("{WDT}P31").as_str()), "{iris:?}");
    assert!(!iris.contains(&SCHEMA_DESCRIPTION), "{iris:?}");
    assert!(iris.contains(&"http://www.wikidata.org/prop/P6"), "{iris:?}");
    // A predicate named "wiki page wiki link" is blacklisted as `dbo:wikiPageWikiLink` is.
    let around = kg.predicates_around(&format!("{WD}Q419"), 50).await.unwrap();
    assert!(!around.iter().any(|l| l.iri.ends_with("/P9000")), "{around:?}");
    assert_eq!(c.blacklisted, [format!("{WDT}P9000")]);

    // An entity's classes, by P31.
    let classes = kg.classes(&[&format!("{WD}Q2868")]).await.unwrap();
    assert_eq!(classes[&format!("{WD}Q2868")], ["capital city"]);
    let descriptions = kg.descriptions(&[&format!("{WD}Q1000001")]).await.unwrap();
    assert_eq!(descriptions[&format!("{WD}Q1000001")], "city in Peru");

    // The instances of a class, through the graph's own subclass predicate.
    let query = chatty_kg_graph::instances_query(&format!("{WD}Q515"), 50, c.types()).unwrap();
    let QueryResults::Solutions(s) = kg.query(&query).await.unwrap() else {
        panic!("a SELECT")
    };
    let lima = Term::NamedNode(chatty_kg_graph::NamedNode::new(format!("{WD}Q2868")).unwrap());
    assert!(s.column("s").any(|t| *t == lima), "Lima is a capital, so a city");
}

#[tokio::test]
async fn a_private_wikibase_types_by_its_own_numbers() {
    let (_dir, kg) = store("wikibase-private.ttl");
    let c = kg.profile().await.unwrap().conventions.clone();
    assert_eq!(c.type_predicates, [format!("{KBT}P3")], "{:#?}", c.findings);
    assert_eq!(c.subclass_predicates, [format!("{KBT}P5")], "{:#?}", c.findings);
    let names = kg.predicate_names(&[&format!("{KBT}P2")]).await.unwrap();
    assert_eq!(names[&format!("{KBT}P2")], "population");
    assert!(c.is_schema_vertex(&format!("{KB}P3")));
}

#[tokio::test]
async fn instance_of_named_in_another_language_is_found_by_how_its_objects_behave() {
    let (_file, path) = edited(
        "wikibase-private.ttl",
        &[
            (r#""instance of"@en, "instancia de"@es"#, r#""instancia de"@es"#),
            (r#""subclass of"@en, "subclase de"@es"#, r#""subclase de"@es"#),
        ],
    );
    let (_dir, kg) = store_of(&path, GraphSettings::default());
    let c = kg.profile().await.unwrap().conventions.clone();
    assert_eq!(c.type_predicates, [format!("{KBT}P3")], "{:#?}", c.findings);
    assert!(c.subclass_predicates.contains(&format!("{KBT}P5")), "{:#?}", c.findings);
    let why = c
        .findings
        .iter()
        .find(|f| f.convention == "typing" && f.value.ends_with("/P3"))
        .unwrap();
    assert!(why.why.contains("objects are shared by"), "{why:?}");
}

#[tokio::test]
async fn a_concept_scheme_orders_its_kinds_by_skos_broader() {
    let (_dir, kg) = store("skos.ttl");
    let profile = kg.profile().await.unwrap();
    let c = &profile.conventions;
    assert_eq!(c.type_predicates, [RDF_TYPE]);
    assert!(
        c.subclass_predicates.iter().any(|s| s == SKOS_BROADER),
        "{:#?}",
        c.findings
    );
    let query = chatty_kg_graph::instances_query("http://example.org/skos/kind/City", 50, c.types()).unwrap();
    let QueryResults::Solutions(s) = kg.query(&query).await.unwrap() else {
        panic!("a SELECT")
    };
    let mut found: Vec<String> = s.column("s").filter_map(chatty_kg_graph::term_text).collect();
    found.sort();
    assert_eq!(
        found,
        strings(&[
            "http://example.org/skos/Arequipa",
            "http://example.org/skos/Cusco",
            "http://example.org/skos/Lima",
            "http://example.org/skos/Santiago"
        ])
    );
    let names = c.name_predicates.iter().map(|n| n.iri.as_str()).collect::<Vec<_>>();
    assert!(
        names.contains(&"http://www.w3.org/2004/02/skos/core#prefLabel"),
        "{names:?}"
    );
}

#[tokio::test]
async fn schema_org_names_and_describes() {
    let (_dir, kg) = store("schema-org.ttl");
    let profile = kg.profile().await.unwrap();
    let c = &profile.conventions;
    assert_eq!(c.type_predicates, [RDF_TYPE]);
    assert_eq!(c.description_predicates, [SCHEMA_DESCRIPTION]);
    assert!(c.name_predicates.iter().any(|n| n.iri == "http://schema.org/name"));
    let found = kg.search_entities("John Smith", 5).await.unwrap();
    let iris: Vec<&str> = found.iter().map(|c| c.iri.as_str()).collect();
    let descriptions = kg.descriptions(&iris).await.unwrap();
    let mut said: Vec<&str> = descriptions.values().map(String::as_str).collect();
    said.sort();
    assert_eq!(said, ["English explorer", "Scottish economist"]);
    // A description is no relation.
    let around = kg
        .predicates_around("http://example.org/books/smith1", 20)
        .await
        .unwrap();
    assert!(!around.iter().any(|l| l.iri == SCHEMA_DESCRIPTION), "{around:?}");
}

#[tokio::test]
async fn what_the_settings_say_wins_over_what_is_found() {
    let settings = GraphSettings {
        type_predicates: vec![format!("{WDT}P30")],
        subclass_predicates: vec![],
        description_predicates: vec!["http://example.org/none".into()],
        ..GraphSettings::default()
    };
    let (_dir, kg) = store_of(&fixture("wikidata.ttl"), settings);
    let c = kg.profile().await.unwrap().conventions.clone();
    assert_eq!(c.type_predicates, [format!("{WDT}P30")]);
    assert_eq!(c.description_predicates, ["http://example.org/none"]);
    assert!(
        c.findings
            .iter()
            .any(|f| f.convention == "typing" && f.why.contains("configuration")),
        "{:#?}",
        c.findings
    );
    // Unset, the subclass predicate is still found (by its label).
    assert_eq!(c.subclass_predicates, [format!("{WDT}P279")]);
}

#[tokio::test]
async fn a_saved_profile_found_under_other_settings_is_found_again() {
    let dir = tempfile::tempdir().unwrap();
    let file = RdfFile::new(fixture("wikidata.ttl")).unwrap();
    EmbeddedStore::load(dir.path(), &[file], &GraphSettings::default(), false).unwrap();
    {
        let kg = EmbeddedStore::open(dir.path(), GraphSettings::default()).unwrap();
        assert_eq!(
            kg.profile().await.unwrap().conventions.type_predicates,
            [format!("{WDT}P31")]
        );
    }
    let settings = GraphSettings {
        type_predicates: vec![RDF_TYPE.into()],
        ..GraphSettings::default()
    };
    let kg = EmbeddedStore::open(dir.path(), settings).unwrap();
    assert_eq!(kg.profile().await.unwrap().conventions.type_predicates, [RDF_TYPE]);
}
