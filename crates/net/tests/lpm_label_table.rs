//! LabelTable against a HashMap reference.
#![forbid(unsafe_code)]

use std::collections::HashMap;

use net::fib::LabelTable;
use proptest::prelude::*;

#[test]
fn bind_lookup_unbind_edges() {
    let mut t = LabelTable::new();
    assert!(t.is_empty());
    for (l, v) in [
        (0, 1),
        (15, 2),
        (16, 3),
        (1023, 4),
        (1024, 5),
        ((1 << 20) - 1, 6),
    ] {
        t.insert(l, v);
        assert_eq!(t.lookup(l), Some(v));
    }
    assert_eq!(t.len(), 6);
    assert_eq!(t.lookup(17), None);
    assert_eq!(t.lookup(1 << 20), None);
    assert_eq!(t.lookup(u32::MAX), None);
    t.insert(16, 30);
    assert_eq!((t.len(), t.lookup(16)), (6, Some(30)));
    assert_eq!(t.remove(16), Some(30));
    assert_eq!(t.remove(16), None);
    assert_eq!(t.lookup(16), None);
    assert_eq!(t.lookup(15), Some(2));
}

#[test]
fn memory_follows_pages_in_use() {
    let mut t = LabelTable::new();
    let empty = t.memory_bytes();
    for l in 100_352..100_852 {
        t.insert(l, l);
    }
    let one_page = t.memory_bytes();
    assert!(one_page - empty <= 8 * 1024, "{empty} -> {one_page}");
    for l in 100_352..100_852 {
        assert_eq!(t.remove(l), Some(l));
    }
    assert!(t.is_empty());
    // The freed page is gone from the lookups; the table is reusable.
    t.insert(5000, 1);
    assert_eq!(t.lookup(100_001), None);
    assert_eq!(t.lookup(5000), Some(1));
}

#[test]
#[should_panic(expected = "over 20 bits")]
fn labels_over_20_bits_are_refused() {
    LabelTable::new().insert(1 << 20, 1);
}

proptest! {
    #[test]
    fn matches_hashmap(ops in prop::collection::vec(
        (any::<bool>(), prop_oneof![0u32..4096, 0u32..(1 << 20)], 0u32..1000), 0..400)) {
        let mut t = LabelTable::new();
        let mut r = HashMap::new();
        for (ins, label, v) in ops {
            if ins {
                t.insert(label, v);
                r.insert(label, v);
            } else {
                prop_assert_eq!(t.remove(label), r.remove(&label));
            }
            prop_assert_eq!(t.lookup(label), r.get(&label).copied());
        }
        prop_assert_eq!(t.len(), r.len());
        for (l, v) in &r {
            prop_assert_eq!(t.lookup(*l), Some(*v));
        }
        // Clones are independent snapshots.
        let c = t.clone();
        for l in r.keys() { t.remove(*l); }
        prop_assert!(t.is_empty());
        prop_assert_eq!(c.len(), r.len());
    }
}
