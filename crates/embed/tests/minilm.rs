//! all-MiniLM-L6-v2 against the similarities published on its model card.
//!
//! Needs the model (`chatty-kg models fetch`); without it the tests skip with a message, unless
//! `CHATTY_KG_REQUIRE_MODELS=1` (set by CI) turns the skip into a failure.

// Helpers outside #[test] functions unwrap too: a failed setup is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use chatty_kg_embed::{CachedEmbedder, Embedder, MiniLmEmbedder, cosine};
use chatty_kg_models::{catalog, model_for_tests};
use std::sync::OnceLock;

fn model() -> Option<&'static MiniLmEmbedder> {
    static MODEL: OnceLock<Option<MiniLmEmbedder>> = OnceLock::new();
    MODEL
        .get_or_init(|| {
            let dir = model_for_tests(catalog::DEFAULT_EMBEDDING_MODEL)?;
            Some(MiniLmEmbedder::load(&dir).unwrap())
        })
        .as_ref()
}

const WEATHER: &str = "The weather is lovely today.";
const SUNNY: &str = "It's so sunny outside!";
const STADIUM: &str = "He drove to the stadium.";

#[test]
fn model_card_similarities() {
    let Some(model) = model() else { return };
    let v = model.embed(&[WEATHER, SUNNY, STADIUM]).unwrap();
    assert_eq!(v.len(), 3);
    for (pair, expected) in [((0, 1), 0.6660), ((0, 2), 0.1046), ((1, 2), 0.1411)] {
        let got = cosine(&v[pair.0], &v[pair.1]);
        assert!(
            (got - expected).abs() < 1e-3,
            "{pair:?}: cosine {got}, model card {expected}"
        );
    }
}

#[test]
fn vectors_are_normalised_and_independent_of_batch_padding() {
    let Some(model) = model() else { return };
    assert_eq!(model.dimension(), 384);
    let alone = model.embed(&["director"]).unwrap();
    // In a batch, "director" is padded to the longest sentence; pooling must ignore the padding.
    let batch = model
        .embed(&[
            "director",
            "the country in which the film was first released to the public",
        ])
        .unwrap();
    let norm: f32 = alone[0].iter().map(|x| x * x).sum::<f32>().sqrt();
    assert!((norm - 1.0).abs() < 1e-4, "norm {norm}");
    assert!(cosine(&alone[0], &batch[0]) > 0.9999, "padding changed the embedding");
    assert!(model.embed(&[]).unwrap().is_empty());
}

#[test]
fn predicate_labels_rank_by_meaning() {
    let Some(model) = model() else { return };
    let v = model
        .embed(&["directed by", "director", "release year", "starred actors"])
        .unwrap();
    let to_director = cosine(&v[0], &v[1]);
    assert!(
        to_director > cosine(&v[0], &v[2]) && to_director > cosine(&v[0], &v[3]),
        "{to_director}"
    );
}

#[test]
fn cache_returns_the_same_vectors_and_counts_hits() {
    let Some(model) = model() else { return };
    let direct = model.embed(&["written by", "genre"]).unwrap();
    let dir = model_for_tests(catalog::DEFAULT_EMBEDDING_MODEL).unwrap();
    let cached = CachedEmbedder::new(MiniLmEmbedder::load(&dir).unwrap(), 2);
    let first = cached.embed(&["written by", "genre", "written by"]).unwrap();
    assert_eq!(cached.stats(), (0, 2));
    let again = cached.embed(&["genre"]).unwrap();
    assert_eq!(cached.stats(), (1, 2));
    assert_eq!(first[0], first[2]);
    assert!(cosine(&first[0], &direct[0]) > 0.9999 && cosine(&again[0], &direct[1]) > 0.9999);
    // Over capacity: the cache starts again but answers stay right.
    let over = cached.embed(&["language"]).unwrap();
    assert_eq!(over.len(), 1);
    assert_eq!(cached.stats(), (1, 3));
}
