//! The forwarding information base: the read-mostly tables every worker consults.
//!
//! A [`Fib`] is an immutable snapshot. The control thread builds a complete new one with a
//! [`FibBuilder`] (or derives one from the running snapshot), and publishes it through
//! [`crate::rcu`]; workers never see a half-built table and never take a lock.
//!
//! Shape of a lookup:
//! - IPv4: [`Lpm4`] maps the destination to a route id; `routes[id]` is an [`Ipv4Route`]
//!   (target + TTL mode), and `direct[id]` what a plain forward needs of it ([`Direct`]).
//!   Routes are interned, so a full table has only as many distinct route ids as
//!   distinct (next hop, TTL mode) pairs: a few hundred, not a million.
//! - IPv6: [`Lpm6`] maps the destination to a route id in the same `routes` (one interned
//!   set for both families: an IPv6 route and an IPv4 route with the same target share
//!   an id). 6PE is an IPv6 route whose adjacency is an IPv4 neighbor pushing labels.
//! - MPLS: [`LabelTable`] maps the top label to an index into `label_entries`, a
//!   [`LabelEntry`] (operation, next hop, TTL mode).
//! - A [`NextHop`] is an [`Adjacency`] or an [`EcmpGroup`] of adjacencies, resolved with
//!   the packet's flow hash.

mod adjacency;
mod builder;
mod delta;
mod direct;
mod ecmp;
mod label_table;
mod lpm4;
mod lpm6;
pub mod prefix_list;
pub mod prefix_list6;
mod view;

use std::sync::Arc;

pub use adjacency::{Adjacency, Family, MAX_PUSH};
pub use builder::{FibBuilder, FibError};
pub use delta::FibDelta;
pub use direct::{Direct, DIRECT_PUSH_MAX};
pub use ecmp::{EcmpError, EcmpGroup, ECMP_BUCKETS};
pub use label_table::LabelTable;
pub use lpm4::{Lpm4, MAX_VALUE, NO_ROUTE};
pub use lpm6::{mask6, Lpm6};

/// Whether the LPM batches run their AVX-512 forms (`lpm4/flat/avx512.rs`,
/// `lpm6/lookup/wide.rs`): on CPUs with AVX-512 F and VPOPCNTDQ, Intel from Ice Lake and
/// AMD from Zen 4. Skylake-SP and Cascade Lake lack VPOPCNTDQ, and there 512-bit code
/// also lowers the core's clock, so they keep the scalar batches. std caches the answer
/// (a load and a test a call).
#[cfg(target_arch = "x86_64")]
#[inline]
pub(crate) fn avx512_batches() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512vpopcntdq")
}

/// Which form the LPM batches take on this CPU, for tools that report lookup rates.
pub fn batch_form() -> &'static str {
    #[cfg(target_arch = "x86_64")]
    if avx512_batches() {
        return "AVX-512 (sixteen keys a gather)";
    }
    "scalar"
}

/// Index of an [`Adjacency`] in a [`Fib`].
pub type AdjId = u32;
/// Index of an [`EcmpGroup`] in a [`Fib`].
pub type EcmpId = u32;
/// Index of an [`Ipv4Route`] in a [`Fib`], the value stored in the [`Lpm4`] and [`Lpm6`].
pub type RouteId = u32;

/// Lowest label that may be bound to a label entry (0..=15 are reserved, RFC 3032).
pub const MIN_UNRESERVED_LABEL: u32 = 16;
/// Highest 20-bit label.
pub const MAX_LABEL: u32 = (1 << 20) - 1;
/// Default label TTL written in pipe mode (RFC 3443).
pub const DEFAULT_PIPE_TTL: u8 = 255;

/// How TTLs move between the IP header and the label stack (RFC 3443).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum TtlMode {
    /// The label stack and the IP header share one TTL: imposition copies IP TTL - 1 into
    /// the labels, disposition copies the label TTL back into the IP header.
    #[default]
    Uniform,
    /// Labels carry their own TTL (the value given) and the IP TTL is only decremented by
    /// the ingress LER; the LSP counts as one hop. Short-pipe behaves the same here.
    Pipe(u8),
}

