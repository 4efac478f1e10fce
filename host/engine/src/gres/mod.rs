//! Owns GRES device state: per node the configured devices, per job and step the devices held.
//!
//! GRES device state: per node the configured devices, per job and step the devices they hold.
//!
//! Nodes keep a bitmap (a holder per device) where gres.conf gives files, and counts where it does
//! not; a count-only GRES that has a policy gets unit indices so the policy can still pick (up to
//! [`node::MAX_UNITS`]). Jobs keep the request as written and one record per name and type, with
//! arrays indexed by the node's position in the allocation, as Slurm's GRES design guide lays out.

pub(crate) mod alloc;
pub mod cores;
mod env;
pub mod job;
pub mod node;
mod request;
pub(crate) mod step;

use sluice_policy::GresPolicy;

pub use job::{GresRecord, JobGres, StepGres};
pub use node::{DeviceState, GresOnNode, GresState, TypeCount};

/// A GRES configuration a policy refused at engine construction (its `node_config_load`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("gres/{name} refused the node configuration: {}", reasons.join("; "))]
pub struct GresConfigError {
    /// GRES name.
    pub name: String,
    /// One reason per refused node (or a broken answer).
    pub reasons: Vec<String>,
    /// The names of the nodes refused, in node order.
    pub nodes: Vec<String>,
}

/// Asks each policy to validate every node's configuration of its GRES name.
pub(crate) fn validate(
    state: &GresState,
    nodes: &[sluice_cluster::Node],
    policies: &mut [(String, Box<dyn GresPolicy + Send>)],
) -> Result<(), GresConfigError> {
    for (name, policy) in policies.iter_mut() {
        let Some(kind) = state.kinds().iter().position(|k| k == name) else {
            continue;
        };
        let (which, configs) = state.node_configs(kind, nodes);
        let answer = policy.validate(&configs);
        let answered = answer.len();
        let mut refused = Vec::new();
        let mut reasons = Vec::new();
        for (i, a) in answer.into_iter().enumerate() {
            if let Err(reason) = a {
                reasons.push(reason);
                refused.extend(which.get(i).map(|&n| nodes[n].name.clone()));
            }
        }
        if answered != configs.len() {
            reasons.push(format!("{answered} answers for {} nodes", configs.len()));
        }
        if !reasons.is_empty() {
            return Err(GresConfigError {
                name: name.clone(),
                reasons,
                nodes: refused,
            });
        }
    }
    Ok(())
}
