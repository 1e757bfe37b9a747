//! `show_routes` for both families: the request's prefix (or address) parsed into the
//! table it names, then the longest match or a page of the entries under it. Pure and
//! control side only; the IPv4 and IPv6 tables are read through the same paging rules
//! so that the two answers have one shape.

use std::net::{Ipv4Addr, Ipv6Addr};

use net::fib::{mask6, Fib};

use super::proto::{AddrFamily, RouteView, RoutesReply, Source};
use super::table::Names;

/// A parsed `prefix` or `after`: the address with host bits cleared, its length, and
/// whether it was written without `/N` (an address to match).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Key {
    V4(u32, u8, bool),
    V6(u128, u8, bool),
}

impl Key {
    fn family(self) -> AddrFamily {
        match self {
            Key::V4(..) => AddrFamily::Ipv4,
            Key::V6(..) => AddrFamily::Ipv6,
        }
    }
}

/// Parses `A.B.C.D[/N]` or `X:X::X[/N]`.
fn parse_key(s: &str) -> Result<Key, String> {
    let bad =
        || format!("`{s}` is neither an address nor a prefix (A.B.C.D, A.B.C.D/N, X::X or X::/N)");
    let (a, l) = match s.split_once('/') {
        Some((a, l)) => (a, Some(l.parse::<u8>().map_err(|_| bad())?)),
        None => (s, None),
    };
    if let Ok(a) = a.parse::<Ipv4Addr>() {
        let l = l.unwrap_or(32);
        if l > 32 {
            return Err(bad());
        }
        let mask = if l == 0 { 0 } else { u32::MAX << (32 - l) };
        return Ok(Key::V4(u32::from(a) & mask, l, s.find('/').is_none()));
    }
    let a: Ipv6Addr = a.parse().map_err(|_| bad())?;
    let l = l.unwrap_or(128);
    if l > 128 {
        return Err(bad());
    }
    Ok(Key::V6(u128::from(a) & mask6(l), l, s.find('/').is_none()))
}

/// What `show_routes` asked for.
pub struct RoutesQuery<'a> {
    pub prefix: Option<&'a str>,
    pub family: Option<AddrFamily>,
    pub source: Option<Source>,
    pub limit: usize,
    pub after: Option<String>,
}

/// Answers `show_routes` from `fib`.
pub fn routes(names: &Names, fib: &Fib, q: RoutesQuery) -> Result<RoutesReply, String> {
    let key = match (q.prefix, q.family) {
        (Some(p), f) => {
            let k = parse_key(p)?;
            if f.is_some_and(|f| f != k.family()) {
                return Err(format!("`{p}` is not a prefix of family {f:?}"));
            }
            k
        }
        (None, Some(AddrFamily::Ipv6)) => Key::V6(0, 0, false),
        (None, _) => Key::V4(0, 0, false),
    };
    let after = q.after.as_deref().map(parse_key).transpose()?;
    if after.is_some_and(|a| a.family() != key.family()) {
        return Err("`after` must be a prefix of the family listed".into());
    }
    let mut reply = RoutesReply {
        generation: fib.generation(),
        matched: None,
        routes: Vec::new(),
        next_after: None,
    };
    let keep = |s: Source| q.source.is_none_or(|x| x == s);
    let found = match key {
        Key::V4(a, _, true) => fib
            .ipv4_longest_match(a)
            .map(|(a, l, r)| names.route(fib, a, l, r)),
        Key::V6(a, _, true) => fib
            .ipv6_longest_match(a)
            .map(|(a, l, r)| names.route6(fib, a, l, r)),
        Key::V4(addr, len, false) => {
            let after = match after {
                Some(Key::V4(x, y, _)) => Some((x, y)),
                _ => None,
            };
            let it = fib
                .ipv4_routes_under(addr, len)
                .filter(|&(a, l, _)| after.is_none_or(|x| (a, l) > x))
                .map(|(a, l, r)| names.route(fib, a, l, r));
            page(&mut reply, it.filter(|v| keep(v.source)), q.limit);
            return Ok(reply);
        }
        Key::V6(addr, len, false) => {
            let after = match after {
                Some(Key::V6(x, y, _)) => Some((x, y)),
                _ => None,
            };
            let it = fib
                .ipv6_routes_under(addr, len)
                .into_iter()
                .filter(|&(a, l, _)| after.is_none_or(|x| (a, l) > x))
                .map(|(a, l, r)| names.route6(fib, a, l, r));
            page(&mut reply, it.filter(|v| keep(v.source)), q.limit);
            return Ok(reply);
        }
    };
    if let Some(v) = found {
        reply.matched = Some(v.prefix.clone());
        if keep(v.source) {
            reply.routes.push(v);
        }
    }
    Ok(reply)
}

/// Up to `limit` routes, and where the next page starts when more follow.
fn page(reply: &mut RoutesReply, mut it: impl Iterator<Item = RouteView>, limit: usize) {
    reply.routes.extend(it.by_ref().take(limit));
    if it.next().is_some() {
        reply.next_after = reply.routes.last().map(|r| r.prefix.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_of_both_families_clear_host_bits() {
        assert_eq!(parse_key("10.1.2.3"), Ok(Key::V4(0x0a01_0203, 32, true)));
        assert_eq!(parse_key("10.1.2.3/8"), Ok(Key::V4(0x0a00_0000, 8, false)));
        assert_eq!(
            parse_key("2001:db8::1/32"),
            Ok(Key::V6(0x2001_0db8 << 96, 32, false))
        );
        assert_eq!(parse_key("::"), Ok(Key::V6(0, 128, true)));
        for bad in ["10.0.0.0/33", "2001:db8::/129", "x", "10.0.0.0/", "::/a"] {
            assert!(parse_key(bad).is_err(), "{bad}");
        }
    }
}
