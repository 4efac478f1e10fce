//! Owns advance reservations of nodes, licenses and HRES for users or accounts.
//!
//! Advance reservations of nodes, licenses and HRES for users or accounts, honoured by both loops.

use serde::{Deserialize, Serialize};
use sluice_cluster::{Cluster, NodeId};
use sluice_policy::NodeBitmap;

use crate::licenses::LicenseState;

/// Why a reservation cannot be created.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReservationError {
    /// The name is taken.
    #[error("reservation \"{0}\" already exists")]
    Duplicate(String),
    /// End not after start.
    #[error("reservation \"{0}\" ends before it starts")]
    BadTimes(String),
    /// Neither users nor accounts were given.
    #[error("reservation \"{0}\" names no users or accounts")]
    NoOwners(String),
    /// A license item that names nothing known.
    #[error("reservation \"{name}\": invalid license \"{item}\"")]
    BadLicense {
        /// Reservation.
        name: String,
        /// The item.
        item: String,
    },
    /// A node name that is not configured.
    #[error("reservation \"{name}\": unknown node \"{node}\"")]
    UnknownNode {
        /// Reservation.
        name: String,
        /// The node.
        node: String,
    },
}

/// What `scontrol create reservation` takes (and what the daemon journals).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ReservationSpec {
    /// `ReservationName`.
    pub name: String,
    /// `StartTime`, Unix seconds.
    pub start: i64,
    /// `EndTime`, Unix seconds.
    pub end: i64,
    /// `Nodes`, by name.
    pub nodes: Vec<String>,
    /// `Licenses`: `lic:count` or, for HRES, `resource(hostlist):count` naming one layer.
    pub licenses: Vec<String>,
    /// `Users`.
    pub users: Vec<String>,
    /// `Accounts`.
    pub accounts: Vec<String>,
}

/// An advance reservation, resolved to indices.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Reservation {
    /// Name.
    pub name: String,
    /// Start, Unix seconds.
    pub start: i64,
    /// End, Unix seconds.
    pub end: i64,
    /// Reserved nodes.
    #[serde(skip)]
    pub nodes: NodeBitmap,
    /// Reserved cluster licenses: (license index, count).
    pub licenses: Vec<(usize, u32)>,
    /// Reserved HRES: (layer index, count).
    pub hres: Vec<(u32, i64)>,
    /// Users allowed in.
    pub users: Vec<String>,
    /// Accounts allowed in.
    pub accounts: Vec<String>,
}

impl Reservation {
    /// Resolves a spec against the cluster and its license and HRES tables.
    pub fn resolve(
        spec: &ReservationSpec,
        cluster: &Cluster,
        lic: &LicenseState,
    ) -> Result<Self, ReservationError> {
        if spec.end <= spec.start {
            return Err(ReservationError::BadTimes(spec.name.clone()));
        }
        if spec.users.is_empty() && spec.accounts.is_empty() {
            return Err(ReservationError::NoOwners(spec.name.clone()));
        }
        let mut nodes = NodeBitmap::with_capacity(cluster.nodes.len());
        for name in &spec.nodes {
            let expanded = sluice_hostlist::expand_at_most(name, sluice_hostlist::MAX_HOSTS)
                .unwrap_or_else(|_| vec![name.clone()]);
            for host in expanded {
                let id = cluster
                    .node_id(&host)
                    .ok_or_else(|| ReservationError::UnknownNode {
                        name: spec.name.clone(),
                        node: host.clone(),
                    })?;
                nodes.insert(id.0);
            }
        }
        let bad = |item: &str| ReservationError::BadLicense {
            name: spec.name.clone(),
            item: item.into(),
        };
        let mut licenses = Vec::new();
        let mut hres = Vec::new();
        for item in &spec.licenses {
            let (target, count) = item.rsplit_once(':').ok_or_else(|| bad(item))?;
            let count: u32 = count.parse().map_err(|_| bad(item))?;
            if let Some((resource, rest)) = target.split_once('(') {
                let hostlist = rest.strip_suffix(')').ok_or_else(|| bad(item))?;
                let want: NodeBitmap =
                    sluice_hostlist::expand_at_most(hostlist, sluice_hostlist::MAX_HOSTS)
                        .map_err(|_| bad(item))?
                        .iter()
                        .map(|h| {
                            cluster
                                .node_id(h)
                                .map(|NodeId(n)| n)
                                .ok_or_else(|| bad(item))
                        })
                        .collect::<Result<_, _>>()?;
                let r = lic
                    .hres_resources()
                    .iter()
                    .position(|r| r.name == resource)
                    .ok_or_else(|| bad(item))?;
                let layer = lic
                    .hres_layers()
                    .iter()
                    .position(|l| {
                        let nodes = NodeBitmap::from_words(l.nodes.clone());
                        l.resource == r as u32
                            && nodes.is_subset_of(&want)
                            && want.is_subset_of(&nodes)
                    })
                    .ok_or_else(|| bad(item))?;
                hres.push((layer as u32, i64::from(count)));
            } else {
                let i = lic.license_index(target).ok_or_else(|| bad(item))?;
                licenses.push((i, count));
            }
        }
        Ok(Self {
            name: spec.name.clone(),
            start: spec.start,
            end: spec.end,
            nodes,
            licenses,
            hres,
            users: spec.users.clone(),
            accounts: spec.accounts.clone(),
        })
    }

