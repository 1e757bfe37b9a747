//! The learned neighbor table: which ARP and NDP packets may teach the router a MAC, how
//! long a binding lives, and the updates the control side must publish. Both families
//! share the table, its bound and its timers (keyed by [`NbrAddr`]).
//!
//! Pure (time is passed in as nanoseconds), so every rule is unit tested. Rules:
//! - never learned: invalid sender MACs (multicast, broadcast, zero), the router's own
//!   addresses, off-link senders (and a subnet's network or broadcast address), static
//!   neighbors from the routes file;
//! - a new binding needs a reason: a resolution in progress, a request for one of our
//!   addresses (RFC 826; for NDP a solicitation with a source link-layer option, RFC 4861
//!   §7.2.3), or `accept_unsolicited` (Linux's `arp_accept`);
//! - an NDP advertisement without the override flag never changes a known MAC (§7.2.5);
//! - a known binding is refreshed by any ARP from it; its MAC changes at most once per
//!   [`LOCKTIME_NS`] (Linux's `locktime`);
//! - after `reachable` without an ARP from it, a binding is probed [`PROBES`] times
//!   (unicast) and then removed;
//! - at most `max_entries` bindings: when full, a solicited answer evicts the stalest,
//!   anything else is refused.
//!
//! Updates are queued per address (the latest state wins) and delivered to the control
//! side by [`Neighbors::flush`]; a full channel keeps them for the next flush, so an
//! update is never lost. It must never send frames or touch the table itself.

use std::collections::{BTreeMap, HashMap};

use config::startup::PortIface;
use config::types::Cidr;
use crossbeam_channel::{Sender, TrySendError};

use super::addr::NbrAddr;
use super::ndp::{on_link6, own_address6};
use super::SlowPathEvent;

/// Probes sent to a binding whose reachable time ran out, before it is removed.
pub const PROBES: u8 = 3;
/// Time between two probes (and between two requests for an unresolved address).
pub const RETRY_NS: u64 = 500_000_000;
/// A binding's MAC is not changed again sooner than this after its last confirmation.
pub const LOCKTIME_NS: u64 = 1_000_000_000;

/// The knobs of the `arp:` startup section.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArpPolicy {
    pub accept_unsolicited: bool,
    pub reachable_ns: u64,
    pub max_entries: usize,
}

/// Why an ARP packet taught the router nothing (each one a slow-path drop reason).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArpIgnored {
    InvalidSenderMac,
    OwnAddress,
    OffLink,
    StaticNeighbor,
    Unsolicited,
    TableFull,
    Locked,
}

/// What to do with one ARP packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArpDecision {
    /// Answer it (a request for one of the ingress port's addresses).
    pub reply: bool,
    pub ignored: Option<ArpIgnored>,
}

/// An ARP packet as the rules need it (addresses in host byte order).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArpSeen {
    pub port: u16,
    pub request: bool,
    pub sender_ip: u32,
    pub sender_mac: [u8; 6],
    pub target_ip: u32,
    /// A resolution of `sender_ip` is in progress.
    pub solicited: bool,
    /// The MAC the routes file binds `sender_ip` to on this port.
    pub static_mac: Option<[u8; 6]>,
}

/// An NDP message as the rules need it: the address it teaches a MAC for (an NS's
/// source, an NA's target) and its link-layer option.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NdpSeen {
    pub port: u16,
    pub addr: [u8; 16],
    /// Source link-layer option of an NS, target link-layer option of an NA.
    pub mac: Option<[u8; 6]>,
    /// An advertisement (else a solicitation for one of the port's addresses).
    pub advert: bool,
    /// An advertisement's override flag.
    pub override_: bool,
    /// A resolution of `addr` is in progress.
    pub solicited: bool,
    /// The MAC the routes file binds `addr` to on this port.
    pub static_mac: Option<[u8; 6]>,
}

/// What one packet may teach, whatever its family.
struct Teach {
    key: (u16, NbrAddr),
    mac: [u8; 6],
    static_mac: Option<[u8; 6]>,
    solicited: bool,
    for_us: bool,
    /// May change a known MAC (ARP, NDP with the override flag).
    may_override: bool,
}

struct Entry {
    mac: [u8; 6],
    confirmed: u64,
    probes: u8,
    next_probe: u64,
}

/// Learned bindings and the updates not yet taken by the control side.
pub struct Neighbors {
    policy: ArpPolicy,
    learned: HashMap<(u16, NbrAddr), Entry>,
    outbox: BTreeMap<(u16, NbrAddr), Option<[u8; 6]>>,
}

