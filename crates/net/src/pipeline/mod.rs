//! The data path: one burst of received frames in, one [`Verdict`] per frame out.
//!
//! The commonest packets (plain swap, PHP, IPv4 or IPv6 to one next hop, LER push, and at
//! an egress LER a single explicit null or pop-and-lookup label over either family) take
//! a fast path ([`fast`], [`fast6`], [`egress`]) that checks exactly what they need; every
//! other packet goes through the stages, each run over the whole burst before the next
//! (grout/VPP style, so that table lookups of different packets overlap):
//! 1. [`classify`]: destination MAC, Ethernet, ethertype, IPv4 input checks (RFC 1812
//!    §5.2.1, §5.2.2, §5.3.4, §5.3.7; the router's own addresses: [`LocalAddrs`]) and
//!    IPv6 ones ([`ipv6`]: RFC 8200, RFC 4291 address scopes, NDP);
//! 2. [`mpls`]: label stack walk and label table lookups (LSR/egress LER decisions);
//! 3. [`ipv4`], [`ipv6`]: one batched LPM lookup per family, route targets;
//! 4. [`rewrite`]: ECMP member by flow hash ([`hash`]), MTU, then the in-place rewrite from
//!    the adjacency's precomputed header.
//!
//! Nothing is written to a packet before its verdict is known, so packets punted to the
//! slow path or dropped are exactly as received (the slow path quotes them in ICMP).
//! Never allocates, locks or blocks; the per-packet state lives in a stack array.
//!
//! Decisions the design left open, taken here:
//! - Uniform-mode disposition writes `min(IP TTL, label TTL - 1)` into the exposed header
//!   (and the same for an exposed label), so a TTL never grows.
//! - Pipe mode leaves the exposed header's TTL as is (the LSP is one hop, counted by the
//!   ingress LER); an exposed TTL of 0 is never forwarded (ttl_expired).
//! - Explicit null (0) is popped in uniform mode; an entropy label indicator at the top
//!   is popped together with its entropy label.
//! - TTL expiry is decided where the packet would be forwarded, so a packet for the
//!   router itself with TTL 1 is still delivered (RFC 1812 §5.3.1).
//! - Tagged frames are dropped (`vlan_tagged`) unless `accept_vlan`; accepted tags are
//!   removed (the adjacency header is untagged).
//! - A label-switched packet keeps every byte after its stack (Ethernet padding included),
//!   as an LSR that does not parse its payload would: the payload is probed only where a
//!   decision needs it (PHP towards IP, the ECMP hash, DF for a packet too big). Packets
//!   forwarded as IP are cut to their total length (IPv6: 40 + payload length).
//!
//! IPv6 (the fast path, [`fast6`], takes plain forwarding, LER and 6PE push, and PHP
//! exposing IPv6; it runs after the IPv4 and label loops, on what they turned away, and
//! hands what it turns away to [`egress`]; in a burst that starts and ends with IPv6 it
//! runs first, [`Pipeline::process_ipv6_first`]):
//! - TTL rules as for IPv4, with the hop limit. Label 2 is popped like label 0 at any
//!   depth; at the bottom, 0 and 2 require their family, other dispositions go by the
//!   first nibble. A packet leaving bare takes an adjacency only if its `payload` family
//!   matches (a PHP entry's next hop says which), else `unsupported_payload`.
//! - No route: `unreachable` (IPv4 drops as `no_route`). Too big: `frag_needed` always,
//!   also for labelled IPv6 (no DF, never fragmented).
//! - NDP (ICMPv6 133..=137, hop limit 255, behind at most `MAX_EXT_HEADERS` extension
//!   headers) to a multicast group or the router's address: `ndp`; other ff02:: groups:
//!   `link_local_multicast` (the only IPv6 taken from link-layer multicast frames).
//! - Link-local sources and destinations never leave the link: to the input port's own
//!   link-local address (or from a link-local source to any of the router's addresses)
//!   they are delivered, otherwise `link_local_scope`. The unspecified source is allowed
//!   towards multicast only (DAD, MLD).
//! - `originate` routes IPv6 by its destination; link-scope destinations have no port
//!   there and are dropped: the slow path sends NDP and link-local replies itself.

mod classify;
mod egress;
mod family;
mod fast;
mod fast6;
mod hash;
mod ipv4;
mod ipv6;
mod local;
mod mpls;
mod rewrite;
mod verdict;