impl TtlMode {
    /// The TTL a pushed label carries in pipe mode (`Pipe(0)` means the default, 255);
    /// `None` in uniform mode, where it is the datagram's own, one less.
    #[inline(always)]
    pub const fn pipe_ttl(self) -> Option<u8> {
        match self {
            TtlMode::Uniform => None,
            TtlMode::Pipe(0) => Some(DEFAULT_PIPE_TTL),
            TtlMode::Pipe(t) => Some(t),
        }
    }

    /// The TTL of the outermost pushed label, when the packet's own TTL after this hop's
    /// decrement is `uniform`.
    #[inline(always)]
    pub const fn pushed_ttl(&self, uniform: u8) -> u8 {
        // By reference: with `self` by value the mode was copied before the caller's
        // `prepend` and held across it, and ECMP took 6 more instructions a packet and
        // 6PE 10 (worker-ir), though neither pushes through this line. The match is
        // written out rather than read through `pipe_ttl`'s Option, which cost the same
        // (ECMP +5.8, 6PE +10, measured again in session 25's review).
        match *self {
            TtlMode::Uniform => uniform,
            TtlMode::Pipe(0) => DEFAULT_PIPE_TTL,
            TtlMode::Pipe(t) => t,
        }
    }

    /// The TTL a datagram leaves with when the label above it is popped (disposition):
    /// its own, `ip_ttl`, in pipe mode; in uniform mode the smaller of that and
    /// `label_ttl`, the popped label's after this hop's decrement.
    #[inline(always)]
    pub const fn popped_ttl(self, ip_ttl: u8, label_ttl: u8) -> u8 {
        match self {
            TtlMode::Uniform => {
                if ip_ttl < label_ttl {
                    ip_ttl
                } else {
                    label_ttl
                }
            }
            TtlMode::Pipe(_) => ip_ttl,
        }
    }
}

/// Where a lookup leads before the flow hash is applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NextHop {
    /// A single adjacency.
    Adjacency(AdjId),
    /// A weighted ECMP group.
    Ecmp(EcmpId),
}

/// What an IPv4 route does with a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RouteTarget {
    /// Forward to a next hop (which may push labels: LER imposition).
    NextHop(NextHop),
    /// An address of the router itself: deliver to the slow path.
    Local,
    /// A connected subnet on `port` whose host is not a known neighbor: the slow path
    /// resolves the destination by ARP ("glean") and installs an adjacency.
    Connected { port: u16 },
    /// Discard silently (counted as `no_route`).
    Blackhole,
}

/// An IPv4 route: target plus the TTL mode used when it imposes labels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Ipv4Route {
    pub target: RouteTarget,
    pub ttl_mode: TtlMode,
}

/// An IPv6 route has the same shape as an IPv4 one (target plus TTL mode, the hop limit
/// standing for the TTL); both live in one interned `routes` vector.
pub type Ipv6Route = Ipv4Route;

/// What a label-switching router does with a packet whose top label matched.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LabelOp {
    /// Replace the top label by the adjacency's label stack (one label: swap; several:
    /// swap-and-push). The adjacency must push at least one label.
    Swap,
    /// Pop the top label and forward to the adjacency (penultimate-hop pop). The adjacency
    /// normally pushes nothing; when the popped label was the bottom of the stack, the
    /// exposed IPv4 header gets its TTL per the entry's TTL mode.
    Pop,
    /// Pop the top label and look up what is below: the next label, or the IPv4 header at
    /// the bottom of the stack (egress LER).
    PopAndLookup,
}

/// A label table entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LabelEntry {
    pub op: LabelOp,
    /// Required for `Swap` and `Pop`; `None` for `PopAndLookup`.
    pub next_hop: Option<NextHop>,
    pub ttl_mode: TtlMode,
}

/// Sizes of a snapshot, for `check`, logs and metrics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FibStats {
    pub ipv4_routes: usize,
    pub ipv6_routes: usize,
    /// Bytes a lookup can read in the [`Lpm4`] and the [`Lpm6`], each.
    pub lpm4_bytes: usize,
    pub lpm6_bytes: usize,
    pub labels: usize,
    pub adjacencies: usize,
    pub ecmp_groups: usize,
    /// Approximate heap bytes held by the tables.
    pub bytes: usize,
}

