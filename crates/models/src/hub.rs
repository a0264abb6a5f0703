//! Fetching a model from its own hub repository (`chatty-kg models fetch --source hub`): each file
//! from `{endpoint}/{repo}/resolve/{revision}/{path}` (the Hugging Face hub's download route;
//! `HF_ENDPOINT` names a mirror, `HF_TOKEN` is sent to it and never shown), with progress, into
//! `<file>.partial`, which a later fetch resumes with a `Range` request. The file is renamed into
//! place only once its sha256 matches the catalog's pin, whatever revision served it.

use crate::catalog::{ModelFile, ModelSpec};
use crate::{ModelError, ModelStore, hash_into, hex, put_in_place};
use sha2::{Digest, Sha256};
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::Path;
use std::time::Duration;

/// The public hub.
pub const DEFAULT_ENDPOINT: &str = "https://huggingface.co";

/// Where and what to fetch from.
#[derive(Clone)]
pub struct HubOptions {
    /// The hub's base URL (`https://huggingface.co`, a mirror, a local copy).
    pub endpoint: String,
    /// A branch, tag or commit of the repositories.
    pub revision: String,
    /// A bearer token for the hub (gated or private repositories).
    pub token: Option<String>,
}

impl std::fmt::Debug for HubOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HubOptions")
            .field("endpoint", &self.endpoint)
            .field("revision", &self.revision)
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

impl HubOptions {
    /// `HF_ENDPOINT` (else the public hub), the `main` revision, `HF_TOKEN` when set.
    pub fn from_env() -> Self {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        Self {
            endpoint: var("HF_ENDPOINT").unwrap_or_else(|| DEFAULT_ENDPOINT.to_owned()),
            revision: "main".to_owned(),
            token: var("HF_TOKEN"),
        }
    }

    fn url(&self, spec: &ModelSpec, file: &ModelFile) -> String {
        format!(
            "{}/{}/resolve/{}/{}",
            self.endpoint.trim_end_matches('/'),
            spec.hub_repo,
            self.revision,
            file.hub_path
        )
    }
}

/// How far a file's download is.
#[derive(Debug, Clone, Copy)]
pub struct Progress<'a> {
    pub file: &'a str,
    pub done: u64,
    pub total: u64,
    /// Bytes that were already there from an interrupted fetch.
    pub resumed_from: u64,
}

/// Bytes read between two progress reports.
const REPORT_EVERY: u64 = 8 << 20;

pub(crate) fn fetch(
    store: &ModelStore,
    spec: &ModelSpec,
    hub: &HubOptions,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<(), ModelError> {
    let model_dir = store.model_dir(spec);
    std::fs::create_dir_all(&model_dir).map_err(|e| ModelError::io(&model_dir, e))?;
    let client = reqwest::blocking::Client::builder()
        .connect_timeout(Duration::from_secs(30))
        // Per read and write, not for the whole body.
        .timeout(Duration::from_secs(120))
        .build()
        .map_err(|e| ModelError::Hub {
            url: hub.endpoint.clone(),
            message: e.to_string(),
        })?;
    for file in spec.files {
        let target = model_dir.join(file.name);
        if std::fs::metadata(&target).is_ok_and(|m| m.len() == file.size) {
            continue;
        }
        let partial = model_dir.join(format!("{}.partial", file.name));
        let digest = download(&client, hub, spec, file, &partial, progress)?;
        put_in_place(file, &digest, &partial, &target)?;
    }
    Ok(())
}

/// Downloads one file into `partial` (continuing what is there when the hub serves ranges) and
/// returns the sha256 of the whole file.
fn download(
    client: &reqwest::blocking::Client,
    hub: &HubOptions,
    spec: &ModelSpec,
    file: &ModelFile,
    partial: &Path,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<String, ModelError> {
    let url = hub.url(spec, file);
    let failed = |message: String| ModelError::Hub {
        url: url.clone(),
        message,
    };
    // What an interrupted fetch left, unless it is already too long to be right.
    let mut have = std::fs::metadata(partial).map(|m| m.len()).unwrap_or(0);
    if have > file.size {
        have = 0;
    }
    let mut request = client.get(&url);
    if let Some(token) = &hub.token {
        request = request.bearer_auth(token);
    }
    if have > 0 {
        request = request.header(reqwest::header::RANGE, format!("bytes={have}-"));
    }
    let mut response = request.send().map_err(|e| failed(e.without_url().to_string()))?;
    let status = response.status();
    let resumed = match status {
        reqwest::StatusCode::PARTIAL_CONTENT if have > 0 => true,
        s if s.is_success() => false,
        // Everything was there already (a fetch interrupted before the rename).
        reqwest::StatusCode::RANGE_NOT_SATISFIABLE if have == file.size => true,
        s => return Err(failed(format!("the hub answered {s}"))),
    };
    let mut hasher = Sha256::new();
    let mut out = if resumed {
        // The bytes already there count in the hash.
        let mut existing = File::open(partial).map_err(|e| ModelError::io(partial, e))?;
        hash_into(&mut existing, &mut hasher, partial)?;
        OpenOptions::new()
            .append(true)
            .open(partial)
            .map_err(|e| ModelError::io(partial, e))?
    } else {
        have = 0;
        File::create(partial).map_err(|e| ModelError::io(partial, e))?
    };
    let resumed_from = have;
    let mut done = have;
    let mut reported = done;
    progress(Progress {
        file: file.name,
        done,
        total: file.size,
        resumed_from,
    });
    if status != reqwest::StatusCode::RANGE_NOT_SATISFIABLE {
        let mut buf = vec![0u8; 1 << 20];
        loop {
            let n = match response.read(&mut buf) {
                Ok(n) => n,
                Err(e) => {
                    // What arrived is kept for the next fetch to resume from.
                    let _ = out.sync_all();
                    return Err(failed(format!(
                        "the download stopped after {done} of {} bytes ({e}); fetch again to resume",
                        file.size
                    )));
                }
            };
            if n == 0 {
                break;
            }
            done += n as u64;
            if done > file.size {
                return Err(failed(format!("more than the {} bytes expected", file.size)));
            }
            out.write_all(&buf[..n]).map_err(|e| ModelError::io(partial, e))?;
            hasher.update(&buf[..n]);
            if done - reported >= REPORT_EVERY {
                reported = done;
                progress(Progress {
                    file: file.name,
                    done,
                    total: file.size,
                    resumed_from,
                });
            }
        }
    }
    out.sync_all().map_err(|e| ModelError::io(partial, e))?;
    progress(Progress {
        file: file.name,
        done,
        total: file.size,
        resumed_from,
    });
    if done != file.size {
        return Err(failed(format!(
            "the download ended after {done} of {} bytes; fetch again to resume",
            file.size
        )));
    }
    Ok(hex(&hasher.finalize()))
}
