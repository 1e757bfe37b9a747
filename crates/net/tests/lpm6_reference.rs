//! Lpm6 against naive references (longest match by scan; by hash per length on the full
//! view): edge cases, property tests, incremental changes, and the real full view.
#![forbid(unsafe_code)]

mod lpm_common;

use std::collections::HashMap;

use net::fib::prefix_list6::{
    parse_prefix_list6, random_keys_in6, random_keys_per_prefix6, spread_values6,
};
use net::fib::{mask6, Lpm6, NO_ROUTE};
use proptest::prelude::*;

/// Longest match by scanning every prefix: slow, obviously right.
#[derive(Default, Clone, Debug)]
struct ScanRef6(Vec<(u128, u8, u32)>);

impl ScanRef6 {
    fn insert(&mut self, a: u128, l: u8, v: u32) {
        let a = a & mask6(l);
        self.0.retain(|p| (p.0, p.1) != (a, l));
        self.0.push((a, l, v));
    }
    fn remove(&mut self, a: u128, l: u8) -> Option<u32> {
        let a = a & mask6(l);
        let i = self.0.iter().position(|p| (p.0, p.1) == (a, l))?;
        Some(self.0.remove(i).2)
    }
    fn lookup(&self, k: u128) -> Option<u32> {
        self.0
            .iter()
            .filter(|p| k & mask6(p.1) == p.0)
            .max_by_key(|p| p.1)
            .map(|p| p.2)
    }
}

fn check(lpm: &Lpm6, keys: &[u128], want: impl Fn(u128) -> Option<u32>) {
    let mut out = vec![0; keys.len()];
    lpm.lookup_batch(keys, &mut out);
    let mut scalar = vec![0; keys.len()];
    lpm.lookup_batch_scalar(keys, &mut scalar);
    for ((k, o), s) in keys.iter().zip(&out).zip(&scalar) {
        let w = want(*k);
        assert_eq!(*s, w.unwrap_or(NO_ROUTE), "lookup_batch_scalar {k:#034x}");
        assert_eq!(lpm.lookup(*k), w, "lookup {k:#034x}");
        assert_eq!(*o, w.unwrap_or(NO_ROUTE), "lookup_batch {k:#034x}");
    }
}

/// Both ends of every prefix, their neighbours and the middle.
fn edge_keys(r: &ScanRef6) -> Vec<u128> {
    let mut keys = vec![0, u128::MAX, 1 << 127, (1 << 127) - 1];
    for &(a, l, _) in &r.0 {
        let last = a | !mask6(l);
        keys.extend([
            a,
            last,
            a.wrapping_sub(1),
            last.wrapping_add(1),
            a | (!mask6(l) >> 1),
        ]);
    }
    keys
}

fn p(s: &str) -> (u128, u8) {
    let (a, l) = s.split_once('/').unwrap();
    (
        a.parse::<std::net::Ipv6Addr>().unwrap().into(),
        l.parse().unwrap(),
    )
}

#[test]
fn empty_table_misses() {
    let lpm = Lpm6::new();
    assert!(lpm.is_empty());
    assert_eq!(lpm.lookup(1), None);
    let mut out = [0; 3];
    lpm.lookup_batch(&[1, 2, 3], &mut out);
    assert_eq!(out, [NO_ROUTE; 3]);
}

/// Routes nested at every level boundary, host routes among them (mini nodes and
/// Poptrie walks under 2001:db8::/32).
const NESTED: [(&str, u32); 16] = [
    ("::/0", 1),
    ("2000::/3", 2),
    ("2001:db8::/16", 3),
    ("2001:db8::/17", 4),
    ("2001:db8::/22", 5),
    ("2001:db8::/23", 6),
    ("2001:db8:1::/48", 7),
    ("2001:db8:1::/64", 8),
    ("2001:db8:1::1/128", 9),
    ("2001:db8:1::/127", 10),
    ("2001:db8:1::/124", 11),
    ("2001:db8:1::/125", 12),
    ("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128", 13),
    ("::/128", 14),
    ("fe80::/10", 15),
    ("2001:db8:ffff::/47", 16),
];

