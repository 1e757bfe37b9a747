//! The trace and capture filter (`--filter EXPR`): parsed on the control side into a
//! fixed-size [`Filter`] of plain data, which the workers read through [`FilterCell`]
//! (one `u64` per term: no lock, no allocation) and test on the received bytes.
//!
//! Grammar: `TERM [and TERM]...`, `TERM := [not] PRIMITIVE`, at most [`MAX_TERMS`]:
//! `dst|src|host A.B.C.D[/N]`, `label L` (anywhere in the stack), `proto udp|tcp|icmp|N`
//! (or just `udp`, `tcp`, `icmp`), `port|sport|dport N`, `mpls`, `ip`, `arp`. A primitive
//! about a header the packet does not have is false (`not` of it true). The test reads
//! only the frame, at most one VLAN tag and [`MAX_LABELS`] labels: it never allocates.

use std::net::Ipv4Addr;
use std::sync::atomic::{AtomicU64, Ordering};

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
    Label(u32),
    Proto(u8),
    /// Source or destination port (TCP, UDP).
    Port(u16),
    Sport(u16),
    Dport(u16),
    Mpls,
    Ipv4,
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

fn parse_net(s: Option<&str>) -> Result<(u32, u8), String> {
    let s = s.ok_or("an address (A.B.C.D or A.B.C.D/N) is missing")?;
    let bad = || format!("`{s}` is not an IPv4 address or prefix");
    let (a, len) = match s.split_once('/') {
        Some((a, l)) => (
            a,
            l.parse::<u8>().ok().filter(|&l| l <= 32).ok_or_else(bad)?,
        ),
        None => (s, 32),
    };
    let a: Ipv4Addr = a.parse().map_err(|_| bad())?;
    Ok((u32::from(a) & mask(len), len))
}

fn parse_num<T: std::str::FromStr>(s: Option<&str>, what: &str) -> Result<T, String> {
    let s = s.ok_or_else(|| format!("{what} is missing"))?;
    s.parse()
        .map_err(|_| format!("`{s}` is not a valid {what}"))
}

fn proto(s: Option<&str>) -> Result<u8, String> {
    match s {
        Some("icmp") => Ok(1),
        Some("tcp") => Ok(6),
        Some("udp") => Ok(17),
        _ => parse_num(s, "protocol (udp, tcp, icmp or 0..=255)"),
    }
}

/// One primitive from the words `w`.
fn primitive<'a>(w: &mut impl Iterator<Item = &'a str>) -> Result<Test, String> {
    let word = w
        .next()
        .ok_or("a test is missing (after `and` or `not`?)")?;
    Ok(match word {
        "dst" => parse_net(w.next()).map(|(addr, len)| Test::Dst { addr, len })?,
        "src" => parse_net(w.next()).map(|(addr, len)| Test::Src { addr, len })?,
        "host" | "net" => parse_net(w.next()).map(|(addr, len)| Test::Host { addr, len })?,
        "label" => {
            let l: u32 = parse_num(w.next(), "label")?;
            if l >= 1 << 20 {
                return Err(format!("label {l} is over 1048575"));
            }
            Test::Label(l)
        }
        "proto" => Test::Proto(proto(w.next())?),
        "udp" | "tcp" | "icmp" => Test::Proto(proto(Some(word))?),
        "port" => Test::Port(parse_num(w.next(), "port")?),
        "sport" => Test::Sport(parse_num(w.next(), "port")?),
        "dport" => Test::Dport(parse_num(w.next(), "port")?),
        "mpls" => Test::Mpls,
        "ip" => Test::Ipv4,
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

/// What the tests read of a frame.
#[derive(Default)]
struct Fields {
    ethertype: u16,
    labels: [u32; MAX_LABELS],
    n_labels: usize,
    /// (src, dst, proto) of an IPv4 header.
    ip: Option<(u32, u32, u8)>,
    ports: Option<(u16, u16)>,
}

fn be16(f: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*f.get(at)?, *f.get(at + 1)?]))
}

fn be32(f: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(f.get(at..at + 4)?.try_into().ok()?))
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
        if et == 0x8847 {
            while let Some(w) = be32(f, at) {
                at += 4;
                if x.n_labels < MAX_LABELS {
                    x.labels[x.n_labels] = w >> 12;
                    x.n_labels += 1;
                }
                if w & 0x100 != 0 || x.n_labels == MAX_LABELS {
                    break;
                }
            }
            if f.get(at).is_none_or(|v| v >> 4 != 4) {
                return x;
            }
        } else if et != 0x0800 {
            return x;
        }
        x.ipv4(f, at);
        x
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
        if matches!(proto, 6 | 17) && first_fragment {
            self.ports = be16(f, l4).zip(be16(f, l4 + 2));
        }
    }

    fn test(&self, t: Test) -> bool {
        let within = |a: u32, net: u32, len: u8| a & mask(len) == net;
        match t {
            Test::Dst { addr, len } => self.ip.is_some_and(|(_, d, _)| within(d, addr, len)),
            Test::Src { addr, len } => self.ip.is_some_and(|(s, _, _)| within(s, addr, len)),
            Test::Host { addr, len } => self
                .ip
                .is_some_and(|(s, d, _)| within(s, addr, len) || within(d, addr, len)),
            Test::Label(l) => self.labels[..self.n_labels].contains(&l),
            Test::Proto(p) => self.ip.is_some_and(|(_, _, x)| x == p),
            Test::Port(p) => self.ports.is_some_and(|(s, d)| s == p || d == p),
            Test::Sport(p) => self.ports.is_some_and(|(s, _)| s == p),
            Test::Dport(p) => self.ports.is_some_and(|(_, d)| d == p),
            Test::Mpls => self.ethertype == 0x8847,
            Test::Ipv4 => self.ip.is_some(),
            Test::Arp => self.ethertype == 0x0806,
        }
    }
}

/// A term as one `u64` (0: no term): kind in bits 56..60, negation bit 60, prefix
/// length in bits 32..40, value in bits 0..32.
fn encode(t: Option<Term>) -> u64 {
    let Some(t) = t else { return 0 };
    let (kind, len, v): (u64, u8, u32) = match t.test {
        Test::Dst { addr, len } => (1, len, addr),
        Test::Src { addr, len } => (2, len, addr),
        Test::Host { addr, len } => (3, len, addr),
        Test::Label(l) => (4, 0, l),
        Test::Proto(p) => (5, 0, p.into()),
        Test::Port(p) => (6, 0, p.into()),
        Test::Sport(p) => (7, 0, p.into()),
        Test::Dport(p) => (8, 0, p.into()),
        Test::Mpls => (9, 0, 0),
        Test::Ipv4 => (10, 0, 0),
        Test::Arp => (11, 0, 0),
    };
    kind << 56 | u64::from(t.negate) << 60 | u64::from(len) << 32 | u64::from(v)
}

fn decode(w: u64) -> Option<Term> {
    let (len, v) = ((w >> 32) as u8, w as u32);
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
pub struct FilterCell([AtomicU64; MAX_TERMS]);

impl FilterCell {
    pub fn store(&self, f: &Filter) {
        for (c, t) in self.0.iter().zip(f.terms) {
            c.store(encode(t), Ordering::Relaxed);
        }
    }

    pub fn load(&self) -> Filter {
        let mut f = Filter::default();
        for (t, c) in f.terms.iter_mut().zip(&self.0) {
            *t = decode(c.load(Ordering::Relaxed));
        }
        f
    }
}

#[cfg(test)]
#[path = "filter_tests.rs"]
mod tests;
