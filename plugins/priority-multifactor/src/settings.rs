//! The plugin's settings: Slurm's `PriorityWeight*`, `PriorityMaxAge`, `PriorityFavorSmall` and
//! `PriorityFlags`, with Slurm's defaults when a key is absent.

use sluice_sdk::{SettingValue, Settings};

/// `PriorityMaxAge` default: 7 days (Slurm uses `DEFAULT_PRIORITY_DECAY` for it).
pub const DEFAULT_MAX_AGE: i64 = 7 * 86_400;

/// Weights of the TRES factors (`PriorityWeightTRES`); doubles and may be negative, as in Slurm.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TresWeights {
    /// `CPU=`.
    pub cpu: f64,
    /// `Mem=`.
    pub mem: f64,
    /// `Node=`.
    pub node: f64,
    /// `GRES/gpu=`.
    pub gpu: f64,
}

impl TresWeights {
    /// Whether any TRES weight is set.
    pub fn any(&self) -> bool {
        self.cpu != 0.0 || self.mem != 0.0 || self.node != 0.0 || self.gpu != 0.0
    }
}

/// The factor weights; all 0 by default, as in Slurm.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Weights {
    /// `PriorityWeightAge`.
    pub age: f64,
    /// `PriorityWeightAssoc`.
    pub assoc: f64,
    /// `PriorityWeightFairshare`.
    pub fairshare: f64,
    /// `PriorityWeightJobSize`.
    pub jobsize: f64,
    /// `PriorityWeightPartition`.
    pub partition: f64,
    /// `PriorityWeightQOS`.
    pub qos: f64,
    /// `PriorityWeightTRES`.
    pub tres: TresWeights,
}

/// The `PriorityFlags` that change the arithmetic of this plugin.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flags {
    /// `SMALL_RELATIVE_TO_TIME`: job size is CPUs per minute of time limit.
    pub small_relative_to_time: bool,
    /// `ACCRUE_ALWAYS`: age counts from submission, ignoring begin time and dependencies.
    pub accrue_always: bool,
    /// `NO_NORMAL_ASSOC`: the association factor is the raw priority.
    pub no_normal_assoc: bool,
    /// `NO_NORMAL_PART`: the partition factor is the raw PriorityJobFactor.
    pub no_normal_part: bool,
    /// `NO_NORMAL_QOS`: the QOS factor is the raw QOS priority.
    pub no_normal_qos: bool,
    /// `NO_NORMAL_TRES`: TRES factors are raw counts.
    pub no_normal_tres: bool,
}

/// Cluster totals for the TRES the context does not carry (Slurm divides by the partition's).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TresTotals {
    /// Memory in MB (`cluster_tres.mem`).
    pub mem_mb: f64,
    /// GPUs (`cluster_tres.gres/gpu`).
    pub gpus: f64,
}

/// Everything the plugin reads from its settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Config {
    /// Factor weights.
    pub weights: Weights,
    /// `PriorityMaxAge` in seconds.
    pub max_age: i64,
    /// `PriorityFavorSmall`.
    pub favor_small: bool,
    /// `PriorityFlags`.
    pub flags: Flags,
    /// Denominators of the memory and GPU TRES factors; 0 makes the factor 0, as Slurm does for a
    /// partition without that TRES.
    pub tres_totals: TresTotals,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            weights: Weights::default(),
            max_age: DEFAULT_MAX_AGE,
            favor_small: false,
            flags: Flags::default(),
            tres_totals: TresTotals::default(),
        }
    }
}

/// Every key this plugin reads; anything else draws a warning.
const KNOWN_KEYS: &[&str] = &[
    "weight.age",
    "weight.assoc",
    "weight.fairshare",
    "weight.jobsize",
    "weight.partition",
    "weight.qos",
    "weight.tres.cpu",
    "weight.tres.mem",
    "weight.tres.node",
    "weight.tres.gres/gpu",
    "max_age",
    "favor_small",
    "flags",
    "cluster_tres.mem",
    "cluster_tres.gres/gpu",
];

