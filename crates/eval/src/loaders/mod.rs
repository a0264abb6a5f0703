//! One loader per benchmark format; each turns a file into [`Item`](crate::Item)s.

pub mod chatty_gen;
pub mod lcquad;
pub mod metaqa;
pub mod pathquestion;
pub mod qald;

use crate::dataset::{DatasetError, Format, Item};
use std::path::Path;

/// Loads `path` in `format` (QALD questions in `language`).
pub fn load(format: Format, path: &Path, language: &str) -> Result<Vec<Item>, DatasetError> {
    match format {
        Format::Qald => qald::load(path, language),
        Format::Lcquad => lcquad::load(path),
        Format::Metaqa => metaqa::load(path),
        Format::Pathquestion => pathquestion::load(path),
        Format::ChattyGen => chatty_gen::load(path),
    }
}
