//! The Prometheus view of the router: `/metrics` in the text exposition format.
//!
//! Workers never touch the registry. Their counters are plain per-worker structs
//! ([`crate::WorkerCounters`]); [`RouterCollector`] reads and sums them at scrape time,
//! together with ethdev counters and the control side's [`ControlStats`]. The HTTP server
//! runs on its own thread, on the control side.

mod collector;
mod control;
mod server;
mod slow;

pub use collector::{BuildInfo, RouterCollector};
pub use control::{ControlStats, IcmpKind};
pub use server::{render, Limits, MetricsError, MetricsServer};
pub use slow::{NdpCount, SlowDrop, SlowPathStats};
