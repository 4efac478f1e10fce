//! The cgroup module on temporary directories laid out as cgroup filesystems: what it reads and
//! writes there, without root.

use std::fs;
use std::path::Path;

use sluice_api::{CgroupConfig, CgroupPlugin};

use super::detect::{self, Mount};
use super::*;

const MOUNTINFO: &str = "\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct
34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";

const SELF: &str = "\
9:name=systemd:/
4:memory:/svc/a
3:cpuset:/
2:cpu,cpuacct:/
0::/
";

#[test]
fn cgroup_mounts_and_the_process_place_in_each_are_read() {
    let m = detect::mounts(MOUNTINFO);
    assert_eq!(m.len(), 5, "{m:?}");
    assert_eq!(m[0].controllers, ["rw", "cpu", "cpuacct"]);
    assert_eq!(m[4].version, Version::V2);
    assert_eq!(
        detect::own_dir(SELF, &m[2]).unwrap(),
        Path::new("/sys/fs/cgroup/memory/svc/a")
    );
    assert_eq!(
        detect::own_dir(SELF, &m[0]).unwrap(),
        Path::new("/sys/fs/cgroup/cpu,cpuacct")
    );
    assert_eq!(
        detect::own_dir(SELF, &m[4]).unwrap(),
        Path::new("/sys/fs/cgroup/unified")
    );
    // A hierarchy mounted from below its root (a container's bind mount).
    let inner = Mount {
        root: "/svc".into(),
        ..m[2].clone()
    };
    assert_eq!(
        detect::own_dir(SELF, &inner).unwrap(),
        Path::new("/sys/fs/cgroup/memory/a")
    );
}

#[test]
fn a_daemon_names_its_directory_after_its_spool_alone() {
    let a = detect::base_name(Path::new("/var/lib/sluice/jobs"));
    assert_eq!(a, detect::base_name(Path::new("/var/lib/sluice/jobs")));
    assert_ne!(a, detect::base_name(Path::new("/tmp/other/jobs")));
    assert!(
        a.starts_with("sluice_") && a.len() == "sluice_".len() + 8,
        "{a}"
    );
}

/// A v1 layout under `root`: freezer and memory hierarchies, the process at their roots.
fn v1_mounts(root: &Path) -> Vec<Mount> {
    ["freezer", "memory", "cpuset", "devices"]
        .into_iter()
        .map(|c| {
            fs::create_dir_all(root.join(c)).unwrap();
            Mount {
                root: "/".into(),
                point: root.join(c),
                version: Version::V1,
                controllers: vec!["rw".into(), c.into()],
            }
        })
        .collect()
}

const SELF_V1: &str = "6:freezer:/\n5:devices:/\n4:memory:/\n3:cpuset:/\n0::/\n";

#[test]
fn v1_uses_the_freezer_and_memory_and_what_is_constrained_and_probes_them() {
    let tmp = tempfile::tempdir().unwrap();
    let mounts = v1_mounts(tmp.path());
    let cfg = CgroupConfig::default();
    let found = detect::choose(&cfg, &mounts, SELF_V1, "sluice_x");
    let h = found.hierarchy.unwrap();
    assert_eq!(h.version, Version::V1);
    let used: Vec<_> = h.bases.iter().flat_map(|b| b.controllers.clone()).collect();
    assert_eq!(used, [Controller::Freezer, Controller::Memory]);
    assert_eq!(h.bases[1].dir, tmp.path().join("memory/sluice_x"));
    // The probe left nothing behind.
    assert!(!tmp.path().join("memory/sluice_x").exists());
    let disabled = CgroupConfig {
        plugin: CgroupPlugin::Disabled,
        ..cfg
    };
    let off = detect::choose(&disabled, &mounts, SELF_V1, "sluice_x");
    assert!(off.hierarchy.unwrap_err().contains("disabled"));
}

