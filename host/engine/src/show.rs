//! Owns no state: the node and license reports of `sluice show`, like scontrol's.
//!
//! Reports for `sluice show node NAME` and `sluice show license`, like scontrol's, `Serialize` for `--json`.

use std::fmt;

use serde::Serialize;
use sluice_cluster::NodeId;
use sluice_policy::{HresMode, NodeBitmap};

use crate::engine::Engine;
use crate::gres::GresOnNode;
use crate::job::JobId;
use crate::power::NodePowerReport;

/// One device or unit of a GRES on a node and who holds it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DeviceRow {
    /// GRES name.
    pub name: String,
    /// Type, if any.
    pub gres_type: Option<String>,
    /// Global index on the node.
    pub index: u32,
    /// Device file (empty for a count-only unit).
    pub file: String,
    /// `Cores=` as a range list, empty when not given.
    pub cores: String,
    /// Job holding it.
    pub job: Option<JobId>,
}

/// `scontrol show node NAME`: state, CPUs, memory and GRES configured and used, per device.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NodeReport {
    /// `NodeName`.
    pub node_name: String,
    /// `State` (IDLE, MIXED, …).
    pub state: String,
    /// `CPUTot`.
    pub cpu_tot: u32,
    /// `CPUAlloc`.
    pub cpu_alloc: u32,
    /// `RealMemory`, MB.
    pub real_memory: u64,
    /// `AllocMem`, MB.
    pub alloc_mem: u64,
    /// `AvailableFeatures`.
    pub features: Vec<String>,
    /// `Gres=`: `name[:type]:count` per configured type.
    pub gres: String,
    /// `GresUsed=`: `name[:type]:count(IDX:…)` per type, device indices where tracked.
    pub gres_used: String,
    /// Every tracked device with its holder.
    pub devices: Vec<DeviceRow>,
    /// Jobs on the node.
    pub jobs: Vec<JobId>,
    /// `Reason`.
    pub reason: Option<String>,
    /// Power: scontrol's full `State=` (`IDLE+CLOUD+POWERED_DOWN`), sinfo's symbol state,
    /// `LastBusyTime`, `SuspendTime` and why power saving last acted on the node.
    pub power: NodePowerReport,
}

/// One `scontrol show license` record: a cluster license or one HRES layer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LicenseReport {
    /// `LicenseName`.
    pub license_name: String,
    /// `Total`: the count minus the layer's base; `None` is INFINITE.
    pub total: Option<u64>,
    /// `Used` by running jobs.
    pub used: u64,
    /// `Reserved` by advance reservations in force now, beyond what their jobs use.
    pub reserved: u64,
    /// `Free`; `None` when INFINITE.
    pub free: Option<u64>,
    /// Static base consumption of the layer (and, in MODE_3, its children); 0 for a license.
    pub base: u64,
    /// `Nodes` of an HRES layer, as a hostlist.
    pub nodes: Option<String>,
    /// `Mode` of an HRES layer (MODE_1, MODE_2, MODE_3).
    pub mode: Option<String>,
}

impl Engine {
    /// The `show node` report of a node by name, or `None` if there is no such node.
    pub fn node_report(&self, name: &str) -> Option<NodeReport> {
        let id = self.cluster.node_id(name)?;
        let i = id.index();
        let t = self.nodes.table();
        let rt = self.nodes.node(id);
        let mut gres = Vec::new();
        let mut used = Vec::new();
        let mut devices = Vec::new();
        for g in self.gres.node(i).iter().filter(|g| g.count() > 0) {
            for ty in &g.types {
                let label = label(&g.name, ty.gres_type.as_deref());
                gres.push(format!("{label}:{}", ty.count));
                let held: Vec<u32> = g
                    .devices
                    .iter()
                    .filter(|d| d.job.is_some() && d.gres_type == ty.gres_type)
                    .map(|d| d.index)
                    .collect();
                used.push(if g.has_devices() {
                    let idx = if held.is_empty() {
                        "N/A".to_string()
                    } else {
                        ranges(&held)
                    };
                    format!("{label}:{}(IDX:{idx})", ty.alloc)
                } else {
                    format!("{label}:{}", ty.alloc)
                });
            }
            devices.extend(device_rows(g));
        }
        Some(NodeReport {
            node_name: rt.name.clone(),
            state: self.nodes.state_name(id),
            cpu_tot: t.cpus[i],
            cpu_alloc: t.cpus[i] - t.free_cpus[i],
            real_memory: t.memory_mb[i],
            alloc_mem: t.memory_mb[i] - t.free_memory_mb[i],
            features: rt.features.clone(),
            gres: or_null(gres),
            gres_used: or_null(used),
            devices,
            jobs: rt.jobs.clone(),
            reason: rt.reason.clone(),
            power: self.node_power_report(id),
        })
    }

