//! The native plugin boundary: what a trusted in-house plugin library exports for `libloading`.
//!
//! Native plugins are unsandboxed and only sound when the library and the host were built by
//! the same rustc against the same version of this crate (Rust has no stable ABI); the host
//! compares [`NATIVE_ABI`] before it touches anything else. Panics are caught inside the
//! library by [`Guarded`], because unwinding from one Rust runtime into another aborts.

use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::{
    Charge, Demand, GresNodeConfig, GresPolicy, HresLayer, HresPolicy, HresResource, JobRequest,
    JobTable, NodeDevices, NodeTable, PickRequest, PlaceMode, Placement, PluginKind, Priorities,
    PriorityContext, PriorityPolicy, SelectionPolicy, Settings, Share,
};

/// The ABI string both sides must agree on. The layout number goes up whenever a type that
/// crosses this boundary changes shape while the crate version stays (2: `PriorityContext`
/// gained `cluster_version`; 3: `skip_factors`; 4: association
/// `priority` and the GRES node's `cores`; 5: the job request's `tasks_per_node`), so a
/// library built before is refused rather than misread.
pub const NATIVE_ABI: &str = concat!(
    "sluice-policy ",
    env!("CARGO_PKG_VERSION"),
    " layout 6",
    " built by ",
    env!("SLUICE_RUSTC_VERSION")
);

/// Symbol of `extern "C" fn(*mut usize) -> *const u8` returning [`NATIVE_ABI`] of the library.
pub const SYMBOL_ABI: &[u8] = b"sluice_native_abi";
/// Symbol of [`NewFn`].
pub const SYMBOL_NEW: &[u8] = b"sluice_native_new";

/// The host's log sink handed to a native plugin: level (0 error … 4 trace) and UTF-8 text.
pub type LogFn = extern "C" fn(level: u8, message: *const u8, len: usize);

/// `sluice_native_new`: builds the plugin from its settings; the host owns the returned box.
#[allow(improper_ctypes_definitions)]
pub type NewFn = unsafe extern "C" fn(settings: *const Settings, log: LogFn) -> *mut NativePlugin;

/// Signature of `sluice_native_abi`.
pub type AbiFn = unsafe extern "C" fn(len: *mut usize) -> *const u8;

/// A plugin object of one kind, as a native library hands it over.
pub enum NativePlugin {
    /// A priority policy.
    Priority(Box<dyn NativePriority>),
    /// A selection policy.
    Selection(Box<dyn NativeSelection>),
    /// A GRES device policy.
    Gres(Box<dyn NativeGres>),
    /// An HRES mode policy.
    Hres(Box<dyn NativeHres>),
}

impl NativePlugin {
    /// The kind of plugin inside.
    pub fn kind(&self) -> PluginKind {
        match self {
            Self::Priority(_) => PluginKind::Priority,
            Self::Selection(_) => PluginKind::Selection,
            Self::Gres(_) => PluginKind::Gres,
            Self::Hres(_) => PluginKind::Hres,
        }
    }
}

/// A panic inside a plugin, with its message.
pub type Panicked = String;

/// [`PriorityPolicy`] with panics turned into errors.
pub trait NativePriority: Send {
    /// See [`PriorityPolicy::compute`].
    fn compute(&mut self, ctx: &PriorityContext, jobs: &JobTable) -> Result<Priorities, Panicked>;
    /// See [`PriorityPolicy::shares`].
    fn shares(&mut self, ctx: &PriorityContext) -> Result<Vec<Share>, Panicked>;
}

/// [`SelectionPolicy`] with panics turned into errors.
pub trait NativeSelection: Send {
    /// See [`SelectionPolicy::begin_pass`].
    fn begin_pass(&mut self, nodes: &NodeTable) -> Result<(), Panicked>;
    /// See [`SelectionPolicy::place`].
    fn place(&mut self, req: &JobRequest, mode: PlaceMode) -> Result<Option<Placement>, Panicked>;
    /// See [`SelectionPolicy::release`].
    fn release(&mut self, job_id: u32, placement: &Placement) -> Result<(), Panicked>;
}

