//! Records written by earlier versions stay readable.

use chatty_kg_dialogue::{DialogueStore, SledStore, TurnRecord};

/// A turn as the server stored it in November 2026, before records had a `format` field and
/// while this crate still stored the agents' types directly (the explanation is a real one, from
/// `chatty-kg ask --json` on the bundled KB).
const NOVEMBER_2026: &str = include_str!("fixtures/turn-record-2026-11.json");

#[test]
fn a_record_written_before_the_format_field_is_read_as_format_one() {
    let record: TurnRecord = serde_json::from_str(NOVEMBER_2026).unwrap();
    assert_eq!(record.format, 1);
    assert_eq!(record.index, 0);
    assert_eq!(record.context.question, "Who directed Forrest Gump?");
    assert_eq!(record.context.answers, ["Robert Zemeckis"]);
    assert_eq!(record.explanation["text"], "Robert Zemeckis");
    // Written back, it is the same record plus its format.
    let mut again = serde_json::to_value(&record).unwrap();
    assert_eq!(again.as_object_mut().unwrap().remove("format"), Some(1.into()));
    assert_eq!(again, serde_json::from_str::<serde_json::Value>(NOVEMBER_2026).unwrap());
}

#[tokio::test]
async fn an_old_record_on_disk_is_read_by_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let id = {
        let store = SledStore::open(dir.path(), None).unwrap();
        store.create("default", None).await.unwrap().id
    };
    // Put the old record's bytes where the old version wrote them: the `turns` tree under the
    // session id and the big-endian turn number, with the session's counter at one.
    {
        let db = sled::open(dir.path()).unwrap();
        let mut key = id.as_str().as_bytes().to_vec();
        key.extend_from_slice(&0u32.to_be_bytes());
        db.open_tree("turns")
            .unwrap()
            .insert(key, NOVEMBER_2026.as_bytes())
            .unwrap();
        let sessions = db.open_tree("sessions").unwrap();
        let mut info: serde_json::Value = serde_json::from_slice(&sessions.get(id.as_str()).unwrap().unwrap()).unwrap();
        info["turns"] = 1.into();
        sessions
            .insert(id.as_str(), serde_json::to_vec(&info).unwrap())
            .unwrap();
        db.flush().unwrap();
    }
    let store = SledStore::open(dir.path(), None).unwrap();
    let old: TurnRecord = serde_json::from_str(NOVEMBER_2026).unwrap();
    assert_eq!(store.turns(&id).await.unwrap(), [old.clone()]);
    assert_eq!(store.history(&id, 3).await.unwrap(), [old.context.clone()]);
    // A new turn after it gets the next index and today's format.
    let next = store.append(&id, old.context, old.explanation).await.unwrap();
    assert_eq!((next.index, next.format), (1, chatty_kg_dialogue::TURN_FORMAT));
}

#[tokio::test]
async fn a_turns_referents_are_kept_and_given_back() {
    use chatty_kg_dialogue::{ContextEntity, ContextValue, TurnContext};
    let dir = tempfile::tempdir().unwrap();
    let store = SledStore::open(dir.path(), None).unwrap();
    let id = store.create("default", None).await.unwrap().id;
    let context = TurnContext {
        question: "Which films did Tom Hanks star in?".into(),
        answers: vec!["Big".into(), "1988".into()],
        entities: vec![ContextEntity {
            mention: "Tom Hanks".into(),
            iri: "http://e/Tom_Hanks".into(),
            label: "Tom Hanks".into(),
        }],
        values: vec![
            ContextValue {
                value: "http://e/Big".into(),
                label: "Big".into(),
                iri: true,
                datatype: None,
            },
            ContextValue {
                value: "1988".into(),
                label: "1988".into(),
                iri: false,
                datatype: Some("http://www.w3.org/2001/XMLSchema#gYear".into()),
            },
        ],
        total: 7,
        clarification: Some(serde_json::json!({"mention": "Crash", "options": []})),
        answer_set: Some(serde_json::json!({"members": [], "role": {"as": "filter"}, "turn": 1})),
        query: Some("SELECT ?answer WHERE { ?answer ?p ?o }".into()),
    };
    let record = store.append(&id, context.clone(), serde_json::json!({})).await.unwrap();
    assert_eq!(record.format, 2);
    drop(store);
    let store = SledStore::open(dir.path(), None).unwrap();
    assert_eq!(store.history(&id, 3).await.unwrap(), [context]);
}
