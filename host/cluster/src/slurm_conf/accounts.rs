//! `sacctmgr dump` output (the account tree of one cluster) into a cluster file's `[[accounts]]`
//! and `[[users]]` tables, with shares, association limits and the QOS they name.

use toml::Spanned;

use crate::config::{AccountSpec, AssocLimitSpec, ConfigFile, QosSpec, UserSpec};
use crate::model::{Shares, TresLimits};
use crate::time::parse_limit;
use crate::{ConfigError, Location, Source};

use super::Skipped;

/// One `Kind - 'name':Key=Value:…` line of the dump.
struct DumpLine {
    kind: String,
    name: String,
    fields: Vec<(String, String, Location)>,
    at: Location,
}

/// The association fields a dump line sets, read as the cluster file writes them.
#[derive(Default)]
struct Fields {
    fairshare: Shares,
    priority: u32,
    default_qos: Option<String>,
    default_account: Option<String>,
    limits: AssocLimitSpec,
}

/// Replaces `file`'s accounts and users with the tree `dump` holds (sacctmgr's flat file: a
/// `Cluster` line, then `Parent - 'account'` lines each followed by the `Account` and `User`
/// lines under it). QOS the tree names that `file` lacks are added with no limits. Returns
/// what was not carried over.
pub fn import_accounts(
    dump: Source<'_>,
    file: &mut ConfigFile,
) -> Result<Vec<Skipped>, ConfigError> {
    let mut skipped = Vec::new();
    let mut parent = "root".to_owned();
    let mut accounts = Vec::new();
    let mut users: Vec<(UserSpec, bool)> = Vec::new();
    for line in dump_lines(dump)? {
        match line.kind.to_ascii_lowercase().as_str() {
            "cluster" => {
                for (key, _, at) in &line.fields {
                    skip(
                        &mut skipped,
                        at,
                        key,
                        "the Cluster line sets the root association, whose settings are not carried; set them on the accounts",
                    );
                }
            }
            "parent" => parent = line.name.clone(),
            "account" => {
                let f = fields(&line, &mut skipped)?;
                let mut spec = AccountSpec::named(&line.name);
                spec.parent = (parent != "root").then(|| Spanned::new(0..0, parent.clone()));
                (spec.fairshare, spec.priority) = (f.fairshare, f.priority);
                spec.default_qos = f.default_qos.map(|q| Spanned::new(0..0, q));
                spec.set_limits(f.limits);
                accounts.push(spec);
            }
            "user" => {
                let f = fields(&line, &mut skipped)?;
                let is_default = f.default_account.as_deref() == Some(parent.as_str());
                let mut spec = UserSpec::named(&line.name, &parent);
                (spec.fairshare, spec.priority) = (f.fairshare, f.priority);
                spec.default_qos = f.default_qos.map(|q| Spanned::new(0..0, q));
                spec.set_limits(f.limits);
                users.push((spec, is_default));
            }
            _ => {
                return Err(ConfigError::invalid(
                    line.at.clone(),
                    format!("a `{}` line", line.kind),
                    "Cluster, Parent, Account or User lines as sacctmgr dump writes them",
                ));
            }
        }
    }
    // A job naming no account is charged to the user's first association, so the one under
    // its DefaultAccount goes first.
    users.sort_by_key(|(u, is_default)| (u.user.get_ref().clone(), !*is_default));
    let named_qos: Vec<String> = accounts
        .iter()
        .flat_map(|a| a.default_qos.iter().chain(a.qos.iter().flatten()))
        .chain(
            users
                .iter()
                .flat_map(|(u, _)| u.default_qos.iter().chain(u.qos.iter().flatten())),
        )
        .map(|q| q.get_ref().clone())
        .collect();
    for q in named_qos {
        if !file.qos.iter().any(|spec| spec.name.get_ref() == &q) {
            file.qos.push(QosSpec::named(&q));
        }
    }
    file.accounts = accounts;
    file.users = users.into_iter().map(|(u, _)| u).collect();
    Ok(skipped)
}

fn skip(skipped: &mut Vec<Skipped>, at: &Location, key: &str, reason: &str) {
    skipped.push(Skipped {
        at: at.clone(),
        key: key.to_owned(),
        reason: reason.to_owned(),
    });
}

