//! Why a hostlist expression was rejected, with the 1-based column of the offending character.

/// A rejected hostlist expression; `column` counts characters from 1 at the start of the expression.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostlistError {
    /// A `[` was never closed.
    #[error(
        "column {column}: found `[` that is never closed, expected `]` before the end of the expression"
    )]
    UnclosedBracket {
        /// Column of the unclosed `[`.
        column: usize,
    },
    /// A `]` appeared with no open `[`.
    #[error("column {column}: found `]` with no open `[`, expected a host name character")]
    UnopenedBracket {
        /// Column of the stray `]`.
        column: usize,
    },
    /// A `[` appeared inside brackets.
    #[error("column {column}: found `[` inside brackets, expected a number, `-`, `,` or `]`")]
    NestedBracket {
        /// Column of the inner `[`.
        column: usize,
    },
    /// An empty item such as `[]`, `[,1]` or `[1,]`.
    #[error("column {column}: found an empty range, expected a number or `lo-hi`")]
    EmptyRange {
        /// Column where the range should have started.
        column: usize,
    },
    /// Something other than digits where a bound was expected (`[a-c]`, `[-1]`, `[1-10:2]`).
    #[error("column {column}: found `{found}`, expected {expected}")]
    Unexpected {
        /// Column of the offending character.
        column: usize,
        /// The offending character, or `end of range`.
        found: String,
        /// What the grammar allows here.
        expected: &'static str,
    },
    /// A bound too large to represent.
    #[error("column {column}: found number `{found}`, expected at most 18 digits")]
    NumberTooLarge {
        /// Column of the number.
        column: usize,
        /// The digits as written.
        found: String,
    },
    /// The low bound is above the high bound (`[5-1]`).
    #[error("column {column}: found descending range `{lo}-{hi}`, expected the low bound first")]
    Descending {
        /// Column of the range.
        column: usize,
        /// Low bound as written.
        lo: String,
        /// High bound as written.
        hi: String,
    },
    /// One range holds more hosts than `MAX_RANGE`.
    #[error("column {column}: found a range of {count} hosts, expected at most {max}")]
    TooManyHosts {
        /// Column of the range.
        column: usize,
        /// Hosts the range would hold.
        count: u64,
        /// The limit.
        max: u64,
    },
    /// Too many ranges inside one pair of brackets, or too many prefix expansions.
    #[error("column {column}: found {count} {what}, expected at most {max}")]
    TooMany {
        /// Column of the bracket.
        column: usize,
        /// How many were found.
        count: u64,
        /// What was counted.
        what: &'static str,
        /// The limit.
        max: u64,
    },
    /// The whole expression names more hosts than the caller accepts.
    #[error(
        "column {column}: the expression names {count} hosts by here, expected at most {max} in all"
    )]
    TooManyNames {
        /// Column of the token that crossed the cap.
        column: usize,
        /// Hosts named up to and including that token (saturating).
        count: u64,
        /// The cap.
        max: u64,
    },
}

impl HostlistError {
    /// The 1-based column (in characters) where the problem was found.
    pub fn column(&self) -> usize {
        match self {
            Self::UnclosedBracket { column }
            | Self::UnopenedBracket { column }
            | Self::NestedBracket { column }
            | Self::EmptyRange { column }
            | Self::Unexpected { column, .. }
            | Self::NumberTooLarge { column, .. }
            | Self::Descending { column, .. }
            | Self::TooManyHosts { column, .. }
            | Self::TooMany { column, .. }
            | Self::TooManyNames { column, .. } => *column,
        }
    }
}
