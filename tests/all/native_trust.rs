//! Issue 33, item 7: a native library is checked before `dlopen` runs any of its code. A C
//! library whose constructor leaves a marker file shows it: refused when another user owns it,
//! when group or others may write it or its directory, or when the path is a symlink, and the
//! marker never appears; in a trusted place the same library's constructor does run.

use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::process::Command;

use sluice_policy::PluginKind;
use sluice_runtime::{Limits, LoadError, PluginSpec};

use crate::support::*;

/// Builds `dir/NAME.so` with `cc`, a library whose constructor writes `dir/NAME.ran`; `None`
/// when there is no C compiler.
fn planted_library(dir: &Path, name: &str) -> Option<(PathBuf, PathBuf)> {
    let marker = dir.join(format!("{name}.ran"));
    let source = dir.join(format!("{name}.c"));
    std::fs::write(
        &source,
        format!(
            "#include <stdio.h>\n\
             __attribute__((constructor)) static void planted(void) {{\n\
             FILE *f = fopen(\"{}\", \"w\"); if (f) {{ fputs(\"ran\", f); fclose(f); }}\n\
             }}\n",
            marker.display()
        ),
    )
    .unwrap();
    let library = dir.join(format!("{name}.so"));
    let built = Command::new("cc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(&library)
        .arg(&source)
        .status()
        .ok()?;
    assert!(built.success(), "cc failed on {}", source.display());
    std::fs::set_permissions(&library, std::fs::Permissions::from_mode(0o755)).unwrap();
    Some((library, marker))
}

fn load(path: &Path) -> LoadError {
    let spec = PluginSpec {
        kind: PluginKind::Priority,
        plugin: path.to_str().unwrap().into(),
        settings: Default::default(),
        limits: Limits::default(),
    };
    loader()
        .load(&spec)
        .err()
        .expect("the planted library is no plugin")
}

fn trusted_dir() -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("sluice-native-trust-")
        .tempdir()
        .unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

/// Loads `library` expecting a refusal that says `why`, and checks its constructor did not run.
fn refused_unrun(library: &Path, marker: &Path, why: &str) {
    let err = load(library);
    assert!(
        matches!(err, LoadError::Refused { .. }),
        "{}: {err}",
        library.display()
    );
    let text = err.to_string();
    assert!(
        text.contains(why) && text.contains(library.to_str().unwrap()),
        "{text}"
    );
    assert!(
        !marker.exists(),
        "{}'s constructor ran before it was refused",
        library.display()
    );
}

#[test]
fn untrusted_native_libraries_are_refused_before_their_constructor_runs() {
    let dir = trusted_dir();
    let Some((writable, marker)) = planted_library(dir.path(), "group_writable") else {
        eprintln!("skipped: no C compiler");
        return;
    };
    std::fs::set_permissions(&writable, std::fs::Permissions::from_mode(0o775)).unwrap();
    refused_unrun(
        &writable,
        &marker,
        "writable by group or others (mode 0775)",
    );

    let (world, marker) = planted_library(dir.path(), "world_writable").unwrap();
    std::fs::set_permissions(&world, std::fs::Permissions::from_mode(0o757)).unwrap();
    refused_unrun(&world, &marker, "writable by group or others");

    // A symlink to a library that would pass: what is checked must be what is loaded.
    let (target, marker) = planted_library(dir.path(), "link_target").unwrap();
    let link = dir.path().join("link.so");
    symlink(&target, &link).unwrap();
    refused_unrun(&link, &marker, "is a symbolic link");

    // A good library in a directory others may write (they could have swapped it in).
    let open_dir = dir.path().join("open");
    std::fs::create_dir(&open_dir).unwrap();
    let (in_open, marker) = planted_library(&open_dir, "in_open_dir").unwrap();
    std::fs::set_permissions(&open_dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    refused_unrun(&in_open, &marker, "its directory");

    // SAFETY: geteuid has no preconditions.
    if unsafe { geteuid() } == 0 {
        let (foreign, marker) = planted_library(dir.path(), "owned_by_nobody").unwrap();
        std::os::unix::fs::chown(&foreign, Some(65534), Some(65534)).unwrap();
        refused_unrun(&foreign, &marker, "owned by uid 65534");
    } else {
        eprintln!("owner case skipped: chown to another user needs root");
    }

    // The control: the same kind of library, trusted, is loaded, so its constructor runs (and
    // it is then refused as no sluice plugin). Without this the checks above prove nothing.
    let (trusted, marker) = planted_library(dir.path(), "trusted").unwrap();
    let err = load(&trusted);
    assert!(err.to_string().contains("not a sluice plugin"), "{err}");
    assert!(
        marker.exists(),
        "the trusted library's constructor did not run"
    );
}

#[test]
fn a_library_for_another_machine_is_refused_from_its_header() {
    let dir = trusted_dir();
    let Some((library, marker)) = planted_library(dir.path(), "other_machine") else {
        eprintln!("skipped: no C compiler");
        return;
    };
    let mut bytes = std::fs::read(&library).unwrap();
    bytes[18] ^= 0x40; // e_machine
    std::fs::write(&library, bytes).unwrap();
    let err = load(&library);
    assert!(matches!(err, LoadError::Format { .. }), "{err}");
    assert!(
        err.to_string().contains("an ELF library for machine"),
        "{err}"
    );
    assert!(!marker.exists());
}

unsafe extern "C" {
    fn geteuid() -> u32;
}
