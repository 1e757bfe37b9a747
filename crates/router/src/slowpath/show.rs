//! The slow path's neighbours for `show neighbors`: a copy of the learned bindings and
//! the resolutions in progress, published to the control socket's board
//! ([`crate::ctlsock::NeighborBoard`]) at most every [`PUBLISH_EVERY`]. It only reads
//! the slow path's state.

use std::time::Duration;

use super::State;
use crate::ctlsock::{NeighborEntry, NeighborState, PUBLISH_EVERY};

impl State {
    /// Publishes the neighbours if the last copy is older than [`PUBLISH_EVERY`].
    pub(super) fn publish_neighbors(&mut self) {
        let now = self.now_ns();
        let Some(t) = self.sp.trace.as_mut() else {
            return;
        };
        if !t.board_due(now, PUBLISH_EVERY.as_nanos() as u64) {
            return;
        }
        let at = |ns: u64| self.start + Duration::from_nanos(ns);
        let mut v: Vec<NeighborEntry> = self
            .neighbors
            .entries(now)
            .map(|(port, a, mac, confirmed, stale)| NeighborEntry {
                port,
                ip: a.ip(),
                mac: Some(mac),
                state: match stale {
                    true => NeighborState::Stale,
                    false => NeighborState::Resolved,
                },
                since: at(confirmed),
            })
            .collect();
        v.extend(
            self.pending
                .resolving()
                .filter(|&((port, a), _)| self.neighbors.get_addr(port, a).is_none())
                .map(|((port, a), first)| NeighborEntry {
                    port,
                    ip: a.ip(),
                    mac: None,
                    state: NeighborState::Incomplete,
                    since: at(first),
                }),
        );
        if let Some(t) = self.sp.trace.as_ref() {
            t.board().publish(v);
        }
    }
}
