//! Slurm time values (`7-0`, `1:00:00`, `UNLIMITED`) and the serde adapters that read them from TOML.

use serde::{Deserialize, Deserializer, Serializer};

use crate::model::TimeLimit;

/// Parses Slurm's time formats into seconds: `min`, `min:sec`, `hr:min:sec`, `days-hr`,
/// `days-hr:min`, `days-hr:min:sec` (slurm.conf `MaxTime` and `PriorityMaxAge`).
pub fn parse_duration(text: &str) -> Option<u64> {
    let text = text.trim();
    let (days, rest) = match text.split_once('-') {
        Some((days, rest)) => (Some(parse_part(days)?), rest),
        None => (None, text),
    };
    let parts: Vec<u64> = rest.split(':').map(parse_part).collect::<Option<_>>()?;
    let seconds = match (days, parts.as_slice()) {
        (None, [min]) => min.checked_mul(60)?,
        (None, [min, sec]) => min.checked_mul(60)?.checked_add(*sec)?,
        (None, [hr, min, sec]) | (Some(_), [hr, min, sec]) => hr
            .checked_mul(3600)?
            .checked_add(min.checked_mul(60)?)?
            .checked_add(*sec)?,
        (Some(_), [hr]) => hr.checked_mul(3600)?,
        (Some(_), [hr, min]) => hr.checked_mul(3600)?.checked_add(min.checked_mul(60)?)?,
        _ => return None,
    };
    seconds.checked_add(days.unwrap_or(0).checked_mul(86_400)?)
}

fn parse_part(text: &str) -> Option<u64> {
    if text.is_empty() || text.len() > 12 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// True for Slurm's spellings of "no limit".
pub fn is_infinite(text: &str) -> bool {
    matches!(
        text.trim().to_ascii_uppercase().as_str(),
        "INFINITE" | "UNLIMITED" | "-1"
    )
}

/// Formats seconds the way `scontrol show` does: `D-HH:MM:SS`, or `HH:MM:SS` under a day.
pub fn format_duration(seconds: u64) -> String {
    let (days, rest) = (seconds / 86_400, seconds % 86_400);
    let (hours, minutes, secs) = (rest / 3600, rest % 3600 / 60, rest % 60);
    if days > 0 {
        format!("{days}-{hours:02}:{minutes:02}:{secs:02}")
    } else {
        format!("{hours:02}:{minutes:02}:{secs:02}")
    }
}

/// Parses a limit where bare numbers are in `unit_seconds` (60 for minutes, 1 for seconds).
pub fn parse_limit(text: &str, unit_seconds: u64) -> Option<TimeLimit> {
    if is_infinite(text) {
        return Some(TimeLimit::Infinite);
    }
    let text = text.trim();
    if unit_seconds != 60 && !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        return parse_part(text)?
            .checked_mul(unit_seconds)
            .map(TimeLimit::Seconds);
    }
    parse_duration(text).map(TimeLimit::Seconds)
}

/// A TOML time value: a number in the key's unit, or a Slurm time string.
#[derive(Deserialize)]
#[serde(untagged)]
enum RawTime {
    Number(i64),
    Text(String),
}

fn limit_from_raw<E: serde::de::Error>(raw: RawTime, unit_seconds: u64) -> Result<TimeLimit, E> {
    let unit = if unit_seconds == 60 {
        "minutes"
    } else {
        "seconds"
    };
    match raw {
        RawTime::Number(-1) => Ok(TimeLimit::Infinite),
        RawTime::Number(n) if n >= 0 => (n as u64)
            .checked_mul(unit_seconds)
            .map(TimeLimit::Seconds)
            .ok_or_else(|| E::custom(format!("found {n}, expected a smaller number of {unit}"))),
        RawTime::Number(n) => Err(E::custom(format!(
            "found {n}, expected {unit}, -1 or \"INFINITE\""
        ))),
        RawTime::Text(text) => parse_limit(&text, unit_seconds).ok_or_else(|| {
            E::custom(format!(
                "found \"{text}\", expected {unit} or a Slurm time such as \"1-12:00:00\" or \"INFINITE\""
            ))
        }),
    }
}

/// Serde adapter for a [`TimeLimit`] whose bare numbers are minutes (`MaxTime`, `MaxWall`).
pub mod limit_minutes {
    use super::*;

