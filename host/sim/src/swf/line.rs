//! One SWF data line: 18 whitespace-separated numbers, `-1` meaning unknown.

/// The PWA names of the 18 fields, for error messages.
pub(super) const FIELD_NAMES: [&str; 18] = [
    "job number",
    "submit time",
    "wait time",
    "run time",
    "allocated processors",
    "average CPU time",
    "used memory",
    "requested processors",
    "requested time",
    "requested memory",
    "status",
    "user ID",
    "group ID",
    "executable number",
    "queue number",
    "partition number",
    "preceding job",
    "think time",
];

/// Why a data line could not be split into fields.
#[derive(Debug, PartialEq)]
pub(super) enum LineError<'a> {
    /// Not exactly 18 fields.
    Count(usize),
    /// Field `index` (0-based) is not a number.
    NotANumber { index: usize, text: &'a str },
}

/// Splits a data line into its 18 numbers. Floats are allowed anywhere (HPC2N has `552.21` in
/// field 6) and rounded to the nearest integer, because the simulator's clock counts whole seconds.
pub(super) fn parse_fields(line: &str) -> Result<[i64; 18], LineError<'_>> {
    let mut fields = [0i64; 18];
    let mut count = 0;
    for token in line.split_ascii_whitespace() {
        if count < 18 {
            fields[count] = parse_number(token).ok_or(LineError::NotANumber {
                index: count,
                text: token,
            })?;
        }
        count += 1;
    }
    if count == 18 {
        Ok(fields)
    } else {
        Err(LineError::Count(count))
    }
}

fn parse_number(token: &str) -> Option<i64> {
    token.parse::<i64>().ok().or_else(|| {
        let value = token.parse::<f64>().ok()?;
        value.is_finite().then(|| value.round() as i64)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_and_floats_parse() {
        let fields = parse_fields("1 0 10 3.6 4 552.21 -1 4 60 -1 1 1 1 -1 -1 -1 -1 -1").unwrap();
        assert_eq!(fields[3], 4);
        assert_eq!(fields[5], 552);
        assert_eq!(fields[6], -1);
    }

    #[test]
    fn wrong_field_counts_are_reported() {
        assert_eq!(parse_fields("1 2 3"), Err(LineError::Count(3)));
        let nineteen = "1 ".repeat(19);
        assert_eq!(parse_fields(&nineteen), Err(LineError::Count(19)));
    }

    #[test]
    fn the_first_bad_token_is_reported() {
        let err = parse_fields("1 0 x 10 4 -1 -1 4 60 -1 1 1 1 -1 -1 -1 -1 -1").unwrap_err();
        assert_eq!(
            err,
            LineError::NotANumber {
                index: 2,
                text: "x"
            }
        );
    }
}