/// An immutable forwarding snapshot. Build one with [`FibBuilder`], or derive the next one
/// from it with [`Fib::derive`]. Cloning is cheap (the LPM blocks are shared) but copies
/// the label table pages.
#[derive(Clone, Debug)]
pub struct Fib {
    pub(crate) generation: u64,
    pub(crate) lpm: Lpm4,
    /// Shared between snapshots until one changes an IPv6 prefix (copy-on-write), so an
    /// IPv4-only reload does not copy the IPv6 table.
    pub(crate) lpm6: Arc<Lpm6>,
    pub(crate) routes: Vec<Ipv4Route>,
    /// Derived from `routes` and `adjacencies` (`direct.rs`), for IPv4 and for IPv6.
    pub(crate) direct: Vec<Direct>,
    pub(crate) direct6: Vec<Direct>,
    pub(crate) labels: LabelTable,
    pub(crate) label_entries: Vec<LabelEntry>,
    /// The in-label of each `label_entries` slot, so a derived snapshot can keep the
    /// entries dense when it unbinds a label.
    pub(crate) label_keys: Vec<u32>,
    pub(crate) adjacencies: Vec<Adjacency>,
    pub(crate) ecmp: Vec<EcmpGroup>,
    /// The router's IPv4 address on each port (source of ICMP errors), by port id.
    pub(crate) port_addrs: Vec<Option<[u8; 4]>>,
    /// The router's IPv6 address on each port (source of ICMPv6 errors), by port id.
    pub(crate) port_addrs6: Vec<Option<[u8; 16]>>,
    pub(crate) ipv4_route_count: usize,
    /// The router's own MACs and addresses published with this snapshot (the ports'
    /// addresses can change on a reload); `None`: the pipeline's own.
    pub(crate) local: Option<Arc<crate::pipeline::LocalAddrs>>,
}

impl Fib {
    /// An empty table: every IPv4 packet and every label misses.
    pub fn empty() -> Fib {
        FibBuilder::new().build(0)
    }

    /// Publishes `local` with this snapshot: pipelines check input against it instead of
    /// the addresses they were built with.
    pub fn set_local(&mut self, local: Arc<crate::pipeline::LocalAddrs>) {
        self.local = Some(local);
    }

    /// The router's addresses published with this snapshot, if any.
    #[inline(always)]
    pub fn local(&self) -> Option<&crate::pipeline::LocalAddrs> {
        self.local.as_deref()
    }

    /// Monotonic generation number, bumped by every publish.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Route id for `dst` (host byte order), or `None`.
    #[inline]
    pub fn lookup_ipv4(&self, dst: u32) -> Option<RouteId> {
        self.lpm.lookup(dst)
    }

    /// Looks up a burst of destinations; `out[i]` is the route id or [`NO_ROUTE`].
    #[inline]
    pub fn lookup_ipv4_batch(&self, dsts: &[u32], out: &mut [RouteId]) {
        self.lpm.lookup_batch(dsts, out)
    }

    /// Route id for `dst` (the address as a big-endian 128-bit integer), or `None`.
    #[inline]
    pub fn lookup_ipv6(&self, dst: u128) -> Option<RouteId> {
        self.lpm6.lookup(dst)
    }

    /// Looks up a burst of IPv6 destinations; `out[i]` is the route id or [`NO_ROUTE`].
    #[inline]
    pub fn lookup_ipv6_batch(&self, dsts: &[u128], out: &mut [RouteId]) {
        self.lpm6.lookup_batch(dsts, out)
    }

    /// The IPv6 table itself (for benchmarks and `show`).
    pub fn lpm6(&self) -> &Lpm6 {
        &self.lpm6
    }

    /// The route with this id (ids come from the lookups above, either family).
    #[inline]
    pub fn route(&self, id: RouteId) -> &Ipv4Route {
        &self.routes[id as usize]
    }

    /// The route a lookup found: `None` for [`NO_ROUTE`] (no route id is that large), in
    /// the one compare that bounds-checks the index.
    #[inline]
    pub fn found_route(&self, id: RouteId) -> Option<&Ipv4Route> {
        self.routes.get(id as usize)
    }

    /// The plain-forward fields of the route a lookup found (`direct.rs`): `None` for
    /// [`NO_ROUTE`], in the one compare that bounds-checks the index.
    #[inline(always)]
    pub fn direct(&self, id: RouteId) -> Option<&Direct> {
        self.direct.get(id as usize)
    }

