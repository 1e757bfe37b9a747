//! The trace and capture filter (`--filter EXPR`): parsed on the control side into a
//! fixed-size [`Filter`] of plain data, which the workers read through [`FilterCell`]
//! (three `u64` per term: no lock, no allocation) and test on the received bytes.
//!
//! Grammar: `TERM [and TERM]...`, `TERM := [not] PRIMITIVE`, at most [`MAX_TERMS`]:
//! `dst|src|host|net ADDR[/N]` (IPv4 or IPv6), `label L` (anywhere in the stack),
//! `proto udp|tcp|icmp|icmp6|N` (or just `udp`, `tcp`, `icmp`, `icmp6`),
//! `port|sport|dport N`, `mpls`, `ip`, `ip6`, `arp`. IPv4 and IPv6 are read plain or under
//! labels. An IPv6 packet's `proto` is its fixed header's next header or the upper layer
//! found past its extension headers; its ports are read past them too, within the wire
//! module's bounded walk. A primitive about a header the packet does not have is false
//! (`not` of it true): `dst 10.0.0.0/8` never matches IPv6. The test reads only the frame,
//! at most one VLAN tag, [`MAX_LABELS`] labels and [`ipv6_ext::MAX_EXT_HEADERS`]
//! extension headers.

use std::net::{Ipv4Addr, Ipv6Addr};
use std::sync::atomic::{AtomicU64, Ordering};

use net::wire::ipv6::{field, HEADER_LEN, NH_ICMPV6, NH_TCP, NH_UDP};
use net::wire::ipv6_ext;

/// Terms a filter may have.
pub const MAX_TERMS: usize = 8;
/// Labels of a stack the filter looks at.
pub const MAX_LABELS: usize = 8;

/// One primitive test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Test {
    Dst {
        addr: u32,
        len: u8,
    },
    Src {
        addr: u32,
        len: u8,
    },
    /// Source or destination.
    Host {
        addr: u32,
        len: u8,
    },
    Dst6 {
        addr: u128,
        len: u8,
    },
    Src6 {
        addr: u128,
        len: u8,
    },
    /// Source or destination, IPv6.
    Host6 {
        addr: u128,
        len: u8,
    },
    Label(u32),
    /// IPv4 protocol; IPv6 next header or upper-layer protocol.
    Proto(u8),
    /// Source or destination port (TCP, UDP).
    Port(u16),
    Sport(u16),
    Dport(u16),
    Mpls,
    Ipv4,
    Ipv6,
    Arp,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Term {
    pub test: Test,
    pub negate: bool,
}

/// A conjunction of terms; the empty filter matches everything.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Filter {
    terms: [Option<Term>; MAX_TERMS],
}

fn mask(len: u8) -> u32 {
    if len == 0 {
        0
    } else {
        u32::MAX << (32 - len.min(32))
    }
}

fn mask6(len: u8) -> u128 {
    if len == 0 {
        0
    } else {
        u128::MAX << (128 - len.min(128))
    }
}

/// An address or prefix of either family.
enum Net {
    V4(u32, u8),
    V6(u128, u8),
}

fn parse_net(s: Option<&str>) -> Result<Net, String> {
    let s = s.ok_or("an address (A.B.C.D[/N] or an IPv6 address[/N]) is missing")?;
    let bad = || format!("`{s}` is not an IPv4 or IPv6 address or prefix");
    let (a, len) = match s.split_once('/') {
        Some((a, l)) => (a, Some(l.parse::<u8>().map_err(|_| bad())?)),
        None => (s, None),
    };
    if let Ok(a) = a.parse::<Ipv4Addr>() {
        let len = len.unwrap_or(32);
        if len > 32 {
            return Err(format!("`{s}` is not an IPv4 prefix (at most /32)"));
        }
        return Ok(Net::V4(u32::from(a) & mask(len), len));
    }
    let a: Ipv6Addr = a.parse().map_err(|_| bad())?;
    let len = len.unwrap_or(128);
    if len > 128 {
        return Err(format!("`{s}` is not an IPv6 prefix (at most /128)"));
    }
    Ok(Net::V6(u128::from(a) & mask6(len), len))
}

