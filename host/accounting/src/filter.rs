//! sacct's selection as SQL: which jobs a query asks for, checked and bounded, and the `WHERE`
//! clause both databases run.

use sluice_api::AcctQuery;
use sluice_api::query::items;

use crate::schema::Param;

/// Job states with sacct's long names and short forms (`-s`); sluice records some of them only,
/// but a filter naming another is valid and simply matches nothing.
pub const STATES: [(&str, &str); 15] = [
    ("BOOT_FAIL", "BF"),
    ("CANCELLED", "CA"),
    ("COMPLETED", "CD"),
    ("DEADLINE", "DL"),
    ("FAILED", "F"),
    ("NODE_FAIL", "NF"),
    ("OUT_OF_MEMORY", "OOM"),
    ("PENDING", "PD"),
    ("PREEMPTED", "PR"),
    ("RUNNING", "R"),
    ("REQUEUED", "RQ"),
    ("RESIZING", "RS"),
    ("REVOKED", "RV"),
    ("SUSPENDED", "S"),
    ("TIMEOUT", "TO"),
];

/// The most items one list of a filter may hold.
pub const MAX_ITEMS: usize = 1000;

/// Which jobs to read: every list is "any of these" (empty: any), lists combine with "and".
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Filter {
    /// `-j`.
    pub job_ids: Vec<u64>,
    /// `-u`.
    pub users: Vec<String>,
    /// `-A`.
    pub accounts: Vec<String>,
    /// `-s`, long names.
    pub states: Vec<String>,
    /// `-S`: ended at or after.
    pub start: Option<i64>,
    /// `-E`: eligible at or before.
    pub end: Option<i64>,
    /// `--name`: job names.
    pub names: Vec<String>,
    /// `-r`: partitions.
    pub partitions: Vec<String>,
    /// `-q`: QOS names.
    pub qos: Vec<String>,
    /// `-N`: node names (the hostlist expanded); a job matches if it ran on any of them.
    pub nodes: Vec<String>,
    /// `-D`: every run of a requeued job; without it, of the runs that match, the newest.
    pub duplicates: bool,
}

/// A filter the API could not take: which field and what was expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct BadFilter {
    /// The query field.
    pub field: &'static str,
    /// What was wrong and what was expected.
    pub message: String,
}

/// The long name of a state given as sacct takes it (`cd`, `COMPLETED`, `CANCELLED+`).
pub fn state_name(text: &str) -> Option<&'static str> {
    let up = text.trim().trim_end_matches('+').to_ascii_uppercase();
    STATES
        .iter()
        .find(|(long, short)| {
            *long == up || *short == up || (up == "CANCELED" && *long == "CANCELLED")
        })
        .map(|(long, _)| *long)
}

fn list<'a>(field: &'static str, text: Option<&'a str>) -> Result<Vec<&'a str>, BadFilter> {
    let v: Vec<&str> = items(text).collect();
    if v.len() > MAX_ITEMS {
        return Err(BadFilter {
            field,
            message: format!("{} items; at most {MAX_ITEMS}", v.len()),
        });
    }
    Ok(v)
}

impl Filter {
    /// Reads the API's query; a job id that is not a number or an unknown state is refused.
    pub fn from_query(q: &AcctQuery) -> Result<Self, BadFilter> {
        let job_ids = list("jobs", q.jobs.as_deref())?
            .into_iter()
            .map(|j| {
                // `1234.batch`, `1234.0`: the job's steps come with the job.
                let id = j.split('.').next().unwrap_or(j);
                id.parse().map_err(|_| BadFilter {
                    field: "jobs",
                    message: format!("'{j}' is not a job id"),
                })
            })
            .collect::<Result<_, _>>()?;
        let states = list("states", q.states.as_deref())?
            .into_iter()
            .map(|s| {
                state_name(s).map(String::from).ok_or_else(|| BadFilter {
                    field: "states",
                    message: format!(
                        "'{s}' is not a job state; expected one of {}",
                        STATES.map(|(l, s)| format!("{l} ({s})")).join(", ")
                    ),
                })
            })
            .collect::<Result<_, _>>()?;
        let names = |field, text: Option<&str>| -> Result<Vec<String>, BadFilter> {
            Ok(list(field, text)?.into_iter().map(String::from).collect())
        };
        // One hostlist, whose brackets may hold commas: expanded whole, never split on them.
        let nodes = match q.nodes.as_deref().map(str::trim).filter(|n| !n.is_empty()) {
            None => Vec::new(),
            Some(expr) => {
                sluice_hostlist::expand_at_most(expr, MAX_ITEMS as u64).map_err(|e| BadFilter {
                    field: "nodes",
                    message: format!(
                        "'{expr}': {e}; expected a hostlist of at most {MAX_ITEMS} nodes"
                    ),
                })?
            }
        };
        Ok(Self {
            job_ids,
            users: names("users", q.users.as_deref())?,
            accounts: names("accounts", q.accounts.as_deref())?,
            states,
            start: q.start,
            end: q.end,
            names: names("names", q.names.as_deref())?,
            partitions: names("partitions", q.partitions.as_deref())?,
            qos: names("qos", q.qos.as_deref())?,
            nodes,
            duplicates: q.duplicates,
        })
    }

