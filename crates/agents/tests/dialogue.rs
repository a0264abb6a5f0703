//! Follow-up questions resolved against the dialogue's own entities and answers
//! (`dialogue/referents.rs`, the classifier and the rephraser), through the whole pipeline: the real
//! embedded store (tests/fixtures/dialogue.ttl, with classes), the real embedding model and the
//! scripted model, which answers only what a test scripts (an unscripted call fails the test).
//!
//! Needs all-MiniLM-L6-v2 (`chatty-kg models fetch`); without it these tests skip with a message,
//! unless `CHATTY_KG_REQUIRE_MODELS=1` (CI) turns the skip into a failure.

use chatty_kg_agents::state::{Outcome, ResolutionMethod, SetRole};
use chatty_kg_agents::understanding::qir::QirSource;
use chatty_kg_agents::{Classification, Dialogue, Explanation, LinkMethod, Mode, Pipeline};
use chatty_kg_llm::scripted::ScriptedChatModel;
use std::sync::Arc;

mod common;
use common::{context, dialogue_graph};

/// Asks `questions` in one dialogue; each answer with its explanation.
async fn converse(
    scripted: ScriptedChatModel,
    questions: &[&str],
) -> Option<(Vec<Explanation>, Arc<ScriptedChatModel>)> {
    let fixture = dialogue_graph()?;
    let scripted = Arc::new(scripted);
    let (mut ctx, _) = context(fixture, ScriptedChatModel::new());
    ctx.llm = scripted.clone();
    let params = ctx.params.clone();
    let pipeline = Pipeline::new(ctx);
    let mut dialogue = Dialogue::default();
    let mut out = Vec::new();
    for question in questions {
        let e = pipeline
            .ask(question, Mode::MultiTurn, &dialogue.turns)
            .await
            .unwrap_or_else(|e| panic!("{question}: {e}"));
        dialogue.record(&e, params.context_answers);
        out.push(e);
    }
    Some((out, scripted))
}

fn sorted(e: &Explanation) -> Vec<String> {
    let mut v = e.display_answers();
    v.sort();
    v
}

fn method(e: &Explanation) -> ResolutionMethod {
    e.resolution.as_ref().unwrap().references[0].method
}

#[tokio::test]
async fn he_it_and_a_third_turn_back_to_the_first_answer_without_a_model_call() {
    let Some((answers, scripted)) = converse(
        ScriptedChatModel::new(),
        &["Who created The Scream?", "Where is it located?", "Where was he born?"],
    )
    .await
    else {
        return;
    };
    assert_eq!(answers[0].display_answers(), ["Edvard Munch"]);
    // "it": Edvard Munch is a person (a "who" answer, class person), The Scream a painting.
    assert_eq!(answers[1].resolved_question, "Where is The Scream located?");
    assert_eq!(answers[1].display_answers(), ["National Museum"]);
    assert_eq!(method(&answers[1]), ResolutionMethod::Only);
    // "he": nothing of turn 2 is a person (a museum, a painting); turn 1's answer is.
    assert_eq!(answers[2].resolved_question, "Where was Edvard Munch born?");
    assert_eq!(answers[2].display_answers(), ["Løten"]);
    let link = &answers[2].entities[0];
    assert_eq!(
        (link.method, link.iri.as_deref()),
        (LinkMethod::Referent, Some("http://example.org/dialogue/Munch"))
    );
    for a in &answers {
        assert_eq!(a.llm.calls, 0, "{}: {:?}", a.question, a.llm.by_agent);
    }
    assert!(scripted.requests().is_empty());
    assert_eq!(answers[1].classification, Some(Classification::Dependent));
}

#[tokio::test]
async fn she_as_a_possessive() {
    let Some((answers, _)) = converse(
        ScriptedChatModel::new(),
        &["Who wrote Kristin Lavransdatter?", "What is her birth place?"],
    )
    .await
    else {
        return;
    };
    assert_eq!(answers[1].resolved_question, "What is Sigrid Undset's birth place?");
    assert_eq!(answers[1].display_answers(), ["Kalundborg"]);
    assert_eq!(answers[1].llm.calls, 0);
}

