//! Generic resources on a node (`Gres=gpu:a100:4`) with optional per-device detail from gres.conf.

use serde::Serialize;

/// One GRES name and type on a node with its count and, when gres.conf gives files, its devices.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Gres {
    /// GRES name (`gpu`, `nic`, `mps`, `shard`, or a site name).
    pub name: String,
    /// GRES type (`a100`), if any.
    pub gres_type: Option<String>,
    /// Count on the node; K/M/G/T/P suffixes are already multiplied out (×1024ⁿ).
    pub count: u64,
    /// `no_consume`: allocations do not use it up.
    pub no_consume: bool,
    /// gres.conf `Flags`.
    pub flags: Vec<GresFlag>,
    /// Per-device detail; empty when only a count is known (a count-only GRES).
    pub devices: Vec<GresDevice>,
}

impl Gres {
    /// True when the GRES is tracked by count alone (no files, or `Flags=CountOnly`).
    pub fn count_only(&self) -> bool {
        self.devices.is_empty() || self.flags.contains(&GresFlag::CountOnly)
    }
}

/// One device of a file-backed GRES.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GresDevice {
    /// Global index on the node, in gres.conf order (what `SLURM_JOB_GPUS` reports).
    pub index: u32,
    /// Device file (`/dev/nvidia0`).
    pub file: String,
    /// Logical core indices the device is close to (`Cores`); empty means no affinity given.
    pub cores: Vec<u32>,
    /// Link counts to the other devices (`Links`), `-1` marking the device itself; empty when not given.
    pub links: Vec<i32>,
}

/// A gres.conf `Flags` value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GresFlag {
    /// Track counts only; load no plugin.
    CountOnly,
    /// Not allocated with `--exclusive` unless requested.
    Explicit,
    /// Shared GRES: one sharing device per job.
    OneSharing,
    /// Shared GRES: all sharing devices.
    AllSharing,
    /// Set NVIDIA environment variables.
    NvidiaGpuEnv,
    /// Set AMD environment variables.
    AmdGpuEnv,
    /// Set Intel environment variables.
    IntelGpuEnv,
    /// Set OpenCL environment variables.
    OpenclEnv,
    /// Set no GPU environment variables.
    NoGpuEnv,
    /// Use UUIDs in environment variables.
    EnvUuid,
}

impl GresFlag {
    /// Parses a gres.conf flag name, case-insensitively.
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text.to_ascii_lowercase().as_str() {
            "countonly" => Self::CountOnly,
            "explicit" => Self::Explicit,
            "one_sharing" => Self::OneSharing,
            "all_sharing" => Self::AllSharing,
            "nvidia_gpu_env" => Self::NvidiaGpuEnv,
            "amd_gpu_env" => Self::AmdGpuEnv,
            "intel_gpu_env" => Self::IntelGpuEnv,
            "opencl_env" => Self::OpenclEnv,
            "no_gpu_env" => Self::NoGpuEnv,
            "env_uuid" => Self::EnvUuid,
            _ => return None,
        })
    }

    /// gres.conf spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::CountOnly => "CountOnly",
            Self::Explicit => "explicit",
            Self::OneSharing => "one_sharing",
            Self::AllSharing => "all_sharing",
            Self::NvidiaGpuEnv => "nvidia_gpu_env",
            Self::AmdGpuEnv => "amd_gpu_env",
            Self::IntelGpuEnv => "intel_gpu_env",
            Self::OpenclEnv => "opencl_env",
            Self::NoGpuEnv => "no_gpu_env",
            Self::EnvUuid => "env_uuid",
        }
    }
}
