//! Epoch-based (quiescent-state-based, QSBR) publication of read-mostly snapshots.
//!
//! Why: workers must read the forwarding table without locks or atomic read-modify-write,
//! while the control thread replaces it. The publisher swaps an atomic pointer and bumps a
//! global epoch; the old snapshot goes on a retire list tagged with the new epoch. Each
//! reader owns a cache-line-padded slot and, once per loop iteration, stores there the epoch
//! it has seen (a plain store, only when the epoch moved): a quiescent state, promising it
//! holds no reference obtained before. A retired snapshot is freed once every online slot
//! shows its epoch or later. Readers that go idle mark themselves offline (slot = 0) so
//! they never hold reclamation back.
//!
//! Reclamation is decoupled from publication: [`Rcu::publish`] never waits; the control
//! thread calls [`Rcu::reclaim`] (non-blocking; frees what is safe) after publishing and
//! periodically, or [`Rcu::synchronize`] (waits for the online readers) when it needs the
//! memory back now. A reader that stops reporting quiescent states while online holds
//! every later snapshot in memory: [`Rcu::pending`] is there to watch for that.
//!
//! Memory ordering, in short: a reader's uses of a snapshot are ordered before its
//! quiescent store (release) and the reclaimer reads slots with acquire. A reader that saw
//! epoch `e` (acquire, paired with the release bump after the pointer swap) can only load
//! the new pointer afterwards. Coming online is the one store-then-load race (the
//! reclaimer may read the slot as offline while the reader loads the old pointer); a
//! SeqCst fence on both sides closes it, and coming online is rare.
//!
//! Readers borrow snapshots through [`Reader::load`], tied to `&self`; the next
//! [`Reader::quiescent`] takes `&mut self`, so the borrow checker proves no reference
//! survives a quiescent state. Offline readers are a different type with no `load`.

#[cfg(loom)]
use loom::{
    sync::atomic::{fence, AtomicBool, AtomicPtr, AtomicU64, Ordering},
    sync::{Arc, Mutex},
    thread::yield_now,
};
#[cfg(not(loom))]
use std::{
    sync::atomic::{fence, AtomicBool, AtomicPtr, AtomicU64, Ordering},
    sync::{Arc, Mutex},
    thread::yield_now,
};

use std::marker::PhantomData;

/// Why a reader could not register.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RcuError {
    #[error("all {0} reader slots are in use; create the Rcu with more readers")]
    NoFreeSlot(usize),
}

/// One reader's slot, alone on its cache lines (128 bytes: adjacent-line prefetch).
#[repr(align(128))]
struct Slot {
    /// 0: offline; otherwise the last global epoch this reader has seen.
    seen: AtomicU64,
    in_use: AtomicBool,
}

#[repr(align(128))]
struct Padded<T>(T);

/// A published snapshot of `T` with QSBR reclamation. Share it as `Arc<Rcu<T>>`.
pub struct Rcu<T> {
    current: AtomicPtr<T>,
    epoch: Padded<AtomicU64>,
    slots: Box<[Slot]>,
    /// Old snapshots with the epoch from which they are unreachable, in epoch order. Held
    /// by publishers only; also serialises publishers and [`Rcu::with_current`].
    retired: Mutex<Vec<(u64, Box<T>)>>,
    _owns: PhantomData<Box<T>>,
}

impl<T: Send + Sync> Rcu<T> {
    /// Publishes `initial`; at most `max_readers` readers can be registered at once.
    pub fn new(initial: T, max_readers: usize) -> Rcu<T> {
        Rcu {
            current: AtomicPtr::new(Box::into_raw(Box::new(initial))),
            epoch: Padded(AtomicU64::new(1)),
            slots: (0..max_readers)
                .map(|_| Slot {
                    seen: AtomicU64::new(0),
                    in_use: AtomicBool::new(false),
                })
                .collect(),
            retired: Mutex::new(Vec::new()),
            _owns: PhantomData,
        }
    }

    /// Registers a reader, online. Registration is control-path work (it may contend).
    #[cfg(not(loom))]
    pub fn register(self: &Arc<Self>) -> Result<Reader<T>, RcuError> {
        Rcu::register_in(self)
    }

    /// Registers a reader, online (loom's `Arc` cannot be a method receiver).
    #[cfg(loom)]
    pub fn register(rcu: &Arc<Self>) -> Result<Reader<T>, RcuError> {
        Rcu::register_in(rcu)
    }

