//! Chooses GPUs inside a node: the requested type, devices close to the job's cores first, then
//! the lowest index (so a job's GPUs share a socket with its CPUs where possible).

use sluice_sdk::PickRequest;

/// The devices for one request; fewer than asked only if not enough of the type are free (the
/// host then refuses the answer rather than hand out the wrong type).
pub fn devices(req: &PickRequest) -> Vec<u32> {
    let job_cores = core_set(&req.cores);
    let mut free = req.free.clone();
    free.sort_unstable();
    free.dedup();
    let mut choices: Vec<(bool, u32)> = free
        .into_iter()
        .filter_map(|i| {
            let device = req.devices.iter().find(|d| d.index == i);
            let type_ok =
                req.type_name.is_empty() || device.is_some_and(|d| d.type_name == req.type_name);
            // No Cores= (or no job cores) means close to every core.
            let close = device.is_none_or(|d| {
                d.cores.is_empty()
                    || job_cores.is_empty()
                    || d.cores.iter().any(|&c| in_set(&job_cores, c))
            });
            type_ok.then_some((!close, i))
        })
        .collect();
    choices.sort_unstable();
    choices
        .into_iter()
        .take(req.count as usize)
        .map(|(_, i)| i)
        .collect()
}

fn core_set(cores: &[u32]) -> Vec<u64> {
    let mut set = Vec::new();
    for &c in cores {
        let w = c as usize / 64;
        if w >= set.len() {
            set.resize(w + 1, 0);
        }
        set[w] |= 1 << (c % 64);
    }
    set
}

fn in_set(set: &[u64], c: u32) -> bool {
    set.get(c as usize / 64)
        .is_some_and(|w| w & (1 << (c % 64)) != 0)
}
