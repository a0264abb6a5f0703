//! Who may use an embedded store directory at the same time: any number of readers (`serve`,
//! `ask`, `chat`, `sparql`, `entities`, `eval`) or one writer (`load`, `index`), never both, as
//! RocksDB opened read-only while another process writes it is undefined behaviour in Oxigraph.
//!
//! The file `<store>/lock` carries an advisory lock (`flock(2)` on Unix, `LockFileEx` on Windows,
//! through `std::fs::File`): readers hold it shared for as long as the store is open, writers hold
//! it exclusive for the whole load or index rebuild. Both only *try*: a command that would have
//! to wait fails at once and says why. The lock belongs to the open file, so the kernel releases
//! it when the process ends however it ends (SIGKILL, a crash, a power cut): a lock is never stale.
//! Being per open file, it also separates two opens of one store inside a single process.
//!
//! Also here: [`sync_dir`] and [`write_atomically`], which the replacements of a store's files
//! (manifest, profile, counts, label index) need to be durable.

use crate::GraphError;
use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};

/// The lock file's name inside a store directory.
pub(crate) const LOCK_FILE: &str = "lock";

/// A held lock on a store directory; released when dropped.
#[derive(Debug)]
pub(crate) struct StoreLock {
    /// `None` for a reader of a store on a read-only file system without a lock file: nothing can
    /// write that store either.
    _file: Option<File>,
}

impl StoreLock {
    /// A reader's lock: fails with [`GraphError::StoreBeingWritten`] while a writer holds the store.
    pub(crate) fn shared(dir: &Path) -> Result<Self, GraphError> {
        let file = match open_lock_file(dir) {
            Err(GraphError::Io { source, .. }) if source.kind() == std::io::ErrorKind::ReadOnlyFilesystem => {
                return Ok(Self { _file: None });
            }
            other => other?,
        };
        let attempt = file.try_lock_shared();
        Self::held(dir, file, attempt, |path| GraphError::StoreBeingWritten { path })
    }

    /// A writer's lock: fails with [`GraphError::StoreInUse`] while anyone else has the store open.
    pub(crate) fn exclusive(dir: &Path) -> Result<Self, GraphError> {
        let file = open_lock_file(dir)?;
        let attempt = file.try_lock();
        Self::held(dir, file, attempt, |path| GraphError::StoreInUse { path })
    }

    /// The lock when `attempt` took it; `busy` when somebody else holds it.
    fn held(
        dir: &Path,
        file: File,
        attempt: Result<(), TryLockError>,
        busy: impl FnOnce(std::path::PathBuf) -> GraphError,
    ) -> Result<Self, GraphError> {
        match attempt {
            Ok(()) => Ok(Self { _file: Some(file) }),
            Err(TryLockError::WouldBlock) => Err(busy(dir.to_path_buf())),
            Err(TryLockError::Error(source)) => Err(GraphError::Io {
                path: dir.join(LOCK_FILE),
                source,
            }),
        }
    }
}

/// Opens (creating if needed) the lock file; read-only when the store directory is not writable,
/// as readers may serve a store from a read-only mount (a lock needs no write access).
fn open_lock_file(dir: &Path) -> Result<File, GraphError> {
    let path = dir.join(LOCK_FILE);
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .or_else(|error| match error.kind() {
            std::io::ErrorKind::NotFound => Err(error),
            _ => File::open(&path).map_err(|_| error),
        })
        .map_err(|source| GraphError::Io { path, source })
}

/// Makes the entries of `dir` (files created, renamed or removed in it) durable. A rename is
/// atomic but only durable once its directory is synced. A no-op where directories cannot be
/// opened as files (Windows).
pub(crate) fn sync_dir(dir: &Path) -> std::io::Result<()> {
    if cfg!(unix) {
        File::open(dir)?.sync_all()?;
    }
    Ok(())
}

/// `bytes` into `path` through `<path>.tmp` in the same directory: written, synced, renamed over
/// the old file, the directory synced. A crash leaves the old or the new file whole.
pub(crate) fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), GraphError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut staging = path.as_os_str().to_owned();
    staging.push(".tmp");
    let staging = PathBuf::from(staging);
    let write_staging = || -> std::io::Result<()> {
        let mut file = std::fs::File::create(&staging)?;
        std::io::Write::write_all(&mut file, bytes)?;
        file.sync_all()
    };
    write_staging()
        .and_then(|()| std::fs::rename(&staging, path))
        .and_then(|()| sync_dir(dir))
        .map_err(|source| GraphError::Io {
            path: path.to_path_buf(),
            source,
        })
}