#[test]
fn nesting_at_every_level_boundary_and_host_routes() {
    let mut lpm = Lpm6::new();
    let mut r = ScanRef6::default();
    let routes = NESTED;
    for (s, v) in routes {
        let (a, l) = p(s);
        lpm.insert(a, l, v);
        r.insert(a, l, v);
        check(&lpm, &edge_keys(&r), |k| r.lookup(k));
    }
    let bulk = Lpm6::from_prefixes(r.0.iter().copied());
    check(&bulk, &edge_keys(&r), |k| r.lookup(k));
    for (s, _) in routes.iter().rev() {
        let (a, l) = p(s);
        assert_eq!(lpm.remove(a, l), r.remove(a, l));
        check(&lpm, &edge_keys(&r), |k| r.lookup(k));
    }
    assert!(lpm.is_empty());
    assert_eq!(lpm.remove(0, 0), None);
}

/// The batch takes its keys in fours, then the rest (a tail the unrolled passes do not
/// cover): every length from 1 to two bursts and more, from several starting keys, must
/// give what single lookups give, for keys that end in values, direct leaves and Poptrie
/// walks.
#[test]
fn batches_of_every_length_match_single_lookups() {
    let mut r = ScanRef6::default();
    for (s, v) in NESTED {
        let (a, l) = p(s);
        r.insert(a, l, v);
    }
    let lpm = Lpm6::from_prefixes(r.0.iter().copied());
    let mut keys = edge_keys(&r);
    while keys.len() < 200 {
        keys.extend_from_within(..);
    }
    for start in [0, 1, 3, 37] {
        for len in 1..=keys.len() - start {
            let batch = &keys[start..start + len];
            let mut out = vec![0; len];
            lpm.lookup_batch(batch, &mut out);
            // The AVX-512 passes where the CPU has them, and the scalar ones.
            let mut scalar = vec![0; len];
            lpm.lookup_batch_scalar(batch, &mut scalar);
            assert_eq!(out, scalar, "{start}+{len}");
            for (&k, &o) in batch.iter().zip(&out) {
                assert_eq!(
                    o,
                    lpm.lookup(k).unwrap_or(NO_ROUTE),
                    "{start}+{len}: {k:#034x}"
                );
                assert_eq!(lpm.lookup(k), r.lookup(k), "{k:#034x}");
            }
        }
    }
}

