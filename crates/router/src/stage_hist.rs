//! The forwarding stage's cost a packet, burst by burst: a histogram of full bursts'
//! stage TSC cycles a packet, in quarter-cycle steps.
//!
//! Why: `forwarding_cycles_total` is an average, and on a shared host the average moves
//! with the neighbours while the quiet bursts' cost does not. A low quantile of the
//! per-burst figure is the stage's cost when nothing else interfered, and it resolves a
//! change of a cycle where the average cannot (docs/benchmarks.md, "Session 28").
//!
//! Only full bursts (`burst_size` packets) are counted: a partial burst spreads the
//! per-burst work over fewer packets, so an idle port's trickle would read dearer.
//! The worker adds one observation a full burst: a multiply by a reciprocal fixed at
//! start, a shift, a compare and a counter bump. It must never divide or loop per burst.

/// Buckets a TSC cycle: bucket `b` holds bursts that took `[b/4, (b+1)/4)` cycles a packet.
pub const UNITS_PER_CYCLE: u64 = 4;
/// Buckets: 0 to 256 cycles a packet; the last one also holds every burst above.
pub const BUCKETS: usize = 1024;

/// Maps a full burst's stage cycles to its bucket without a division.
#[derive(Clone, Copy, Debug)]
pub struct StageScale {
    /// `ceil(UNITS_PER_CYCLE * 2^32 / burst_size)`.
    reciprocal: u64,
}

impl StageScale {
    /// For bursts of `burst_size` packets (1 or more).
    pub fn new(burst_size: usize) -> StageScale {
        let n = burst_size.max(1) as u64;
        StageScale {
            reciprocal: (UNITS_PER_CYCLE << 32).div_ceil(n),
        }
    }

    /// The bucket of a burst that spent `cycles` in the stage: `floor(4 * cycles / n)`,
    /// exact below 2^26 cycles for bursts of up to 64 (the rounded reciprocal's error
    /// stays under `1/64`, and a quotient that is not whole is `1/n` or more below the
    /// next), capped at the last bucket.
    #[inline(always)]
    pub fn bucket(self, cycles: u64) -> usize {
        ((cycles.saturating_mul(self.reciprocal) >> 32) as usize).min(BUCKETS - 1)
    }
}

/// Bursts by bucket, summable across workers.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct StageHist(pub [u64; BUCKETS]);

/// The summary's figures, not 1,024 counters (a failed test prints the totals).
impl std::fmt::Debug for StageHist {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "StageHist({})", self.summary())
    }
}

impl Default for StageHist {
    fn default() -> StageHist {
        StageHist([0; BUCKETS])
    }
}

impl StageHist {
    /// Bursts counted.
    pub fn count(&self) -> u64 {
        self.0.iter().sum()
    }

    /// Bucket-wise sum.
    pub fn add(&mut self, o: &StageHist) {
        for (a, b) in self.0.iter_mut().zip(o.0.iter()) {
            *a += b;
        }
    }

    /// The `q`-quantile (0 < q <= 1) in cycles a packet: the lower edge of the bucket
    /// that holds the burst of rank `ceil(q * count)`; `None` with no burst counted.
    pub fn quantile(&self, q: f64) -> Option<f64> {
        let total = self.count();
        if total == 0 {
            return None;
        }
        let rank = ((q * total as f64).ceil() as u64).clamp(1, total);
        let mut seen = 0;
        let b = self.0.iter().position(|&n| {
            seen += n;
            seen >= rank
        })?;
        Some(b as f64 / UNITS_PER_CYCLE as f64)
    }

    /// Bursts below `le` cycles a packet (`le` a multiple of a quarter cycle): the
    /// cumulative count of a Prometheus bucket.
    pub fn below(&self, le: f64) -> u64 {
        let end = ((le * UNITS_PER_CYCLE as f64) as usize).min(BUCKETS - 1);
        self.0[..end].iter().sum()
    }

    /// The sum of the observations as quantized: each bucket at its midpoint.
    pub fn midpoint_sum(&self) -> f64 {
        let unit = 1.0 / UNITS_PER_CYCLE as f64;
        self.0
            .iter()
            .enumerate()
            .map(|(b, &n)| n as f64 * (b as f64 + 0.5) * unit)
            .sum()
    }

    /// The summary's text: `full bursts N p10 X p50 Y` (cycles a packet).
    pub fn summary(&self) -> String {
        match (self.quantile(0.10), self.quantile(0.50)) {
            (Some(p10), Some(p50)) => {
                format!("full bursts {} p10 {p10:.2} p50 {p50:.2}", self.count())
            }
            _ => "full bursts 0".to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_exact_quarter_cycles_for_every_burst_size() {
        for n in 1..=64u64 {
            let s = StageScale::new(n as usize);
            for cycles in (0..20_000).chain([(1 << 26) - 1, (1 << 26) - 7 * n]) {
                let want = ((UNITS_PER_CYCLE * cycles / n) as usize).min(BUCKETS - 1);
                assert_eq!(s.bucket(cycles), want, "burst {n}, {cycles} cycles");
            }
        }
    }

    #[test]
    fn the_last_bucket_takes_everything_above_and_never_overflows() {
        let s = StageScale::new(64);
        assert_eq!(s.bucket(256 * 64), BUCKETS - 1);
        assert_eq!(s.bucket(u64::MAX), BUCKETS - 1);
        assert_eq!(s.bucket(255 * 64), 1020);
        assert_eq!(s.bucket(255 * 64 + 63), BUCKETS - 1);
    }

    #[test]
    fn quantiles_rank_bursts_from_the_cheapest() {
        let mut h = StageHist::default();
        assert_eq!(h.quantile(0.1), None);
        // 90 quiet bursts at 22 cycles a packet, 10 at 40 (a neighbour's interference).
        h.0[88] = 90;
        h.0[160] = 10;
        assert_eq!(h.quantile(0.10), Some(22.0));
        assert_eq!(h.quantile(0.90), Some(22.0));
        assert_eq!(h.quantile(0.91), Some(40.0));
        assert_eq!(h.quantile(1.0), Some(40.0));
        assert_eq!(h.count(), 100);
        assert_eq!(h.summary(), "full bursts 100 p10 22.00 p50 22.00");
        assert_eq!(
            format!("{h:?}"),
            "StageHist(full bursts 100 p10 22.00 p50 22.00)"
        );
        assert_eq!(h.below(22.0), 0);
        assert_eq!(h.below(22.25), 90);
        assert_eq!(h.below(40.25), 100);
        assert_eq!(h.midpoint_sum(), 90.0 * 22.125 + 10.0 * 40.125);
    }

    #[test]
    fn sums_across_workers() {
        let (mut a, mut b) = (StageHist::default(), StageHist::default());
        a.0[4] = 3;
        b.0[4] = 2;
        b.0[BUCKETS - 1] = 1;
        a.add(&b);
        assert_eq!((a.0[4], a.0[BUCKETS - 1], a.count()), (5, 1, 6));
        assert_eq!(a.quantile(1.0), Some((BUCKETS - 1) as f64 / 4.0));
    }
}