#[test]
fn with_nothing_mounted_the_reason_says_so() {
    let found = detect::choose(&CgroupConfig::default(), &[], "", "sluice_x");
    let why = found.hierarchy.unwrap_err();
    assert!(why.contains("no cgroup v1 hierarchy"), "{why}");
    let v2 = CgroupConfig {
        plugin: CgroupPlugin::V2,
        ..CgroupConfig::default()
    };
    let why = detect::choose(&v2, &[], "", "sluice_x")
        .hierarchy
        .unwrap_err();
    assert!(why.contains("no cgroup v2"), "{why}");
}

#[test]
fn memory_limits_follow_slurms_allowed_and_minimum_ram_space() {
    let mut cfg = CgroupConfig {
        constrain_ram_space: true,
        allowed_ram_space: 150.0,
        ..CgroupConfig::default()
    };
    const MB: u64 = 1 << 20;
    let l = Limits::of(&cfg, &[0, 1], 100, &[]);
    assert_eq!(
        (l.memory, l.memory_soft, l.memory_swap),
        (Some(150 * MB), Some(100 * MB), None)
    );
    assert_eq!(l.cpus, None, "cores are not constrained by default");
    // MinRAMSpace is the floor.
    assert_eq!(Limits::of(&cfg, &[], 10, &[]).memory, Some(30 * MB));
    // No memory given: nothing to hold it to.
    assert_eq!(Limits::of(&cfg, &[], 0, &[]).memory, None);
    cfg.constrain_swap_space = true;
    cfg.allowed_swap_space = 50.0;
    cfg.constrain_cores = true;
    let l = Limits::of(&cfg, &[3], 100, &[]);
    assert_eq!(l.memory_swap, Some(200 * MB));
    assert_eq!(l.cpus, Some(vec![3]));
}

#[test]
fn allocation_cpu_ids_land_on_the_cpus_the_daemon_has() {
    assert_eq!(parse_list("0-3,8,10-11\n"), [0, 1, 2, 3, 8, 10, 11]);
    assert_eq!(parse_list(""), Vec::<u32>::new());
    assert_eq!(map_cpus(&[0, 1], &[0, 1, 2, 3]), "0,1");
    // A virtual node's CPU 5 on a 2-CPU machine is its CPU 1; 4 and 6 share CPU 0.
    assert_eq!(map_cpus(&[4, 5, 6], &[0, 1]), "0,1");
    assert_eq!(map_cpus(&[7], &[2, 3]), "3");
    assert_eq!(map_cpus(&[1], &[]), "");
}

fn v1_hierarchy(root: &Path) -> Hierarchy {
    let mounts = v1_mounts(root);
    fs::write(root.join("cpuset/cpuset.cpus"), "0-3\n").unwrap();
    fs::write(root.join("cpuset/cpuset.effective_cpus"), "0-3\n").unwrap();
    fs::write(root.join("cpuset/cpuset.mems"), "0\n").unwrap();
    // Not probed: a plain directory keeps the files a probe writes, so it cannot be removed.
    Hierarchy {
        version: Version::V1,
        bases: ["freezer", "memory", "cpuset"]
            .iter()
            .zip([Controller::Freezer, Controller::Memory, Controller::Cpuset])
            .map(|(d, c)| Base {
                dir: mounts
                    .iter()
                    .find(|m| m.point.ends_with(d))
                    .unwrap()
                    .point
                    .join("sluice_x"),
                controllers: vec![c],
            })
            .collect(),
    }
}