    /// Reads minutes, a Slurm time string or `UNLIMITED`.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<TimeLimit, D::Error> {
        limit_from_raw(RawTime::deserialize(d)?, 60)
    }

    /// Writes `UNLIMITED` or a Slurm time string.
    pub fn serialize<S: Serializer>(limit: &TimeLimit, s: S) -> Result<S::Ok, S::Error> {
        match limit {
            TimeLimit::Infinite => s.serialize_str("UNLIMITED"),
            TimeLimit::Seconds(secs) => s.serialize_str(&format_duration(*secs)),
        }
    }
}

/// Serde adapter for a [`TimeLimit`] whose bare numbers are seconds (`SuspendTime`).
pub mod limit_seconds {
    use super::*;

    /// Reads seconds, a Slurm time string, -1 or `INFINITE`.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<TimeLimit, D::Error> {
        limit_from_raw(RawTime::deserialize(d)?, 1)
    }

    /// Writes `INFINITE` or the number of seconds.
    pub fn serialize<S: Serializer>(limit: &TimeLimit, s: S) -> Result<S::Ok, S::Error> {
        match limit {
            TimeLimit::Infinite => s.serialize_str("INFINITE"),
            TimeLimit::Seconds(secs) => s.serialize_u64(*secs),
        }
    }
}

/// Serde adapter for a finite duration in seconds whose bare numbers are minutes (`PriorityMaxAge`).
pub mod minutes {
    use super::*;

    /// Reads minutes or a Slurm time string; infinity is refused.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        match limit_from_raw(RawTime::deserialize(d)?, 60)? {
            TimeLimit::Seconds(secs) => Ok(secs),
            TimeLimit::Infinite => Err(serde::de::Error::custom(
                "found an infinite time, expected a finite time such as \"7-0\"",
            )),
        }
    }

    /// Writes a Slurm time string.
    pub fn serialize<S: Serializer>(secs: &u64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format_duration(*secs))
    }
}

/// Serde adapters for optional limits (absent means "inherit").
pub mod option {
    use super::*;

    /// `Option<TimeLimit>` with bare numbers in minutes.
    pub mod minutes {
        use super::*;

        /// Reads like [`super::super::limit_minutes`].
        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<TimeLimit>, D::Error> {
            super::super::limit_minutes::deserialize(d).map(Some)
        }

        /// Writes like [`super::super::limit_minutes`]; `None` is skipped by the caller.
        pub fn serialize<S: Serializer>(v: &Option<TimeLimit>, s: S) -> Result<S::Ok, S::Error> {
            match v {
                Some(limit) => super::super::limit_minutes::serialize(limit, s),
                None => s.serialize_none(),
            }
        }
    }

    /// `Option<TimeLimit>` with bare numbers in seconds.
    pub mod seconds {
        use super::*;

        /// Reads like [`super::super::limit_seconds`].
        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<TimeLimit>, D::Error> {
            super::super::limit_seconds::deserialize(d).map(Some)
        }

        /// Writes like [`super::super::limit_seconds`]; `None` is skipped by the caller.
        pub fn serialize<S: Serializer>(v: &Option<TimeLimit>, s: S) -> Result<S::Ok, S::Error> {
            match v {
                Some(limit) => super::super::limit_seconds::serialize(limit, s),
                None => s.serialize_none(),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_slurm_time_shape() {
        assert_eq!(parse_duration("5"), Some(300));
        assert_eq!(parse_duration("5:30"), Some(330));
        assert_eq!(parse_duration("1:00:00"), Some(3600));
        assert_eq!(parse_duration("7-0"), Some(7 * 86_400));
        assert_eq!(parse_duration("1-2:03"), Some(86_400 + 7200 + 180));
        assert_eq!(parse_duration("1-02:03:04"), Some(86_400 + 7200 + 184));
        assert_eq!(parse_duration("1:2:3:4"), None);
        assert_eq!(parse_duration("abc"), None);
        assert_eq!(parse_duration(""), None);
    }

    #[test]
    fn limits_know_their_unit_and_infinity() {
        assert_eq!(parse_limit("600", 1), Some(TimeLimit::Seconds(600)));
        assert_eq!(parse_limit("600", 60), Some(TimeLimit::Seconds(36_000)));
        assert_eq!(parse_limit("UNLIMITED", 60), Some(TimeLimit::Infinite));
        assert_eq!(parse_limit("infinite", 1), Some(TimeLimit::Infinite));
        assert_eq!(format_duration(90_061), "1-01:01:01");
        assert_eq!(format_duration(3600), "01:00:00");
    }
}
