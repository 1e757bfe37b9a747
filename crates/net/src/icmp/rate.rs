//! A token bucket for generated ICMP (the slow path keeps one for errors and one for
//! echo replies). Deterministic: the caller passes the current time, so tests drive it
//! without sleeping.

const NANOS: u64 = 1_000_000_000;

/// Allows `rate_per_sec` messages per second on average and bursts of `burst`.
#[derive(Debug, Clone)]
pub struct TokenBucket {
    rate_per_sec: u64,
    /// Capacity in credit units (one token = `NANOS` units).
    capacity: u64,
    credit: u64,
    last_ns: u64,
}

impl TokenBucket {
    /// A full bucket. A rate of 0 allows nothing.
    pub fn new(rate_per_sec: u32, burst: u32) -> TokenBucket {
        let capacity = (burst.max(1) as u64) * NANOS;
        TokenBucket {
            rate_per_sec: rate_per_sec as u64,
            capacity,
            credit: if rate_per_sec == 0 { 0 } else { capacity },
            last_ns: 0,
        }
    }

    /// Takes a token if one is available at time `now_ns` (any monotonic clock; a clock
    /// going backwards just adds no credit). Call it once the message is certain to be
    /// sent: a message suppressed for another reason must not cost a token.
    pub fn allow(&mut self, now_ns: u64) -> bool {
        if self.peek(now_ns) {
            self.credit -= NANOS;
            true
        } else {
            false
        }
    }

    /// Refills for the time since the last call; whether a token is available now.
    fn peek(&mut self, now_ns: u64) -> bool {
        let elapsed = now_ns.saturating_sub(self.last_ns);
        self.last_ns = self.last_ns.max(now_ns);
        self.credit = self
            .credit
            .saturating_add(elapsed.saturating_mul(self.rate_per_sec))
            .min(self.capacity);
        self.rate_per_sec > 0 && self.credit >= NANOS
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn burst_then_rate() {
        let mut b = TokenBucket::new(10, 3);
        let t0 = 5 * NANOS;
        assert_eq!((0..5).filter(|_| b.allow(t0)).count(), 3);
        // 10/s: one token every 100 ms.
        assert!(!b.allow(t0 + 99_000_000));
        assert!(b.allow(t0 + 100_000_000));
        assert!(!b.allow(t0 + 100_000_000));
        // A long pause refills only up to the burst.
        let t1 = t0 + 3600 * NANOS;
        assert_eq!((0..10).filter(|_| b.allow(t1)).count(), 3);
        // Time going backwards gives nothing.
        assert!(!b.allow(t0));
    }

    #[test]
    fn peek_takes_nothing() {
        let mut b = TokenBucket::new(1, 2);
        assert!((0..10).all(|_| b.peek(0)));
        assert!(b.allow(0) && b.allow(0));
        assert!(!b.peek(0) && !b.allow(0));
    }

    #[test]
    fn zero_rate_allows_nothing() {
        let mut b = TokenBucket::new(0, 10);
        assert!(!b.allow(0));
        assert!(!b.allow(u64::MAX));
    }
}
