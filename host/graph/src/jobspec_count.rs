//! A jobspec resource count: a fixed number or a range `{min, max, operator, operand}`.

use serde::Deserialize;

/// The count Fluxion treats as unbounded (`UINT_MAX`), the `max` of a `{min}`-only range.
pub const UNBOUNDED: u64 = u32::MAX as u64;

/// How a range count steps from `min` towards `max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CountOperator {
    /// `min, min + operand, min + 2·operand, …`
    Add,
    /// `min, min·operand, min·operand², …`
    Multiply,
    /// `min, min^operand, (min^operand)^operand, …`
    Power,
}

/// A validated resource count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(try_from = "RawCount")]
pub struct Count {
    /// Fewest acceptable.
    pub min: u64,
    /// Most acceptable.
    pub max: u64,
    /// Step rule between `min` and `max`.
    pub operator: CountOperator,
    /// Step argument.
    pub operand: u64,
}

/// The two YAML shapes of a count, before validation.
#[derive(Deserialize)]
#[serde(untagged)]
enum RawCount {
    Fixed(u64),
    Range(RawRange),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRange {
    min: i64,
    max: Option<i64>,
    operator: Option<String>,
    operand: Option<i64>,
}

/// Fluxion's texts for refused counts, kept verbatim because resource-query prints them.
const MIN_ZERO: &str = "\"min\" must be greater than zero";
const MAX_BELOW_MIN: &str = "\"max\" must be greater than or equal to \"min\"";
const ALL_OR_NONE: &str = "All or none of \"max\", \"operator\", and \"operand\" must be specified";
const BAD_OPERATOR: &str = "Invalid count operator";

impl TryFrom<RawCount> for Count {
    type Error = String;

    fn try_from(raw: RawCount) -> Result<Self, String> {
        let range = match raw {
            // libjobspec takes a scalar as is (even 0, which then never matches).
            RawCount::Fixed(n) => return Ok(Count::fixed(n)),
            RawCount::Range(range) => range,
        };
        // libjobspec checks presence, then min, then max, then the operator and its operand.
        let (max, operator, operand) = match (range.max, range.operator, range.operand) {
            (None, None, None) => (None, "+".to_string(), 1),
            (Some(max), Some(operator), Some(operand)) => (Some(max), operator, operand),
            _ => return Err(ALL_OR_NONE.into()),
        };
        if range.min < 1 {
            return Err(MIN_ZERO.into());
        }
        if max.is_some_and(|max| max < range.min) {
            return Err(MAX_BELOW_MIN.into());
        }
        let operator = match operator.as_str() {
            "+" => CountOperator::Add,
            "*" => CountOperator::Multiply,
            "^" => CountOperator::Power,
            _ => return Err(BAD_OPERATOR.into()),
        };
        let count = Count {
            min: range.min as u64,
            max: max.map_or(UNBOUNDED, |m| m as u64),
            operator,
            operand: u64::try_from(operand).unwrap_or(0),
        };
        count.validate()?;
        Ok(count)
    }
}

impl Count {
    /// A fixed count of `n`.
    pub fn fixed(n: u64) -> Self {
        Count {
            min: n,
            max: n,
            operator: CountOperator::Add,
            operand: 1,
        }
    }

    /// Refuses a range no selection can satisfy, with libjobspec's texts.
    pub fn validate(&self) -> Result<(), String> {
        if self.min < 1 {
            return Err(MIN_ZERO.into());
        }
        if self.max < self.min {
            return Err(MAX_BELOW_MIN.into());
        }
        let refusal = match self.operator {
            CountOperator::Add if self.operand < 1 => {
                "\"operand\" must be greater than zero for addition '+'"
            }
            CountOperator::Multiply if self.operand < 2 => {
                "\"operand\" must be greater than one for multiplication '*'"
            }
            CountOperator::Power if self.operand < 2 => {
                "\"operand\" must be greater than one for exponentiation '^'"
            }
            CountOperator::Power if self.min < 2 => {
                "\"min\" must be greater than one for exponentiation '^'"
            }
            _ => return Ok(()),
        };
        Err(refusal.into())
    }

    /// How many to take when `available` qualify: the largest value of the count's sequence that
    /// is ≤ both `available` and `max`, or 0 when even `min` does not fit (Fluxion's `calc_count`).
    pub fn select(&self, available: u64) -> u64 {
        if self.min > self.max || self.min > available {
            return 0;
        }
        let limit = available.min(self.max);
        if self.operator == CountOperator::Add {
            // Closed form: stepping one by one up to `UNBOUNDED` would take billions of steps.
            return self.min + (limit - self.min) / self.operand * self.operand;
        }
        let mut chosen = self.min;
        loop {
            let next = match self.operator {
                CountOperator::Add => None,
                CountOperator::Multiply => chosen.checked_mul(self.operand),
                CountOperator::Power => u32::try_from(self.operand)
                    .ok()
                    .and_then(|p| chosen.checked_pow(p)),
            };
            match next {
                Some(n) if n <= limit && n > chosen => chosen = n,
                _ => return chosen,
            }
        }
    }

    /// The most this count can ever take (`calc_count` with unbounded availability).
    pub fn effective_max(&self) -> u64 {
        self.select(UNBOUNDED)
    }
}