/// The address test `word` (`dst`, `src`, `host`/`net`) of `s`.
fn addr_test(word: &str, s: Option<&str>) -> Result<Test, String> {
    Ok(match (word, parse_net(s)?) {
        ("dst", Net::V4(addr, len)) => Test::Dst { addr, len },
        ("src", Net::V4(addr, len)) => Test::Src { addr, len },
        (_, Net::V4(addr, len)) => Test::Host { addr, len },
        ("dst", Net::V6(addr, len)) => Test::Dst6 { addr, len },
        ("src", Net::V6(addr, len)) => Test::Src6 { addr, len },
        (_, Net::V6(addr, len)) => Test::Host6 { addr, len },
    })
}

fn parse_num<T: std::str::FromStr>(s: Option<&str>, what: &str) -> Result<T, String> {
    let s = s.ok_or_else(|| format!("{what} is missing"))?;
    s.parse()
        .map_err(|_| format!("`{s}` is not a valid {what}"))
}

fn proto(s: Option<&str>) -> Result<u8, String> {
    match s {
        Some("icmp") => Ok(1),
        Some("tcp") => Ok(NH_TCP),
        Some("udp") => Ok(NH_UDP),
        Some("icmp6" | "icmpv6") => Ok(NH_ICMPV6),
        _ => parse_num(s, "protocol (udp, tcp, icmp, icmp6 or 0..=255)"),
    }
}

/// One primitive from the words `w`.
fn primitive<'a>(w: &mut impl Iterator<Item = &'a str>) -> Result<Test, String> {
    let word = w
        .next()
        .ok_or("a test is missing (after `and` or `not`?)")?;
    Ok(match word {
        "dst" | "src" | "host" | "net" => addr_test(word, w.next())?,
        "label" => {
            let l: u32 = parse_num(w.next(), "label")?;
            if l >= 1 << 20 {
                return Err(format!("label {l} is over 1048575"));
            }
            Test::Label(l)
        }
        "proto" => Test::Proto(proto(w.next())?),
        "udp" | "tcp" | "icmp" | "icmp6" | "icmpv6" => Test::Proto(proto(Some(word))?),
        "port" => Test::Port(parse_num(w.next(), "port")?),
        "sport" => Test::Sport(parse_num(w.next(), "port")?),
        "dport" => Test::Dport(parse_num(w.next(), "port")?),
        "mpls" => Test::Mpls,
        "ip" | "ipv4" => Test::Ipv4,
        "ip6" | "ipv6" => Test::Ipv6,
        "arp" => Test::Arp,
        other => return Err(format!("unknown filter word `{other}`")),
    })
}

impl Filter {
    /// Parses `expr` (module docs); errors name the offending word.
    pub fn parse(expr: &str) -> Result<Filter, String> {
        let mut f = Filter::default();
        let mut w = expr.split_whitespace().peekable();
        let mut n = 0;
        while w.peek().is_some() {
            if n > 0 && w.next() != Some("and") {
                return Err("terms are joined by `and`".into());
            }
            if n == MAX_TERMS {
                return Err(format!("at most {MAX_TERMS} terms"));
            }
            let negate = w.next_if_eq(&"not").is_some();
            f.terms[n] = Some(Term {
                test: primitive(&mut w)?,
                negate,
            });
            n += 1;
        }
        Ok(f)
    }

    pub fn terms(&self) -> impl Iterator<Item = Term> + '_ {
        self.terms.iter().map_while(|t| *t)
    }

    pub fn is_empty(&self) -> bool {
        self.terms[0].is_none()
    }

    /// Whether `frame` (from its Ethernet header) passes every term.
    #[inline]
    pub fn matches(&self, frame: &[u8]) -> bool {
        if self.is_empty() {
            return true;
        }
        let f = Fields::of(frame);
        self.terms().all(|t| f.test(t.test) != t.negate)
    }
}

/// What the tests read of an IPv6 header.
#[derive(Clone, Copy)]
struct Ip6 {
    src: u128,
    dst: u128,
    /// The fixed header's next header.
    next: u8,
    /// The upper-layer protocol past the extension headers (`next` if the walk failed).
    upper: u8,
}

/// What the tests read of a frame.
#[derive(Default)]
struct Fields {
    ethertype: u16,
    labels: [u32; MAX_LABELS],
    n_labels: usize,
    /// (src, dst, proto) of an IPv4 header.
    ip: Option<(u32, u32, u8)>,
    ip6: Option<Ip6>,
    ports: Option<(u16, u16)>,
}

