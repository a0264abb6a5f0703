//! Values the question writes, grounded in the graph without the model (a parts catalogue
//! written here: numbers, dates, short codes, web addresses; two classes): a number right after
//! the noun it is the value of ("the weight 5") or written as an equality ("exactly 240 grams")
//! holds the answers' attribute; a short code ("Ln") or an address with its trailing slash links
//! the vertices that store it, all of them that are of the class asked for; a superlative over a
//! class takes its attribute from the words the question has besides the class ("the highest
//! *price*"), and so does one over a path's answers; a word modifying the class names the value
//! of its instances it resembles ("*German* parts": Germany), and when it resembles none ("which
//! *steel* part") the question is not read as one about the whole class. A real embedded store, the real embedding
//! model, a scripted model that must not be asked.

use chatty_kg_agents::{AttributeOf, Explanation, LinkMethod, Mode, Outcome, Pipeline, QirSource, QueryReason};
use chatty_kg_llm::scripted::ScriptedChatModel;

mod common;
use common::{ask_silently, context, from_turtle, silent_pipeline, sorted};

const CATALOGUE: &str = r#"
@prefix ex: <http://example.org/shop/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .

ex:Part rdfs:label "part" .
ex:Supplier rdfs:label "supplier" .
ex:weight rdfs:label "weight in grams" .
ex:price rdfs:label "price" .
ex:stockCode rdfs:label "stock code" .
ex:website rdfs:label "website" .
ex:suppliedBy rdfs:label "supplied by" .

ex:bolt a ex:Part ; rdfs:label "hex bolt" ; ex:weight 12 ; ex:price 0.5 ; ex:stockCode "Hx" ; ex:suppliedBy ex:acme .
ex:nut a ex:Part ; rdfs:label "lock nut" ; ex:weight 5 ; ex:price 0.2 ; ex:stockCode "Ln" ; ex:suppliedBy ex:acme .
ex:gear a ex:Part ; rdfs:label "spur gear" ; ex:weight 240 ; ex:price 14.0 ; ex:stockCode "Sg" ; ex:suppliedBy ex:globex .
ex:spring a ex:Part ; rdfs:label "coil spring" ; ex:weight 5 ; ex:price 20.0 ; ex:stockCode "Cs" ; ex:suppliedBy ex:globex .
ex:washer a ex:Part ; rdfs:label "flat washer" ; ex:weight 2 ; ex:price 0.1 ; ex:stockCode "Fw" ; ex:suppliedBy ex:initech .

ex:sku rdfs:label "sku number" .
ex:bolt ex:sku "SKU-100-HX" .
ex:finish rdfs:label "finish" .
ex:bolt ex:finish "Zn" .
ex:nut ex:finish "Zn" .
ex:gear ex:finish "Zn" .
ex:spring ex:finish "Zn" .
ex:washer ex:finish "Zn" .
ex:madeIn rdfs:label "made in" .
ex:germany rdfs:label "Germany" .
ex:japan rdfs:label "Japan" .
ex:bolt ex:madeIn ex:germany .
ex:nut ex:madeIn ex:germany .
ex:gear ex:madeIn ex:japan .
ex:spring ex:madeIn ex:japan .
ex:washer ex:madeIn ex:japan .

ex:acme a ex:Supplier ; rdfs:label "Acme Fasteners" ; ex:website "https://acme.example/" .
ex:globex a ex:Supplier ; rdfs:label "Globex Gears" ; ex:website "https://globex.example/" .
ex:initech a ex:Supplier ; rdfs:label "Initech Springs" ; ex:website "https://globex.example/" .
"#;

/// The attribute the used query ordered or filtered by: its label, what for, and the words that
/// chose it (the explanation shows them).
fn attribute(e: &Explanation) -> (String, AttributeOf, String) {
    let a = e
        .sparql
        .iter()
        .filter(|q| q.used)
        .find_map(|q| q.attribute.as_ref())
        .unwrap_or_else(|| panic!("no attribute shown: {:#?}", e.sparql));
    (a.label.clone(), a.of, a.words.clone())
}

fn catalogue() -> Option<&'static common::Fixture> {
    static FIXTURE: std::sync::OnceLock<Option<common::Fixture>> = std::sync::OnceLock::new();
    FIXTURE.get_or_init(|| from_turtle(CATALOGUE)).as_ref()
}

