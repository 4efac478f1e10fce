//! Pruning the store: slurmdbd's `PurgeJobAfter` and `PurgeStepAfter`, read from daemon.toml
//! (`purge_job_after`, `purge_step_after`) in Slurm's forms and turned into cut-off times.

use crate::AcctError;

/// An age in one of slurmdbd's units.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Age {
    /// `720hours`.
    Hours(u32),
    /// `30days`.
    Days(u32),
    /// `12months`, or a bare number.
    Months(u32),
}

/// What the store keeps: records older than an age go (`None`: kept for ever, Slurm's default).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Purge {
    /// `purge_job_after`: runs (with their steps) that ended longer ago.
    pub jobs: Option<Age>,
    /// `purge_step_after`: steps that ended longer ago; their jobs stay.
    pub steps: Option<Age>,
}

/// How many rows one purge deleted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Purged {
    /// Runs of jobs.
    pub jobs: u64,
    /// Steps (besides those of the runs deleted).
    pub steps: u64,
}

impl Age {
    /// Reads slurmdbd's form: digits, then nothing (months) or a prefix of `months`, `days` or
    /// `hours`, any case (`12`, `12months`, `30d`, `720HOURS`). `key` names the setting in errors.
    pub fn parse(key: &'static str, text: &str) -> Result<Self, AcctError> {
        let bad = || AcctError::BadPurge {
            key,
            given: text.to_string(),
        };
        let text = text.trim();
        let digits = text.bytes().take_while(u8::is_ascii_digit).count();
        let n: u32 = text[..digits].parse().map_err(|_| bad())?;
        let unit = text[digits..].to_ascii_lowercase();
        let is = |word: &str| !unit.is_empty() && word.starts_with(unit.as_str());
        if unit.is_empty() || is("months") {
            Ok(Self::Months(n))
        } else if is("hours") {
            Ok(Self::Hours(n))
        } else if is("days") {
            Ok(Self::Days(n))
        } else {
            Err(bad())
        }
    }

    /// The instant this age before `now`: hours exactly, days and months on the local calendar
    /// (the C library's `localtime_r`/`mktime`, as slurmdbd counts them).
    pub fn before(self, now: i64) -> i64 {
        let n = |v: u32| v as libc::c_int;
        match self {
            Self::Hours(h) => now - i64::from(h) * 3600,
            Self::Days(d) => calendar_back(now, |tm| tm.tm_mday -= n(d)),
            Self::Months(m) => calendar_back(now, |tm| tm.tm_mon -= n(m)),
        }
    }
}

/// `now` on the local calendar, moved by `step` and normalised by `mktime`.
fn calendar_back(now: i64, step: impl FnOnce(&mut libc::tm)) -> i64 {
    // SAFETY: `tm` is plain data, filled by the reentrant C library call.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    let secs = now as libc::time_t;
    unsafe { libc::localtime_r(&secs, &mut tm) };
    step(&mut tm);
    tm.tm_isdst = -1;
    // SAFETY: as above; mktime reads and normalises the fields.
    let t = unsafe { libc::mktime(&mut tm) };
    if t == -1 { i64::MIN } else { t as i64 }
}

impl Purge {
    /// Reads the two daemon.toml settings; absent ones keep everything.
    pub fn parse(jobs: Option<&str>, steps: Option<&str>) -> Result<Self, AcctError> {
        Ok(Self {
            jobs: jobs.map(|t| Age::parse("purge_job_after", t)).transpose()?,
            steps: steps
                .map(|t| Age::parse("purge_step_after", t))
                .transpose()?,
        })
    }

    /// Whether anything is ever purged.
    pub fn is_set(&self) -> bool {
        self.jobs.is_some() || self.steps.is_some()
    }

    /// The cut-off times at `now`, as [`crate::AccountingStore::purge`] takes them.
    pub fn cutoffs(&self, now: i64) -> (Option<i64>, Option<i64>) {
        (
            self.jobs.map(|a| a.before(now)),
            self.steps.map(|a| a.before(now)),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_are_read_in_slurmdbd_s_forms() {
        let p = |t| Age::parse("purge_job_after", t);
        assert_eq!(p("12").unwrap(), Age::Months(12));
        assert_eq!(p("12months").unwrap(), Age::Months(12));
        assert_eq!(p("6MONTH").unwrap(), Age::Months(6));
        assert_eq!(p("30days").unwrap(), Age::Days(30));
        assert_eq!(p("30d").unwrap(), Age::Days(30));
        assert_eq!(p("720hours").unwrap(), Age::Hours(720));
        assert_eq!(p("720h").unwrap(), Age::Hours(720));
        for bad in ["", "months", "12weeks", "12 monthsx", "-3days", "1.5days"] {
            let e = p(bad).unwrap_err().to_string();
            assert!(
                e.contains("purge_job_after") && e.contains("hours, days or months"),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn cutoffs_lie_the_age_before_now() {
        let now = 1_795_678_215;
        assert_eq!(Age::Hours(720).before(now), now - 720 * 3600);
        // A day on the calendar is 23 to 25 hours; thirty of them about thirty days.
        let d = now - Age::Days(30).before(now);
        assert!(
            (30 * 86_400 - 3600..=30 * 86_400 + 3600).contains(&d),
            "{d}"
        );
        let m = now - Age::Months(12).before(now);
        assert!(
            (365 * 86_400 - 3600..=366 * 86_400 + 3600).contains(&m),
            "{m}"
        );
        let p = Purge::parse(Some("2"), None).unwrap();
        assert!(p.is_set());
        let (jobs, steps) = p.cutoffs(now);
        assert!(jobs.unwrap() < now - 58 * 86_400 && steps.is_none());
        assert!(!Purge::default().is_set());
        assert!(Purge::parse(None, Some("x")).is_err());
    }
}
