//! Where the label index of the embedded store gets its entries: from the quads as a load parses
//! them ([`LabelFeed`], for a load into an empty store), or from a scan of the store
//! ([`index_store_labels`], for `index` and for a load into a store that already had data).
//!
//! The feed builds the index on its own thread while the bulk loader parses and writes, so a
//! first load never reads its labels back. Vertices without a label are named from their IRIs
//! (with `iri_names`); which those are is known only at the end of the load, so the feed keeps a
//! hash of every vertex and of every labelled one, and scans the store once more only when some
//! vertex was left without a label (a graph with no labels at all, or some unlabelled objects).

use crate::GraphError;
use crate::label_index::{LabelEntry, LabelIndex};
use crate::query::named_node;
use oxigraph::model::{NamedNode, NamedOrBlankNode, Quad, Term};
use oxigraph::store::Store;
use std::cell::RefCell;
use std::hash::{BuildHasher, Hash};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;

const RDF_TYPE: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type";
/// Entries sent to the indexing thread at once, and batches in flight.
const BATCH: usize = 4096;
const IN_FLIGHT: usize = 16;
/// Vertices whose hashes a load keeps (about 16 bytes each, 256 MiB at most); past it, the
/// vertices without a label are found by a scan of the store after the load.
const MAX_VERTEX_HASHES: usize = 16 << 20;

/// Sets of hashes, hashed again by the same fast hash (every quad of a load goes through them).
type HashSet<T> = std::collections::HashSet<T, foldhash::fast::FixedState>;

/// A 64-bit hash standing for a vertex (or a vertex and a label) in the sets below: 8 bytes each
/// instead of the IRI. Fixed-seeded, so the same in every run.
fn hash_of(value: impl Hash) -> u64 {
    foldhash::fast::FixedState::with_seed(0x6368_6174_7479).hash_one(value)
}

/// Vertices already named, by hash.
type Named = RefCell<HashSet<u64>>;

enum Message {
    Entries(Vec<LabelEntry>),
    /// Every entry was sent: the index may be committed.
    Done,
}

/// Builds the label index at `<dir>/labels` from the labels of the quads passed to
/// [`LabelFeed::observe`], on a thread of its own.
pub(crate) struct LabelFeed {
    predicates: Vec<NamedNode>,
    rdf_type: NamedNode,
    iri_names: bool,
    batch: Vec<LabelEntry>,
    sender: Option<SyncSender<Message>>,
    builder: Option<JoinHandle<Result<u64, GraphError>>>,
    /// (IRI, label) pairs sent, so that a label stated twice is indexed once.
    sent: HashSet<u64>,
    /// Vertices with a label; with `iri_names`, every vertex seen.
    labelled: HashSet<u64>,
    vertices: HashSet<u64>,
    /// More than [`MAX_VERTEX_HASHES`] vertices: `vertices` was given up.
    too_many_vertices: bool,
    /// The index, committed early by [`LabelFeed::finish_unless_scanning`].
    finished: Option<Result<u64, GraphError>>,
}

impl LabelFeed {
    pub(crate) fn start(dir: &Path, predicates: &[String], iri_names: bool) -> Result<Self, GraphError> {
        let predicates = predicates
            .iter()
            .map(|p| named_node(p))
            .collect::<Result<Vec<_>, _>>()?;
        let (sender, receiver) = sync_channel(IN_FLIGHT);
        let path = dir.join("labels");
        let builder = std::thread::Builder::new()
            .name("label-index".into())
            .spawn(move || LabelIndex::build(&path, received(receiver, &path)))
            .map_err(|e| GraphError::index(&dir.join("labels"), e))?;
        Ok(Self {
            predicates,
            rdf_type: named_node(RDF_TYPE)?,
            iri_names,
            batch: Vec::with_capacity(BATCH),
            sender: Some(sender),
            builder: Some(builder),
            sent: HashSet::default(),
            labelled: HashSet::default(),
            vertices: HashSet::default(),
            too_many_vertices: false,
            finished: None,
        })
    }