#[tokio::test]
async fn a_number_after_its_noun_or_written_as_an_equality_holds_the_attribute() {
    let Some(fixture) = catalogue() else { return };
    let pipeline = silent_pipeline(fixture);
    let e = ask_silently(&pipeline, "How many parts have the weight 5?").await;
    assert_eq!(e.display_answers(), ["2"], "{:#?}", e.sparql);
    assert_eq!(e.qir.as_ref().unwrap().source, QirSource::Value);
    assert!(e.sparql.iter().any(|q| q.used && q.reason == QueryReason::Value));

    let e = ask_silently(&pipeline, "Which part weighs exactly 240 grams?").await;
    assert_eq!(e.display_answers(), ["spur gear"], "{:#?}", e.sparql);
    let (label, of, words) = attribute(&e);
    assert_eq!((label.as_str(), of), ("weight in grams", AttributeOf::Value));
    assert!(words.contains("grams"), "{words}");
    // The price of 14 is no weight: the graph's attribute most like the words decides.
    let e = ask_silently(&pipeline, "Which part has the price 14?").await;
    assert_eq!(e.display_answers(), ["spur gear"], "{:#?}", e.sparql);
}

#[tokio::test]
async fn a_short_code_or_an_address_links_every_vertex_of_the_class_that_stores_it() {
    let Some(fixture) = catalogue() else { return };
    let pipeline = silent_pipeline(fixture);
    let e = ask_silently(&pipeline, "Which part has the stock code Ln?").await;
    assert_eq!(e.display_answers(), ["lock nut"], "{:#?}", e.entities);
    assert!(e.entities.iter().any(|l| l.method == LinkMethod::Literal));

    // Two suppliers give the same address, which ends with a slash.
    let e = ask_silently(&pipeline, "Which suppliers have the website https://globex.example/?").await;
    assert_eq!(sorted(&e), ["Globex Gears", "Initech Springs"], "{:#?}", e.sparql);
    // Beside a name the graph holds, a short capitalised word is not looked up as a code.
    let e = ask_silently(&pipeline, "Does the lock nut have the stock code Hx?").await;
    assert!(
        e.entities.iter().all(|l| l.method != LinkMethod::Literal),
        "{:#?}",
        e.entities
    );

    // A code every part has names a value, not one part: it links nothing.
    let e = unread(fixture, "Which part has the finish Zn?").await;
    assert!(
        e.entities.iter().all(|l| l.method != LinkMethod::Literal),
        "{:#?}",
        e.entities
    );

    // No vertex stores the address: the model is the last resort, and when it finds nothing
    // either, nothing is made up.
    let e = unread(fixture, "Which supplier has the website https://nowhere.example/?").await;
    assert!(e.display_answers().is_empty(), "{:#?}", e.display_answers());
    assert!(matches!(e.outcome, Outcome::UnknownEntity { .. }), "{:?}", e.outcome);
}

