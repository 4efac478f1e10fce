//! The one rule a job request passes before it changes anything, submit and update alike: the
//! request as it would stand afterwards is checked against the job as it stands (nothing, for a
//! submission), the caller and the cluster, as Slurm's `job_submit`/`update_job` checks do.
//! Every size a user controls is bounded here ([`Bounds`]), before any of it is expanded
//! (patterns, arrays, dependencies, hostlists) and before anything is journaled.

use sluice_api::filename::FieldBounds;
use sluice_api::{DaemonConfig, SubmitRequest};
use sluice_cluster::Node;
use sluice_hostlist::Hostlist;

use crate::api::ApiError;

/// Largest magnitude of `Nice` Slurm accepts (`NICE_OFFSET - 3`); beyond it the priority
/// arithmetic would wrap.
pub const MAX_NICE: i32 = 2_147_483_645;

/// Longest user name a `%u` can stand for (Linux's `LOGIN_NAME_MAX`): an update may come from
/// an admin, not the job's owner, so the bound does not rest on the caller's name.
const LONGEST_USER_NAME: usize = 256;

/// Bytes one `--dependency` entry may take, the longest being `,afternotok:` with a 20-digit
/// job id and a `_` 10-digit task (43); the text is held to this many per allowed dependency.
const DEPENDENCY_BYTES: usize = 48;

/// The sizes a request is held to: daemon.toml's `max_*` and the cluster's nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    /// `max_script_size`: the batch script, bytes.
    pub script: usize,
    /// `max_env_size`: the environment (each `NAME=value` and its NUL, as `execve` counts it)
    /// and, alike, the script's arguments, bytes.
    pub env: usize,
    /// `max_path_size`: a path, and what an `-o/-e/-i` pattern can expand to, bytes.
    pub path: usize,
    /// `max_text_size`: each free-text field, bytes.
    pub text: usize,
    /// `max_dependencies`: jobs one `--dependency` may name.
    pub dependencies: usize,
    /// Nodes of the cluster: the most hosts a `--nodelist` or `--exclude` may name.
    pub nodes: u64,
    /// The cluster's longest node name, bytes (`%N`, and any name a hostlist may hold).
    pub node_name: usize,
}

impl Bounds {
    /// The bounds daemon.toml `cfg` sets, on a cluster of `nodes`.
    pub fn new(cfg: &DaemonConfig, nodes: &[Node]) -> Self {
        Self {
            script: cfg.max_script_size,
            env: cfg.max_env_size,
            path: cfg.max_path_size,
            text: cfg.max_text_size,
            dependencies: cfg.max_dependencies,
            nodes: nodes.len() as u64,
            node_name: nodes.iter().map(|n| n.name.len()).max().unwrap_or(0),
        }
    }
}

/// Who asks, and what the cluster can give, as far as the rule needs to know.
#[derive(Clone, Copy, Debug)]
pub struct Admission {
    /// Whether the caller is an admin (root, the daemon's user, `admins`).
    pub admin: bool,
    /// CPUs of every node together.
    pub cluster_cpus: u64,
    /// The caller's uid when jobs would run as it and the password database does not know it
    /// (a root daemon has no groups or gid to run such a job with).
    pub unknown_uid: Option<u32>,
    /// The sizes every request is held to, an admin's too (a daemon that runs out of memory
    /// serves no one).
    pub bounds: Bounds,
}

impl Admission {
    /// Checks `after`, the request as it would stand, against `before`, the job's request as
    /// it stands (`None` for a submission). `what` names the request in the message.
    pub fn check(
        &self,
        what: &str,
        after: &SubmitRequest,
        before: Option<&SubmitRequest>,
    ) -> Result<(), ApiError> {
        if let (Some(uid), None) = (self.unknown_uid, before) {
            return Err(ApiError::bad(format!(
                "{what}: uid {uid} has no entry in the password database; jobs run only as known users"
            )));
        }
        self.bounds
            .check(after)
            .map_err(|e| ApiError::bad(format!("{what}: {e}")))?;
        if let Some(to) = &after.mail_user
            && !valid_recipient(to)
        {
            return Err(ApiError::bad(format!(
                "{what}: --mail-user={to}: expected a user name or mail address"
            )));
        }
        if after.priority.is_some() && before.is_none() && !self.admin {
            // An update's Priority= is the driver's to check: its owner may lower it.
            return Err(ApiError::forbidden(format!(
                "{what}: --priority: access denied: only an admin may set a job's priority"
            )));
        }
        self.check_nice(what, after, before)?;
        self.check_cpus(what, after)
    }

