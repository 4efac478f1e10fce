//! The PostgreSQL store against a real server ([`PgServer`], a throwaway one). Without
//! PostgreSQL's programs the test says why it did not run and passes; CI installs them
//! (`.ci/run`).

mod common;

use std::path::Path;

use sluice_accounting::postgres::PostgresStore;
use sluice_accounting::testing::PgServer;
use sluice_accounting::{Filter, Target, open, schema};

#[test]
fn a_real_server_is_migrated_and_keeps_the_same_contract() {
    let server = match PgServer::start() {
        Ok(s) => s,
        Err(why) => {
            eprintln!("skipped: no PostgreSQL server to test against: {why}");
            return;
        }
    };
    let mut store = PostgresStore::connect(&server.conninfo).unwrap();
    common::store_contract(&mut store);
    common::values_never_become_sql(&mut store);
    common::selections_contract(&mut store);
    common::runs_contract(&mut store);
    common::purge_contract(&mut store);
    drop(store);

    // Reconnecting through the daemon's setting finds the schema migrated and the jobs kept.
    let target = Target::parse(
        Some(&format!("postgres: {}", server.conninfo)),
        Path::new("/"),
    )
    .unwrap();
    let mut again = open(&target).unwrap();
    assert_eq!(again.schema_version().unwrap(), schema::VERSION);
    // Jobs 1-4 and 10, the selections' three, the requeued job's newest run and the purge's
    // two left.
    assert_eq!(again.query(&Filter::default(), 100).unwrap().len(), 11);

    // Connections opening a new database at once migrate it once.
    let mut admin = postgres::Client::connect(&server.conninfo, postgres::NoTls).unwrap();
    admin.execute("CREATE DATABASE racing", &[]).unwrap();
    let racing = server.conninfo.replace("dbname=postgres", "dbname=racing");
    let opened: Vec<_> = (0..4)
        .map(|_| {
            let url = racing.clone();
            std::thread::spawn(move || PostgresStore::connect(&url).map(|_| ()))
        })
        .collect();
    for t in opened {
        t.join().unwrap().unwrap();
    }
    let mut check = postgres::Client::connect(&racing, postgres::NoTls).unwrap();
    let rows: i64 = check
        .query_one("SELECT COUNT(*) FROM schema_version", &[])
        .unwrap()
        .get(0);
    assert_eq!(rows, 1);

    // A store a version 1 daemon wrote is migrated with its jobs.
    admin.execute("CREATE DATABASE old", &[]).unwrap();
    let old = server.conninfo.replace("dbname=postgres", "dbname=old");
    let mut v1 = postgres::Client::connect(&old, postgres::NoTls).unwrap();
    v1.execute(schema::VERSION_TABLE, &[]).unwrap();
    for sql in schema::MIGRATIONS[0] {
        v1.execute(*sql, &[]).unwrap();
    }
    for sql in common::version_one_rows() {
        v1.execute(&sql, &[]).unwrap();
    }
    drop(v1);
    common::version_one_is_migrated(&mut PostgresStore::connect(&old).unwrap());
}

#[test]
fn an_unreachable_server_is_an_error_naming_it_without_its_password() {
    let e = PostgresStore::connect("host=/nonexistent-dir port=1 user=acct password=hunter2")
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("/nonexistent-dir") && !e.contains("hunter2"),
        "{e}"
    );
}
