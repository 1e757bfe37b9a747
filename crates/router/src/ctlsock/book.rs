//! What the table cannot say about itself, kept by the control side for `show`: which
//! prefixes and labels FRR (FPM) installed, and when each neighbour was learned.
//!
//! Written by the control thread as it applies FPM changes and slow-path events, read by
//! the control socket per request; a lock is fine (no worker ever touches it).

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::time::Instant;

use fpm::Key;

#[derive(Debug, Default)]
struct Inner {
    fpm: HashSet<Key>,
    learned: HashMap<(u16, u32), Instant>,
    /// IPv6 neighbours learned by NDP (address as a big-endian integer).
    learned6: HashMap<(u16, u128), Instant>,
}

/// The source book; share it as `Arc<SourceBook>`.
#[derive(Debug, Default)]
pub struct SourceBook(Mutex<Inner>);

impl SourceBook {
    fn inner(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// FPM's entry for `key` is (true) or is not (false) the one in the table.
    pub fn set_fpm(&self, key: Key, installed: bool) {
        let mut i = self.inner();
        if installed {
            i.fpm.insert(key);
        } else {
            i.fpm.remove(&key);
        }
    }

    /// Replaces the whole FPM set (after a reload re-applied every FPM route).
    pub fn replace_fpm(&self, keys: impl IntoIterator<Item = Key>) {
        self.inner().fpm = keys.into_iter().collect();
    }

    /// Whether the table's entry for `key` came from FPM.
    pub fn is_fpm(&self, key: Key) -> bool {
        self.inner().fpm.contains(&key)
    }

    /// A neighbour's MAC was learned (or changed) now.
    pub fn learned(&self, port: u16, ip: u32, at: Instant) {
        self.inner().learned.insert((port, ip), at);
    }

    /// A learned neighbour is gone.
    pub fn forgotten(&self, port: u16, ip: u32) {
        self.inner().learned.remove(&(port, ip));
    }

    /// When a neighbour was learned, if it is a learned one.
    pub fn learned_at(&self, port: u16, ip: u32) -> Option<Instant> {
        self.inner().learned.get(&(port, ip)).copied()
    }

    /// An IPv6 neighbour's MAC was learned (or changed) by NDP now.
    pub fn learned6(&self, port: u16, ip: u128, at: Instant) {
        self.inner().learned6.insert((port, ip), at);
    }

    /// A learned IPv6 neighbour is gone.
    pub fn forgotten6(&self, port: u16, ip: u128) {
        self.inner().learned6.remove(&(port, ip));
    }

    /// When an IPv6 neighbour was learned, if it is a learned one.
    pub fn learned6_at(&self, port: u16, ip: u128) -> Option<Instant> {
        self.inner().learned6.get(&(port, ip)).copied()
    }
}
