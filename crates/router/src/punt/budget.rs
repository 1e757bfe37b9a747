//! Punt budgets: how many packets per second of each punt reason a worker may hand to
//! the slow path. Past its budget a packet is dropped in the worker, counted under
//! `<reason>_throttled`, and never queued: a hand-off costs the worker far more than a
//! drop, and the slow path would only have dropped it after its own rate limiter.
//!
//! One TSC-driven token bucket per reason, per worker: integer arithmetic on the
//! worker's own state, no syscall, no atomic, no division per packet. The worker passes
//! the TSC it already read for the burst ([`Budgets::begin_burst`]); a bucket is refilled
//! once per burst, at its first packet, so a packet over budget costs one compare.
//!
//! The configured rates are the router's: with N workers each bucket gets 1/N of the
//! rate (exactly: a token costs N times the cycles) and 1/N of the burst (at least one
//! packet), so the slow path sees the configured rate, not N times it. A flood that
//! lands on one worker's queues gets that worker's share only: the price of keeping the
//! buckets per worker (a shared one would take an atomic RMW per punt). ARP is the
//! exception, every worker has the whole ARP budget: RSS hashes IP headers, so all ARP
//! arrives on one queue, and a 1/N share would only shrink what a link flap may send.

use config::startup::PuntConfig;
use net::icmp::IcmpConfig;

use crate::counters::RuntimeDrop;
use crate::slowpath::{GIVE_UP_NS, HOLD_TOTAL, MAX_PENDING};

/// What a punt reason is budgeted as. Control traffic (routing protocols, link-local
/// multicast, ARP from a neighbour being resolved) has no budget: it is classified first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Budget {
    /// Packets towards an unresolved neighbour (glean, unresolved next hop).
    Glean,
    /// IPv4 or label TTL expiry (an ICMP time exceeded to generate).
    TtlExpired,
    /// IPv4 DF too big (an ICMP fragmentation needed to generate).
    FragNeeded,
    /// ICMP to one of the router's addresses (echo requests).
    Echo,
    /// ARP, except from a neighbour whose resolution is in progress.
    Arp,
    /// Router alert, IP options: the slow path drops them (counted).
    Other,
    /// IPv6 without a route (an ICMPv6 destination unreachable to generate).
    Unreachable,
}

impl Budget {
    /// Every budget, in index order.
    pub const ALL: [Budget; 7] = [
        Budget::Glean,
        Budget::TtlExpired,
        Budget::FragNeeded,
        Budget::Echo,
        Budget::Arp,
        Budget::Other,
        Budget::Unreachable,
    ];

    /// The drop reason a packet over this budget is counted under.
    pub const fn throttled(self) -> RuntimeDrop {
        match self {
            Budget::Glean => RuntimeDrop::GleanThrottled,
            Budget::TtlExpired => RuntimeDrop::TtlExpiredThrottled,
            Budget::FragNeeded => RuntimeDrop::FragNeededThrottled,
            Budget::Echo => RuntimeDrop::EchoThrottled,
            Budget::Arp => RuntimeDrop::ArpThrottled,
            Budget::Other => RuntimeDrop::OtherThrottled,
            Budget::Unreachable => RuntimeDrop::UnreachableThrottled,
        }
    }
}

/// Packets per second and largest burst of one budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rate {
    pub pps: u32,
    pub burst: u32,
}

/// A token bucket counted in TSC cycles: a packet costs `cost` cycles of credit, the
/// bucket holds at most `cap` (= burst packets' worth), and credit grows by one per
/// cycle. A rate of 0 admits nothing.
#[derive(Clone, Copy, Debug)]
struct Bucket {
    cost: u64,
    cap: u64,
    credit: u64,
    last: u64,
}

impl Bucket {
    /// A full bucket for `r` shared by `workers` buckets like it (at least 1).
    fn new(r: Rate, tsc_hz: u64, workers: usize) -> Bucket {
        let workers = workers.max(1) as u64;
        let cost = match r.pps {
            0 => u64::MAX,
            pps => (tsc_hz.saturating_mul(workers) / pps as u64).max(1),
        };
        let burst = (r.burst as u64).div_ceil(workers).max(1);
        let cap = cost.saturating_mul(burst);
        Bucket {
            cost,
            cap,
            credit: if r.pps == 0 { 0 } else { cap },
            last: 0,
        }
    }

    /// Adds the credit of the cycles since the last refill (none if the clock went back).
    #[cold]
    fn refill(&mut self, now: u64) {
        let grown = self.credit.saturating_add(now.saturating_sub(self.last));
        self.credit = grown.min(self.cap);
        self.last = self.last.max(now);
    }