    /// Slurm: only an admin may set a negative nice or lower it (raise the job's priority).
    fn check_nice(
        &self,
        what: &str,
        after: &SubmitRequest,
        before: Option<&SubmitRequest>,
    ) -> Result<(), ApiError> {
        let nice = after.nice;
        if nice.unsigned_abs() > MAX_NICE.unsigned_abs() {
            return Err(ApiError::bad(format!(
                "{what}: Nice={nice}: expected between -{MAX_NICE} and {MAX_NICE}"
            )));
        }
        let lowered = match before {
            None => nice < 0,
            // An unchanged value is not a change, even if an admin set it negative.
            Some(old) => nice != old.nice && nice < old.nice.max(0),
        };
        if lowered && !self.admin {
            return Err(ApiError::forbidden(format!(
                "{what}: Nice={nice}: only an admin may set a negative nice or lower it (raise priority)"
            )));
        }
        Ok(())
    }

    /// `ntasks × cpus_per_task` in full (no narrowing), within what the whole cluster has;
    /// both as the job's shape counts them (`--ntasks-per-node`, `--cpus-per-gpu`).
    fn check_cpus(&self, what: &str, after: &SubmitRequest) -> Result<(), ApiError> {
        let shape =
            crate::request::Shape::of(after).map_err(|e| ApiError::bad(format!("{what}: {e}")))?;
        let tasks = u64::from(shape.tasks);
        let per_task = u64::from(shape.cpus_per_task);
        // Two u32 always multiply within u64.
        let cpus = tasks * per_task;
        if cpus > self.cluster_cpus {
            return Err(ApiError::bad(format!(
                "{what}: requested node configuration is not available: ntasks × cpus_per_task = {tasks} × {per_task} = {cpus} CPUs, the cluster has {}",
                self.cluster_cpus
            )));
        }
        Ok(())
    }
}

impl Bounds {
    /// Checks every size of `r` a user controls, each before anything reads further into it;
    /// the message names the option and the limit, as Slurm's `_test_job_desc_fields` does.
    pub fn check(&self, r: &SubmitRequest) -> Result<(), String> {
        if r.script.len() > self.script {
            return Err(format!(
                "Batch job script size ({} bytes) exceeds max_script_size ({} bytes)",
                r.script.len(),
                self.script
            ));
        }
        let env = r.env.iter().try_fold(0usize, |sum, (k, v)| {
            let sum = sum.saturating_add(k.len() + v.len() + 2);
            (sum <= self.env).then_some(sum)
        });
        if env.is_none() {
            return Err(format!(
                "Job environment size exceeds max_env_size ({} bytes, {} variables sent)",
                self.env,
                r.env.len()
            ));
        }
        let args = r.script_args.iter().try_fold(0usize, |sum, a| {
            let sum = sum.saturating_add(a.len() + 1);
            (sum <= self.env).then_some(sum)
        });
        if args.is_none() {
            return Err(format!(
                "the script's arguments exceed max_env_size ({} bytes, {} arguments sent)",
                self.env,
                r.script_args.len()
            ));
        }
        let name = r.job_name();
        for (option, text) in [
            ("--job-name", Some(name.as_str())),
            ("--partition", r.partition.as_deref()),
            ("--account", r.account.as_deref()),
            ("--qos", r.qos.as_deref()),
            ("--gres", r.gres.as_deref()),
            ("--gpus", r.gpus.as_deref()),
            ("--gpus-per-node", r.gpus_per_node.as_deref()),
            ("--gpus-per-task", r.gpus_per_task.as_deref()),
            ("--licenses", r.licenses.as_deref()),
            ("--constraint", r.constraint.as_deref()),
            ("--reservation", r.reservation.as_deref()),
            ("--hint", r.hint.as_deref()),
            ("--distribution", r.distribution.as_deref()),
            ("--open-mode", r.open_mode.as_deref()),
            ("--mail-type", r.mail_type.as_deref()),
            ("--mail-user", r.mail_user.as_deref()),
            ("--comment", r.comment.as_deref()),
            ("--wckey", r.wckey.as_deref()),
            ("--array", r.array.as_deref()),
            ("--nodelist", r.nodelist.as_deref()),
            ("--exclude", r.exclude.as_deref()),
        ] {
            too_long(option, text, self.text, "max_text_size")?;
        }
        too_long("--chdir", Some(&r.workdir), self.path, "max_path_size")?;
        too_long(
            "the script's path",
            r.command.as_deref(),
            self.path,
            "max_path_size",
        )?;
        self.check_patterns(r, &name)?;
        self.check_dependencies(r.dependency.as_deref())?;
        self.check_hostlist("--nodelist", r.nodelist.as_deref())?;
        self.check_hostlist("--exclude", r.exclude.as_deref())
    }