/// Asks a question the graph does not ground, with a model whose QIR names nothing valid.
async fn unread(fixture: &common::Fixture, question: &str) -> Explanation {
    let model = ScriptedChatModel::new().reply_when("qir", "", r#"{"entities": []}"#);
    let (ctx, _) = context(fixture, model);
    Pipeline::new(ctx)
        .ask(question, Mode::SingleTurn, &[])
        .await
        .expect("an answer, not an error")
}

#[tokio::test]
async fn a_superlative_takes_its_attribute_from_the_words_besides_the_class() {
    let Some(fixture) = catalogue() else { return };
    let pipeline = silent_pipeline(fixture);
    // The heaviest part is the spur gear; the dearest is the coil spring.
    let e = ask_silently(&pipeline, "Which part has the highest price?").await;
    assert_eq!(e.display_answers(), ["coil spring"], "{:#?}", e.sparql);
    assert_eq!(e.qir.as_ref().unwrap().source, QirSource::Class);
    assert_eq!(
        attribute(&e),
        ("price".to_owned(), AttributeOf::Superlative, "highest price".to_owned())
    );
    let e = ask_silently(&pipeline, "Which part has the lowest weight?").await;
    assert_eq!(e.display_answers(), ["flat washer"], "{:#?}", e.sparql);

    // Over a path's answers too: Globex Gears supplies the gear (heavier) and the spring (dearer).
    let e = ask_silently(&pipeline, "Which part supplied by Globex Gears has the highest price?").await;
    assert_eq!(e.display_answers(), ["coil spring"], "{:#?}", e.sparql);
    assert_eq!(attribute(&e).0, "price");
}

#[tokio::test]
async fn a_word_modifying_the_class_is_no_superlative_over_all_of_it() {
    let Some(fixture) = catalogue() else { return };
    // "steel" names nothing in the graph: the question is not read as the dearest part of all,
    // the model is asked to find what it names.
    let e = unread(fixture, "Which steel part has the highest price?").await;
    assert!(e.display_answers().is_empty(), "{:#?}", e.display_answers());
    assert!(e.llm.calls > 0);
    // Nor is a name the graph does not hold ("in Bavaria").
    let e = unread(fixture, "Which part has the highest price in Bavaria?").await;
    assert!(e.display_answers().is_empty(), "{:#?}", e.display_answers());
}

#[tokio::test]
async fn a_word_modifying_the_class_names_the_value_of_its_instances_it_resembles() {
    let Some(fixture) = catalogue() else { return };
    let pipeline = silent_pipeline(fixture);
    let e = ask_silently(&pipeline, "Give me all German parts.").await;
    assert_eq!(sorted(&e), ["hex bolt", "lock nut"], "{:#?}", e.sparql);
    let link = e.entities.iter().find(|l| l.mention == "German").expect("linked");
    assert_eq!(
        (link.label.as_deref(), link.method),
        (Some("Germany"), LinkMethod::Modifier)
    );
    let e = ask_silently(&pipeline, "Which Japanese part has the lowest price?").await;
    assert_eq!(e.display_answers(), ["flat washer"], "{:#?}", e.sparql);
    // No value of the parts is like "wooden": nothing is linked for it.
    let e = unread(fixture, "Give me all wooden parts.").await;
    assert!(e.display_answers().is_empty(), "{:#?}", e.entities);
}

#[tokio::test]
async fn a_name_written_in_capitals_is_searched_and_a_relation_word_is_no_name() {
    let Some(fixture) = catalogue() else { return };
    let pipeline = silent_pipeline(fixture);
    // No span is a label (a typo: "Hexx Bolt"): the names the question writes are searched
    // without the model, and "SKU", in capitals but a word of a relation's label, is the
    // relation asked about: no name, and a word the ranking reads.
    let e = ask_silently(&pipeline, "What is the SKU of the Hexx Bolt?").await;
    let qir = e.qir.as_ref().unwrap();
    assert_eq!(
        (qir.source, &qir.entities[..]),
        (QirSource::WrittenNames, &["Hexx Bolt".to_owned()][..])
    );
    assert_eq!(e.display_answers(), ["SKU-100-HX"], "{:#?}", e.entities);
    // After a possessive too.
    let e = ask_silently(&pipeline, "What is the Hexx Bolt's SKU?").await;
    assert_eq!(e.display_answers(), ["SKU-100-HX"], "{:#?}", e.paths);
}

/// Signs of a type catalogue: a category the signs share (written as a common noun), one sign
/// whose own name is the category's words said otherwise, and nothing pointing to that sign.
const SIGNS: &str = r#"
@prefix ex: <http://example.org/type/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .

ex:Sign rdfs:label "sign" .
ex:category rdfs:label "category" .
ex:addedIn rdfs:label "added in" .
ex:currency rdfs:label "currency symbol" .
ex:math rdfs:label "math symbol" .
ex:v2 rdfs:label "Release 2" .
ex:v3 rdfs:label "Release 3" .

ex:generic a ex:Sign ; rdfs:label "Currency sign" ; ex:category ex:currency ; ex:addedIn ex:v2 .
ex:dong a ex:Sign ; rdfs:label "Dong sign" ; ex:category ex:currency ; ex:addedIn ex:v3 .
ex:euro a ex:Sign ; rdfs:label "Euro sign" ; ex:category ex:currency ; ex:addedIn ex:v3 .
ex:plus a ex:Sign ; rdfs:label "Plus sign" ; ex:category ex:math ; ex:addedIn ex:v3 .
ex:minus a ex:Sign ; rdfs:label "Minus sign" ; ex:category ex:math ; ex:addedIn ex:v2 .
"#;

#[tokio::test]
async fn the_noun_a_which_question_asks_for_names_the_set_its_answers_belong_to() {
    static FIXTURE: std::sync::OnceLock<Option<common::Fixture>> = std::sync::OnceLock::new();
    let Some(fixture) = FIXTURE.get_or_init(|| from_turtle(SIGNS)).as_ref() else {
        return;
    };
    let pipeline = silent_pipeline(fixture);
    // "currency sign" is exactly the name of one sign, which nothing points to: the question
    // asks for signs of the category "currency symbol" instead.
    let e = ask_silently(&pipeline, "Which currency sign was added in Release 3?").await;
    let link = e
        .entities
        .iter()
        .find(|l| l.mention == "currency sign")
        .unwrap_or_else(|| panic!("the noun is linked: {:#?}", e.entities));
    assert_eq!(link.method, LinkMethod::AskedSet, "{:#?}", e.entities);
    assert_eq!(link.label.as_deref(), Some("currency symbol"));
    assert_eq!(link.homonyms, vec!["http://example.org/type/generic".to_owned()]);
    assert_eq!(sorted(&e), vec!["Dong sign", "Euro sign"], "{:#?}", e.sparql);
    // Named anywhere else, it is the sign itself.
    let e = ask_silently(&pipeline, "When was the currency sign added?").await;
    let link = e
        .entities
        .first()
        .unwrap_or_else(|| panic!("linked: {:#?}", e.entities));
    assert_eq!(link.method, LinkMethod::ExactLabel);
    assert_eq!(link.iri.as_deref(), Some("http://example.org/type/generic"));
}

/// Packages of a distribution: built from source packages (a source and a binary package share
/// the name "vim"), each for an architecture, "all" for the architecture-independent ones.
const PACKAGES: &str = r#"
@prefix ex: <http://example.org/distro/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .

ex:Package rdfs:label "package" .
ex:Source rdfs:label "source package" .
ex:Architecture rdfs:label "architecture" .
ex:builtFrom rdfs:label "built from" .
ex:architecture rdfs:label "architecture" .

ex:all a ex:Architecture ; rdfs:label "all" .
ex:amd64 a ex:Architecture ; rdfs:label "amd64" .
ex:arm64 a ex:Architecture ; rdfs:label "arm64" .
ex:srcEmacs a ex:Source ; rdfs:label "emacs" .
ex:srcVim a ex:Source ; rdfs:label "vim" .

ex:emacs a ex:Package ; rdfs:label "emacs" ; ex:builtFrom ex:srcEmacs ; ex:architecture ex:amd64 .
ex:emacsCommon a ex:Package ; rdfs:label "emacs-common" ; ex:builtFrom ex:srcEmacs ; ex:architecture ex:all .
ex:emacsEl a ex:Package ; rdfs:label "emacs-el" ; ex:builtFrom ex:srcEmacs ; ex:architecture ex:all .
ex:vim a ex:Package ; rdfs:label "vim" ; ex:builtFrom ex:srcVim ; ex:architecture ex:amd64 .
ex:vimTiny a ex:Package ; rdfs:label "vim-tiny" ; ex:builtFrom ex:srcVim ; ex:architecture ex:arm64 .
ex:vimCommon a ex:Package ; rdfs:label "vim-common" ; ex:builtFrom ex:srcVim ; ex:architecture ex:all .
ex:vimRuntime a ex:Package ; rdfs:label "vim-runtime" ; ex:builtFrom ex:srcVim ; ex:architecture ex:all .
ex:vimDoc a ex:Package ; rdfs:label "vim-doc" ; ex:builtFrom ex:srcVim ; ex:architecture ex:all .
"#;

fn packages() -> Option<&'static common::Fixture> {
    static FIXTURE: std::sync::OnceLock<Option<common::Fixture>> = std::sync::OnceLock::new();
    FIXTURE.get_or_init(|| from_turtle(PACKAGES)).as_ref()
}

