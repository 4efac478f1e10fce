//! `sluice sim`: not built yet.

/// Arguments of `sluice sim`.
#[derive(clap::Args)]
pub struct Args {}

/// Runs `sluice sim`.
pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("sluice sim is not built yet")
}
