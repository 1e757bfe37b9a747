//! The ICMP the slow path generates: echo replies and errors, each kind under its own
//! token bucket (`icmp_rate_limit`: errors, and echo replies separately), in the family
//! of the punted packet (ICMPv6 for IPv6, below labels or not: the first nibble says).
//!
//! Order matters: the reply is built first (a packet that must not draw a message, or
//! is not an echo request, costs no token), then the bucket is asked, then an mbuf is
//! allocated. The punted packet is consumed when a reply was built and allowed, else
//! dropped under the reason that stopped it. A reply to a link-local address is sent
//! straight back out of the port the request came in on (`SendVia::Direct`), like an
//! NDP advertisement; everything else goes through the pipeline.

use std::sync::atomic::Ordering::Relaxed;

use dpdk::Mbuf;
use net::fib::Fib;
use net::icmp::{self, IcmpConfig, IcmpError, Reply};
use net::packet::PacketBuf;
use net::pipeline::{LocalAddrs, Verdict, ORIGINATED};

use super::State;
use crate::metrics::{IcmpKind, SlowDrop};

fn error_reason(e: IcmpError) -> SlowDrop {
    match e {
        IcmpError::NotIpv4 => SlowDrop::IcmpNotIpv4,
        IcmpError::NotIpv6 => SlowDrop::IcmpNotIpv6,
        IcmpError::Suppressed(_) => SlowDrop::IcmpSuppressed,
        IcmpError::NoSourceAddress(_) => SlowDrop::IcmpNoSource,
        IcmpError::NotEchoRequest => SlowDrop::LocalUnhandled,
        IcmpError::BufferTooSmall { .. } => SlowDrop::IcmpBuildFailed,
    }
}

/// A builder: config, table, the router's addresses, received frame, output buffer.
type Build<'a> =
    &'a dyn Fn(&IcmpConfig, &Fib, &LocalAddrs, &[u8], &mut [u8]) -> Result<Reply, IcmpError>;

/// Whether the frame's IP packet (below any labels) is IPv6.
pub(super) fn is_ipv6(frame: &[u8]) -> bool {
    net::wire::ip_packet(frame)
        .and_then(|ip| ip.first())
        .is_some_and(|b| b >> 4 == 6)
}

impl State {
    pub(super) fn echo_reply(&mut self, fib: &Fib, m: Mbuf, in_port: u16) {
        let build: Build = match is_ipv6(m.data()) {
            true => &|cfg, _, l, data, out| icmp::echo_reply6(cfg, l, in_port, data, out),
            false => &|cfg, _, _, data, out| icmp::echo_reply(cfg, data, out),
        };
        self.icmp(fib, m, in_port, IcmpKind::EchoReply, build);
    }

    pub(super) fn time_exceeded(&mut self, fib: &Fib, m: Mbuf, in_port: u16) {
        let build: Build = match is_ipv6(m.data()) {
            true => &|cfg, fib, l, data, out| icmp::time_exceeded6(cfg, fib, l, in_port, data, out),
            false => &|cfg, fib, _, data, out| icmp::time_exceeded(cfg, fib, in_port, data, out),
        };
        self.icmp(fib, m, in_port, IcmpKind::TimeExceeded, build);
    }

    pub(super) fn frag_needed(&mut self, fib: &Fib, m: Mbuf, in_port: u16, mtu: u16) {
        if is_ipv6(m.data()) {
            let build: Build = &|cfg, fib, l, data, out| {
                icmp::packet_too_big(cfg, fib, l, in_port, data, mtu, out)
            };
            return self.icmp(fib, m, in_port, IcmpKind::PacketTooBig, build);
        }
        self.icmp(
            fib,
            m,
            in_port,
            IcmpKind::DestUnreachable,
            &|cfg, fib, _, data, out| icmp::frag_needed(cfg, fib, in_port, data, mtu, out),
        );
    }

    /// No route (punted by the IPv6 lookup): ICMPv6 destination unreachable, code 0.
    pub(super) fn unreachable(&mut self, fib: &Fib, m: Mbuf, in_port: u16) {
        self.icmp(
            fib,
            m,
            in_port,
            IcmpKind::DestUnreachable,
            &|cfg, fib, l, data, out| icmp::no_route6(cfg, fib, l, in_port, data, out),
        );
    }

    /// Answers the punted `m` with the message `build` writes, rate limited.
    fn icmp(&mut self, fib: &Fib, m: Mbuf, in_port: u16, kind: IcmpKind, build: Build) {
        let mut out = std::mem::take(&mut self.scratch);
        // The addresses the pipeline checks against: the table's, else its own.
        let local = fib.local().unwrap_or(self.sp.pipeline.local());
        let built = build(&self.sp.icmp, fib, local, m.data(), &mut out);
        let now = self.now_ns();
        let outcome = built.map_err(error_reason).and_then(|r| {
            let bucket = match kind {
                IcmpKind::EchoReply => &mut self.echo,
                _ => &mut self.errors,
            };
            if bucket.allow(now) {
                Ok(r)
            } else {
                self.sp.stats.icmp_rate_limited.fetch_add(1, Relaxed);
                Err(SlowDrop::IcmpRateLimited)
            }
        });
        match outcome {
            Err(why) => self.discard(m, why),
            Ok(reply) => {
                self.stats().handled.fetch_add(1, Relaxed);
                drop(m);
                self.send_reply(fib, in_port, kind, reply, &out);
            }
        }
        self.scratch = out;
    }

    fn send_reply(&mut self, fib: &Fib, in_port: u16, kind: IcmpKind, r: Reply, out: &[u8]) {
        if r.via == icmp::SendVia::Direct {
            // To a link-local address: straight back out of the port, as NDP answers.
            self.sp.stats.icmp(kind, is_ipv6(out));
            return self.send_frame(in_port, &out[..r.len]);
        }
        self.stats().generated.fetch_add(1, Relaxed);
        let Some(mut g) = self.sp.pool.alloc_with(&out[..r.len]) else {
            return self.stats().drop(SlowDrop::NoMbuf, 1);
        };
        let v = icmp::send(&self.sp.pipeline, fib, in_port, r.via, &mut g);
        if matches!(v, Verdict::Forward { .. }) {
            self.sp.stats.icmp(kind, is_ipv6(out));
        }
        // Held under ORIGINATED until ARP resolves, so that it is retried as the router's
        // own packet, not checked as one received from outside.
        let held_port = match r.via {
            icmp::SendVia::Route => ORIGINATED,
            icmp::SendVia::LabelSwitch | icmp::SendVia::Direct => in_port,
        };
        self.route(fib, g, held_port, v);
    }
}
