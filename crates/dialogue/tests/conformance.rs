//! What every session store promises, checked on each: sled in a temporary directory, and
//! PostgreSQL when `CHATTY_KG_TEST_POSTGRES` names one (scripts/test.sh starts a private one with
//! scripts/postgres.sh; each test works in a schema of its own). Without it the PostgreSQL half
//! skips loudly, or fails with `CHATTY_KG_REQUIRE_POSTGRES=1` (CI).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use chatty_kg_dialogue::{
    ContextValue, Correction, DialogueError, DialogueStore, ExampleRecord, Feedback, Owner, PostgresStore, Rating,
    Scope, SledStore, TurnContext,
};
use std::time::{Duration, SystemTime};

fn explanation(question: &str) -> serde_json::Value {
    serde_json::json!({"question": question, "text": "Lynne Ramsay", "outcome": {"status": "answered"}})
}

fn turn(question: &str, answer: &str) -> TurnContext {
    TurnContext {
        question: question.into(),
        answers: vec![answer.into()],
        entities: Vec::new(),
        values: Vec::new(),
        total: 1,
        clarification: None,
        answer_set: None,
        query: None,
    }
}

/// The URL of a fresh schema in the test PostgreSQL, or `None` (skipping) without one.
async fn postgres_url(test: &str) -> Option<String> {
    let Ok(base) = std::env::var("CHATTY_KG_TEST_POSTGRES") else {
        assert!(
            std::env::var_os("CHATTY_KG_REQUIRE_POSTGRES").is_none(),
            "CHATTY_KG_REQUIRE_POSTGRES=1 but CHATTY_KG_TEST_POSTGRES is not set (scripts/test.sh starts one)"
        );
        eprintln!("!!! {test}: PostgreSQL half SKIPPED (set CHATTY_KG_TEST_POSTGRES; scripts/test.sh does)");
        return None;
    };
    Some(fresh_schema(&base, test).await)
}

/// A new schema named after the test (dropped first if a previous run left it) and `base` with
/// its `search_path` set to it.
async fn fresh_schema(base: &str, test: &str) -> String {
    let (client, connection) = tokio_postgres::connect(base, tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(connection);
    let schema = format!("t_{test}_{}", std::process::id());
    client
        .batch_execute(&format!(
            "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema};"
        ))
        .await
        .unwrap();
    let separator = if base.contains('?') { '&' } else { '?' };
    format!("{base}{separator}options=-c%20search_path%3D{schema}")
}

/// Runs `scenario` on a sled store, then on a PostgreSQL one when there is one.
async fn on_each_store<F, Fut>(test: &str, retention: Option<Duration>, scenario: F)
where
    F: Fn(Box<dyn DialogueStore>) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let dir = tempfile::tempdir().unwrap();
    scenario(Box::new(SledStore::open(dir.path(), retention).unwrap())).await;
    if let Some(url) = postgres_url(test).await {
        let store = PostgresStore::connect(&url, retention).await.unwrap();
        assert!(store.describe().contains("PostgreSQL"), "{}", store.describe());
        scenario(Box::new(store)).await;
    }
}

#[tokio::test]
async fn turns_come_back_in_order_in_pages_and_as_history() {
    on_each_store("order", None, |store| async move {
        let info = store.create("movies", None).await.unwrap();
        assert_eq!(info.id.as_str().len(), 32);
        for i in 0..3 {
            let q = format!("question {i}");
            let record = store.append(&info.id, turn(&q, "a"), explanation(&q)).await.unwrap();
            assert_eq!(record.index, i);
        }
        let info = store.get(info.id.as_str(), None).await.unwrap();
        assert_eq!((info.kg.as_str(), info.turns), ("movies", 3));
        let turns = store.turns(&info.id).await.unwrap();
        let questions: Vec<_> = turns.iter().map(|t| t.context.question.as_str()).collect();
        assert_eq!(questions, ["question 0", "question 1", "question 2"]);
        assert_eq!(turns[2].explanation["outcome"]["status"], "answered");
        let page: Vec<_> = store
            .turns_page(&info.id, 1, 1)
            .await
            .unwrap()
            .into_iter()
            .map(|t| t.index)
            .collect();
        assert_eq!(page, [1]);
        assert_eq!(store.turns_page(&info.id, 1, 10).await.unwrap().len(), 2);
        assert!(store.turns_page(&info.id, 3, 10).await.unwrap().is_empty());
        assert_eq!(
            store.history(&info.id, 2).await.unwrap(),
            [turn("question 1", "a"), turn("question 2", "a")]
        );
        assert!(store.check().await.is_ok());
        store.flush().await.unwrap();
    })
    .await;
}

