//! The worker's decision stage: the `net` pipeline over the current table snapshot.
//!
//! Holds this worker's RCU reader: the table is loaded once per burst, a quiescent state
//! is reported once per loop iteration, and the reader goes offline while the worker
//! sleeps so a publish never waits on an idle worker.

use std::sync::Arc;

use dpdk::Mbuf;
use net::fib::Fib;
use net::pipeline::{FamilyCounts, Pipeline, Verdict};
use net::rcu::{OfflineReader, Rcu, Reader};

use crate::worker::Forwarder;

enum ReaderState {
    Online(Reader<Fib>),
    Offline(OfflineReader<Fib>),
    /// Only while switching states.
    Switching,
}

/// [`Forwarder`] running [`Pipeline::process_burst_counted`] on the published [`Fib`].
pub struct PipelineForwarder {
    pipeline: Pipeline,
    reader: ReaderState,
}

impl PipelineForwarder {
    /// A forwarder reading tables from `rcu` (registers a reader slot).
    pub fn new(
        pipeline: Pipeline,
        rcu: &Arc<Rcu<Fib>>,
    ) -> Result<PipelineForwarder, net::rcu::RcuError> {
        let reader = rcu.register()?;
        Ok(PipelineForwarder {
            pipeline,
            reader: ReaderState::Online(reader),
        })
    }

    fn online(&mut self) -> &mut Reader<Fib> {
        if let ReaderState::Offline(_) = self.reader {
            if let ReaderState::Offline(r) =
                std::mem::replace(&mut self.reader, ReaderState::Switching)
            {
                self.reader = ReaderState::Online(r.online());
            }
        }
        match &mut self.reader {
            ReaderState::Online(r) => r,
            _ => unreachable!("the reader is online after the switch above"),
        }
    }
}

impl Forwarder for PipelineForwarder {
    #[inline]
    fn begin_iteration(&mut self) {
        self.online().quiescent();
    }

    #[inline]
    fn decide(
        &mut self,
        in_port: u16,
        pkts: &mut [Mbuf],
        verdicts: &mut [Verdict],
        families: &mut FamilyCounts,
    ) {
        let ReaderState::Online(reader) = &mut self.reader else {
            unreachable!("begin_iteration brings the reader online before any burst");
        };
        self.pipeline
            .process_burst_counted(reader.load(), in_port, pkts, verdicts, families);
    }

    fn go_offline(&mut self) {
        if let ReaderState::Online(_) = self.reader {
            if let ReaderState::Online(r) =
                std::mem::replace(&mut self.reader, ReaderState::Switching)
            {
                self.reader = ReaderState::Offline(r.offline());
            }
        }
    }
}
