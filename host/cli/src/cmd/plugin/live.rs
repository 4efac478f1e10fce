//! The daemon-backed `sluice plugin` subcommands: list, swap, rollback, shadow.

use std::collections::BTreeMap;

use anyhow::Context;
use serde_json::json;

use crate::cmd::daemon_client::{Conn, cell, print_json};

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
    let v = conn.client().get("/v1/plugins")?;
    if conn.json {
        print_json(&v);
        return Ok(());
    }
    println!(
        "{:<10} {:<9} {:>4} {:>10} {:>7}  ORIGIN",
        "KIND", "ROLE", "GEN", "ANSWERED", "FAULTS"
    );
    for g in v["generations"].as_array().into_iter().flatten() {
        println!(
            "{:<10} {:<9} {:>4} {:>10} {:>7}  {}{}",
            cell(g, "kind"),
            cell(g, "role"),
            cell(g, "generation"),
            cell(g, "answered"),
            cell(g, "faults"),
            cell(g, "origin"),
            if g["quarantined"].as_bool() == Some(true) {
                " (quarantined)"
            } else {
                ""
            }
        );
    }
    for s in v["shadows"].as_array().into_iter().flatten() {
        println!("shadow: {} {}", cell(s, "kind"), cell(s, "origin"));
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
    let v = conn.client().post(
        &format!("/v1/plugins/{kind}/swap"),
        &json!({ "file": abs(file), "settings": settings(set)? }),
    )?;
    if conn.json {
        print_json(&v);
    } else {
        println!(
            "{} generation {} is active ({})",
            v["kind"].as_str().unwrap_or(kind),
            v["generation"],
            v["origin"].as_str().unwrap_or(file)
        );
    }
    Ok(())
}

/// `sluice plugin rollback KIND`.
pub fn rollback(conn: &Conn, kind: &str) -> anyhow::Result<()> {
    let v = conn
        .client()
        .post(&format!("/v1/plugins/{kind}/rollback"), &json!({}))?;
    if conn.json {
        print_json(&v);
    } else {
        println!("{kind} rolled back to generation {}", v["generation"]);
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
    let v = match (kind, file) {
        (Some("report"), None) | (None, None) => c.get("/v1/shadow")?,
        (Some("stop"), None) => c.delete("/v1/shadow")?,
        (Some(k), Some(f)) => {
            let v = c.post(
                &format!("/v1/plugins/{k}/shadow"),
                &json!({ "file": abs(f), "settings": settings(set)? }),
            )?;
            if !conn.json {
                println!("shadowing {k} with {}", v["origin"].as_str().unwrap_or(f));
                return Ok(());
            }
            v
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
