//! select/linear: whole nodes only
