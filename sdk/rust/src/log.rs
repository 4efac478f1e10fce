//! Logging from a policy: to the host's `tracing`, tagged with the plugin's name.

/// Severity of a log line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// Something is wrong.
    Error,
    /// Something looks wrong.
    Warn,
    /// Normal operation.
    Info,
    /// Detail for debugging a policy.
    Debug,
    /// Very fine detail.
    Trace,
}

/// Writes a log line with structured fields.
pub fn log(level: Level, message: &str, fields: &[(&str, &str)]) {
    #[cfg(target_arch = "wasm32")]
    to_host(level, message, fields);
    #[cfg(not(target_arch = "wasm32"))]
    {
        let mut line = message.to_string();
        for (k, v) in fields {
            line.push_str(&format!(" {k}={v}"));
        }
        sluice_policy::native::log(level as u8, &line);
    }
}

/// Logs at info level.
pub fn info(message: &str) {
    log(Level::Info, message, &[]);
}

/// Logs at warn level.
pub fn warn(message: &str) {
    log(Level::Warn, message, &[]);
}

/// Logs at debug level.
pub fn debug(message: &str) {
    log(Level::Debug, message, &[]);
}

/// Hands a log line to the host's `log` import.
#[cfg(target_arch = "wasm32")]
fn to_host(level: Level, message: &str, fields: &[(&str, &str)]) {
    use crate::wasm::priority::sluice::policy::host as h;
    let level = match level {
        Level::Error => h::Level::Error,
        Level::Warn => h::Level::Warn,
        Level::Info => h::Level::Info,
        Level::Debug => h::Level::Debug,
        Level::Trace => h::Level::Trace,
    };
    let fields: Vec<(String, String)> = fields
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    h::log(level, message, &fields);
}
