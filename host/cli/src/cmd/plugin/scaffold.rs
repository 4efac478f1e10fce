//! `sluice plugin new`: writes a plugin crate from the templates in `sdk/template`.

use std::path::Path;

use anyhow::{Context, bail};

const CARGO_TOML: &str = include_str!("../../../../../sdk/template/Cargo.toml.in");
const PRIORITY: &str = include_str!("../../../../../sdk/template/priority.rs.in");
const SELECTION: &str = include_str!("../../../../../sdk/template/selection.rs.in");

/// Where the SDK this binary was built with lives; the scaffold depends on it by path.
fn sdk_path() -> String {
    std::env::var("SLUICE_SDK_PATH")
        .unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/../../sdk/rust").to_string())
}

/// Writes `<dir>/<name>/` with a Cargo.toml and a src/lib.rs for a policy of `kind`.
pub fn new(kind: &str, name: &str, dir: &Path) -> anyhow::Result<()> {
    let source = match kind {
        "priority" => PRIORITY,
        "selection" => SELECTION,
        "gres" | "hres" => bail!(
            "no template for {kind} yet: copy plugins/{} from the sluice repository and rename it",
            if kind == "gres" {
                "gres-count"
            } else {
                "hres-modes"
            }
        ),
        other => bail!("unknown plugin kind {other:?}: expected priority or selection"),
    };
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        bail!("crate name {name:?} must be letters, digits, '-' or '_'");
    }
    let root = dir.join(name);
    if root.exists() {
        bail!(
            "{} already exists; pick another name or folder",
            root.display()
        );
    }
    let sdk = std::fs::canonicalize(sdk_path()).with_context(|| {
        format!(
            "cannot find the sluice SDK at {}; set SLUICE_SDK_PATH",
            sdk_path()
        )
    })?;
    let fill = |t: &str| {
        t.replace("{{name}}", name)
            .replace("{{kind}}", kind)
            .replace("{{sdk_path}}", &sdk.display().to_string())
    };
    std::fs::create_dir_all(root.join("src"))?;
    std::fs::write(root.join("Cargo.toml"), fill(CARGO_TOML))?;
    std::fs::write(root.join("src/lib.rs"), fill(source))?;
    println!("created {kind} plugin {}", root.display());
    println!("  test:   cd {} && cargo test", root.display());
    println!("  build:  cargo build --release --target wasm32-wasip2");
    println!(
        "  check:  sluice plugin check target/wasm32-wasip2/release/{}.wasm",
        name.replace('-', "_")
    );
    Ok(())
}
