//! Which store to use: the `accounting` setting of daemon.toml read.

use std::path::{Path, PathBuf};

use crate::AcctError;

/// The accounting store's location.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// An SQLite file (the default: `accounting.db` in the state directory).
    Sqlite(PathBuf),
    /// A PostgreSQL connection string (`postgres://user@host/db` or `host=/run/pg dbname=…`).
    Postgres(String),
}

/// The SQLite file's name in the state directory.
pub const DEFAULT_FILE: &str = "accounting.db";

impl Target {
    /// Reads the `accounting` setting: absent or `sqlite` is `DIR/accounting.db`; `sqlite:PATH`
    /// an SQLite file elsewhere (absolute); `postgres://…`, `postgresql://…` or `postgres:` and
    /// key=value words a PostgreSQL server.
    pub fn parse(setting: Option<&str>, state_dir: &Path) -> Result<Self, AcctError> {
        let Some(text) = setting.map(str::trim) else {
            return Ok(Self::Sqlite(state_dir.join(DEFAULT_FILE)));
        };
        let bad = |expected: &str| AcctError::BadTarget {
            given: text.to_string(),
            expected: expected.to_string(),
        };
        if text == "sqlite" {
            return Ok(Self::Sqlite(state_dir.join(DEFAULT_FILE)));
        }
        if let Some(path) = text.strip_prefix("sqlite:") {
            let path = PathBuf::from(path);
            return if path.is_absolute() {
                Ok(Self::Sqlite(path))
            } else {
                Err(bad("sqlite:PATH takes an absolute path"))
            };
        }
        if text.starts_with("postgres://") || text.starts_with("postgresql://") {
            return Ok(Self::Postgres(text.to_string()));
        }
        if let Some(words) = text.strip_prefix("postgres:") {
            return Ok(Self::Postgres(words.trim().to_string()));
        }
        Err(bad(
            "\"sqlite\", \"sqlite:/absolute/path\", \"postgres://user@host/db\" or \"postgres: host=… dbname=…\"",
        ))
    }

    /// The store as the log and errors name it, without any password.
    pub fn describe(&self) -> String {
        match self {
            Self::Sqlite(p) => p.display().to_string(),
            Self::Postgres(url) => redact(url),
        }
    }
}

/// `url` with the password of a `user:password@` part or a `password=` word replaced by `***`.
pub fn redact(url: &str) -> String {
    if let Some((scheme, rest)) = url.split_once("://") {
        if let Some((auth, host)) = rest.split_once('@')
            && let Some((user, _)) = auth.split_once(':')
        {
            return format!("{scheme}://{user}:***@{host}");
        }
        return url.to_string();
    }
    url.split_whitespace()
        .map(|w| {
            if w.starts_with("password=") {
                "password=***"
            } else {
                w
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_name_the_stores_they_mean() {
        let dir = Path::new("/var/lib/sluice");
        assert_eq!(
            Target::parse(None, dir).unwrap(),
            Target::Sqlite(dir.join("accounting.db"))
        );
        assert_eq!(
            Target::parse(Some("sqlite:/srv/acct.db"), dir).unwrap(),
            Target::Sqlite("/srv/acct.db".into())
        );
        assert!(Target::parse(Some("sqlite:acct.db"), dir).is_err());
        assert_eq!(
            Target::parse(Some("postgres: host=/run/pg dbname=acct"), dir).unwrap(),
            Target::Postgres("host=/run/pg dbname=acct".into())
        );
        let e = Target::parse(Some("mysql://x"), dir)
            .unwrap_err()
            .to_string();
        assert!(e.contains("mysql://x") && e.contains("postgres://"), "{e}");
    }

    #[test]
    fn passwords_never_reach_a_message() {
        let t = Target::Postgres("postgres://acct:hunter2@db/slurm".into());
        assert_eq!(t.describe(), "postgres://acct:***@db/slurm");
        assert_eq!(
            redact("host=db password=hunter2 dbname=a"),
            "host=db password=*** dbname=a"
        );
    }
}
