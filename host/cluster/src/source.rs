//! A configuration text together with the name used for it in error messages.

use crate::Location;

/// A file's name and contents; readers take this so they stay pure functions of their input.
#[derive(Debug, Clone, Copy)]
pub struct Source<'a> {
    /// Name shown in errors (a path or a label such as `<demo>/cluster.toml`).
    pub name: &'a str,
    /// The whole text.
    pub text: &'a str,
}

impl<'a> Source<'a> {
    /// Pairs a name with a text.
    pub fn new(name: &'a str, text: &'a str) -> Self {
        Self { name, text }
    }

    /// The location of a byte offset.
    pub fn at(&self, offset: usize) -> Location {
        Location::from_offset(self.name, self.text, offset)
    }

    /// The location of the first occurrence of `needle` at or after byte `from`, else of `from`.
    pub fn find(&self, needle: &str, from: usize) -> Location {
        let from = from.min(self.text.len());
        let offset = self
            .text
            .get(from..)
            .and_then(|rest| rest.find(needle))
            .map_or(from, |i| from + i);
        self.at(offset)
    }

    /// The location of the line assigning `key` (`key =` at the start of a line) within the TOML
    /// table that contains byte `from`, else of `from`; comments and keys sharing a prefix are skipped.
    pub fn find_key(&self, key: &str, from: usize) -> Location {
        let from = from.min(self.text.len());
        let mut offset = 0;
        let mut table_lines: Vec<(usize, &str)> = Vec::new();
        for line in self.text.split_inclusive('\n') {
            if line.trim_start().starts_with('[') {
                if offset > from {
                    break;
                }
                table_lines.clear();
            }
            table_lines.push((offset, line));
            offset += line.len();
        }
        for (start, line) in table_lines {
            let indent = line.len() - line.trim_start().len();
            if let Some(rest) = line.trim_start().strip_prefix(key)
                && rest.trim_start().starts_with('=')
            {
                return self.at(start + indent);
            }
        }
        self.at(from)
    }
}
