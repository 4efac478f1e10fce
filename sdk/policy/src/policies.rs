//! The policies an engine consults: one of each kind, behind the contract's traits.

use crate::{GresPolicy, HresPolicy, PriorityPolicy, SelectionPolicy};

/// The policies the engine consults; the runtime hands in component-backed ones, tests native
/// ones.
pub struct Policies {
    /// Job priority.
    pub priority: Box<dyn PriorityPolicy + Send>,
    /// Node selection.
    pub selection: Box<dyn SelectionPolicy + Send>,
    /// HRES mode logic; without one, jobs asking for HRES are refused at submit.
    pub hres: Option<Box<dyn HresPolicy + Send>>,
    /// GRES device logic per GRES name (`gpu` → gres/gpu, `nic` → a count-only policy). A name
    /// without a policy is tracked by the host alone: devices by lowest index, no environment.
    pub gres: Vec<(String, Box<dyn GresPolicy + Send>)>,
}
