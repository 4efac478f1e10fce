//! The policy contract as plain Rust: data tables, answers and one trait per plugin kind
