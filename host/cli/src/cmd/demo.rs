//! `sluice demo`: not built yet.

/// Arguments of `sluice demo`.
#[derive(clap::Args)]
pub struct Args {}

/// Runs `sluice demo`.
pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("sluice demo is not built yet")
}