pub use family::{Family, FamilyCounts};
pub use local::LocalAddrs;
pub use verdict::{DropReason, PuntReason, Verdict};

use crate::fib::{Fib, NextHop, RouteTarget, TtlMode, DIRECT_PUSH_MAX, NO_ROUTE};
use crate::packet::PacketBuf;
use crate::wire::be16;
use crate::wire::ethernet::{self, ETHERTYPE_IPV6, ETHERTYPE_MPLS, HEADER_LEN};
use crate::wire::mpls::DEFAULT_MAX_DEPTH;

/// Packets handled per internal chunk; longer bursts are processed in chunks.
pub const CHUNK: usize = 64;
const _: () = assert!(
    CHUNK <= 64,
    "process_ipv6_first keeps a chunk in a u64 mask"
);

/// Pipeline settings (from the startup config).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PipelineConfig {
    /// Deepest label stack walked; deeper stacks are dropped (`stack_too_deep`).
    pub max_label_depth: usize,
    /// Accept 802.1Q-tagged frames (the tag is removed on output).
    pub accept_vlan: bool,
    /// Send IPv4 packets with options to the slow path instead of forwarding them as is.
    pub punt_ip_options: bool,
}

impl Default for PipelineConfig {
    fn default() -> Self {
        PipelineConfig {
            max_label_depth: DEFAULT_MAX_DEPTH,
            accept_vlan: false,
            punt_ip_options: false,
        }
    }
}

/// The in-port of packets the router originates ([`Pipeline::originate`]); the slow path
/// holds such packets under it while it resolves their next hop.
pub const ORIGINATED: u16 = u16::MAX;

/// The forwarding pipeline of one worker. Stateless apart from its settings and the
/// router's own addresses: the tables come in with every burst (the worker's current
/// [`Fib`] snapshot).
#[derive(Debug, Clone)]
pub struct Pipeline {
    config: PipelineConfig,
    local: LocalAddrs,
}

/// Fast-path IPv4 packets awaiting their batched lookup: destinations, burst indices, count.
struct Ipv4Queue<'a> {
    dsts: &'a mut [u32; CHUNK],
    idx: &'a mut [u8; CHUNK],
    n: &'a mut usize,
}

/// [`fast::label`] on packet `i`: its verdict, or `i` appended to `fail[..n]`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn try_label<P: PacketBuf>(
    fib: &Fib,
    depth: usize,
    mac: local::MacKey,
    i: usize,
    pkt: &mut P,
    verdict: &mut Verdict,
    fail: &mut [u8; CHUNK],
    n: &mut usize,
) {
    match fast::label(fib, depth, mac, pkt) {
        Some(v) => *verdict = v,
        None => {
            fail[*n] = i as u8;
            *n += 1;
        }
    }
}

/// [`fast::ipv4_input`] on packet `i`: queued for the lookup, or appended to `fail[..n]`.
#[inline(always)]
fn try_input(
    local: &LocalAddrs,
    mac: local::MacKey,
    i: usize,
    data: &[u8],
    q: &mut Ipv4Queue,
    fail: &mut [u8; CHUNK],
    n: &mut usize,
) {
    match fast::ipv4_input(data, mac, local) {
        Some(dst) => {
            q.dsts[*q.n] = dst;
            q.idx[*q.n] = i as u8;
            *q.n += 1;
        }
        None => {
            fail[*n] = i as u8;
            *n += 1;
        }
    }
}

/// Whether a frame is plain Ethernet carrying IPv6.
#[inline(always)]
fn starts_ipv6(data: &[u8]) -> bool {
    data.len() >= HEADER_LEN && be16(data, ethernet::field::ETHERTYPE.start) == ETHERTYPE_IPV6
}

/// What to write into the first kept header after the rewrite.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fix {
    None,
    LabelTtl(u8),
    Ipv4Ttl(u8),
    Ipv6Hop(u8),
}

/// Where a packet stands between stages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Next {
    Done(Verdict),
    Mpls,
    Ipv4 {
        dst: u32,
    },
    /// Awaiting the IPv6 lookup (the destination is read from the header at `keep`).
    Ipv6,
    NextHop(NextHop),
}

