//! FPM counters shared by the listener thread (session), the control thread (what was
//! installed) and the metrics scrape. Neither thread is a worker: plain atomics.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use fpm::{SessionStats, State, ERROR_REASONS, MESSAGE_KINDS};
use prometheus::{Histogram, HistogramOpts};

/// What FPM installs, as counted and labelled (`kind`): IPv4 prefixes, IPv6 prefixes,
/// label entries.
pub const KINDS: [&str; 3] = ["ipv4", "ipv6", "label"];

/// The index of `key`'s kind in [`KINDS`].
pub fn kind_index(key: fpm::Key) -> usize {
    match key {
        fpm::Key::Ipv4 { .. } => 0,
        fpm::Key::Ipv6 { .. } => 1,
        fpm::Key::Label(_) => 2,
    }
}

#[derive(Debug)]
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
    /// FPM entries in the table now, and those the routes file overrides, by [`KINDS`].
    pub active: [AtomicU64; KINDS.len()],
    pub overridden: [AtomicU64; KINDS.len()],
    /// Tables published for FPM changes, and changes the table refused.
    pub publishes: AtomicU64,
    pub rejected: AtomicU64,
    /// Changes received by the control side.
    pub changes: AtomicU64,
    /// From reading a change off the socket to the table holding it being published
    /// (the oldest change of each publish).
    pub publish_latency: Histogram,
    /// The same for the last publish, in microseconds.
    pub last_publish_latency_us: AtomicU64,
}

impl Default for FpmStats {
    fn default() -> Self {
        FpmStats::new()
    }
}

pub fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

impl FpmStats {
    pub fn new() -> FpmStats {
        let publish_latency = Histogram::with_opts(
            HistogramOpts::new(
                "mplsrouter_fpm_publish_latency_seconds",
                "From reading an FPM change off the socket to the table with it being published \
                 (the oldest change of each publish).",
            )
            .buckets(vec![
                0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0,
            ]),
        )
        .expect("valid histogram options");
        FpmStats {
            state: AtomicU64::new(0),
            connects: AtomicU64::new(0),
            frames: AtomicU64::new(0),
            messages: Default::default(),
            errors: Default::default(),
            resyncs: AtomicU64::new(0),
            swept: AtomicU64::new(0),
            hold_withdrawals: AtomicU64::new(0),
            last_resync_ms: AtomicU64::new(0),
            active: Default::default(),
            overridden: Default::default(),
            publishes: AtomicU64::new(0),
            rejected: AtomicU64::new(0),
            changes: AtomicU64::new(0),
            publish_latency,
            last_publish_latency_us: AtomicU64::new(0),
        }
    }

    /// Records one publish of changes read at `read_at`.
    pub fn published(&self, read_at: std::time::Instant) {
        let d = read_at.elapsed();
        self.publishes.fetch_add(1, Relaxed);
        self.publish_latency.observe(d.as_secs_f64());
        self.last_publish_latency_us
            .store(d.as_micros() as u64, Relaxed);
    }

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