/// A MAC that may be a neighbor's: unicast and not all zero.
pub fn valid_sender_mac(mac: [u8; 6]) -> bool {
    mac[0] & 1 == 0 && mac != [0; 6]
}

/// Whether ARP may ask for `ip` out of `port`: not 0, multicast or reserved
/// (224.0.0.0/3), nor the network or broadcast address of one of the port's subnets
/// (on subnets with more than two addresses).
pub fn arp_target_ok(port: &PortIface, ip: u32) -> bool {
    let edge = |c: &Cidr| {
        c.len < 31 && c.contains(ip) && (ip == c.addr & c.mask() || ip == c.addr | !c.mask())
    };
    ip != 0 && ip >> 29 != 0b111 && !port.addresses.iter().any(edge)
}

/// True when `ip` is a host address of one of `port`'s subnets (see [`arp_target_ok`]).
pub fn on_link_host(port: &PortIface, ip: u32) -> bool {
    arp_target_ok(port, ip) && port.addresses.iter().any(|c| c.contains(ip))
}

/// True when `ip` is one of the router's addresses on any port.
pub fn own_address(ports: &[PortIface], ip: u32) -> bool {
    ports
        .iter()
        .any(|p| p.addresses.iter().any(|c| c.addr == ip))
}

impl Neighbors {
    pub fn new(policy: ArpPolicy) -> Neighbors {
        Neighbors {
            policy,
            learned: HashMap::new(),
            outbox: BTreeMap::new(),
        }
    }

    /// Applies the rules (module docs) to one ARP packet received on `ports[a.port]`.
    pub fn input(&mut self, ports: &[PortIface], a: &ArpSeen, now: u64) -> ArpDecision {
        let ignore = |why| ArpDecision {
            reply: false,
            ignored: Some(why),
        };
        let Some(iface) = ports.get(a.port as usize) else {
            return ignore(ArpIgnored::OffLink);
        };
        if !valid_sender_mac(a.sender_mac) {
            return ignore(ArpIgnored::InvalidSenderMac);
        }
        if own_address(ports, a.sender_ip) {
            return ignore(ArpIgnored::OwnAddress);
        }
        let for_us = a.request && iface.addresses.iter().any(|c| c.addr == a.target_ip);
        if a.sender_ip == 0 {
            // An address probe (RFC 5227): answer it, learn nothing.
            return ArpDecision {
                reply: for_us,
                ignored: None,
            };
        }
        if !on_link_host(iface, a.sender_ip) {
            return ignore(ArpIgnored::OffLink);
        }
        let t = Teach {
            key: (a.port, NbrAddr::V4(a.sender_ip)),
            mac: a.sender_mac,
            static_mac: a.static_mac,
            solicited: a.solicited,
            for_us,
            may_override: true,
        };
        ArpDecision {
            reply: for_us,
            ignored: self.learn(&t, now),
        }
    }

    /// Applies the rules (module docs) to one NDP solicitation for one of the port's
    /// addresses or advertisement received on `ports[n.port]`; `None` when it taught
    /// nothing wrong (a message without a link-layer option teaches nothing at all).
    pub fn input6(&mut self, ports: &[PortIface], n: &NdpSeen, now: u64) -> Option<ArpIgnored> {
        let mac = n.mac?;
        let Some(iface) = ports.get(n.port as usize) else {
            return Some(ArpIgnored::OffLink);
        };
        if !valid_sender_mac(mac) {
            return Some(ArpIgnored::InvalidSenderMac);
        }
        if own_address6(ports, &n.addr) {
            return Some(ArpIgnored::OwnAddress);
        }
        if !on_link6(iface, &n.addr) {
            return Some(ArpIgnored::OffLink);
        }
        let t = Teach {
            key: (n.port, NbrAddr::v6(n.addr)),
            mac,
            static_mac: n.static_mac,
            solicited: n.solicited,
            for_us: !n.advert,
            may_override: !n.advert || n.override_,
        };
        self.learn(&t, now)
    }

