//! Lpm4 against a naive reference (longest match by scan): edge cases and property tests.
#![forbid(unsafe_code)]

mod lpm_common;

use lpm_common::{mask, ScanRef};
use net::fib::{Lpm4, NO_ROUTE};
use proptest::prelude::*;

fn check_keys(lpm: &Lpm4, r: &ScanRef, keys: &[u32]) {
    let mut out = vec![0; keys.len()];
    lpm.lookup_batch(keys, &mut out);
    for (k, o) in keys.iter().zip(&out) {
        let want = r.lookup(*k);
        assert_eq!(lpm.lookup(*k), want, "lookup {k:#010x}");
        assert_eq!(*o, want.unwrap_or(NO_ROUTE), "lookup_batch {k:#010x}");
    }
}

/// Keys at the edges of every prefix plus their neighbours.
fn edge_keys(r: &ScanRef) -> Vec<u32> {
    let mut keys = vec![0, u32::MAX, 0x8000_0000, 0x7fff_ffff];
    for &(a, l, _) in &r.prefixes {
        let last = a | !mask(l);
        keys.extend([
            a,
            last,
            a.wrapping_sub(1),
            last.wrapping_add(1),
            a | (!mask(l) >> 1),
        ]);
    }
    keys
}

/// Batches of every length from 1 to 200 keys, from four starting keys, against single
/// lookups and the reference, on tables of each leaf width: the batch works sixteen keys
/// a step on AVX-512 CPUs and four at a time elsewhere, so short and ragged batches
/// take paths full ones never do. The tables hold records with children (/25 and
/// longer), runs of leaves, value entries, and prefixes shorter than /8 (inherited).
#[test]
fn batches_of_every_length_match_single_lookups() {
    for (scale, width) in [(1, 1), (200, 2), (70_000, 4)] {
        let mut r = ScanRef::default();
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u32
        };
        r.insert(0x0800_0000, 6, 7 * scale);
        for i in 0..400 {
            let len = [16, 18, 19, 20, 22, 24, 24, 25, 26, 28, 32][i % 11];
            let addr = (next() & 0x0fff_ffff) | 0x0a00_0000;
            r.insert(addr & mask(len), len, (next() % 250) * scale + 1);
        }
        let lpm = Lpm4::from_prefixes(r.prefixes.iter().copied());
        assert_eq!(lpm.leaf_bytes(), width, "values up to {}", 250 * scale);
        let mut keys = edge_keys(&r);
        keys.truncate(200);
        for start in [0, 1, 3, 37] {
            for len in 1..=keys.len() - start {
                let batch = &keys[start..start + len];
                let mut out = vec![0; len];
                lpm.lookup_batch(batch, &mut out);
                for (&k, &o) in batch.iter().zip(&out) {
                    let want = r.lookup(k);
                    assert_eq!(o, want.unwrap_or(NO_ROUTE), "{start}+{len}: {k:#010x}");
                    assert_eq!(lpm.lookup(k), want, "{k:#010x}");
                }
            }
        }
    }
}

#[test]
fn empty_table_misses() {
    let lpm = Lpm4::new();
    assert!(lpm.is_empty());
    assert_eq!(lpm.lookup(0x0a00_0001), None);
    let mut out = [0; 3];
    lpm.lookup_batch(&[1, 2, 3], &mut out);
    assert_eq!(out, [NO_ROUTE; 3]);
}