/// The fields of an `Account` or `User` line.
fn fields(line: &DumpLine, skipped: &mut Vec<Skipped>) -> Result<Fields, ConfigError> {
    let mut f = Fields::default();
    for (key, value, at) in &line.fields {
        let number = || {
            value.parse::<u32>().map_err(|_| {
                ConfigError::invalid(at.clone(), format!("{key}={value}"), "a whole number")
            })
        };
        let tres = || {
            TresLimits::parse(value)
                .map(|_| Some(Spanned::new(0..0, value.clone())))
                .map_err(|e| {
                    ConfigError::invalid(
                        at.clone(),
                        format!("{key}={value} ({e})"),
                        "cpu=, mem=, node=, gres/<name>=, license/<name>= counts",
                    )
                })
        };
        let time = || {
            parse_limit(value, 60).ok_or_else(|| {
                ConfigError::invalid(
                    at.clone(),
                    format!("{key}={value}"),
                    "minutes or a Slurm time such as 1-00:00:00",
                )
            })
        };
        match key.to_ascii_lowercase().as_str() {
            "fairshare" | "shares" => {
                f.fairshare = if value.eq_ignore_ascii_case("parent") {
                    Shares::Parent
                } else {
                    Shares::Raw(number()?)
                }
            }
            "priority" => f.priority = number()?,
            "defaultqos" => f.default_qos = Some(value.clone()),
            "defaultaccount" => f.default_account = Some(value.clone()),
            "maxjobs" => f.limits.max_jobs = Some(number()?),
            "maxsubmitjobs" => f.limits.max_submit_jobs = Some(number()?),
            "maxwall" | "maxwalldurationperjob" => f.limits.max_wall = Some(time()?),
            "maxtres" | "maxtresperjob" => f.limits.max_tres = tres()?,
            "maxtresmins" | "maxtresminsperjob" => f.limits.max_tres_mins = tres()?,
            "grptres" => f.limits.grp_tres = tres()?,
            "maxtrespernode" => f.limits.max_tres_per_node = tres()?,
            "grptresmins" => f.limits.grp_tres_mins = tres()?,
            "grptresrunmins" => f.limits.grp_tres_run_mins = tres()?,
            "grpwall" => f.limits.grp_wall = Some(time()?),
            "qos" | "qoslevel" => {
                f.limits.qos = Some(
                    value
                        .split(',')
                        .map(str::trim)
                        .filter(|q| !q.is_empty())
                        .map(|q| Spanned::new(0..0, q.trim_start_matches(['+', '=']).to_owned()))
                        .collect(),
                )
            }
            "grpjobs" => f.limits.grp_jobs = Some(number()?),
            "grpsubmitjobs" => f.limits.grp_submit_jobs = Some(number()?),
            // Bookkeeping that does not bear on scheduling.
            "description" | "organization" | "adminlevel" | "coordinator" => {}
            _ => skip(
                skipped,
                at,
                key,
                "an association setting sluice does not enforce",
            ),
        }
    }
    Ok(f)
}

/// Splits the dump into its lines, each `Kind - 'name'` and `:`-separated `Key=Value` fields,
/// values in single quotes holding `:` as they may (`MaxWall='1-00:00:00'`).
fn dump_lines(dump: Source<'_>) -> Result<Vec<DumpLine>, ConfigError> {
    let mut out = Vec::new();
    for (i, raw) in dump.text.lines().enumerate() {
        let text = raw.trim_end();
        if text.trim().is_empty() || text.trim_start().starts_with('#') {
            continue;
        }
        let at = |col: usize| Location::new(dump.name, i + 1, col + 1);
        let parts = split_quoted(text);
        let (head, fields) = parts.split_first().expect("a non-empty line has a part");
        let Some((kind, name)) = head.1.split_once(" - ") else {
            return Err(ConfigError::invalid(
                at(0),
                format!("`{}`", head.1),
                "Kind - 'name' (Cluster, Parent, Account or User)",
            ));
        };
        let mut line = DumpLine {
            kind: kind.trim().to_owned(),
            name: name.trim().trim_matches('\'').to_owned(),
            fields: Vec::new(),
            at: at(0),
        };
        for (col, field) in fields {
            let Some((key, value)) = field.split_once('=') else {
                return Err(ConfigError::invalid(
                    at(*col),
                    format!("`{field}`"),
                    "Key=Value",
                ));
            };
            let value = value.trim().trim_matches('\'').to_owned();
            line.fields.push((key.trim().to_owned(), value, at(*col)));
        }
        out.push(line);
    }
    Ok(out)
}

/// `text` split at the `:` outside single quotes, each part with its starting column.
fn split_quoted(text: &str) -> Vec<(usize, String)> {
    let mut parts = Vec::new();
    let (mut start, mut quoted) = (0, false);
    for (i, c) in text.char_indices() {
        match c {
            '\'' => quoted = !quoted,
            ':' if !quoted => {
                parts.push((start, text[start..i].to_owned()));
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push((start, text[start..].to_owned()));
    parts
}