    /// The `show license` report: every cluster license, then every HRES layer in configuration order.
    pub fn license_report(&self) -> Vec<LicenseReport> {
        let now = self.clock.now();
        let mut out = Vec::new();
        for i in 0..self.lic.license_count() {
            let total = u64::from(self.lic.total(i));
            let used = u64::from(self.lic.used(i));
            let reserved = u64::from(self.lic.total(i).saturating_sub(self.lic.used(i)))
                - u64::from(self.fit().license_free(None, i, now, now + 1));
            out.push(LicenseReport {
                license_name: self.lic.names()[i].clone(),
                total: Some(total),
                used,
                reserved,
                free: Some(total.saturating_sub(used + reserved)),
                base: 0,
                nodes: None,
                mode: None,
            });
        }
        let held = self.fit().hres_layers_for(None, now, now + 1);
        let names: Vec<&str> = self.cluster.nodes.iter().map(|n| n.name.as_str()).collect();
        for (l, layer) in self.lic.hres_layers().iter().enumerate() {
            let res = &self.lic.hres_resources()[layer.resource as usize];
            let used = layer.used.max(0) as u64;
            let reserved = (held[l].used - layer.used).max(0) as u64;
            let total = (!layer.is_infinite()).then(|| (layer.count - layer.base).max(0) as u64);
            let hosts: Vec<&str> = NodeBitmap::from_words(layer.nodes.clone())
                .iter()
                .filter_map(|n| names.get(NodeId(n).index()).copied())
                .collect();
            out.push(LicenseReport {
                license_name: res.name.clone(),
                total,
                used,
                reserved,
                free: total.map(|t| t.saturating_sub(used + reserved)),
                base: layer.base.max(0) as u64,
                nodes: Some(sluice_hostlist::compress(&hosts)),
                mode: Some(
                    match res.mode {
                        HresMode::Mode1 => "MODE_1",
                        HresMode::Mode2 => "MODE_2",
                        HresMode::Mode3 => "MODE_3",
                    }
                    .into(),
                ),
            });
        }
        out
    }
}

impl fmt::Display for NodeReport {
    /// scontrol's layout, one `Key=Value` group per line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "NodeName={} State={}", self.node_name, self.power.state)?;
        writeln!(
            f,
            "   CPUAlloc={} CPUTot={} RealMemory={} AllocMem={}",
            self.cpu_alloc, self.cpu_tot, self.real_memory, self.alloc_mem
        )?;
        writeln!(f, "   AvailableFeatures={}", self.features.join(","))?;
        writeln!(f, "   Gres={}", self.gres)?;
        writeln!(f, "   GresUsed={}", self.gres_used)?;
        let busy = self
            .power
            .last_busy
            .map_or_else(|| "Unknown".to_string(), |t| t.to_string());
        let suspend = self
            .power
            .suspend_time
            .map_or_else(|| "INFINITE".to_string(), |t| t.to_string());
        writeln!(f, "   LastBusyTime={busy} SuspendTime={suspend}")?;
        if let Some(r) = &self.reason {
            writeln!(f, "   Reason={r}")?;
        }
        if let Some(why) = &self.power.why {
            writeln!(f, "   PowerReason={why}")?;
        }
        Ok(())
    }
}

impl fmt::Display for LicenseReport {
    /// scontrol's layout: `LicenseName=… Total=… Used=… Free=… Reserved=… Remote=no`, plus the layer's nodes and mode.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let num = |v: Option<u64>| v.map_or("INFINITE".to_string(), |v| v.to_string());
        writeln!(f, "LicenseName={}", self.license_name)?;
        write!(
            f,
            "    Total={} Used={} Free={} Reserved={} Remote=no",
            num(self.total),
            self.used,
            num(self.free),
            self.reserved
        )?;
        if let (Some(nodes), Some(mode)) = (&self.nodes, &self.mode) {
            write!(f, "\n    Nodes={nodes} Mode={mode}")?;
        }
        writeln!(f)
    }
}

fn label(name: &str, gres_type: Option<&str>) -> String {
    match gres_type {
        Some(t) => format!("{name}:{t}"),
        None => name.to_string(),
    }
}

fn or_null(items: Vec<String>) -> String {
    if items.is_empty() {
        "(null)".into()
    } else {
        items.join(",")
    }
}

fn device_rows(g: &GresOnNode) -> Vec<DeviceRow> {
    g.devices
        .iter()
        .map(|d| DeviceRow {
            name: g.name.clone(),
            gres_type: d.gres_type.clone(),
            index: d.index,
            file: d.file.clone(),
            cores: ranges(&d.cores),
            job: d.job,
        })
        .collect()
}

/// `0-2,5` for [0, 1, 2, 5], as Slurm prints bitmaps.
pub fn ranges(values: &[u32]) -> String {
    let mut v = values.to_vec();
    v.sort_unstable();
    v.dedup();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let mut j = i;
        while j + 1 < v.len() && v[j + 1] == v[j] + 1 {
            j += 1;
        }
        out.push(if i == j {
            v[i].to_string()
        } else {
            format!("{}-{}", v[i], v[j])
        });
        i = j + 1;
    }
    out.join(",")
}

#[cfg(test)]
mod tests {
    #[test]
    fn ranges_join_runs() {
        assert_eq!(super::ranges(&[5, 0, 1, 2, 7, 8]), "0-2,5,7-8");
        assert_eq!(super::ranges(&[]), "");
    }
}
