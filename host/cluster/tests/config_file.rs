//! The sluice cluster file: defaults, round trips through `to_toml`, and located errors.

use sluice_cluster::{Cluster, NodeState, OverSubscribe, PluginKind, QosId, Source, TimeLimit};

fn load(text: &str) -> Result<Cluster, sluice_cluster::ConfigError> {
    Cluster::from_toml(Source::new("cluster.toml", text), None)
}

#[test]
fn an_almost_empty_file_gets_slurm_defaults() {
    let cluster = load("[[nodes]]\nNodeName = \"n[1-4]\"\n").unwrap();
    assert_eq!(cluster.name, "sluice");
    assert_eq!(cluster.nodes.len(), 4);
    let node = &cluster.nodes[3];
    assert_eq!(
        (
            node.sockets,
            node.cores_per_socket,
            node.threads_per_core,
            node.cpus
        ),
        (1, 1, 1, 1)
    );
    assert_eq!(
        (node.real_memory_mb, node.weight, node.state),
        (1, 1, NodeState::Unknown)
    );
    let s = &cluster.scheduler;
    assert_eq!(
        (
            s.default_queue_depth,
            s.partition_job_depth,
            s.sched_interval,
            s.max_sched_time
        ),
        (100, 0, 60, 2)
    );
    assert_eq!(
        (
            s.bf_interval,
            s.bf_resolution,
            s.bf_window,
            s.bf_max_job_test
        ),
        (30, 60, 1440, 500)
    );
    assert_eq!(
        (s.bf_max_job_user, s.bf_max_job_part, s.bf_continue),
        (0, 0, false)
    );
    assert_eq!(s.effective_bf_max_time(), 30);
    let p = &cluster.priority;
    assert_eq!((p.priority_weight_age, p.priority_weight_fairshare), (0, 0));
    assert_eq!(
        (
            p.priority_max_age,
            p.priority_decay_half_life,
            p.priority_calc_period
        ),
        (604_800, 604_800, 300)
    );
    assert!(!p.priority_favor_small);
    let power = &cluster.power;
    assert_eq!(power.suspend_time, TimeLimit::Infinite);
    assert_eq!(
        (
            power.suspend_timeout,
            power.resume_timeout,
            power.resume_rate,
            power.suspend_rate
        ),
        (30, TimeLimit::Seconds(60), 300, 60)
    );
    for kind in PluginKind::ALL {
        let plugin = cluster.plugins.get(kind);
        assert_eq!(
            plugin.plugin,
            sluice_cluster::model::plugins::default_plugin(kind)
        );
        assert_eq!(plugin.memory_limit_mb, 64);
        assert_eq!(plugin.fuel_per_call, 2_000_000_000);
    }
    assert_eq!(cluster.associations.len(), 1, "only root");
}

#[test]
fn the_demo_round_trips_through_its_printed_form() {
    let demo = Cluster::demo();
    let printed = demo.to_toml();
    let reloaded = load(&printed).unwrap();
    assert_eq!(
        Cluster {
            hres: Vec::new(),
            ..demo.clone()
        },
        reloaded,
        "printed:\n{printed}"
    );
    assert!(printed.contains("NodeName = \"node[25-32]\""), "{printed}");
    assert!(
        printed.contains("bf_max_job_test = 500"),
        "defaults are written out:\n{printed}"
    );
    assert!(printed.contains("File = \"/dev/nvidia[2-3]\""), "{printed}");
}

#[test]
fn plugin_settings_stay_a_free_form_table() {
    let text = "[plugins.priority]\nplugin = \"basic\"\nfuel_per_call = 5\n[plugins.priority.settings]\nfavor = \"small\"\nweights = [1, 2]\n[plugins.selection]\nplugin = \"/opt/site/select.wasm\"\n";
    let cluster = load(text).unwrap();
    assert_eq!(cluster.plugins.priority.plugin, "basic");
    assert_eq!(cluster.plugins.priority.fuel_per_call, 5);
    assert_eq!(
        cluster.plugins.priority.settings["favor"].as_str(),
        Some("small")
    );
    assert_eq!(
        cluster.plugins.selection.source(),
        sluice_cluster::PluginSource::Wasm("/opt/site/select.wasm")
    );
}

#[test]
fn accounts_form_a_tree_with_users_and_raw_usage() {
    let cluster = Cluster::demo();
    let physics = cluster.account_id("physics").unwrap();
    let astro = cluster.account_id("astro").unwrap();
    assert_eq!(cluster.associations[astro.index()].parent, Some(physics));
    let alice = cluster.user_assoc("alice", "physics").unwrap();
    assert_eq!(cluster.associations[alice.index()].raw_usage, 7_200_000.0);
    assert!(cluster.associations[alice.index()].is_user());
    let root_children: Vec<&str> = cluster.associations[0]
        .children
        .iter()
        .map(|c| cluster.associations[c.index()].name())
        .collect();
    assert_eq!(root_children, ["physics", "chemistry", "biology"]);
    let parented = load("[[accounts]]\nAccount = \"a\"\nFairshare = \"parent\"\n").unwrap();
    assert_eq!(
        parented.associations[1].shares,
        sluice_cluster::Shares::Parent
    );
}

