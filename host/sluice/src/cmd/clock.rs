//! Dates as Slurm's `parse_time` reads them (`--begin`, `--deadline`, `BeginTime=`, and with
//! its `past` flag sacct's `-S`/`-E`): `now+N
//! [units]`, `today`, `tomorrow`, `midnight`, `noon`, `elevenses`, `fika`, `teatime`,
//! `HH:MM[:SS] [AM|PM]`, `MMDD[YY]`, `MM/DD[/YY]`, `MM.DD[.YY]`, `YYYY-MM-DD[THH:MM[:SS]]`,
//! `uts<seconds>`; a time of day without a date is the next one to come (the last one gone, for
//! `past`). Calendar arithmetic
//! is the C library's (`localtime_r`/`mktime`, as Slurm), in local time or UTC.

/// A broken-down calendar time (months 0-based, years since 1900, as `struct tm`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Civil {
    /// Years since 1900.
    pub year: i32,
    /// Month, 0..=11.
    pub month: i32,
    /// Day of the month, 1..=31.
    pub day: i32,
    /// Hour, 0..=23.
    pub hour: i32,
    /// Minute.
    pub minute: i32,
    /// Second.
    pub second: i32,
}

/// Which clock face dates are read and written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Zone {
    /// The machine's local time (`TZ`), as Slurm's commands use.
    Local,
    /// UTC: what the tests read dates in, whatever the machine's zone.
    #[cfg_attr(not(test), allow(dead_code))]
    Utc,
}

impl Zone {
    /// `t` on this clock face.
    pub fn civil(self, t: i64) -> Civil {
        // SAFETY: `tm` is plain data, filled by the reentrant C library call.
        let mut tm: libc::tm = unsafe { std::mem::zeroed() };
        let secs = t as libc::time_t;
        unsafe {
            match self {
                Zone::Local => libc::localtime_r(&secs, &mut tm),
                Zone::Utc => libc::gmtime_r(&secs, &mut tm),
            };
        }
        Civil {
            year: tm.tm_year,
            month: tm.tm_mon,
            day: tm.tm_mday,
            hour: tm.tm_hour,
            minute: tm.tm_min,
            second: tm.tm_sec,
        }
    }

    /// The instant `c` names on this clock face (fields out of range roll over, as `mktime`).
    pub fn instant(self, c: Civil) -> Option<i64> {
        // SAFETY: as above; `tm_isdst = -1` lets mktime decide daylight saving time.
        let mut tm: libc::tm = unsafe { std::mem::zeroed() };
        tm.tm_year = c.year;
        tm.tm_mon = c.month;
        tm.tm_mday = c.day;
        tm.tm_hour = c.hour;
        tm.tm_min = c.minute;
        tm.tm_sec = c.second;
        tm.tm_isdst = -1;
        let t = unsafe {
            match self {
                Zone::Local => libc::mktime(&mut tm),
                Zone::Utc => libc::timegm(&mut tm),
            }
        };
        (t != -1).then_some(t as i64)
    }

    /// `2026-11-26T03:10:47`, as scontrol prints times.
    pub fn iso(self, t: i64) -> String {
        let c = self.civil(t);
        format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
            c.year + 1900,
            c.month + 1,
            c.day,
            c.hour,
            c.minute,
            c.second
        )
    }
}

const UNITS: &[(&str, i64)] = &[
    ("seconds", 1),
    ("second", 1),
    ("minutes", 60),
    ("minute", 60),
    ("hours", 3600),
    ("hour", 3600),
    ("days", 86_400),
    ("day", 86_400),
    ("weeks", 604_800),
    ("week", 604_800),
];

/// A date as Slurm's `parse_time` reads it, relative to `now`; `None` where Slurm reports an
/// invalid time specification.
pub fn parse_time(text: &str, now: i64, zone: Zone) -> Option<i64> {
    parse(text, now, zone, false)
}

/// A date as sacct reads `-S`/`-E` (`parse_time` with `past` set): a time of day alone is
/// today's, and a date without a year is this year's unless its month is still to come.
pub fn parse_past_time(text: &str, now: i64, zone: Zone) -> Option<i64> {
    parse(text, now, zone, true)
}

