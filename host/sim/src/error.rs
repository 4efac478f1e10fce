//! Errors of the workload readers: every one names the file and, where there is one, the line and field.

/// A workload could not be read; the message says where and what was expected.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The file could not be opened or read.
    #[error("{file}: cannot read: {source}")]
    Io {
        /// The file being read.
        file: String,
        /// The underlying failure.
        #[source]
        source: std::io::Error,
    },
    /// A data line does not have the 18 whitespace-separated SWF fields.
    #[error("{file}:{line}: expected 18 SWF fields, found {found}")]
    FieldCount {
        /// The file being read.
        file: String,
        /// 1-based line number.
        line: u64,
        /// How many fields the line has.
        found: usize,
    },
    /// A field holds something other than what its format requires.
    #[error("{file}:{line}: field {field}: expected {expected}, found `{found}`")]
    Field {
        /// The file being read.
        file: String,
        /// 1-based line number.
        line: u64,
        /// The field, e.g. `5 (allocated processors)` for SWF or `tasks` for JSON lines.
        field: String,
        /// What the field must hold.
        expected: &'static str,
        /// The offending text.
        found: String,
    },
    /// A JSON-lines record is not valid JSON or has a wrongly typed or unknown key.
    #[error("{file}:{line}: {message}")]
    Json {
        /// The file being read.
        file: String,
        /// 1-based line number.
        line: u64,
        /// serde_json's description, with its column.
        message: String,
    },
    /// Submit times go backwards; replay needs the trace sorted by submit time.
    #[error(
        "{file}:{line}: field {field}: expected a submit time at or after {previous} (the trace must be sorted by submit time), found {found}"
    )]
    Unsorted {
        /// The file being read.
        file: String,
        /// 1-based line number.
        line: u64,
        /// The submit-time field's name.
        field: &'static str,
        /// The largest submit time seen on an earlier line.
        previous: i64,
        /// This line's submit time.
        found: i64,
    },
}