    /// The `WHERE` clause over table alias `j` with `$n` placeholders from `$first` on, and its
    /// values in order; `"TRUE"` (both databases read it) when nothing is filtered.
    pub fn to_sql(&self, first: usize) -> (String, Vec<Param>) {
        let mut terms = Vec::new();
        let mut params = Vec::new();
        let mark = |p: Param, params: &mut Vec<Param>| {
            params.push(p);
            format!("${}", first + params.len() - 1)
        };
        let mut any_of = |column: &str, values: Vec<Param>, params: &mut Vec<Param>| {
            if values.is_empty() {
                return;
            }
            let marks: Vec<String> = values.into_iter().map(|v| mark(v, params)).collect();
            terms.push(format!("j.{column} IN ({})", marks.join(", ")));
        };
        let ints = |v: &[u64]| v.iter().map(|x| Param::Int(Some(*x as i64))).collect();
        let texts = |v: &[String]| v.iter().map(|x| Param::Text(Some(x.clone()))).collect();
        any_of("job_id", ints(&self.job_ids), &mut params);
        any_of("user_name", texts(&self.users), &mut params);
        any_of("account", texts(&self.accounts), &mut params);
        any_of("state", texts(&self.states), &mut params);
        any_of("job_name", texts(&self.names), &mut params);
        any_of("partition_name", texts(&self.partitions), &mut params);
        any_of("qos", texts(&self.qos), &mut params);
        let mark = |p: Param, params: &mut Vec<Param>| {
            params.push(p);
            format!("${}", first + params.len() - 1)
        };
        if !self.nodes.is_empty() {
            // The run's own node rows: a hostlist in `node_list` cannot be matched in SQL.
            let marks: Vec<String> = self
                .nodes
                .iter()
                .map(|n| mark(Param::Text(Some(n.clone())), &mut params))
                .collect();
            terms.push(format!(
                "EXISTS (SELECT 1 FROM job_nodes jn WHERE jn.job_id = j.job_id \
                 AND jn.restarts = j.restarts AND jn.node IN ({}))",
                marks.join(", ")
            ));
        }
        if let Some(s) = self.start {
            let m = mark(Param::Int(Some(s)), &mut params);
            terms.push(format!("j.end_time >= {m}"));
        }
        if let Some(e) = self.end {
            let m = mark(Param::Int(Some(e)), &mut params);
            terms.push(format!("j.eligible_time <= {m}"));
        }
        if terms.is_empty() {
            return ("TRUE".into(), params);
        }
        (terms.join(" AND "), params)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_are_read_in_every_form_sacct_takes() {
        assert_eq!(state_name("cd"), Some("COMPLETED"));
        assert_eq!(state_name("TO"), Some("TIMEOUT"));
        assert_eq!(state_name("canceled"), Some("CANCELLED"));
        assert_eq!(state_name("nf"), Some("NODE_FAIL"));
        assert_eq!(state_name("done"), None);
    }

    #[test]
    fn a_query_becomes_numbered_terms_in_order() {
        let q = AcctQuery {
            jobs: Some("7,9.batch".into()),
            users: Some("ann".into()),
            states: Some("F,to".into()),
            start: Some(100),
            ..AcctQuery::default()
        };
        let f = Filter::from_query(&q).unwrap();
        assert_eq!(f.job_ids, vec![7, 9]);
        let (sql, params) = f.to_sql(1);
        assert_eq!(
            sql,
            "j.job_id IN ($1, $2) AND j.user_name IN ($3) AND j.state IN ($4, $5) AND j.end_time >= $6"
        );
        assert_eq!(params.len(), 6);
        assert_eq!(params[3], Param::Text(Some("FAILED".into())));
        assert_eq!(Filter::default().to_sql(1).0, "TRUE");
    }

    #[test]
    fn names_partitions_qos_and_a_hostlist_become_terms() {
        let q = AcctQuery {
            names: Some("sim,post".into()),
            partitions: Some("gpu".into()),
            qos: Some("high".into()),
            nodes: Some("n[1,3-4],g7".into()),
            duplicates: true,
            ..AcctQuery::default()
        };
        let f = Filter::from_query(&q).unwrap();
        // The hostlist's own commas are not list separators.
        assert_eq!(f.nodes, vec!["n1", "n3", "n4", "g7"]);
        assert!(f.duplicates);
        let (sql, params) = f.to_sql(1);
        assert_eq!(
            sql,
            "j.job_name IN ($1, $2) AND j.partition_name IN ($3) AND j.qos IN ($4) AND \
             EXISTS (SELECT 1 FROM job_nodes jn WHERE jn.job_id = j.job_id \
             AND jn.restarts = j.restarts AND jn.node IN ($5, $6, $7, $8))"
        );
        assert_eq!(params[7], Param::Text(Some("g7".into())));
        let q = AcctQuery {
            nodes: Some("n[1-2000]".into()),
            ..AcctQuery::default()
        };
        let e = Filter::from_query(&q).unwrap_err();
        assert_eq!(e.field, "nodes");
        assert!(e.message.contains("at most 1000 nodes"), "{}", e.message);
        let q = AcctQuery {
            nodes: Some("n[1-".into()),
            ..AcctQuery::default()
        };
        assert_eq!(Filter::from_query(&q).unwrap_err().field, "nodes");
    }

    #[test]
    fn bad_filters_say_which_field_and_what_was_expected() {
        let q = AcctQuery {
            jobs: Some("7,x".into()),
            ..AcctQuery::default()
        };
        let e = Filter::from_query(&q).unwrap_err();
        assert_eq!(
            (e.field, e.message.as_str()),
            ("jobs", "'x' is not a job id")
        );
        let q = AcctQuery {
            states: Some("done".into()),
            ..AcctQuery::default()
        };
        assert!(
            Filter::from_query(&q)
                .unwrap_err()
                .message
                .contains("COMPLETED (CD)")
        );
        let many = (0..=MAX_ITEMS)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(",");
        let q = AcctQuery {
            jobs: Some(many),
            ..AcctQuery::default()
        };
        assert!(
            Filter::from_query(&q)
                .unwrap_err()
                .message
                .contains("at most")
        );
    }
}
