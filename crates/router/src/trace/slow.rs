//! What the slow path did with a traced packet it was punted: answered an ARP request or
//! a neighbour solicitation, replied to an echo (IPv4 or IPv6), sent an ICMP error, was rate limited, queued the packet for a
//! resolution, sent it to the control interface, or dropped it (why).
//!
//! The slow path calls [`SlowTap::begin`] and [`SlowTap::end`] around each packet; while
//! no trace is armed that is one flag test per punted packet. While armed, a packet that
//! passes the trace's port and filter is copied (first [`SNAP`] bytes) and the outcome is
//! read from the slow path's own counters (written by its thread only, so the difference
//! across one packet is what that packet did): no change inside the slow path's logic.
//! The control side pairs records with the workers' by port and bytes, in order.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering::*};
use std::sync::{Arc, Mutex};

use crossbeam_channel::{Receiver, Sender};

use super::filter::{Filter, FilterCell};
use super::{TraceTap, QUEUE, SNAP};
use crate::ctlsock::NeighborBoard;
use crate::metrics::{ControlStats, IcmpKind, NdpCount, SlowDrop};

/// What happened to one punted packet (`action`, and the drop reason or detail).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// `dropped`, `rate_limited`, `echo_replied`, `icmp_error_sent`,
    /// `queued_for_resolution`, `reply_queued_for_resolution`, `arp_answered`,
    /// `arp_accepted`, `sent_to_control_interface`, `transmitted`, `consumed`.
    pub action: &'static str,
    pub detail: Option<&'static str>,
}

/// One packet the slow path handled while a trace was armed.
#[derive(Clone, Copy, Debug)]
pub struct SlowRecord {
    /// The arming it belongs to.
    pub session: u32,
    pub in_port: u16,
    pub len: u16,
    pub frame: [u8; SNAP],
    pub outcome: Outcome,
}

impl SlowRecord {
    pub fn input(&self) -> &[u8] {
        &self.frame[..(self.len as usize).min(SNAP)]
    }
}

#[derive(Debug, Default)]
struct Shared {
    armed: AtomicBool,
    /// Bumped (Release) at each arming after the fields are written.
    session: AtomicU32,
    port: AtomicU32,
    filter: FilterCell,
}

/// The control side's end.
#[derive(Clone)]
pub struct SlowControl {
    shared: Arc<Shared>,
    tx: Sender<SlowRecord>,
    pub records: Receiver<SlowRecord>,
    /// Where the slow path publishes its neighbours for `show neighbors`.
    pub board: Arc<NeighborBoard>,
    /// The capture tap for the frames the slow path sends, taken by [`Self::tap`].
    sent: Arc<Mutex<Option<TraceTap>>>,
}

/// The slow path's end (also the way it publishes its neighbours).
pub struct SlowTap {
    shared: Arc<Shared>,
    tx: Sender<SlowRecord>,
    board: Arc<NeighborBoard>,
    /// When the neighbours were last published (slow path ns).
    last_board: Option<u64>,
    /// Captures the frames it sends.
    sent: Option<TraceTap>,
}

impl SlowControl {
    /// `sent`: the capture tap for the frames the slow path sends.
    pub fn new(sent: Option<TraceTap>) -> SlowControl {
        let (tx, records) = crossbeam_channel::bounded(QUEUE);
        SlowControl {
            shared: Arc::default(),
            tx,
            records,
            board: Arc::default(),
            sent: Arc::new(Mutex::new(sent)),
        }
    }

    /// The slow path's tap (the first one taken captures the frames it sends).
    pub fn tap(&self) -> SlowTap {
        SlowTap {
            shared: self.shared.clone(),
            tx: self.tx.clone(),
            board: self.board.clone(),
            last_board: None,
            sent: self.sent.lock().unwrap_or_else(|e| e.into_inner()).take(),
        }
    }

    /// Arms the slow path; returns the session its records will carry.
    pub fn arm(&self, port: Option<u16>, filter: &Filter) -> u32 {
        self.shared
            .port
            .store(port.map_or(u32::MAX, u32::from), Relaxed);
        self.shared.filter.store(filter);
        let session = self.shared.session.fetch_add(1, Release).wrapping_add(1);
        self.shared.armed.store(true, Release);
        session
    }

    pub fn disarm(&self) {
        self.shared.armed.store(false, Relaxed);
    }
}

/// The slow path's counters that tell what one packet did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Counts {
    pub handled: u64,
    pub generated: u64,
    pub transmitted: u64,
    pub held: u64,
    pub dropped: [u64; SlowDrop::COUNT],
    pub icmp: [u64; IcmpKind::ALL.len()],
    pub up: u64,
    /// NDP messages by [`NdpCount`].
    pub ndp: [u64; NdpCount::ALL.len()],
}

