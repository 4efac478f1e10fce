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
    drop(store);

    // Reconnecting through the daemon's setting finds the schema migrated and the jobs kept.
    let target = Target::parse(
        Some(&format!("postgres: {}", server.conninfo)),
        Path::new("/"),
    )
    .unwrap();
    let mut again = open(&target).unwrap();
    assert_eq!(again.schema_version().unwrap(), schema::VERSION);
    assert_eq!(again.query(&Filter::default(), 100).unwrap().len(), 5);

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
