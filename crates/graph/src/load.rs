//! RDF files for bulk loading: format detection from the file name (`.nt`, `.ttl`, `.rdf`/`.owl`/
//! `.xml`, `.nq`, `.trig`, each optionally `.gz`, `.bz2` or `.zst`) and a reader that
//! decompresses on the fly, so a compressed dump is never unpacked on disk.

use crate::GraphError;
use oxigraph::io::RdfFormat;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::PathBuf;

/// How a file to load is compressed (from its name's last extension).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    None,
    Gzip,
    Bzip2,
    Zstd,
}

/// A file to load, with the format and compression its name announces.
#[derive(Debug, Clone)]
pub struct RdfFile {
    pub path: PathBuf,
    pub format: RdfFormat,
    pub compression: Compression,
}

impl RdfFile {
    pub fn new(path: impl Into<PathBuf>) -> Result<Self, GraphError> {
        let path = path.into();
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().to_lowercase())
            .unwrap_or_default();
        let (stem, compression) = [
            (".gz", Compression::Gzip),
            (".bz2", Compression::Bzip2),
            (".zst", Compression::Zstd),
        ]
        .iter()
        .find_map(|(suffix, c)| Some((name.strip_suffix(suffix)?.to_owned(), *c)))
        .unwrap_or((name, Compression::None));
        let extension = if stem.contains('.') {
            stem.rsplit('.').next().unwrap_or_default()
        } else {
            ""
        };
        let format = match extension {
            "nt" => Some(RdfFormat::NTriples),
            "ttl" => Some(RdfFormat::Turtle),
            "rdf" | "owl" | "xml" => Some(RdfFormat::RdfXml),
            "nq" => Some(RdfFormat::NQuads),
            "trig" => Some(RdfFormat::TriG),
            _ => None,
        };
        let format = format.ok_or_else(|| GraphError::UnsupportedFormat { path: path.clone() })?;
        Ok(Self {
            path,
            format,
            compression,
        })
    }

    /// The file's size on disk (compressed): what a load's progress is measured in.
    pub fn size(&self) -> u64 {
        std::fs::metadata(&self.path).map_or(0, |m| m.len())
    }

    /// Opens the file, decompressing it as it is read.
    pub fn open(&self) -> Result<Box<dyn Read + Send>, GraphError> {
        self.open_counting(|_| {})
    }

    /// Opens the file like [`RdfFile::open`], calling `progress` with the number of bytes read
    /// from the disk (before decompression) as they are read.
    pub fn open_counting(
        &self,
        progress: impl FnMut(u64) + Send + 'static,
    ) -> Result<Box<dyn Read + Send>, GraphError> {
        let io_error = |source| GraphError::Io {
            path: self.path.clone(),
            source,
        };
        let file = File::open(&self.path).map_err(io_error)?;
        let reader = BufReader::with_capacity(1 << 20, Counted { inner: file, progress });
        Ok(match self.compression {
            Compression::None => Box::new(reader),
            Compression::Gzip => Box::new(BufReader::with_capacity(
                1 << 20,
                flate2::read::MultiGzDecoder::new(reader),
            )),
            Compression::Bzip2 => Box::new(BufReader::with_capacity(
                1 << 20,
                bzip2::read::MultiBzDecoder::new(reader),
            )),
            Compression::Zstd => Box::new(BufReader::with_capacity(
                1 << 20,
                ZstdFrames::new(reader).map_err(io_error)?,
            )),
        })
    }

    /// The base IRI for relative IRIs in the file: its `file://` URL.
    pub fn base_iri(&self) -> String {
        let absolute = std::path::absolute(&self.path).unwrap_or_else(|_| self.path.clone());
        url::Url::from_file_path(&absolute)
            .map(String::from)
            .unwrap_or_else(|()| format!("file:///{}", absolute.display()))
    }
}

