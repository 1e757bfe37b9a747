//! The netlink messages inside one FPM frame: header walk and dispatch by type.
//!
//! zebra packs one or more messages per frame (a route update is `RTM_DELROUTE` then
//! `RTM_NEWROUTE` in one frame). Headers are in host byte order (zebra runs on the same
//! host as the router, or one of the same endianness). A header that does not fit ends
//! the frame: the rest cannot be delimited, but the next frame can.

use crate::error::MsgError;
use crate::msg::{Message, Op};
use crate::{nexthop, route};

/// Bytes of `struct nlmsghdr`.
pub const NLMSG_HDR_LEN: usize = 16;
pub const RTM_NEWROUTE: u16 = 24;
pub const RTM_DELROUTE: u16 = 25;
pub const RTM_NEWNEXTHOP: u16 = 104;
pub const RTM_DELNEXTHOP: u16 = 105;

/// Named offsets of `struct nlmsghdr`.
mod off {
    pub const LEN: usize = 0;
    pub const TYPE: usize = 4;
}

/// What the decoder checks against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Most labels on one path (push or out-stack).
    pub max_labels: usize,
}

/// Netlink's 4-byte alignment.
pub fn align4(n: usize) -> usize {
    (n + 3) & !3
}

/// Iterates the messages of one frame's payload, decoding each.
pub struct Messages<'a> {
    rest: &'a [u8],
    limits: Limits,
    unknown: u32,
}

impl<'a> Messages<'a> {
    pub fn new(payload: &'a [u8], limits: Limits) -> Messages<'a> {
        Messages {
            rest: payload,
            limits,
            unknown: 0,
        }
    }

    /// Top-level attributes of a type this router does not know, in the messages so far
    /// (they are ignored; the message is still applied).
    pub fn unknown_attributes(&self) -> u32 {
        self.unknown
    }
}

/// Bytes of `struct rtmsg`.
const RTMSG_LEN: usize = 12;
/// Highest route attribute type known (`RTA_FLOWLABEL`) and next-hop attribute type
/// (`NHA_OP_FLAGS`).
const RTA_MAX_KNOWN: u16 = 31;
const NHA_MAX_KNOWN: u16 = 14;

/// Counts the top-level attributes of a route or next-hop body beyond the known types.
fn unknown_attributes(kind: u16, body: &[u8]) -> u32 {
    let (skip, max) = match kind {
        RTM_NEWROUTE | RTM_DELROUTE => (RTMSG_LEN, RTA_MAX_KNOWN),
        RTM_NEWNEXTHOP | RTM_DELNEXTHOP => (crate::nexthop::NHMSG_LEN, NHA_MAX_KNOWN),
        _ => return 0,
    };
    let Some(attrs) = body.get(skip..) else {
        return 0;
    };
    Attrs::new(attrs)
        .map_while(Result::ok)
        .filter(|&(t, _)| t == 0 || t > max)
        .count() as u32
}

impl Iterator for Messages<'_> {
    type Item = Result<Message, MsgError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        let r = self.rest;
        let claimed = if r.len() >= NLMSG_HDR_LEN {
            u32::from_ne_bytes(r[off::LEN..off::LEN + 4].try_into().unwrap())
        } else {
            0
        };
        if (claimed as usize) < NLMSG_HDR_LEN || claimed as usize > r.len() {
            self.rest = &[];
            return Some(Err(MsgError::Truncated {
                claimed,
                left: r.len(),
            }));
        }
        let kind = u16::from_ne_bytes([r[off::TYPE], r[off::TYPE + 1]]);
        let body = &r[NLMSG_HDR_LEN..claimed as usize];
        self.rest = &r[align4(claimed as usize).min(r.len())..];
        let m = decode(kind, body, self.limits);
        if m.is_ok() {
            self.unknown += unknown_attributes(kind, body);
        }
        Some(m)
    }
}

/// Decodes one message body (after the netlink header) of type `kind`.
pub fn decode(kind: u16, body: &[u8], limits: Limits) -> Result<Message, MsgError> {
    match kind {
        RTM_NEWROUTE => route::decode(Op::New, body, limits),
        RTM_DELROUTE => route::decode(Op::Del, body, limits),
        RTM_NEWNEXTHOP => nexthop::decode(Op::New, body, limits),
        RTM_DELNEXTHOP => nexthop::decode(Op::Del, body, limits),
        k => Ok(Message::Other(k)),
    }
}

/// A netlink attribute walk with checked lengths (`struct rtattr` / `struct nlattr`):
/// yields (type without the nested/byte-order flags, value).
pub struct Attrs<'a> {
    rest: &'a [u8],
}

/// Bytes of an attribute header.
pub const ATTR_HDR_LEN: usize = 4;

impl<'a> Attrs<'a> {
    pub fn new(bytes: &'a [u8]) -> Attrs<'a> {
        Attrs { rest: bytes }
    }
}

impl<'a> Iterator for Attrs<'a> {
    type Item = Result<(u16, &'a [u8]), String>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        let r = self.rest;
        if r.len() < ATTR_HDR_LEN {
            self.rest = &[];
            return Some(Err(format!("{} stray bytes after the attributes", r.len())));
        }
        let len = u16::from_ne_bytes([r[0], r[1]]) as usize;
        let kind = u16::from_ne_bytes([r[2], r[3]]) & 0x3fff;
        if len < ATTR_HDR_LEN || len > r.len() {
            self.rest = &[];
            return Some(Err(format!(
                "attribute {kind} claims {len} bytes, {} left",
                r.len()
            )));
        }
        self.rest = &r[align4(len).min(r.len())..];
        Some(Ok((kind, &r[ATTR_HDR_LEN..len])))
    }
}