fn be16(f: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*f.get(at)?, *f.get(at + 1)?]))
}

fn be32(f: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(f.get(at..at + 4)?.try_into().ok()?))
}

fn be128(f: &[u8]) -> u128 {
    let mut b = [0u8; 16];
    b.copy_from_slice(f);
    u128::from_be_bytes(b)
}

impl Fields {
    fn of(f: &[u8]) -> Fields {
        let mut x = Fields::default();
        let Some(mut et) = be16(f, 12) else {
            return x;
        };
        let mut at = 14;
        if et == 0x8100 {
            et = be16(f, 16).unwrap_or(0);
            at = 18;
        }
        x.ethertype = et;
        let version = match et {
            0x8847 => {
                at = x.labels(f, at);
                f.get(at).map_or(0, |v| v >> 4)
            }
            0x0800 => 4,
            0x86dd => 6,
            _ => 0,
        };
        match version {
            4 => x.ipv4(f, at),
            6 => x.ipv6(f, at),
            _ => {}
        }
        x
    }

    /// Reads the label stack from `at`; returns where its payload starts.
    fn labels(&mut self, f: &[u8], mut at: usize) -> usize {
        while let Some(w) = be32(f, at) {
            at += 4;
            if self.n_labels < MAX_LABELS {
                self.labels[self.n_labels] = w >> 12;
                self.n_labels += 1;
            }
            if w & 0x100 != 0 || self.n_labels == MAX_LABELS {
                break;
            }
        }
        at
    }

    fn ipv4(&mut self, f: &[u8], at: usize) {
        let (Some(&vihl), Some(src), Some(dst), Some(&proto)) =
            (f.get(at), be32(f, at + 12), be32(f, at + 16), f.get(at + 9))
        else {
            return;
        };
        if vihl >> 4 != 4 {
            return;
        }
        self.ip = Some((src, dst, proto));
        let first_fragment = be16(f, at + 6).is_some_and(|o| o & 0x1fff == 0);
        let l4 = at + usize::from(vihl & 0xf) * 4;
        if matches!(proto, NH_TCP | NH_UDP) && first_fragment {
            self.ports = be16(f, l4).zip(be16(f, l4 + 2));
        }
    }

    /// The fixed header at `at`, then the extension headers (bounded walk, within the
    /// payload length the header announces) for the upper layer and its ports.
    fn ipv6(&mut self, f: &[u8], at: usize) {
        let Some(h) = f.get(at..at + HEADER_LEN).filter(|h| h[0] >> 4 == 6) else {
            return;
        };
        let next = h[field::NEXT_HEADER];
        let rest = &f[at + HEADER_LEN..];
        let plen = usize::from(u16::from_be_bytes([
            h[field::PAYLOAD_LEN],
            h[field::PAYLOAD_LEN + 1],
        ]));
        let payload = &rest[..plen.min(rest.len())];
        let upper = ipv6_ext::walk(next, payload).ok();
        self.ip6 = Some(Ip6 {
            src: be128(&h[field::SRC]),
            dst: be128(&h[field::DST]),
            next,
            upper: upper.map_or(next, |u| u.protocol),
        });
        if let Some(u) = upper.filter(|u| u.has_header() && matches!(u.protocol, NH_TCP | NH_UDP)) {
            self.ports = be16(payload, u.offset).zip(be16(payload, u.offset + 2));
        }
    }

