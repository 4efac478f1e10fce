//! Why a configuration could not be loaded: always a file, a line and a column, what was found and
//! what was expected.

use std::fmt;

/// A position in a configuration file; line and column count from 1.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// File name as given to the reader (or a label such as `<demo>`).
    pub file: String,
    /// Line, from 1.
    pub line: usize,
    /// Column in characters, from 1.
    pub column: usize,
}

impl Location {
    /// A location from explicit coordinates.
    pub fn new(file: &str, line: usize, column: usize) -> Self {
        Self {
            file: file.to_owned(),
            line,
            column,
        }
    }

    /// The location of byte `offset` in `text` (clamped to the text, snapped to a character boundary).
    pub fn from_offset(file: &str, text: &str, offset: usize) -> Self {
        let mut offset = offset.min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let before = &text[..offset];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let column = before[line_start..].chars().count() + 1;
        Self::new(file, line, column)
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}

/// A configuration that could not be loaded; a running host keeps its previous configuration.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("{file}:1:1: found a file that cannot be read ({error}), expected a readable file")]
    Io {
        /// The path.
        file: String,
        /// The underlying error, kept out of the source chain so it is reported once.
        error: std::io::Error,
    },
    /// The file's syntax or schema is wrong (bad TOML/YAML, unknown key, wrong type).
    #[error("{at}: {message}")]
    Syntax {
        /// Where.
        at: Location,
        /// The parser's explanation, lowercased.
        message: String,
    },
    /// A value is well-formed but not acceptable.
    #[error("{at}: found {found}, expected {expected}")]
    Invalid {
        /// Where.
        at: Location,
        /// What was found.
        found: String,
        /// What is acceptable.
        expected: String,
    },
    /// A hostlist expression was rejected; the column points into the expression.
    #[error("{at}: in hostlist `{expr}`: {source}")]
    Hostlist {
        /// Where the expression starts.
        at: Location,
        /// The expression.
        expr: String,
        /// Why it was rejected.
        source: sluice_hostlist::HostlistError,
    },
}

impl ConfigError {
    /// Shorthand for [`ConfigError::Invalid`].
    pub fn invalid(at: Location, found: impl Into<String>, expected: impl Into<String>) -> Self {
        Self::Invalid {
            at,
            found: found.into(),
            expected: expected.into(),
        }
    }

    /// The same error reported at `at` instead (an importer pointing back at the line a
    /// generated value came from).
    pub fn relocated(self, to: Location) -> Self {
        match self {
            Self::Syntax { message, .. } => Self::Syntax { at: to, message },
            Self::Invalid {
                found, expected, ..
            } => Self::Invalid {
                at: to,
                found,
                expected,
            },
            Self::Hostlist { expr, source, .. } => Self::Hostlist {
                at: to,
                expr,
                source,
            },
            io @ Self::Io { .. } => io,
        }
    }

    /// Where the problem is, when known.
    pub fn location(&self) -> Option<&Location> {
        match self {
            Self::Io { .. } => None,
            Self::Syntax { at, .. } | Self::Invalid { at, .. } | Self::Hostlist { at, .. } => {
                Some(at)
            }
        }
    }
}

/// Lowercases the first letter and drops a trailing period, so parser messages match our style.
pub(crate) fn tidy_message(message: &str) -> String {
    let trimmed = message.trim().trim_end_matches('.');
    let mut chars = trimmed.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_become_lines_and_columns() {
        let text = "ab\ncdé\nf";
        assert_eq!(
            Location::from_offset("f", text, 0),
            Location::new("f", 1, 1)
        );
        assert_eq!(
            Location::from_offset("f", text, 4),
            Location::new("f", 2, 2)
        );
        assert_eq!(
            Location::from_offset("f", text, 8),
            Location::new("f", 3, 1)
        );
        assert_eq!(Location::from_offset("f", text, 999).line, 3);
        assert_eq!(tidy_message("Unknown field `x`."), "unknown field `x`");
    }
}
