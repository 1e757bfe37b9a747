//! Rcu under load: reader threads verify every snapshot they load (checksum, monotonic
//! sequence) while the publisher replaces it thousands of times; every snapshot must be
//! dropped exactly once, and none while a reader could still hold it (a freed snapshot is
//! poisoned, so a use after free fails the checksum).

#![cfg(not(loom))]

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

use net::rcu::Rcu;

const PUBLISHES: u64 = 5000;
const READERS: usize = 4;

struct Snap {
    seq: u64,
    payload: [u64; 16],
    sum: u64,
    drops: Arc<Vec<AtomicU32>>,
}

fn checksum(p: &[u64; 16]) -> u64 {
    p.iter().fold(0xcbf2_9ce4_8422_2325, |h, &x| {
        (h ^ x).wrapping_mul(0x100_0000_01b3)
    })
}

impl Snap {
    fn new(seq: u64, drops: &Arc<Vec<AtomicU32>>) -> Snap {
        let payload = std::array::from_fn(|i| seq.wrapping_mul(0x9e37_79b9) ^ i as u64);
        Snap {
            seq,
            sum: checksum(&payload),
            payload,
            drops: drops.clone(),
        }
    }
    fn verify(&self) {
        assert_eq!(
            checksum(&self.payload),
            self.sum,
            "snapshot {} corrupt",
            self.seq
        );
        assert_eq!(self.payload[1], self.seq.wrapping_mul(0x9e37_79b9) ^ 1);
    }
}

impl Drop for Snap {
    fn drop(&mut self) {
        self.drops[self.seq as usize].fetch_add(1, Ordering::Relaxed);
        for x in self.payload.iter_mut() {
            // SAFETY: `x` is a valid, exclusive reference; volatile keeps the poison
            // write from being optimised away as a dead store before deallocation.
            unsafe { std::ptr::write_volatile(x, 0xdead_beef) };
        }
    }
}

#[test]
fn readers_never_see_freed_snapshots_and_every_snapshot_drops_once() {
    let drops: Arc<Vec<AtomicU32>> = Arc::new((0..=PUBLISHES).map(|_| AtomicU32::new(0)).collect());
    let rcu = Arc::new(Rcu::new(Snap::new(0, &drops), READERS));
    let stop = Arc::new(AtomicBool::new(false));
    let loads = Arc::new(AtomicU64::new(0));
    let readers: Vec<_> = (0..READERS)
        .map(|id| {
            let mut r = rcu.register().unwrap();
            let stop = stop.clone();
            let loads = loads.clone();
            std::thread::spawn(move || {
                let mut last = 0;
                let mut n = 0u64;
                // Odd readers go offline every 500 bursts; even ones never do.
                let mut idle_in: u64 = if id % 2 == 1 { 500 } else { u64::MAX };
                while !stop.load(Ordering::Relaxed) {
                    // One "burst": load once, use it a few times.
                    let s = r.load();
                    assert!(
                        s.seq >= last,
                        "reader {id} went back from {last} to {}",
                        s.seq
                    );
                    last = s.seq;
                    for _ in 0..4 {
                        s.verify();
                    }
                    r.quiescent();
                    n += 1;
                    // Some readers go idle now and then.
                    idle_in -= 1;
                    if idle_in == 0 {
                        idle_in = 500;
                        let off = r.offline();
                        std::thread::yield_now();
                        r = off.online();
                    }
                }
                loads.fetch_add(n, Ordering::Relaxed);
            })
        })
        .collect();
    for seq in 1..=PUBLISHES {
        rcu.publish(Snap::new(seq, &drops));
        rcu.reclaim();
        if seq % 1000 == 0 {
            rcu.synchronize();
            assert_eq!(rcu.pending(), 0);
        }
    }
    stop.store(true, Ordering::Relaxed);
    for r in readers {
        r.join().unwrap();
    }
    rcu.synchronize();
    assert_eq!(rcu.pending(), 0);
    // Everything but the current snapshot is freed exactly once...
    for (seq, d) in drops.iter().enumerate().take(PUBLISHES as usize) {
        assert_eq!(d.load(Ordering::Relaxed), 1, "snapshot {seq}");
    }
    assert_eq!(drops[PUBLISHES as usize].load(Ordering::Relaxed), 0);
    // ... and the current one with the Rcu.
    drop(rcu);
    assert_eq!(drops[PUBLISHES as usize].load(Ordering::Relaxed), 1);
    assert!(loads.load(Ordering::Relaxed) > 0);
}
