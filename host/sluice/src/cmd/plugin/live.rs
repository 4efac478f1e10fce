//! The daemon-backed `sluice plugin` subcommands: list, swap, rollback, shadow.

use std::collections::BTreeMap;

use anyhow::Context;
use sluice_api::{PluginFile, Plugins, RolledBack, ShadowReports, ShadowStarted, Swapped};
use sluice_client::segment;

use crate::cmd::daemon_client::{Conn, print_json};

/// `plugin shadow` actions besides starting one.
#[derive(clap::Subcommand)]
pub enum ShadowCmd {
    /// How often and where the candidate would have decided differently.
    Report,
    /// Stop the shadow and print its final report.
    Stop,
}

fn settings(pairs: &[String]) -> anyhow::Result<BTreeMap<String, String>> {
    pairs
        .iter()
        .map(|p| {
            p.split_once('=')
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .with_context(|| format!("--set {p}: expected key=value"))
        })
        .collect()
}

/// `sluice plugin list`.
pub fn list(conn: &Conn) -> anyhow::Result<()> {
    let v: Plugins = conn.client().get("/v1/plugins")?;
    if conn.json {
        print_json(&v);
        return Ok(());
    }
    println!(
        "{:<10} {:<9} {:>4} {:>10} {:>7}  ORIGIN",
        "KIND", "ROLE", "GEN", "ANSWERED", "FAULTS"
    );
    for g in &v.generations {
        println!(
            "{:<10} {:<9} {:>4} {:>10} {:>7}  {}{}",
            g.kind,
            g.role.name(),
            g.generation,
            g.answered,
            g.faults,
            g.origin,
            if g.quarantined { " (quarantined)" } else { "" }
        );
    }
    for s in &v.shadows {
        println!("shadow: {} {}", s.kind, s.origin);
    }
    Ok(())
}

fn abs(file: &str) -> String {
    let p = std::path::Path::new(file);
    if p.exists() {
        std::fs::canonicalize(p).map_or(file.to_string(), |a| a.to_string_lossy().into_owned())
    } else {
        file.to_string()
    }
}

/// `sluice plugin swap KIND FILE`: waits until the daemon published or refused it.
pub fn swap(conn: &Conn, kind: &str, file: &str, set: &[String]) -> anyhow::Result<()> {
    let request = PluginFile {
        file: abs(file),
        settings: settings(set)?,
    };
    let v: Swapped = conn
        .client()
        .post(&format!("/v1/plugins/{}/swap", segment(kind)), &request)?;
    if conn.json {
        print_json(&v);
    } else {
        println!(
            "{} generation {} is active ({})",
            v.kind, v.generation, v.origin
        );
    }
    Ok(())
}

/// `sluice plugin rollback KIND`.
pub fn rollback(conn: &Conn, kind: &str) -> anyhow::Result<()> {
    let v: RolledBack = conn
        .client()
        .post_empty(&format!("/v1/plugins/{}/rollback", segment(kind)))?;
    if conn.json {
        print_json(&v);
    } else {
        println!("{} rolled back to generation {}", v.kind, v.generation);
    }
    Ok(())
}

/// `sluice plugin shadow KIND FILE | report | stop`.
pub fn shadow(
    conn: &Conn,
    kind: Option<&str>,
    file: Option<&str>,
    set: &[String],
) -> anyhow::Result<()> {
    let mut c = conn.client();
    let v: ShadowReports = match (kind, file) {
        (Some("report"), None) | (None, None) => c.get("/v1/shadow")?,
        (Some("stop"), None) => c.delete("/v1/shadow")?,
        (Some(k), Some(f)) => {
            let request = PluginFile {
                file: abs(f),
                settings: settings(set)?,
            };
            let v: ShadowStarted =
                c.post(&format!("/v1/plugins/{}/shadow", segment(k)), &request)?;
            if conn.json {
                print_json(&v);
            } else {
                println!("shadowing {} with {}", v.shadow, v.origin);
            }
            return Ok(());
        }
        (Some(k), None) => anyhow::bail!(
            "plugin shadow {k}: expected `shadow KIND FILE`, `shadow report` or `shadow stop`"
        ),
        (None, Some(_)) => unreachable!("clap fills kind first"),
    };
    if conn.json {
        print_json(&v);
    } else {
        print!("{}", super::shadow_report::render(&v));
    }
    Ok(())
}
