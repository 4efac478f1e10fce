//! A site's slurm.conf and `sacctmgr dump` imported into a cluster that enforces the same access
//! rules: partition AllowAccounts, association limits inherited down the tree, unknown accounts
//! refused.

mod common;

use common::*;
use sluice_cluster::slurm_conf::{import_accounts, import_slurm_conf};
use sluice_cluster::{Cluster, Source};
use sluice_engine::limits::reason::{Limit, LimitReason, Scope};
use sluice_engine::{JobSpec, JobState, Reason, SubmitError};

fn site() -> Cluster {
    let import = import_slurm_conf(
        Source::new("slurm.conf", include_str!("fixtures/site_slurm.conf")),
        None,
        None,
        None,
    )
    .unwrap();
    let mut file = import.file;
    let skipped = import_accounts(
        Source::new("dump", include_str!("fixtures/site_sacctmgr_dump.txt")),
        &mut file,
    )
    .unwrap();
    assert!(
        !skipped
            .iter()
            .any(|s| s.at.line > 2 && (s.key == "QOS" || s.key.starts_with("Grp"))),
        "associations' QOS lists and group limits are carried over: {skipped:?}"
    );
    let text = file.to_toml_string();
    Cluster::from_toml(Source::new("site.toml", &text), None).unwrap()
}

#[test]
fn the_imported_site_enforces_its_access_rules() {
    let c = site();
    assert!(c.qos_id("high").is_some(), "a DefaultQOS the dump names");
    let alice = c.user_assoc("alice", "physics").unwrap();
    assert_eq!(c.associations[alice.index()].default_qos, c.qos_id("high"));
    assert_eq!(
        c.associations[alice.index()].limits.qos,
        Some(vec![c.qos_id("high").unwrap(), c.qos_id("normal").unwrap()])
    );
    let chem = c.account_id("chem").unwrap();
    let chem = &c.associations[chem.index()].limits;
    assert_eq!(chem.grp_tres_run_mins.cpu, Some(100_000));
    assert_eq!(
        chem.grp_wall,
        Some(sluice_cluster::TimeLimit::Seconds(10_000 * 60))
    );
    let (mut e, _clock) = engine(c);
    let job = |user: &str, partition: &str| JobSpec {
        partitions: vec![partition.into()],
        time_limit: Some(600),
        ..JobSpec::new(user)
    };
    assert!(matches!(
        e.submit(job("alice", "chem")),
        Err(SubmitError::AccountNotAllowed { .. })
    ));
    // carol's default account is chem, whatever the order of the dump's lines.
    let carol = e.submit(job("carol", "chem")).unwrap();
    assert!(
        matches!(
            e.submit(JobSpec {
                qos: Some("high".into()),
                ..job("carol", "chem")
            }),
            Err(SubmitError::QosNotInAssociation { .. })
        ),
        "chem's QOS list is normal alone"
    );
    assert!(
        e.submit(JobSpec {
            account: Some("nosuch".into()),
            ..job("alice", "batch")
        })
        .is_err()
    );
    assert!(e.submit(job("mallory", "batch")).is_err(), "no association");
    let ids: Vec<_> = (0..3)
        .map(|_| e.submit(job("alice", "batch")).unwrap())
        .collect();
    e.schedule();
    assert_eq!(e.job(carol).unwrap().state, JobState::Running);
    assert_eq!(e.job(ids[1]).unwrap().state, JobState::Running);
    assert_eq!(
        (e.job(ids[2]).unwrap().state, e.job(ids[2]).unwrap().reason),
        (
            JobState::Pending,
            Reason::Limit(LimitReason::of(Scope::Assoc, Limit::Jobs))
        ),
        "physics' MaxJobs=2 is inherited by alice"
    );
    e.job_finished(ids[0], 0).unwrap();
    e.schedule();
    assert_eq!(e.job(ids[2]).unwrap().state, JobState::Running);
}
