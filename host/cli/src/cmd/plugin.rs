//! `sluice plugin`: not built yet.

/// Arguments of `sluice plugin`.
#[derive(clap::Args)]
pub struct Args {}

/// Runs `sluice plugin`.
pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("sluice plugin is not built yet")
}
