//! RDF files for bulk loading: format detection from the file name (`.nt`, `.ttl`, `.rdf`/`.owl`/
//! `.xml`, `.nq`, `.trig`, each optionally `.gz`) and a reader that decompresses on the fly.

use crate::GraphError;
use oxigraph::io::RdfFormat;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::PathBuf;

/// A file to load, with the format its name announces.
#[derive(Debug, Clone)]
pub struct RdfFile {
    pub path: PathBuf,
    pub format: RdfFormat,
    pub gzipped: bool,
}

impl RdfFile {
    pub fn new(path: impl Into<PathBuf>) -> Result<Self, GraphError> {
        let path = path.into();
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().to_lowercase())
            .unwrap_or_default();
        let (stem, gzipped) = match name.strip_suffix(".gz") {
            Some(stem) => (stem.to_owned(), true),
            None => (name, false),
        };
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
        Ok(Self { path, format, gzipped })
    }

    /// Opens the file, decompressing `.gz` transparently.
    pub fn open(&self) -> Result<Box<dyn Read + Send>, GraphError> {
        let file = File::open(&self.path).map_err(|source| GraphError::Io {
            path: self.path.clone(),
            source,
        })?;
        let reader = BufReader::with_capacity(1 << 20, file);
        Ok(if self.gzipped {
            Box::new(BufReader::with_capacity(
                1 << 20,
                flate2::read::MultiGzDecoder::new(reader),
            ))
        } else {
            Box::new(reader)
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
    /// Wall-clock seconds of the whole load, of its RDF part (parse, write, commit) and of
    /// rebuilding the label index.
    pub seconds: f64,
    pub rdf_seconds: f64,
    pub index_seconds: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_from_names() {
        for (name, format, gz) in [
            ("a.nt", RdfFormat::NTriples, false),
            ("a.nt.gz", RdfFormat::NTriples, true),
            ("dir.v1/A.TTL", RdfFormat::Turtle, false),
            ("a.rdf", RdfFormat::RdfXml, false),
            ("a.owl.gz", RdfFormat::RdfXml, true),
            ("a.nq", RdfFormat::NQuads, false),
            ("a.trig.gz", RdfFormat::TriG, true),
        ] {
            let f = RdfFile::new(name).unwrap();
            assert_eq!((f.format, f.gzipped), (format, gz), "{name}");
        }
        for bad in ["a.txt", "nt", "a.gz", "a.csv.gz"] {
            assert!(
                matches!(RdfFile::new(bad), Err(GraphError::UnsupportedFormat { .. })),
                "{bad}"
            );
        }
    }
}
