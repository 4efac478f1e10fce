//! Issue 33, item 9: `sluice plugin check` on a 200 MB file whose first bytes already fail
//! answers from those bytes, without reading the file into memory. Alone in its test binary,
//! so the largest child this process waited for is the command under test.

use std::path::Path;
use std::process::Command;

/// Largest resident size of any child waited for, kB.
fn children_max_rss_kb() -> i64 {
    // SAFETY: getrusage fills the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    assert_eq!(
        unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) },
        0
    );
    usage.ru_maxrss
}

#[test]
fn check_refuses_a_200_mb_file_from_its_first_bytes() {
    let dir = tempfile::Builder::new()
        .prefix("sluice-check-big-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    let path = dir.path().join("big.wasm");
    // Real bytes, not a sparse file, so reading it all would cost 200 MB of memory.
    let mut chunk = vec![0xA5u8; 1 << 20];
    chunk[..8].copy_from_slice(b"GIF89a..");
    let mut file = std::fs::File::create(&path).unwrap();
    for i in 0..200 {
        std::io::Write::write_all(&mut file, &chunk).unwrap();
        if i == 0 {
            chunk[..8].fill(0xA5);
        }
    }
    drop(file);
    let out = Command::new(env!("CARGO_BIN_EXE_sluice"))
        .args(["plugin", "check"])
        .arg(&path)
        .env("SLUICE_CACHE_DIR", dir.path().join("cache"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("not a valid component or native library")
            && err.contains("starts with `GIF89a..`"),
        "{err}"
    );
    let rss = children_max_rss_kb();
    assert!(
        rss < 100 * 1024,
        "plugin check peaked at {rss} kB on a 200 MB file it could refuse from 8 bytes"
    );
    assert!(Path::new(&path).exists());
    println!("plugin check refused the 200 MB file at {rss} kB peak");
}
