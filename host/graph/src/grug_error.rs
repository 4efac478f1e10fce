//! Errors from reading a GRUG recipe, each naming the file and, where known, line and column.

use std::path::PathBuf;

/// Why a GRUG recipe could not be read or generated.
#[derive(Debug, thiserror::Error)]
pub enum GrugError {
    /// The file could not be read.
    #[error("{file}: cannot read: {source}")]
    Io {
        /// The recipe file.
        file: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The text is not well-formed XML.
    #[error("{file}:{line}:{column}: malformed xml: {message}")]
    Xml {
        /// The recipe file.
        file: PathBuf,
        /// 1-based line.
        line: u32,
        /// 1-based column.
        column: u32,
        /// What the XML parser expected.
        message: String,
    },
    /// A `<key>` declares an attribute GRUG does not define.
    #[error(
        "{file}:{line}:{column}: unknown attribute `{name}` for `{kind}`, expected one of {expected}"
    )]
    UnknownAttribute {
        /// The recipe file.
        file: PathBuf,
        /// 1-based line.
        line: u32,
        /// 1-based column.
        column: u32,
        /// The declared attribute name.
        name: String,
        /// `node` or `edge`.
        kind: String,
        /// The attribute names allowed there.
        expected: String,
    },
    /// An element or value is not what GRUG expects.
    #[error("{file}:{line}:{column}: {message}")]
    Invalid {
        /// The recipe file.
        file: PathBuf,
        /// 1-based line.
        line: u32,
        /// 1-based column.
        column: u32,
        /// What was expected and what was found.
        message: String,
    },
    /// The recipe's edges form a cycle, so generation would not end.
    #[error("{file}:{line}:{column}: edge `{edge}` closes a cycle in the recipe")]
    Cycle {
        /// The recipe file.
        file: PathBuf,
        /// 1-based line of the closing edge.
        line: u32,
        /// 1-based column of the closing edge.
        column: u32,
        /// The closing edge's id.
        edge: String,
    },
    /// No recipe vertex has `root` set to 1.
    #[error(
        "{file}: no recipe vertex is a root (expected a <node> with <data key=\"root\">1</data>)"
    )]
    MissingRoot {
        /// The recipe file.
        file: PathBuf,
    },
    /// Generation would exceed the vertex or edge limit.
    #[error("{file}: the recipe generates more than {limit} {what}")]
    TooLarge {
        /// The recipe file.
        file: PathBuf,
        /// `vertices` or `edges`.
        what: &'static str,
        /// The limit that was reached.
        limit: usize,
    },
}
