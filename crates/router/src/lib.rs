//! The DPDK runtime around the pure forwarding core.
//!
//! `net` decides what happens to each packet; this crate moves packets: it brings up the
//! EAL, the mempool and the ports, runs one poll-mode worker per lcore, and keeps the
//! control side (statistics, signals, reloads) on the main lcore, away from the workers.
//!
//! What must never happen here: a worker blocking, allocating or taking a lock per packet;
//! an mbuf that is neither transmitted nor freed and counted.
//!
//! No `unsafe` (`#![forbid(unsafe_code)]`): DPDK is reached through the `dpdk` crate.

#![forbid(unsafe_code)]

mod control;
mod counters;
pub mod cpif;
pub mod ctlsock;
mod error;
mod forward;
pub mod fpm;
mod idle;
mod learned;
pub mod metrics;
/// Public only for `examples/punt_ir.rs` (callgrind counts of the punt admission).
#[doc(hidden)]
pub mod punt;
mod report;
mod runtime;
mod signals;
mod slowpath;
mod spec;
mod stage_hist;
pub mod trace;
mod watch;
mod worker;

pub use counters::for_tests as counters_for_tests;
pub use counters::{drop_reason_name, RuntimeDrop, WorkerCounters, WorkerTotals};
pub use error::{RouterError, SpecError, ThreadDeath};
pub use runtime::{Router, RunSummary, Stop};
pub use spec::{IdlePolicy, PortSpec, Routing, RunOptions, RuntimeSpec, TestFault, WorkerSpec};
pub use worker::Forwarder;
/// Public only for `examples/worker_ir.rs` (callgrind counts of the whole worker loop).
#[doc(hidden)]
pub use {
    forward::PipelineForwarder,
    worker::{PollState, Worker},
};