#[tokio::test]
async fn a_demonstrative_takes_the_referent_its_class_names() {
    let Some((answers, _)) = converse(
        ScriptedChatModel::new(),
        &[
            "What is the capital of Norway?",
            "What is the population of that city?",
            "Who died there?",
        ],
    )
    .await
    else {
        return;
    };
    // Oslo is a city, Norway a country: "that city" is Oslo.
    assert_eq!(answers[1].resolved_question, "What is the population of Oslo?");
    assert_eq!(answers[1].display_answers(), ["700000"]);
    // "there": turn 2 named one place, Oslo.
    assert_eq!(answers[2].resolved_question, "Who died in Oslo?");
    assert_eq!(sorted(&answers[2]), ["Edvard Munch", "Henrik Ibsen"]);
    assert!(answers.iter().all(|a| a.llm.calls == 0));
}

#[tokio::test]
async fn the_graph_decides_between_two_places_by_what_the_question_asks() {
    let Some((answers, scripted)) = converse(
        ScriptedChatModel::new(),
        &["What is the capital of Norway?", "Who died there?"],
    )
    .await
    else {
        return;
    };
    // Oslo (the answer) and Norway (named) are both places of the last turn; people die in the
    // city (diedIn), not in the country: no model call.
    assert!(scripted.requests().is_empty());
    assert_eq!(answers[1].resolved_question, "Who died in Oslo?");
    assert_eq!(sorted(&answers[1]), ["Edvard Munch", "Henrik Ibsen"]);
    let r = &answers[1].resolution.as_ref().unwrap().references[0];
    assert_eq!(r.method, ResolutionMethod::Only);
}

