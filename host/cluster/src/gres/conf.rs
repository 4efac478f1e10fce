//! gres.conf lines: `NodeName=… Name=gpu Type=a100 File=/dev/nvidia[0-3] Cores=0-15 Flags=…`.

use crate::keyvalue::{Pair, parse_lines};
use crate::model::GresFlag;
use crate::{ConfigError, Location, Source};

use super::parse_count;

/// Shared GRES kinds whose Count is spread over their files instead of equal to the file count.
const SHARED_GRES: [&str; 2] = ["mps", "shard"];

/// One GRES line of gres.conf (or one `[[gres]]` table of a sluice config).
#[derive(Debug, Clone, PartialEq)]
pub struct GresConfLine {
    /// Nodes the line applies to (a hostlist expression); `None` means every node.
    pub node_name: Option<String>,
    /// GRES name.
    pub name: String,
    /// GRES type.
    pub gres_type: Option<String>,
    /// Device files, expanded from ranges.
    pub files: Vec<String>,
    /// Count the line contributes per node.
    pub count: u64,
    /// Logical cores the devices are close to.
    pub cores: Vec<u32>,
    /// Link counts to other devices.
    pub links: Vec<i32>,
    /// Flags.
    pub flags: Vec<GresFlag>,
    /// Where the line starts.
    pub at: Location,
}

/// Parses gres.conf. Lines holding only `AutoDetect=` (and maybe `NodeName=`) are accepted and skipped:
/// a simulator has no hardware to detect, so configured values are used as they are.
pub fn parse_gres_conf(source: Source<'_>) -> Result<Vec<GresConfLine>, ConfigError> {
    let mut lines = Vec::new();
    for line in parse_lines(source)? {
        if line.get("Name").is_none() && line.get("AutoDetect").is_some() {
            for pair in &line.pairs {
                check_key(pair)?;
            }
            continue;
        }
        let at = line.pairs[0].at.clone();
        lines.push(GresConfLine::from_pairs(&line.pairs, at)?);
    }
    Ok(lines)
}

fn check_key(pair: &Pair) -> Result<(), ConfigError> {
    const KEYS: [&str; 11] = [
        "AutoDetect",
        "Count",
        "Cores",
        "CPUs",
        "File",
        "Files",
        "Flags",
        "Links",
        "Name",
        "NodeName",
        "Type",
    ];
    if KEYS.iter().any(|k| k.eq_ignore_ascii_case(&pair.key)) {
        Ok(())
    } else {
        Err(ConfigError::invalid(
            pair.at.clone(),
            format!("unknown gres.conf key `{}`", pair.key),
            format!("one of {}", KEYS.join(", ")),
        ))
    }
}

impl GresConfLine {
    /// Builds a line from its pairs, validating every value.
    pub fn from_pairs(pairs: &[Pair], at: Location) -> Result<Self, ConfigError> {
        let mut line = Self {
            node_name: None,
            name: String::new(),
            gres_type: None,
            files: Vec::new(),
            count: 0,
            cores: Vec::new(),
            links: Vec::new(),
            flags: Vec::new(),
            at: at.clone(),
        };
        let mut count = None;
        for pair in pairs {
            check_key(pair)?;
            let value = pair.value.as_str();
            match pair.key.to_ascii_lowercase().as_str() {
                "nodename" => {
                    sluice_hostlist::expand_at_most(value, sluice_hostlist::MAX_HOSTS)
                        .map_err(|source| hostlist_error(pair, source))?;
                    line.node_name = Some(value.to_owned());
                }
                "name" => line.name = value.to_owned(),
                "type" => line.gres_type = Some(value.to_owned()),
                "file" | "files" => {
                    line.files = sluice_hostlist::expand_at_most(value, sluice_hostlist::MAX_HOSTS)
                        .map_err(|source| hostlist_error(pair, source))?
                }
                "count" => {
                    count = Some(parse_count(value).ok_or_else(|| {
                        ConfigError::invalid(
                            pair.value_at.clone(),
                            format!("Count=`{value}`"),
                            "a number with an optional K, M, G, T or P suffix",
                        )
                    })?)
                }
                "cores" | "cpus" => line.cores = parse_cores(pair)?,
                "links" => line.links = parse_links(pair)?,
                "flags" => line.flags = parse_flags(pair)?,
                _ => {}
            }
        }
        if line.name.is_empty() {
            return Err(ConfigError::invalid(
                at,
                "a GRES line without Name=",
                "Name=<gres name>",
            ));
        }
        let shared = SHARED_GRES.contains(&line.name.as_str());
        line.count = match (count, line.files.len()) {
            (Some(c), files) if files > 0 && !shared && c != files as u64 => {
                return Err(ConfigError::invalid(
                    at,
                    format!("Count={c} with {files} files"),
                    "Count equal to the number of File entries (or no Count)",
                ));
            }
            (Some(c), _) => c,
            (None, 0) => 1,
            (None, files) => files as u64,
        };
        if line.files.len() > 1024 {
            return Err(ConfigError::invalid(
                at,
                format!("{} files", line.files.len()),
                "at most 1024 files per node",
            ));
        }
        Ok(line)
    }
}

