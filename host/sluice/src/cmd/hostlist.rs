//! `sluice hostlist`: expand, compress and sort Slurm hostlist expressions, like `scontrol show
//! hostnames`, `show hostlist` and `show hostlistsorted`.

use std::fmt::Write as _;
use std::io::Write as _;

use anyhow::Context;
use sluice_hostlist::Hostlist;

/// Arguments of `sluice hostlist`.
#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand)]
enum Command {
    /// Expand an expression into host names, one per line, in order (`scontrol show hostnames`).
    Expand {
        /// Hostlist expression, e.g. `node[01-04],gpu[1-2]`; several arguments are joined with commas.
        #[arg(required = true)]
        expr: Vec<String>,
        /// Print a JSON array instead.
        #[arg(long)]
        json: bool,
    },
    /// Compress names into an expression, keeping order and duplicates (`scontrol show hostlist`).
    Compress {
        /// Host names or expressions.
        #[arg(required = true)]
        names: Vec<String>,
        /// Print a JSON object with the expression and host count.
        #[arg(long)]
        json: bool,
    },
    /// Sort naturally, drop duplicates and compress (`scontrol show hostlistsorted`).
    Sort {
        /// Host names or expressions.
        #[arg(required = true)]
        names: Vec<String>,
        /// Print a JSON object with the expression and host count.
        #[arg(long)]
        json: bool,
    },
}

/// Runs `sluice hostlist`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let out = match args.command {
        Command::Expand { expr, json } => {
            let expr = expr.join(",");
            let list = parse(&expr, "expression")?;
            if json {
                format!(
                    "{}\n",
                    serde_json::to_string(&list.iter().collect::<Vec<_>>())?
                )
            } else {
                list.iter().fold(String::new(), |mut out, name| {
                    let _ = writeln!(out, "{name}");
                    out
                })
            }
        }
        Command::Compress { names, json } => render(&concat(&names)?, json),
        Command::Sort { names, json } => {
            let mut list = concat(&names)?;
            list.uniq();
            render(&list, json)
        }
    };
    // Written in one go so a closed pipe (`| head`) is an error to report, not a panic.
    std::io::stdout().write_all(out.as_bytes())?;
    Ok(())
}

fn parse(expr: &str, what: &str) -> anyhow::Result<Hostlist> {
    Hostlist::parse(expr).with_context(|| format!("invalid hostlist {what} `{expr}`"))
}

/// Every argument parsed as an expression, in order, into one list.
fn concat(args: &[String]) -> anyhow::Result<Hostlist> {
    let mut names = Vec::new();
    for (index, arg) in args.iter().enumerate() {
        names.extend(parse(arg, &format!("argument {}", index + 1))?.iter());
    }
    Ok(Hostlist::from_names(&names))
}

fn render(list: &Hostlist, json: bool) -> String {
    if json {
        format!(
            "{}\n",
            serde_json::json!({ "hostlist": list.to_string(), "count": list.len() })
        )
    } else {
        format!("{list}\n")
    }
}
