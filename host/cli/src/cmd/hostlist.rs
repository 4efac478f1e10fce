//! `sluice hostlist`: not built yet.

/// Arguments of `sluice hostlist`.
#[derive(clap::Args)]
pub struct Args {}

/// Runs `sluice hostlist`.
pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("sluice hostlist is not built yet")
}
