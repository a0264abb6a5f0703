//! Long-lived connections: WebSockets (`/ws`) and event streams (`Accept: text/event-stream` on a
//! REST question, `"stream": true` on a chat completion), counted while they are open.
//!
//! Each one holds a file descriptor for as long as it lasts, and a process has few of them (often
//! 1,024): a thousand idle WebSockets from one key once left `/health` and every other key
//! timing out. So there are two caps, taken before a connection is accepted and given back when
//! it ends: `max_connections` for all callers together (503 `server_busy`) and
//! `max_connections_per_key` for one API key (429 `too_many_connections`). Without API keys
//! everyone is the one anonymous caller, possibly many people behind an authenticating proxy, so
//! only the total applies.
//!
//! At start, [`fit_to_descriptors`] raises the soft limit on open files to the hard one, and
//! lowers the total cap, with a warning, when the caps and [`FD_RESERVE`] do not fit in it.

use crate::error::ServerError;
use chatty_kg_dialogue::Owner;
use futures_util::{Stream, StreamExt};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

/// File descriptors kept for everything but WebSockets and event streams: the stores (RocksDB
/// opens its table files, sled its log), the models, the listening sockets and plain HTTP
/// requests (`/health` among them).
pub const FD_RESERVE: u64 = 256;

/// How many long-lived connections may be open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionCaps {
    /// All callers together.
    pub total: usize,
    /// One API key.
    pub per_key: usize,
}

#[derive(Default)]
struct Open {
    total: usize,
    by_key: HashMap<Owner, usize>,
}

/// The connections open now, by key.
pub struct Connections {
    caps: ConnectionCaps,
    open: Mutex<Open>,
}

/// One open connection, counted until it is dropped.
pub struct ConnectionSlot {
    connections: Arc<Connections>,
    owner: Option<Owner>,
}

impl Connections {
    pub fn new(caps: ConnectionCaps) -> Arc<Self> {
        Arc::new(Self {
            caps,
            open: Mutex::new(Open::default()),
        })
    }

    pub fn caps(&self) -> ConnectionCaps {
        self.caps
    }

    /// Counts a new connection of the key `owner` (`None` without API keys), or refuses it: the
    /// key's own cap first (its holder should hear that it is their doing), then the total.
    pub fn open(self: &Arc<Self>, owner: Option<&Owner>) -> Result<ConnectionSlot, ServerError> {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(owner) = owner {
            let held = open.by_key.get(owner).copied().unwrap_or(0);
            if held >= self.caps.per_key {
                return Err(ServerError::TooManyConnections {
                    limit: self.caps.per_key,
                });
            }
        }
        if open.total >= self.caps.total {
            return Err(ServerError::ServerBusy { limit: self.caps.total });
        }
        open.total += 1;
        if let Some(owner) = owner {
            *open.by_key.entry(owner.clone()).or_insert(0) += 1;
        }
        Ok(ConnectionSlot {
            connections: self.clone(),
            owner: owner.cloned(),
        })
    }

    /// Connections open now (all callers).
    pub fn open_now(&self) -> usize {
        self.open.lock().unwrap_or_else(PoisonError::into_inner).total
    }

    fn close(&self, owner: Option<&Owner>) {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        open.total = open.total.saturating_sub(1);
        if let Some(owner) = owner
            && let Some(held) = open.by_key.get_mut(owner)
        {
            *held -= 1;
            // Keys with nothing open are forgotten: the map holds only keys with connections.
            if *held == 0 {
                open.by_key.remove(owner);
            }
        }
    }
}

impl Drop for ConnectionSlot {
    fn drop(&mut self) {
        self.connections.close(self.owner.as_ref());
    }
}

/// `stream`, with `slot` (a [`ConnectionSlot`], or an `Option` of one) held until the stream is
/// dropped: when it has been sent, or when the client left.
pub fn holding<S: Stream, T>(stream: S, slot: T) -> impl Stream<Item = S::Item> {
    stream.map(move |item| {
        let _held: &T = &slot;
        item
    })
}