fn parse(text: &str, now: i64, zone: Zone, past: bool) -> Option<i64> {
    let s = text.as_bytes();
    if s.len() >= 3 && s[..3].eq_ignore_ascii_case(b"uts") {
        let v: i64 = text[3..].parse().ok()?;
        return (v >= 1_000_000).then_some(v);
    }
    let today = zone.civil(now);
    let tomorrow = zone.civil(now + 86_400);
    let (mut hour, mut minute, mut second) = (-1, -1, 0);
    let (mut month, mut day, mut year) = (-1, -1, -1);
    let set_date = |c: Civil, m: &mut i32, d: &mut i32, y: &mut i32| {
        (*m, *d, *y) = (c.month, c.day, c.year);
    };
    let mut pos = 0;
    while pos < s.len() && s[pos] != b'\n' {
        let c = s[pos];
        if c == b' ' || c == b'\t' || c == b'-' || c == b'T' {
            pos += 1;
            continue;
        }
        let word = |w: &str| {
            s.len() >= pos + w.len() && s[pos..pos + w.len()].eq_ignore_ascii_case(w.as_bytes())
        };
        let named = [
            ("midnight", 0),
            ("noon", 12),
            ("elevenses", 11),
            ("fika", 15),
            ("teatime", 16),
        ]
        .into_iter()
        .find(|(w, _)| word(w));
        if word("today") {
            set_date(today, &mut month, &mut day, &mut year);
            pos += 5;
        } else if word("tomorrow") {
            set_date(tomorrow, &mut month, &mut day, &mut year);
            pos += 8;
        } else if let Some((w, h)) = named {
            (hour, minute, second) = (h, 0, 0);
            pos += w.len();
        } else if word("now") {
            pos += 3;
            while pos < s.len() && (s[pos] == b' ' || s[pos] == b'\t') {
                pos += 1;
            }
            let mut delta = 0;
            if pos < s.len() && (s[pos] == b'+' || s[pos] == b'-') {
                let sign = if s[pos] == b'-' { -1 } else { 1 };
                let (d, next) = delta_after(s, pos + 1)?;
                delta = sign * d;
                pos = next;
            } else if pos < s.len() && s[pos] != b'\n' {
                return None;
            }
            let later = zone.civil(now.checked_add(delta)?);
            set_date(later, &mut month, &mut day, &mut year);
            (hour, minute, second) = (later.hour, later.minute, later.second);
        } else if c.is_ascii_digit() {
            if s.get(pos + 1) == Some(&b':') || s.get(pos + 2) == Some(&b':') {
                let (h, m, sec, next) = time_of_day(s, pos)?;
                (hour, minute, second) = (h, m, sec);
                pos = next;
            } else {
                let (m, d, y, next) = date(s, pos)?;
                month = m;
                day = d;
                if let Some(y) = y {
                    year = y;
                }
                pos = next;
            }
        } else {
            return None;
        }
    }
    if hour == -1 && month == -1 {
        return None;
    } else if hour == -1 {
        (hour, minute, second) = (0, 0, 0);
    } else if month == -1 {
        // A time of day alone is the next one to come (today's, looking back).
        let later_today =
            past || hour > today.hour || (hour == today.hour && minute > today.minute);
        let d = if later_today { today } else { tomorrow };
        set_date(d, &mut month, &mut day, &mut year);
    }
    if year == -1 && past {
        year = if month > today.month {
            today.year - 1
        } else {
            today.year
        };
    } else if year == -1 {
        let ahead = (month, day, hour, minute) > (today.month, today.day, today.hour, today.minute);
        year = if ahead { today.year } else { today.year + 1 };
    }
    zone.instant(Civil {
        year,
        month,
        day,
        hour,
        minute,
        second,
    })
}

/// A date as users type it to sluice: Slurm's forms ([`parse_time`]), and sluice's older ones,
/// Unix seconds (nine digits or more, longer than any Slurm date, or any number Slurm does not
/// read as a date) and `now+N[s|m|h|d]`.
pub fn parse_user_time(text: &str, now: i64, zone: Zone) -> Option<i64> {
    let t = text.trim();
    if t.len() >= 9 && t.bytes().all(|b| b.is_ascii_digit()) {
        return t.parse().ok();
    }
    if let Some(v) = parse_time(t, now, zone) {
        return Some(v);
    }
    if t.bytes().all(|b| b.is_ascii_digit()) {
        return t.parse().ok();
    }
    let rest = t.strip_prefix("now+")?;
    let (n, unit) = rest.split_at(rest.len().checked_sub(1)?);
    let mult = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => return None,
    };
    now.checked_add(n.parse::<i64>().ok()?.checked_mul(mult)?)
}