impl Config {
    /// Reads the settings; returns the configuration and one warning per ignored or suspicious
    /// value, so that nothing is dropped silently.
    pub fn parse(settings: &Settings) -> (Self, Vec<String>) {
        let mut warnings = settings.unknown_keys(KNOWN_KEYS);
        let weights = Weights {
            age: weight(settings, "weight.age", &mut warnings),
            assoc: weight(settings, "weight.assoc", &mut warnings),
            fairshare: weight(settings, "weight.fairshare", &mut warnings),
            jobsize: weight(settings, "weight.jobsize", &mut warnings),
            partition: weight(settings, "weight.partition", &mut warnings),
            qos: weight(settings, "weight.qos", &mut warnings),
            tres: TresWeights {
                cpu: settings.number_or_warn("weight.tres.cpu", 0.0, &mut warnings),
                mem: settings.number_or_warn("weight.tres.mem", 0.0, &mut warnings),
                node: settings.number_or_warn("weight.tres.node", 0.0, &mut warnings),
                gpu: settings.number_or_warn("weight.tres.gres/gpu", 0.0, &mut warnings),
            },
        };
        let tres = weights.tres;
        let mut max_age = settings.number_or_warn("max_age", DEFAULT_MAX_AGE as f64, &mut warnings);
        if max_age < 0.0 {
            warnings.push(format!("max_age {max_age} is negative; using 0"));
            max_age = 0.0;
        }
        let favor_small = match settings.get("favor_small") {
            None => false,
            Some(SettingValue::Boolean(b)) => *b,
            Some(other) => {
                warnings.push(format!(
                    "favor_small must be a boolean, got {other:?}; using false"
                ));
                false
            }
        };
        let flags = match settings.get("flags") {
            None => Flags::default(),
            Some(SettingValue::Text(t)) => parse_flags(t, &mut warnings),
            Some(other) => {
                warnings.push(format!("flags must be text, got {other:?}; ignored"));
                Flags::default()
            }
        };
        let tres_totals = TresTotals {
            mem_mb: settings.number_or_warn("cluster_tres.mem", 0.0, &mut warnings),
            gpus: settings.number_or_warn("cluster_tres.gres/gpu", 0.0, &mut warnings),
        };
        if !flags.no_normal_tres {
            if tres.mem != 0.0 && tres_totals.mem_mb <= 0.0 {
                warnings.push(
                    "weight.tres.mem is set but cluster_tres.mem is not; the Mem factor stays 0"
                        .into(),
                );
            }
            if tres.gpu != 0.0 && tres_totals.gpus <= 0.0 {
                warnings.push("weight.tres.gres/gpu is set but cluster_tres.gres/gpu is not; the GPU factor stays 0".into());
            }
        }
        if weights.assoc != 0.0 {
            warnings.push("weight.assoc is set but the contract carries no association priority; ASSOC stays 0".into());
        }
        let config = Self {
            weights,
            max_age: max_age as i64,
            favor_small,
            flags,
            tres_totals,
        };
        (config, warnings)
    }
}

/// A `PriorityWeight*` value: Slurm stores these as uint32, so negatives become 0.
fn weight(settings: &Settings, key: &str, warnings: &mut Vec<String>) -> f64 {
    let v = settings.number_or_warn(key, 0.0, warnings);
    if !(0.0..=f64::from(u32::MAX)).contains(&v) {
        let clamped = v.clamp(0.0, f64::from(u32::MAX));
        warnings.push(format!(
            "{key} {v} is outside 0..=4294967295; using {clamped}"
        ));
        return clamped;
    }
    v
}

/// Parses a comma-separated `PriorityFlags` list, case-insensitively.
pub fn parse_flags(text: &str, warnings: &mut Vec<String>) -> Flags {
    let mut f = Flags::default();
    for flag in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        match flag.to_ascii_uppercase().as_str() {
            "SMALL_RELATIVE_TO_TIME" => f.small_relative_to_time = true,
            "ACCRUE_ALWAYS" => f.accrue_always = true,
            "NO_NORMAL_ASSOC" => f.no_normal_assoc = true,
            "NO_NORMAL_PART" => f.no_normal_part = true,
            "NO_NORMAL_QOS" => f.no_normal_qos = true,
            "NO_NORMAL_TRES" => f.no_normal_tres = true,
            "NO_NORMAL_ALL" => {
                f.no_normal_assoc = true;
                f.no_normal_part = true;
                f.no_normal_qos = true;
                f.no_normal_tres = true;
            }
            // Fair Tree is what this plugin computes, and Slurm's default since 19.05.
            "FAIR_TREE" => {}
            "NO_FAIR_TREE" | "DEPTH_OBLIVIOUS" => {
                warnings.push(format!("flag {flag}: classic fairshare is not implemented; Fair Tree is used"))
            }
            "INCR_ONLY" => warnings.push(format!(
                "flag {flag}: needs the previous priority, which a stateless policy does not see; ignored"
            )),
            "CALCULATE_RUNNING" => {
                warnings.push(format!("flag {flag}: the host chooses which jobs are ranked; ignored here"))
            }
            "MAX_TRES" | "MAX_TRES_GRES" => {
                warnings.push(format!("flag {flag}: changes billed usage, which the host accrues; ignored here"))
            }
            _ => warnings.push(format!("unknown PriorityFlags value `{flag}` ignored")),
        }
    }
    f
}
