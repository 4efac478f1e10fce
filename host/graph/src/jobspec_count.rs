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
    min: u64,
    max: Option<u64>,
    operator: Option<String>,
    operand: Option<u64>,
}

impl TryFrom<RawCount> for Count {
    type Error = String;

    fn try_from(raw: RawCount) -> Result<Self, String> {
        let count = match raw {
            RawCount::Fixed(n) => Count {
                min: n,
                max: n,
                operator: CountOperator::Add,
                operand: 1,
            },
            RawCount::Range(RawRange {
                min,
                max: None,
                operator: None,
                operand: None,
            }) => Count {
                min,
                max: UNBOUNDED,
                operator: CountOperator::Add,
                operand: 1,
            },
            RawCount::Range(RawRange {
                min,
                max: Some(max),
                operator: Some(operator),
                operand: Some(operand),
            }) => {
                let operator = match operator.as_str() {
                    "+" => CountOperator::Add,
                    "*" => CountOperator::Multiply,
                    "^" => CountOperator::Power,
                    other => {
                        return Err(format!("count operator must be +, * or ^, found `{other}`"));
                    }
                };
                Count {
                    min,
                    max,
                    operator,
                    operand,
                }
            }
            RawCount::Range(_) => {
                return Err(
                    "count must give min alone or all of min, max, operator and operand".into(),
                );
            }
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

    /// Refuses counts no selection can satisfy (RFC 14 rules as libjobspec applies them).
    pub fn validate(&self) -> Result<(), String> {
        if self.min < 1 {
            return Err("count min must be ≥ 1".into());
        }
        if self.max < self.min {
            return Err(format!(
                "count max ({}) must be ≥ min ({})",
                self.max, self.min
            ));
        }
        match self.operator {
            CountOperator::Add if self.operand < 1 => Err("count operand must be ≥ 1 for +".into()),
            CountOperator::Multiply if self.operand < 2 => {
                Err("count operand must be ≥ 2 for *".into())
            }
            CountOperator::Power if self.operand < 2 => {
                Err("count operand must be ≥ 2 for ^".into())
            }
            CountOperator::Power if self.min < 2 => Err("count min must be ≥ 2 for ^".into()),
            _ => Ok(()),
        }
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
