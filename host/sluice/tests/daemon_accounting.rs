//! Job accounting end to end (issue 35): jobs run and end under a real daemon, the daemon
//! restarts and the jobs leave its live view, and `sluice acct` still answers with their states,
//! exit codes, elapsed times and steps, through `-j`, `-s`, `-S`, `--format`, `-P` and `--json`;
//! ended jobs wait in the journal while the store cannot take them and are stored after a
//! restart; a user sees only their own jobs unless the site turns `private_data`'s `jobs` off.

use std::path::Path;
use std::process::Output;

use sluice_api::{AcctAnswer, AcctJob, Health, Job};
use sluice_client::Client;

mod common;

use common::unprivileged::TestUser;
use common::{
    BIN, Daemon, all_jobs, end_jobs, json_of, poll, run_dir, sluice, state_dir, wait_for,
};
use sluice_accounting::testing::PgServer;

/// `sluice submit --parsable ARGS…` run in `dir` (the job's output goes there); its id.
fn submit(dir: &Path, args: &[&str]) -> u64 {
    let chdir = format!("--chdir={}", dir.display());
    let mut all = vec!["submit", "--parsable", &chdir];
    all.extend_from_slice(args);
    common::submitted_id(&sluice(dir, &all))
}

fn text(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn health(dir: &Path) -> Health {
    Client::new(dir).get("/v1/health").unwrap()
}

/// Waits until the store has every ended job the daemon knows.
fn all_stored(dir: &Path) {
    poll(30, "every ended job in the accounting store", || {
        (health(dir).accounting_unstored == 0).then_some(())
    });
}

fn acct_json(dir: &Path, args: &[&str]) -> Vec<AcctJob> {
    let mut all = vec!["acct", "--json"];
    all.extend_from_slice(args);
    json_of::<AcctAnswer>(&sluice(dir, &all)).jobs
}

#[test]
fn acct_answers_after_a_restart_and_after_jobs_aged_out() {
    let scratch = state_dir("acct-restart");
    restart_scenario(scratch.path(), "");
}

#[test]
fn acct_answers_the_same_from_postgresql() {
    let server = match PgServer::start() {
        Ok(s) => s,
        Err(why) => {
            eprintln!("skipped: no PostgreSQL server to test against: {why}");
            return;
        }
    };
    let scratch = state_dir("acct-postgres");
    let dir = scratch.path();
    restart_scenario(
        dir,
        &format!("accounting = \"postgres: {}\"\n", server.conninfo),
    );
    // The jobs are in the server, not in a file beside the journal.
    assert!(!dir.join("accounting.db").exists());
    let mut store = sluice_accounting::postgres::PostgresStore::connect(&server.conninfo).unwrap();
    let stored =
        sluice_accounting::AccountingStore::query(&mut store, &Default::default(), 100).unwrap();
    assert_eq!(stored.len(), 3);
}

/// Three jobs (one with steps, one failing, one cancelled) end; the daemon restarts and they
/// leave its live view; `acct` answers for them with every option. `settings` go to daemon.toml.
fn restart_scenario(dir: &Path, settings: &str) {
    std::fs::write(
        dir.join("daemon.toml"),
        format!("min_job_age = 1\nkill_wait = 1\n{settings}"),
    )
    .unwrap();
    let daemon = Daemon::start(dir);
    let ok = submit(
        dir,
        &[
            "-J",
            "steps",
            "-n",
            "2",
            "--wrap",
            &format!("{BIN} run true; {BIN} run false; sleep 1; exit 0"),
        ],
    );
    let bad = submit(dir, &["-J", "bad", "--wrap", "sleep 1; exit 3"]);
    let cancelled = submit(dir, &["-J", "long", "-t", "5", "--wrap", "sleep 60"]);
    wait_for(dir, cancelled, &["RUNNING"], 30);
    // Its processes exist (a job cancelled before its supervisor started dies of no signal).
    let pids = run_dir(dir, cancelled).join("pids");
    poll(30, "the cancelled job's processes", || {
        pids.exists().then_some(())
    });
    assert!(
        sluice(dir, &["cancel", &cancelled.to_string()])
            .status
            .success()
    );
    let live: Vec<Job> = [ok, bad, cancelled]
        .iter()
        .zip([&["COMPLETED"], &["FAILED"], &["CANCELLED"]])
        .map(|(id, st)| wait_for(dir, *id, st, 60))
        .collect();
    // The cancelled job's shell dies of the signal after its end is recorded: wait for both.
    poll(30, "the cancelled job's signal in the store", || {
        all_stored(dir);
        let j = acct_json(dir, &["-j", &cancelled.to_string()]);
        (j.len() == 1 && j[0].signal != 0).then_some(())
    });
    all_stored(dir);
    daemon.terminate();
    end_jobs(dir);

    let _daemon = Daemon::start(dir);
    // Ended jobs are not in the live view after the restart.
    assert!(text(&sluice(dir, &["queue", "-h"])).trim().is_empty());
    let ids = format!("{ok},{bad},{cancelled}");
    let jobs = acct_json(dir, &["-j", &ids]);
    assert_eq!(
        jobs.iter().map(|j| j.job_id).collect::<Vec<_>>(),
        vec![ok, bad, cancelled]
    );
    for (a, l) in jobs.iter().zip(&live) {
        assert_eq!(a.state, l.state, "{a:?}");
        assert_eq!(a.start, l.start_time, "{a:?}");
        assert_eq!(Some(a.end), l.end_time, "{a:?}");
        assert_eq!(
            a.elapsed,
            l.end_time.unwrap() - l.start_time.unwrap(),
            "{a:?}"
        );
        assert_eq!(a.cpu_time, a.elapsed * a.ncpus as i64, "{a:?}");
        assert_eq!(
            (a.name.as_str(), a.work_dir.as_str()),
            (l.name.as_str(), l.workdir.as_str())
        );
    }
    assert!(jobs[0].elapsed >= 1, "{:?}", jobs[0]);
    assert_eq!((jobs[0].exit_code, jobs[1].exit_code), (0, 3));
    assert!(matches!(jobs[2].signal, 9 | 15), "{:?}", jobs[2]);
    assert_eq!(jobs[2].time_limit, Some(300));
    assert!(jobs[0].req_tres.starts_with("cpu=2,"), "{:?}", jobs[0]);
    let steps: Vec<(u32, &str, i32)> = jobs[0]
        .steps
        .iter()
        .map(|s| (s.step_id, s.state.as_str(), s.exit_code))
        .collect();
    assert_eq!(steps, vec![(0, "COMPLETED", 0), (1, "FAILED", 1)]);

    // -s picks by state, in sacct's short or long forms.
    let failed = text(&sluice(
        dir,
        &[
            "acct",
            "-j",
            &ids,
            "-s",
            "f,CA",
            "-X",
            "-n",
            "-P",
            "-o",
            "JobID,State,ExitCode",
        ],
    ));
    assert_eq!(
        failed,
        format!(
            "{bad}|FAILED|3:0\n{cancelled}|CANCELLED|0:{}\n",
            jobs[2].signal
        )
    );
    // -P with steps; a parsable header.
    let parsable = text(&sluice(
        dir,
        &[
            "acct",
            "-j",
            &ok.to_string(),
            "-P",
            "-o",
            "JobID,JobName,State,ExitCode,Elapsed",
        ],
    ));
    let e = jobs[0].elapsed;
    assert_eq!(
        parsable,
        format!(
            "JobID|JobName|State|ExitCode|Elapsed\n{ok}|steps|COMPLETED|0:0|00:00:{e:02}\n{ok}.0|true|COMPLETED|0:0|{}\n{ok}.1|false|FAILED|1:0|{}\n",
            common_elapsed(&jobs[0].steps[0]),
            common_elapsed(&jobs[0].steps[1]),
        )
    );
    // --format widths: fixed columns, cut with a `+`.
    let fixed = text(&sluice(
        dir,
        &[
            "acct",
            "-j",
            &bad.to_string(),
            "-n",
            "-o",
            "JobID%8,State%4,JobName%5",
        ],
    ));
    assert_eq!(fixed, format!("{:<8} FAI+   bad \n", bad));
    // -S/-E: these jobs ended within the last hour; none ended in a window an hour ahead, and
    // none was eligible in a window that closed an hour ago.
    let window = |s: &str, e: &str| {
        acct_json(dir, &["-S", s, "-E", e, "-u", "root"])
            .into_iter()
            .filter(|j| [ok, bad, cancelled].contains(&j.job_id))
            .count()
    };
    assert_eq!(window("now-1hour", "now"), 3);
    assert_eq!(window("now+1hour", "now+2hours"), 0);
    assert_eq!(window("now-2hours", "now-1hour"), 0);
    let empty = sluice(dir, &["acct", "-S", "now", "-E", "now-1hour"]);
    assert!(!empty.status.success());
    end_jobs(dir);
}

fn common_elapsed(s: &sluice_api::AcctStep) -> String {
    let secs = (s.end - s.start).max(0);
    format!("{:02}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60)
}

#[test]
fn ended_jobs_wait_in_the_journal_while_the_store_is_unreachable() {
    let scratch = state_dir("acct-down");
    let dir = scratch.path();
    // A file under a directory that does not exist: every write fails.
    std::fs::write(
        dir.join("daemon.toml"),
        format!(
            "accounting = \"sqlite:{}/missing/acct.db\"\n",
            dir.display()
        ),
    )
    .unwrap();
    let daemon = Daemon::start(dir);
    let a = submit(dir, &["--wrap", "exit 0"]);
    let b = submit(dir, &["--wrap", "exit 4"]);
    wait_for(dir, a, &["COMPLETED"], 30);
    wait_for(dir, b, &["FAILED"], 30);
    poll(30, "both ended jobs waiting for the store", || {
        (health(dir).accounting_unstored == 2).then_some(())
    });
    let out = sluice(dir, &["acct", "-j", &a.to_string()]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("accounting store"),
        "{out:?}"
    );
    daemon.kill9();

    // The store is reachable now: after the restart the journal's ended jobs are written.
    std::fs::write(dir.join("daemon.toml"), "").unwrap();
    let _daemon = Daemon::start(dir);
    all_stored(dir);
    let got = acct_json(dir, &["-j", &format!("{a},{b}")]);
    let states: Vec<(u64, &str, i32)> = got
        .iter()
        .map(|j| (j.job_id, j.state.as_str(), j.exit_code))
        .collect();
    assert_eq!(states, vec![(a, "COMPLETED", 0), (b, "FAILED", 4)]);
    assert!(all_jobs(dir).len() >= 2);
    end_jobs(dir);
}

#[test]
fn a_user_sees_only_their_own_jobs() {
    let Some(user) = TestUser::create("a") else {
        return;
    };
    let scratch = state_dir("acct-private");
    let dir = scratch.path();
    let daemon = Daemon::start(dir);
    let theirs = user.submit(dir, &["--wrap", "exit 0"]);
    let roots = submit(dir, &["--wrap", "exit 0"]);
    wait_for(dir, theirs, &["COMPLETED"], 30);
    wait_for(dir, roots, &["COMPLETED"], 30);
    all_stored(dir);
    let ids = format!("{theirs},{roots}");
    // Asking for everyone, or for root by name, still shows the user only their own.
    for ask in [&["-a"][..], &["-u", "root"][..], &[][..]] {
        let mut args = vec!["acct", "-j", &ids, "-n", "-P", "-X", "-o", "JobID,User"];
        args.extend_from_slice(ask);
        let out = text(&user.sluice(dir, &args));
        assert_eq!(
            out,
            format!("{theirs}|{}\n", user.name),
            "acct {ask:?} as {}",
            user.name
        );
    }
    // Root sees both.
    let out = text(&sluice(
        dir,
        &["acct", "-j", &ids, "-n", "-P", "-X", "-o", "JobID,User"],
    ));
    let both = format!("{theirs}|{}\n{roots}|root\n", user.name);
    assert_eq!(out, both);
    // A site without PrivateData=jobs: the user reads others' records as sacct lets them
    // (-j names jobs of every user, -u picks one), and by default still only their own.
    daemon.terminate();
    std::fs::write(dir.join("daemon.toml"), "private_data = []\n").unwrap();
    let _daemon = Daemon::start(dir);
    let as_user = |extra: &[&str]| {
        let mut args = vec![
            "acct",
            "-n",
            "-P",
            "-X",
            "-o",
            "JobID,User",
            "-S",
            "now-1hour",
        ];
        args.extend_from_slice(extra);
        text(&user.sluice(dir, &args))
    };
    assert_eq!(as_user(&["-j", &ids]), both);
    assert_eq!(
        as_user(&["-j", &ids, "-u", "root"]),
        format!("{roots}|root\n")
    );
    assert_eq!(as_user(&[]), format!("{theirs}|{}\n", user.name));
    end_jobs(dir);
}

#[test]
fn a_hung_database_never_holds_up_scheduling() {
    let server = match PgServer::start() {
        Ok(s) => s,
        Err(why) => {
            eprintln!("skipped: no PostgreSQL server to test against: {why}");
            return;
        }
    };
    let scratch = state_dir("acct-hung");
    let dir = scratch.path();
    std::fs::write(
        dir.join("daemon.toml"),
        format!("accounting = \"postgres: {}\"\n", server.conninfo),
    )
    .unwrap();
    let _daemon = Daemon::start(dir);
    let first = submit(dir, &["--wrap", "exit 0"]);
    wait_for(dir, first, &["COMPLETED"], 30);
    all_stored(dir);
    // Frozen: connections stay open and nothing answers, as a database stuck on its disk.
    server.signal_all(libc::SIGSTOP).unwrap();
    let during: Vec<u64> = (0..3)
        .map(|i| submit(dir, &["--wrap", &format!("exit {i}")]))
        .collect();
    for (i, id) in during.iter().enumerate() {
        wait_for(dir, *id, &[if i == 0 { "COMPLETED" } else { "FAILED" }], 30);
    }
    assert_eq!(health(dir).accounting_unstored, 3);
    server.signal_all(libc::SIGCONT).unwrap();
    all_stored(dir);
    let ids: Vec<String> = during.iter().map(u64::to_string).collect();
    let got = acct_json(dir, &["-j", &ids.join(",")]);
    let codes: Vec<(u64, i32)> = got.iter().map(|j| (j.job_id, j.exit_code)).collect();
    assert_eq!(codes, vec![(during[0], 0), (during[1], 1), (during[2], 2)]);
    end_jobs(dir);
}

#[test]
fn bad_accounting_queries_are_refused_saying_what_was_expected() {
    let scratch = state_dir("acct-bad");
    let dir = scratch.path();
    let _daemon = Daemon::start(dir);
    let refused = |query: &str| -> String {
        let r: Result<AcctAnswer, _> = Client::new(dir).get(&format!("/v1/accounting?{query}"));
        r.expect_err(query).to_string()
    };
    let e = refused("states=done");
    assert!(
        e.contains("'done' is not a job state") && e.contains("TIMEOUT (TO)"),
        "{e}"
    );
    assert!(refused("jobs=1,x").contains("'x' is not a job id"));
    assert!(refused("nope=1").contains("nope"));
    assert!(refused("start=yesterday").contains("start"));
    let many: Vec<String> = (0..1001).map(|i| i.to_string()).collect();
    assert!(refused(&format!("jobs={}", many.join(","))).contains("at most 1000"));
    // The CLI says the same before asking.
    let out = sluice(dir, &["acct", "-o", "JobID,Bogus"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("no field 'Bogus'"));
    let out = sluice(dir, &["acct", "-S", "someday"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("invalid time specification"));
}