/// Each fixture starts with `# expect line N column C: words`.
#[test]
fn every_bad_cluster_file_is_rejected_where_it_says() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/bad_toml");
    let mut checked = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let header = text
            .lines()
            .next()
            .unwrap()
            .strip_prefix("# expect line ")
            .unwrap();
        let (position, words) = header.split_once(": ").unwrap();
        let (line, column) = position.split_once(" column ").unwrap();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let err = Cluster::from_toml(Source::new(&name, &text), None).expect_err(&name);
        let message = err.to_string();
        assert!(
            message.starts_with(&format!("{name}:{line}:{column}: ")),
            "{message}"
        );
        assert!(
            message.contains(words),
            "{name}: `{message}` lacks `{words}`"
        );
        assert!(!message.ends_with('.'), "{message}");
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} fixtures");
}

#[test]
fn load_reads_the_hres_file_next_to_the_cluster_file_and_fails_without_side_effects() {
    let dir = std::env::temp_dir().join(format!("sluice-cluster-load-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (toml, yaml) = Cluster::demo_sources();
    std::fs::write(dir.join("cluster.toml"), toml).unwrap();
    std::fs::write(dir.join("resources.yaml"), yaml).unwrap();
    let loaded = Cluster::load(&dir.join("cluster.toml")).unwrap();
    assert_eq!(loaded, Cluster::demo());
    std::fs::write(
        dir.join("resources.yaml"),
        "- resource: x\n  mode: MODE_9\n  layers: []\n",
    )
    .unwrap();
    let err = Cluster::load(&dir.join("cluster.toml")).unwrap_err();
    assert!(
        err.to_string()
            .contains("resources.yaml:2:3: found mode `MODE_9`"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn limits_and_partition_access_keys_load_round_trip_and_are_located_when_wrong() {
    let text = r#"AccountingStorageEnforce = ["limits"]
CreateMissingAssociations = true

[[nodes]]
NodeName = "n[1-4]"

[[partitions]]
PartitionName = "p"
Nodes = "ALL"
AllowAccounts = ["physics"]
AllowQos = ["high"]
State = "DOWN"
OverSubscribe = "EXCLUSIVE"
DefMemPerCPU = 1000

[[qos]]
Name = "high"
Flags = ["DenyOnLimit", "OverPartQOS"]
MaxTRESPerJob = "cpu=64,gres/gpu=4"
GrpTRES = "mem=1T"
MaxCPUsPerUser = 32
GrpSubmitJobs = 100

[[accounts]]
Account = "physics"
MaxJobs = 4
GrpTRES = "cpu=128"
MaxWall = "1-00:00:00"

[[users]]
User = "alice"
Account = "physics"
MaxSubmitJobs = 10
"#;
    let c = load(text).unwrap();
    assert!(c.enforce.limits && c.enforce.associations && !c.enforce.qos);
    assert!(c.enforce.create_missing_users);
    let p = &c.partitions[0];
    assert_eq!(p.access.state, sluice_cluster::PartitionState::Down);
    assert_eq!(p.access.allow_qos, Some(vec!["high".to_owned()]));
    let high = &c.qos[0];
    assert!(high.deny_on_limit && high.over_part_qos);
    assert_eq!(high.limits.max_tres_per_job.cpu, Some(64));
    assert_eq!(
        high.limits.max_tres_per_user.cpu,
        Some(32),
        "MaxCPUsPerUser"
    );
    assert_eq!(high.limits.grp_tres.mem_mb, Some(1024 * 1024));
    let physics = &c.associations[c.account_id("physics").unwrap().index()];
    assert_eq!(physics.limits.max_jobs, Some(4));
    assert_eq!(physics.limits.max_wall, Some(TimeLimit::Seconds(86_400)));
    let alice = c.user_assoc("alice", "physics").unwrap();
    assert_eq!(
        c.associations[alice.index()].limits.max_submit_jobs,
        Some(10)
    );
    assert_eq!(load(&c.to_toml()).unwrap(), c);

    let bad = |from: &str, to: &str| load(&text.replace(from, to)).unwrap_err().to_string();
    assert!(
        bad("\"EXCLUSIVE\"", "\"FORCE:99\"")
            .starts_with("cluster.toml:13:18: found OverSubscribe = \"FORCE:99\""),
        "{}",
        bad("\"EXCLUSIVE\"", "\"FORCE:99\"")
    );
    let shares = |mode: &str| {
        load(&text.replace("\"EXCLUSIVE\"", mode))
            .unwrap()
            .partitions[0]
            .access
            .oversubscribe
    };
    assert_eq!(shares("\"FORCE\""), OverSubscribe::Force(4));
    assert_eq!(shares("\"yes:2\""), OverSubscribe::Yes(2));
    assert!(bad("\"DOWN\"", "\"SIDEWAYS\"").starts_with("cluster.toml:12:10:"));
    assert!(bad("cpu=64", "cpus=64").starts_with("cluster.toml:19:18:"));
    assert!(bad("[\"high\"]", "[\"low\"]").contains("QOS `low`"));
    assert!(bad("[\"limits\"]", "[\"strict\"]").starts_with("cluster.toml:1:28:"));
}

#[test]
fn time_and_use_limits_license_tres_and_qos_lists_load_and_round_trip() {
    let text = r#"
[[nodes]]
NodeName = "n[1-4]"

[[partitions]]
PartitionName = "p"
Nodes = "ALL"

[[qos]]
Name = "normal"

[[qos]]
Name = "high"
Flags = ["NoDecay"]
MaxTRESPerNode = "cpu=16,gres/gpu=2"
GrpTRESMins = "cpu=6000,license/MatLab=60"
GrpTRESRunMins = "cpu=1200"
GrpWall = "2-00:00:00"

[[accounts]]
Account = "physics"
QOS = ["normal", "high"]
DefaultQOS = "high"
GrpTRESMins = "cpu=100"
GrpWall = 90
MaxTRESPerNode = "mem=4G"
GrpTRESRunMins = "license/MatLab=10"

[[users]]
User = "alice"
Account = "physics"
QosLevel = ["normal"]
DefaultQOS = "normal"
"#;
    let c = load(text).unwrap();
    let high = &c.qos[1].limits;
    assert_eq!(high.max_tres_per_node.cpu, Some(16));
    assert_eq!(high.max_tres_per_node.gres, vec![("gpu".to_owned(), 2)]);
    assert_eq!(high.grp_tres_mins.licenses, vec![("MatLab".to_owned(), 60)]);
    assert_eq!(high.grp_tres_run_mins.cpu, Some(1200));
    assert_eq!(high.grp_wall, Some(TimeLimit::Seconds(2 * 86_400)));
    let physics = &c.associations[c.account_id("physics").unwrap().index()];
    assert_eq!(physics.limits.qos, Some(vec![QosId(0), QosId(1)]));
    assert_eq!(physics.limits.grp_wall, Some(TimeLimit::Seconds(90 * 60)));
    assert_eq!(physics.limits.max_tres_per_node.mem_mb, Some(4096));
    let alice = c.user_assoc("alice", "physics").unwrap();
    assert_eq!(
        c.associations[alice.index()].limits.qos,
        Some(vec![QosId(0)])
    );
    assert_eq!(load(&c.to_toml()).unwrap(), c);

    let bad = |from: &str, to: &str| load(&text.replace(from, to)).unwrap_err().to_string();
    let outside = bad("DefaultQOS = \"normal\"", "DefaultQOS = \"high\"");
    assert!(
        outside.starts_with("cluster.toml:33:15:") && outside.contains("QOS list"),
        "{outside}"
    );
    let unknown = bad("QosLevel = [\"normal\"]", "QosLevel = [\"low\"]");
    assert!(
        unknown.starts_with("cluster.toml:32:") && unknown.contains("QOS `low`"),
        "{unknown}"
    );
    let nameless = bad("license/MatLab=60", "license/=60");
    assert!(nameless.starts_with("cluster.toml:16:16:"), "{nameless}");
}

#[test]
fn max_array_size_defaults_to_slurms_and_is_bounded() {
    let base = "[[nodes]]\nNodeName = \"n1\"\n";
    assert_eq!(load(base).unwrap().scheduler.max_array_size, 1001);
    let set = load(&format!("[scheduler]\nMaxArraySize = 20\n{base}")).unwrap();
    assert_eq!(set.scheduler.max_array_size, 20);
    let e = load(&format!("[scheduler]\nMaxArraySize = 4000002\n{base}")).unwrap_err();
    assert!(e.to_string().contains("MaxArraySize"), "{e}");
    let imported = sluice_cluster::slurm_conf::import_slurm_conf(
        Source::new(
            "slurm.conf",
            "MaxArraySize=50\nNodeName=n1 CPUs=1\nPartitionName=p Nodes=n1\n",
        ),
        None,
        None,
        None,
    )
    .unwrap()
    .cluster;
    assert_eq!(imported.scheduler.max_array_size, 50);
}
