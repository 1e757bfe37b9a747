//! The one-line route form used by `routes_compact` (and by the full-view generator):
//!
//! ```text
//! PREFIX blackhole | local | NEXTHOP [NEXTHOP ...]   [ttl uniform | ttl pipe [N]]
//! NEXTHOP := via IP [port NAME] [push L[,L...]] [weight W]
//! ```
//! e.g. `1.0.0.0/24 via 10.0.1.2`, `1.0.4.0/22 via 10.0.1.2 push 100,200 via 10.0.0.2
//! weight 3 ttl pipe 64`. Tokens are separated by spaces; every error points at the
//! offending token's byte offset so the caller can turn it into a column.
//! Parsing allocates only for label stacks and ECMP sets.

use crate::types::{AnyCidr, Cidr, IpAny};

/// A token and its byte offset in the line.
pub type Tok<'a> = (&'a str, usize);

/// A parsed next hop (positions are byte offsets).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompactNh<'a> {
    pub via: (IpAny, usize),
    pub port: Option<Tok<'a>>,
    /// Labels with their offsets, and the offset of the `push` keyword.
    pub push: Option<(Vec<(u32, usize)>, usize)>,
    pub weight: Option<(u32, usize)>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CompactTarget<'a> {
    Blackhole,
    Local,
    NextHops(Vec<CompactNh<'a>>),
}

/// `ttl uniform` / `ttl pipe [N]`, with the offset of `ttl`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CompactTtl {
    pub pipe: Option<Option<u8>>,
    pub at: usize,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompactRoute<'a> {
    pub prefix: Cidr,
    pub target: CompactTarget<'a>,
    pub ttl: Option<CompactTtl>,
}

/// A syntax error at byte `at` of the line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompactError {
    pub at: usize,
    pub message: String,
    pub hint: Option<String>,
}

fn err(at: usize, message: impl Into<String>, hint: &str) -> CompactError {
    CompactError {
        at,
        message: message.into(),
        hint: Some(hint.into()),
    }
}

const GRAMMAR: &str = "write `PREFIX via IP [port NAME] [push L,L] [weight W] ...`, `PREFIX blackhole` or `PREFIX local`, optionally ending with `ttl uniform` or `ttl pipe [N]`";

struct Toks<'a> {
    s: &'a str,
    pos: usize,
}