fn hostlist_error(pair: &Pair, source: sluice_hostlist::HostlistError) -> ConfigError {
    ConfigError::Hostlist {
        at: pair.value_at.clone(),
        expr: pair.value.clone(),
        source,
    }
}

fn parse_cores(pair: &Pair) -> Result<Vec<u32>, ConfigError> {
    let expr = format!("[{}]", pair.value);
    let numbers = sluice_hostlist::expand_at_most(&expr, sluice_hostlist::MAX_HOSTS)
        .map_err(|source| hostlist_error(pair, source))?;
    numbers
        .iter()
        .map(|n| n.parse::<u32>())
        .collect::<Result<_, _>>()
        .map_err(|_| {
            ConfigError::invalid(
                pair.value_at.clone(),
                format!("Cores=`{}`", pair.value),
                "core indices below 2^32",
            )
        })
}

fn parse_links(pair: &Pair) -> Result<Vec<i32>, ConfigError> {
    pair.value
        .split(',')
        .map(|part| part.trim().parse::<i32>())
        .collect::<Result<_, _>>()
        .map_err(|_| {
            ConfigError::invalid(
                pair.value_at.clone(),
                format!("Links=`{}`", pair.value),
                "a comma list of integers such as -1,0,2",
            )
        })
}

fn parse_flags(pair: &Pair) -> Result<Vec<GresFlag>, ConfigError> {
    pair.value
        .split(',')
        .map(|flag| {
            GresFlag::parse(flag.trim()).ok_or_else(|| {
                ConfigError::invalid(
                    pair.value_at.clone(),
                    format!("flag `{flag}`"),
                    "CountOnly, explicit, one_sharing, all_sharing, nvidia_gpu_env, amd_gpu_env, intel_gpu_env, opencl_env, no_gpu_env or env_uuid",
                )
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_files_cores_links_and_flags() {
        let text = "AutoDetect=off\nNodeName=node[25-32] Name=gpu Type=a100 File=/dev/nvidia[0-1] Cores=0-15 Links=-1,2\nName=nic Count=2K Flags=CountOnly\n";
        let lines = parse_gres_conf(Source::new("gres.conf", text)).unwrap();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].files, ["/dev/nvidia0", "/dev/nvidia1"]);
        assert_eq!(lines[0].count, 2);
        assert_eq!(lines[0].cores.len(), 16);
        assert_eq!(lines[0].links, [-1, 2]);
        assert_eq!(lines[1].count, 2048);
        assert_eq!(lines[1].flags, [GresFlag::CountOnly]);
    }

    #[test]
    fn rejects_unknown_keys_and_mismatched_counts() {
        let err = parse_gres_conf(Source::new("g", "Name=gpu Colour=red\n")).unwrap_err();
        assert_eq!(err.location().unwrap().column, 10);
        assert!(
            parse_gres_conf(Source::new("g", "Name=gpu File=/dev/nvidia[0-1] Count=3\n")).is_err()
        );
        assert!(
            parse_gres_conf(Source::new(
                "g",
                "Name=mps File=/dev/nvidia[0-1] Count=200\n"
            ))
            .is_ok()
        );
        assert!(parse_gres_conf(Source::new("g", "Name=gpu Cores=a-b\n")).is_err());
    }
}
