//! The slow path's neighbour table as `show neighbors` reads it: the table is private to
//! the slow-path thread, which publishes a copy here at most every [`PUBLISH_EVERY`]
//! (a state change shows within that time); the socket reads the latest copy.
//!
//! A lock is fine: the slow path holds it to swap one `Arc`, the socket to clone it; no
//! worker ever touches it.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How often the slow path publishes its neighbours.
pub const PUBLISH_EVERY: Duration = Duration::from_millis(500);

/// What the slow path knows of a neighbour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NeighborState {
    /// Learned, confirmed within the reachable time.
    Resolved,
    /// Learned, reachable time over: being probed.
    Stale,
    /// Asked for, no answer yet.
    Incomplete,
}

impl NeighborState {
    pub fn as_str(self) -> &'static str {
        match self {
            NeighborState::Resolved => "resolved",
            NeighborState::Stale => "stale",
            NeighborState::Incomplete => "incomplete",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NeighborEntry {
    pub port: u16,
    /// IPv4 (ARP) or IPv6 (NDP).
    pub ip: std::net::IpAddr,
    pub mac: Option<[u8; 6]>,
    pub state: NeighborState,
    /// Last confirmed (learned ones), or when the resolution started (incomplete).
    pub since: Instant,
}

/// The latest published copy.
#[derive(Debug, Default)]
pub struct NeighborBoard(Mutex<Arc<Vec<NeighborEntry>>>);

impl NeighborBoard {
    pub fn publish(&self, entries: Vec<NeighborEntry>) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Arc::new(entries);
    }

    pub fn read(&self) -> Arc<Vec<NeighborEntry>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}
