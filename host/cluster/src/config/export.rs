//! Writing a [`Cluster`] back as a cluster file: identical consecutive nodes share one `[[nodes]]`
//! table with a compressed hostlist, and device detail becomes `[[gres]]` tables.

use toml::Spanned;

use crate::model::{AccountingEnforce, AssocKind, Cluster, Gres, Node, TresLimits};

use super::schema::{
    AccountSpec, AssocLimitSpec, ConfigFile, CountValue, GresTable, NodeSpec, PartitionSpec,
    QosSpec, UserSpec,
};

/// The cluster file describing `cluster`, every default written out. HRES stay in resources.yaml.
pub fn to_config_file(cluster: &Cluster) -> ConfigFile {
    let groups = group_nodes(&cluster.nodes);
    let qos_name = |id: crate::QosId| Spanned::new(0..0, cluster.qos[id.index()].name.clone());
    ConfigFile {
        cluster_name: cluster.name.clone(),
        hres_file: None,
        licenses: cluster
            .licenses
            .iter()
            .map(|l| (l.name.clone(), l.count))
            .collect(),
        enforce: (cluster.enforce.flags() != AccountingEnforce::default().flags())
            .then(|| Spanned::new(0..0, cluster.enforce.flags())),
        create_missing_associations: cluster.enforce.create_missing_users,
        scheduler: cluster.scheduler.clone(),
        priority: cluster.priority.clone(),
        power: cluster.power.clone(),
        plugins: cluster.plugins.clone(),
        nodes: groups
            .iter()
            .map(|(expr, node)| node_spec(expr, node))
            .collect(),
        gres: groups
            .iter()
            .flat_map(|(expr, node)| gres_tables(expr, node))
            .collect(),
        partitions: cluster
            .partitions
            .iter()
            .map(|p| PartitionSpec {
                partition_name: Spanned::new(0..0, p.name.clone()),
                nodes: Spanned::new(0..0, names_of(cluster, &p.nodes)),
                priority_tier: p.priority_tier,
                priority_job_factor: p.priority_job_factor,
                max_time: p.max_time,
                default_time: p.default_time,
                default: p.default,
                max_nodes: p.max_nodes,
                suspend_time: p.suspend_time,
                qos: p.qos.map(qos_name),
                resume_timeout: p.power.resume_timeout,
                suspend_timeout: p.power.suspend_timeout,
                power_down_on_idle: p.power.power_down_on_idle,
                allow_accounts: p.access.allow_accounts.clone(),
                deny_accounts: p.access.deny_accounts.clone(),
                allow_groups: p.access.allow_groups.clone(),
                allow_qos: p.access.allow_qos.as_ref().map(|l| spanned_all(l)),
                deny_qos: spanned_all(&p.access.deny_qos),
                state: Some(Spanned::new(0..0, p.access.state.as_str().to_owned())),
                over_subscribe: Some(Spanned::new(0..0, p.access.oversubscribe.to_string())),
                def_mem_per_cpu: p.access.def_mem_per_cpu,
                max_mem_per_cpu: p.access.max_mem_per_cpu,
            })
            .collect(),
        qos: cluster
            .qos
            .iter()
            .map(|q| QosSpec {
                name: Spanned::new(0..0, q.name.clone()),
                priority: q.priority,
                usage_factor: q.usage_factor,
                flags: [
                    (q.no_decay, "NoDecay"),
                    (q.deny_on_limit, "DenyOnLimit"),
                    (q.over_part_qos, "OverPartQOS"),
                ]
                .into_iter()
                .filter(|(on, _)| *on)
                .map(|(_, name)| Spanned::new(0..0, name.to_owned()))
                .collect(),
                max_wall: q.limits.max_wall,
                max_jobs_per_user: q.limits.max_jobs_per_user,
                max_submit_jobs_per_user: q.limits.max_submit_jobs_per_user,
                max_cpus_per_user: None,
                max_nodes_per_job: None,
                grp_cpus: None,
                grp_jobs: q.limits.grp_jobs,
                grp_submit_jobs: q.limits.grp_submit_jobs,
                max_tres_per_job: tres_text(&q.limits.max_tres_per_job),
                max_tres_per_user: tres_text(&q.limits.max_tres_per_user),
                max_tres_mins_per_job: tres_text(&q.limits.max_tres_mins_per_job),
                grp_tres: tres_text(&q.limits.grp_tres),
                max_tres_per_node: tres_text(&q.limits.max_tres_per_node),
                grp_tres_mins: tres_text(&q.limits.grp_tres_mins),
                grp_tres_run_mins: tres_text(&q.limits.grp_tres_run_mins),
                grp_wall: q.limits.grp_wall,
            })
            .collect(),
        accounts: cluster
            .associations
            .iter()
            .skip(1)
            .filter(|a| !a.is_user())
            .map(|a| {
                let mut spec = AccountSpec::named(a.name());
                spec.parent = a
                    .parent
                    .map(|p| Spanned::new(0..0, cluster.associations[p.index()].name().to_owned()));
                (spec.fairshare, spec.raw_usage) = (a.shares, a.raw_usage);
                (spec.priority, spec.default_qos) = (a.priority, a.default_qos.map(qos_name));
                spec.set_limits(limit_spec(cluster, &a.limits));
                spec
            })
            .collect(),
        users: cluster
            .associations
            .iter()
            .filter_map(|a| match &a.kind {
                AssocKind::User(user) => {
                    let account = a.parent.map_or_else(String::new, |p| {
                        cluster.associations[p.index()].name().to_owned()
                    });
                    let mut spec = UserSpec::named(user, &account);
                    (spec.fairshare, spec.raw_usage) = (a.shares, a.raw_usage);
                    (spec.priority, spec.default_qos) = (a.priority, a.default_qos.map(qos_name));
                    spec.set_limits(limit_spec(cluster, &a.limits));
                    Some(spec)
                }
                AssocKind::Account(_) => None,
            })
            .collect(),
    }
}