#[tokio::test]
async fn a_compound_of_a_relations_name_says_one_of_its_values() {
    let Some(fixture) = packages() else { return };
    let pipeline = silent_pipeline(fixture);
    // No label holds "architecture-independent": of the architectures, "architecture all" is
    // the reading closest to it.
    let e = ask_silently(&pipeline, "How many packages are architecture-independent?").await;
    let link = e
        .entities
        .iter()
        .find(|l| l.mention == "architecture-independent")
        .unwrap_or_else(|| panic!("the compound is linked: {:#?}", e.entities));
    assert_eq!(link.method, LinkMethod::RelationValue);
    assert_eq!(link.iri.as_deref(), Some("http://example.org/distro/all"));
    assert_eq!(e.display_answers(), ["5"], "{:#?}", e.sparql);
    // Beside a name, the two join.
    let e = ask_silently(
        &pipeline,
        "Which packages built from the emacs source package are architecture-independent?",
    )
    .await;
    assert_eq!(sorted(&e), ["emacs-common", "emacs-el"], "{:#?}", e.entities);
}

#[tokio::test]
async fn a_restriction_by_a_compound_is_kept_for_another_source_of_the_same_kind() {
    let Some(fixture) = packages() else { return };
    let (ctx, ledger) = context(fixture, ScriptedChatModel::new());
    let params = ctx.params.clone();
    let pipeline = Pipeline::new(ctx);
    let mut dialogue = chatty_kg_agents::Dialogue::default();
    let mut answers = Vec::new();
    for question in [
        "Which packages are built from the emacs source package?",
        "How many of them are architecture-independent?",
        // "vim" is a binary package too: the source, of the kind the dialogue's "emacs" is,
        // takes emacs's place, not the architecture of the turn before.
        "And for the vim source?",
    ] {
        let e = pipeline
            .ask(question, Mode::MultiTurn, &dialogue.turns)
            .await
            .unwrap_or_else(|e| panic!("{question}: {e}"));
        dialogue.record(&e, params.context_answers);
        answers.push(e);
    }
    assert_eq!(sorted(&answers[0]), ["emacs", "emacs-common", "emacs-el"]);
    assert_eq!(answers[1].display_answers(), ["2"], "{:#?}", answers[1].entities);
    assert_eq!(answers[2].display_answers(), ["3"], "{:#?}", answers[2].resolution);
    assert_eq!(ledger.totals().calls, 0);
}
