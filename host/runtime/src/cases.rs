//! A policy's declared cases file (`sluice plugin test --cases FILE`): TOML `[[case]]` tables,
//! each a name, the settings under test, a baseline and what must hold between them.
//!
//! ```toml
//! [[case]]
//! name = "the project's jobs rise before its deadline"
//! expect = "raises"          # or "differs", "same"
//! association = "acct1"      # for "raises": an account or user of the fixture tree
//! now = 1700000000           # optional: the fixture's clock
//! settings = { project = "acct1", deadline = 1700000060 }
//! baseline = { project = "acct1", deadline = 1699990000 }
//! ```

use std::path::{Path, PathBuf};

use serde::Deserialize;
use sluice_policy::conformance::declared::{Declared, Expect};

use crate::settings::flatten;

/// A cases file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum CasesError {
    /// It could not be read.
    #[error("{path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// It is not what a cases file holds.
    #[error("{path}:{line}: {message}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The line at fault (1-based).
        line: usize,
        /// What was expected.
        message: String,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    case: Vec<Case>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    name: String,
    expect: toml::Spanned<String>,
    association: Option<String>,
    now: Option<i64>,
    #[serde(default)]
    settings: toml::Table,
    #[serde(default)]
    baseline: toml::Table,
}

/// Reads the declared cases in `path`.
pub fn read(path: &Path) -> Result<Vec<Declared>, CasesError> {
    let text = std::fs::read_to_string(path).map_err(|source| CasesError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    parse(&text).map_err(|(offset, message)| CasesError::Invalid {
        path: path.to_path_buf(),
        line: text[..offset.min(text.len())].lines().count().max(1),
        message,
    })
}

/// Parses a cases file's text; an error is (byte offset, what was expected).
fn parse(text: &str) -> Result<Vec<Declared>, (usize, String)> {
    let file: File = toml::from_str(text).map_err(|e| {
        let at = e.span().map_or(0, |s| s.start);
        (at, e.message().to_string())
    })?;
    if file.case.is_empty() {
        return Err((0, "expected at least one [[case]] table".into()));
    }
    file.case
        .into_iter()
        .map(|c| {
            let at = c.expect.span().start;
            let expect = match (c.expect.get_ref().as_str(), c.association) {
                ("differs", None) => Expect::Differs,
                ("same", None) => Expect::Same,
                ("raises", Some(association)) => Expect::Raises { association },
                ("raises", None) => {
                    return Err((at, "`raises` needs `association = \"NAME\"`".into()));
                }
                ("differs" | "same", Some(_)) => {
                    return Err((
                        at,
                        "`association` goes only with `expect = \"raises\"`".into(),
                    ));
                }
                (other, _) => {
                    return Err((
                        at,
                        format!("unknown expectation `{other}` (expected differs, same or raises)"),
                    ));
                }
            };
            Ok(Declared {
                name: c.name,
                settings: flatten(&c.settings),
                baseline: flatten(&c.baseline),
                expect,
                now: c.now,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cases_read_with_their_settings_flattened() {
        let cases = parse(
            "[[case]]\nname = \"a\"\nexpect = \"raises\"\nassociation = \"acct1\"\n\
             settings = { project = \"acct1\", weight = { age = 2 } }\n\
             [[case]]\nname = \"b\"\nexpect = \"differs\"\nnow = 5\n",
        )
        .unwrap();
        assert_eq!(cases.len(), 2);
        assert_eq!(
            cases[0].expect,
            Expect::Raises {
                association: "acct1".into()
            }
        );
        assert_eq!(cases[0].settings.i64_or("weight.age", 0), 2);
        assert!(cases[0].baseline.0.is_empty());
        assert_eq!(
            (cases[1].expect.clone(), cases[1].now),
            (Expect::Differs, Some(5))
        );
    }

    #[test]
    fn mistakes_name_their_line_and_what_was_expected() {
        let text = "[[case]]\nname = \"a\"\n\nexpect = \"bigger\"\n";
        let (at, message) = parse(text).unwrap_err();
        assert_eq!(text[..at].lines().count(), 4);
        assert!(message.contains("differs, same or raises"), "{message}");
        let (_, message) = parse("[[case]]\nname = \"a\"\nexpect = \"raises\"\n").unwrap_err();
        assert!(message.contains("association"), "{message}");
        let (at, message) =
            parse("[[case]]\nname = \"a\"\nexpect = \"same\"\ncolour = 1\n").unwrap_err();
        assert!(message.contains("colour"), "{message}");
        assert!(at > 0);
        assert!(parse("").unwrap_err().1.contains("[[case]]"));
    }
}