/// Prefixes around a few bases so that they nest, at every length.
fn prefix() -> impl Strategy<Value = (u128, u8, u32)> {
    let bases = [
        0x2001_0db8u128 << 96,
        0x2a00_1450_4001u128 << 80,
        0xfe80u128 << 112,
        0,
        u128::MAX,
    ];
    (
        0usize..bases.len(),
        any::<u128>(),
        0u8..=128,
        0u32..1000,
        0u32..129,
    )
        .prop_map(move |(b, noise, l, v, flip)| {
            // Keep the base's top bits, randomise from a random depth down.
            let keep = mask6(flip.min(128) as u8);
            ((bases[b] & keep) | (noise & !keep), l, v)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn matches_the_scan_reference(
        routes in proptest::collection::vec(prefix(), 0..60),
        extra in proptest::collection::vec(any::<u128>(), 0..50),
    ) {
        let mut r = ScanRef6::default();
        for &(a, l, v) in &routes {
            r.insert(a, l, v);
        }
        let lpm = Lpm6::from_prefixes(routes.iter().copied());
        prop_assert_eq!(lpm.len(), r.0.len());
        let mut keys = edge_keys(&r);
        keys.extend(extra);
        check(&lpm, &keys, |k| r.lookup(k));
    }

    #[test]
    fn incremental_changes_match_the_reference(
        ops in proptest::collection::vec((prefix(), any::<bool>()), 1..80),
    ) {
        let mut r = ScanRef6::default();
        let mut lpm = Lpm6::new();
        for ((a, l, v), add) in ops {
            if add {
                lpm.insert(a, l, v);
                r.insert(a, l, v);
            } else {
                prop_assert_eq!(lpm.remove(a, l), r.remove(a, l));
            }
        }
        check(&lpm, &edge_keys(&r), |k| r.lookup(k));
        let mut got = lpm.to_vec();
        let mut want = r.0.clone();
        got.sort_unstable();
        want.sort_unstable();
        prop_assert_eq!(got, want);
    }
}

#[test]
fn many_changes_in_one_chunk_trigger_relayouts_and_stay_right() {
    let mut lpm = Lpm6::new();
    let mut r = ScanRef6::default();
    let base = 0x2001_0db8u128 << 96;
    for i in 0..3000u128 {
        let (a, l) = (base | (i << 80), 48);
        lpm.insert(a, l, i as u32);
        r.insert(a, l, i as u32);
        if i % 3 == 0 {
            lpm.remove(a, l);
            r.remove(a, l);
        }
    }
    let (nodes, _) = lpm.shape();
    let fresh = Lpm6::from_prefixes(r.0.iter().copied());
    assert!(
        nodes <= 2 * fresh.shape().0 + 4096,
        "garbage is bounded: {nodes}"
    );
    let keys: Vec<u128> = (0..3000u128).map(|i| base | (i << 80) | 5).collect();
    check(&lpm, &keys, |k| r.lookup(k));
}

fn full_view() -> Option<Vec<(u128, u8)>> {
    let path = lpm_common::data_file("ipv6-fullview-2023.txt.gz")?;
    Some(parse_prefix_list6(&std::fs::read(path).unwrap()).unwrap())
}

#[test]
fn full_view_matches_a_hash_reference() {
    let Some(prefixes) = full_view() else { return };
    assert_eq!(prefixes.len(), 160_147);
    let routes = spread_values6(&prefixes, 300);
    let lpm = Lpm6::from_prefixes(routes.iter().copied());
    let by_len: HashMap<(u128, u8), u32> = routes.iter().map(|&(a, l, v)| ((a, l), v)).collect();
    assert_eq!(lpm.len(), by_len.len());
    let reference = |k: u128| {
        (0..=128u8)
            .rev()
            .find_map(|l| by_len.get(&(k & mask6(l), l)).copied())
    };
    let mut keys = random_keys_in6(&prefixes, 20_000, 1);
    keys.extend(random_keys_per_prefix6(&prefixes, 20_000, 2));
    keys.extend(
        (0..20_000).map(|i| (i as u128).wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835)),
    );
    check(&lpm, &keys, reference);
}

/// Lengths at and around every level boundary of the lookup structure (the /18 top
/// entries, the dense level ending at /32, the Poptrie levels every 6 bits from there;
/// /16 and /24 from earlier layouts), and the extremes /0 and /128.
const BOUNDARY_LENGTHS: [u8; 26] = [
    0, 1, 15, 16, 17, 18, 19, 23, 24, 25, 31, 32, 33, 37, 38, 39, 43, 44, 45, 48, 50, 64, 122, 126,
    127, 128,
];

/// Prefixes at boundary lengths under one of two nearby bases, so that they nest and
/// share nodes at every level.
fn boundary_prefix() -> impl Strategy<Value = (u128, u8, u32)> {
    let bases = [0x2001_0db8_0001u128 << 80, 0x2001_0db8_0101u128 << 80];
    (
        0usize..bases.len(),
        0usize..BOUNDARY_LENGTHS.len(),
        any::<u128>(),
        0u32..129,
        0u32..100_000,
    )
        .prop_map(move |(b, li, noise, flip, v)| {
            let keep = mask6(flip.min(128) as u8);
            ((bases[b] & keep) | (noise & !keep), BOUNDARY_LENGTHS[li], v)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Single and batched lookups (bursts cut anywhere: the keys come in any number)
    /// agree with the scan after every insert and remove of prefixes at level boundaries,
    /// and a bulk build of the result agrees too.
    #[test]
    fn boundary_lengths_under_inserts_and_removes(
        ops in proptest::collection::vec((boundary_prefix(), 0u8..3), 1..60),
    ) {
        let mut r = ScanRef6::default();
        let mut lpm = Lpm6::new();
        for (i, ((a, l, v), op)) in ops.into_iter().enumerate() {
            if op == 0 {
                prop_assert_eq!(lpm.remove(a, l), r.remove(a, l));
            } else {
                lpm.insert(a, l, v);
                r.insert(a, l, v);
            }
            prop_assert_eq!(lpm.get(a, l), r.0.iter().find(|p| (p.0, p.1) == (a & mask6(l), l)).map(|p| p.2));
            if i % 8 == 0 {
                check(&lpm, &edge_keys(&r), |k| r.lookup(k));
            }
        }
        check(&lpm, &edge_keys(&r), |k| r.lookup(k));
        let bulk = Lpm6::from_prefixes(r.0.iter().copied());
        check(&bulk, &edge_keys(&r), |k| r.lookup(k));
    }
}

/// A /32 whose count of longer prefixes crosses the wide mini node's threshold (16) both
/// ways, one insert or remove at a time, with prefixes ending at and around bits 36 and 42
/// (the narrow and wide mini nodes' ends) and below.
#[test]
fn a_slash32_crossing_the_wide_threshold_stays_right() {
    let mut lpm = Lpm6::new();
    let mut r = ScanRef6::default();
    let base = 0x2001_0db8u128 << 96;
    let (a, l) = p("2001:db8::/32");
    lpm.insert(a, l, 1);
    r.insert(a, l, 1);
    let lens = [
        33u8, 36, 37, 41, 42, 43, 47, 48, 48, 49, 54, 64, 36, 42, 48, 128, 40, 44, 48,
    ];
    let mut added = Vec::new();
    for (i, &len) in lens.iter().enumerate() {
        // Spread over bits 32-48 so that some share a mini slot and some do not.
        let a = base | (((i as u128 * 0x1357) & 0xffff) << 80) | ((i as u128) << 60);
        lpm.insert(a, len, 10 + i as u32);
        r.insert(a, len, 10 + i as u32);
        added.push((a, len));
        check(&lpm, &edge_keys(&r), |k| r.lookup(k));
    }
    let bulk = Lpm6::from_prefixes(r.0.iter().copied());
    check(&bulk, &edge_keys(&r), |k| r.lookup(k));
    for (a, len) in added.into_iter().rev() {
        assert_eq!(lpm.remove(a, len), r.remove(a, len));
        check(&lpm, &edge_keys(&r), |k| r.lookup(k));
    }
}

/// A mini slot whose prefixes switch between ending within 6 bits below the mini node
/// (64 direct leaves) and going deeper (a Poptrie root), one insert or remove at a time,
/// under a narrow mini node (ends at bit 36) and a wide one (bit 42).
#[test]
fn a_mini_slot_switching_between_direct_leaves_and_a_root_stays_right() {
    let mut lpm = Lpm6::new();
    let mut r = ScanRef6::default();
    let op = |lpm: &mut Lpm6, r: &mut ScanRef6, a: u128, l: u8, v: Option<u32>| {
        match v {
            Some(v) => {
                lpm.insert(a, l, v);
                r.insert(a, l, v);
            }
            None => assert_eq!(lpm.remove(a, l), r.remove(a, l)),
        }
        check(lpm, &edge_keys(r), |k| r.lookup(k));
    };
    // Narrow: 2001:db8::/32 with a few prefixes in its slot 2001:db8:1000::/36.
    let narrow = 0x2001_0db8_1000u128 << 80;
    let deep = [(narrow | (1 << 84), 43u8), (narrow | (3 << 80), 48)];
    op(&mut lpm, &mut r, narrow, 32, Some(1));
    for (i, l) in [34u8, 36, 38, 40, 42].into_iter().enumerate() {
        op(
            &mut lpm,
            &mut r,
            narrow | ((i as u128) << 86),
            l,
            Some(10 + i as u32),
        );
    }
    for (i, &(a, l)) in deep.iter().enumerate() {
        op(&mut lpm, &mut r, a, l, Some(20 + i as u32));
    }
    for &(a, l) in deep.iter().rev() {
        op(&mut lpm, &mut r, a, l, None);
    }
    // Wide: 2001:db9::/32 with 20 prefixes ending by bit 48 in separate /42 slots.
    let wide = 0x2001_0db9u128 << 96;
    for i in 0..20u128 {
        let l = [44u8, 46, 48, 42, 43][i as usize % 5];
        op(
            &mut lpm,
            &mut r,
            wide | (i << 86) | (i << 80),
            l,
            Some(30 + i as u32),
        );
    }
    let deep = [
        (wide | (5 << 86) | (1 << 79), 49u8),
        (wide | (5 << 86) | 7, 128),
    ];
    for (i, &(a, l)) in deep.iter().enumerate() {
        op(&mut lpm, &mut r, a, l, Some(60 + i as u32));
    }
    let bulk = Lpm6::from_prefixes(r.0.iter().copied());
    check(&bulk, &edge_keys(&r), |k| r.lookup(k));
    for &(a, l) in deep.iter().rev() {
        op(&mut lpm, &mut r, a, l, None);
    }
}
