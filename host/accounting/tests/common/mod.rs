//! What both stores' tests share: sample jobs and the checks every store must pass.

use sluice_accounting::{AccountingStore, AcctJob, AcctStep, Filter, schema};

/// Text values as a filter's list.
fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// An ended job with everything filled in.
pub fn job(id: u64, user: &str, account: &str, state: &str, end: i64) -> AcctJob {
    AcctJob {
        job_id: id,
        array_job_id: id.is_multiple_of(2).then_some(id - 1),
        array_task_id: id.is_multiple_of(2).then_some(3),
        name: format!("job{id}"),
        user: user.into(),
        uid: 1000 + id as u32,
        account: account.into(),
        partition: "batch".into(),
        qos: "normal".into(),
        state: state.into(),
        exit_code: if state == "FAILED" { 3 } else { 0 },
        signal: if state == "CANCELLED" { 15 } else { 0 },
        submit: end - 100,
        eligible: end - 90,
        start: Some(end - 60),
        end,
        elapsed: 60,
        time_limit: Some(3600),
        req_tres: "cpu=2,mem=1000M,node=1".into(),
        alloc_tres: "cpu=2,mem=1000M,node=1".into(),
        nodes: "n[1-2]".into(),
        nnodes: 2,
        ncpus: 2,
        cpu_time: 120,
        work_dir: "/home/x".into(),
        restarts: 1,
        reason: (state == "TIMEOUT").then(|| "TimeLimit".into()),
        steps: vec![
            AcctStep {
                step_id: 0,
                name: "hostname".into(),
                state: "COMPLETED".into(),
                exit_code: 0,
                start: end - 50,
                end: end - 40,
            },
            AcctStep {
                step_id: 1,
                name: "false".into(),
                state: "FAILED".into(),
                exit_code: 1,
                start: end - 30,
                end: end - 20,
            },
        ],
    }
}

fn ids(jobs: &[AcctJob]) -> Vec<u64> {
    jobs.iter().map(|j| j.job_id).collect()
}

/// Every store: migrated to the current version, jobs read back field for field, rewrites
/// replace, and each filter selects what sacct's would.
pub fn store_contract(store: &mut dyn AccountingStore) {
    assert_eq!(store.schema_version().unwrap(), schema::VERSION);
    let jobs = vec![
        job(1, "ann", "phys", "COMPLETED", 1000),
        job(2, "bob", "chem", "FAILED", 2000),
        job(3, "ann", "chem", "TIMEOUT", 3000),
        job(4, "cat", "phys", "CANCELLED", 4000),
    ];
    store.store(&jobs).unwrap();
    let all = store.query(&Filter::default(), 100).unwrap();
    assert_eq!(all, jobs, "every field and step reads back as written");

    // A job stored again (its exit arrived later) replaces the first row, steps included.
    let mut again = jobs[3].clone();
    again.exit_code = 0;
    again.signal = 9;
    again.steps.truncate(1);
    store.store(std::slice::from_ref(&again)).unwrap();
    let got = store
        .query(
            &Filter {
                job_ids: vec![4],
                ..Filter::default()
            },
            100,
        )
        .unwrap();
    assert_eq!(got, vec![again]);

    let mut q = |f: Filter| ids(&store.query(&f, 100).unwrap());
    assert_eq!(
        q(Filter {
            users: strings(&["ann"]),
            ..Filter::default()
        }),
        vec![1, 3]
    );
    assert_eq!(
        q(Filter {
            accounts: strings(&["chem"]),
            states: strings(&["FAILED", "TIMEOUT"]),
            ..Filter::default()
        }),
        vec![2, 3]
    );
    // -S: ended at or after; -E: eligible at or before.
    assert_eq!(
        q(Filter {
            start: Some(2000),
            ..Filter::default()
        }),
        vec![2, 3, 4]
    );
    assert_eq!(
        q(Filter {
            start: Some(1500),
            end: Some(2910),
            ..Filter::default()
        }),
        vec![2, 3]
    );
    assert_eq!(
        q(Filter {
            job_ids: vec![3, 1, 99],
            ..Filter::default()
        }),
        vec![1, 3]
    );
    assert!(
        q(Filter {
            users: strings(&["nobody-here"]),
            ..Filter::default()
        })
        .is_empty()
    );
    // A limited answer still carries the steps of the jobs it returns.
    let first = store.query(&Filter::default(), 2).unwrap();
    assert_eq!(ids(&first), vec![1, 2]);
    assert_eq!(first[1].steps.len(), 2);
}