    #[inline]
    fn admit(&mut self, now: u64) -> bool {
        if self.last != now {
            self.refill(now);
        }
        if self.credit < self.cost {
            return false;
        }
        self.credit -= self.cost;
        true
    }
}

/// One worker's buckets, one per [`Budget`].
#[derive(Clone, Debug)]
pub struct Budgets {
    buckets: [Bucket; Budget::ALL.len()],
    now: u64,
}

impl Budgets {
    /// Full buckets for one of `workers` workers sharing `rates` (indexed like
    /// [`Budget::ALL`]) on a TSC of `tsc_hz`.
    pub fn new(rates: &[Rate; Budget::ALL.len()], tsc_hz: u64, workers: usize) -> Budgets {
        let mut b = Budget::ALL.iter().zip(rates);
        let buckets = [(); Budget::ALL.len()].map(|_| match b.next() {
            Some((Budget::Arp, &r)) => Bucket::new(r, tsc_hz, 1),
            Some((_, &r)) => Bucket::new(r, tsc_hz, workers),
            None => unreachable!("one rate per budget"),
        });
        Budgets { buckets, now: 0 }
    }

    /// The TSC at the start of the burst being dispatched.
    #[inline]
    pub fn begin_burst(&mut self, tsc: u64) {
        self.now = tsc;
    }

    /// Takes a token of budget `b`; false when the packet is over budget.
    #[inline]
    pub fn admit(&mut self, b: Budget) -> bool {
        let now = self.now;
        self.buckets[b as usize].admit(now)
    }
}

/// Default glean budget: the resolutions the slow path can start. It keeps at most
/// `MAX_PENDING` (1,024) addresses for `GIVE_UP_NS` (3 s) each, so about 341 new
/// ones per second once full; the rest of a scan's packets would only be refused
/// there. A burst may fill its whole hold (`HOLD_TOTAL`, 256 packets).
pub fn default_glean() -> Rate {
    Rate {
        pps: (MAX_PENDING as u64 * 1_000_000_000 / GIVE_UP_NS) as u32,
        burst: HOLD_TOTAL as u32,
    }
}

/// Default ARP budget: ARP requests for the router's addresses and unsolicited ARP; a
/// burst of a whole link's neighbours after a flap (1,024, the control queue) passes.
/// ARP from a neighbour being resolved is never budgeted.
pub const DEFAULT_ARP: Rate = Rate {
    pps: 4096,
    burst: 1024,
};

/// Default for router alert and IP options: the slow path only counts and drops them.
pub const DEFAULT_OTHER: Rate = Rate {
    pps: 100,
    burst: 10,
};

