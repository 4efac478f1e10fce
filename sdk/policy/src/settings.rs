//! A plugin's settings: the `[plugins.<kind>.settings]` TOML table, flattened to dotted keys.

use serde::{Deserialize, Serialize};

/// One scalar setting value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum SettingValue {
    /// `true` / `false`.
    Boolean(bool),
    /// An integer.
    Integer(i64),
    /// A float.
    Float(f64),
    /// A string (also datetimes, as text).
    Text(String),
}

/// One flattened key and its value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Setting {
    /// Dotted key: `weights.age`, `tiers[2]`.
    pub key: String,
    /// The value.
    pub value: SettingValue,
}

/// The whole settings table of one plugin, in the host's key order.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Settings(pub Vec<Setting>);

impl Settings {
    /// The value of `key`, if set.
    pub fn get(&self, key: &str) -> Option<&SettingValue> {
        self.0.iter().find(|s| s.key == key).map(|s| &s.value)
    }

    /// `key` as a float (integers widen), or `default` when absent or of another type.
    pub fn f64_or(&self, key: &str, default: f64) -> f64 {
        match self.get(key) {
            Some(SettingValue::Float(v)) => *v,
            Some(SettingValue::Integer(v)) => *v as f64,
            _ => default,
        }
    }

    /// `key` as a finite number (integers widen), `default` when absent; of another type it is
    /// `default` with a warning pushed onto `warnings`, so a policy drops nothing silently.
    pub fn number_or_warn(&self, key: &str, default: f64, warnings: &mut Vec<String>) -> f64 {
        match self.get(key) {
            None => default,
            Some(SettingValue::Integer(v)) => *v as f64,
            Some(SettingValue::Float(v)) if v.is_finite() => *v,
            Some(other) => {
                warnings.push(format!(
                    "{key} must be a number, got {other:?}; using {default}"
                ));
                default
            }
        }
    }

    /// One warning per key not in `known`: a policy ignores those, and says so.
    pub fn unknown_keys(&self, known: &[&str]) -> Vec<String> {
        self.0
            .iter()
            .filter(|s| !known.contains(&s.key.as_str()))
            .map(|s| format!("unknown setting `{}` ignored", s.key))
            .collect()
    }

    /// `key` as an integer, or `default` when absent or of another type.
    pub fn i64_or(&self, key: &str, default: i64) -> i64 {
        match self.get(key) {
            Some(SettingValue::Integer(v)) => *v,
            _ => default,
        }
    }

    /// `key` as a boolean, or `default` when absent or of another type.
    pub fn bool_or(&self, key: &str, default: bool) -> bool {
        match self.get(key) {
            Some(SettingValue::Boolean(v)) => *v,
            _ => default,
        }
    }

    /// `key` as text, if it is text.
    pub fn text(&self, key: &str) -> Option<&str> {
        match self.get(key) {
            Some(SettingValue::Text(v)) => Some(v),
            _ => None,
        }
    }

    /// Adds or replaces a key (used by test harnesses and fixtures).
    pub fn with(mut self, key: &str, value: SettingValue) -> Self {
        self.0.retain(|s| s.key != key);
        self.0.push(Setting {
            key: key.to_string(),
            value,
        });
        self
    }
}