/// An association's limits as the file writes them.
fn limit_spec(cluster: &Cluster, l: &crate::AssocLimits) -> AssocLimitSpec {
    AssocLimitSpec {
        max_jobs: l.max_jobs,
        max_submit_jobs: l.max_submit_jobs,
        max_wall: l.max_wall,
        max_tres: tres_text(&l.max_tres_per_job),
        max_tres_mins: tres_text(&l.max_tres_mins_per_job),
        grp_tres: tres_text(&l.grp_tres),
        grp_jobs: l.grp_jobs,
        grp_submit_jobs: l.grp_submit_jobs,
        max_tres_per_node: tres_text(&l.max_tres_per_node),
        grp_tres_mins: tres_text(&l.grp_tres_mins),
        grp_tres_run_mins: tres_text(&l.grp_tres_run_mins),
        grp_wall: l.grp_wall,
        qos: l.qos.as_ref().map(|list| {
            list.iter()
                .map(|q| Spanned::new(0..0, cluster.qos[q.index()].name.clone()))
                .collect()
        }),
    }
}

/// A TRES limit as the file writes it, none when nothing is limited.
fn tres_text(limits: &TresLimits) -> Option<Spanned<String>> {
    (!limits.is_empty()).then(|| Spanned::new(0..0, limits.to_string()))
}

fn spanned_all(names: &[String]) -> Vec<Spanned<String>> {
    names
        .iter()
        .map(|n| Spanned::new(0..0, n.clone()))
        .collect()
}

fn names_of(cluster: &Cluster, ids: &[crate::NodeId]) -> String {
    let names: Vec<&str> = ids
        .iter()
        .map(|id| cluster.nodes[id.index()].name.as_str())
        .collect();
    sluice_hostlist::compress(&names)
}