    fn register_in(this: &Arc<Self>) -> Result<Reader<T>, RcuError> {
        let slot = this
            .slots
            .iter()
            .position(|s| {
                s.in_use
                    .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
            })
            .ok_or(RcuError::NoFreeSlot(this.slots.len()))?;
        Ok(OfflineReader {
            reg: Registration {
                rcu: this.clone(),
                slot,
            },
        }
        .online())
    }

    /// Makes `next` the current snapshot and retires the previous one; never waits.
    /// Returns the new epoch. Call [`Rcu::reclaim`] to free retired snapshots.
    pub fn publish(&self, next: T) -> u64 {
        let next = Box::into_raw(Box::new(next));
        let mut retired = self.retired.lock().unwrap_or_else(|e| e.into_inner());
        let old = self.current.swap(next, Ordering::AcqRel);
        // Release: a reader that sees this epoch also sees the swap above.
        let epoch = self.epoch.0.fetch_add(1, Ordering::AcqRel) + 1;
        // SAFETY: `old` came from Box::into_raw (in `new` or an earlier `publish`) and was
        // just unlinked; only this list owns it from now on.
        retired.push((epoch, unsafe { Box::from_raw(old) }));
        epoch
    }

    /// Frees every retired snapshot that no online reader can still hold; never waits.
    /// Returns how many were freed.
    pub fn reclaim(&self) -> usize {
        let freed = {
            let mut retired = self.retired.lock().unwrap_or_else(|e| e.into_inner());
            if retired.is_empty() {
                return 0;
            }
            // Pairs with the fence in `OfflineReader::online` (see the module docs).
            fence(Ordering::SeqCst);
            let safe = self.oldest_seen();
            let keep = retired.partition_point(|&(e, _)| e <= safe);
            retired.drain(..keep).collect::<Vec<_>>()
        };
        // Dropped outside the lock: a snapshot's drop may be slow.
        freed.len()
    }

    /// Waits until every snapshot retired before this call is freed. Must not be called
    /// by a thread that is itself an online reader of this `Rcu` (it would wait forever).
    pub fn synchronize(&self) {
        let target = self.epoch.0.load(Ordering::Acquire);
        loop {
            self.reclaim();
            let oldest = {
                let retired = self.retired.lock().unwrap_or_else(|e| e.into_inner());
                retired.first().map(|&(e, _)| e)
            };
            match oldest {
                Some(e) if e <= target => yield_now(),
                _ => return,
            }
        }
    }

    /// Smallest epoch seen by an online reader (`u64::MAX` when none is online).
    fn oldest_seen(&self) -> u64 {
        self.slots
            .iter()
            .map(|s| s.seen.load(Ordering::Acquire))
            .filter(|&e| e != 0)
            .min()
            .unwrap_or(u64::MAX)
    }

    /// Retired snapshots not freed yet.
    pub fn pending(&self) -> usize {
        self.retired.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// The current global epoch (bumped by every publish).
    pub fn epoch(&self) -> u64 {
        self.epoch.0.load(Ordering::Acquire)
    }

    /// Runs `f` on the current snapshot from the control side (e.g. to derive the next
    /// one). Holds the publisher lock, so no publish can retire it meanwhile.
    pub fn with_current<R>(&self, f: impl FnOnce(&T) -> R) -> R {
        let _guard = self.retired.lock().unwrap_or_else(|e| e.into_inner());
        // SAFETY: only `publish` unlinks the current snapshot, and it needs the lock we
        // hold; `reclaim` frees only unlinked ones.
        f(unsafe { &*self.current.load(Ordering::Acquire) })
    }
}

impl<T> Drop for Rcu<T> {
    fn drop(&mut self) {
        // No reader exists (each holds an Arc to us); retired snapshots drop with the Vec.
        // SAFETY: `current` came from Box::into_raw and nothing else references it now.
        drop(unsafe { Box::from_raw(self.current.load(Ordering::Acquire)) });
    }
}

/// A reader's claim on a slot; releases it when dropped.
struct Registration<T: Send + Sync> {
    rcu: Arc<Rcu<T>>,
    slot: usize,
}

impl<T: Send + Sync> Registration<T> {
    fn slot(&self) -> &Slot {
        &self.rcu.slots[self.slot]
    }
}

impl<T: Send + Sync> Drop for Registration<T> {
    fn drop(&mut self) {
        self.slot().seen.store(0, Ordering::Release);
        self.slot().in_use.store(false, Ordering::Release);
    }
}

/// An online reader (one per worker thread). Between two [`Reader::quiescent`] calls it
/// may hold references from [`Reader::load`]; it must call `quiescent` regularly (once per
/// loop iteration) or go [`Reader::offline`] when idle.
pub struct Reader<T: Send + Sync> {
    reg: Registration<T>,
    /// Last epoch stored in the slot (to skip redundant stores).
    seen: u64,
}

impl<T: Send + Sync> Reader<T> {
    /// The current snapshot; load once per burst.
    #[inline]
    pub fn load(&self) -> &T {
        // SAFETY: this reader is online and the returned borrow ends before the next
        // `quiescent` (which takes `&mut self`); a snapshot loaded now is retired with an
        // epoch above the one in our slot, so `reclaim` keeps it until we store a later one.
        unsafe { &*self.reg.rcu.current.load(Ordering::Acquire) }
    }

