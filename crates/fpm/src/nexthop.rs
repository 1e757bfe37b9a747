//! `RTM_NEWNEXTHOP` / `RTM_DELNEXTHOP`, which `netlink-packet-route` does not parse:
//! a checked view of `struct nhmsg` and its attributes (linux/nexthop.h).
//!
//! zebra sends one message per next-hop object: a single next hop (`NHA_GATEWAY`,
//! `NHA_OIF`, push labels in `NHA_ENCAP` with `NHA_ENCAP_TYPE` = `LWTUNNEL_ENCAP_MPLS`),
//! a blackhole (`NHA_BLACKHOLE`) or a group (`NHA_GROUP`: `struct nexthop_grp` entries,
//! weight stored minus one, with the high byte in `resvd1` on kernels with 16-bit weights).
//! `NHA_GATEWAY` is 4 or 16 bytes whatever `nh_family` says (zebra sets the family from
//! the route's, so a 6PE next hop is 4 bytes in an `AF_INET6` message); an IPv4-mapped
//! IPv6 gateway is the IPv4 next hop.

use crate::error::MsgError;
use crate::msg::{Gateway, Message, NexthopBody, Op, Path};
use crate::netlink::{Attrs, Limits};
use crate::route::{check_labels, IMPLICIT_NULL};

/// Bytes of `struct nhmsg`.
pub const NHMSG_LEN: usize = 8;
/// Named offsets of `struct nhmsg`.
mod off {
    pub const FAMILY: usize = 0;
}
/// Bytes of `struct nexthop_grp` and its field offsets.
const GRP_LEN: usize = 8;
mod grp {
    pub const ID: std::ops::Range<usize> = 0..4;
    pub const WEIGHT: usize = 4;
    pub const WEIGHT_HIGH: usize = 5;
}

pub const NHA_ID: u16 = 1;
pub const NHA_GROUP: u16 = 2;
pub const NHA_BLACKHOLE: u16 = 4;
pub const NHA_OIF: u16 = 5;
pub const NHA_GATEWAY: u16 = 6;
pub const NHA_ENCAP_TYPE: u16 = 7;
pub const NHA_ENCAP: u16 = 8;
pub const LWTUNNEL_ENCAP_MPLS: u16 = 1;
pub const MPLS_IPTUNNEL_DST: u16 = 1;
pub const AF_UNSPEC: u8 = 0;
pub const AF_INET: u8 = 2;
pub const AF_INET6: u8 = 10;
pub const AF_MPLS: u8 = 28;

fn bad(msg: impl Into<String>) -> MsgError {
    MsgError::MalformedNexthop(msg.into())
}

fn u32_of(v: &[u8], what: &str) -> Result<u32, MsgError> {
    let b: [u8; 4] = v
        .try_into()
        .map_err(|_| bad(format!("{what} is {} bytes, expected 4", v.len())))?;
    Ok(u32::from_ne_bytes(b))
}

/// What the attributes of one nexthop message said.
#[derive(Default)]
struct Fields {
    id: Option<u32>,
    group: Option<Vec<(u32, u32)>>,
    blackhole: bool,
    oif: u32,
    gateway: Option<Gateway>,
    encap_type: Option<u16>,
    labels: Vec<u32>,
}

/// Decodes a nexthop message body.
pub fn decode(op: Op, body: &[u8], limits: Limits) -> Result<Message, MsgError> {
    if body.len() < NHMSG_LEN {
        return Err(bad(format!(
            "{} bytes, shorter than struct nhmsg",
            body.len()
        )));
    }
    let family = body[off::FAMILY];
    let f = fields(&body[NHMSG_LEN..])?;
    let id = f.id.ok_or_else(|| bad("no NHA_ID"))?;
    if op == Op::Del {
        return Ok(Message::Nexthop { op, id, body: None });
    }
    let nh = if let Some(g) = f.group {
        if g.is_empty() {
            return Err(bad("empty NHA_GROUP"));
        }
        NexthopBody::Group(g)
    } else if f.blackhole {
        NexthopBody::Blackhole
    } else {
        if !matches!(family, AF_UNSPEC | AF_INET | AF_INET6 | AF_MPLS) {
            return Err(MsgError::UnsupportedFamily(family));
        }
        if let Some(t) = f.encap_type.filter(|&t| t != LWTUNNEL_ENCAP_MPLS) {
            return Err(MsgError::UnsupportedEncap(t));
        }
        check_labels(&f.labels, limits)?;
        NexthopBody::Single(Path {
            gateway: f.gateway,
            ifindex: f.oif,
            labels: f.labels,
            weight: 1,
        })
    };
    Ok(Message::Nexthop {
        op,
        id,
        body: Some(nh),
    })
}

fn fields(attrs: &[u8]) -> Result<Fields, MsgError> {
    let mut f = Fields::default();
    for a in Attrs::new(attrs) {
        let (kind, v) = a.map_err(bad)?;
        match kind {
            NHA_ID => f.id = Some(u32_of(v, "NHA_ID")?),
            NHA_GROUP => f.group = Some(group(v)?),
            NHA_BLACKHOLE => f.blackhole = true,
            NHA_OIF => f.oif = u32_of(v, "NHA_OIF")?,
            NHA_GATEWAY => {
                let g = Gateway::from_bytes(v);
                f.gateway =
                    Some(g.ok_or_else(|| bad(format!("NHA_GATEWAY is {} bytes", v.len())))?);
            }
            NHA_ENCAP_TYPE => {
                let b: [u8; 2] = v
                    .try_into()
                    .map_err(|_| bad("NHA_ENCAP_TYPE not 2 bytes"))?;
                f.encap_type = Some(u16::from_ne_bytes(b));
            }
            NHA_ENCAP => f.labels = encap(v)?,
            _ => {}
        }
    }
    Ok(f)
}

fn group(v: &[u8]) -> Result<Vec<(u32, u32)>, MsgError> {
    if !v.len().is_multiple_of(GRP_LEN) {
        return Err(bad(format!(
            "NHA_GROUP is {} bytes, not a multiple of 8",
            v.len()
        )));
    }
    Ok(v.chunks_exact(GRP_LEN)
        .map(|e| {
            let id = u32::from_ne_bytes(e[grp::ID].try_into().unwrap());
            let w = e[grp::WEIGHT] as u32 | (e[grp::WEIGHT_HIGH] as u32) << 8;
            (id, w + 1)
        })
        .collect())
}

/// The label stack in an `NHA_ENCAP` (`MPLS_IPTUNNEL_DST`: 4-byte label stack entries,
/// network order, label in the top 20 bits). Implicit null is dropped.
fn encap(v: &[u8]) -> Result<Vec<u32>, MsgError> {
    let mut labels = Vec::new();
    for a in Attrs::new(v) {
        let (kind, v) = a.map_err(bad)?;
        if kind != MPLS_IPTUNNEL_DST {
            continue;
        }
        if !v.len().is_multiple_of(4) {
            return Err(bad(format!("MPLS_IPTUNNEL_DST is {} bytes", v.len())));
        }
        labels = v
            .chunks_exact(4)
            .map(|e| u32::from_be_bytes(e.try_into().unwrap()) >> 12)
            .filter(|&l| l != IMPLICIT_NULL)
            .collect();
    }
    Ok(labels)
}