#[test]
fn default_route_host_routes_and_nesting() {
    let mut lpm = Lpm4::new();
    let mut r = ScanRef::default();
    let routes = [
        (0, 0, 1),
        (0x0a00_0000, 8, 2),
        (0x0a01_0000, 16, 3),
        (0x0a01_0200, 24, 4),
        (0x0a01_0280, 25, 5),
        (0x0a01_0281, 32, 6),
        (0x0a01_0000, 20, 7),
        (0xffff_ffff, 32, 8),
        (0x0000_0000, 32, 9),
        (0x0a01_0203, 31, 10),
        (0xc000_0000, 2, 11),
        (0x0a40_0000, 10, 12),
        (0x0a01_4000, 18, 13),
        (0x0a01_4000, 19, 14),
    ];
    for (a, l, v) in routes {
        lpm.insert(a, l, v);
        r.insert(a, l, v);
        check_keys(&lpm, &r, &edge_keys(&r));
    }
    assert_eq!(lpm.len(), routes.len());
    assert_eq!(lpm.lookup(0x0a01_0281), Some(6));
    assert_eq!(lpm.lookup(0x0a01_0282), Some(5));
    assert_eq!(lpm.lookup(0x0b00_0000), Some(1));
    // Delete covering prefixes: the nested ones must stay, the rest falls back.
    for (a, l) in [
        (0x0a01_0000, 16),
        (0, 0),
        (0x0a00_0000, 8),
        (0x0a01_0200, 24),
    ] {
        assert_eq!(lpm.remove(a, l), r.remove(a, l));
        check_keys(&lpm, &r, &edge_keys(&r));
    }
    assert_eq!(lpm.lookup(0x0b00_0000), None);
    assert_eq!(lpm.lookup(0x0a01_0281), Some(6));
    assert_eq!(lpm.remove(0x0a01_0000, 16), None);
    // Re-insert and replace values.
    for (a, l, v) in [(0, 0, 20), (0x0a01_0000, 16, 21), (0x0a01_0281, 32, 22)] {
        lpm.insert(a, l, v);
        r.insert(a, l, v);
        check_keys(&lpm, &r, &edge_keys(&r));
    }
    assert_eq!(lpm.len(), r.prefixes.len());
}

#[test]
fn host_bits_are_ignored_and_get_is_exact() {
    let mut lpm = Lpm4::new();
    lpm.insert(0x0a01_02ff, 24, 7);
    assert_eq!(lpm.get(0x0a01_0200, 24), Some(7));
    assert_eq!(lpm.get(0x0a01_0200, 23), None);
    assert_eq!(lpm.remove(0x0a01_0233, 24), Some(7));
    assert!(lpm.is_empty());
}

#[test]
fn large_values_round_trip() {
    let mut lpm = Lpm4::new();
    lpm.insert(0x0a00_0000, 8, net::fib::MAX_VALUE);
    lpm.insert(0x0a00_0000, 24, 1 << 24);
    lpm.insert(0x0a00_0000, 30, 0);
    assert_eq!(lpm.lookup(0x0a01_0000), Some(net::fib::MAX_VALUE));
    assert_eq!(lpm.lookup(0x0a00_0004), Some(1 << 24));
    assert_eq!(lpm.lookup(0x0a00_0003), Some(0));
}

#[test]
#[should_panic(expected = "over the maximum")]
fn no_route_is_not_a_value() {
    Lpm4::new().insert(0, 0, NO_ROUTE);
}

#[test]
fn bulk_build_equals_inserts_and_last_duplicate_wins() {
    let list = [
        (0x0a00_0000, 8, 1),
        (0x0a00_0000, 24, 2),
        (0x0a00_0000, 8, 3),
        (0x0100_0000, 4, 4),
    ];
    let bulk = Lpm4::from_prefixes(list);
    let mut inc = Lpm4::new();
    for (a, l, v) in list {
        inc.insert(a, l, v);
    }
    assert_eq!(bulk.len(), 3);
    assert_eq!(bulk.to_vec(), inc.to_vec());
    assert_eq!(bulk.lookup(0x0a01_0000), Some(3));
}

#[test]
fn clone_is_independent() {
    let mut a = Lpm4::from_prefixes([(0x0a00_0000, 8, 1), (0x0a01_0000, 24, 2)]);
    let b = a.clone();
    a.insert(0x0a01_0000, 24, 9);
    a.remove(0x0a00_0000, 8);
    assert_eq!(b.lookup(0x0a01_0000), Some(2));
    assert_eq!(b.lookup(0x0a02_0000), Some(1));
    assert_eq!(a.lookup(0x0a01_0000), Some(9));
    assert_eq!(a.lookup(0x0a02_0000), None);
}