    /// Takes note of one parsed quad: a label goes to the index, a vertex into the set of those
    /// that need a name.
    pub(crate) fn observe(&mut self, quad: &Quad) {
        let is_label = self.predicates.contains(&quad.predicate);
        if is_label && let (NamedOrBlankNode::NamedNode(subject), Term::Literal(label)) = (&quad.subject, &quad.object)
        {
            let (iri, label) = (subject.as_str(), label.value());
            self.labelled.insert(hash_of(iri));
            if self.sent.insert(hash_of((iri, label))) {
                self.batch.push(LabelEntry {
                    iri: iri.to_owned(),
                    label: label.to_owned(),
                });
                if self.batch.len() >= BATCH {
                    self.flush();
                }
            }
        }
        if self.iri_names && !self.too_many_vertices {
            if self.vertices.len() >= MAX_VERTEX_HASHES {
                // Memory stays bounded: the unlabelled are found by the scan at the end instead.
                self.too_many_vertices = true;
                self.vertices = HashSet::default();
                return;
            }
            if let NamedOrBlankNode::NamedNode(subject) = &quad.subject {
                self.vertices.insert(hash_of(subject.as_str()));
            }
            if let Term::NamedNode(object) = &quad.object
                && !is_label
                && quad.predicate != self.rdf_type
            {
                self.vertices.insert(hash_of(object.as_str()));
            }
        }
    }

    fn flush(&mut self) {
        if self.batch.is_empty() {
            return;
        }
        let batch = std::mem::replace(&mut self.batch, Vec::with_capacity(BATCH));
        // A closed channel means the builder failed; `finish` reports its error.
        if let Some(sender) = &self.sender
            && sender.send(Message::Entries(batch)).is_err()
        {
            self.sender = None;
        }
    }

    /// Once every quad was observed, before the load's commit: when every vertex has a label (no
    /// store scan for [`LabelFeed::finish`] to make), commits the index now, beside the store's
    /// commit; `finish` then returns its result.
    pub(crate) fn finish_unless_scanning(&mut self) {
        if self.finished.is_some() || self.unnamed() {
            return;
        }
        self.flush();
        self.vertices = HashSet::default();
        self.labelled = HashSet::default();
        self.sent = HashSet::default();
        self.finished = Some(self.commit());
    }

    /// Tells the builder every entry was sent, and waits for it to commit the index.
    fn commit(&mut self) -> Result<u64, GraphError> {
        if let Some(sender) = self.sender.take() {
            let _ = sender.send(Message::Done);
        }
        self.join()
    }

    /// Whether some vertex seen has no label (or there were too many to tell).
    fn unnamed(&self) -> bool {
        self.too_many_vertices || self.vertices.iter().any(|v| !self.labelled.contains(v))
    }

    /// After the load's commit: names the vertices left without a label (scanning `store` only
    /// if there are any), commits the index and returns the number of labels in it.
    pub(crate) fn finish(mut self, store: &Store, dir: &Path) -> Result<u64, GraphError> {
        if let Some(finished) = self.finished.take() {
            return finished;
        }
        self.flush();
        let unnamed = self.unnamed();
        let labelled = std::mem::take(&mut self.labelled);
        self.vertices = HashSet::default();
        self.sent = HashSet::default();
        if unnamed {
            let named = RefCell::new(labelled);
            let predicates = self.predicates.clone();
            for entry in unlabelled_vertices(store, dir, &predicates, &named) {
                match entry {
                    Ok(entry) => {
                        self.batch.push(entry);
                        if self.batch.len() >= BATCH {
                            self.flush();
                        }
                    }
                    Err(error) => return Err(error), // `Drop` stops the builder
                }
            }
            self.flush();
        }
        self.commit()
    }

    fn join(&mut self) -> Result<u64, GraphError> {
        let path = PathBuf::from("labels");
        match self.builder.take().map(JoinHandle::join) {
            Some(Ok(result)) => result,
            Some(Err(_)) => Err(GraphError::index(&path, "the label index thread panicked")),
            None => Err(GraphError::index(&path, "the label index was already finished")),
        }
    }
}

impl Drop for LabelFeed {
    /// A load that failed (or a `finish` that did) closes the channel without `Done`: the builder
    /// stops with an error, before its index replaces any other.
    fn drop(&mut self) {
        self.sender = None;
        if self.builder.is_some() {
            let _ = self.join();
        }
    }
}