    /// Whether a job of `user` under `account` may run in the reservation.
    pub fn admits(&self, user: &str, account: &str) -> bool {
        self.users.iter().any(|u| u == user) || self.accounts.iter().any(|a| a == account)
    }

    /// Whether the reservation overlaps `[from, to)`.
    pub fn overlaps(&self, from: i64, to: i64) -> bool {
        self.start < to && from < self.end
    }

    /// Whether the reservation is in force at `t`.
    pub fn active_at(&self, t: i64) -> bool {
        self.start <= t && t < self.end
    }
}

/// Every advance reservation, in creation order.
#[derive(Clone, Debug, Default)]
pub struct Reservations {
    list: Vec<Reservation>,
}

impl Reservations {
    /// Adds a reservation; names are unique.
    pub fn add(&mut self, resv: Reservation) -> Result<usize, ReservationError> {
        if self.list.iter().any(|r| r.name == resv.name) {
            return Err(ReservationError::Duplicate(resv.name));
        }
        self.list.push(resv);
        Ok(self.list.len() - 1)
    }

    /// Removes a reservation by name; indices of the others stay (the slot becomes an empty window).
    pub fn remove(&mut self, name: &str) -> bool {
        match self
            .list
            .iter_mut()
            .find(|r| r.name == name && r.end > r.start)
        {
            Some(r) => {
                r.end = r.start;
                r.nodes = NodeBitmap::default();
                r.licenses.clear();
                r.hres.clear();
                true
            }
            None => false,
        }
    }

    /// Index of a live reservation by name.
    pub fn find(&self, name: &str) -> Option<usize> {
        self.list
            .iter()
            .position(|r| r.name == name && r.end > r.start)
    }

    /// One reservation by index.
    pub fn get(&self, i: usize) -> &Reservation {
        &self.list[i]
    }

    /// Every reservation.
    pub fn iter(&self) -> impl Iterator<Item = (usize, &Reservation)> {
        self.list
            .iter()
            .enumerate()
            .filter(|(_, r)| r.end > r.start)
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.iter().next().is_none()
    }

    /// Nodes a job outside reservation `own` may not use during `[from, to)`.
    pub fn excluded_nodes(&self, own: Option<usize>, from: i64, to: i64) -> NodeBitmap {
        let mut out = NodeBitmap::default();
        for (i, r) in self.iter() {
            if Some(i) != own && r.overlaps(from, to) {
                out.union_with(&r.nodes);
            }
        }
        out
    }

    /// Reservation start and end times inside `(from, to)`, where backfill's picture changes.
    pub fn boundaries(&self, from: i64, to: i64) -> Vec<i64> {
        let mut out: Vec<i64> = self
            .iter()
            .flat_map(|(_, r)| [r.start, r.end])
            .filter(|t| *t > from && *t < to)
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }
}