/// Many prefixes in one /18 chunk and in one block force the garbage compaction path.
#[test]
fn churn_in_one_chunk_stays_correct() {
    let mut lpm = Lpm4::new();
    let mut r = ScanRef::default();
    let mut x = 12345u32;
    for i in 0..3000u32 {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
        let len = 19 + (x >> 8) % 14;
        let addr = 0x0a01_0000 | ((x >> 3) & 0x7fff);
        if i % 3 == 2 {
            let (a, l, _) = r.prefixes[(x as usize >> 4) % r.prefixes.len()];
            assert_eq!(lpm.remove(a, l), r.remove(a, l));
        } else {
            lpm.insert(addr, len as u8, i % 7);
            r.insert(addr, len as u8, i % 7);
        }
    }
    assert_eq!(lpm.len(), r.prefixes.len());
    let keys: Vec<u32> = (0..0x8000u32).map(|k| 0x0a01_0000 | k).collect();
    check_keys(&lpm, &r, &keys);
}

fn arb_prefix() -> impl Strategy<Value = (u32, u8)> {
    // Few bases and mostly nested lengths so prefixes overlap a lot.
    (
        prop::sample::select(vec![
            0u32,
            0x0a00_0000,
            0x0a01_0200,
            0xc0a8_0000,
            0xffff_ff00,
        ]),
        any::<u32>(),
        0u8..=32,
    )
        .prop_map(|(base, noise, len)| {
            let a = if len <= 8 {
                noise
            } else {
                base ^ (noise >> len.min(31))
            };
            (a & mask(len), len)
        })
}

#[derive(Debug, Clone)]
enum Op {
    Insert(u32, u8, u32),
    Remove(usize),
}

/// Values past u16 too, so that tables switch to wide leaves part-way.
fn arb_op_wide() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (arb_prefix(), 0u32..50).prop_map(|((a, l), v)| Op::Insert(a, l, v)),
        1 => (arb_prefix(), 65_000u32..=net::fib::MAX_VALUE).prop_map(|((a, l), v)| Op::Insert(a, l, v)),
        1 => any::<usize>().prop_map(Op::Remove),
    ]
}

fn arb_op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (arb_prefix(), 0u32..50).prop_map(|((a, l), v)| Op::Insert(a, l, v)),
        1 => any::<usize>().prop_map(Op::Remove),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn matches_scan_reference(ops in prop::collection::vec(arb_op(), 1..80),
                              keys in prop::collection::vec(any::<u32>(), 0..64)) {
        run_ops(ops, keys)?;
    }

    #[test]
    fn matches_scan_reference_with_wide_values(ops in prop::collection::vec(arb_op_wide(), 1..80),
                                               keys in prop::collection::vec(any::<u32>(), 0..64)) {
        run_ops(ops, keys)?;
    }
}

fn run_ops(ops: Vec<Op>, keys: Vec<u32>) -> Result<(), TestCaseError> {
    {
        let mut lpm = Lpm4::new();
        let mut r = ScanRef::default();
        for op in ops {
            match op {
                Op::Insert(a, l, v) => {
                    lpm.insert(a, l, v);
                    r.insert(a, l, v);
                }
                Op::Remove(i) if !r.prefixes.is_empty() => {
                    let (a, l, _) = r.prefixes[i % r.prefixes.len()];
                    prop_assert_eq!(lpm.remove(a, l), r.remove(a, l));
                    // Removing twice finds nothing.
                    prop_assert_eq!(lpm.remove(a, l), None);
                }
                Op::Remove(_) => {}
            }
        }
        prop_assert_eq!(lpm.len(), r.prefixes.len());
        let mut all_keys = edge_keys(&r);
        all_keys.extend(keys);
        check_keys(&lpm, &r, &all_keys);
        let bulk = Lpm4::from_prefixes(r.prefixes.iter().copied());
        prop_assert_eq!(bulk.to_vec(), lpm.to_vec());
        for k in all_keys {
            prop_assert_eq!(bulk.lookup(k), r.lookup(k));
        }
    }
    Ok(())
}