/// The budgets of `punt:` (indexed like [`Budget::ALL`]); unset ones follow what the
/// slow path does: ICMP errors and echo replies at most at `icmp_rate_limit`'s rates
/// (an ICMP message its limiter would refuse is not punted).
pub fn rates(c: &PuntConfig, icmp: &IcmpConfig) -> [Rate; Budget::ALL.len()] {
    let pick = |pps: Option<u32>, burst: Option<u32>, d: Rate| Rate {
        pps: pps.unwrap_or(d.pps),
        burst: burst.unwrap_or(d.burst),
    };
    let errors = Rate {
        pps: icmp.rate_per_sec,
        burst: icmp.burst,
    };
    let echo = Rate {
        pps: icmp.echo_rate_per_sec,
        burst: icmp.echo_burst,
    };
    [
        pick(c.glean_pps, c.glean_burst, default_glean()),
        pick(c.ttl_expired_pps, c.ttl_expired_burst, errors),
        pick(c.frag_needed_pps, c.frag_needed_burst, errors),
        pick(c.echo_pps, c.echo_burst, echo),
        pick(c.arp_pps, c.arp_burst, DEFAULT_ARP),
        pick(c.other_pps, c.other_burst, DEFAULT_OTHER),
        pick(c.unreachable_pps, c.unreachable_burst, errors),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    const HZ: u64 = 1_000_000;

    fn one(pps: u32, burst: u32) -> Budgets {
        let mut r = [Rate { pps: 0, burst: 1 }; Budget::ALL.len()];
        r[Budget::Glean as usize] = Rate { pps, burst };
        Budgets::new(&r, HZ, 1)
    }

    #[test]
    fn burst_then_rate_per_reason() {
        let mut b = one(1000, 10);
        b.begin_burst(0);
        let first: usize = (0..50).filter(|_| b.admit(Budget::Glean)).count();
        assert_eq!(first, 10, "a full bucket admits the burst");
        assert!(
            !b.admit(Budget::Echo),
            "another reason's budget (0) is separate"
        );
        // One second later: 1000 more tokens, but the bucket holds 10.
        b.begin_burst(HZ);
        assert_eq!((0..50).filter(|_| b.admit(Budget::Glean)).count(), 10);
        // A millisecond later: one token.
        b.begin_burst(HZ + HZ / 1000);
        assert_eq!((0..50).filter(|_| b.admit(Budget::Glean)).count(), 1);
        // Over ten seconds at one packet per 100 µs: about 1000 per second admitted.
        let mut n = 0;
        for i in 0..100_000u64 {
            b.begin_burst(2 * HZ + i * 100);
            n += b.admit(Budget::Glean) as u32;
        }
        assert!((9_990..=10_011).contains(&n), "{n}");
    }

    #[test]
    fn defaults_follow_the_icmp_limits_and_the_config_wins() {
        let icmp = IcmpConfig {
            rate_per_sec: 7,
            burst: 3,
            echo_rate_per_sec: 11,
            echo_burst: 5,
            ..IcmpConfig::default()
        };
        let r = rates(&PuntConfig::default(), &icmp);
        assert_eq!(r[Budget::TtlExpired as usize], Rate { pps: 7, burst: 3 });
        assert_eq!(r[Budget::FragNeeded as usize], Rate { pps: 7, burst: 3 });
        assert_eq!(r[Budget::Unreachable as usize], Rate { pps: 7, burst: 3 });
        assert_eq!(r[Budget::Echo as usize], Rate { pps: 11, burst: 5 });
        assert_eq!(
            r[Budget::Glean as usize],
            Rate {
                pps: 341,
                burst: 256
            }
        );
        let c = PuntConfig {
            glean_pps: Some(9),
            ttl_expired_burst: Some(1),
            ..PuntConfig::default()
        };
        let r = rates(&c, &icmp);
        assert_eq!(r[Budget::Glean as usize], Rate { pps: 9, burst: 256 });
        assert_eq!(r[Budget::TtlExpired as usize], Rate { pps: 7, burst: 1 });
    }

    #[test]
    fn workers_share_the_configured_rate_and_burst() {
        let mut r = [Rate { pps: 0, burst: 1 }; Budget::ALL.len()];
        r[Budget::Glean as usize] = Rate {
            pps: 1000,
            burst: 10,
        };
        let mut workers: Vec<Budgets> = (0..4).map(|_| Budgets::new(&r, HZ, 4)).collect();
        // A full bucket holds ceil(10 / 4) = 3 packets per worker.
        let first: Vec<usize> = workers
            .iter_mut()
            .map(|w| (0..50).filter(|_| w.admit(Budget::Glean)).count())
            .collect();
        assert_eq!(first, [3; 4]);
        // Then 250 pps each: 10,000 over 10 s in all (not 4 x 10,000), each worker
        // offered a packet every 10 µs (100,000 pps).
        let mut per_worker = [0u32; 4];
        for i in 1..=1_000_000u64 {
            for (w, n) in workers.iter_mut().zip(per_worker.iter_mut()) {
                w.begin_burst(i * 10);
                *n += w.admit(Budget::Glean) as u32;
            }
        }
        for n in per_worker {
            assert!((2_499..=2_500).contains(&n), "{per_worker:?}");
        }
        // ARP is not divided (it all comes in on one queue): the whole burst.
        r[Budget::Arp as usize] = Rate {
            pps: 1000,
            burst: 10,
        };
        let mut b = Budgets::new(&r, HZ, 4);
        assert_eq!((0..50).filter(|_| b.admit(Budget::Arp)).count(), 10);
        // Fewer packets per second than workers: each still gets its share of time.
        r[Budget::Glean as usize] = Rate { pps: 2, burst: 1 };
        let mut b = Budgets::new(&r, HZ, 4);
        let n: u32 = (0..10_000u64)
            .map(|i| {
                b.begin_burst(i * 1_000);
                b.admit(Budget::Glean) as u32
            })
            .sum();
        assert_eq!(n, 5, "0.5 pps over 10 s (the first from the full bucket)");
    }

    #[test]
    fn zero_admits_nothing_and_a_clock_going_back_adds_nothing() {
        let mut b = one(0, 5);
        b.begin_burst(u64::MAX / 2);
        assert!(!b.admit(Budget::Glean));
        let mut b = one(10, 1);
        b.begin_burst(HZ);
        assert!(b.admit(Budget::Glean));
        b.begin_burst(0);
        assert!(!b.admit(Budget::Glean));
    }
}
