//! `sluice config`: not built yet.

/// Arguments of `sluice config`.
#[derive(clap::Args)]
pub struct Args {}

/// Runs `sluice config`.
pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("sluice config is not built yet")
}
