//! Time on a plot: seconds since the first submission shown in hours or days, and durations as text.

use crate::job::Time;

/// Spans up to this long are shown in hours, longer ones in days.
const HOURS_UP_TO_S: Time = 3 * 86_400;

/// A horizontal time axis fitted to the data: from the first submission to the last point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimeAxis {
    seconds_per_unit: f64,
    unit: &'static str,
    span_s: Time,
}

impl TimeAxis {
    /// An axis covering `span_s` seconds (at least one), in hours up to three days, else in days.
    pub fn fitted(span_s: Time) -> Self {
        let span_s = span_s.max(1);
        let (seconds_per_unit, unit) = if span_s <= HOURS_UP_TO_S {
            (3_600.0, "hours")
        } else {
            (86_400.0, "days")
        };
        TimeAxis {
            seconds_per_unit,
            unit,
            span_s,
        }
    }

    /// Where `offset_s` seconds after the first submission lies on the axis.
    pub fn at(&self, offset_s: Time) -> f64 {
        offset_s as f64 / self.seconds_per_unit
    }

    /// The right end of the axis, in its unit.
    pub fn end(&self) -> f64 {
        self.at(self.span_s)
    }

    /// The axis title, e.g. `days since first submission`.
    pub fn title(&self) -> String {
        format!("{} since first submission", self.unit)
    }
}

/// `0 s`, `45 s`, `8 min`, `4.6 h`, `6 h`, `2.1 d`.
pub fn duration_label(seconds: Time) -> String {
    let (value, unit) = match seconds {
        s if s < 60 => return format!("{s} s"),
        s if s < 3_600 => return format!("{} min", s / 60),
        s if s < 86_400 => (s as f64 / 3_600.0, "h"),
        s => (s as f64 / 86_400.0, "d"),
    };
    let text = format!("{value:.1}");
    format!("{} {unit}", text.strip_suffix(".0").unwrap_or(&text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_spans_are_in_hours_and_long_ones_in_days() {
        let short = TimeAxis::fitted(2 * 86_400);
        assert_eq!(
            (short.end(), short.title().as_str()),
            (48.0, "hours since first submission")
        );
        let long = TimeAxis::fitted(340 * 86_400 + 43_200);
        assert_eq!((long.end(), long.at(86_400)), (340.5, 1.0));
        assert_eq!(long.title(), "days since first submission");
    }

    #[test]
    fn durations_read_as_people_say_them() {
        assert_eq!(duration_label(45), "45 s");
        assert_eq!(duration_label(480), "8 min");
        assert_eq!(duration_label(16_560), "4.6 h");
        assert_eq!(duration_label(181_440), "2.1 d");
        assert_eq!(duration_label(21_600), "6 h");
    }
}