#[tokio::test]
async fn sessions_are_isolated_by_owner_and_unguessable() {
    on_each_store("isolation", None, |store| async move {
        let alice = Owner::of_api_key("alice-key");
        let bob = Owner::of_api_key("bob-key");
        let a = store.create("movies", Some(alice.clone())).await.unwrap();
        let b = store.create("movies", Some(bob.clone())).await.unwrap();
        assert_ne!(a.id, b.id);
        assert_eq!(
            store.get(a.id.as_str(), Some(&alice)).await.unwrap().owner,
            Some(alice.clone())
        );
        for (id, owner) in [(&a.id, Some(&bob)), (&a.id, None), (&b.id, Some(&alice))] {
            assert!(matches!(
                store.get(id.as_str(), owner).await,
                Err(DialogueError::NotFound)
            ));
            assert!(matches!(
                store.delete(id.as_str(), owner).await,
                Err(DialogueError::NotFound)
            ));
        }
        for bad in [
            "",
            "../../etc",
            &a.id.as_str().to_uppercase(),
            &format!("{}0", a.id),
            "x' OR '1'='1",
        ] {
            assert!(matches!(
                store.get(bad, Some(&alice)).await,
                Err(DialogueError::NotFound)
            ));
        }
        store.append(&a.id, turn("q", "a"), explanation("q")).await.unwrap();
        store.delete(a.id.as_str(), Some(&alice)).await.unwrap();
        assert!(matches!(
            store.get(a.id.as_str(), Some(&alice)).await,
            Err(DialogueError::NotFound)
        ));
        assert!(store.turns(&a.id).await.unwrap().is_empty());
        assert!(matches!(
            store.append(&a.id, turn("q", "a"), explanation("q")).await,
            Err(DialogueError::NotFound)
        ));
        assert!(store.get(b.id.as_str(), Some(&bob)).await.is_ok());
    })
    .await;
}

#[tokio::test]
async fn ratings_are_kept_with_their_turns_and_exported_per_owner() {
    on_each_store("ratings", None, |store| async move {
        let alice = Owner::of_api_key("alice-key");
        let bob = Owner::of_api_key("bob-key");
        let a = store.create("movies", Some(alice.clone())).await.unwrap();
        let b = store.create("movies", Some(bob.clone())).await.unwrap();
        let anonymous = store.create("movies", None).await.unwrap();
        for q in ["q0", "q1", "q2"] {
            store.append(&a.id, turn(q, "a"), explanation(q)).await.unwrap();
        }
        store.append(&b.id, turn("b0", "a"), explanation("b0")).await.unwrap();
        store
            .append(&anonymous.id, turn("n0", "a"), explanation("n0"))
            .await
            .unwrap();
        let up = Feedback {
            rating: Rating::Up,
            correction: None,
            rated_at: 1,
        };
        let down = Feedback {
            rating: Rating::Down,
            correction: Some(Correction {
                text: Some("Tom Hanks".into()),
                answers: vec![ContextValue {
                    value: "http://example.org/hanks".into(),
                    label: "Tom Hanks".into(),
                    iri: true,
                    datatype: None,
                }],
                ..Correction::default()
            }),
            rated_at: 2,
        };
        let alice_ = Some(&alice);
        let rated = store.rate(a.id.as_str(), alice_, 1, Some(up.clone())).await.unwrap();
        assert_eq!(rated.feedback, Some(up.clone()));
        store.rate(a.id.as_str(), alice_, 2, Some(up.clone())).await.unwrap();
        // A second rating replaces the first; withdrawing removes it from the export.
        store.rate(a.id.as_str(), alice_, 2, Some(down.clone())).await.unwrap();
        store.rate(a.id.as_str(), alice_, 1, None).await.unwrap();
        store
            .rate(b.id.as_str(), Some(&bob), 0, Some(up.clone()))
            .await
            .unwrap();
        store
            .rate(anonymous.id.as_str(), None, 0, Some(up.clone()))
            .await
            .unwrap();
        // Nobody rates another's turn, nor a turn that does not exist.
        assert!(matches!(
            store.rate(a.id.as_str(), Some(&bob), 0, Some(up.clone())).await,
            Err(DialogueError::NotFound)
        ));
        assert!(matches!(
            store.rate(a.id.as_str(), alice_, 3, Some(up.clone())).await,
            Err(DialogueError::NoSuchTurn(3))
        ));
        let turns = store.turns(&a.id).await.unwrap();
        assert_eq!(turns[0].feedback, None);
        assert_eq!(turns[1].feedback, None);
        assert_eq!(turns[2].feedback, Some(down.clone()));

        let of = |rated: Vec<(chatty_kg_dialogue::SessionInfo, chatty_kg_dialogue::TurnRecord)>| -> Vec<(String, u32)> {
            rated.into_iter().map(|(s, t)| (s.id.to_string(), t.index)).collect()
        };
        assert_eq!(
            of(store.rated_turns(Scope::Owner(Some(&alice))).await.unwrap()),
            [(a.id.to_string(), 2)]
        );
        assert_eq!(
            of(store.rated_turns(Scope::Owner(Some(&bob))).await.unwrap()),
            [(b.id.to_string(), 0)]
        );
        assert_eq!(
            of(store.rated_turns(Scope::Owner(None)).await.unwrap()),
            [(anonymous.id.to_string(), 0)]
        );
        assert_eq!(store.rated_turns(Scope::All).await.unwrap().len(), 3);
        // A deleted session takes its ratings along.
        store.delete(a.id.as_str(), alice_).await.unwrap();
        assert_eq!(store.rated_turns(Scope::All).await.unwrap().len(), 2);
    })
    .await;
}

