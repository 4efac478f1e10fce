//! Power saving keys through the slurm.conf importer and the TOML reader: every key, the
//! DEFAULT-line rules of power-save.md §1.2 and the refused exclusion states.

use sluice_cluster::slurm_conf::import_slurm_conf;
use sluice_cluster::{Cluster, Source, TimeLimit};

fn import(text: &str) -> Cluster {
    import_slurm_conf(Source::new("slurm.conf", text), None, None, None)
        .unwrap()
        .cluster
}

#[test]
fn every_power_key_imports() {
    let c = import(
        "SuspendProgram=/rec/suspend\nResumeProgram=/rec/resume\nResumeFailProgram=/rec/fail\n\
         SuspendTime=600\nSuspendTimeout=45\nResumeTimeout=INFINITE\nSuspendRate=5\nResumeRate=0\n\
         SuspendExcNodes=n[1-2]:1\nSuspendExcParts=p1\nSuspendExcStates=DOWN,EXTERNAL\n\
         JobRequeue=0\n\
         SlurmctldParameters=idle_on_node_suspend,power_save_interval=5,power_save_min_interval=2,max_powered_nodes=3\n\
         SchedulerParameters=requeue_on_resume_failure\n\
         NodeName=n[1-4] CPUs=1 State=CLOUD SuspendTime=30\n\
         PartitionName=p1 Nodes=n[1-2] SuspendTime=60 ResumeTimeout=120 SuspendTimeout=20 PowerDownOnIdle=YES\n\
         PartitionName=p2 Nodes=n[3-4] Default=YES\n",
    );
    let p = &c.power;
    assert_eq!(p.suspend_time, TimeLimit::Seconds(600));
    assert_eq!(
        (p.suspend_timeout, p.resume_timeout),
        (45, TimeLimit::Infinite)
    );
    assert_eq!((p.suspend_rate, p.resume_rate), (5, 0));
    assert_eq!(p.resume_fail_program.as_deref(), Some("/rec/fail"));
    assert_eq!(p.suspend_exc_node_groups(), [("n[1-2]", Some("1"))]);
    assert_eq!(p.suspend_exc_states, ["DOWN", "EXTERNAL"]);
    assert!(p.idle_on_node_suspend && p.requeue_on_resume_failure && !p.job_requeue);
    assert_eq!(
        (
            p.power_save_interval,
            p.power_save_min_interval,
            p.max_powered_nodes
        ),
        (5, 2, Some(3))
    );
    assert_eq!(c.nodes[0].suspend_time, Some(TimeLimit::Seconds(30)));
    let p1 = &c.partitions[0];
    assert_eq!(p1.suspend_time, Some(TimeLimit::Seconds(60)));
    assert_eq!(p1.power.resume_timeout, Some(TimeLimit::Seconds(120)));
    assert_eq!(p1.power.suspend_timeout, Some(20));
    assert!(p1.power.power_down_on_idle);
    assert!(!c.partitions[1].power.power_down_on_idle);
}

#[test]
fn partition_default_line_gives_timeouts_but_not_suspend_time_or_power_down_on_idle() {
    let c = import(
        "NodeName=DEFAULT SuspendTime=90\nNodeName=n[1-2] CPUs=1\n\
         PartitionName=DEFAULT SuspendTime=60 PowerDownOnIdle=YES ResumeTimeout=300 SuspendTimeout=40\n\
         PartitionName=p1 Nodes=n1\nPartitionName=p2 Nodes=n2 SuspendTime=INFINITE\n",
    );
    // Node SuspendTime does inherit NodeName=DEFAULT (read_config.c:738).
    assert_eq!(c.nodes[1].suspend_time, Some(TimeLimit::Seconds(90)));
    let (p1, p2) = (&c.partitions[0], &c.partitions[1]);
    assert_eq!(p1.suspend_time, None);
    assert!(!p1.power.power_down_on_idle);
    assert_eq!(p1.power.resume_timeout, Some(TimeLimit::Seconds(300)));
    assert_eq!(p1.power.suspend_timeout, Some(40));
    assert_eq!(p2.suspend_time, Some(TimeLimit::Infinite));
}

#[test]
fn toml_power_keys_round_trip_and_bad_states_are_refused() {
    let text = r#"
[power]
SuspendTime = 600
ResumeTimeout = "INFINITE"
power_save_min_interval = 3
max_powered_nodes = 2
requeue_on_resume_failure = true
SuspendExcStates = ["EXTERNAL"]

[power.Watts]
Busy = 300.0
Idle = 120.0
Booting = 150.0
PoweringDown = 100.0
Off = 5.0

[[nodes]]
NodeName = "c[1-2]"
CPUs = 1
State = "CLOUD"

[[partitions]]
PartitionName = "cloud"
Nodes = "c[1-2]"
Default = true
ResumeTimeout = 30
SuspendTimeout = 5
PowerDownOnIdle = true
"#;
    let c = Cluster::from_toml(Source::new("c.toml", text), None).unwrap();
    assert_eq!(c.power.resume_timeout, TimeLimit::Infinite);
    assert_eq!(c.power.max_powered_nodes, Some(2));
    assert_eq!(c.power.watts.unwrap().off, 5.0);
    let part = &c.partitions[0].power;
    assert_eq!(
        (
            part.resume_timeout,
            part.suspend_timeout,
            part.power_down_on_idle
        ),
        (Some(TimeLimit::Seconds(30)), Some(5), true)
    );
    let back = sluice_cluster::config::to_config_file(&c);
    let again = toml::to_string(&back).unwrap();
    assert!(again.contains("PowerDownOnIdle = true"), "{again}");

    let bad = text.replace("\"EXTERNAL\"", "\"PERFCTRS\"");
    let err = Cluster::from_toml(Source::new("c.toml", &bad), None).unwrap_err();
    assert!(err.to_string().contains("PERFCTRS"), "{err}");
    let negative = text.replace("Off = 5.0", "Off = -1.0");
    let err = Cluster::from_toml(Source::new("c.toml", &negative), None).unwrap_err();
    assert!(err.to_string().contains("watts"), "{err}");
}
