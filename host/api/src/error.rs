//! The body of every answer that is not `200`.

use serde::{Deserialize, Serialize};

/// `{"error": "…"}`: a lowercase message naming the request and what was expected.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBody {
    /// What went wrong and what to do.
    pub error: String,
}