#[tokio::test]
async fn untouched_sessions_expire() {
    on_each_store("expiry", Some(Duration::from_secs(3600)), |store| async move {
        let old = store.create("movies", None).await.unwrap();
        store.append(&old.id, turn("q", "a"), explanation("q")).await.unwrap();
        let fresh = store.create("movies", None).await.unwrap();
        let later = SystemTime::now() + Duration::from_secs(2 * 3600);
        assert_eq!(store.expire_at(SystemTime::now()).await.unwrap(), 0);
        assert!(store.get(fresh.id.as_str(), None).await.is_ok());
        // Two hours on, both are older than the retention: nothing was touched since.
        assert_eq!(store.expire_at(later).await.unwrap(), 2);
        assert!(store.turns(&old.id).await.unwrap().is_empty());
        assert!(matches!(
            store.get(fresh.id.as_str(), None).await,
            Err(DialogueError::NotFound)
        ));
    })
    .await;
    on_each_store("forever", None, |store| async move {
        let kept = store.create("movies", None).await.unwrap();
        let later = SystemTime::now() + Duration::from_secs(1_000_000);
        assert_eq!(store.expire_at(later).await.unwrap(), 0);
        assert!(store.get(kept.id.as_str(), None).await.is_ok());
    })
    .await;
}

fn example(
    id: String,
    kg: &str,
    owner: Option<Owner>,
    session: Option<chatty_kg_dialogue::SessionId>,
) -> ExampleRecord {
    ExampleRecord {
        id,
        kg: kg.into(),
        owner,
        shared: false,
        session,
        created_at: 1,
        body: serde_json::json!({"question": "who directed X?"}),
    }
}

