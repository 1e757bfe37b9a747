//! ARP: answering for the router's addresses, resolving next hops, holding the packets
//! that wait for a resolution.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use config::startup::PortIface;
use dpdk::Mbuf;
use net::wire::arp::{ArpPacket, ArpRepr, OP_REQUEST, PACKET_LEN};

/// Packets held per unresolved address, and in all.
const HOLD_PER_ADDR: usize = 4;
const HOLD_TOTAL: usize = 256;
/// How often a request is repeated, and how long packets wait before being dropped.
pub const RETRY: Duration = Duration::from_millis(500);
pub const GIVE_UP: Duration = Duration::from_secs(3);

/// A held packet, to be sent again through the pipeline once resolved.
pub struct Held {
    pub mbuf: Mbuf,
    pub in_port: u16,
}

struct Pending {
    held: Vec<Held>,
    first: Instant,
    last_request: Instant,
}

/// What the slow path learned from an ARP packet.
pub enum ArpInput {
    /// Send this reply frame out of the ingress port.
    Reply(Vec<u8>),
    Nothing,
}

/// Neighbor resolution state of the slow path.
#[derive(Default)]
pub struct Resolver {
    pending: HashMap<(u16, u32), Pending>,
    held_total: usize,
    /// What we know (learned or told), to avoid republishing unchanged entries.
    known: HashMap<(u16, u32), [u8; 6]>,
}

/// The router's address on `port` in the subnet of `ip`, else its first address.
pub fn source_for(port: &PortIface, ip: u32) -> Option<u32> {
    port.addresses
        .iter()
        .find(|c| c.contains(ip))
        .or(port.addresses.first())
        .map(|c| c.addr)
}

/// An Ethernet + ARP frame.
pub fn arp_frame(dst_mac: [u8; 6], repr: &ArpRepr) -> Vec<u8> {
    let mut f = vec![0u8; 14 + PACKET_LEN];
    f[0..6].copy_from_slice(&dst_mac);
    f[6..12].copy_from_slice(&repr.sender_mac);
    f[12..14].copy_from_slice(&0x0806u16.to_be_bytes());
    repr.emit(&mut f[14..])
        .expect("buffer sized for one ARP packet");
    f
}

/// A broadcast who-has request for `target` from `port`.
pub fn request(port: &PortIface, target: u32) -> Option<Vec<u8>> {
    let src = source_for(port, target)?;
    let repr = ArpRepr {
        operation: OP_REQUEST,
        sender_mac: port.mac,
        sender_ip: src.to_be_bytes(),
        target_mac: [0; 6],
        target_ip: target.to_be_bytes(),
    };
    Some(arp_frame([0xff; 6], &repr))
}

impl Resolver {
    /// Handles a received ARP packet (`frame` starts at the Ethernet header). Returns the
    /// reply to send, and fills `learned` with a new (ip, mac) binding worth publishing.
    pub fn input(
        &mut self,
        port: &PortIface,
        frame: &[u8],
        learned: &mut Option<(u32, [u8; 6])>,
    ) -> ArpInput {
        let Some(body) = frame.get(14..) else {
            return ArpInput::Nothing;
        };
        let Ok(pkt) = ArpPacket::new_checked(body) else {
            return ArpInput::Nothing;
        };
        let Ok(arp) = ArpRepr::parse(&pkt) else {
            return ArpInput::Nothing;
        };
        let sender = u32::from_be_bytes(arp.sender_ip);
        let target = u32::from_be_bytes(arp.target_ip);
        let for_us = port.addresses.iter().any(|c| c.addr == target);
        let on_link = port.addresses.iter().any(|c| c.contains(sender));
        let wanted = self.pending.contains_key(&(port.id, sender))
            || self.known.contains_key(&(port.id, sender));
        if on_link
            && sender != 0
            && (for_us || wanted)
            && self.known.get(&(port.id, sender)) != Some(&arp.sender_mac)
        {
            self.known.insert((port.id, sender), arp.sender_mac);
            *learned = Some((sender, arp.sender_mac));
        }
        if arp.operation == OP_REQUEST && for_us {
            return ArpInput::Reply(arp_frame(arp.sender_mac, &arp.reply(port.mac)));
        }
        ArpInput::Nothing
    }

    /// Holds `held` until `ip` on `port` resolves. Returns true when a request should be
    /// sent now (first packet, or the last request is older than [`RETRY`]). A packet
    /// that does not fit is given back.
    pub fn hold(&mut self, port: u16, ip: u32, held: Held, now: Instant) -> (bool, Option<Held>) {
        let total = self.held_total;
        let e = self.pending.entry((port, ip)).or_insert_with(|| Pending {
            held: Vec::new(),
            first: now,
            last_request: now - RETRY,
        });
        let rejected = if e.held.len() < HOLD_PER_ADDR && total < HOLD_TOTAL {
            e.held.push(held);
            self.held_total += 1;
            None
        } else {
            Some(held)
        };
        let ask = now.duration_since(e.last_request) >= RETRY;
        if ask {
            e.last_request = now;
        }
        (ask, rejected)
    }

    /// Takes every held packet (to retry them after a table change).
    pub fn take_all(&mut self) -> Vec<Held> {
        self.held_total = 0;
        let mut out = Vec::new();
        for p in self.pending.values_mut() {
            out.append(&mut p.held);
        }
        out
    }

    /// Drops state older than [`GIVE_UP`]; returns the packets given up on, and the
    /// addresses to ask for again.
    pub fn expire(&mut self, now: Instant) -> (Vec<Held>, Vec<(u16, u32)>) {
        let mut dropped = Vec::new();
        let mut ask = Vec::new();
        self.pending.retain(|&(port, ip), p| {
            if now.duration_since(p.first) >= GIVE_UP {
                dropped.append(&mut p.held);
                return false;
            }
            if !p.held.is_empty() && now.duration_since(p.last_request) >= RETRY {
                p.last_request = now;
                ask.push((port, ip));
            }
            true
        });
        self.held_total -= dropped.len().min(self.held_total);
        (dropped, ask)
    }

    /// Addresses waiting for an answer.
    pub fn pending_count(&self) -> usize {
        self.pending.len()
    }

    /// Bindings known.
    pub fn known_count(&self) -> usize {
        self.known.len()
    }
}
