//! Where each table and key of an imported cluster file came from, so that an error found in the
//! generated file is reported at the slurm.conf (or gres.conf) line that made it.

use crate::Location;
use crate::keyvalue::Pair;

/// The slurm.conf pairs behind each part of the generated file.
#[derive(Debug, Default)]
pub(crate) struct Origins {
    /// Per `[[nodes]]` table, its `NodeName=` line's pairs (defaults merged in).
    pub nodes: Vec<Vec<Pair>>,
    /// Per `[[partitions]]` table, its `PartitionName=` line's pairs (defaults merged in).
    pub partitions: Vec<Vec<Pair>>,
    /// Per `[[gres]]` table, its gres.conf line.
    pub gres: Vec<Location>,
    /// Every global `Key=Value` pair.
    pub globals: Vec<Pair>,
}

/// The table a line of the generated file sits in.
enum Table {
    Top,
    Section(String),
    Nodes(usize),
    Partitions(usize),
    Gres(usize),
    Other,
}

impl Origins {
    /// The slurm.conf location of what line `at.line` of the generated text says, if known.
    pub fn locate(&self, generated: &str, at: &Location) -> Option<Location> {
        let mut table = Table::Top;
        let (mut nodes, mut partitions, mut gres) = (0, 0, 0);
        let mut key = "";
        for (i, line) in generated.lines().enumerate().take(at.line) {
            let line = line.trim();
            if let Some(name) = line.strip_prefix("[[").and_then(|l| l.strip_suffix("]]")) {
                table = match name {
                    "nodes" => next(&mut nodes, Table::Nodes),
                    "partitions" => next(&mut partitions, Table::Partitions),
                    "gres" => next(&mut gres, Table::Gres),
                    _ => Table::Other,
                };
            } else if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
                table = Table::Section(name.to_owned());
            }
            if i + 1 == at.line {
                key = line.split('=').next().unwrap_or_default().trim();
            }
        }
        let find = |pairs: &[Pair]| {
            pairs
                .iter()
                .find(|p| same_key(&p.key, key))
                .or(pairs.first())
                .map(|p| p.value_at.clone())
        };
        match table {
            Table::Nodes(k) => self.nodes.get(k).and_then(|p| find(p)),
            Table::Partitions(k) => self.partitions.get(k).and_then(|p| find(p)),
            Table::Gres(k) => self.gres.get(k).cloned(),
            Table::Top => self.global(key),
            Table::Section(name) => {
                let via = match name.as_str() {
                    "scheduler" if key.starts_with("bf_") || key.contains("sched") => {
                        "SchedulerParameters"
                    }
                    "scheduler" if key == "MaxArraySize" => key,
                    "scheduler" => "SelectTypeParameters",
                    "plugins.selection" => "SelectType",
                    "plugins.priority" => "PriorityType",
                    _ => key,
                };
                self.global(via)
                    .or_else(|| self.global("SlurmctldParameters"))
            }
            Table::Other => None,
        }
    }

    fn global(&self, key: &str) -> Option<Location> {
        self.globals
            .iter()
            .rev()
            .find(|p| same_key(&p.key, key))
            .map(|p| p.value_at.clone())
    }
}

fn next(count: &mut usize, table: fn(usize) -> Table) -> Table {
    *count += 1;
    table(*count - 1)
}

/// A slurm.conf key and the cluster file's name for it (`Feature` and `Features`).
fn same_key(conf: &str, toml: &str) -> bool {
    let toml = toml.trim_matches('"');
    conf.eq_ignore_ascii_case(toml)
        || conf.eq_ignore_ascii_case(toml.trim_end_matches('s'))
        || (conf.eq_ignore_ascii_case("Shared") && toml == "OverSubscribe")
}
