//! Turns a plugin's TOML settings table into the flat key/value list that crosses the boundary.

use sluice_policy::{Setting, SettingValue, Settings};

/// Flattens a TOML table: nested tables become dotted keys, arrays indexed keys.
pub fn flatten(table: &toml::Table) -> Settings {
    let mut out = Vec::new();
    for (key, value) in table {
        push(&mut out, key.clone(), value);
    }
    Settings(out)
}

fn push(out: &mut Vec<Setting>, key: String, value: &toml::Value) {
    let scalar = match value {
        toml::Value::Boolean(b) => SettingValue::Boolean(*b),
        toml::Value::Integer(i) => SettingValue::Integer(*i),
        toml::Value::Float(f) => SettingValue::Float(*f),
        toml::Value::String(s) => SettingValue::Text(s.clone()),
        toml::Value::Datetime(d) => SettingValue::Text(d.to_string()),
        toml::Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                push(out, format!("{key}[{i}]"), item);
            }
            return;
        }
        toml::Value::Table(t) => {
            for (k, v) in t {
                push(out, format!("{key}.{k}"), v);
            }
            return;
        }
    };
    out.push(Setting { key, value: scalar });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_tables_and_arrays_flatten_to_paths() {
        let table: toml::Table =
            toml::from_str("a = 1\n[weights]\nage = 2.5\ntiers = [true, 'x']").unwrap();
        let s = flatten(&table);
        assert_eq!(s.get("a"), Some(&SettingValue::Integer(1)));
        assert_eq!(s.f64_or("weights.age", 0.0), 2.5);
        assert_eq!(
            s.get("weights.tiers[0]"),
            Some(&SettingValue::Boolean(true))
        );
        assert_eq!(s.text("weights.tiers[1]"), Some("x"));
        assert_eq!(s.0.len(), 4);
    }
}