/// [`GresPolicy`] with panics turned into errors.
pub trait NativeGres: Send {
    /// See [`GresPolicy::validate`].
    fn validate(&mut self, nodes: &[GresNodeConfig]) -> Result<Vec<Result<(), String>>, Panicked>;
    /// See [`GresPolicy::pick`].
    fn pick(&mut self, requests: &[PickRequest]) -> Result<Vec<Vec<u32>>, Panicked>;
    /// See [`GresPolicy::env`].
    fn env(&mut self, alloc: &NodeDevices, step: bool) -> Result<Vec<(String, String)>, Panicked>;
}

/// [`HresPolicy`] with panics turned into errors.
pub trait NativeHres: Send {
    /// See [`HresPolicy::begin_pass`].
    fn begin_pass(
        &mut self,
        resources: &[HresResource],
        layers: &[HresLayer],
    ) -> Result<(), Panicked>;
    /// See [`HresPolicy::eligible`].
    fn eligible(&mut self, demands: &[Demand], candidates: &[u64]) -> Result<Vec<u64>, Panicked>;
    /// See [`HresPolicy::charge`].
    fn charge(
        &mut self,
        demands: &[Demand],
        nodes: &[u32],
    ) -> Result<Result<Vec<Charge>, String>, Panicked>;
}

/// Wraps a policy so every call catches panics where they happen.
pub struct Guarded<T>(pub T);

fn guard<R>(f: impl FnOnce() -> R) -> Result<R, Panicked> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|payload| {
        payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "panic with a non-text payload".into())
    })
}

impl<T: PriorityPolicy + Send> NativePriority for Guarded<T> {
    fn compute(&mut self, ctx: &PriorityContext, jobs: &JobTable) -> Result<Priorities, Panicked> {
        guard(|| self.0.compute(ctx, jobs))
    }
    fn shares(&mut self, ctx: &PriorityContext) -> Result<Vec<Share>, Panicked> {
        guard(|| self.0.shares(ctx))
    }
}

impl<T: SelectionPolicy + Send> NativeSelection for Guarded<T> {
    fn begin_pass(&mut self, nodes: &NodeTable) -> Result<(), Panicked> {
        guard(|| self.0.begin_pass(nodes))
    }
    fn place(&mut self, req: &JobRequest, mode: PlaceMode) -> Result<Option<Placement>, Panicked> {
        guard(|| self.0.place(req, mode))
    }
    fn release(&mut self, job_id: u32, placement: &Placement) -> Result<(), Panicked> {
        guard(|| self.0.release(job_id, placement))
    }
}

impl<T: GresPolicy + Send> NativeGres for Guarded<T> {
    fn validate(&mut self, nodes: &[GresNodeConfig]) -> Result<Vec<Result<(), String>>, Panicked> {
        guard(|| self.0.validate(nodes))
    }
    fn pick(&mut self, requests: &[PickRequest]) -> Result<Vec<Vec<u32>>, Panicked> {
        guard(|| self.0.pick(requests))
    }
    fn env(&mut self, alloc: &NodeDevices, step: bool) -> Result<Vec<(String, String)>, Panicked> {
        guard(|| self.0.env(alloc, step))
    }
}

impl<T: HresPolicy + Send> NativeHres for Guarded<T> {
    fn begin_pass(
        &mut self,
        resources: &[HresResource],
        layers: &[HresLayer],
    ) -> Result<(), Panicked> {
        guard(|| self.0.begin_pass(resources, layers))
    }
    fn eligible(&mut self, demands: &[Demand], candidates: &[u64]) -> Result<Vec<u64>, Panicked> {
        guard(|| self.0.eligible(demands, candidates))
    }
    fn charge(
        &mut self,
        demands: &[Demand],
        nodes: &[u32],
    ) -> Result<Result<Vec<Charge>, String>, Panicked> {
        guard(|| self.0.charge(demands, nodes))
    }
}

static LOGGER: std::sync::OnceLock<LogFn> = std::sync::OnceLock::new();

/// Installs the host's log sink for policies running natively (first call wins).
pub fn set_logger(log: LogFn) {
    let _ = LOGGER.set(log);
}

/// Sends a log line to the host's sink, if one is installed; dropped otherwise.
pub fn log(level: u8, message: &str) {
    if let Some(log) = LOGGER.get() {
        log(level, message.as_ptr(), message.len());
    }
}
