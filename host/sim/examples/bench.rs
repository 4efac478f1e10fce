//! Replay benchmark without the CLI: `cargo run --release -p sluice-sim --example bench -- TRACE [PROCS] [ROUNDS]`.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let trace = args.next().ok_or("usage: bench TRACE [PROCS] [ROUNDS]")?;
    let procs = args.next().map(|p| p.parse()).transpose()?;
    let rounds = args.next().map(|r| r.parse()).transpose()?.unwrap_or(20);
    let report = sluice_sim::bench::run(std::path::Path::new(&trace), procs, rounds)?;
    println!("{report}");
    Ok(())
}