impl Counts {
    pub fn of(s: &ControlStats) -> Counts {
        let slow = &s.slow;
        Counts {
            handled: slow.handled.load(Relaxed),
            generated: slow.generated.load(Relaxed),
            transmitted: slow.transmitted.load(Relaxed),
            held: slow.held.load(Relaxed),
            dropped: std::array::from_fn(|i| slow.dropped[i].load(Relaxed)),
            icmp: std::array::from_fn(|i| s.icmp_sent[i].load(Relaxed)),
            up: s.cpif.up.load(Relaxed),
            ndp: std::array::from_fn(|i| slow.ndp[i].load(Relaxed)),
        }
    }
}

fn is_arp(frame: &[u8]) -> bool {
    match frame.get(12..14) {
        Some([0x08, 0x06]) => true,
        Some([0x81, 0x00]) => frame.get(16..18) == Some(&[0x08, 0x06]),
        _ => false,
    }
}

/// Whether `frame` is an NDP message (RFC 4861: ICMPv6 types 133-137 right after the
/// fixed header, as NDP is sent), at most one tag.
fn is_ndp(frame: &[u8]) -> bool {
    let ip = match frame.get(12..14) {
        Some([0x86, 0xdd]) => 14,
        Some([0x81, 0x00]) if frame.get(16..18) == Some(&[0x86, 0xdd]) => 18,
        _ => return false,
    };
    frame.get(ip + 6) == Some(&58) && frame.get(ip + 40).is_some_and(|t| (133..=137).contains(t))
}

/// What a packet did, from the counters before and after it.
pub fn outcome(frame: &[u8], a: &Counts, b: &Counts) -> Outcome {
    let o = |action, detail| Outcome { action, detail };
    let grew = |x: u64, y: u64| y > x;
    if let Some(i) = (0..SlowDrop::COUNT).find(|&i| grew(a.dropped[i], b.dropped[i])) {
        let why = SlowDrop::ALL[i];
        let action = match why {
            SlowDrop::IcmpRateLimited => "rate_limited",
            _ => "dropped",
        };
        return o(action, Some(why.as_str()));
    }
    if let Some(k) = IcmpKind::ALL
        .into_iter()
        .find(|&k| grew(a.icmp[k as usize], b.icmp[k as usize]))
    {
        let action = match k {
            IcmpKind::EchoReply => "echo_replied",
            _ => "icmp_error_sent",
        };
        return o(action, Some(k.as_str()));
    }
    let ndp = |c: NdpCount| grew(a.ndp[c as usize], b.ndp[c as usize]);
    let asked = match ndp(NdpCount::NsSent) {
        true => Some("neighbor_solicitation_sent"),
        false => grew(a.generated, b.generated).then_some("arp_request_sent"),
    };
    if grew(a.held, b.held) {
        return match grew(a.handled, b.handled) {
            true => o("reply_queued_for_resolution", asked),
            false => o("queued_for_resolution", asked),
        };
    }
    if is_arp(frame) {
        return match grew(a.generated, b.generated) {
            true => o("arp_answered", None),
            false => o("arp_accepted", None),
        };
    }
    if is_ndp(frame) {
        return match ndp(NdpCount::NaSent) {
            true => o("ndp_answered", None),
            false => o("ndp_accepted", None),
        };
    }
    if grew(a.up, b.up) {
        return o("sent_to_control_interface", None);
    }
    if grew(a.transmitted, b.transmitted) {
        return o("transmitted", None);
    }
    o("consumed", None)
}

/// A packet being traced through the slow path.
pub struct Begun {
    record: SlowRecord,
    before: Counts,
}

impl SlowTap {
    /// Whether the neighbours are due to be published at `now` (ns); if so, counts
    /// them as published now.
    pub fn board_due(&mut self, now: u64, every: u64) -> bool {
        let due = self
            .last_board
            .is_none_or(|t| now.saturating_sub(t) >= every);
        if due {
            self.last_board = Some(now);
        }
        due
    }

    pub fn board(&self) -> &NeighborBoard {
        &self.board
    }

    /// A frame handed to a worker for transmission on `port` ([`TraceTap::sent`]).
    #[inline]
    pub fn sent(&mut self, port: u16, frame: &[u8]) {
        if let Some(t) = self.sent.as_mut() {
            t.sent(port, frame);
        }
    }

