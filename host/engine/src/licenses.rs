//! Owns cluster licenses and HRES layers with their use, lent to the HRES plugin.
//!
//! Cluster licenses and HRES layers with their use, owned by the engine and lent to the HRES plugin.

use sluice_cluster::{Cluster, HresCount, HresMode as ConfigMode};
use sluice_policy::{Charge, Demand, HresLayer, HresMode, HresResource, NodeBitmap};

use crate::request::LicenseRequest;

/// Why a `-L` request cannot be accepted at submit time.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LicenseError {
    /// Neither a license nor an HRES resource has this name.
    #[error("unknown license or resource \"{0}\"")]
    Unknown(String),
    /// A variable the resource does not define.
    #[error("resource \"{resource}\" has no variable \"{variable}\"")]
    UnknownVariable {
        /// Resource name.
        resource: String,
        /// The variable asked for.
        variable: String,
    },
    /// More than exists in total, so the job could never run.
    #[error("{name}: {asked} requested, only {total} configured")]
    TooMany {
        /// License name.
        name: String,
        /// Count requested.
        asked: u64,
        /// Count configured.
        total: u64,
    },
    /// Slurm allows only one MODE_3 resource per job.
    #[error("only one HRes Mode 3 can be used per job")]
    TwoMode3,
}

/// A job's resolved `-L` request.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct LicenseDemand {
    /// Cluster licenses: (license index, count).
    pub licenses: Vec<(usize, u32)>,
    /// HRES demands for the plugin.
    pub hres: Vec<Demand>,
}

impl LicenseDemand {
    /// Whether the job asks for no license and no HRES.
    pub fn is_empty(&self) -> bool {
        self.licenses.is_empty() && self.hres.is_empty()
    }
}

/// License and HRES counts with what running jobs use.
#[derive(Clone, Debug)]
pub struct LicenseState {
    names: Vec<String>,
    total: Vec<u32>,
    used: Vec<u32>,
    resources: Vec<HresResource>,
    layers: Vec<HresLayer>,
}

impl LicenseState {
    /// Builds the counts from the cluster's `Licenses=` and resources.yaml.
    pub fn from_cluster(cluster: &Cluster) -> Self {
        let mut resources = Vec::new();
        let mut layers = Vec::new();
        for (r, res) in cluster.hres.iter().enumerate() {
            let offset = layers.len() as u32;
            resources.push(HresResource {
                name: res.name.clone(),
                mode: match res.mode {
                    ConfigMode::Mode1 => HresMode::Mode1,
                    ConfigMode::Mode2 => HresMode::Mode2,
                    ConfigMode::Mode3 => HresMode::Mode3,
                },
                variables: res
                    .variables
                    .iter()
                    .map(|v| (v.name.clone(), v.value as i64))
                    .collect(),
            });
            for layer in &res.layers {
                layers.push(HresLayer {
                    resource: r as u32,
                    count: match layer.count {
                        HresCount::Infinite => -1,
                        HresCount::Count(c) => i64::from(c),
                    },
                    base: layer.base_usage as i64,
                    used: 0,
                    nodes: layer
                        .nodes
                        .iter()
                        .map(|n| n.0)
                        .collect::<NodeBitmap>()
                        .words,
                    parent: layer.parent.map(|p| offset + p as u32),
                });
            }
        }
        Self {
            names: cluster.licenses.iter().map(|l| l.name.clone()).collect(),
            total: cluster.licenses.iter().map(|l| l.count).collect(),
            used: vec![0; cluster.licenses.len()],
            resources,
            layers,
        }
    }

    /// Resolves `-L` items into license counts and HRES demands, refusing what could never run.
    pub fn resolve(&self, requests: &[LicenseRequest]) -> Result<LicenseDemand, LicenseError> {
        let mut demand = LicenseDemand::default();
        for req in requests {
            if let Some(i) = self.names.iter().position(|n| *n == req.name) {
                if req.variable.is_some() {
                    return Err(LicenseError::Unknown(req.name.clone()));
                }
                if req.count > u64::from(self.total[i]) {
                    return Err(LicenseError::TooMany {
                        name: req.name.clone(),
                        asked: req.count,
                        total: u64::from(self.total[i]),
                    });
                }
                demand.licenses.push((i, req.count as u32));
            } else if let Some(r) = self.resources.iter().position(|res| res.name == req.name) {
                let count = match &req.variable {
                    None => req.count as i64,
                    Some(var) => self.resources[r]
                        .variables
                        .iter()
                        .find(|(n, _)| n == var)
                        .map(|(_, v)| *v)
                        .ok_or_else(|| LicenseError::UnknownVariable {
                            resource: req.name.clone(),
                            variable: var.clone(),
                        })?,
                };
                if self.resources[r].mode == HresMode::Mode3
                    && demand
                        .hres
                        .iter()
                        .any(|d| self.resources[d.resource as usize].mode == HresMode::Mode3)
                {
                    return Err(LicenseError::TwoMode3);
                }
                demand.hres.push(Demand {
                    resource: r as u32,
                    count,
                });
            } else {
                return Err(LicenseError::Unknown(req.name.clone()));
            }
        }
        Ok(demand)
    }

    /// License names in configuration order.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Index of a cluster license by name.
    pub fn license_index(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }

    /// Configured count of license `i`.
    pub fn total(&self, i: usize) -> u32 {
        self.total[i]
    }

    /// Count of license `i` held by running jobs.
    pub fn used(&self, i: usize) -> u32 {
        self.used[i]
    }

    /// Number of cluster licenses.
    pub fn license_count(&self) -> usize {
        self.names.len()
    }

    /// HRES resources, as the plugin sees them.
    pub fn hres_resources(&self) -> &[HresResource] {
        &self.resources
    }

    /// HRES layers with the use of running jobs.
    pub fn hres_layers(&self) -> &[HresLayer] {
        &self.layers
    }

    /// Takes licenses for a starting job.
    pub fn take(&mut self, licenses: &[(usize, u32)]) {
        for &(i, c) in licenses {
            self.used[i] += c;
        }
    }

    /// Gives back a job's licenses.
    pub fn give_back(&mut self, licenses: &[(usize, u32)]) {
        for &(i, c) in licenses {
            self.used[i] = self.used[i].saturating_sub(c);
        }
    }

    /// Commits checked HRES charges.
    pub fn charge_hres(&mut self, charges: &[Charge]) {
        for c in charges {
            self.layers[c.layer as usize].used += c.amount;
        }
    }

    /// Returns exactly what [`Self::charge_hres`] took.
    pub fn refund_hres(&mut self, charges: &[Charge]) {
        for c in charges {
            let layer = &mut self.layers[c.layer as usize];
            layer.used = (layer.used - c.amount).max(0);
        }
    }
}
