//! The one rule a job request passes before it changes anything, submit and update alike: the
//! request as it would stand afterwards is checked against the job as it stands (nothing, for a
//! submission), the caller and the cluster, as Slurm's `job_submit`/`update_job` checks do.

use sluice_api::SubmitRequest;

use crate::api::ApiError;

/// Largest magnitude of `Nice` Slurm accepts (`NICE_OFFSET - 3`); beyond it the priority
/// arithmetic would wrap.
pub const MAX_NICE: i32 = 2_147_483_645;

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
        self.check_time_limit(what, after, before)?;
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

    /// Slurm: only an admin may raise a job's time limit.
    fn check_time_limit(
        &self,
        what: &str,
        after: &SubmitRequest,
        before: Option<&SubmitRequest>,
    ) -> Result<(), ApiError> {
        if let (Some(new), Some(old)) = (after.time_limit, before.and_then(|b| b.time_limit))
            && new > old
            && !self.admin
        {
            return Err(ApiError::forbidden(format!(
                "{what}: only an admin may raise TimeLimit"
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

    const USER: Admission = Admission {
        admin: false,
        cluster_cpus: 64,
        unknown_uid: None,
    };
    const ADMIN: Admission = Admission {
        admin: true,
        cluster_cpus: 64,
        unknown_uid: None,
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

    #[test]
    fn only_an_admin_raises_a_time_limit() {
        let old = SubmitRequest {
            time_limit: Some(60),
            ..SubmitRequest::default()
        };
        let longer = SubmitRequest {
            time_limit: Some(120),
            ..SubmitRequest::default()
        };
        assert_eq!(
            USER.check("update", &longer, Some(&old))
                .unwrap_err()
                .status,
            403
        );
        assert!(ADMIN.check("update", &longer, Some(&old)).is_ok());
        assert!(USER.check("update", &old, Some(&longer)).is_ok());
    }
}