    /// Called before the slow path handles a packet received on `in_port`: `Some` when
    /// a trace is armed and the packet passes its port and filter.
    #[inline]
    pub fn begin(&self, in_port: u16, frame: &[u8], stats: &ControlStats) -> Option<Begun> {
        if !self.shared.armed.load(Acquire) {
            return None;
        }
        let session = self.shared.session.load(Acquire);
        let port = self.shared.port.load(Relaxed);
        if port != u32::MAX && port != u32::from(in_port) {
            return None;
        }
        if !self.shared.filter.load().matches(frame) {
            return None;
        }
        let n = frame.len().min(SNAP);
        let mut record = SlowRecord {
            session,
            in_port,
            len: frame.len().min(u16::MAX as usize) as u16,
            frame: [0; SNAP],
            outcome: Outcome {
                action: "consumed",
                detail: None,
            },
        };
        record.frame[..n].copy_from_slice(&frame[..n]);
        Some(Begun {
            record,
            before: Counts::of(stats),
        })
    }

    /// Called after it: hands over the record with what the packet did.
    pub fn end(&self, b: Option<Begun>, stats: &ControlStats) {
        let Some(mut b) = b else { return };
        let after = Counts::of(stats);
        b.record.outcome = outcome(b.record.input(), &b.before, &after);
        let _ = self.tx.try_send(b.record);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zero() -> Counts {
        Counts {
            handled: 0,
            generated: 0,
            transmitted: 0,
            held: 0,
            dropped: [0; SlowDrop::COUNT],
            icmp: [0; IcmpKind::ALL.len()],
            up: 0,
            ndp: [0; NdpCount::ALL.len()],
        }
    }

    #[test]
    fn each_counter_change_names_its_outcome() {
        let ip = vec![0u8; 60];
        let mut arp = vec![0u8; 60];
        arp[12..14].copy_from_slice(&[8, 6]);
        let mut ns = vec![0u8; 86];
        ns[12..14].copy_from_slice(&[0x86, 0xdd]);
        ns[14 + 6] = 58;
        ns[54] = 135;
        let mut echo6 = ns.clone();
        echo6[54] = 128;
        let a = zero();
        let with = |f: &dyn Fn(&mut Counts)| {
            let mut b = zero();
            f(&mut b);
            b
        };
        let cases: Vec<(&[u8], Counts, &str, Option<&str>)> = vec![
            (
                &ip,
                with(&|b| b.dropped[SlowDrop::IcmpRateLimited as usize] = 1),
                "rate_limited",
                Some("icmp_rate_limited"),
            ),
            (
                &arp,
                with(&|b| b.dropped[SlowDrop::ArpUnsolicited as usize] = 1),
                "dropped",
                Some("arp_unsolicited"),
            ),
            (
                &ip,
                with(&|b| {
                    b.handled = 1;
                    b.generated = 1;
                    b.transmitted = 1;
                    b.icmp[0] = 1;
                }),
                "echo_replied",
                Some("echo_reply"),
            ),
            (
                &ip,
                with(&|b| b.icmp[1] = 1),
                "icmp_error_sent",
                Some("time_exceeded"),
            ),
            (
                &ip,
                with(&|b| {
                    b.held = 1;
                    b.generated = 1;
                }),
                "queued_for_resolution",
                Some("arp_request_sent"),
            ),
            (
                &ip,
                with(&|b| {
                    b.held = 1;
                    b.handled = 1;
                }),
                "reply_queued_for_resolution",
                None,
            ),
            (
                &arp,
                with(&|b| {
                    b.handled = 1;
                    b.generated = 1;
                    b.up = 1;
                }),
                "arp_answered",
                None,
            ),
            (&arp, with(&|b| b.handled = 1), "arp_accepted", None),
            (
                &ip,
                with(&|b| {
                    b.handled = 1;
                    b.up = 1;
                }),
                "sent_to_control_interface",
                None,
            ),
            (&ip, zero(), "consumed", None),
            (
                &ns,
                with(&|b| {
                    b.handled = 1;
                    b.generated = 1;
                    b.up = 1;
                    b.ndp[NdpCount::NsReceived as usize] = 1;
                    b.ndp[NdpCount::NaSent as usize] = 1;
                }),
                "ndp_answered",
                None,
            ),
            (
                &ns,
                with(&|b| {
                    b.handled = 1;
                    b.ndp[NdpCount::NsReceived as usize] = 1;
                }),
                "ndp_accepted",
                None,
            ),
            (
                &echo6,
                with(&|b| {
                    b.held = 1;
                    b.generated = 1;
                    b.ndp[NdpCount::NsSent as usize] = 1;
                }),
                "queued_for_resolution",
                Some("neighbor_solicitation_sent"),
            ),
            (
                &echo6,
                with(&|b| b.up = 1),
                "sent_to_control_interface",
                None,
            ),
        ];
        for (frame, b, action, detail) in cases {
            assert_eq!(outcome(frame, &a, &b), Outcome { action, detail }, "{b:?}");
        }
    }
}
