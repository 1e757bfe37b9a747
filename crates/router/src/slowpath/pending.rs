//! Resolutions in progress: the packets that wait for a next hop's MAC, and when to ask
//! (again) for it.
//!
//! Pure and generic over what is held (an mbuf in the router, anything in tests); time
//! is passed in as nanoseconds. Bounded three ways: packets per address, packets in all,
//! and addresses being resolved, so a flood towards unresolved addresses costs at most
//! [`MAX_PENDING`] requests per [`RETRY_NS`]. It never frees or sends what it holds: it
//! gives it back to the caller, who counts it.

use std::collections::HashMap;

use super::addr::NbrAddr;
use super::neighbors::RETRY_NS;

/// Packets held per unresolved address, and in all.
pub const HOLD_PER_ADDR: usize = 4;
pub const HOLD_TOTAL: usize = 256;
/// Addresses being resolved at once.
pub const MAX_PENDING: usize = 1024;
/// How long packets wait for a resolution before they are dropped.
pub const GIVE_UP_NS: u64 = 3_000_000_000;

struct Resolution<H> {
    held: Vec<H>,
    first: u64,
    /// None until the first request.
    last_request: Option<u64>,
}

fn due(last_request: Option<u64>, now: u64) -> bool {
    last_request.is_none_or(|t| now.saturating_sub(t) >= RETRY_NS)
}

/// What [`Pending::hold`] did with a packet; in both cases a request for the address is
/// due now when `ask`.
pub enum Hold<H> {
    Held {
        ask: bool,
    },
    /// No room: the packet is given back.
    Full {
        h: H,
        ask: bool,
    },
}

/// Unresolved addresses and the packets waiting for them.
pub struct Pending<H> {
    map: HashMap<(u16, NbrAddr), Resolution<H>>,
    held: usize,
}

impl<H> Default for Pending<H> {
    fn default() -> Self {
        Pending {
            map: HashMap::new(),
            held: 0,
        }
    }
}

impl<H> Pending<H> {
    /// Holds `h` until `ip` on `port` resolves. A request is due for the first packet and
    /// then at most every [`RETRY_NS`].
    pub fn hold(&mut self, port: u16, ip: NbrAddr, h: H, now: u64) -> Hold<H> {
        if !self.map.contains_key(&(port, ip)) && self.map.len() >= MAX_PENDING {
            return Hold::Full { h, ask: false };
        }
        let total = self.held;
        let r = self.map.entry((port, ip)).or_insert_with(|| Resolution {
            held: Vec::new(),
            first: now,
            last_request: None,
        });
        let ask = due(r.last_request, now);
        if ask {
            r.last_request = Some(now);
        }
        if r.held.len() >= HOLD_PER_ADDR || total >= HOLD_TOTAL {
            return Hold::Full { h, ask };
        }
        r.held.push(h);
        self.held += 1;
        Hold::Held { ask }
    }

    /// Whether a resolution of `ip` on `port` is in progress.
    pub fn contains(&self, port: u16, ip: NbrAddr) -> bool {
        self.map.contains_key(&(port, ip))
    }

    /// Takes every held packet (to retry them against a new table); the resolutions
    /// stay until they expire.
    pub fn take_all(&mut self) -> Vec<H> {
        self.held = 0;
        let mut out = Vec::new();
        for r in self.map.values_mut() {
            out.append(&mut r.held);
        }
        out
    }

    /// Ends resolutions older than [`GIVE_UP_NS`]: returns the packets given up on, the
    /// addresses to ask for again (those with packets waiting; `resolved` ones are only
    /// waiting for the table and are not asked for), and the addresses whose resolution
    /// ended.
    #[allow(clippy::type_complexity)]
    pub fn expire(
        &mut self,
        now: u64,
        resolved: impl Fn(u16, NbrAddr) -> bool,
    ) -> (Vec<H>, Vec<(u16, NbrAddr)>, Vec<(u16, NbrAddr)>) {
        let mut dropped = Vec::new();
        let mut ask = Vec::new();
        let mut ended = Vec::new();
        self.map.retain(|&(port, ip), r| {
            if now.saturating_sub(r.first) >= GIVE_UP_NS {
                dropped.append(&mut r.held);
                ended.push((port, ip));
                return false;
            }
            if !r.held.is_empty() && due(r.last_request, now) && !resolved(port, ip) {
                r.last_request = Some(now);
                ask.push((port, ip));
            }
            true
        });
        self.held -= dropped.len().min(self.held);
        (dropped, ask, ended)
    }

    /// Addresses being resolved and since when, for `show neighbors`.
    pub fn resolving(&self) -> impl Iterator<Item = ((u16, NbrAddr), u64)> + '_ {
        self.map.iter().map(|(&k, r)| (k, r.first))
    }

    /// Addresses being resolved.
    pub fn addresses(&self) -> usize {
        self.map.len()
    }

    /// Packets held.
    pub fn held(&self) -> usize {
        self.held
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use NbrAddr::{V4, V6};

    #[test]
    fn bounded_per_address_in_all_and_in_addresses() {
        let mut p = Pending::default();
        let asks: Vec<bool> = (0..HOLD_PER_ADDR + 1)
            .map(|i| match p.hold(0, V4(7), i, 0) {
                Hold::Held { ask } => ask,
                Hold::Full { h, ask } => {
                    assert_eq!(h, HOLD_PER_ADDR, "the extra packet is given back");
                    ask
                }
            })
            .collect();
        assert_eq!(asks.iter().filter(|a| **a).count(), 1, "one request");
        let mut full = 0;
        for ip in 0..(MAX_PENDING as u32 + 10) {
            if let Hold::Full { ask, .. } = p.hold(1, V4(ip), 0, 0) {
                full += 1;
                assert!(!ask || p.addresses() <= MAX_PENDING);
            }
        }
        assert_eq!(p.addresses(), MAX_PENDING);
        assert!(p.held() <= HOLD_TOTAL);
        assert_eq!(p.held() + full, HOLD_PER_ADDR + MAX_PENDING + 10);
    }

    #[test]
    fn expiry_gives_back_and_asks_again_unless_resolved() {
        let mut p = Pending::default();
        p.hold(0, V4(7), 'a', 0);
        p.hold(0, V6(8), 'b', 0);
        let (d, ask, ended) = p.expire(RETRY_NS, |_, ip| ip == V6(8));
        assert!(d.is_empty() && ended.is_empty());
        assert_eq!(
            ask,
            [(0, V4(7))],
            "8 is learned and only waits for the table"
        );
        let (d, _, mut ended) = p.expire(GIVE_UP_NS, |_, _| false);
        assert_eq!(d.len(), 2);
        ended.sort();
        assert_eq!(
            ended,
            [(0, V4(7)), (0, V6(8))],
            "both resolutions end (their marks go)"
        );
        assert_eq!((p.addresses(), p.held()), (0, 0));
    }
}