#[tokio::test]
async fn two_fitting_referents_are_one_model_choice_between_exactly_them() {
    let scripted = ScriptedChatModel::new().reply_when("rephraser", "", r#"{"referent": "Edvard Munch"}"#);
    let Some((answers, scripted)) = converse(
        scripted,
        &[
            "Was Henrik Ibsen born in the same city as Edvard Munch?",
            "Where did he die?",
        ],
    )
    .await
    else {
        return;
    };
    // Two persons with the same relations, named in one question: only the model can choose.
    let requests = scripted.requests();
    assert_eq!(requests.len(), 1, "{requests:#?}");
    let schema = requests[0].schema.as_ref().unwrap().schema.to_string();
    assert!(schema.contains(r#""enum":["Henrik Ibsen","Edvard Munch"]"#), "{schema}");
    assert_eq!(answers[1].llm.by_agent["rephraser"].calls, 1);
    assert_eq!(answers[1].llm.calls, 1);
    assert_eq!(method(&answers[1]), ResolutionMethod::Model);
    assert_eq!(answers[1].resolved_question, "Where did Edvard Munch die?");
    assert_eq!(answers[1].display_answers(), ["Oslo"]);
}

#[tokio::test]
async fn ellipsis_and_what_about() {
    let Some((answers, _)) = converse(
        ScriptedChatModel::new(),
        &[
            "Where was Henrik Ibsen born?",
            "And its population?",
            "What about Oslo?",
        ],
    )
    .await
    else {
        return;
    };
    assert_eq!(answers[1].resolved_question, "What is Skien's population?");
    assert_eq!(answers[1].display_answers(), ["55000"]);
    assert_eq!(answers[2].resolved_question, "What is Oslo's population?");
    assert_eq!(answers[2].display_answers(), ["700000"]);
    assert!(answers.iter().all(|a| a.llm.calls == 0));
}

/// "And the population?": the words name a relation of the graph, not a thing; it is asked of
/// what the dialogue was about, of the kind the relation holds of (Skien, not Henrik Ibsen).
#[tokio::test]
async fn an_ellipsis_that_names_a_relation_asks_it_of_the_referent() {
    let Some((answers, _)) = converse(
        ScriptedChatModel::new(),
        &["Where was Henrik Ibsen born?", "And the population?"],
    )
    .await
    else {
        return;
    };
    assert_eq!(answers[1].resolved_question, "What is the population of Skien?");
    assert_eq!(answers[1].display_answers(), ["55000"]);
    assert!(answers.iter().all(|a| a.llm.calls == 0));
}

/// "And Henrik Ibsen?" after a restriction: the earlier question with Ibsen in Munch's place,
/// over the same earlier answer (the cities of Norway). Sigrid Undset was born in Kalundborg, not
/// one of them: no answer, where the question alone would answer Kalundborg.
#[tokio::test]
async fn another_entity_in_a_restrictions_place_keeps_its_set() {
    let turns = [
        "Which cities are in Norway?",
        "Which of them was Edvard Munch born in?",
        "And Henrik Ibsen?",
        "What about Sigrid Undset?",
    ];
    let Some((answers, _)) = converse(ScriptedChatModel::new(), &turns).await else {
        return;
    };
    assert_eq!(answers[1].display_answers(), ["Løten"]);
    assert_eq!(answers[2].resolved_question, "Which of them was Henrik Ibsen born in?");
    assert_eq!(answers[2].display_answers(), ["Skien"]);
    let set = answers[2].answer_set.as_ref().unwrap();
    assert_eq!((set.role.clone(), set.members.len()), (SetRole::Filter, 4));
    assert_eq!(answers[3].resolved_question, "Which of them was Sigrid Undset born in?");
    assert!(
        answers[3].display_answers().is_empty(),
        "{:?}",
        answers[3].display_answers()
    );
    assert!(answers.iter().all(|a| a.llm.calls == 0));
}

/// A restriction that names nothing but an order or a value: the earlier answer's members, by
/// their attribute most like the words (population), with no path and no model call.
#[tokio::test]
async fn a_restriction_by_an_order_or_a_value_works_over_the_members() {
    let cities = "Which cities are in Norway?";
    let Some((answers, _)) = converse(
        ScriptedChatModel::new(),
        &[cities, "Which one of them has the largest population?"],
    )
    .await
    else {
        return;
    };
    assert_eq!(answers[1].display_answers(), ["Oslo"]);
    let used = answers[1].sparql.iter().find(|q| q.used).unwrap();
    assert!(
        used.sparql.contains("VALUES") && used.sparql.contains("population"),
        "{}",
        used.sparql
    );
    // Stockholm and Berlin have more people, but are none of them.
    let Some((answers, _)) = converse(
        ScriptedChatModel::new(),
        &[cities, "Which of them have a population of more than 100000?"],
    )
    .await
    else {
        return;
    };
    assert_eq!(sorted(&answers[1]), ["Bergen", "Oslo"]);
    assert!(answers.iter().all(|a| a.llm.calls == 0));
}

#[tokio::test]
async fn a_follow_up_without_a_reference_asks_no_classifier() {
    let Some((answers, _)) = converse(
        ScriptedChatModel::new(),
        &["What is the capital of Norway?", "What is the capital of Sweden?"],
    )
    .await
    else {
        return;
    };
    assert_eq!(answers[1].classification, Some(Classification::SelfContained));
    assert_eq!(answers[1].resolved_question, "What is the capital of Sweden?");
    assert_eq!(answers[1].display_answers(), ["Stockholm"]);
    assert_eq!(answers[1].llm.calls, 0);
}

#[tokio::test]
async fn a_list_answer_as_a_whole_is_planned_over_with_values() {
    let cities = "Which cities are in Norway?";
    let Some((answers, _)) = converse(ScriptedChatModel::new(), &[cities, "How many are there?"]).await else {
        return;
    };
    assert_eq!(sorted(&answers[0]), ["Bergen", "Løten", "Oslo", "Skien"]);
    assert_eq!(answers[1].display_answers(), ["4"]);
    assert!(answers[1].answer_set.as_ref().unwrap().count);

    // "Which of them": Edvard Munch lived in Oslo and Berlin; only Oslo is one of them.
    let Some((answers, _)) = converse(
        ScriptedChatModel::new(),
        &[cities, "Which of them did Edvard Munch live in?"],
    )
    .await
    else {
        return;
    };
    assert_eq!(answers[1].display_answers(), ["Oslo"]);
    assert_eq!(answers[1].answer_set.as_ref().unwrap().role, SetRole::Filter);
    assert!(
        answers[1].sparql.iter().any(|q| q.used && q.sparql.contains("VALUES")),
        "{:#?}",
        answers[1].sparql
    );

    // "their": every city of the list in the place of one (Løten has no population).
    let Some((answers, _)) = converse(ScriptedChatModel::new(), &[cities, "What are their populations?"]).await else {
        return;
    };
    assert!(matches!(
        answers[1].answer_set.as_ref().unwrap().role,
        SetRole::Anchor { .. }
    ));
    let mut populations = sorted(&answers[1]);
    populations.sort();
    assert_eq!(populations, ["285000", "55000", "700000"]);
    assert!(answers.iter().all(|a| a.llm.calls == 0));
}

#[tokio::test]
async fn an_ordinal_takes_that_member_of_the_list() {
    let Some((answers, _)) = converse(
        ScriptedChatModel::new(),
        &[
            "Which cities are in Norway?",
            "What is the population of the second one?",
        ],
    )
    .await
    else {
        return;
    };
    let second = answers[0].display_answers()[1].clone();
    assert_eq!(
        answers[1].resolved_question,
        format!("What is the population of {second}?")
    );
    let expected: Vec<String> = match second.as_str() {
        "Oslo" => vec!["700000".into()],
        "Bergen" => vec!["285000".into()],
        "Skien" => vec!["55000".into()],
        _ => vec![],
    };
    if expected.is_empty() {
        assert!(answers[1].answers.is_empty(), "Løten has no population");
    } else {
        assert_eq!(answers[1].display_answers(), expected);
    }
}

#[tokio::test]
async fn a_pronoun_is_not_what_its_own_question_names() {
    let Some((answers, _)) = converse(
        ScriptedChatModel::new(),
        &["What is the capital of Norway?", "Is it the capital of Norway?"],
    )
    .await
    else {
        return;
    };
    // Oslo and Norway both fit "it"; Norway is named in the question itself.
    assert_eq!(answers[1].resolved_question, "Is Oslo the capital of Norway?");
    assert_eq!(answers[1].display_answers(), ["true"]);
}

#[tokio::test]
async fn yes_or_no_about_a_list_and_a_count_after_a_fragment() {
    let cities = "Which cities are in Norway?";
    let Some((answers, _)) = converse(
        ScriptedChatModel::new(),
        &[cities, "Was Henrik Ibsen born in any of them?"],
    )
    .await
    else {
        return;
    };
    assert_eq!(answers[1].display_answers(), ["true"], "Skien is one of them");
    let Some((answers, _)) = converse(
        ScriptedChatModel::new(),
        &[cities, "Was Sigrid Undset born in any of them?"],
    )
    .await
    else {
        return;
    };
    assert_eq!(answers[1].display_answers(), ["false"], "Kalundborg is not");
    // Two expressions, one of which makes the question the previous one: the other is not
    // substituted into it.
    let Some((answers, _)) = converse(ScriptedChatModel::new(), &[cities, "Them: how many are there?"]).await else {
        return;
    };
    assert_eq!(answers[1].resolved_question, cities);
    assert_eq!(answers[1].display_answers(), ["4"]);
}

#[tokio::test]
async fn a_pronoun_of_the_wrong_kind_falls_back_to_the_entity_it_can_stand_for() {
    // "she" of a painting: nothing fits by kind, so the one vertex of the turn is taken, and the
    // explanation says so.
    let Some((answers, _)) = converse(
        ScriptedChatModel::new(),
        &["Where is The Scream located?", "Who created her?"],
    )
    .await
    else {
        return;
    };
    assert_eq!(answers[1].resolved_question, "Who created The Scream?");
    assert_eq!(answers[1].display_answers(), ["Edvard Munch"]);
    assert_eq!(method(&answers[1]), ResolutionMethod::Relaxed);
}

#[tokio::test]
async fn a_written_name_the_graph_lacks_and_then_it_are_said_so_without_a_model_call() {
    // No span is a label, but the question writes a name: it is searched as written, not sent
    // to the model (which the scripted model would fail). Nothing earlier is in the graph, so
    // "it" refers to nothing: the reply asks for the name, again without the model.
    let Some((answers, scripted)) = converse(
        ScriptedChatModel::new(),
        &["Who created The Shriek?", "Where is it located?"],
    )
    .await
    else {
        return;
    };
    assert_eq!(
        answers[0].outcome,
        Outcome::UnknownEntity {
            mentions: vec!["The Shriek".into()]
        }
    );
    assert_eq!(answers[0].qir.as_ref().unwrap().source, QirSource::WrittenNames);
    assert_eq!(answers[1].classification, Some(Classification::Dependent));
    assert_eq!(
        answers[1].outcome,
        Outcome::UnresolvedReference {
            expressions: vec!["it".into()]
        }
    );
    assert!(answers[1].text.contains("\"it\""), "{}", answers[1].text);
    assert!(scripted.requests().is_empty());
}

/// "Which one of them premiered first?" of plays, which have no date of their own: ordered by
/// the date of what each relates to (its premiere), through the one relation, over the members.
#[tokio::test]
async fn a_set_is_ordered_by_an_attribute_of_what_its_members_relate_to() {
    let Some((answers, _)) = converse(
        ScriptedChatModel::new(),
        &[
            "Which plays did Henrik Ibsen write?",
            "Which one of them premiered first?",
        ],
    )
    .await
    else {
        return;
    };
    assert_eq!(sorted(&answers[0]), ["A Doll's House", "Ghosts", "Peer Gynt"]);
    assert_eq!(answers[1].display_answers(), ["Peer Gynt"]);
    let used = answers[1].sparql.iter().find(|q| q.used).unwrap();
    assert!(
        used.sparql.contains("VALUES") && used.sparql.contains("prop/premiere") && used.sparql.contains("prop/date"),
        "{}",
        used.sparql
    );
    assert!(answers.iter().all(|a| a.llm.calls == 0));
}

/// "What else did he write?": the play the previous turn named is left out, and said to be.
#[tokio::test]
async fn else_leaves_out_what_the_previous_turn_named() {
    let Some((answers, _)) = converse(
        ScriptedChatModel::new(),
        &["Who wrote Ghosts?", "What else did he write?"],
    )
    .await
    else {
        return;
    };
    assert_eq!(answers[0].display_answers(), ["Henrik Ibsen"]);
    assert_eq!(sorted(&answers[1]), ["A Doll's House", "Peer Gynt", "Terje Vigen"]);
    let excluded: Vec<(&str, &str)> = answers[1]
        .excluded
        .iter()
        .map(|m| (m.value.as_str(), m.label.as_str()))
        .collect();
    assert_eq!(excluded, [("http://example.org/dialogue/Ghosts", "Ghosts")]);
    // Without "else" the same relation answers all three.
    let Some((answers, _)) = converse(ScriptedChatModel::new(), &["Who wrote Ghosts?", "What did he write?"]).await
    else {
        return;
    };
    assert_eq!(
        sorted(&answers[1]),
        ["A Doll's House", "Ghosts", "Peer Gynt", "Terje Vigen"]
    );
    assert!(answers[1].excluded.is_empty());
}

/// No word names the relation ("displays" is no word of "location"), but the question names the
/// kind of its answer: the one relation of The Scream that reaches a museum answers.
#[tokio::test]
async fn the_one_relation_to_the_class_asked_for_answers_when_no_word_names_one() {
    let Some((answers, _)) = converse(ScriptedChatModel::new(), &["Which museum displays The Scream?"]).await else {
        return;
    };
    assert_eq!(answers[0].display_answers(), ["National Museum"]);
    assert!(answers[0].paths[0].reaches_class);
    assert_eq!(answers[0].paths[0].text, "The Scream → location");
}

/// "Which of them are plays?", "How many of them are poems?": the class's instances among the
/// earlier answer's members (a VALUES block), counted for "how many".
#[tokio::test]
async fn a_set_restricted_to_a_class() {
    let written = "What did Henrik Ibsen write?";
    let Some((answers, _)) = converse(ScriptedChatModel::new(), &[written, "Which of them are plays?"]).await else {
        return;
    };
    assert_eq!(
        sorted(&answers[0]),
        ["A Doll's House", "Ghosts", "Peer Gynt", "Terje Vigen"]
    );
    assert_eq!(sorted(&answers[1]), ["A Doll's House", "Ghosts", "Peer Gynt"]);
    let used = answers[1].sparql.iter().find(|q| q.used).unwrap();
    assert!(
        used.sparql.contains("VALUES") && used.sparql.contains("class/Play"),
        "{}",
        used.sparql
    );
    let Some((answers, _)) = converse(ScriptedChatModel::new(), &[written, "How many of them are poems?"]).await else {
        return;
    };
    assert_eq!(answers[1].display_answers(), ["1"]);
    assert!(answers.iter().all(|a| a.llm.calls == 0));
}

/// "… that premiered after 1880": plays have no date of their own; the value holds the date of
/// what each relates to (its premiere), and the explanation names both relations.
#[tokio::test]
async fn a_value_is_held_through_the_relation_to_what_has_it() {
    let Some((answers, _)) = converse(
        ScriptedChatModel::new(),
        &["Which plays did Henrik Ibsen write that premiered after 1880?"],
    )
    .await
    else {
        return;
    };
    assert_eq!(answers[0].display_answers(), ["Ghosts"]);
    let used = answers[0].sparql.iter().find(|q| q.used).unwrap();
    let attribute = used.attribute.as_ref().unwrap();
    assert_eq!(attribute.label, "premiere → date", "{}", used.sparql);
}

/// "When did Ghosts open?": no relation is named like "open" and none ends at a date, but one
/// relation leads to a vertex that has a date of its own (the premiere): that is when.
#[tokio::test]
async fn when_is_the_one_relation_to_a_vertex_with_a_date() {
    let Some((answers, _)) = converse(ScriptedChatModel::new(), &["When did Ghosts open?"]).await else {
        return;
    };
    assert_eq!(
        answers[0].display_answers(),
        ["premiere of Ghosts"],
        "{:?}",
        answers[0].outcome
    );
    assert_eq!(answers[0].paths[0].text, "Ghosts → premiere");
}

/// A value with two bounds on an ordered list: "more than 50000 but less than 500000, smallest
/// first" holds both bounds and keeps the order (Oslo has more, Løten no population).
#[tokio::test]
async fn two_bounds_hold_an_ordered_list() {
    let Some((answers, _)) = converse(
        ScriptedChatModel::new(),
        &["Which cities in Norway have a population of more than 50000 but less than 500000? Smallest first."],
    )
    .await
    else {
        return;
    };
    assert_eq!(answers[0].display_answers(), ["Skien", "Bergen"]);
    let used = answers[0].sparql.iter().find(|q| q.used).unwrap();
    assert!(
        used.sparql.contains("ORDER BY") && used.sparql.contains("&&"),
        "{}",
        used.sparql
    );
}

/// "What does the National Museum hold?": no relation is named like "hold", and the museum has
/// one relation to other things (The Scream's location): what it holds is what the graph relates
/// it to, and the explanation says so. Edvard Munch has several (born in, died in, created): what
/// he borrowed has no answer rather than a guess.
#[tokio::test]
async fn what_a_thing_does_is_its_one_relation_to_other_things() {
    use chatty_kg_agents::candidates::paths::OnlyRelation;
    let Some((answers, _)) = converse(
        ScriptedChatModel::new(),
        &["What does the National Museum hold?", "What did Edvard Munch borrow?"],
    )
    .await
    else {
        return;
    };
    assert_eq!(answers[0].display_answers(), ["The Scream"], "{:?}", answers[0].outcome);
    assert_eq!(
        answers[0].path_search.as_ref().and_then(|s| s.only_relation),
        Some(OnlyRelation::ToThings)
    );
    assert!(
        answers[1].display_answers().is_empty(),
        "{:?}",
        answers[1].display_answers()
    );
    assert_eq!(answers[1].path_search.as_ref().and_then(|s| s.only_relation), None);
    assert!(answers.iter().all(|a| a.llm.calls == 0));
}

/// "What about Sigrid Undset?" after "Which of them are plays?" of what Henrik Ibsen wrote: the
/// restriction again, of what she wrote (the first turn's query asked of her, its answers the
/// set), not her works unrestricted.
#[tokio::test]
async fn another_entity_in_the_place_of_a_restricted_questions_own() {
    let Some((answers, _)) = converse(
        ScriptedChatModel::new(),
        &[
            "What did Henrik Ibsen write?",
            "Which of them are plays?",
            "What about Sigrid Undset?",
        ],
    )
    .await
    else {
        return;
    };
    assert_eq!(sorted(&answers[1]), ["A Doll's House", "Ghosts", "Peer Gynt"]);
    assert_eq!(
        answers[2].display_answers(),
        ["In the Grey Light"],
        "{}",
        answers[2].text
    );
    assert_eq!(answers[2].resolved_question, "Which of them are plays?");
    let set = answers[2].answer_set.as_ref().unwrap();
    assert_eq!(set.of_question.as_deref(), Some("What did Sigrid Undset write?"));
    let mut members: Vec<&str> = set.members.iter().map(|m| m.label.as_str()).collect();
    members.sort();
    assert_eq!(members, ["In the Grey Light", "Kristin Lavransdatter"]);
    // The earlier question's query, asked of her, is shown with the question's own queries.
    let again = answers[2]
        .sparql
        .iter()
        .find(|q| q.reason == chatty_kg_agents::QueryReason::EarlierQuestion)
        .expect("the earlier question's query is listed");
    assert!(
        again.used && again.rows == 2 && again.sparql.contains("Undset"),
        "{again:?}"
    );
    assert_ne!(
        answers[2].generated_query().map(|g| g.reason),
        Some(chatty_kg_agents::QueryReason::EarlierQuestion)
    );
    assert!(answers.iter().all(|a| a.llm.calls == 0));
}