    /// `-o/-e/-i` as written and as they could expand: every field at its longest (`%x` the
    /// name, `%N` the longest node name, a number at its widest), beneath `--chdir`.
    fn check_patterns(&self, r: &SubmitRequest, name: &str) -> Result<(), String> {
        let fields = FieldBounds {
            name: name.len(),
            user: LONGEST_USER_NAME,
            node: self.node_name,
        };
        // Checked unset too: the default name must fit beneath the working directory.
        let output = r.output.as_deref().or(Some("slurm-%A_%a.out"));
        for (option, pattern) in [
            ("--output", output),
            ("--error", r.error.as_deref()),
            ("--input", r.input.as_deref()),
        ] {
            too_long(option, pattern, self.path, "max_path_size")?;
            let Some(p) = pattern else { continue };
            let longest = sluice_api::filename::longest(p, &fields, r.workdir.len());
            if longest > self.path {
                return Err(format!(
                    "Pathname of a file, directory or other parameter too long: {option} can expand to {longest} bytes (with --chdir), max_path_size is {}",
                    self.path
                ));
            }
        }
        Ok(())
    }

    /// `--dependency`: its jobs counted (one `:` each) before a word of it is parsed.
    fn check_dependencies(&self, text: Option<&str>) -> Result<(), String> {
        let Some(text) = text else { return Ok(()) };
        let max_bytes = self.dependencies.saturating_mul(DEPENDENCY_BYTES);
        too_long(
            "--dependency",
            Some(text),
            max_bytes,
            "max_dependencies × 48",
        )?;
        let jobs = text.bytes().filter(|&b| b == b':').count();
        if jobs > self.dependencies {
            return Err(format!(
                "Job dependency problem: --dependency names {jobs} jobs, max_dependencies is {}",
                self.dependencies
            ));
        }
        Ok(())
    }

    /// A hostlist may name no more hosts than the cluster has, none longer than its longest
    /// node name: counted from its ranges, before a name is made.
    fn check_hostlist(&self, option: &str, text: Option<&str>) -> Result<(), String> {
        let Some(text) = text.filter(|t| !t.trim().is_empty()) else {
            return Ok(());
        };
        let list = Hostlist::parse_at_most(text, self.nodes).map_err(|e| {
            format!(
                "Invalid node name specified: {option}={text}: {e} (the cluster has {} nodes)",
                self.nodes
            )
        })?;
        if list.longest_name() > self.node_name {
            return Err(format!(
                "Invalid node name specified: {option}={text} names a host longer than any of the cluster's nodes ({} bytes)",
                self.node_name
            ));
        }
        Ok(())
    }
}

/// Refuses `text` of more than `max` bytes, naming `option` and the daemon.toml key.
fn too_long(option: &str, text: Option<&str>, max: usize, key: &str) -> Result<(), String> {
    match text {
        Some(t) if t.len() > max => Err(format!(
            "Pathname of a file, directory or other parameter too long: {option} is {} bytes, {key} is {max}",
            t.len()
        )),
        _ => Ok(()),
    }
}

