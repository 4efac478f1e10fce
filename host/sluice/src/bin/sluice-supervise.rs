//! `sluice-supervise`: the per-job supervisor as a program of its own, installed beside `sluice`.
//! The daemon starts it once as the supervisors' spawner, which forks a supervisor per job, so
//! it links nothing but the supervisor; `sluice spawn-supervisors` is the same code, for an
//! installation of one binary. `supervise DIR --lock-fd N` runs one supervisor by hand.

use std::os::fd::{FromRawFd, OwnedFd};
use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "usage: sluice-supervise spawn-supervisors --socket-fd N --job-nice M | supervise DIR --lock-fd N (started by sluice serve)";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let code = match args.as_slice() {
        [cmd, flag, fd, nice_flag, nice]
            if cmd == "spawn-supervisors" && flag == "--socket-fd" && nice_flag == "--job-nice" =>
        {
            match (fd.parse::<i32>(), nice.parse::<i32>()) {
                // SAFETY: the daemon handed this descriptor over for this process to own.
                (Ok(fd), Ok(nice)) if fd > 2 => {
                    sluice_daemon::serve_spawner(unsafe { OwnedFd::from_raw_fd(fd) }, nice)
                }
                _ => usage(),
            }
        }
        [cmd, dir, flag, fd] if cmd == "supervise" && flag == "--lock-fd" => {
            match fd.parse::<i32>() {
                Ok(fd) => sluice_daemon::run_supervisor(&PathBuf::from(dir), fd),
                Err(_) => usage(),
            }
        }
        _ => usage(),
    };
    match code {
        0 => ExitCode::SUCCESS,
        code => ExitCode::from(code.clamp(1, 255) as u8),
    }
}

fn usage() -> i32 {
    eprintln!("{USAGE}");
    2
}
