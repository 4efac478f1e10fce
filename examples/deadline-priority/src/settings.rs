//! The policy's settings: which project, its deadline, how much to boost, and the base weights.

use sluice_sdk::{SettingValue, Settings};

/// Everything the policy reads from `[plugins.priority.settings]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// Account whose jobs (including those of its sub-accounts) are favoured.
    pub project: Option<String>,
    /// Deadline, Unix seconds.
    pub deadline: i64,
    /// Extra priority at the deadline.
    pub boost: f64,
    /// Seconds before the deadline at which the boost starts growing from 0.
    pub window: i64,
    /// Weight of the age factor (waited time over `max_age`, capped at 1).
    pub weight_age: f64,
    /// Weight of the size factor (requested nodes over cluster nodes).
    pub weight_size: f64,
    /// Wait after which the age factor stops growing, seconds.
    pub max_age: i64,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            project: None,
            deadline: 0,
            boost: 100_000.0,
            window: 7 * 86_400,
            weight_age: 1000.0,
            weight_size: 1000.0,
            max_age: 7 * 86_400,
        }
    }
}

const KNOWN: &[&str] = &[
    "project",
    "deadline",
    "boost",
    "window",
    "weight.age",
    "weight.size",
    "max_age",
];

impl Config {
    /// Reads the settings, returning one warning per value it had to ignore.
    pub fn parse(s: &Settings) -> (Self, Vec<String>) {
        let mut warnings = s.unknown_keys(KNOWN);
        let d = Config::default();
        let mut num = |key: &str, default: f64| s.number_or_warn(key, default, &mut warnings);
        let boost = num("boost", d.boost);
        let window = num("window", d.window as f64).max(0.0) as i64;
        let weight_age = num("weight.age", d.weight_age);
        let weight_size = num("weight.size", d.weight_size);
        let max_age = num("max_age", d.max_age as f64).max(0.0) as i64;
        let deadline = match s.get("deadline") {
            Some(SettingValue::Integer(v)) => *v,
            Some(other) => {
                warnings.push(format!(
                    "deadline must be Unix seconds, got {other:?}; no boost"
                ));
                0
            }
            None => 0,
        };
        let project = s.text("project").map(str::to_string);
        if project.is_none() || deadline == 0 {
            warnings.push("project or deadline not set: no job is boosted".into());
        }
        (
            Self {
                project,
                deadline,
                boost,
                window,
                weight_age,
                weight_size,
                max_age,
            },
            warnings,
        )
    }
}