    fn learn(&mut self, t: &Teach, now: u64) -> Option<ArpIgnored> {
        let key = t.key;
        if let Some(mac) = t.static_mac {
            // The routes file wins; forget what ARP said before it did.
            if self.learned.contains_key(&key) {
                self.remove(key);
            }
            return (mac != t.mac).then_some(ArpIgnored::StaticNeighbor);
        }
        if let Some(e) = self.learned.get_mut(&key) {
            if e.mac != t.mac {
                if !t.may_override || now.saturating_sub(e.confirmed) < LOCKTIME_NS {
                    return Some(ArpIgnored::Locked);
                }
                e.mac = t.mac;
                self.outbox.insert(key, Some(t.mac));
            }
            e.confirmed = now;
            e.probes = 0;
            return None;
        }
        if !(t.solicited || t.for_us || self.policy.accept_unsolicited) {
            return Some(ArpIgnored::Unsolicited);
        }
        let full = self.learned.len() >= self.policy.max_entries;
        if full && !(t.solicited && self.evict_stalest()) {
            return Some(ArpIgnored::TableFull);
        }
        self.learned.insert(
            key,
            Entry {
                mac: t.mac,
                confirmed: now,
                probes: 0,
                next_probe: 0,
            },
        );
        self.outbox.insert(key, Some(t.mac));
        None
    }

    fn evict_stalest(&mut self) -> bool {
        let Some(&key) = self
            .learned
            .iter()
            .min_by_key(|(_, e)| e.confirmed)
            .map(|(k, _)| k)
        else {
            return false;
        };
        self.remove(key);
        true
    }

    fn remove(&mut self, key: (u16, NbrAddr)) {
        self.learned.remove(&key);
        self.outbox.insert(key, None);
    }

    /// Ages the bindings: returns the probes to send now (port, ip, known MAC); bindings
    /// probed [`PROBES`] times without an answer are removed.
    pub fn age(&mut self, now: u64) -> Vec<(u16, NbrAddr, [u8; 6])> {
        let mut probes = Vec::new();
        let mut gone = Vec::new();
        for (&(port, ip), e) in self.learned.iter_mut() {
            if now < e.confirmed.saturating_add(self.policy.reachable_ns) || now < e.next_probe {
                continue;
            }
            if e.probes >= PROBES {
                gone.push((port, ip));
            } else {
                e.probes += 1;
                e.next_probe = now + RETRY_NS;
                probes.push((port, ip, e.mac));
            }
        }
        for key in gone {
            self.remove(key);
        }
        probes
    }

    /// The MAC learned for IPv4 `ip` on `port`.
    pub fn get(&self, port: u16, ip: u32) -> Option<[u8; 6]> {
        self.get_addr(port, NbrAddr::V4(ip))
    }

    /// The MAC learned for `a` on `port`.
    pub fn get_addr(&self, port: u16, a: NbrAddr) -> Option<[u8; 6]> {
        self.learned.get(&(port, a)).map(|e| e.mac)
    }

    /// Every binding for `show neighbors`: (port, ip, MAC, last confirmed, stale: its
    /// reachable time is over at `now`).
    pub fn entries(
        &self,
        now: u64,
    ) -> impl Iterator<Item = (u16, NbrAddr, [u8; 6], u64, bool)> + '_ {
        let reachable = self.policy.reachable_ns;
        self.learned.iter().map(move |(&(port, ip), e)| {
            let stale = now >= e.confirmed.saturating_add(reachable);
            (port, ip, e.mac, e.confirmed, stale)
        })
    }

    /// Bindings learned.
    pub fn len(&self) -> usize {
        self.learned.len()
    }

    /// The learned addresses (for the per-family gauges).
    pub fn addresses(&self) -> impl Iterator<Item = NbrAddr> + '_ {
        self.learned.keys().map(|&(_, a)| a)
    }

    /// Updates not yet taken by the control side.
    #[cfg(test)]
    pub fn unsent(&self) -> usize {
        self.outbox.len()
    }

    /// Sends the queued updates until the channel is full (the rest stay queued, in
    /// address order) or closed (nobody is left to take them: they are dropped).
    /// Returns how many were sent.
    pub fn flush(&mut self, events: &Sender<SlowPathEvent>) -> usize {
        let mut sent = 0;
        while let Some((&(port, ip), &mac)) = self.outbox.first_key_value() {
            let ev = SlowPathEvent::of(port, ip, mac);
            match events.try_send(ev) {
                Ok(()) => {
                    self.outbox.pop_first();
                    sent += 1;
                }
                Err(TrySendError::Full(_)) => break,
                Err(TrySendError::Disconnected(_)) => {
                    self.outbox.clear();
                    break;
                }
            }
        }
        sent
    }
}

#[cfg(test)]
#[path = "neighbors_tests.rs"]
mod tests;
