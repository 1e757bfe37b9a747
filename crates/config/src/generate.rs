//! Full-view routes files for scale tests and benchmarks.
//!
//! Output uses `routes_compact`, one route per line, so a one-line edit of the file is a
//! one-route change (the reload benchmark relies on that).

use std::fmt::Write as _;
use std::net::Ipv4Addr;

/// Builds a routes file from a prefix list (one CIDR per line, `#` comments and blank
/// lines skipped; lines that are not valid network prefixes are skipped too, so real
/// dumps with host bits or IPv6 entries still produce a loadable file). Prefixes are
/// spread over `nexthops` by a hash of the prefix, stable across runs. Duplicates are
/// dropped. Returns the file text and the number of routes written.
pub fn fullview_routes(prefix_list_text: &str, nexthops: &[Ipv4Addr]) -> (String, usize) {
    assert!(!nexthops.is_empty(), "need at least one next hop");
    let mut out = String::with_capacity(prefix_list_text.len() * 2);
    out.push_str(
        "# Generated full-view routes file (mplsrouter config::generate::fullview_routes).\n",
    );
    out.push_str("routes_compact:\n");
    let mut seen = crate::types::FastSet::default();
    let mut n = 0;
    for line in prefix_list_text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Ok(c) = line.parse::<crate::types::Cidr>() else {
            continue;
        };
        if c.has_host_bits() || !seen.insert(c) {
            continue;
        }
        let h = (c.addr ^ (c.len as u32).rotate_left(24)).wrapping_mul(0x9E37_79B1);
        let nh = nexthops[(h >> 16) as usize % nexthops.len()];
        let _ = writeln!(out, "  - {c} via {nh}");
        n += 1;
    }
    (out, n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routes::{parse_routes, RouteContext, TargetSpec};

    #[test]
    fn generated_file_parses_to_the_same_prefixes() {
        let list = "# dump\n10.0.0.0/8\n1.0.0.0/24\n1.0.0.0/24\n1.0.0.1/24\n::/0\n\n192.0.2.0/24\n";
        let nhs = [Ipv4Addr::new(10, 0, 1, 2), Ipv4Addr::new(10, 0, 1, 3)];
        let (text, n) = fullview_routes(list, &nhs);
        assert_eq!(n, 3);
        let set = parse_routes(
            std::path::Path::new("gen.yaml"),
            &text,
            &RouteContext::standalone(),
        )
        .unwrap();
        let got: Vec<String> = set.ipv4.iter().map(|(c, _)| c.to_string()).collect();
        assert_eq!(got, ["10.0.0.0/8", "1.0.0.0/24", "192.0.2.0/24"]);
        for (_, id) in &set.ipv4 {
            let TargetSpec::NextHops(v) = &set.specs[*id as usize].target else {
                panic!("not a next hop")
            };
            assert!(nhs.iter().any(|a| u32::from(*a) == v[0].via));
        }
    }
}
