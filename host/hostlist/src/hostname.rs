//! One host name split the way Slurm's `hostname_create` does: a prefix and an optional trailing number.

/// Longest trailing digit run treated as a number; longer runs keep the whole name literal so that
/// arithmetic on the number can never overflow.
const MAX_SUFFIX_DIGITS: usize = 18;

/// A host name's prefix and trailing number with its printed width (`node007` is `node`, 7, width 3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HostName<'a> {
    /// Everything before the trailing digits, or the whole name when it has none.
    pub prefix: &'a str,
    /// The trailing number and its digit count, if the name ends in digits.
    pub number: Option<(u64, usize)>,
}

impl<'a> HostName<'a> {
    /// `name` whole, as a single host is (`single`), else [`HostName::split`].
    pub fn split_unless(name: &'a str, single: bool) -> Self {
        if single {
            HostName {
                prefix: name,
                number: None,
            }
        } else {
            Self::split(name)
        }
    }

    /// Splits `name` at its trailing digits.
    pub fn split(name: &'a str) -> Self {
        let digits = name.bytes().rev().take_while(u8::is_ascii_digit).count();
        if digits == 0 || digits > MAX_SUFFIX_DIGITS {
            return Self {
                prefix: name,
                number: None,
            };
        }
        let (prefix, suffix) = name.split_at(name.len() - digits);
        // At most 18 digits always fits in u64, so parsing cannot fail.
        let value = suffix.parse().unwrap_or(0);
        Self {
            prefix,
            number: Some((value, digits)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_trailing_digits_and_keeps_width() {
        assert_eq!(HostName::split("node007").prefix, "node");
        assert_eq!(HostName::split("node007").number, Some((7, 3)));
        assert_eq!(HostName::split("node1.ib").number, None);
        assert_eq!(HostName::split("42").prefix, "");
        assert_eq!(HostName::split("42").number, Some((42, 2)));
        assert_eq!(HostName::split("n1234567890123456789").number, None);
    }
}
