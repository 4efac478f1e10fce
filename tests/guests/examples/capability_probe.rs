//! A priority plugin that tries every capability a plugin must not have and answers with what
//! it got, one observation per job slot: for the "plugins get no capabilities" tests only.
//!
//! Slots (a job table of at least [`SLOTS`] jobs): 0 environment variables seen, 1 arguments,
//! 2 whether a file could be created in /tmp, 3 whether `/etc/passwd` could be read, 4 whether `/`
//! could be listed, 5 whether a TCP connection to 127.0.0.1:22 opened, 6 whether `localhost`
//! resolved, 7 the wall clock's seconds since the epoch (low 32 bits), 8 a hash keyed by the
//! guest's randomness (low 32 bits), 9 1 once stdout and stderr were written without a fault.
//! With mode `sleep` it sleeps for an hour instead.

use std::hash::BuildHasher;
use std::io::Write;

use sluice_sdk::*;

/// The number of observation slots.
pub const SLOTS: usize = 10;

/// The probing policy.
pub struct CapabilityProbe {
    sleep: bool,
}

impl FromSettings for CapabilityProbe {
    fn from_settings(settings: &Settings) -> Self {
        CapabilityProbe {
            sleep: settings.text("mode") == Some("sleep"),
        }
    }
}

impl PriorityPolicy for CapabilityProbe {
    fn compute(&mut self, _ctx: &PriorityContext, jobs: &JobTable) -> Priorities {
        if self.sleep {
            std::thread::sleep(std::time::Duration::from_secs(3600));
        }
        let seen = [
            std::env::vars_os().count() as u32,
            std::env::args_os().count() as u32,
            std::fs::write("/tmp/sluice-capability-probe", b"x").is_ok() as u32,
            std::fs::read("/etc/passwd").is_ok() as u32,
            std::fs::read_dir("/").is_ok() as u32,
            std::net::TcpStream::connect(("127.0.0.1", 22)).is_ok() as u32,
            std::net::ToSocketAddrs::to_socket_addrs(&("localhost", 80)).is_ok() as u32,
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(u32::MAX, |d| d.as_secs() as u32),
            std::collections::hash_map::RandomState::new().hash_one(1u64) as u32,
            (writeln!(std::io::stdout(), "probe").is_ok()
                && writeln!(std::io::stderr(), "probe").is_ok()) as u32,
        ];
        let priority = (0..jobs.len())
            .map(|i| seen.get(i).copied().unwrap_or(0))
            .collect();
        Priorities {
            priority,
            factors: Vec::new(),
        }
    }
}

export_priority!(CapabilityProbe);