impl<'a> Iterator for Toks<'a> {
    type Item = Tok<'a>;
    fn next(&mut self) -> Option<Tok<'a>> {
        let b = self.s.as_bytes();
        while self.pos < b.len() && b[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
        if self.pos == b.len() {
            return None;
        }
        let start = self.pos;
        while self.pos < b.len() && !b[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
        Some((&self.s[start..self.pos], start))
    }
}

/// The target part of a line (everything after the prefix) starts at this byte.
pub fn split_prefix(line: &str) -> Option<(Tok<'_>, &str, usize)> {
    let mut t = Toks { s: line, pos: 0 };
    let p = t.next()?;
    Some((p, &line[t.pos..], t.pos))
}

/// Parses a prefix token of either family (an IPv6 prefix has a `:`).
pub fn parse_any_prefix(tok: Tok) -> Result<AnyCidr, CompactError> {
    if !tok.0.contains(':') {
        return parse_prefix(tok).map(AnyCidr::V4);
    }
    tok.0.parse().map(AnyCidr::V6).map_err(|m| {
        err(
            tok.1,
            m,
            "write the prefix as ADDRESS/LENGTH, e.g. 2001:db8::/32",
        )
    })
}

/// Parses an IPv4 prefix token (host bits allowed here; the validator reports them).
pub fn parse_prefix(tok: Tok) -> Result<Cidr, CompactError> {
    tok.0.parse::<Cidr>().map_err(|m| {
        err(
            tok.1,
            m,
            "write the prefix as ADDRESS/LENGTH, e.g. 192.0.2.0/24",
        )
    })
}

fn number(tok: Option<Tok>, after: usize, what: &str) -> Result<(u32, usize), CompactError> {
    match tok {
        Some((s, at)) => s
            .parse::<u32>()
            .map(|v| (v, at))
            .map_err(|_| err(at, format!("expected {what}, found `{s}`"), GRAMMAR)),
        None => Err(err(
            after,
            format!("expected {what} at the end of the line"),
            GRAMMAR,
        )),
    }
}

/// Parses the target part of a line; offsets are relative to `base` within the line.
pub fn parse_target(
    s: &str,
    base: usize,
) -> Result<(CompactTarget<'_>, Option<CompactTtl>), CompactError> {
    let mut t = Toks { s, pos: 0 }.map(|(x, o)| (x, o + base)).peekable();
    let end = base + s.len();
    let target = match t.next() {
        None => return Err(err(end, "missing target after the prefix", GRAMMAR)),
        Some(("blackhole", _)) => CompactTarget::Blackhole,
        Some(("local", _)) => CompactTarget::Local,
        Some(first @ ("via", _)) => {
            let mut nhs = Vec::with_capacity(1);
            let mut kw = Some(first);
            while let Some((_, at)) = kw.take() {
                let (ip_s, ip_at) = t
                    .next()
                    .ok_or_else(|| err(at, "`via` needs an IP address", GRAMMAR))?;
                let ip = IpAny::parse(ip_s).ok_or_else(|| {
                    if ip_s.contains(':') {
                        err(
                            ip_at,
                            format!("`{ip_s}` is not an IPv6 address"),
                            "write it as eight groups of hex digits, `::` for zeros, e.g. 2001:db8::1",
                        )
                    } else {
                        err(
                            ip_at,
                            format!("`{ip_s}` is not an IPv4 address"),
                            "write it as four numbers 0..=255, e.g. 10.0.1.2",
                        )
                    }
                })?;
                let mut nh = CompactNh {
                    via: (ip, ip_at),
                    port: None,
                    push: None,
                    weight: None,
                };
                while let Some(&(word, at)) = t.peek() {
                    match word {
                        "port" if nh.port.is_none() => {
                            t.next();
                            nh.port = Some(
                                t.next()
                                    .ok_or_else(|| err(at, "`port` needs a port name", GRAMMAR))?,
                            );
                        }
                        "push" if nh.push.is_none() => {
                            t.next();
                            let (ls, l_at) = t.next().ok_or_else(|| {
                                err(at, "`push` needs labels, e.g. push 100,200", GRAMMAR)
                            })?;
                            let mut labels = Vec::new();
                            let mut off = l_at;
                            for part in ls.split(',') {
                                let (v, _) = number(Some((part, off)), off, "a label number")?;
                                labels.push((v, off));
                                off += part.len() + 1;
                            }
                            nh.push = Some((labels, at));
                        }
                        "weight" if nh.weight.is_none() => {
                            t.next();
                            nh.weight = Some(number(t.next(), at, "a weight")?);
                        }
                        _ => break,
                    }
                }
                nhs.push(nh);
                if let Some(&("via", _)) = t.peek() {
                    kw = t.next();
                }
            }
            CompactTarget::NextHops(nhs)
        }
        Some((w, at)) => return Err(err(at, format!("unexpected `{w}`"), GRAMMAR)),
    };
    let ttl = match t.next() {
        None => None,
        Some(("ttl", at)) => match t.next() {
            Some(("uniform", _)) => Some(CompactTtl { pipe: None, at }),
            Some(("pipe", _)) => {
                let n = match t.next() {
                    None => None,
                    Some((s, n_at)) => {
                        Some(s.parse::<u8>().ok().filter(|&v| v > 0).ok_or_else(|| {
                            err(n_at, format!("pipe TTL `{s}` must be 1..=255"), GRAMMAR)
                        })?)
                    }
                };
                Some(CompactTtl { pipe: Some(n), at })
            }
            Some((w, w_at)) => {
                return Err(err(
                    w_at,
                    format!("unknown TTL mode `{w}`"),
                    "use `ttl uniform` or `ttl pipe [N]`",
                ))
            }
            None => {
                return Err(err(
                    at,
                    "`ttl` needs a mode",
                    "use `ttl uniform` or `ttl pipe [N]`",
                ))
            }
        },
        Some((w, at)) => return Err(err(at, format!("unexpected `{w}`"), GRAMMAR)),
    };
    if let Some((w, at)) = t.next() {
        return Err(err(
            at,
            format!("unexpected `{w}` after the TTL mode"),
            GRAMMAR,
        ));
    }
    Ok((target, ttl))
}

/// Parses a whole compact line.
pub fn parse_line(line: &str) -> Result<CompactRoute<'_>, CompactError> {
    let (ptok, rest, base) = split_prefix(line).ok_or_else(|| err(0, "empty route", GRAMMAR))?;
    let prefix = parse_prefix(ptok)?;
    let (target, ttl) = parse_target(rest, base)?;
    Ok(CompactRoute {
        prefix,
        target,
        ttl,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_grammar() {
        let line = "1.0.4.0/22 via 10.0.1.2 push 100,200 via 10.0.0.2 port in weight 3 ttl pipe 64";
        let r = parse_line(line).unwrap();
        assert_eq!(r.prefix.to_string(), "1.0.4.0/22");
        let CompactTarget::NextHops(n) = &r.target else {
            panic!("{r:?}")
        };
        assert_eq!(n.len(), 2);
        assert_eq!(n[0].via, (IpAny::V4(0x0a000102), 15));
        assert_eq!(n[0].push, Some((vec![(100, 29), (200, 33)], 24)));
        assert_eq!(&line[33..36], "200");
        assert_eq!(n[1].port, Some(("in", 55)));
        assert_eq!(n[1].weight, Some((3, 65)));
        assert_eq!(
            r.ttl,
            Some(CompactTtl {
                pipe: Some(Some(64)),
                at: 67
            })
        );
        let (t, _) = parse_target("via fe80::1 port out push 16", 0).unwrap();
        let CompactTarget::NextHops(n) = t else {
            panic!()
        };
        assert_eq!(n[0].via, (IpAny::V6(0xfe80 << 112 | 1), 4));
        assert_eq!(n[0].port, Some(("out", 17)));
        assert!(matches!(
            parse_any_prefix(("2001:db8::/32", 0)),
            Ok(AnyCidr::V6(_))
        ));
        assert_eq!(parse_any_prefix(("2001:db8::/129", 3)).unwrap_err().at, 3);
        assert_eq!(
            parse_line("0.0.0.0/0 blackhole").unwrap().target,
            CompactTarget::Blackhole
        );
        assert_eq!(
            parse_line("10.1.1.1/32   local ttl uniform").unwrap().ttl,
            Some(CompactTtl { pipe: None, at: 20 })
        );
    }

    #[test]
    fn errors_point_at_the_token() {
        let cases = [
            (
                "1.0.0.0/24 via 10.0.1",
                15,
                "`10.0.1` is not an IPv4 address",
            ),
            (
                "1.0.0.0/24 via 10.0.1.2 push 100,x",
                33,
                "expected a label number, found `x`",
            ),
            ("1.0.0.0/24 by 10.0.1.2", 11, "unexpected `by`"),
            ("1.0.0.0/24", 10, "missing target after the prefix"),
            (
                "1.0.0.0/33 local",
                0,
                "prefix length `33` must be a number from 0 to 32",
            ),
            (
                "1.0.0.0/24 via 2001:db8::1::2",
                15,
                "`2001:db8::1::2` is not an IPv6 address",
            ),
            (
                "1.0.0.0/24 local ttl pipe 0",
                26,
                "pipe TTL `0` must be 1..=255",
            ),
            (
                "1.0.0.0/24 via 10.0.1.2 weight",
                24,
                "expected a weight at the end of the line",
            ),
        ];
        for (line, at, msg) in cases {
            let e = parse_line(line).unwrap_err();
            assert_eq!((e.at, e.message.as_str()), (at, msg), "{line}");
        }
    }
}
