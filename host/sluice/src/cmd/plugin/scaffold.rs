//! `sluice plugin new`: writes a plugin crate from the templates in `sdk/template`, depending on
//! the SDK of a sluice checkout by path.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

use super::sdk;

const CARGO_TOML: &str = include_str!("../../../../../sdk/template/Cargo.toml.in");
const README: &str = include_str!("../../../../../sdk/template/README.md.in");
const GITIGNORE: &str = include_str!("../../../../../sdk/template/gitignore.in");
const PRIORITY: &str = include_str!("../../../../../sdk/template/priority.rs.in");
const SELECTION: &str = include_str!("../../../../../sdk/template/selection.rs.in");
const GRES: &str = include_str!("../../../../../sdk/template/gres.rs.in");
const HRES: &str = include_str!("../../../../../sdk/template/hres.rs.in");

/// Files of the checkout the scaffold takes as they are: the Rust release (with the
/// `wasm32-wasip2` target) and the dependency versions the SDK is tested with.
const COPIED_FROM_CHECKOUT: &[&str] = &["rust-toolchain.toml", "Cargo.lock"];

/// Writes `<dir>/<name>/`, a crate for a policy of `kind` that depends on the SDK `sdk` names
/// (or the one [`sdk::locate`] finds), with a README that says how to build, test and swap it.
pub fn new(kind: &str, name: &str, dir: &Path, sdk: Option<&Path>) -> anyhow::Result<()> {
    let source = template_of(kind)?;
    check_name(name)?;
    let (parent, root) = new_folder(dir, name)?;
    let sdk = sdk::locate(sdk, &parent)?;
    std::fs::create_dir_all(root.join("src"))
        .with_context(|| format!("creating {}", root.display()))?;
    let root = std::fs::canonicalize(&root)?;
    let sdk_path = sdk::path_from(&root, &sdk.crate_dir);
    let sdk_text = sdk_path
        .to_str()
        .context("the SDK's path is not UTF-8; move the sluice checkout to a UTF-8 path")?;
    let rust_name = name.replace('-', "_");
    let wasm = format!("{rust_name}.wasm");
    let fill = |template: &str| {
        template
            .replace("{{name}}", name)
            .replace("{{crate}}", &rust_name)
            .replace("{{kind}}", kind)
            .replace("{{wasm}}", &wasm)
            // The manifest gets a TOML string, whatever characters the path holds.
            .replace(
                "{{sdk_path_toml}}",
                &toml::Value::String(sdk_text.to_string()).to_string(),
            )
            .replace("{{sdk_path}}", sdk_text)
    };
    let write = |file: &str, text: String| {
        std::fs::write(root.join(file), text)
            .with_context(|| format!("writing {}", root.join(file).display()))
    };
    write("Cargo.toml", fill(CARGO_TOML))?;
    write("src/lib.rs", fill(source))?;
    write("README.md", fill(README))?;
    write(".gitignore", GITIGNORE.to_string())?;
    for file in COPIED_FROM_CHECKOUT {
        let from = sdk.checkout.join(file);
        if from.is_file() {
            std::fs::copy(&from, root.join(file))
                .with_context(|| format!("copying {}", from.display()))?;
        }
    }

    println!("created {kind} plugin {name} in {}", root.display());
    println!("  SDK: {sdk_text}");
    println!("next steps (README.md says more, including how to swap it into a running daemon):");
    println!("  cd {}", root.display());
    println!("  cargo test                                     # the policy's tests, natively");
    println!("  cargo build --release --target wasm32-wasip2   # the component");
    println!("  sluice plugin test target/wasm32-wasip2/release/{wasm}");
    Ok(())
}

/// The folder `dir` (made absolute) and the project folder `name` inside it, which must not
/// exist yet.
pub(super) fn new_folder(dir: &Path, name: &str) -> anyhow::Result<(PathBuf, PathBuf)> {
    let parent = std::path::absolute(dir)
        .with_context(|| format!("resolving the folder {}", dir.display()))?;
    let root = parent.join(name);
    if root.exists() {
        bail!(
            "{} already exists; pick another name or folder",
            root.display()
        );
    }
    Ok((parent, root))
}

/// The `src/lib.rs` template of `kind`.
fn template_of(kind: &str) -> anyhow::Result<&'static str> {
    match kind {
        "priority" => Ok(PRIORITY),
        "selection" => Ok(SELECTION),
        "gres" => Ok(GRES),
        "hres" => Ok(HRES),
        other => bail!("unknown plugin kind '{other}': expected priority, selection, gres or hres"),
    }
}

/// Refuses names cargo would refuse as a package name.
fn check_name(name: &str) -> anyhow::Result<()> {
    let starts_with_letter = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic());
    let allowed = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !starts_with_letter || !allowed {
        bail!(
            "crate name '{name}' must start with a letter and hold only letters, digits, '-' or '_'"
        );
    }
    Ok(())
}
