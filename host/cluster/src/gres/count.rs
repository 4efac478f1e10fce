//! GRES counts with Slurm's binary suffixes: K, M, G, T, P multiply by 1024ⁿ.

/// Parses `4`, `4K`, `2g` … into a count; `None` when malformed or too large.
pub fn parse_count(text: &str) -> Option<u64> {
    let text = text.trim();
    let (digits, power) = match text.char_indices().last()? {
        (i, c) if c.is_ascii_alphabetic() => {
            let power = match c.to_ascii_uppercase() {
                'K' => 1,
                'M' => 2,
                'G' => 3,
                'T' => 4,
                'P' => 5,
                _ => return None,
            };
            (&text[..i], power)
        }
        _ => (text, 0),
    };
    if digits.is_empty() || digits.len() > 19 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits
        .parse::<u64>()
        .ok()?
        .checked_mul(1024u64.checked_pow(power)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suffixes_are_binary() {
        assert_eq!(parse_count("4"), Some(4));
        assert_eq!(parse_count("4K"), Some(4096));
        assert_eq!(parse_count("2g"), Some(2 << 30));
        assert_eq!(parse_count("1P"), Some(1 << 50));
        assert_eq!(parse_count("4X"), None);
        assert_eq!(parse_count("K"), None);
        assert_eq!(parse_count(""), None);
        assert_eq!(parse_count("99999999999P"), None);
    }
}
