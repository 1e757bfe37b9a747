//! Lpm4 on the real tables in shared/data against per-length hash maps, including an
//! incremental churn on the full table. Skips (with a message) if the data is absent.
#![forbid(unsafe_code)]

mod lpm_common;

use lpm_common::{data_file, HashRef};
use net::fib::prefix_list::{parse_prefix_list, random_keys_in, spread_values, SplitMix64};
use net::fib::{Lpm4, NO_ROUTE};

fn load(name: &str) -> Option<Vec<(u32, u8, u32)>> {
    let path = data_file(name)?;
    let bytes = std::fs::read(&path).expect("read reference table");
    let prefixes = parse_prefix_list(&bytes).expect("parse reference table");
    Some(spread_values(&prefixes, 300))
}

fn compare(lpm: &Lpm4, r: &HashRef, keys: &[u32]) {
    let mut out = vec![0; keys.len()];
    lpm.lookup_batch(keys, &mut out);
    for (k, o) in keys.iter().zip(&out) {
        let want = r.lookup(*k);
        assert_eq!(
            *o,
            want.unwrap_or(NO_ROUTE),
            "batch {}",
            std::net::Ipv4Addr::from(*k)
        );
        assert_eq!(
            lpm.lookup(*k),
            want,
            "single {}",
            std::net::Ipv4Addr::from(*k)
        );
    }
}

fn check_table(name: &str, expect_len: usize) {
    let Some(routes) = load(name) else { return };
    assert_eq!(routes.len(), expect_len);
    let lpm = Lpm4::from_prefixes(routes.iter().copied());
    assert_eq!(lpm.len(), expect_len);
    let r = HashRef::new(&routes);
    let plain: Vec<(u32, u8)> = routes.iter().map(|&(a, l, _)| (a, l)).collect();
    compare(&lpm, &r, &random_keys_in(&plain, 300_000, 1));
    let mut rng = SplitMix64(2);
    let uniform: Vec<u32> = (0..100_000).map(|_| rng.next_u64() as u32).collect();
    compare(&lpm, &r, &uniform);
    println!(
        "{name}: {} prefixes, {} lookup bytes, {} control bytes, (blocks, nodes, leaves) {:?}",
        lpm.len(),
        lpm.memory_bytes(),
        lpm.control_bytes(),
        lpm.shape()
    );
}

#[test]
fn fullview_2023_matches_reference() {
    check_table("ipv4-fullview-2023.txt.gz", 901_899);
}

#[test]
fn rib_2014_matches_reference() {
    check_table("ipv4-rib-2014.txt.gz", 512_621);
}

/// Remove, change and re-insert prefixes one at a time on a clone of the full table; the
/// clone must track the reference and the original must not change.
#[test]
fn fullview_incremental_churn() {
    let Some(routes) = load("ipv4-fullview-2023.txt.gz") else {
        return;
    };
    let original = Lpm4::from_prefixes(routes.iter().copied());
    let mut lpm = original.clone();
    let mut current = routes.clone();
    let mut rng = SplitMix64(3);
    let mut touched = Vec::new();
    for step in 0..2000 {
        let i = (rng.next_u64() % current.len() as u64) as usize;
        let (a, l, v) = current[i];
        match step % 3 {
            0 => {
                assert_eq!(lpm.remove(a, l), Some(v));
                current.swap_remove(i);
            }
            1 => {
                lpm.insert(a, l, v + 1000);
                current[i].2 = v + 1000;
            }
            _ => {
                // A new, longer prefix inside an existing one.
                let nl = (l + 1 + (rng.next_u64() % 8) as u8).min(32);
                let na = a | (rng.next_u64() as u32 & !lpm_common::mask(l) & lpm_common::mask(nl));
                if lpm.get(na, nl).is_none() {
                    lpm.insert(na, nl, 2000);
                    current.push((na, nl, 2000));
                }
            }
        }
        touched.push(a);
    }
    assert_eq!(lpm.len(), current.len());
    let r = HashRef::new(&current);
    let mut keys: Vec<u32> = touched
        .iter()
        .flat_map(|&a| (0..64).map(move |k| a.wrapping_add(k * 97)))
        .collect();
    let plain: Vec<(u32, u8)> = current.iter().map(|&(a, l, _)| (a, l)).collect();
    keys.extend(random_keys_in(&plain, 100_000, 4));
    compare(&lpm, &r, &keys);
    compare(&original, &HashRef::new(&routes), &keys);
}
