//! Records written by earlier versions stay readable.

use chatty_kg_dialogue::{DialogueStore, TurnRecord};

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
async fn a_stored_old_record_comes_back_from_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let store = DialogueStore::open(dir.path(), None).unwrap();
    let info = store.create("default", None).await.unwrap();
    let old: TurnRecord = serde_json::from_str(NOVEMBER_2026).unwrap();
    let stored = store.append(&info.id, old.context.clone(), old.explanation.clone()).await.unwrap();
    let turns = store.turns(&info.id).unwrap();
    assert_eq!(turns, [stored]);
    assert_eq!(turns[0].explanation, old.explanation);
}
