//! Ways an answer can break the contract; the host refuses such answers and falls back.

/// An answer that breaks the contract of its function.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ContractError {
    /// A list had the wrong length.
    #[error("{what} has {found} entries, expected {expected}")]
    Length {
        /// Which list.
        what: &'static str,
        /// The length the contract requires.
        expected: usize,
        /// The length found.
        found: usize,
    },
    /// A node index that is not a candidate, or not a node at all.
    #[error("node index {0} is not a candidate")]
    NotCandidate(u32),
    /// More of something than was free.
    #[error("{what} on node {node}: {asked} asked, {free} free")]
    Overcommit {
        /// What was over-committed.
        what: &'static str,
        /// Node index.
        node: u32,
        /// Amount in the answer.
        asked: u64,
        /// Amount free.
        free: u64,
    },
    /// Any other broken rule, described.
    #[error("{0}")]
    Invalid(String),
}

impl ContractError {
    /// `Ok` when list `what` has the `expected` length, else the [`ContractError::Length`] naming it.
    pub fn check_length(
        what: &'static str,
        expected: usize,
        found: usize,
    ) -> Result<(), ContractError> {
        if found == expected {
            Ok(())
        } else {
            Err(ContractError::Length {
                what,
                expected,
                found,
            })
        }
    }
}
