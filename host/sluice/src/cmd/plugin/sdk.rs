//! Finding the sluice SDK a scaffolded plugin crate depends on, and how its manifest names it.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

/// Where the SDK crate lives inside a sluice checkout.
const SDK_IN_CHECKOUT: &str = "sdk/rust";

/// The SDK a new plugin crate builds against.
pub struct Sdk {
    /// The `sluice-sdk` crate's folder, canonical.
    pub crate_dir: PathBuf,
    /// The checkout around it, canonical: its `rust-toolchain.toml` and `Cargo.lock` are the
    /// Rust release and dependency versions the SDK is tested with.
    pub checkout: PathBuf,
}

/// The SDK named by `given` (`--sdk` or `SLUICE_SDK`: a checkout or its `sdk/rust` folder),
/// else the first checkout above `crate_parent`, then above the current folder.
pub fn locate(given: Option<&Path>, crate_parent: &Path) -> anyhow::Result<Sdk> {
    if let Some(path) = given {
        let path = std::fs::canonicalize(path).with_context(|| {
            format!(
                "SDK {} (--sdk or SLUICE_SDK): no such folder",
                path.display()
            )
        })?;
        if is_sdk(&path) {
            let checkout = path.ancestors().nth(2).unwrap_or(&path).to_path_buf();
            return Ok(Sdk {
                crate_dir: path,
                checkout,
            });
        }
        if is_sdk(&path.join(SDK_IN_CHECKOUT)) {
            return Ok(Sdk {
                crate_dir: path.join(SDK_IN_CHECKOUT),
                checkout: path,
            });
        }
        bail!(
            "SDK {} (--sdk or SLUICE_SDK): neither a sluice checkout nor its {SDK_IN_CHECKOUT} folder (no Cargo.toml of the sluice-sdk crate there)",
            path.display()
        );
    }
    let cwd = std::env::current_dir().context("reading the current folder")?;
    let found = crate_parent
        .ancestors()
        .chain(cwd.ancestors())
        .find(|folder| is_sdk(&folder.join(SDK_IN_CHECKOUT)));
    let Some(checkout) = found else {
        let searched = if cwd == crate_parent {
            format!("{} is not", cwd.display())
        } else {
            format!(
                "neither {} nor {} is",
                crate_parent.display(),
                cwd.display()
            )
        };
        bail!(
            "no sluice SDK found: {searched} inside a sluice checkout; pass --sdk PATH or set \
             SLUICE_SDK to a sluice checkout (or its {SDK_IN_CHECKOUT} folder), e.g. \
             `sluice plugin new priority my-policy --sdk ~/src/sluice`"
        );
    };
    let checkout = std::fs::canonicalize(checkout)?;
    Ok(Sdk {
        crate_dir: checkout.join(SDK_IN_CHECKOUT),
        checkout,
    })
}

/// How the new crate at `crate_dir` names the SDK: relative when the two share a folder below
/// the filesystem root (moving that folder keeps the crate building), absolute otherwise (a
/// path through `/` would break as soon as either moved).
pub fn path_from(crate_dir: &Path, sdk: &Path) -> PathBuf {
    let shared = crate_dir
        .components()
        .zip(sdk.components())
        .take_while(|(a, b)| a == b)
        .count();
    if shared > 1 {
        pathdiff::diff_paths(sdk, crate_dir).unwrap_or_else(|| sdk.to_path_buf())
    } else {
        sdk.to_path_buf()
    }
}

/// Whether `folder` holds the manifest of the `sluice-sdk` crate.
fn is_sdk(folder: &Path) -> bool {
    #[derive(serde::Deserialize)]
    struct Manifest {
        package: Option<Package>,
    }
    #[derive(serde::Deserialize)]
    struct Package {
        name: String,
    }
    std::fs::read_to_string(folder.join("Cargo.toml"))
        .ok()
        .and_then(|text| toml::from_str::<Manifest>(&text).ok())
        .and_then(|m| m.package)
        .is_some_and(|p| p.name == "sluice-sdk")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_below_a_shared_folder_absolute_across_the_root() {
        assert_eq!(
            path_from(
                Path::new("/home/ann/policies/fifo"),
                Path::new("/home/ann/sluice/sdk/rust")
            ),
            Path::new("../../sluice/sdk/rust")
        );
        assert_eq!(
            path_from(
                Path::new("/home/ann/sluice/site/fifo"),
                Path::new("/home/ann/sluice/sdk/rust")
            ),
            Path::new("../../sdk/rust")
        );
        assert_eq!(
            path_from(Path::new("/tmp/fifo"), Path::new("/work/sluice/sdk/rust")),
            Path::new("/work/sluice/sdk/rust")
        );
    }
}
