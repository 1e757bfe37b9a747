//! Counters of the control interfaces: frames up to the kernel, frames down from it, and
//! why frames were dropped on the way down (a stable metric label each).

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

macro_rules! down_drops {
    ($($v:ident => $s:literal,)*) => {
        /// Why a frame the kernel sent on a control interface did not go out of the port.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum DownDrop { $($v,)* }

        impl DownDrop {
            pub const ALL: &'static [DownDrop] = &[$(DownDrop::$v,)*];
            pub const COUNT: usize = DownDrop::ALL.len();
            /// The metric label value.
            pub const fn as_str(self) -> &'static str {
                match self { $(DownDrop::$v => $s,)* }
            }
        }
    };
}

down_drops! {
    Runt => "runt",
    TooBig => "too_big",
    ArpReplyByRouter => "arp_reply_by_router",
    RateLimited => "rate_limited",
    NoMbuf => "no_mbuf",
    InjectFull => "inject_full",
    Shutdown => "shutdown",
    NaByRouter => "na_by_router",
}

/// Written by the slow path (up) and the down thread; read by metrics and the summary.
#[derive(Debug, Default)]
pub struct CpifStats {
    /// Frames written to a control interface (punted packets and ARP mirrors).
    pub up: AtomicU64,
    /// Frames the kernel refused (interface gone, queue full).
    pub up_failed: AtomicU64,
    /// Frames read from a control interface.
    pub down: AtomicU64,
    /// Frames handed to the worker's inject queue.
    pub down_sent: AtomicU64,
    pub down_dropped: [AtomicU64; DownDrop::COUNT],
    /// Interfaces found deleted from outside, and recreated.
    pub lost: AtomicU64,
    pub recreated: AtomicU64,
}

impl CpifStats {
    pub fn drop(&self, why: DownDrop) {
        self.down_dropped[why as usize].fetch_add(1, Relaxed);
    }

    pub fn dropped(&self, why: DownDrop) -> u64 {
        self.down_dropped[why as usize].load(Relaxed)
    }
}

impl CpifStats {
    /// One line for the run's summary.
    pub fn summary(&self) -> String {
        let drops: Vec<String> = DownDrop::ALL
            .iter()
            .filter(|d| self.dropped(**d) > 0)
            .map(|d| format!("{}={}", d.as_str(), self.dropped(*d)))
            .collect();
        format!(
            "control interfaces: up {} (failed {}), down {} sent {} dropped [{}], lost {} recreated {}",
            self.up.load(Relaxed),
            self.up_failed.load(Relaxed),
            self.down.load(Relaxed),
            self.down_sent.load(Relaxed),
            if drops.is_empty() { "none".into() } else { drops.join(" ") },
            self.lost.load(Relaxed),
            self.recreated.load(Relaxed),
        )
    }
}