/// `N[units]` after `now+`: the seconds and where the text goes on.
fn delta_after(s: &[u8], mut pos: usize) -> Option<(i64, usize)> {
    let mut count: i64 = 0;
    let mut digits = 0;
    while pos < s.len() && s[pos] != b'\n' {
        let c = s[pos];
        if c == b' ' || c == b'\t' {
            pos += 1;
            continue;
        }
        if let Some((name, mult)) = UNITS.iter().find(|(n, _)| {
            s.len() >= pos + n.len() && s[pos..pos + n.len()].eq_ignore_ascii_case(n.as_bytes())
        }) {
            count = count.checked_mul(*mult)?;
            pos += name.len();
            break;
        }
        if c.is_ascii_digit() {
            count = count.checked_mul(10)?.checked_add(i64::from(c - b'0'))?;
            digits += 1;
            pos += 1;
            continue;
        }
        return None;
    }
    (digits > 0).then_some((count, pos))
}

/// `HH:MM[:SS] [AM|PM]` at `pos`.
fn time_of_day(s: &[u8], mut pos: usize) -> Option<(i32, i32, i32, usize)> {
    let digit = |p: usize| {
        s.get(p)
            .filter(|c| c.is_ascii_digit())
            .map(|c| i32::from(c - b'0'))
    };
    let mut hour = digit(pos)?;
    pos += 1;
    if s.get(pos) != Some(&b':') {
        hour = hour * 10 + digit(pos)?;
        pos += 1;
    }
    if hour > 23 || s.get(pos) != Some(&b':') {
        return None;
    }
    let minute = digit(pos + 1)? * 10 + digit(pos + 2)?;
    pos += 3;
    if minute > 59 {
        return None;
    }
    let mut second = 0;
    if s.get(pos) == Some(&b':') {
        second = digit(pos + 1)? * 10 + digit(pos + 2)?;
        pos += 3;
        if second > 59 {
            return None;
        }
    }
    while s.get(pos).is_some_and(|c| *c == b' ' || *c == b'\t') {
        pos += 1;
    }
    let suffix = |w: &[u8]| s.len() >= pos + 2 && s[pos..pos + 2].eq_ignore_ascii_case(w);
    if suffix(b"pm") {
        hour += 12;
        if hour == 24 {
            hour = 12;
        } else if hour > 23 {
            return None;
        }
        pos += 2;
    } else if suffix(b"am") {
        if hour == 12 {
            hour = 0;
        } else if hour > 11 {
            return None;
        }
        pos += 2;
    }
    Some((hour, minute, second, pos))
}

