//! ICMP the router generates: time exceeded (IPv4 and MPLS, RFC 4950 label stack in an
//! RFC 4884 extension), fragmentation needed, echo reply, and their ICMPv6 counterparts
//! (time exceeded, packet too big, no route, echo reply: [`build6`]). Pure builders for the slow path:
//! they write a frame into a caller's buffer and say how to send it; they never send,
//! allocate per call or look at a clock (the [`TokenBucket`] takes the time as argument).
//!
//! Replies to labelled packets (RFC 3032 §2.3.2): by default the reply is built under the
//! received label stack with label TTL 255 and label-switched like the packet that
//! expired, so it reaches the end of the LSP, whose egress LER routes it back to the
//! source: traceroute then shows every LSR. [`MplsReply::Direct`] routes it straight back
//! when this router has an IPv4 route to the source.
//!
//! Sending a [`Reply`]: `SendVia::Route` frames go through [`Pipeline::originate`],
//! `SendVia::LabelSwitch` frames through [`Pipeline::process_burst`] with the original
//! ingress port (addressed to that port's MAC); `SendVia::Direct` frames (ICMPv6 to a
//! link-local address) are complete and go out of the ingress port as they are.

mod build;
mod build6;
mod rate;

pub use build::{echo_reply, frag_needed, time_exceeded, MAX_ERROR_FRAME};
pub use build6::{
    echo_reply6, no_route6, packet_too_big, source6, time_exceeded6, MAX_ERROR_FRAME6, MIN_MTU6,
};
pub use rate::TokenBucket;

use crate::fib::Fib;
use crate::packet::PacketBuf;
use crate::pipeline::{Pipeline, Verdict};
use crate::wire::mpls::DEFAULT_MAX_DEPTH;

/// How replies to labelled packets travel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MplsReply {
    /// Onward along the LSP (RFC 3032 §2.3.2).
    #[default]
    AlongLsp,
    /// Straight back when an IPv4 route to the source exists, else along the LSP.
    Direct,
}

/// ICMP generation settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IcmpConfig {
    pub mpls_reply: MplsReply,
    /// IPv4 TTL of generated messages.
    pub ttl: u8,
    /// Messages per second per worker (0 disables generation).
    pub rate_per_sec: u32,
    /// Largest burst per worker.
    pub burst: u32,
    /// Echo replies per second (their own bucket; 0 disables them).
    pub echo_rate_per_sec: u32,
    /// Largest burst of echo replies.
    pub echo_burst: u32,
    /// Deepest received label stack that is quoted.
    pub max_label_depth: usize,
}

impl Default for IcmpConfig {
    fn default() -> Self {
        IcmpConfig {
            mpls_reply: MplsReply::AlongLsp,
            ttl: 64,
            rate_per_sec: 1000,
            burst: 100,
            echo_rate_per_sec: 1000,
            echo_burst: 100,
            max_label_depth: DEFAULT_MAX_DEPTH,
        }
    }
}

/// Why no ICMP message was built. None of these is a fault: the slow path counts them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum IcmpError {
    #[error("no IPv4 datagram in the frame (or below its label stack)")]
    NotIpv4,
    #[error("no IPv6 packet in the frame (or below its label stack)")]
    NotIpv6,
    #[error("no ICMP error is sent about this packet (RFC 1812 §4.3.2.7): {0}")]
    Suppressed(&'static str),
    #[error("port {0} has no address of the packet's family to send ICMP from; give it one in the config")]
    NoSourceAddress(u16),
    #[error("not an ICMP echo request with a valid checksum")]
    NotEchoRequest,
    #[error("reply needs {need} bytes, buffer has {have}")]
    BufferTooSmall { need: usize, have: usize },
}

/// How to send a built frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendVia {
    /// Placeholder Ethernet + IPv4 or IPv6: [`Pipeline::originate`].
    Route,
    /// Placeholder Ethernet + received label stack (TTL 255) + IPv4 or IPv6:
    /// [`Pipeline::process_burst`] with the ingress port of the original packet.
    LabelSwitch,
    /// Complete Ethernet (to the requester's MAC) + IPv6 to a link-local address: sent
    /// as it is out of the port the request came in on (the pipeline cannot route it).
    Direct,
}

/// A frame written by a builder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reply {
    /// Bytes written at the start of the output buffer.
    pub len: usize,
    pub via: SendVia,
}

/// Sends a built reply (already in `pkt`) through the pipeline; returns its verdict.
pub fn send<P: PacketBuf>(
    pipeline: &Pipeline,
    fib: &Fib,
    in_port: u16,
    via: SendVia,
    pkt: &mut P,
) -> Verdict {
    match via {
        SendVia::Route => pipeline.originate(fib, pkt),
        SendVia::Direct => Verdict::Forward { port: in_port },
        SendVia::LabelSwitch => {
            // As if received on `in_port`: addressed to that port's MAC, which the input
            // check requires (the builders leave a zero placeholder).
            if let (Some(mac), Some(dst)) = (
                fib.local().unwrap_or(pipeline.local()).port_mac(in_port),
                pkt.data_mut().get_mut(..6),
            ) {
                dst.copy_from_slice(&mac);
            }
            let mut v = [Verdict::Forward { port: 0 }];
            pipeline.process_burst(fib, in_port, core::slice::from_mut(pkt), &mut v);
            v[0]
        }
    }
}
