//! The forwarding core of mplsrouter: everything that decides what happens to a packet.
//!
//! Pure Rust with no DPDK and no I/O, so that every behaviour can be tested on plain byte
//! buffers (in the spirit of quinn-proto). The DPDK runtime (`crates/router`) calls into this
//! crate with mbufs through the [`packet::PacketBuf`] trait.
//!
//! - [`wire`]: checked zero-copy views over Ethernet, MPLS, IPv4, ICMP, IPv6 (extension
//!   headers, ICMPv6, NDP), UDP/TCP headers.
//! - [`fib`]: the read-mostly tables (IPv4 LPM, label table, adjacencies, ECMP groups; the
//!   IPv6 LPM, not yet in the snapshot) and the immutable [`fib::Fib`] that bundles them.
//! - [`pipeline`]: one burst in, one verdict per packet out.
//! - [`icmp`]: building ICMP replies and errors (sent by the runtime's slow path).
//! - [`rcu`]: epoch-based (QSBR) publication of `Fib` snapshots to the workers.
//!
//! This crate must never allocate, lock or make a syscall on the per-packet path.
//!
//! `unsafe` here is confined to [`rcu`] (snapshot publication and reclamation),
//! [`prefetch`] (a cache hint), the IPv4 LPM's arena (`fib/lpm4/huge.rs`, `flat.rs`,
//! `flat/avx512.rs`, `batch.rs`) and the IPv6 LPM's AVX-512 passes
//! (`fib/lpm6/lookup/wide.rs`); every other module is safe code. The unit tests of that
//! code run under Miri (docs/architecture.md, "Unsafe", has the command); Miri has no
//! AVX-512, so the AVX-512 code is tested on the CPUs that have it.

pub mod fib;
pub mod icmp;
pub mod packet;
pub mod pipeline;
pub mod prefetch;
pub mod rcu;
pub mod wire;