    /// [`Fib::direct`] for IPv6 datagrams.
    #[inline(always)]
    pub fn direct6(&self, id: RouteId) -> Option<&Direct> {
        self.direct6.get(id as usize)
    }

    /// The entry bound to `label`, or `None`.
    #[inline]
    pub fn lookup_label(&self, label: u32) -> Option<&LabelEntry> {
        self.labels
            .lookup(label)
            .map(|i| &self.label_entries[i as usize])
    }

    /// The adjacency with this id.
    #[inline]
    pub fn adjacency(&self, id: AdjId) -> &Adjacency {
        &self.adjacencies[id as usize]
    }

    /// The ECMP group with this id.
    #[inline]
    pub fn ecmp_group(&self, id: EcmpId) -> &EcmpGroup {
        &self.ecmp[id as usize]
    }

    /// Resolves a next hop to one adjacency with the packet's flow hash.
    #[inline]
    pub fn resolve(&self, nh: NextHop, flow_hash: u32) -> AdjId {
        match nh {
            NextHop::Adjacency(a) => a,
            NextHop::Ecmp(g) => self.ecmp[g as usize].select(flow_hash),
        }
    }

    /// The router's address on `port`, used as the source of ICMP it generates.
    pub fn port_address(&self, port: u16) -> Option<[u8; 4]> {
        self.port_addrs.get(port as usize).copied().flatten()
    }

    /// The router's IPv6 address on `port` (its first global one, else its link-local
    /// one), used as the source of ICMPv6 it generates.
    pub fn port_address6(&self, port: u16) -> Option<[u8; 16]> {
        self.port_addrs6.get(port as usize).copied().flatten()
    }

    /// Number of ports the snapshot knows addresses for.
    pub fn port_count(&self) -> usize {
        self.port_addrs.len()
    }

    /// Sizes of the tables.
    pub fn stats(&self) -> FibStats {
        FibStats {
            ipv4_routes: self.ipv4_route_count,
            ipv6_routes: self.lpm6.len(),
            lpm4_bytes: self.lpm.memory_bytes(),
            lpm6_bytes: self.lpm6.memory_bytes(),
            labels: self.label_entries.len(),
            adjacencies: self.adjacencies.len(),
            ecmp_groups: self.ecmp.len(),
            bytes: self.lpm.memory_bytes()
                + self.lpm6.memory_bytes()
                + self.labels.memory_bytes()
                + self.routes.len() * std::mem::size_of::<Ipv4Route>()
                + (self.direct.len() + self.direct6.len()) * std::mem::size_of::<Direct>()
                + self.label_entries.len() * std::mem::size_of::<LabelEntry>()
                + self.adjacencies.len() * std::mem::size_of::<Adjacency>()
                + self.ecmp.iter().map(|g| g.memory_bytes()).sum::<usize>(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{TtlMode, DEFAULT_PIPE_TTL};

    #[test]
    fn pushed_labels_take_the_pipe_ttl_or_the_datagram_s() {
        assert_eq!(TtlMode::Uniform.pipe_ttl(), None);
        assert_eq!(TtlMode::Pipe(0).pipe_ttl(), Some(DEFAULT_PIPE_TTL));
        assert_eq!(TtlMode::Pipe(9).pipe_ttl(), Some(9));
        assert_eq!(TtlMode::Uniform.pushed_ttl(63), 63);
        assert_eq!(TtlMode::Pipe(0).pushed_ttl(63), 255);
        assert_eq!(TtlMode::Pipe(9).pushed_ttl(63), 9);
    }

    #[test]
    fn a_popped_label_lowers_the_datagram_s_ttl_only_in_uniform_mode() {
        // RFC 3443: uniform takes the smaller of the two; pipe keeps the datagram's.
        assert_eq!(TtlMode::Uniform.popped_ttl(64, 10), 10);
        assert_eq!(TtlMode::Uniform.popped_ttl(10, 64), 10);
        assert_eq!(TtlMode::Uniform.popped_ttl(7, 7), 7);
        assert_eq!(TtlMode::Pipe(0).popped_ttl(64, 10), 64);
        assert_eq!(TtlMode::Pipe(9).popped_ttl(10, 64), 10);
    }
}
