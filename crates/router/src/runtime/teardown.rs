//! The ordered teardown, run by [`super::Router::run_until`] and, for a router dropped
//! without running (or by unwinding), by its `Drop`.
//!
//! Order: workers stopped and joined (each flushes its TX buffers as it ends), then the
//! slow path and control-interface threads; the services (control socket, metrics, FPM
//! listener); the ports, stopped (vdev outputs are flushed) and closed; the tables
//! released; every mbuf checked back in the pool; the pool freed; the EAL cleaned up.
//! Every step is idempotent, so `Drop` after `run_until` does nothing twice. It must
//! never stop a port or free the pool while a thread that may touch them runs.

use dpdk::PortStats;

use super::{ports, Router};
use crate::counters::WorkerTotals;
use crate::error::RouterError;

/// What the teardown found, for the summary.
pub(super) struct Stopped {
    pub workers: WorkerTotals,
    pub ports: Vec<(String, PortStats)>,
    pub mbufs_leaked: u32,
}

impl Router {
    /// Teardown step 1: stop and join every thread; why any ended abnormally.
    pub(super) fn stop_threads(&mut self) -> Vec<RouterError> {
        self.threads.stop_and_join()
    }

    /// Teardown steps 2 to 5: services, ports, tables, then the leak check. The pool and
    /// the EAL stay for [`Self::release_dpdk`].
    pub(super) fn stop_ports_and_tables(&mut self) -> Stopped {
        let mut workers = WorkerTotals::default();
        for c in &self.counters {
            workers.add(&c.snapshot());
        }
        self.services = None;
        let Some(dpdk) = &mut self.dpdk else {
            return Stopped {
                workers,
                ports: Vec::new(),
                mbufs_leaked: 0,
            };
        };
        let port_stats = ports::stop_ports(&self.spec, &mut dpdk.ports);
        dpdk.ports.clear();
        self.tables = None;
        let mbufs_leaked = dpdk.pool.in_use().saturating_sub(dpdk.baseline_in_use);
        Stopped {
            workers,
            ports: port_stats,
            mbufs_leaked,
        }
    }

    /// Teardown step 6: free the pool (when every mbuf is back) and clean up the EAL.
    pub(super) fn release_dpdk(&mut self) {
        self.dpdk = None;
    }
}

impl Drop for Router {
    fn drop(&mut self) {
        let _ = self.stop_threads();
        let _ = self.stop_ports_and_tables();
        self.release_dpdk();
    }
}
