//! Per-plugin resource limits: a memory cap and a fuel budget per call.

/// Limits applied to every instance of one plugin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Largest linear memory an instance may grow to, in bytes.
    pub memory_bytes: usize,
    /// Fuel (about one unit per wasm instruction) one call may consume.
    pub fuel_per_call: u64,
}

impl Limits {
    /// Default memory cap: 256 MiB holds a 100k-job queue's columns several times over.
    pub const DEFAULT_MEMORY_BYTES: usize = 256 << 20;
    /// Default fuel: about ten billion instructions, a few seconds of wasm, far above any sane
    /// policy over 100k jobs and 10k nodes and far below "forever".
    pub const DEFAULT_FUEL_PER_CALL: u64 = 10_000_000_000;
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            memory_bytes: Self::DEFAULT_MEMORY_BYTES,
            fuel_per_call: Self::DEFAULT_FUEL_PER_CALL,
        }
    }
}