#[tokio::test]
async fn examples_belong_to_their_owner_and_go_with_their_session() {
    on_each_store("examples", Some(Duration::from_secs(3600)), |store| async move {
        let alice = Owner::of_api_key("alice");
        let bob = Owner::of_api_key("bob");
        let session = store.create("movies", Some(alice.clone())).await.unwrap();
        store
            .append(&session.id, turn("q", "a"), explanation("q"))
            .await
            .unwrap();
        let id = ExampleRecord::id_of_turn(&session.id, 0);
        store
            .put_example(example(
                id.clone(),
                "movies",
                Some(alice.clone()),
                Some(session.id.clone()),
            ))
            .await
            .unwrap();
        // Rated again: replaced, not doubled.
        let mut again = example(id.clone(), "movies", Some(alice.clone()), Some(session.id.clone()));
        again.body = serde_json::json!({"question": "who wrote X?"});
        store.put_example(again.clone()).await.unwrap();
        let mut shared = example("x-imported".into(), "movies", None, None);
        shared.shared = true;
        store.put_example(shared.clone()).await.unwrap();
        store
            .put_example(example("x-other-kg".into(), "books", Some(alice.clone()), None))
            .await
            .unwrap();

        assert_eq!(
            store
                .examples(Scope::Owner(Some(&alice)), Some("movies"))
                .await
                .unwrap(),
            vec![again.clone()]
        );
        assert_eq!(store.examples(Scope::Owner(Some(&alice)), None).await.unwrap().len(), 2);
        assert!(store.examples(Scope::Owner(Some(&bob)), None).await.unwrap().is_empty());
        assert_eq!(store.examples(Scope::All, Some("movies")).await.unwrap().len(), 2);
        // Bob cannot remove Alice's, nor anyone the operator's.
        assert!(!store.remove_example(&id, Scope::Owner(Some(&bob))).await.unwrap());
        assert!(
            !store
                .remove_example("x-imported", Scope::Owner(Some(&alice)))
                .await
                .unwrap()
        );
        assert!(
            store
                .remove_example("x-other-kg", Scope::Owner(Some(&alice)))
                .await
                .unwrap()
        );
        assert!(
            !store
                .remove_example("x-other-kg", Scope::Owner(Some(&alice)))
                .await
                .unwrap()
        );

        // An example claiming a session that does not exist is refused.
        let ghost = chatty_kg_dialogue::SessionId::parse("0123456789abcdef0123456789abcdef").unwrap();
        let orphan = example(ExampleRecord::id_of_turn(&ghost, 0), "movies", None, Some(ghost));
        assert!(matches!(store.put_example(orphan).await, Err(DialogueError::NotFound)));

        // Deleting the session removes its examples; the operator's stay.
        store.delete(session.id.as_str(), Some(&alice)).await.unwrap();
        assert_eq!(store.examples(Scope::All, None).await.unwrap(), vec![shared.clone()]);
        // So does its expiry.
        let later = store.create("movies", None).await.unwrap();
        store.append(&later.id, turn("q", "a"), explanation("q")).await.unwrap();
        store
            .put_example(example(
                ExampleRecord::id_of_turn(&later.id, 0),
                "movies",
                None,
                Some(later.id.clone()),
            ))
            .await
            .unwrap();
        assert_eq!(store.examples(Scope::Owner(None), None).await.unwrap().len(), 1);
        store
            .expire_at(SystemTime::now() + Duration::from_secs(7200))
            .await
            .unwrap();
        assert_eq!(store.examples(Scope::All, None).await.unwrap(), vec![shared]);
    })
    .await;
}

/// Two replicas appending to one session at once (each with its own pool, as two processes
/// would): every turn gets its own number, none is lost.
#[tokio::test(flavor = "multi_thread")]
async fn two_postgres_stores_appending_to_one_session_number_every_turn() {
    let Some(url) = postgres_url("replicas").await else {
        return;
    };
    let first = PostgresStore::connect(&url, None).await.unwrap();
    let second = PostgresStore::connect(&url, None).await.unwrap();
    let info = first.create("movies", None).await.unwrap();
    let mut tasks = Vec::new();
    for i in 0..40 {
        let store = if i % 2 == 0 { first.clone() } else { second.clone() };
        let id = info.id.clone();
        tasks.push(tokio::spawn(async move {
            let q = format!("q{i}");
            store.append(&id, turn(&q, "a"), explanation(&q)).await.unwrap().index
        }));
    }
    let mut indices = Vec::new();
    for task in tasks {
        indices.push(task.await.unwrap());
    }
    indices.sort_unstable();
    assert_eq!(indices, (0..40).collect::<Vec<u32>>());
    assert_eq!(second.get(info.id.as_str(), None).await.unwrap().turns, 40);
    assert_eq!(second.turns(&info.id).await.unwrap().len(), 40);
}

#[tokio::test]
async fn a_bad_postgres_url_or_an_unreachable_server_is_a_clear_error() {
    let error = PostgresStore::connect("mysql://nope", None).await.err().unwrap();
    assert!(error.to_string().contains("PostgreSQL"), "{error}");
    let error = PostgresStore::connect("postgres://chatty@127.0.0.1:1/chatty?connect_timeout=2", None)
        .await
        .err()
        .unwrap();
    assert!(error.to_string().contains("no connection"), "{error}");
}