#[test]
fn a_v1_job_cgroup_gets_its_cpus_memory_and_a_batch_step() {
    let tmp = tempfile::tempdir().unwrap();
    let h = v1_hierarchy(tmp.path());
    let limits = Limits {
        cpus: Some(vec![5]),
        memory: Some(50 << 20),
        memory_soft: Some(40 << 20),
        ..Limits::default()
    };
    let cg = JobCgroup::new(h, (7, 0), limits);
    cg.create(BATCH_STEP).unwrap();
    let read = |p: &str| fs::read_to_string(tmp.path().join(p)).unwrap();
    // The base copies its parent's CPUs and memory nodes; the job gets CPU 5 % 4 = 1.
    assert_eq!(read("cpuset/sluice_x/cpuset.cpus").trim(), "0-3");
    assert_eq!(read("cpuset/sluice_x/job_7/cpuset.cpus"), "1");
    assert_eq!(read("cpuset/sluice_x/job_7/step_batch/cpuset.cpus"), "1");
    assert_eq!(
        read("cpuset/sluice_x/job_7/step_batch/cpuset.mems").trim(),
        "0"
    );
    assert_eq!(
        read("memory/sluice_x/job_7/memory.limit_in_bytes"),
        (50u64 << 20).to_string()
    );
    assert!(
        tmp.path()
            .join("freezer/sluice_x/job_7/step_batch")
            .is_dir()
    );
    assert_eq!(
        cg.procs_files(BATCH_STEP)[1],
        tmp.path()
            .join("memory/sluice_x/job_7/step_batch/cgroup.procs")
    );
    // Members are read from every cgroup of the job, steps included, once each.
    fs::write(
        tmp.path()
            .join("freezer/sluice_x/job_7/step_batch/cgroup.procs"),
        "10\n11\n",
    )
    .unwrap();
    fs::write(
        tmp.path()
            .join("memory/sluice_x/job_7/step_batch/cgroup.procs"),
        "11\n12\n",
    )
    .unwrap();
    assert_eq!(cg.pids(), [10, 11, 12]);
    fs::write(
        tmp.path().join("memory/sluice_x/job_7/memory.oom_control"),
        "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n",
    )
    .unwrap();
    // Each v1 cgroup counts its own processes' kills: the job's are the sum.
    fs::write(
        tmp.path()
            .join("memory/sluice_x/job_7/step_batch/memory.oom_control"),
        "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n",
    )
    .unwrap();
    assert_eq!(cg.oom_kills(), 3);
}

#[test]
fn a_v2_job_cgroup_enables_its_controllers_down_to_the_step_and_limits_memory() {
    let tmp = tempfile::tempdir().unwrap();
    let own = tmp.path();
    fs::write(own.join("cpuset.cpus.effective"), "0-1\n").unwrap();
    let h = Hierarchy {
        version: Version::V2,
        bases: vec![Base {
            dir: own.join("sluice_x"),
            controllers: vec![Controller::Memory, Controller::Cpuset],
        }],
    };
    let limits = Limits {
        cpus: Some(vec![2, 3]),
        memory: Some(50 << 20),
        memory_swap: Some(60 << 20),
        ..Limits::default()
    };
    let cg = JobCgroup::new(h, (3, 0), limits);
    fs::write(own.join("memory.swap.max"), "").unwrap();
    fs::create_dir_all(own.join("sluice_x/job_3")).unwrap();
    fs::write(own.join("sluice_x/job_3/memory.swap.max"), "max").unwrap();
    cg.create(BATCH_STEP).unwrap();
    let read = |p: &str| fs::read_to_string(own.join(p)).unwrap();
    for dir in ["", "sluice_x/", "sluice_x/job_3/"] {
        assert_eq!(
            read(&format!("{dir}cgroup.subtree_control")),
            "+memory +cpuset"
        );
    }
    assert!(
        !own.join("sluice_x/job_3/step_batch/cgroup.subtree_control")
            .exists()
    );
    assert_eq!(read("sluice_x/job_3/memory.max"), (50u64 << 20).to_string());
    assert_eq!(
        read("sluice_x/job_3/memory.swap.max"),
        (10u64 << 20).to_string()
    );
    assert_eq!(read("sluice_x/job_3/cpuset.cpus"), "0,1");
    fs::write(
        own.join("sluice_x/job_3/memory.events"),
        "low 0\nhigh 0\nmax 4\noom 1\noom_kill 1\noom_group_kill 0\n",
    )
    .unwrap();
    assert_eq!(cg.oom_kills(), 1);
}

#[test]
fn a_device_file_is_named_by_its_type_and_numbers() {
    assert_eq!(
        device_rule(Path::new("/dev/null")).as_deref(),
        Some("c 1:3")
    );
    assert_eq!(device_rule(Path::new("/etc/hostname")), None);
    assert_eq!(device_rule(Path::new("/no/such/device")), None);
}