/// A user name or state that looks like SQL is a value, never part of the statement.
pub fn values_never_become_sql(store: &mut dyn AccountingStore) {
    let mut j = job(10, "x' OR '1'='1", "a", "COMPLETED", 10);
    j.name = "'); DROP TABLE jobs; --".into();
    store.store(std::slice::from_ref(&j)).unwrap();
    let f = Filter {
        users: vec!["x' OR '1'='1".into()],
        ..Filter::default()
    };
    assert_eq!(store.query(&f, 10).unwrap(), vec![j]);
    let f = Filter {
        users: vec!["' OR ''='".into()],
        ..Filter::default()
    };
    assert!(store.query(&f, 10).unwrap().is_empty());
}

/// sacct's other selections: `--name`, `-r`, `-q`, `-N` (a run matches on any of its nodes).
pub fn selections_contract(store: &mut dyn AccountingStore) {
    let mut a = job(21, "ann", "phys", "COMPLETED", 5000);
    a.name = "sim".into();
    a.partition = "gpu".into();
    a.qos = "high".into();
    a.nodes = "g[1-2]".into();
    let mut b = job(22, "ann", "phys", "COMPLETED", 5000);
    b.name = "post".into();
    b.nodes = "n[7-9],g3".into();
    let mut c = job(23, "ann", "phys", "CANCELLED", 5000);
    c.name = "sim".into();
    c.qos = "high".into();
    c.nodes = String::new();
    store.store(&[a, b, c]).unwrap();
    let mut q = |f: Filter| ids(&store.query(&f, 100).unwrap());
    let only = |f: Filter| Filter {
        job_ids: vec![21, 22, 23],
        ..f
    };
    let names = q(only(Filter {
        names: strings(&["sim"]),
        ..Filter::default()
    }));
    assert_eq!(names, vec![21, 23]);
    let parts = q(only(Filter {
        partitions: strings(&["gpu", "none"]),
        ..Filter::default()
    }));
    assert_eq!(parts, vec![21]);
    let qos = q(only(Filter {
        qos: strings(&["high"]),
        names: strings(&["sim", "post"]),
        ..Filter::default()
    }));
    assert_eq!(qos, vec![21, 23]);
    // -N: g2 is 21's, g3 is 22's; a job that never ran was on no node.
    let on = |nodes: &[&str]| Filter {
        nodes: strings(nodes),
        ..Filter::default()
    };
    assert_eq!(q(only(on(&["g2"]))), vec![21]);
    assert_eq!(q(only(on(&["g3", "n8"]))), vec![22]);
    assert_eq!(q(only(on(&["g1", "g3"]))), vec![21, 22]);
    assert!(q(only(on(&["g4", "n1"]))).is_empty());
    // Rewriting a run replaces its nodes: 22 left n7.
    let mut moved = job(22, "ann", "phys", "COMPLETED", 5000);
    moved.nodes = "n1".into();
    store.store(&[moved]).unwrap();
    let mut q = |f: Filter| ids(&store.query(&f, 100).unwrap());
    assert_eq!(q(only(on(&["n7"]))), Vec::<u64>::new());
    assert_eq!(q(only(on(&["n1"]))), vec![22]);
}