    /// Reports a quiescent state: no reference from an earlier `load` is held any more.
    /// One load and, when the epoch moved, one plain store; no read-modify-write.
    #[inline]
    pub fn quiescent(&mut self) {
        let e = self.reg.rcu.epoch.0.load(Ordering::Acquire);
        if e != self.seen {
            self.reg.slot().seen.store(e, Ordering::Release);
            self.seen = e;
        }
    }

    /// Goes idle: publications stop waiting for this reader.
    pub fn offline(self) -> OfflineReader<T> {
        self.reg.slot().seen.store(0, Ordering::Release);
        OfflineReader { reg: self.reg }
    }

    /// The slot index (for logs and metrics).
    pub fn slot(&self) -> usize {
        self.reg.slot
    }
}

/// A registered reader that is idle: it holds no snapshot and cannot load one.
pub struct OfflineReader<T: Send + Sync> {
    reg: Registration<T>,
}

impl<T: Send + Sync> OfflineReader<T> {
    /// Comes back online (rare: one SeqCst fence).
    pub fn online(self) -> Reader<T> {
        let e = self.reg.rcu.epoch.0.load(Ordering::Acquire);
        self.reg.slot().seen.store(e, Ordering::Relaxed);
        // Either the reclaimer's fence comes first and our later loads see its swap, or
        // ours does and its slot scan sees `e`, which holds back whatever we may load.
        fence(Ordering::SeqCst);
        Reader {
            reg: self.reg,
            seen: e,
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    struct Counted(u32, Arc<AtomicUsize>);
    impl Drop for Counted {
        fn drop(&mut self) {
            self.1.fetch_add(1, Ordering::Relaxed);
        }
    }

    #[test]
    fn online_reader_holds_back_reclaim_until_quiescent() {
        let drops = Arc::new(AtomicUsize::new(0));
        let rcu = Arc::new(Rcu::new(Counted(0, drops.clone()), 4));
        let mut r = rcu.register().unwrap();
        assert_eq!(r.load().0, 0);
        rcu.publish(Counted(1, drops.clone()));
        assert_eq!(rcu.reclaim(), 0);
        assert_eq!(rcu.pending(), 1);
        r.quiescent();
        assert_eq!(r.load().0, 1);
        assert_eq!(rcu.reclaim(), 1);
        assert_eq!(drops.load(Ordering::Relaxed), 1);
        // Offline readers do not hold anything back; back online they see the newest.
        let off = r.offline();
        rcu.publish(Counted(2, drops.clone()));
        assert_eq!(rcu.reclaim(), 1);
        let r = off.online();
        assert_eq!(r.load().0, 2);
        rcu.with_current(|c| assert_eq!(c.0, 2));
        drop(r);
        drop(rcu);
        assert_eq!(drops.load(Ordering::Relaxed), 3);
    }

    #[test]
    fn slots_are_bounded_and_reused() {
        let rcu = Arc::new(Rcu::new(0u32, 2));
        let a = rcu.register().unwrap();
        let b = rcu.register().unwrap();
        assert_eq!(rcu.register().err(), Some(RcuError::NoFreeSlot(2)));
        let slot = a.slot();
        drop(a);
        assert_eq!(rcu.register().unwrap().slot(), slot);
        drop(b);
    }
}
