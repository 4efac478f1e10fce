//! Reading slurm.conf values: numbers, YES/NO, times, with errors pointing at the value.

use crate::ConfigError;
use crate::keyvalue::Pair;
use crate::model::TimeLimit;
use crate::time::parse_limit;

/// An unsigned number of the target type.
pub fn number<T: std::str::FromStr>(pair: &Pair) -> Result<T, ConfigError> {
    pair.value
        .trim()
        .parse()
        .map_err(|_| invalid(pair, "a whole number in range"))
}

/// A signed number.
pub fn signed(pair: &Pair) -> Result<i64, ConfigError> {
    number(pair)
}

/// YES/NO (also TRUE/FALSE, 1/0).
pub fn yes_no(pair: &Pair) -> Result<bool, ConfigError> {
    match pair.value.to_ascii_uppercase().as_str() {
        "YES" | "TRUE" | "1" => Ok(true),
        "NO" | "FALSE" | "0" => Ok(false),
        _ => Err(invalid(pair, "YES or NO")),
    }
}

/// A time limit; bare numbers are in `unit_seconds`.
pub fn limit(pair: &Pair, unit_seconds: u64) -> Result<TimeLimit, ConfigError> {
    parse_limit(&pair.value, unit_seconds).ok_or_else(|| {
        invalid(
            pair,
            if unit_seconds == 60 {
                "minutes, a Slurm time such as 1-00:00:00, or UNLIMITED"
            } else {
                "seconds or INFINITE"
            },
        )
    })
}

/// A finite duration in seconds; bare numbers are minutes.
pub fn minutes(pair: &Pair) -> Result<u64, ConfigError> {
    match limit(pair, 60)? {
        TimeLimit::Seconds(secs) => Ok(secs),
        TimeLimit::Infinite => Err(invalid(pair, "a finite time")),
    }
}

/// The error for a value that is not what `expected` says.
pub fn invalid(pair: &Pair, expected: &str) -> ConfigError {
    ConfigError::invalid(
        pair.value_at.clone(),
        format!("{}={}", pair.key, pair.value),
        expected,
    )
}
