//! Exhaustive interleavings of the QSBR protocol under loom's memory model. A snapshot's
//! drop writes its cell, so a reader still using a freed snapshot is a data race loom
//! reports. Run: `RUSTFLAGS="--cfg loom" cargo test -p net --test rcu_loom --release`.

#![cfg(loom)]

use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::thread;

use net::rcu::Rcu;

struct Snap(UnsafeCell<u64>);

// SAFETY: all access goes through loom's cell, which checks that no read overlaps the
// write in `drop`; that overlap (a use after free) is what these tests look for.
unsafe impl Sync for Snap {}

impl Snap {
    fn new(v: u64) -> Snap {
        Snap(UnsafeCell::new(v))
    }
    fn get(&self) -> u64 {
        // SAFETY: loom's cell hands out a valid pointer and checks the access.
        self.0.with(|p| unsafe { *p })
    }
}

impl Drop for Snap {
    fn drop(&mut self) {
        // SAFETY: as in `get`; loom checks that no read overlaps this write.
        self.0.with_mut(|p| unsafe { *p = u64::MAX });
    }
}

#[test]
fn reader_quiescent_vs_publish_and_reclaim() {
    loom::model(|| {
        let rcu = Arc::new(Rcu::new(Snap::new(1), 2));
        let mut r = Rcu::register(&rcu).unwrap();
        let t = thread::spawn(move || {
            for _ in 0..2 {
                let v = r.load().get();
                assert!(v == 1 || v == 2, "read freed snapshot: {v}");
                r.quiescent();
            }
        });
        rcu.publish(Snap::new(2));
        rcu.reclaim();
        t.join().unwrap();
        rcu.reclaim();
    });
}

#[test]
fn reader_coming_online_vs_publish_and_reclaim() {
    loom::model(|| {
        let rcu = Arc::new(Rcu::new(Snap::new(1), 2));
        let off = Rcu::register(&rcu).unwrap().offline();
        let t = thread::spawn(move || {
            let r = off.online();
            let v = r.load().get();
            assert!(v == 1 || v == 2, "read freed snapshot: {v}");
            let _ = r.offline();
        });
        rcu.publish(Snap::new(2));
        rcu.reclaim();
        t.join().unwrap();
    });
}
