//! FPM counters shared by the listener thread (session), the control thread (what was
//! installed) and the metrics scrape. Neither thread is a worker: plain atomics.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use fpm::{SessionStats, State, ERROR_REASONS, MESSAGE_KINDS};

#[derive(Debug, Default)]
pub struct FpmStats {
    /// Index into [`State::ALL`].
    pub state: AtomicU64,
    pub connects: AtomicU64,
    pub frames: AtomicU64,
    pub messages: [AtomicU64; MESSAGE_KINDS.len()],
    pub errors: [AtomicU64; ERROR_REASONS.len()],
    pub resyncs: AtomicU64,
    pub swept: AtomicU64,
    pub hold_withdrawals: AtomicU64,
    /// Unix time of the last completed resync in milliseconds (0: never).
    pub last_resync_ms: AtomicU64,
    /// FPM entries in the table now, and those the routes file overrides: ipv4, labels.
    pub active: [AtomicU64; 2],
    pub overridden: [AtomicU64; 2],
    /// Tables published for FPM changes, and changes the table refused.
    pub publishes: AtomicU64,
    pub rejected: AtomicU64,
    /// Changes received by the control side, and when the last publish happened.
    pub changes: AtomicU64,
}

pub fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

impl FpmStats {
    /// Copies the session's counters (called by the listener after each round).
    pub fn store_session(&self, s: &SessionStats, state: State) {
        let st = State::ALL.iter().position(|&x| x == state).unwrap_or(0);
        self.state.store(st as u64, Relaxed);
        self.connects.store(s.connects, Relaxed);
        self.frames.store(s.frames, Relaxed);
        for (a, v) in self.messages.iter().zip(s.messages) {
            a.store(v, Relaxed);
        }
        for (a, v) in self.errors.iter().zip(s.errors) {
            a.store(v, Relaxed);
        }
        if s.resyncs != self.resyncs.swap(s.resyncs, Relaxed) {
            self.last_resync_ms.store(unix_ms(), Relaxed);
        }
        self.swept.store(s.swept, Relaxed);
        self.hold_withdrawals.store(s.hold_withdrawals, Relaxed);
    }

    pub fn state(&self) -> State {
        State::ALL[self.state.load(Relaxed) as usize % State::ALL.len()]
    }
}