/// A requeued job's runs: each kept; the newest that matches shown, every one with `-D`.
pub fn runs_contract(store: &mut dyn AccountingStore) {
    let mut first = job(31, "ann", "phys", "REQUEUED", 6000);
    first.restarts = 0;
    first.nodes = "n1".into();
    let mut second = job(31, "ann", "phys", "NODE_FAIL", 6100);
    second.restarts = 1;
    second.nodes = "n2".into();
    second.steps.truncate(1);
    let mut last = job(31, "ann", "phys", "COMPLETED", 6200);
    last.restarts = 2;
    last.nodes = "n3".into();
    store
        .store(&[first.clone(), second.clone(), last.clone()])
        .unwrap();
    let runs = |store: &mut dyn AccountingStore, f: Filter| {
        store
            .query(&f, 100)
            .unwrap()
            .into_iter()
            .map(|j| (j.restarts, j.state, j.steps.len()))
            .collect::<Vec<_>>()
    };
    let this = Filter {
        job_ids: vec![31],
        ..Filter::default()
    };
    assert_eq!(
        runs(store, this.clone()),
        vec![(2, "COMPLETED".to_string(), 2)]
    );
    let every = Filter {
        duplicates: true,
        ..this.clone()
    };
    assert_eq!(
        store.query(&every, 100).unwrap(),
        vec![first, second, last],
        "every run reads back whole, its own steps under it"
    );
    // Without -D, the newest of the runs that match: a filter the last run fails shows the run
    // before it.
    let failed_runs = Filter {
        states: strings(&["REQUEUED", "NODE_FAIL"]),
        ..this.clone()
    };
    assert_eq!(
        runs(store, failed_runs.clone()),
        vec![(1, "NODE_FAIL".to_string(), 1)]
    );
    assert_eq!(
        runs(
            store,
            Filter {
                duplicates: true,
                ..failed_runs
            }
        )
        .len(),
        2
    );
    let on_n1 = Filter {
        nodes: strings(&["n1"]),
        ..this
    };
    assert_eq!(runs(store, on_n1), vec![(0, "REQUEUED".to_string(), 2)]);
}

/// `PurgeJobAfter`/`PurgeStepAfter` at a moment: older runs go with their steps and nodes,
/// older steps of kept jobs go, newer ones stay.
pub fn purge_contract(store: &mut dyn AccountingStore) {
    // Before every other contract's jobs, which a purge must leave alone.
    let old = job(41, "ann", "phys", "COMPLETED", -5_000);
    let mut mid = job(42, "ann", "phys", "COMPLETED", -2_000);
    mid.steps[0].end = -4_000;
    mid.steps[1].end = -2_010;
    let new = job(43, "ann", "phys", "COMPLETED", 5);
    store.store(&[old, mid, new.clone()]).unwrap();
    let ours = Filter {
        job_ids: vec![41, 42, 43],
        ..Filter::default()
    };
    let before = store.query(&Filter::default(), 1000).unwrap().len();
    let purged = store.purge(Some(-3_000), Some(-3_000)).unwrap();
    // Job 41's run; of the steps left, 42's first.
    assert_eq!((purged.jobs, purged.steps), (1, 1));
    let left = store.query(&ours, 100).unwrap();
    assert_eq!(ids(&left), vec![42, 43]);
    assert_eq!(
        left[0].steps.iter().map(|s| s.step_id).collect::<Vec<_>>(),
        vec![1]
    );
    assert_eq!(left[1], new);
    assert_eq!(
        store.query(&Filter::default(), 1000).unwrap().len(),
        before - 1
    );
    // The purged run's nodes went with it: -N finds nothing of it.
    let on = Filter {
        job_ids: vec![41],
        nodes: strings(&["n1"]),
        ..Filter::default()
    };
    assert!(store.query(&on, 10).unwrap().is_empty());
    assert_eq!(store.purge(None, None).unwrap().jobs, 0);
}

/// Statements that fill a store at schema version 1 (made by `MIGRATIONS[0]`) with one job and
/// one step, as a daemon of that version wrote them.
pub fn version_one_rows() -> Vec<String> {
    vec![
        "INSERT INTO jobs VALUES (51, NULL, NULL, 'old', 'ann', 1000, 'phys', 'batch', 'normal', \
         'COMPLETED', 0, 0, 10, 10, 20, 80, 60, 3600, 'cpu=2,node=2', 'cpu=2,node=2', 'n[4-5]', \
         2, 2, 120, '/home/ann', 0, NULL)"
            .into(),
        "INSERT INTO steps VALUES (51, 0, 'srun', 'COMPLETED', 0, 30, 40)".into(),
        "DELETE FROM schema_version".into(),
        "INSERT INTO schema_version VALUES (1)".into(),
    ]
}

/// A store opened after [`version_one_rows`]: migrated, its job and step kept, its nodes found.
pub fn version_one_is_migrated(store: &mut dyn AccountingStore) {
    assert_eq!(store.schema_version().unwrap(), schema::VERSION);
    let got = store.query(&Filter::default(), 10).unwrap();
    assert_eq!(ids(&got), vec![51]);
    assert_eq!((got[0].steps.len(), got[0].nodes.as_str()), (1, "n[4-5]"));
    let on = Filter {
        nodes: strings(&["n5"]),
        ..Filter::default()
    };
    assert_eq!(ids(&store.query(&on, 10).unwrap()), vec![51]);
}