/// Per-packet state carried between stages. Offsets are from the frame start.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Work {
    pub next: Next,
    /// First byte after the Ethernet header.
    pub l3: usize,
    /// End of the received label stack (`l3` for IP).
    pub stack_end: usize,
    /// A length-checked IPv4 or IPv6 header (its version nibble says which) after the
    /// stack.
    pub ip: Option<usize>,
    /// End of the payload to keep: the IPv4 total length (IPv6: 40 + payload length) for
    /// packets forwarded as IP (Ethernet padding is trimmed), the frame's end for
    /// label-switched ones.
    pub end: usize,
    /// First received byte kept in the output (after the stripped / popped headers).
    pub keep: usize,
    /// Outgoing TTL: of the swapped label (MPLS), the IPv4 TTL or the IPv6 hop limit;
    /// 0 = expired.
    pub out_ttl: u8,
    /// TC for pushed labels.
    pub tc: u8,
    /// TTL mode of the entry or route whose adjacency pushes labels.
    pub mode: TtlMode,
    /// The bottom pushed label replaces a received one (swap): it takes `out_ttl`.
    pub swap: bool,
    /// No labels are kept below the pushed ones (the S bit goes on the bottom push).
    pub bos: bool,
    pub fix: Fix,
}

impl Work {
    const EMPTY: Work = Work {
        next: Next::Done(Verdict::Drop(DropReason::Truncated)),
        l3: 0,
        stack_end: 0,
        ip: None,
        end: 0,
        keep: 0,
        out_ttl: 0,
        tc: 0,
        mode: TtlMode::Uniform,
        swap: false,
        bos: true,
        fix: Fix::None,
    };

    #[inline]
    pub(crate) fn done(&mut self, v: Verdict) {
        self.next = Next::Done(v);
    }
}

/// What a found route does with a packet, for both families (`ipv4::route`,
/// `ipv6::route`): `tc` (the pushed labels' TC) and `fix` (the TTL or hop limit to write)
/// are the family's, used only for a next hop. TTL expiry is decided here, where the
/// packet would be forwarded, so the router's own addresses still get TTL-1 packets.
#[inline(always)]
pub(crate) fn apply_route(
    w: &mut Work,
    fib: &Fib,
    id: crate::fib::RouteId,
    in_port: u16,
    originate: bool,
    tc: impl FnOnce() -> u8,
    fix: fn(u8) -> Fix,
) {
    let route = fib.route(id);
    match route.target {
        RouteTarget::Local => w.done(Verdict::SlowPath(PuntReason::LocalDelivery)),
        RouteTarget::Blackhole => w.done(Verdict::Drop(DropReason::NoRoute)),
        _ if w.out_ttl == 0 && !originate => {
            w.done(Verdict::SlowPath(PuntReason::TtlExpired { in_port }))
        }
        RouteTarget::Connected { port } => w.done(Verdict::SlowPath(PuntReason::Glean { port })),
        RouteTarget::NextHop(nh) => {
            w.mode = route.ttl_mode;
            w.tc = tc();
            w.swap = false;
            w.bos = true;
            w.fix = fix(w.out_ttl);
            w.next = Next::NextHop(nh);
        }
    }
}

impl Pipeline {
    /// A pipeline with these settings (a depth limit of 0 is taken as 1) for a router with
    /// these addresses: frames are routed only when addressed to their input port's MAC.
    pub fn new(mut config: PipelineConfig, local: LocalAddrs) -> Pipeline {
        config.max_label_depth = config.max_label_depth.max(1);
        Pipeline { config, local }
    }

    pub fn config(&self) -> &PipelineConfig {
        &self.config
    }

    /// The router's addresses this pipeline was built with (a table that carries its own,
    /// `Fib::local`, is checked against those instead).
    pub fn local(&self) -> &LocalAddrs {
        &self.local
    }

    /// Processes a burst received on `in_port`: `verdicts[i]` is the fate of `pkts[i]`,
    /// which is rewritten in place when forwarded and untouched otherwise. Only the first
    /// `min(pkts.len(), verdicts.len())` packets are processed.
    /// IPv6 is never taken first here (only in [`Pipeline::process_burst_counted`], the
    /// worker's entry): through this entry too, the worker-ir build compiled
    /// `fast6::burst` otherwise (mixed bursts +5 Ir a packet).
    pub fn process_burst<P: PacketBuf>(
        &self,
        fib: &Fib,
        in_port: u16,
        pkts: &mut [P],
        verdicts: &mut [Verdict],
    ) {
        self.process(
            fib,
            in_port,
            pkts,
            verdicts,
            true,
            &mut FamilyCounts::default(),
        );
    }

