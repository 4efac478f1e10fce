//! `sluice-supervise`: the per-job supervisor as a program of its own, installed beside `sluice`.
//! The daemon starts one per job, so it links nothing but the supervisor and starts in about a
//! millisecond; `sluice supervise` is the same code, for an installation of one binary.

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    // The daemon's own arguments: `supervise DIR --lock-fd N`.
    let args: Vec<String> = std::env::args().skip(1).collect();
    let parsed = match args.as_slice() {
        [cmd, dir, flag, fd] if cmd == "supervise" && flag == "--lock-fd" => {
            fd.parse::<i32>().ok().map(|fd| (PathBuf::from(dir), fd))
        }
        _ => None,
    };
    let Some((dir, fd)) = parsed else {
        eprintln!("usage: sluice-supervise supervise DIR --lock-fd N (started by sluice serve)");
        return ExitCode::from(2);
    };
    match sluice_daemon::supervisor::run(&dir, fd) {
        0 => ExitCode::SUCCESS,
        code => ExitCode::from(code.clamp(1, 255) as u8),
    }
}
