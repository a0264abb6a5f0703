//! A bounded cache in front of an embedder.
//!
//! The same predicate labels ("directed by", "release year", …) come back question after question;
//! embedding them again is most of the relation-linking time. Misses of one call are embedded in
//! one batch. When the cache is full it is cleared: simpler than LRU, and labels that matter come
//! back at once.

use crate::{EmbedError, Embedder};
use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

pub struct CachedEmbedder<E> {
    inner: E,
    capacity: usize,
    vectors: Mutex<HashMap<String, Vec<f32>>>,
    hits: AtomicU64,
    misses: AtomicU64,
}

impl<E: Embedder> CachedEmbedder<E> {
    /// Keeps at most `capacity` vectors (384 floats each for MiniLM: 100 000 ≈ 150 MB).
    pub fn new(inner: E, capacity: usize) -> Self {
        Self {
            inner,
            capacity: capacity.max(1),
            vectors: Mutex::new(HashMap::new()),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        }
    }

    /// (hits, misses) since creation.
    pub fn stats(&self) -> (u64, u64) {
        (self.hits.load(Ordering::Relaxed), self.misses.load(Ordering::Relaxed))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Vec<f32>>> {
        // A panic while holding the lock cannot leave the map inconsistent (single inserts), so a
        // poisoned lock is still usable.
        self.vectors.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl<E: Embedder> Embedder for CachedEmbedder<E> {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn dimension(&self) -> usize {
        self.inner.dimension()
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut out: Vec<Option<Vec<f32>>> = {
            let map = self.lock();
            texts.iter().map(|t| map.get(*t).cloned()).collect()
        };
        let mut missing: Vec<&str> = texts
            .iter()
            .zip(&out)
            .filter(|(_, v)| v.is_none())
            .map(|(t, _)| *t)
            .collect();
        missing.sort_unstable();
        missing.dedup();
        self.hits.fetch_add(
            (texts.len() - out.iter().filter(|v| v.is_none()).count()) as u64,
            Ordering::Relaxed,
        );
        self.misses.fetch_add(missing.len() as u64, Ordering::Relaxed);
        if !missing.is_empty() {
            let fresh = self.inner.embed(&missing)?;
            let mut map = self.lock();
            if map.len() + fresh.len() > self.capacity {
                map.clear();
            }
            for (text, vector) in missing.iter().zip(fresh) {
                map.insert((*text).to_owned(), vector);
            }
            for (slot, text) in out.iter_mut().zip(texts) {
                if slot.is_none() {
                    *slot = map.get(*text).cloned();
                }
            }
        }
        out.into_iter()
            .map(|v| v.ok_or_else(|| EmbedError::Inference("cache lost a vector it had just stored".into())))
            .collect()
    }
}
