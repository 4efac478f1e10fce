//! The `sluice` binary: one command line for the daemon, the client commands, replay and plugin tools.

mod cmd;
mod logging;

use clap::{Parser, Subcommand};

// No `#[global_allocator]` here: native plugins return memory their system allocator made and
// the host frees it (ARCHITECTURE.md, Architecture Invariants).

/// sluice: a workload scheduler whose site policies are sandboxed WebAssembly components.
#[derive(Parser)]
#[command(name = "sluice", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the scheduler with the default plugin bundle on the embedded demo cluster.
    Demo(cmd::demo::Args),
    /// Expand, compress and sort Slurm hostlist expressions.
    Hostlist(cmd::hostlist::Args),
    /// Show, check and import cluster configuration.
    Config(cmd::config::Args),
    /// Replay a workload trace against a scheduler and plugin bundle.
    Sim(cmd::sim::Args),
    /// Scaffold, check, test and benchmark policy plugins; list, swap, roll back and shadow them live.
    Plugin(cmd::plugin::Args),
    /// Run the daemon: API on DIR/sluice.sock, journal and snapshots in DIR.
    Serve(cmd::serve::Args),
    /// Submit a batch script or --wrap command (sbatch; its options, read as sbatch reads them).
    #[command(disable_help_flag = true)]
    Submit(cmd::submit::Args),
    /// List jobs (squeue; `-h` is --noheader, as in squeue).
    #[command(disable_help_flag = true)]
    Queue(cmd::queue::Args),
    /// List partitions and node states (sinfo; `-h` is --noheader, as in sinfo).
    #[command(disable_help_flag = true)]
    Info(cmd::info::Args),
    /// Cancel or signal jobs (scancel).
    Cancel(cmd::cancel::Args),
    /// Hold pending jobs (scontrol hold).
    Hold(cmd::hold::Args),
    /// Release held jobs (scontrol release).
    Release(cmd::hold::Args),
    /// Show a job, node, partition, license, reservation or the config (scontrol show).
    Show(cmd::show::Args),
    /// Change a pending job or a node's state (scontrol update).
    Update(cmd::update::Args),
    /// A node booted: register it, as slurmd does (root or the daemon's user).
    Register(cmd::register::Args),
    /// Create an advance reservation (scontrol create reservation).
    Create(cmd::reservation::CreateArgs),
    /// Delete an advance reservation (scontrol delete reservation).
    Delete(cmd::reservation::DeleteArgs),
    /// Ended jobs from the accounting store (sacct).
    Acct(cmd::acct::Args),
    /// Pending jobs' priority factors (sprio).
    Prio(cmd::prio::Args),
    /// Fair-share tree (sshare -l).
    Share(cmd::share::Args),
    /// Scheduler statistics (sdiag).
    Sdiag(cmd::sdiag::Args),
    /// Run a job step's tasks across an allocation's nodes (srun; also `sluice srun`).
    #[command(alias = "srun", disable_help_flag = true)]
    Run(cmd::run::Args),
    /// Get an interactive allocation and run a command in it (salloc).
    #[command(disable_help_flag = true)]
    Salloc(cmd::salloc::Args),
    /// Reload the daemon's configuration (scontrol reconfigure).
    Reconfigure(cmd::reconfigure::Args),
    /// scontrol's words: show, update, hold, release, reconfigure, create, delete, show hostnames.
    Scontrol(cmd::scontrol::Args),
    /// Link Slurm's command names (sbatch, srun, squeue, scontrol, …) in DIR to this binary,
    /// which acts as each command when called by its name (`sluice squeue` works too).
    InstallLinks(cmd::install_links::Args),
    /// Match jobspecs against a Flux resource graph, as flux-sched's resource-query does.
    ResourceQuery(cmd::resource_query::Args),
    /// The per-job supervisor the daemon starts (slurmstepd); not for people to run.
    #[command(hide = true)]
    Supervise(cmd::supervise::Args),
    /// The resident process that forks the per-job supervisors; not for people to run.
    #[command(hide = true)]
    SpawnSupervisors(cmd::supervise::SpawnArgs),
}

fn main() -> std::process::ExitCode {
    // Like every Unix tool, a client command ends quietly when the reader of its output goes
    // away (`sluice queue | head`).
    // SAFETY: restoring the default disposition of SIGPIPE before any thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    // Called as `squeue` (a link), or as `sluice squeue`, it is `sluice queue`.
    let cli = Cli::parse_from(cmd::slurm_names::argv(std::env::args_os()));
    // The daemon and the processes it starts live on: a client that closes its socket mid-answer,
    // or a log reader that goes away, must cost them an EPIPE, never their life (a job started
    // from them gets the default back before its exec).
    if matches!(
        cli.command,
        Command::Serve(_) | Command::Supervise(_) | Command::SpawnSupervisors(_)
    ) {
        // SAFETY: setting a disposition before any thread exists.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_IGN);
        }
    }
    // The daemon sets up its own log (slurmctld's), from its options.
    if !matches!(cli.command, Command::Serve(_)) {
        logging::init_default();
    }
    let result = match cli.command {
        Command::Demo(args) => cmd::demo::run(args),
        Command::Hostlist(args) => cmd::hostlist::run(args),
        Command::Config(args) => cmd::config::run(args),
        Command::Sim(args) => cmd::sim::run(args),
        Command::Plugin(args) => cmd::plugin::run(args),
        Command::Serve(args) => cmd::serve::run(args),
        Command::Sdiag(args) => cmd::sdiag::run(args),
        Command::Submit(args) => cmd::submit::run(args),
        Command::Queue(args) => cmd::queue::run(args),
        Command::Info(args) => cmd::info::run(args),
        Command::Cancel(args) => cmd::cancel::run(args),
        Command::Hold(args) => cmd::hold::run(args, cmd::hold::Action::Hold),
        Command::Release(args) => cmd::hold::run(args, cmd::hold::Action::Release),
        Command::Show(args) => cmd::show::run(args),
        Command::Update(args) => cmd::update::run(args),
        Command::Register(args) => cmd::register::run(args),
        Command::Create(args) => cmd::reservation::create(args),
        Command::Delete(args) => cmd::reservation::delete(args),
        Command::Acct(args) => cmd::acct::run(args),
        Command::Prio(args) => cmd::prio::run(args),
        Command::Share(args) => cmd::share::run(args),
        Command::Run(args) => cmd::run::run(args),
        Command::Salloc(args) => cmd::salloc::run(args),
        Command::Reconfigure(args) => cmd::reconfigure::run(args),
        Command::Scontrol(args) => cmd::scontrol::run(args),
        Command::InstallLinks(args) => cmd::install_links::run(args),
        Command::ResourceQuery(args) => cmd::resource_query::run(args),
        Command::Supervise(args) => cmd::supervise::run(args),
        Command::SpawnSupervisors(args) => cmd::supervise::spawn(args),
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(err) => {
            // Written, not `eprintln!`ed: a closed stderr must not turn the error into a panic.
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "sluice: {err:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