/// `YYYY-MM-DD`, or `MMDD[YY]` with optional `/` or `.` separators, at `pos`; the year is
/// years since 1900 when given.
fn date(s: &[u8], mut pos: usize) -> Option<(i32, i32, Option<i32>, usize)> {
    let digit = |p: usize| {
        s.get(p)
            .filter(|c| c.is_ascii_digit())
            .map(|c| i32::from(c - b'0'))
    };
    // One or two digits at `pos`.
    let small = |pos: &mut usize| -> Option<i32> {
        let mut v = digit(*pos)?;
        *pos += 1;
        if let Some(d) = digit(*pos) {
            v = v * 10 + d;
            *pos += 1;
        }
        Some(v)
    };
    if s.get(pos + 4) == Some(&b'-') && s.get(pos + 7) == Some(&b'-') {
        let year = (0..4).try_fold(0, |acc, k| Some(acc * 10 + digit(pos + k)?))?;
        pos += 5;
        let month = small(&mut pos)?;
        if !(1..=12).contains(&month) {
            return None;
        }
        pos += 1;
        let day = small(&mut pos)?;
        if !(1..=31).contains(&day) {
            return None;
        }
        return Some((month - 1, day, Some(year - 1900), pos));
    }
    let month = small(&mut pos)?;
    if !(1..=12).contains(&month) {
        return None;
    }
    if matches!(s.get(pos), Some(b'.' | b'/')) {
        pos += 1;
    }
    let day = small(&mut pos)?;
    if !(1..=31).contains(&day) {
        return None;
    }
    if matches!(s.get(pos), Some(b'.' | b'/')) {
        pos += 1;
    }
    let year = match digit(pos) {
        Some(a) => {
            let b = digit(pos + 1)?;
            pos += 2;
            Some(a * 10 + b + 100)
        }
        None => None,
    };
    Some((month - 1, day, year, pos))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2026-11-26T07:30:15 UTC, a Thursday.
    const NOW: i64 = 1_795_678_215;

    fn at(text: &str) -> Option<String> {
        parse_time(text, NOW, Zone::Utc).map(|t| Zone::Utc.iso(t))
    }

    #[test]
    fn the_reference_instant_is_what_the_tests_say() {
        assert_eq!(Zone::Utc.iso(NOW), "2026-11-26T07:30:15");
    }

    #[test]
    fn relative_times_take_slurms_unit_names() {
        assert_eq!(at("now").unwrap(), "2026-11-26T07:30:15");
        assert_eq!(at("now+60").unwrap(), "2026-11-26T07:31:15");
        assert_eq!(at("now+1hour").unwrap(), "2026-11-26T08:30:15");
        assert_eq!(at("now+2days").unwrap(), "2026-11-28T07:30:15");
        assert_eq!(at("now+1week").unwrap(), "2026-12-03T07:30:15");
        assert_eq!(at("now-10minutes").unwrap(), "2026-11-26T07:20:15");
        // Slurm takes only the full unit names.
        assert_eq!(at("now+1h"), None);
        assert_eq!(at("now+"), None);
    }

    #[test]
    fn sluices_older_forms_still_read() {
        let at = |t: &str| parse_user_time(t, NOW, Zone::Utc);
        assert_eq!(at("2000000000"), Some(2_000_000_000));
        assert_eq!(at("now+1h"), Some(NOW + 3600));
        assert_eq!(at("now+90"), Some(NOW + 90));
        assert_eq!(at("now+1hour"), Some(NOW + 3600));
        assert_eq!(
            at("1225").map(|t| Zone::Utc.iso(t)).as_deref(),
            Some("2026-12-25T00:00:00")
        );
        assert_eq!(at("now+1y"), None);
        assert_eq!(at("100"), Some(100));
    }

    #[test]
    fn named_times_and_days() {
        assert_eq!(at("today").unwrap(), "2026-11-26T00:00:00");
        assert_eq!(at("tomorrow").unwrap(), "2026-11-27T00:00:00");
        // Midnight has passed today, so it is tonight's; teatime is still to come today.
        assert_eq!(at("midnight").unwrap(), "2026-11-27T00:00:00");
        assert_eq!(at("noon").unwrap(), "2026-11-26T12:00:00");
        assert_eq!(at("teatime").unwrap(), "2026-11-26T16:00:00");
        assert_eq!(at("elevenses").unwrap(), "2026-11-26T11:00:00");
        assert_eq!(at("fika").unwrap(), "2026-11-26T15:00:00");
        assert_eq!(at("tomorrow noon").unwrap(), "2026-11-27T12:00:00");
    }

    #[test]
    fn times_of_day_are_the_next_to_come() {
        assert_eq!(at("16:00").unwrap(), "2026-11-26T16:00:00");
        assert_eq!(at("07:00").unwrap(), "2026-11-27T07:00:00");
        assert_eq!(at("4:30:10 PM").unwrap(), "2026-11-26T16:30:10");
        assert_eq!(at("12:00am").unwrap(), "2026-11-27T00:00:00");
        assert_eq!(at("24:00"), None);
        assert_eq!(at("10:61"), None);
    }

    #[test]
    fn looking_back_a_time_of_day_is_today_s_and_a_later_month_last_year_s() {
        let past = |t: &str| parse_past_time(t, NOW, Zone::Utc).map(|t| Zone::Utc.iso(t));
        assert_eq!(past("07:00").unwrap(), "2026-11-26T07:00:00");
        assert_eq!(past("16:00").unwrap(), "2026-11-26T16:00:00");
        assert_eq!(past("1225").unwrap(), "2025-12-25T00:00:00");
        assert_eq!(past("11/01").unwrap(), "2026-11-01T00:00:00");
        assert_eq!(past("now-1hour").unwrap(), "2026-11-26T06:30:15");
        assert_eq!(past("midnight").unwrap(), "2026-11-26T00:00:00");
        assert_eq!(past("2025-01-02").unwrap(), "2025-01-02T00:00:00");
    }

    #[test]
    fn dates_in_every_form() {
        assert_eq!(at("2030-01-01T08:00:00").unwrap(), "2030-01-01T08:00:00");
        assert_eq!(at("2030-01-01").unwrap(), "2030-01-01T00:00:00");
        assert_eq!(at("2030-01-01T08:00").unwrap(), "2030-01-01T08:00:00");
        assert_eq!(at("1225").unwrap(), "2026-12-25T00:00:00");
        assert_eq!(at("122527").unwrap(), "2027-12-25T00:00:00");
        assert_eq!(at("12/25/27").unwrap(), "2027-12-25T00:00:00");
        assert_eq!(at("12.25").unwrap(), "2026-12-25T00:00:00");
        // A date already past this year is next year's.
        assert_eq!(at("0101").unwrap(), "2027-01-01T00:00:00");
        assert_eq!(at("12/25-10:00").unwrap(), "2026-12-25T10:00:00");
        assert_eq!(at("uts2000000000").unwrap(), "2033-05-18T03:33:20");
        assert_eq!(at("1325"), None);
        assert_eq!(at("next week"), None);
        assert_eq!(at(""), None);
    }
}
