//! `sluice create reservation` and `sluice delete reservation` against the real daemon: the
//! reservation is journaled, shown, honoured by a job that asks for it, and gone once deleted.

mod common;

use common::{Daemon, json_of, sluice, state_dir, wait_for, wrap};
use sluice_api::{Job, JobSubmitted, Reservation, SubmitRequest};
use sluice_client::Client;

#[test]
fn a_reservation_made_from_the_command_line_holds_its_nodes_for_its_users() {
    let scratch = state_dir("reservations");
    let dir = scratch.path();
    let _daemon = Daemon::start(&dir);
    let mut client = Client::new(&dir);
    // Whoever runs the test: the daemon names the caller by its peer credentials.
    let probe: JobSubmitted = client
        .post("/v1/jobs", &wrap("probe", "true", &dir))
        .unwrap();
    let probe: Job = client.get(&format!("/v1/jobs/{}", probe.job_id)).unwrap();
    let user = probe.user;

    let created = sluice(
        &dir,
        &[
            "create",
            "reservation",
            "ReservationName=maint",
            "StartTime=now",
            "Duration=60",
            "Nodes=node[31-32]",
            &format!("Users={user}"),
        ],
    );
    assert!(
        created.status.success(),
        "{}",
        String::from_utf8_lossy(&created.stderr)
    );
    let shown: Vec<Reservation> = json_of(&sluice(&dir, &["show", "reservation", "--json"]));
    let maint = shown
        .iter()
        .find(|r| r.name == "maint")
        .unwrap_or_else(|| panic!("maint not shown in {shown:?}"));
    assert_eq!(maint.nodes, ["node31", "node32"]);

    let inside: JobSubmitted = client
        .post(
            "/v1/jobs",
            &SubmitRequest {
                reservation: Some("maint".into()),
                // Ends well inside the reservation's hour, as Slurm requires.
                time_limit: Some(600),
                ..wrap("inside", "sleep 1", &dir)
            },
        )
        .unwrap();
    let ran = wait_for(&dir, inside.job_id, &["RUNNING", "COMPLETED"], 60);
    let node = ran.nodelist.as_str();
    assert!(
        node == "node31" || node == "node32",
        "a job in the reservation ran on {node}"
    );

    let bad = sluice(
        &dir,
        &[
            "create",
            "reservation",
            "ReservationName=x",
            "Duration=soon",
        ],
    );
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("Duration=soon"));

    let deleted = sluice(&dir, &["delete", "reservation", "maint"]);
    assert!(
        deleted.status.success(),
        "{}",
        String::from_utf8_lossy(&deleted.stderr)
    );
    let shown: Vec<Reservation> = json_of(&sluice(&dir, &["show", "reservation", "--json"]));
    assert!(
        !shown.iter().any(|r| r.name == "maint"),
        "maint still shown after delete: {shown:?}"
    );
    let again = sluice(&dir, &["delete", "reservation", "maint"]);
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("not found"));
}
