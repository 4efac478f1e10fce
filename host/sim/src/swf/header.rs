//! SWF header comments (`; Keyword: value`), parsed leniently because real traces bend every rule.

/// The header of an SWF file: every `Keyword: value` entry in file order, plus typed accessors.
///
/// Keywords may repeat (`Information`, `Note`, `Queue`), values may be free text
/// (`338 (batch partition; 512 total)`), and an indented comment line without a keyword continues
/// the previous entry; its text is appended to that entry's value after a newline.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SwfHeader {
    entries: Vec<(String, String)>,
    /// Whether the last line seen may be continued by an indented keyword-less line.
    open_entry: bool,
}

impl SwfHeader {
    /// Feeds one comment line, with or without its leading `;`.
    pub fn push_line(&mut self, line: &str) {
        let text = line.strip_prefix(';').unwrap_or(line);
        let trimmed = text.trim();
        if trimmed.is_empty() {
            self.open_entry = false;
            return;
        }
        // Continuations are indented further than the usual single space after `;`; testing that
        // first keeps `http://…` continuation lines from being taken for a keyword `http`.
        let indented = text.starts_with("  ") || text.starts_with('\t');
        if indented && self.open_entry {
            if let Some((_, value)) = self.entries.last_mut() {
                if !value.is_empty() {
                    value.push('\n');
                }
                value.push_str(trimmed);
            }
            return;
        }
        match split_keyword(trimmed) {
            Some((keyword, value)) => {
                self.entries.push((keyword.to_string(), value.to_string()));
                self.open_entry = true;
            }
            None => self.open_entry = false,
        }
    }

    /// Every entry in file order, as (keyword, value).
    pub fn entries(&self) -> impl Iterator<Item = (&str, &str)> {
        self.entries.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// The value of the first entry with this keyword (case-insensitive).
    pub fn get(&self, keyword: &str) -> Option<&str> {
        self.get_all(keyword).next()
    }

    /// The values of every entry with this keyword (case-insensitive), in file order.
    pub fn get_all<'a, 'k>(
        &'a self,
        keyword: &'k str,
    ) -> impl Iterator<Item = &'a str> + use<'a, 'k> {
        self.entries
            .iter()
            .filter(move |(k, _)| k.eq_ignore_ascii_case(keyword))
            .map(|(_, v)| v.as_str())
    }

    /// The leading integer of the first entry with this keyword, ignoring trailing free text.
    pub fn number(&self, keyword: &str) -> Option<i64> {
        self.get(keyword).and_then(leading_integer)
    }

    /// `MaxProcs`, the processor count; larger than `MaxNodes` on SMP machines.
    pub fn max_procs(&self) -> Option<u64> {
        self.positive("MaxProcs")
    }

    /// `MaxNodes`, the node count.
    pub fn max_nodes(&self) -> Option<u64> {
        self.positive("MaxNodes")
    }

    /// The machine size for a flat replay: `MaxProcs`, else `MaxNodes` (older traces have only that).
    pub fn machine_procs(&self) -> Option<u64> {
        self.max_procs().or_else(|| self.max_nodes())
    }

    /// `UnixStartTime`: the epoch second that submit time 0 stands for.
    pub fn unix_start_time(&self) -> Option<i64> {
        self.number("UnixStartTime")
    }

    /// `MaxRecords`, else `MaxJobs`: how many data lines to expect (for progress, not for checking).
    pub fn expected_records(&self) -> Option<u64> {
        self.positive("MaxRecords")
            .or_else(|| self.positive("MaxJobs"))
    }

    fn positive(&self, keyword: &str) -> Option<u64> {
        self.number(keyword)
            .and_then(|n| u64::try_from(n).ok())
            .filter(|&n| n > 0)
    }
}

/// Splits `Keyword: value` when the keyword is a single word and the colon is followed by a space
/// or the end of the line (so `http://x` is not a keyword).
fn split_keyword(text: &str) -> Option<(&str, &str)> {
    let colon = text.find(':')?;
    let keyword = &text[..colon];
    let rest = &text[colon + 1..];
    let is_word = !keyword.is_empty()
        && keyword.starts_with(|c: char| c.is_ascii_alphabetic())
        && keyword
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_');
    let separated = rest.is_empty() || rest.starts_with(char::is_whitespace);
    (is_word && separated).then(|| (keyword, rest.trim()))
}

fn leading_integer(value: &str) -> Option<i64> {
    let value = value.trim_start();
    let end = value
        .char_indices()
        .find(|&(i, c)| !(c.is_ascii_digit() || (i == 0 && (c == '-' || c == '+'))))
        .map_or(value.len(), |(i, _)| i);
    value[..end].parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(text: &str) -> SwfHeader {
        let mut header = SwfHeader::default();
        text.lines().for_each(|line| header.push_line(line));
        header
    }

    #[test]
    fn free_text_values_keep_their_leading_number() {
        let h = header("; MaxNodes: 338 (batch partition; 512 total)\n; MaxProcs: 1152\n");
        assert_eq!(h.max_nodes(), Some(338));
        assert_eq!(h.max_procs(), Some(1152));
        assert_eq!(h.get("maxnodes"), Some("338 (batch partition; 512 total)"));
    }

    #[test]
    fn continuation_lines_extend_the_previous_entry() {
        let h = header(
            "; Information: http://www.pdc.kth.se/\n;              http://www.cs.huji.ac.il/\n; Version: 2.2\n",
        );
        assert_eq!(
            h.get("Information"),
            Some("http://www.pdc.kth.se/\nhttp://www.cs.huji.ac.il/")
        );
        assert_eq!(h.get("Version"), Some("2.2"));
        assert_eq!(h.entries().count(), 2);
    }

    #[test]
    fn an_empty_comment_ends_the_continuation() {
        let h = header("; Note: first\n;\n;       stray indented text\n");
        assert_eq!(h.get("Note"), Some("first"));
    }

    #[test]
    fn repeated_keywords_are_all_kept_and_the_first_wins() {
        let h = header("; Information: a\n; Information: b\n; MaxProcs: 64\n; MaxProcs: 128\n");
        assert_eq!(h.get_all("Information").collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(h.max_procs(), Some(64));
    }

    #[test]
    fn machine_size_falls_back_to_max_nodes_and_ignores_non_numbers() {
        let h = header("; MaxNodes: 256\n; MaxProcs: unknown\n; UnixStartTime: 843480031\n");
        assert_eq!(h.max_procs(), None);
        assert_eq!(h.machine_procs(), Some(256));
        assert_eq!(h.unix_start_time(), Some(843_480_031));
    }

    #[test]
    fn queue_lines_with_empty_names_are_entries() {
        let h = header("; Queue:  1 \n; Queue: 2 batch\n");
        assert_eq!(h.get_all("Queue").collect::<Vec<_>>(), ["1", "2 batch"]);
    }
}
