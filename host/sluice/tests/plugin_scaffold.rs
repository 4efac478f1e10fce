//! `sluice plugin new` as a site admin runs it: where it finds the SDK, what it writes, and
//! scaffolds made outside the source tree that build as components and pass `plugin test`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use tempfile::TempDir;

/// The sluice checkout these tests run in, whose SDK the real scaffolds build against.
fn checkout() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// `sluice ARGS…` run in `cwd`, with `SLUICE_SDK` set to `sdk` or unset.
fn sluice_in(cwd: &Path, args: &[&str], sdk: Option<&Path>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_sluice"));
    cmd.current_dir(cwd)
        .args(args)
        .env_remove("SLUICE_SDK")
        .env(
            "SLUICE_CACHE_DIR",
            Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-component-cache"),
        );
    if let Some(sdk) = sdk {
        cmd.env("SLUICE_SDK", sdk);
    }
    cmd.output().unwrap()
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A scratch folder outside the checkout (under the system's temporary folder).
fn outside() -> TempDir {
    let dir = tempfile::Builder::new()
        .prefix("sluice-scaffold-")
        .tempdir()
        .unwrap();
    assert!(
        !dir.path().canonicalize().unwrap().starts_with(checkout()),
        "the scratch folder {} must be outside the checkout",
        dir.path().display()
    );
    dir
}

/// A folder that looks like a sluice checkout to `plugin new`: an `sdk/rust` crate named
/// `sluice-sdk`, a `rust-toolchain.toml` and a `Cargo.lock`.
fn fake_checkout(at: &Path) {
    std::fs::create_dir_all(at.join("sdk/rust")).unwrap();
    std::fs::write(
        at.join("sdk/rust/Cargo.toml"),
        "[package]\nname = \"sluice-sdk\"\nversion = \"0.1.0\"\n",
    )
    .unwrap();
    std::fs::write(
        at.join("rust-toolchain.toml"),
        "[toolchain]\nchannel = \"9.9.9\"\n",
    )
    .unwrap();
    std::fs::write(at.join("Cargo.lock"), "version = 4\n").unwrap();
}

/// The `path` the scaffold's manifest gives for `sluice-sdk`.
fn sdk_path_in(krate: &Path) -> String {
    let manifest: toml::Table = std::fs::read_to_string(krate.join("Cargo.toml"))
        .unwrap()
        .parse()
        .unwrap();
    manifest["dependencies"]["sluice-sdk"]["path"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn new_finds_the_checkout_above_the_crate_or_the_current_folder_and_names_it_relatively() {
    let tmp = outside();
    let site = tmp.path().join("site/sluice");
    fake_checkout(&site);

    // The crate's folder is inside the checkout.
    let policies = site.join("policies");
    let out = sluice_in(
        tmp.path(),
        &[
            "plugin",
            "new",
            "priority",
            "fifo",
            "--dir",
            policies.to_str().unwrap(),
        ],
        None,
    );
    assert!(out.status.success(), "{}", text(&out));
    let krate = policies.join("fifo");
    assert_eq!(sdk_path_in(&krate), "../../sdk/rust");
    assert_eq!(
        std::fs::read_to_string(krate.join("rust-toolchain.toml")).unwrap(),
        std::fs::read_to_string(site.join("rust-toolchain.toml")).unwrap(),
        "the checkout's toolchain file is copied"
    );
    assert!(krate.join("Cargo.lock").is_file());
    assert!(krate.join("src/lib.rs").is_file());
    let readme = std::fs::read_to_string(krate.join("README.md")).unwrap();
    for command in [
        "rustup target add wasm32-wasip2",
        "cargo test",
        "cargo build --release --target wasm32-wasip2",
        "sluice plugin check target/wasm32-wasip2/release/fifo.wasm",
        "sluice plugin test  target/wasm32-wasip2/release/fifo.wasm",
        "sluice plugin swap priority target/wasm32-wasip2/release/fifo.wasm",
        "[plugins.priority]",
    ] {
        assert!(
            readme.contains(command),
            "README lacks `{command}`:\n{readme}"
        );
    }
    assert!(!readme.contains("{{"), "a placeholder is left:\n{readme}");

    // The crate goes elsewhere; the checkout is found above the current folder.
    let elsewhere = tmp.path().join("elsewhere");
    let out = sluice_in(
        &site,
        &[
            "plugin",
            "new",
            "selection",
            "packer",
            "--dir",
            elsewhere.to_str().unwrap(),
        ],
        None,
    );
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        sdk_path_in(&elsewhere.join("packer")),
        "../../site/sluice/sdk/rust"
    );

    // Named explicitly, as the checkout or as its sdk/rust folder, by option or environment.
    let out = sluice_in(
        tmp.path(),
        &[
            "plugin",
            "new",
            "priority",
            "by-option",
            "--sdk",
            site.to_str().unwrap(),
        ],
        None,
    );
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        sdk_path_in(&tmp.path().join("by-option")),
        "../site/sluice/sdk/rust"
    );
    let out = sluice_in(
        tmp.path(),
        &["plugin", "new", "priority", "by-env"],
        Some(&site.join("sdk/rust")),
    );
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        sdk_path_in(&tmp.path().join("by-env")),
        "../site/sluice/sdk/rust"
    );
}

#[test]
fn new_without_an_sdk_says_how_to_point_at_one_and_writes_nothing() {
    let tmp = outside();
    let out = sluice_in(tmp.path(), &["plugin", "new", "priority", "fifo"], None);
    assert!(!out.status.success());
    let t = text(&out);
    assert!(t.contains("no sluice SDK found"), "{t}");
    assert!(t.contains("--sdk PATH") && t.contains("SLUICE_SDK"), "{t}");
    assert!(!tmp.path().join("fifo").exists(), "nothing is written");

    std::fs::create_dir(tmp.path().join("not-sluice")).unwrap();
    let out = sluice_in(
        tmp.path(),
        &["plugin", "new", "priority", "fifo", "--sdk", "not-sluice"],
        None,
    );
    assert!(!out.status.success());
    assert!(
        text(&out).contains("neither a sluice checkout nor its sdk/rust folder"),
        "{}",
        text(&out)
    );
    assert!(!tmp.path().join("fifo").exists(), "nothing is written");
}

#[test]
fn new_refuses_an_existing_folder_an_unknown_kind_and_a_bad_name() {
    let tmp = outside();
    fake_checkout(&tmp.path().join("sluice"));
    let sdk = tmp.path().join("sluice");
    let new =
        |kind: &str, name: &str| sluice_in(tmp.path(), &["plugin", "new", kind, name], Some(&sdk));
    assert!(new("priority", "fifo").status.success());
    let again = new("priority", "fifo");
    assert!(!again.status.success());
    assert!(text(&again).contains("already exists"), "{}", text(&again));
    let unknown = new("scheduler", "x");
    assert!(
        text(&unknown).contains(
            "unknown plugin kind 'scheduler': expected priority, selection, gres or hres"
        ),
        "{}",
        text(&unknown)
    );
    for bad in ["9lives", "a/b", "my policy"] {
        let out = new("priority", bad);
        assert!(!out.status.success(), "{bad}");
        assert!(
            text(&out).contains("must start with a letter"),
            "{}",
            text(&out)
        );
    }
}

/// `cargo ARGS…` in `krate`, with every scaffold's build in `target_dir`.
fn cargo(krate: &Path, target_dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO"))
        .current_dir(krate)
        .args(args)
        .arg("--offline")
        .env("CARGO_TARGET_DIR", target_dir)
        // The outer build's flags are for the host (x86-64-v2); the scaffold has its own.
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("CARGO_BUILD_TARGET")
        .output()
        .unwrap()
}

#[test]
fn scaffolds_made_outside_the_tree_build_as_components_and_pass_plugin_test() {
    let tmp = outside();
    // Shared by the kinds and kept between runs: the SDK's dependencies compile once.
    let target_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("scaffold-target");
    for kind in ["priority", "selection", "gres", "hres"] {
        let name = format!("site-{kind}");
        let out = sluice_in(
            tmp.path(),
            &["plugin", "new", kind, &name],
            Some(&checkout()),
        );
        assert!(out.status.success(), "{kind}: {}", text(&out));
        let krate = tmp.path().join(&name);

        let build = cargo(
            &krate,
            &target_dir,
            &["build", "--release", "--target", "wasm32-wasip2"],
        );
        assert!(
            build.status.success(),
            "{kind}: the component does not build (is the wasm32-wasip2 target installed?): {}",
            text(&build)
        );
        let wasm = target_dir.join(format!(
            "wasm32-wasip2/release/{}.wasm",
            name.replace('-', "_")
        ));
        let test = sluice_in(&krate, &["plugin", "test", wasm.to_str().unwrap()], None);
        let t = text(&test);
        assert!(test.status.success(), "{kind}: {t}");
        assert!(
            t.contains(&format!("{kind} cases")) && t.contains(" 0 failed"),
            "{kind}: {t}"
        );

        let native = cargo(&krate, &target_dir, &["test"]);
        assert!(
            native.status.success(),
            "{kind}: cargo test: {}",
            text(&native)
        );
    }
}