    /// [`Pipeline::process_burst`], adding the packets received by family to `families`
    /// (counted per chunk on the fast paths, per packet only on the staged one). A burst
    /// that starts and ends with IPv6 (bursts are usually of one kind) takes IPv6 first
    /// ([`Pipeline::process_ipv6_first`]); in a mix, that pass costs the other packets
    /// more than it saves the IPv6 ones.
    pub fn process_burst_counted<P: PacketBuf>(
        &self,
        fib: &Fib,
        in_port: u16,
        pkts: &mut [P],
        verdicts: &mut [Verdict],
        families: &mut FamilyCounts,
    ) {
        let ipv6 = |p: &P| starts_ipv6(p.data());
        if pkts.first().is_some_and(ipv6) && pkts.last().is_some_and(ipv6) {
            self.process_ipv6_first(fib, in_port, pkts, verdicts, families);
        } else {
            self.process(fib, in_port, pkts, verdicts, true, families);
        }
    }

    /// [`fast6`] over each chunk first, then [`Pipeline::process`] over what it turned
    /// away, moved to the chunk's front for the call and back after it: IPv6 packets
    /// skip the IPv4 and label loops' turn-aways (~48 instructions), the others still
    /// meet every fast path, and `process` (its own function) compiles as it did.
    #[inline(never)]
    fn process_ipv6_first<P: PacketBuf>(
        &self,
        fib: &Fib,
        in_port: u16,
        pkts: &mut [P],
        verdicts: &mut [Verdict],
        families: &mut FamilyCounts,
    ) {
        let n = pkts.len().min(verdicts.len());
        let local = fib.local().unwrap_or(&self.local);
        let Some(mac) = local.mac_key(in_port) else {
            return self.process(fib, in_port, pkts, verdicts, true, families);
        };
        for (p, v) in pkts[..n]
            .chunks_mut(CHUNK)
            .zip(verdicts[..n].chunks_mut(CHUNK))
        {
            for pkt in p.iter() {
                crate::prefetch::prefetch(pkt.data().as_ptr());
            }
            let (mut rest, mut r) = ([0u8; CHUNK], 0);
            fast6::first(fib, local, mac, in_port, p, v, &mut rest, &mut r);
            families.add(Family::Ipv6, p.len() - r);
            if r == p.len() {
                self.process(fib, in_port, p, v, true, families);
            } else if r > 0 {
                // In ascending order (fast6 lists the lookup's turn-aways after the
                // input checks'), slot `rest[k]` still holds its own packet when swapped
                // to `k`, and the swaps undone in reverse put every packet back.
                let mut left = 0u64;
                for &i in &rest[..r] {
                    left |= 1 << i;
                }
                for i in &mut rest[..r] {
                    *i = left.trailing_zeros() as u8;
                    left &= left - 1;
                }
                for (k, &i) in rest[..r].iter().enumerate() {
                    p.swap(k, i as usize);
                }
                let mut out = [Verdict::Drop(DropReason::Truncated); CHUNK];
                self.process(fib, in_port, &mut p[..r], &mut out[..r], true, families);
                for (k, &i) in rest[..r].iter().enumerate().rev() {
                    p.swap(k, i as usize);
                    v[i as usize] = out[k];
                }
            }
        }
    }

    /// [`Pipeline::process_burst`] with every packet through the staged path (the
    /// [`fast`] path skipped): the oracle the fast path is tested against.
    #[doc(hidden)]
    pub fn process_burst_staged<P: PacketBuf>(
        &self,
        fib: &Fib,
        in_port: u16,
        pkts: &mut [P],
        verdicts: &mut [Verdict],
    ) {
        self.process(
            fib,
            in_port,
            pkts,
            verdicts,
            false,
            &mut FamilyCounts::default(),
        );
    }