/// Runs of consecutive nodes equal in everything but their name (and device files, which differ only
/// by name in practice, so they are compared too), each with its compressed hostlist.
fn group_nodes(nodes: &[Node]) -> Vec<(String, &Node)> {
    let mut groups: Vec<(Vec<&str>, &Node)> = Vec::new();
    for node in nodes {
        match groups.last_mut() {
            Some((names, first)) if same_shape(first, node) => names.push(&node.name),
            _ => groups.push((vec![&node.name], node)),
        }
    }
    groups
        .into_iter()
        .map(|(names, node)| (sluice_hostlist::compress(&names), node))
        .collect()
}

fn same_shape(a: &Node, b: &Node) -> bool {
    Node {
        name: String::new(),
        ..a.clone()
    } == Node {
        name: String::new(),
        ..b.clone()
    }
}

fn node_spec(expr: &str, node: &Node) -> NodeSpec {
    let derived = node.cores() * u32::from(node.threads_per_core);
    NodeSpec {
        node_name: Spanned::new(0..0, expr.to_owned()),
        sockets: node.sockets,
        cores_per_socket: node.cores_per_socket,
        threads_per_core: node.threads_per_core,
        cpus: (node.cpus != derived).then_some(node.cpus),
        real_memory: node.real_memory_mb,
        features: node.features.clone(),
        weight: node.weight,
        gres: (!node.gres.is_empty()).then(|| Spanned::new(0..0, gres_string(&node.gres))),
        state: node.state,
        suspend_time: node.suspend_time,
    }
}

/// The `Gres=` string of a node.
pub fn gres_string(gres: &[Gres]) -> String {
    gres.iter()
        .map(|g| {
            let mut parts = vec![g.name.clone()];
            parts.extend(g.gres_type.clone());
            if g.no_consume {
                parts.push("no_consume".into());
            }
            parts.push(g.count.to_string());
            parts.join(":")
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// One `[[gres]]` table per run of devices sharing cores and links; flags ride on the first.
fn gres_tables(expr: &str, node: &Node) -> Vec<GresTable> {
    let mut tables = Vec::new();
    for gres in node
        .gres
        .iter()
        .filter(|g| !g.devices.is_empty() || !g.flags.is_empty())
    {
        let flags = (!gres.flags.is_empty()).then(|| {
            gres.flags
                .iter()
                .map(|f| f.as_str())
                .collect::<Vec<_>>()
                .join(",")
        });
        let mut runs: Vec<(Vec<&str>, &crate::GresDevice)> = Vec::new();
        for device in &gres.devices {
            match runs.last_mut() {
                Some((files, first))
                    if first.cores == device.cores && first.links == device.links =>
                {
                    files.push(&device.file)
                }
                _ => runs.push((vec![&device.file], device)),
            }
        }
        let join = |v: &[u32]| v.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
        for (i, (files, device)) in runs.iter().enumerate() {
            tables.push(GresTable {
                node_name: Some(expr.to_owned()),
                name: Spanned::new(0..0, gres.name.clone()),
                gres_type: gres.gres_type.clone(),
                file: Some(sluice_hostlist::compress(files)),
                count: None,
                cores: (!device.cores.is_empty()).then(|| join(&device.cores)),
                links: (!device.links.is_empty()).then(|| {
                    device
                        .links
                        .iter()
                        .map(i32::to_string)
                        .collect::<Vec<_>>()
                        .join(",")
                }),
                flags: if i == 0 { flags.clone() } else { None },
            });
        }
        if runs.is_empty() {
            tables.push(GresTable {
                node_name: Some(expr.to_owned()),
                name: Spanned::new(0..0, gres.name.clone()),
                gres_type: gres.gres_type.clone(),
                file: None,
                count: Some(CountValue::Number(gres.count)),
                cores: None,
                links: None,
                flags,
            });
        }
    }
    tables
}
