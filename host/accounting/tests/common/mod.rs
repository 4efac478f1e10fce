//! What both stores' tests share: sample jobs and the checks every store must pass.

use sluice_accounting::{AccountingStore, AcctJob, AcctStep, Filter, schema};

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
    let strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
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