    fn process<P: PacketBuf>(
        &self,
        fib: &Fib,
        in_port: u16,
        pkts: &mut [P],
        verdicts: &mut [Verdict],
        fast_path: bool,
        families: &mut FamilyCounts,
    ) {
        let n = pkts.len().min(verdicts.len());
        // Once per burst: the addresses published with the table, else the pipeline's.
        let local = fib.local().unwrap_or(&self.local);
        for (p, v) in pkts[..n]
            .chunks_mut(CHUNK)
            .zip(verdicts[..n].chunks_mut(CHUNK))
        {
            // Packets the stages decide, and fast-path IPv4 packets awaiting their route.
            let mut staged = [0u8; CHUNK];
            let mut m = 0;
            let mut ipv4 = [0u8; CHUNK];
            let mut dsts = [0u32; CHUNK];
            let mut f = 0;
            for pkt in p.iter() {
                crate::prefetch::prefetch(pkt.data().as_ptr());
            }
            // A port without a MAC refuses every frame: the stages count them.
            let fast_mac = local.mac_key(in_port).filter(|_| fast_path);
            match fast_mac {
                None => {
                    for (i, s) in staged[..p.len()].iter_mut().enumerate() {
                        *s = i as u8;
                    }
                    m = p.len();
                }
                Some(mac) => {
                    // Each fast path runs in a loop of its own (with both in one loop body the
                    // swap path spilled registers), first the one the burst's first packet
                    // takes: bursts are usually of one kind, and each packet then meets only
                    // the loop for it (turned away by the other, an IPv4 packet cost ~25
                    // instructions). What the first loop turns away goes to the second.
                    let depth = self.config.max_label_depth;
                    let mut rest = [0u8; CHUNK];
                    let mut r = 0;
                    let mut fwd = Ipv4Queue {
                        dsts: &mut dsts,
                        idx: &mut ipv4,
                        n: &mut f,
                    };
                    let first = p[0].data();
                    // Labelled packets are those the label loop took (counted per chunk).
                    let labelled = if first.len() >= HEADER_LEN
                        && be16(first, ethernet::field::ETHERTYPE.start) == ETHERTYPE_MPLS
                    {
                        for (i, (pkt, verdict)) in p.iter_mut().zip(v.iter_mut()).enumerate() {
                            try_label(fib, depth, mac, i, pkt, verdict, &mut rest, &mut r);
                        }
                        for &i in &rest[..r] {
                            let data = p[i as usize].data();
                            try_input(local, mac, i as usize, data, &mut fwd, &mut staged, &mut m);
                        }
                        p.len() - r
                    } else {
                        for (i, pkt) in p.iter().enumerate() {
                            let data = pkt.data();
                            // The line before the frame, where an LER push writes its
                            // labels and Ethernet header: the buffer's headroom, which
                            // nothing has touched (docs/benchmarks.md, session 31).
                            let headroom = data.as_ptr().wrapping_sub(DIRECT_PUSH_MAX);
                            crate::prefetch::prefetch(headroom);
                            try_input(local, mac, i, data, &mut fwd, &mut rest, &mut r);
                        }
                        for &i in &rest[..r] {
                            let i = i as usize;
                            try_label(
                                fib,
                                depth,
                                mac,
                                i,
                                &mut p[i],
                                &mut v[i],
                                &mut staged,
                                &mut m,
                            );
                        }
                        r - m
                    };
                    families.add(Family::Mpls, labelled);
                    if m > 0 {
                        // IPv6 ([`fast6`]) last: what it turns away goes to the egress
                        // LER ([`egress`], from inside fast6::burst: called from here, it
                        // made the IPv4 loops spill, +5 Ir), then to the stages.
                        let left = staged;
                        let l = core::mem::replace(&mut m, 0);
                        let egress = fast6::burst(
                            fib,
                            local,
                            mac,
                            in_port,
                            p,
                            v,
                            &left[..l],
                            &mut staged,
                            &mut m,
                        );
                        families.add(Family::Ipv6, l - m - egress);
                        families.add(Family::Mpls, egress);
                    }
                }
            }
            if f > 0 {
                // Per chunk; the stages count again the IPv4 packets they take back.
                families.add(Family::Ipv4, f);
                let mut routes = [NO_ROUTE; CHUNK];
                fib.lookup_ipv4_batch(&dsts[..f], &mut routes[..f]);
                for (&i, &route) in ipv4[..f].iter().zip(&routes[..f]) {
                    match fast::ipv4_forward(fib, &mut p[i as usize], route) {
                        Some(fwd) => v[i as usize] = fwd,
                        None => match fast::punt(fib, route) {
                            Some(punt) => v[i as usize] = punt,
                            None => {
                                families.received[Family::Ipv4 as usize] -= 1;
                                staged[m] = i;
                                m += 1;
                            }
                        },
                    }
                }
            }
            if m > 0 {
                self.process_staged(fib, in_port, p, v, &staged[..m], false, families);
            }
        }
    }