/// The total cap that fits `soft` open files with [`FD_RESERVE`] kept for the rest: `wanted`,
/// or less (at least one) when it does not fit.
pub fn fitting_total(wanted: usize, soft: u64) -> usize {
    let room = usize::try_from(soft.saturating_sub(FD_RESERVE)).unwrap_or(usize::MAX);
    wanted.min(room).max(1)
}

/// The caps as configured, made to fit the process's file descriptors: the soft limit on open
/// files is raised to the hard one first; if the total cap and the reserve still do not fit, the
/// total is lowered (and the per-key cap with it, if above) and a warning says so.
pub fn fit_to_descriptors(wanted: ConnectionCaps) -> ConnectionCaps {
    use rlimit::{Resource, getrlimit, setrlimit};
    let (soft, hard) = match getrlimit(Resource::NOFILE) {
        Ok(limits) => limits,
        Err(error) => {
            tracing::warn!(%error, "cannot read the limit on open files; the connection caps are taken as configured");
            return wanted;
        }
    };
    let soft = if soft < hard {
        match setrlimit(Resource::NOFILE, hard, hard) {
            Ok(()) => {
                tracing::info!(
                    from = soft,
                    to = hard,
                    "soft limit on open files raised to the hard limit"
                );
                hard
            }
            Err(error) => {
                tracing::warn!(%error, soft, hard, "cannot raise the soft limit on open files");
                soft
            }
        }
    } else {
        soft
    };
    let total = fitting_total(wanted.total, soft);
    if total < wanted.total {
        tracing::warn!(
            "the process may open {soft} files (hard limit {hard}): server.max_connections lowered from {} \
             to {total}, keeping {FD_RESERVE} for the stores, the models and plain HTTP requests; raise the \
             limit (ulimit -n, LimitNOFILE=) to allow {} connections",
            wanted.total,
            wanted.total,
        );
    }
    ConnectionCaps {
        total,
        per_key: wanted.per_key.min(total),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caller(key: &str) -> Option<Owner> {
        Some(Owner::of_api_key(key))
    }

    #[test]
    fn each_key_has_its_cap_and_all_share_the_total() {
        let connections = Connections::new(ConnectionCaps { total: 5, per_key: 2 });
        let (alice, bob, carol) = (caller("alice"), caller("bob"), caller("carol"));
        let a1 = connections.open(alice.as_ref()).unwrap();
        let _a2 = connections.open(alice.as_ref()).unwrap();
        let refused = connections.open(alice.as_ref()).err().unwrap();
        assert_eq!(refused.kind(), "too_many_connections");
        assert!(refused.to_string().contains("max_connections_per_key"), "{refused}");
        let _b1 = connections.open(bob.as_ref()).unwrap();
        let _b2 = connections.open(bob.as_ref()).unwrap();
        // Without keys, only the total counts.
        let _anonymous = connections.open(None).unwrap();
        assert_eq!(connections.open_now(), 5);
        let full = connections.open(carol.as_ref()).err().unwrap();
        assert_eq!(full.kind(), "server_busy");
        // A connection that ends gives its place back, to its key and to the total.
        drop(a1);
        assert_eq!(connections.open_now(), 4);
        let _a3 = connections.open(alice.as_ref()).unwrap();
        assert_eq!(
            connections.open(alice.as_ref()).err().unwrap().kind(),
            "too_many_connections"
        );
        assert_eq!(connections.open(carol.as_ref()).err().unwrap().kind(), "server_busy");
    }

    #[test]
    fn a_stream_holds_its_slot_until_dropped() {
        let connections = Connections::new(ConnectionCaps { total: 1, per_key: 1 });
        let slot = connections.open(caller("alice").as_ref()).unwrap();
        let stream = holding(futures_util::stream::iter([1, 2]), slot);
        assert_eq!(connections.open_now(), 1);
        drop(stream);
        assert_eq!(connections.open_now(), 0);
    }

    #[test]
    fn the_total_cap_leaves_the_reserve_free() {
        assert_eq!(fitting_total(512, 1_048_576), 512);
        assert_eq!(fitting_total(512, 1024), 512);
        assert_eq!(fitting_total(1000, 1024), 1024 - FD_RESERVE as usize);
        assert_eq!(fitting_total(512, 300), 300 - FD_RESERVE as usize);
        // Never none at all.
        assert_eq!(fitting_total(512, 100), 1);
    }
}