/// The entries of the channel, ending in an error unless `Done` came.
fn received(receiver: Receiver<Message>, path: &Path) -> impl Iterator<Item = Result<LabelEntry, GraphError>> {
    let path = path.to_path_buf();
    let mut done = false;
    let mut failed = false;
    std::iter::from_fn(move || {
        if done || failed {
            return None;
        }
        match receiver.recv() {
            Ok(Message::Entries(batch)) => Some(batch.into_iter().map(Ok).collect::<Vec<_>>()),
            Ok(Message::Done) => {
                done = true;
                None
            }
            Err(_) => {
                failed = true;
                Some(vec![Err(GraphError::index(
                    &path,
                    "the load stopped before its labels were all read",
                ))])
            }
        }
    })
    .flatten()
}

/// Builds the label index at `<dir>/labels` from a scan of `store`: every (IRI, literal label) of
/// the label `predicates` (each text once per IRI), then (with `iri_names`) every vertex without a label under a name made
/// from its IRI ([`crate::text::iri_name`]). Returns the number of labels indexed.
pub(crate) fn index_store_labels(
    store: &Store,
    dir: &Path,
    predicates: &[String],
    iri_names: bool,
) -> Result<u64, GraphError> {
    let predicates = predicates
        .iter()
        .map(|p| named_node(p))
        .collect::<Result<Vec<_>, _>>()?;
    let named = Named::default();
    // (IRI, label text) pairs indexed: "Alpha" and "Alpha"@en are one entry, as in the feed.
    let mut indexed = HashSet::default();
    let labelled = predicates.iter().flat_map(|predicate| {
        store
            .quads_for_pattern(None, Some(predicate.as_ref()), None, None)
            .filter_map(|quad| match quad {
                Ok(Quad {
                    subject: NamedOrBlankNode::NamedNode(subject),
                    object: Term::Literal(label),
                    ..
                }) => {
                    named.borrow_mut().insert(hash_of(subject.as_str()));
                    Some(Ok(LabelEntry {
                        iri: subject.into_string(),
                        label: label.value().to_owned(),
                    }))
                }
                Ok(_) => None, // blank-node subjects and non-literal labels cannot be linked
                Err(e) => Some(Err(GraphError::storage(dir, e))),
            })
    });
    let labelled = labelled.filter(move |entry| match entry {
        Ok(entry) => indexed.insert(hash_of((entry.iri.as_str(), entry.label.as_str()))),
        Err(_) => true,
    });
    let unlabelled = std::iter::once(())
        .filter(|()| iri_names)
        .flat_map(|()| unlabelled_vertices(store, dir, &predicates, &named));
    LabelIndex::build(&dir.join("labels"), labelled.chain(unlabelled))
}

/// The vertices of `store` not in `named` (a subject, or an IRI object of a predicate other than
/// a label or `rdf:type`), each once, under the name of their IRI.
fn unlabelled_vertices<'a>(
    store: &'a Store,
    dir: &'a Path,
    predicates: &'a [NamedNode],
    named: &'a Named,
) -> impl Iterator<Item = Result<LabelEntry, GraphError>> + 'a {
    let rdf_type = NamedNode::new_unchecked(RDF_TYPE);
    store.quads_for_pattern(None, None, None, None).flat_map(move |quad| {
        let quad = match quad {
            Ok(quad) => quad,
            Err(e) => return vec![Err(GraphError::storage(dir, e))],
        };
        let mut vertices: Vec<String> = Vec::with_capacity(2);
        if let NamedOrBlankNode::NamedNode(subject) = &quad.subject {
            vertices.push(subject.as_str().to_owned());
        }
        let label_or_type = quad.predicate == rdf_type || predicates.contains(&quad.predicate);
        if let Term::NamedNode(object) = &quad.object
            && !label_or_type
        {
            vertices.push(object.as_str().to_owned());
        }
        vertices
            .into_iter()
            // Each vertex once: named ones (labelled, or named here already) are skipped.
            .filter(|iri| named.borrow_mut().insert(hash_of(iri.as_str())))
            .filter_map(|iri| {
                let label = crate::text::iri_name(&iri)?;
                Some(Ok(LabelEntry { iri, label }))
            })
            .collect()
    })
}
