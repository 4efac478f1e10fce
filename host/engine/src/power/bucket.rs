//! Owns a token bucket: Slurm's power rate limiter (`power_save_rl_setup`, `_rl_get_tokens`).

/// Nodes per minute as tokens: one per `60000 / rate` ms, at most `rate · max(1, interval) / 60`
/// (at least 1) held. Refills happen at multiples of the period on the engine's clock, so a
/// replay refills at the same virtual instants every time. Rate 0 means unlimited.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenBucket {
    rate: u32,
    max_tokens: u64,
    tokens: u64,
    /// The refill period count (`now_ms / period`) tokens were last added for; `None` until the
    /// first use, which fills the bucket (Slurm's Q1: its buckets start full).
    last_period: Option<i64>,
}

impl TokenBucket {
    /// A bucket for `rate` nodes per minute with passes every `interval` seconds (the larger of
    /// `power_save_interval` and `power_save_min_interval`).
    pub fn new(rate: u32, interval: u64) -> Self {
        let max_tokens = (u64::from(rate) * interval.max(1) / 60).max(1);
        Self {
            rate,
            max_tokens,
            tokens: max_tokens,
            last_period: None,
        }
    }

    /// Whether the rate is unlimited.
    pub fn unlimited(&self) -> bool {
        self.rate == 0
    }

    /// Adds the tokens of the periods that ended by `now` (seconds).
    pub fn refill(&mut self, now: i64) {
        if self.unlimited() {
            return;
        }
        let period_ms = 60_000 / i64::from(self.rate).max(1);
        let period = now.saturating_mul(1000) / period_ms.max(1);
        match self.last_period {
            None => self.tokens = self.max_tokens,
            Some(last) if period > last => {
                let added = u64::try_from(period - last).unwrap_or(u64::MAX);
                self.tokens = self.tokens.saturating_add(added).min(self.max_tokens);
            }
            Some(_) => {}
        }
        self.last_period = Some(period);
    }

    /// Whether a token is left (always under an unlimited rate).
    pub fn has_token(&self) -> bool {
        self.unlimited() || self.tokens > 0
    }

    /// Spends a token if one is left; true under an unlimited rate.
    pub fn take(&mut self) -> bool {
        if self.unlimited() {
            return true;
        }
        if self.tokens == 0 {
            return false;
        }
        self.tokens -= 1;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::TokenBucket;

    #[test]
    fn defaults_hold_fifty_and_ten_tokens_and_start_full() {
        let mut resume = TokenBucket::new(300, 10);
        resume.refill(1_000);
        assert_eq!((0..60).filter(|_| resume.take()).count(), 50);
        let mut suspend = TokenBucket::new(60, 10);
        suspend.refill(1_000);
        assert_eq!((0..60).filter(|_| suspend.take()).count(), 10);
        // One token a second at 60/min.
        suspend.refill(1_003);
        assert_eq!((0..60).filter(|_| suspend.take()).count(), 3);
    }

    #[test]
    fn rate_one_refills_once_a_minute() {
        let mut b = TokenBucket::new(1, 10);
        b.refill(600);
        assert!(b.take() && !b.take());
        b.refill(659);
        assert!(!b.take());
        b.refill(660);
        assert!(b.take());
        let mut free = TokenBucket::new(0, 10);
        assert!((0..1000).all(|_| free.take()));
    }
}