    /// Routes one IPv4 packet the router itself originated (an ICMP reply from the slow
    /// path): the frame is a placeholder 14-byte Ethernet header followed by the IPv4
    /// datagram. No input checks against martians, no TTL decrement; labels are pushed as
    /// for forwarded traffic.
    pub fn originate<P: PacketBuf>(&self, fib: &Fib, pkt: &mut P) -> Verdict {
        let mut v = [Verdict::Drop(DropReason::Truncated)];
        self.process_staged(
            fib,
            ORIGINATED,
            core::slice::from_mut(pkt),
            &mut v,
            &[0],
            true,
            &mut FamilyCounts::default(),
        );
        v[0]
    }

    /// The stages over `pkts[which[k]]` (at most [`CHUNK`] packets), each stage over all
    /// of them before the next.
    #[allow(clippy::too_many_arguments)]
    fn process_staged<P: PacketBuf>(
        &self,
        fib: &Fib,
        in_port: u16,
        pkts: &mut [P],
        verdicts: &mut [Verdict],
        which: &[u8],
        originate: bool,
        families: &mut FamilyCounts,
    ) {
        let n = which.len();
        let mut work = [Work::EMPTY; CHUNK];
        let local = fib.local().unwrap_or(&self.local);
        let mac = local.mac_key(in_port);
        for (w, &i) in work.iter_mut().zip(which) {
            let data = pkts[i as usize].data();
            let family = classify::classify(&self.config, local, in_port, mac, data, originate, w);
            families.add(family, 1);
        }
        for (w, &i) in work[..n].iter_mut().zip(which) {
            if w.next == Next::Mpls {
                mpls::resolve(&self.config, fib, in_port, pkts[i as usize].data(), w);
            }
        }
        let mut dsts = [0u32; CHUNK];
        let mut lookups = [0u8; CHUNK];
        let (mut m, mut v6) = (0, false);
        for (k, w) in work[..n].iter().enumerate() {
            match w.next {
                Next::Ipv4 { dst } => {
                    dsts[m] = dst;
                    lookups[m] = k as u8;
                    m += 1;
                }
                Next::Ipv6 => v6 = true,
                _ => {}
            }
        }
        if v6 {
            route_ipv6(fib, in_port, pkts, which, &mut work[..n], originate);
        }
        let mut routes = [NO_ROUTE; CHUNK];
        fib.lookup_ipv4_batch(&dsts[..m], &mut routes[..m]);
        for (&k, &route) in lookups[..m].iter().zip(&routes[..m]) {
            let k = k as usize;
            let pkt = &pkts[which[k] as usize];
            ipv4::route(fib, in_port, pkt.data(), &mut work[k], route, originate);
        }
        for (w, &i) in work[..n].iter().zip(which) {
            let i = i as usize;
            verdicts[i] = match w.next {
                Next::Done(v) => v,
                Next::NextHop(nh) => rewrite::forward(fib, in_port, &mut pkts[i], w, nh),
                // Every stage above settles the packets it takes.
                Next::Mpls | Next::Ipv4 { .. } | Next::Ipv6 => Verdict::Drop(DropReason::NoRoute),
            };
        }
    }
}

/// The batched IPv6 lookup and route targets for the packets of `work` (the state of
/// `pkts[which[k]]`) that await it. Out of line, so that bursts without IPv6 pay nothing
/// for its arrays.
#[inline(never)]
fn route_ipv6<P: PacketBuf>(
    fib: &Fib,
    in_port: u16,
    pkts: &[P],
    which: &[u8],
    work: &mut [Work],
    originate: bool,
) {
    let mut dsts = [0u128; CHUNK];
    let mut lookups = [0u8; CHUNK];
    let mut m = 0;
    for (k, w) in work.iter().enumerate() {
        if w.next == Next::Ipv6 {
            dsts[m] = ipv6::dst(pkts[which[k] as usize].data(), w.keep);
            lookups[m] = k as u8;
            m += 1;
        }
    }
    let mut routes = [NO_ROUTE; CHUNK];
    fib.lookup_ipv6_batch(&dsts[..m], &mut routes[..m]);
    for (&k, &route) in lookups[..m].iter().zip(&routes[..m]) {
        let k = k as usize;
        let data = pkts[which[k] as usize].data();
        ipv6::route(fib, in_port, data, &mut work[k], route, originate);
    }
}
