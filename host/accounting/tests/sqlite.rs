//! The SQLite store: migrations from an empty file, the store contract, and a reopened file
//! keeping its jobs and version.

mod common;

use std::os::unix::fs::PermissionsExt;

use sluice_accounting::sqlite::SqliteStore;
use sluice_accounting::{Filter, Target, open, schema};

#[test]
fn an_empty_file_is_migrated_and_keeps_the_contract() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = SqliteStore::open(&dir.path().join("accounting.db")).unwrap();
    common::store_contract(&mut store);
    common::values_never_become_sql(&mut store);
    common::selections_contract(&mut store);
    common::runs_contract(&mut store);
    common::purge_contract(&mut store);
}

#[test]
fn a_version_one_store_is_migrated_with_its_jobs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("accounting.db");
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute(schema::VERSION_TABLE, []).unwrap();
    for sql in schema::MIGRATIONS[0] {
        conn.execute(sql, []).unwrap();
    }
    for sql in common::version_one_rows() {
        conn.execute(&sql, []).unwrap();
    }
    drop(conn);
    let mut store = SqliteStore::open(&path).unwrap();
    common::version_one_is_migrated(&mut store);
}

#[test]
fn a_reopened_store_keeps_its_jobs_its_version_and_its_privacy() {
    let dir = tempfile::tempdir().unwrap();
    let target = Target::parse(None, dir.path()).unwrap();
    let path = dir.path().join("accounting.db");
    {
        let mut s = open(&target).unwrap();
        s.store(&[common::job(5, "ann", "phys", "COMPLETED", 50)])
            .unwrap();
    }
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "the file holds every user's jobs");
    let mut s = open(&target).unwrap();
    assert_eq!(s.schema_version().unwrap(), schema::VERSION);
    let got = s.query(&Filter::default(), 10).unwrap();
    assert_eq!(got, vec![common::job(5, "ann", "phys", "COMPLETED", 50)]);
}

#[test]
fn a_store_newer_than_this_build_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("accounting.db");
    drop(SqliteStore::open(&path).unwrap());
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute("UPDATE schema_version SET version = 99", [])
        .unwrap();
    drop(conn);
    let e = SqliteStore::open(&path).err().unwrap().to_string();
    assert!(
        e.contains("schema version 99") && e.contains("upgrade sluice"),
        "{e}"
    );
}

#[test]
fn a_symlink_in_the_store_s_place_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("accounting.db");
    std::os::unix::fs::symlink(dir.path().join("elsewhere.db"), &path).unwrap();
    assert!(SqliteStore::open(&path).is_err());
}

#[test]
fn connections_opening_a_new_store_at_once_migrate_it_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("accounting.db");
    let opened: Vec<_> = (0..4)
        .map(|_| {
            let p = path.clone();
            std::thread::spawn(move || SqliteStore::open(&p).map(|_| ()))
        })
        .collect();
    for t in opened {
        t.join().unwrap().unwrap();
    }
    let conn = rusqlite::Connection::open(&path).unwrap();
    let rows: i64 = conn
        .query_row("SELECT COUNT(*) FROM schema_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(rows, 1);
}
