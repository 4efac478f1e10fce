//! Slurm's `Key=Value Key=Value` line syntax, shared by slurm.conf and gres.conf.

use crate::{ConfigError, Location, Source};

/// One `Key=Value` pair with the location of its key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pair {
    /// Key as written.
    pub key: String,
    /// Value, with surrounding double quotes removed.
    pub value: String,
    /// Where the key starts.
    pub at: Location,
    /// Where the value starts.
    pub value_at: Location,
}

/// One non-empty line, split into pairs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// 1-based line number.
    pub number: usize,
    /// The line without its comment.
    pub text: String,
    /// The pairs in order.
    pub pairs: Vec<Pair>,
}

impl Line {
    /// The first value of `key` (case-insensitive).
    pub fn get(&self, key: &str) -> Option<&Pair> {
        self.pairs.iter().find(|p| p.key.eq_ignore_ascii_case(key))
    }
}

/// Splits a file into lines of pairs: `#` starts a comment, `\` at the end continues a line, values may
/// be double-quoted to hold spaces.
pub fn parse_lines(source: Source<'_>) -> Result<Vec<Line>, ConfigError> {
    let mut lines = Vec::new();
    let mut pending: Option<(usize, String)> = None;
    for (index, raw) in source.text.lines().enumerate() {
        let number = index + 1;
        let without_comment = strip_comment(raw);
        let (start, mut text) = match pending.take() {
            Some((start, mut text)) => {
                text.push(' ');
                text.push_str(without_comment);
                (start, text)
            }
            None => (number, without_comment.to_owned()),
        };
        if text.trim_end().ends_with('\\') {
            let trimmed_len = text.trim_end().len() - 1;
            text.truncate(trimmed_len);
            pending = Some((start, text));
            continue;
        }
        if text.trim().is_empty() {
            continue;
        }
        let pairs = split_pairs(source.name, start, &text)?;
        lines.push(Line {
            number: start,
            text: text.trim().to_owned(),
            pairs,
        });
    }
    if let Some((start, text)) = pending
        && !text.trim().is_empty()
    {
        let pairs = split_pairs(source.name, start, &text)?;
        lines.push(Line {
            number: start,
            text: text.trim().to_owned(),
            pairs,
        });
    }
    Ok(lines)
}

fn strip_comment(line: &str) -> &str {
    let mut in_quotes = false;
    for (i, c) in line.char_indices() {
        match c {
            '"' => in_quotes = !in_quotes,
            '#' if !in_quotes => return &line[..i],
            _ => {}
        }
    }
    line
}

fn split_pairs(file: &str, number: usize, text: &str) -> Result<Vec<Pair>, ConfigError> {
    if let Some(pair) = include_line(file, number, text) {
        return Ok(vec![pair]);
    }
    let chars: Vec<char> = text.chars().collect();
    let mut pairs = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i].is_whitespace() {
            i += 1;
            continue;
        }
        let key_col = i + 1;
        let key_start = i;
        while i < chars.len() && chars[i] != '=' && !chars[i].is_whitespace() {
            i += 1;
        }
        let key: String = chars[key_start..i].iter().collect();
        if i >= chars.len() || chars[i] != '=' {
            return Err(ConfigError::invalid(
                Location::new(file, number, key_col),
                format!("`{key}` without a value"),
                "Key=Value",
            ));
        }
        i += 1;
        let value_col = i + 1;
        let mut value = String::new();
        let mut in_quotes = false;
        while i < chars.len() && (in_quotes || !chars[i].is_whitespace()) {
            if chars[i] == '"' {
                in_quotes = !in_quotes;
            } else {
                value.push(chars[i]);
            }
            i += 1;
        }
        if in_quotes {
            return Err(ConfigError::invalid(
                Location::new(file, number, value_col),
                "an unclosed `\"`",
                "a closing `\"` on the same line",
            ));
        }
        pairs.push(Pair {
            key,
            value,
            at: Location::new(file, number, key_col),
            value_at: Location::new(file, number, value_col),
        });
    }
    Ok(pairs)
}

/// Slurm's `Include <file>` line (the word, whitespace, a file name), read as the pair
/// `Include=<file>`.
fn include_line(file: &str, number: usize, text: &str) -> Option<Pair> {
    let start = text.len() - text.trim_start().len();
    let rest = &text[start..];
    let word = rest.get(..7)?;
    let after = &rest[7..];
    if !word.eq_ignore_ascii_case("include") || !after.starts_with(char::is_whitespace) {
        return None;
    }
    let value = after.trim();
    let value_col = text[..text.len() - after.trim_start().len()]
        .chars()
        .count()
        + 1;
    Some(Pair {
        key: word.to_owned(),
        value: value.trim_matches('"').to_owned(),
        at: Location::new(file, number, text[..start].chars().count() + 1),
        value_at: Location::new(file, number, value_col),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_pairs_comments_quotes_and_continuations() {
        let text = "# c\nNodeName=n[1-2] Gres=gpu:2 # tail\nA=\"x y\" \\\n  B=2\n\n";
        let lines = parse_lines(Source::new("f", text)).unwrap();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].number, 2);
        assert_eq!(lines[0].pairs[1].key, "Gres");
        assert_eq!(lines[0].pairs[1].at.column, 17);
        assert_eq!(lines[1].get("a").unwrap().value, "x y");
        assert_eq!(lines[1].get("B").unwrap().value, "2");
    }

    #[test]
    fn include_lines_read_as_a_pair() {
        let lines = parse_lines(Source::new("f", "  include  /etc/slurm/nodes.conf\n")).unwrap();
        assert_eq!(lines[0].pairs[0].key, "include");
        assert_eq!(lines[0].pairs[0].value, "/etc/slurm/nodes.conf");
        assert_eq!(lines[0].pairs[0].value_at, Location::new("f", 1, 12));
    }

    #[test]
    fn a_key_without_value_is_located() {
        let err = parse_lines(Source::new("f", "A=1 oops\n")).unwrap_err();
        assert_eq!(err.location().unwrap(), &Location::new("f", 1, 5));
    }
}