/// Whether a mail recipient may be handed to the mail program as an argument: not an
/// option, no blanks or control characters, at most 256 bytes.
pub fn valid_recipient(to: &str) -> bool {
    !to.is_empty()
        && !to.starts_with('-')
        && to.len() <= 256
        && !to.chars().any(|c| c.is_whitespace() || c.is_control())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recipients_that_could_be_options_are_refused() {
        assert!(valid_recipient("me@example.org"));
        assert!(valid_recipient("alice"));
        assert!(!valid_recipient("-oProxyCommand=x"));
        assert!(!valid_recipient("a b"));
        assert!(!valid_recipient(""));
        let bad = SubmitRequest {
            mail_user: Some("-x".into()),
            ..SubmitRequest::default()
        };
        assert!(USER.check("submit", &bad, None).is_err());
    }

    #[test]
    fn only_an_admin_submits_with_a_priority() {
        let with_priority = SubmitRequest {
            priority: Some(5),
            ..SubmitRequest::default()
        };
        let err = USER.check("submit", &with_priority, None).unwrap_err();
        assert!(err.message.contains("only an admin"), "{err:?}");
        assert!(ADMIN.check("submit", &with_priority, None).is_ok());
    }

    /// daemon.toml's defaults on a cluster of 16 nodes `n01`…`n16`.
    const BOUNDS: Bounds = Bounds {
        script: 4 << 20,
        env: 1 << 20,
        path: 4096,
        text: 4096,
        dependencies: 1000,
        nodes: 16,
        node_name: 3,
    };
    const USER: Admission = Admission {
        admin: false,
        cluster_cpus: 64,
        unknown_uid: None,
        bounds: BOUNDS,
    };
    const ADMIN: Admission = Admission {
        admin: true,
        cluster_cpus: 64,
        unknown_uid: None,
        bounds: BOUNDS,
    };

    fn with_nice(nice: i32) -> SubmitRequest {
        SubmitRequest {
            nice,
            ..SubmitRequest::default()
        }
    }

    #[test]
    fn negative_nice_is_an_admins_at_submit_and_at_update() {
        let err = USER
            .check("submit", &with_nice(i32::MIN), None)
            .unwrap_err();
        assert_eq!(err.status, 400, "{}", err.message);
        let err = USER.check("submit", &with_nice(-1), None).unwrap_err();
        assert_eq!(err.status, 403, "{}", err.message);
        assert!(ADMIN.check("submit", &with_nice(-1), None).is_ok());
        assert!(USER.check("submit", &with_nice(10), None).is_ok());
        // The same rule for an update: raising is anyone's, lowering an admin's.
        let old = with_nice(10);
        assert!(USER.check("update", &with_nice(20), Some(&old)).is_ok());
        assert_eq!(
            USER.check("update", &with_nice(5), Some(&old))
                .unwrap_err()
                .status,
            403
        );
        // A job an admin gave a negative nice keeps it through its owner's other updates.
        let set = with_nice(-5);
        assert!(USER.check("update", &with_nice(-5), Some(&set)).is_ok());
    }

    /// The message `r` is refused with, by an admin (bounds hold for everyone).
    fn refusal(r: &SubmitRequest) -> String {
        let e = ADMIN.check("submit", r, None).unwrap_err();
        assert_eq!(e.status, 400, "{}", e.message);
        e.message
    }

    fn request(f: impl FnOnce(&mut SubmitRequest)) -> SubmitRequest {
        let mut r = SubmitRequest {
            workdir: "/home/alice".into(),
            ..SubmitRequest::default()
        };
        f(&mut r);
        r
    }

    #[test]
    fn a_pattern_is_held_to_max_path_size_as_it_could_expand() {
        // Issue 46: `-J` of 1 MB and `-o` of 100,000 `%x`.
        let huge = request(|r| {
            r.name = Some("n".repeat(1 << 20));
            r.output = Some("%x".repeat(100_000));
        });
        let m = refusal(&huge);
        assert!(
            m.contains("--job-name") && m.contains("max_text_size"),
            "{m}"
        );
        // Each within its own limit, the expansion is not.
        let expands = request(|r| {
            r.name = Some("n".repeat(4000));
            r.error = Some("%x".repeat(1000));
        });
        let m = refusal(&expands);
        assert!(
            m.contains("--error can expand to") && m.contains("max_path_size is 4096"),
            "{m}"
        );
        let padded = request(|r| r.input = Some("%10j".repeat(300)));
        assert!(refusal(&padded).contains("--input can expand to"));
        let deep = request(|r| r.workdir = format!("/{}", "d".repeat(4090)));
        assert!(
            refusal(&deep).contains("--output can expand to"),
            "the default name"
        );
        let fine = request(|r| r.output = Some("/scratch/%u/%x-%j-%N_%a.out".into()));
        assert!(USER.check("submit", &fine, None).is_ok());
    }

    #[test]
    fn scripts_environments_and_texts_are_held_to_their_limits() {
        let script = request(|r| r.script = "#".repeat((4 << 20) + 1));
        assert!(refusal(&script).contains("Batch job script size"));
        let env = request(|r| {
            r.env = (0..40_000)
                .map(|i| (format!("V{i}"), "x".repeat(30)))
                .collect();
        });
        assert!(refusal(&env).contains("max_env_size"));
        let args = request(|r| r.script_args = vec!["a".repeat(1 << 16); 17]);
        assert!(refusal(&args).contains("arguments exceed max_env_size"));
        let comment = request(|r| r.comment = Some("c".repeat(4097)));
        let m = refusal(&comment);
        assert!(
            m.contains("--comment is 4097 bytes, max_text_size is 4096"),
            "{m}"
        );
        let chdir = request(|r| r.workdir = "/".repeat(4097));
        assert!(refusal(&chdir).contains("--chdir"));
        let array = request(|r| r.array = Some("0-1000,".repeat(600) + "0"));
        assert!(refusal(&array).contains("--array"));
    }

    #[test]
    fn dependencies_are_counted_before_they_are_read() {
        // Issue 46: a 2 MB list was parsed and resolved on the driver, and accepted.
        let two_mb = request(|r| r.dependency = Some(format!("afterok{}", ":1".repeat(1 << 20))));
        assert!(refusal(&two_mb).contains("--dependency is"));
        let many = request(|r| r.dependency = Some(format!("afterok{}", ":1".repeat(1001))));
        let m = refusal(&many);
        assert!(
            m.contains("names 1001 jobs, max_dependencies is 1000"),
            "{m}"
        );
        let most = request(|r| r.dependency = Some(format!("afterok{}", ":12345".repeat(1000))));
        assert!(USER.check("submit", &most, None).is_ok());
    }

    #[test]
    fn hostlists_name_no_more_hosts_than_the_cluster_and_none_longer() {
        let wide = request(|r| r.nodelist = Some("n[0-999999999]".into()));
        assert!(refusal(&wide).contains("Invalid node name specified"));
        let more = request(|r| r.exclude = Some("n[01-17]".into()));
        assert!(refusal(&more).contains("the cluster has 16 nodes"));
        let long = request(|r| r.exclude = Some(format!("{}[1-2]", "x".repeat(4000))));
        assert!(refusal(&long).contains("longer than any of the cluster's nodes"));
        let fine = request(|r| r.nodelist = Some("n[01-16]".into()));
        assert!(USER.check("submit", &fine, None).is_ok());
    }

    #[test]
    fn an_update_is_held_to_the_same_bounds() {
        let before = request(|_| {});
        let after = request(|r| r.comment = Some("c".repeat(1 << 21)));
        let e = USER
            .check("update job 5", &after, Some(&before))
            .unwrap_err();
        assert!(
            e.message.starts_with("update job 5: Pathname"),
            "{}",
            e.message
        );
    }

    #[test]
    fn cpus_are_multiplied_in_full_and_held_to_the_cluster() {
        let huge = SubmitRequest {
            ntasks: Some(u32::MAX),
            cpus_per_task: Some(u32::MAX),
            ..SubmitRequest::default()
        };
        let err = ADMIN.check("submit", &huge, None).unwrap_err();
        assert_eq!(err.status, 400);
        assert!(
            err.message.contains(
                "4294967295 × 4294967295 = 18446744065119617025 CPUs, the cluster has 64"
            ),
            "{}",
            err.message
        );
        let fits = SubmitRequest {
            ntasks: Some(8),
            cpus_per_task: Some(8),
            ..SubmitRequest::default()
        };
        assert!(USER.check("submit", &fits, None).is_ok());
    }
}