    fn test(&self, t: Test) -> bool {
        let within = |a: u32, net: u32, len: u8| a & mask(len) == net;
        let within6 = |a: u128, net: u128, len: u8| a & mask6(len) == net;
        let v6 = |f: &dyn Fn(&Ip6) -> bool| self.ip6.as_ref().is_some_and(f);
        match t {
            Test::Dst { addr, len } => self.ip.is_some_and(|(_, d, _)| within(d, addr, len)),
            Test::Src { addr, len } => self.ip.is_some_and(|(s, _, _)| within(s, addr, len)),
            Test::Host { addr, len } => self
                .ip
                .is_some_and(|(s, d, _)| within(s, addr, len) || within(d, addr, len)),
            Test::Dst6 { addr, len } => v6(&|x| within6(x.dst, addr, len)),
            Test::Src6 { addr, len } => v6(&|x| within6(x.src, addr, len)),
            Test::Host6 { addr, len } => {
                v6(&|x| within6(x.src, addr, len) || within6(x.dst, addr, len))
            }
            Test::Label(l) => self.labels[..self.n_labels].contains(&l),
            Test::Proto(p) => {
                self.ip.is_some_and(|(_, _, x)| x == p) || v6(&|x| x.next == p || x.upper == p)
            }
            Test::Port(p) => self.ports.is_some_and(|(s, d)| s == p || d == p),
            Test::Sport(p) => self.ports.is_some_and(|(s, _)| s == p),
            Test::Dport(p) => self.ports.is_some_and(|(_, d)| d == p),
            Test::Mpls => self.ethertype == 0x8847,
            Test::Ipv4 => self.ip.is_some(),
            Test::Ipv6 => self.ip6.is_some(),
            Test::Arp => self.ethertype == 0x0806,
        }
    }
}

/// A term as three `u64` (first word 0: no term). First word: kind in bits 56..60,
/// negation bit 60, prefix length in bits 32..40, value in bits 0..32; then an IPv6
/// address's high and low halves.
fn encode(t: Option<Term>) -> [u64; 3] {
    let Some(t) = t else { return [0; 3] };
    let (kind, len, v, a6): (u64, u8, u32, u128) = match t.test {
        Test::Dst { addr, len } => (1, len, addr, 0),
        Test::Src { addr, len } => (2, len, addr, 0),
        Test::Host { addr, len } => (3, len, addr, 0),
        Test::Label(l) => (4, 0, l, 0),
        Test::Proto(p) => (5, 0, p.into(), 0),
        Test::Port(p) => (6, 0, p.into(), 0),
        Test::Sport(p) => (7, 0, p.into(), 0),
        Test::Dport(p) => (8, 0, p.into(), 0),
        Test::Mpls => (9, 0, 0, 0),
        Test::Ipv4 => (10, 0, 0, 0),
        Test::Arp => (11, 0, 0, 0),
        Test::Dst6 { addr, len } => (12, len, 0, addr),
        Test::Src6 { addr, len } => (13, len, 0, addr),
        Test::Host6 { addr, len } => (14, len, 0, addr),
        Test::Ipv6 => (15, 0, 0, 0),
    };
    let w = kind << 56 | u64::from(t.negate) << 60 | u64::from(len) << 32 | u64::from(v);
    [w, (a6 >> 64) as u64, a6 as u64]
}

fn decode([w, hi, lo]: [u64; 3]) -> Option<Term> {
    let (len, v) = ((w >> 32) as u8, w as u32);
    let a6 = u128::from(hi) << 64 | u128::from(lo);
    let test = match (w >> 56) & 0xf {
        1 => Test::Dst { addr: v, len },
        2 => Test::Src { addr: v, len },
        3 => Test::Host { addr: v, len },
        4 => Test::Label(v),
        5 => Test::Proto(v as u8),
        6 => Test::Port(v as u16),
        7 => Test::Sport(v as u16),
        8 => Test::Dport(v as u16),
        9 => Test::Mpls,
        10 => Test::Ipv4,
        11 => Test::Arp,
        12 => Test::Dst6 { addr: a6, len },
        13 => Test::Src6 { addr: a6, len },
        14 => Test::Host6 { addr: a6, len },
        15 => Test::Ipv6,
        _ => return None,
    };
    Some(Term {
        test,
        negate: w >> 60 & 1 == 1,
    })
}

/// The filter as the workers read it: written by the control side before it arms a
/// trace (the arming store releases it), read once per armed burst.
#[derive(Debug, Default)]
pub struct FilterCell([[AtomicU64; 3]; MAX_TERMS]);

impl FilterCell {
    pub fn store(&self, f: &Filter) {
        for (c, t) in self.0.iter().zip(f.terms) {
            for (c, w) in c.iter().zip(encode(t)) {
                c.store(w, Ordering::Relaxed);
            }
        }
    }

    pub fn load(&self) -> Filter {
        let mut f = Filter::default();
        for (t, c) in f.terms.iter_mut().zip(&self.0) {
            *t = decode(c.each_ref().map(|w| w.load(Ordering::Relaxed)));
        }
        f
    }
}

#[cfg(test)]
#[path = "filter_tests.rs"]
mod tests;