/// Zstandard decompression of every frame of a file, one after the other (`pzstd` and
/// concatenated `.zst` files have several; a decoder of one frame would end the load early).
struct ZstdFrames<R: std::io::BufRead> {
    decoder: Option<ruzstd::decoding::StreamingDecoder<R, ruzstd::decoding::FrameDecoder>>,
}

impl<R: std::io::BufRead> ZstdFrames<R> {
    fn new(reader: R) -> std::io::Result<Self> {
        Ok(Self {
            decoder: Some(Self::frame(reader)?),
        })
    }

    fn frame(reader: R) -> std::io::Result<ruzstd::decoding::StreamingDecoder<R, ruzstd::decoding::FrameDecoder>> {
        ruzstd::decoding::StreamingDecoder::new(reader)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
    }
}

impl<R: std::io::BufRead> Read for ZstdFrames<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        loop {
            let Some(decoder) = self.decoder.as_mut() else {
                return Ok(0);
            };
            let n = decoder.read(buf)?;
            if n > 0 || buf.is_empty() {
                return Ok(n);
            }
            // This frame is done: another follows unless the file is.
            let Some(decoder) = self.decoder.take() else {
                return Ok(0);
            };
            let mut rest = decoder.into_inner();
            if rest.fill_buf()?.is_empty() {
                return Ok(0);
            }
            self.decoder = Some(Self::frame(rest)?);
        }
    }
}

/// A reader that reports how many bytes went through it.
struct Counted<R, F> {
    inner: R,
    progress: F,
}

impl<R: Read, F: FnMut(u64)> Read for Counted<R, F> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        (self.progress)(n as u64);
        Ok(n)
    }
}

/// What one load did, kept in the store's manifest.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LoadReport {
    /// Files in this load, with the number of triples/quads parsed from each.
    pub files: Vec<(PathBuf, u64)>,
    /// Quads parsed in this load (duplicates of what the store had included).
    pub parsed: u64,
    /// Quads in the store after the load.
    pub store_size: u64,
    /// Labels in the rebuilt label index.
    pub labels: u64,
    /// Wall-clock seconds of the whole load, of its RDF part (parse, write, commit), of
    /// rebuilding the label index and of compacting the store.
    pub seconds: f64,
    pub rdf_seconds: f64,
    pub index_seconds: f64,
    /// Merging the files the bulk loader wrote (only after loads of more than four million quads).
    #[serde(default)]
    pub compact_seconds: f64,
    /// The loading process's peak resident memory so far, in MiB (Linux; absent elsewhere).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_rss_mib: Option<u64>,
}

/// This process's peak resident set size in MiB, from `/proc/self/status` (`None` where there
/// is no such file).
pub(crate) fn peak_rss_mib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_from_names() {
        for (name, format, compression) in [
            ("a.nt", RdfFormat::NTriples, Compression::None),
            ("a.nt.gz", RdfFormat::NTriples, Compression::Gzip),
            ("dir.v1/A.TTL", RdfFormat::Turtle, Compression::None),
            ("a.rdf", RdfFormat::RdfXml, Compression::None),
            ("a.owl.gz", RdfFormat::RdfXml, Compression::Gzip),
            ("a.nq", RdfFormat::NQuads, Compression::None),
            ("a.trig.gz", RdfFormat::TriG, Compression::Gzip),
            ("latest-truthy.nt.bz2", RdfFormat::NTriples, Compression::Bzip2),
            ("a.ttl.zst", RdfFormat::Turtle, Compression::Zstd),
        ] {
            let f = RdfFile::new(name).unwrap();
            assert_eq!((f.format, f.compression), (format, compression), "{name}");
        }
        for bad in ["a.txt", "nt", "a.gz", "a.csv.gz", "a.bz2", "a.nt.xz"] {
            assert!(
                matches!(RdfFile::new(bad), Err(GraphError::UnsupportedFormat { .. })),
                "{bad}"
            );
        }
    }
}
