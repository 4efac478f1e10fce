//! The binary's log. Every command logs to stderr at `SLUICE_LOG` (default `warn`); `sluice
//! serve` logs as slurmctld does: each line `[2026-11-26T10:31:12.345] message`, errors and
//! warnings prefixed `error: ` and `warning: `, to `--log-file` (SlurmctldLogFile) or stderr, at
//! `--log-level` (SlurmctldDebug's names). Colour only when a command's stderr is a terminal; the
//! daemon's lines never have any.

use std::io::IsTerminal;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use anyhow::{Context, bail};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

use crate::cmd::clock::Zone;

/// Logs every command but `serve` to stderr at `SLUICE_LOG`, default `warn`.
pub fn init_default() {
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_env("SLUICE_LOG").unwrap_or_else(|_| EnvFilter::new("warn")),
        )
        .log_internal_errors(false)
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr)
        .init();
}

/// The tracing filter for a SlurmctldDebug level: `quiet`, `fatal`, `error`, `info` (the
/// default; warnings too), `verbose` (as info: tracing has no level between), `debug`, and
/// `debug2`…`debug5` (everything).
pub fn filter_of(level: &str) -> anyhow::Result<&'static str> {
    Ok(match level.to_ascii_lowercase().as_str() {
        "quiet" => "off",
        "fatal" | "error" => "error",
        "info" | "verbose" => "info",
        "debug" => "debug",
        "debug2" | "debug3" | "debug4" | "debug5" => "trace",
        other => bail!(
            "--log-level {other}: expected quiet, fatal, error, info, verbose, debug or debug2..debug5"
        ),
    })
}

/// Logs the daemon at `level` (SlurmctldDebug's names; `SLUICE_LOG` overrides with a tracing
/// filter) to `file`, appended and created 0640 without following a symlink, or else to stderr.
pub fn init_daemon(file: Option<&Path>, level: &str) -> anyhow::Result<()> {
    let level = filter_of(level)?;
    let filter = EnvFilter::try_from_env("SLUICE_LOG").unwrap_or_else(|_| EnvFilter::new(level));
    // A log that cannot be written (a full disk) must not stop the daemon: by default the
    // subscriber reports its write errors with `eprintln!`, which panics when stderr is the
    // failing writer, taking the scheduling thread with it.
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .log_internal_errors(false)
        .event_format(SlurmctldFormat);
    match file {
        Some(path) => {
            let log = std::fs::OpenOptions::new()
                .append(true)
                .create(true)
                .mode(0o640)
                .custom_flags(libc::O_NOFOLLOW)
                .open(path)
                .with_context(|| format!("--log-file {}", path.display()))?;
            builder.with_writer(std::sync::Mutex::new(log)).init();
        }
        None => builder.with_writer(std::io::stderr).init(),
    }
    Ok(())
}

/// slurmctld's line: `[local time with ms] prefix message fields`, never coloured (a custom
/// format writes no escape codes).
struct SlurmctldFormat;

impl<S, N> FormatEvent<S, N> for SlurmctldFormat
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> std::fmt::Result {
        write!(writer, "[{}] ", stamp(std::time::SystemTime::now()))?;
        let prefix = match *event.metadata().level() {
            Level::ERROR => "error: ",
            Level::WARN => "warning: ",
            Level::DEBUG => "debug: ",
            Level::TRACE => "debug2: ",
            Level::INFO => "",
        };
        writer.write_str(prefix)?;
        ctx.field_format().format_fields(writer.by_ref(), event)?;
        writeln!(writer)
    }
}

/// `2026-11-26T10:31:12.345` in local time.
fn stamp(at: std::time::SystemTime) -> String {
    let since = at.duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    format!(
        "{}.{:03}",
        Zone::Local.iso(since.as_secs() as i64),
        since.subsec_millis()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slurmctld_levels_map_onto_filters_and_others_are_refused() {
        assert_eq!(filter_of("info").unwrap(), "info");
        assert_eq!(filter_of("DEBUG3").unwrap(), "trace");
        assert_eq!(filter_of("quiet").unwrap(), "off");
        let e = filter_of("loud").unwrap_err().to_string();
        assert!(e.contains("expected quiet"), "{e}");
    }

    #[test]
    fn a_stamp_has_milliseconds_after_the_iso_time() {
        let t = std::time::UNIX_EPOCH + std::time::Duration::from_millis(1_764_151_200_042);
        let s = stamp(t);
        assert!(s.ends_with(".042"), "{s}");
        assert_eq!(s.len(), "2026-11-26T10:00:00.042".len(), "{s}");
    }
}
