//! Node-side `Gres=` strings: `gpu:a100:4,nic:1,bandwidth:lustre:no_consume:4G`.

use super::parse_count;

/// One entry of a `Gres=` string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GresSpec {
    /// GRES name.
    pub name: String,
    /// Type, if given.
    pub gres_type: Option<String>,
    /// Count (1 when omitted).
    pub count: u64,
    /// `no_consume` was given.
    pub no_consume: bool,
}

/// Parses a `Gres=` string; the error gives the 1-based column in `text`, what was found and what was
/// expected. Like `slurm_get_next_tres`, the last part is the count when numeric, else a type with
/// count 1, and a trailing `:` is rejected.
pub fn parse_gres_spec(text: &str) -> Result<Vec<GresSpec>, (usize, String, String)> {
    let mut specs = Vec::new();
    if text.trim().is_empty() || text.eq_ignore_ascii_case("(null)") {
        return Ok(specs);
    }
    let mut column = 1;
    for entry in text.split(',') {
        specs.push(parse_entry(entry, column)?);
        column += entry.chars().count() + 1;
    }
    Ok(specs)
}

fn parse_entry(entry: &str, column: usize) -> Result<GresSpec, (usize, String, String)> {
    let parts: Vec<&str> = entry.split(':').collect();
    let mut offsets = Vec::with_capacity(parts.len());
    let mut offset = column;
    for part in &parts {
        offsets.push(offset);
        offset += part.chars().count() + 1;
    }
    for (part, &col) in parts.iter().zip(&offsets) {
        if part.is_empty() {
            return Err((
                col,
                format!("an empty part in `{entry}`"),
                "name[:type][:no_consume][:count]".into(),
            ));
        }
        if let Some(bad) = part
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || "_-.".contains(*c)))
        {
            return Err((
                col,
                format!("`{bad}` in `{part}`"),
                "letters, digits, `_`, `-` or `.`".into(),
            ));
        }
    }
    let name = parts[0].to_owned();
    let mut rest = &parts[1..];
    let mut count = 1;
    if let Some(last) = rest.last()
        && last.starts_with(|c: char| c.is_ascii_digit())
    {
        count = parse_count(last).ok_or_else(|| {
            (
                offsets[parts.len() - 1],
                format!("count `{last}`"),
                "a number with an optional K, M, G, T or P suffix".to_owned(),
            )
        })?;
        rest = &rest[..rest.len() - 1];
    }
    let no_consume = rest.last() == Some(&"no_consume");
    if no_consume {
        rest = &rest[..rest.len() - 1];
    }
    match rest {
        [] => Ok(GresSpec {
            name,
            gres_type: None,
            count,
            no_consume,
        }),
        [gres_type] => Ok(GresSpec {
            name,
            gres_type: Some((*gres_type).to_owned()),
            count,
            no_consume,
        }),
        _ => Err((
            offsets[2],
            format!("too many parts in `{entry}`"),
            "name[:type][:no_consume][:count]".into(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_names_types_counts_and_flags() {
        let specs = parse_gres_spec("gpu:a100:4,nic:1,mps:400,bandwidth:lustre:no_consume:4G,fpga")
            .unwrap();
        assert_eq!(specs.len(), 5);
        assert_eq!(specs[0].gres_type.as_deref(), Some("a100"));
        assert_eq!(specs[0].count, 4);
        assert_eq!(specs[1].gres_type, None);
        assert_eq!(specs[3].count, 4 << 30);
        assert!(specs[3].no_consume);
        assert_eq!(specs[4].count, 1);
        assert_eq!(
            parse_gres_spec("gpu:kepler").unwrap()[0]
                .gres_type
                .as_deref(),
            Some("kepler")
        );
    }

    #[test]
    fn rejects_trailing_colon_and_bad_counts() {
        assert_eq!(parse_gres_spec("gpu:").unwrap_err().0, 5);
        assert_eq!(parse_gres_spec("nic:1,gpu:4Q").unwrap_err().0, 11);
        assert!(parse_gres_spec("a:b:c:d").is_err());
        assert!(parse_gres_spec("gpu(x)").is_err());
    }
}
