//! User-controlled text made safe to log: a path, name or reason a user chose is shown with its
//! control characters escaped, so a newline in `-o` cannot forge a line of the daemon's log (nor
//! of `scontrol show job`'s reason).

use std::fmt;

/// `text` as it is logged: control characters (and the Unicode line and paragraph separators)
/// escaped as Rust writes them (`\n`, `\u{1b}`), backslashes doubled so an escape is never
/// ambiguous; anything else as it is.
pub fn escaped(text: &str) -> Escaped<'_> {
    Escaped(text)
}

/// Text shown with its control characters escaped (see [`escaped`]).
#[derive(Clone, Copy, Debug)]
pub struct Escaped<'a>(&'a str);

impl fmt::Display for Escaped<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use fmt::Write;
        let mut rest = self.0;
        while let Some(at) = rest.find(needs_escape) {
            f.write_str(&rest[..at])?;
            let c = rest[at..]
                .chars()
                .next()
                .expect("a character was found here");
            for e in c.escape_default() {
                f.write_char(e)?;
            }
            rest = &rest[at + c.len_utf8()..];
        }
        f.write_str(rest)
    }
}

fn needs_escape(c: char) -> bool {
    c.is_control() || c == '\\' || c == '\u{2028}' || c == '\u{2029}'
}

#[cfg(test)]
mod tests {
    use super::escaped;

    #[test]
    fn control_characters_cannot_start_a_line() {
        let forged = "/tmp/x\n[2026-01-01T00:00:00] error: forged\r\u{1b}[2J";
        let shown = escaped(forged).to_string();
        assert_eq!(
            shown,
            r"/tmp/x\n[2026-01-01T00:00:00] error: forged\r\u{1b}[2J"
        );
        assert!(!shown.contains(['\n', '\r', '\u{1b}']));
    }

    #[test]
    fn ordinary_text_is_shown_as_it_is_and_backslashes_are_doubled() {
        assert_eq!(
            escaped("/home/ann/out-%j.txt é").to_string(),
            "/home/ann/out-%j.txt é"
        );
        assert_eq!(escaped(r"a\nb").to_string(), r"a\\nb");
        assert_eq!(escaped("a\u{2028}b").to_string(), r"a\u{2028}b");
    }
}
