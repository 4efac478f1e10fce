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
    crate::wasm::log(level, message, fields);
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
