//! The per-lcore poll loop: receive a burst, decide, transmit or drop, repeat.
//!
//! Stages per (port, queue): `rx_burst` -> [`Forwarder::decide`] over the whole burst (one
//! pipeline [`Verdict`] per packet) -> a burst that all leaves by one port moves into that
//! port's [`TxBuffer`] at once (the rule under load); otherwise each mbuf moves into the
//! [`TxBuffer`] for its egress port, or into the drop burst (freed in bulk), or to the slow
//! path -> TX buffers are flushed once per loop iteration. Every received mbuf ends in
//! exactly one of these places and is counted; so does every frame taken from the slow
//! path's inject queue ([`crate::WorkerTotals::unaccounted`] is 0). Multi-segment mbufs are
//! dropped (counted) before the pipeline, which reads one segment.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crossbeam_channel::Receiver;
use dpdk::{Burst, Mbuf, TxBuffer, BURST_MAX};
use net::packet::PacketBuf;
use net::pipeline::{DropReason, Family, FamilyCounts, PuntReason, Verdict};

use crate::counters::{
    bump, bump_families, burst_bucket, RuntimeDrop, Unforwarded, WorkerCounters,
};
use crate::idle::{Backoff, IdleStep};
use crate::punt::{PuntClass, PuntQueues};
use crate::spec::IdlePolicy;
use crate::stage_hist::StageScale;

/// A frame from the slow path for a worker to transmit on its own TX queue.
pub struct Injected {
    pub port: u16,
    pub mbuf: Mbuf,
}

/// A packet on its way to the slow path.
pub struct Punted {
    pub mbuf: Mbuf,
    pub reason: PuntReason,
    /// Port index the packet arrived on.
    pub in_port: u16,
}

/// Decides the fate of each packet of a burst, rewriting forwarded ones in place.
pub trait Forwarder: Send {
    /// Called once per loop iteration, before any burst (load table snapshots here).
    fn begin_iteration(&mut self) {}
    /// Fills `verdicts[i]` for `pkts[i]`, received on `in_port` (forwarded packets are
    /// rewritten in place; the others are left as received), adding the packets by
    /// family to `families` (the worker publishes them once per poll).
    fn decide(
        &mut self,
        in_port: u16,
        pkts: &mut [Mbuf],
        verdicts: &mut [Verdict],
        families: &mut FamilyCounts,
    );
    /// Called when the worker is about to sleep (idle) or stop: it must hold no snapshot.
    fn go_offline(&mut self) {}
}

/// A worker's fixed setup.
pub struct Worker<F: Forwarder> {
    /// (port index, DPDK port id, queue) triples to poll.
    pub rx: Vec<(u16, u16, u16)>,
    /// One TX buffer per port, indexed by port index, on this worker's own TX queue.
    pub tx: Vec<TxBuffer>,
    pub counters: Arc<WorkerCounters>,
    pub stop: Arc<AtomicBool>,
    pub idle: IdlePolicy,
    pub burst: usize,
    pub forwarder: F,
    /// The slow path's bounded queues (control traffic and data, [`crate::punt`]); a full
    /// queue drops (counted), never blocks.
    pub punt: PuntQueues,
    /// Frames the slow path wants sent (only one worker gets this queue).
    pub inject: Option<Receiver<Injected>>,
    /// Frames the kernel sent on the control interfaces, taken before `inject` so the
    /// slow path's own output (ICMP for a flood) never delays them.
    pub inject_control: Option<Receiver<Injected>>,
    /// Packet trace: one flag test per burst while nobody traces.
    pub trace: Option<crate::trace::TraceTap>,
}

/// A worker's scratch space between polls: the RX and drop bursts and the verdicts.
pub struct PollState {
    /// The worker's own counters (a second handle: the loop bumps them while it borrows
    /// the worker mutably).
    counters: Arc<WorkerCounters>,
    burst_size: usize,
    /// Buckets a full burst's stage cycles ([`crate::stage_hist`]).
    stage_scale: StageScale,
    rx: Burst,
    drops: Burst,
    verdicts: [Verdict; BURST_MAX],
}

impl<F: Forwarder> Worker<F> {
    /// The scratch space [`Worker::poll`] works in.
    pub fn poll_state(&self) -> PollState {
        let burst_size = self.burst.clamp(1, BURST_MAX);
        PollState {
            counters: self.counters.clone(),
            burst_size,
            stage_scale: StageScale::new(burst_size),
            rx: Burst::new(),
            drops: Burst::new(),
            verdicts: [Verdict::Drop(DropReason::Truncated); BURST_MAX],
        }
    }

    /// Polls until `stop` is set, then flushes its TX buffers.
    pub fn run(mut self) -> Arc<WorkerCounters> {
        let mut s = self.poll_state();
        let mut backoff = Backoff::new(self.idle);
        let c = s.counters.clone();
        let mut last = dpdk::rdtsc();

        // One TSC read per poll besides the stage's two: each poll's end starts the next
        // (a read costs ~35 cycles on these VMs, a cycle a packet at bursts of 32). A
        // pause hint counts as idle; only a sleep is left out of both busy and idle.
        while !self.stop.load(Ordering::Relaxed) {
            let got_any = self.poll(&mut s);
            let now = dpdk::rdtsc();
            last = if got_any {
                bump(&c.busy_cycles, now - last);
                backoff.busy();
                now
            } else {
                // (end of the idle interval, start of the next poll's)
                let (idle_end, next) = match backoff.idle() {
                    IdleStep::Spin => (now, now),
                    IdleStep::Pause => {
                        dpdk::pause();
                        let t = dpdk::rdtsc();
                        (t, t)
                    }
                    IdleStep::Sleep(d) => {
                        self.forwarder.go_offline();
                        std::thread::sleep(d);
                        (now, dpdk::rdtsc())
                    }
                };
                bump(&c.idle_cycles, idle_end - last);
                next
            };
        }
        flush_all(&mut self.tx, &c);
        self.forwarder.go_offline();
        self.counters
    }

    /// One loop iteration: a burst from each RX queue, decided and dispatched, then the
    /// injected frames, then every TX buffer flushed. True when some packet came in.
    /// (Public for `examples/worker_ir.rs`, which counts its instructions.)
    #[inline]
    pub fn poll(&mut self, s: &mut PollState) -> bool {
        let c = &*s.counters;
        self.forwarder.begin_iteration();
        let mut got_any = false;
        let mut families = FamilyCounts::default();
        let mut unforwarded: Unforwarded = [0; Family::COUNT];
        for i in 0..self.rx.len() {
            let (port, dev, queue) = self.rx[i];
            let n = dpdk::rx_burst_max(dev, queue, &mut s.rx, s.burst_size);
            if n == 0 {
                continue;
            }
            got_any = true;
            bump(&c.rx_packets, n as u64);
            bump(&c.bursts, 1);
            bump(&c.burst_sizes[burst_bucket(n)], 1);
            let chained = s.rx.take_chained(&mut s.drops);
            if chained > 0 {
                bump(&c.drops[RuntimeDrop::MultiSegment.index()], chained as u64);
            }
            let t0 = dpdk::rdtsc();
            let n = s.rx.len();
            let traced = self.trace.as_ref().is_some_and(|t| t.armed_for(port));
            if let (true, Some(t)) = (traced, self.trace.as_mut()) {
                t.before(port, s.rx.as_slice());
            }
            self.forwarder.decide(
                port,
                s.rx.as_mut_slice(),
                &mut s.verdicts[..n],
                &mut families,
            );
            if let (true, Some(t)) = (traced, self.trace.as_mut()) {
                t.after(port, s.rx.as_slice(), &s.verdicts[..n]);
            }
            let stage = dpdk::rdtsc() - t0;
            bump(&c.forwarding_cycles, stage);
            if n == s.burst_size {
                bump(&c.forwarding_burst_cycles[s.stage_scale.bucket(stage)], 1);
            }
            self.punt.begin_burst(t0);
            self.dispatch(
                port,
                &mut s.rx,
                &s.verdicts[..n],
                &mut s.drops,
                &mut unforwarded,
            );
            s.drops.free_all();
        }
        if got_any {
            bump_families(c, &families, &unforwarded);
        }
        self.take_injected();
        flush_all(&mut self.tx, c);
        got_any
    }

    /// Moves each mbuf of a decided burst to its TX buffer, the drop burst or the slow
    /// path, counting each under its outcome; a dropped or punted one is also noted by
    /// family (forwarded ones are counted by family as the received less those).
    #[inline]
    fn dispatch(
        &mut self,
        port: u16,
        rx: &mut Burst,
        verdicts: &[Verdict],
        drops: &mut Burst,
        unforwarded: &mut Unforwarded,
    ) {
        let c = &*self.counters;
        // The rule under load: the whole burst leaves by one port. One pass over the
        // verdicts, one copy of the pointers, one counter.
        if let Some(t) = single_egress(verdicts).and_then(|p| self.tx.get_mut(p as usize)) {
            bump(&c.forwarded, rx.len() as u64);
            t.push_burst(rx);
            return;
        }
        // Forwarded = the burst less the others, counted where they are rare (a counter
        // bumped on the forward arm cost 4 instructions a packet: it lived on the stack).
        let n = rx.len() as u64;
        let (mut dropped, mut slow, mut overflow, mut overflow_control) = (0u64, 0u64, 0u64, 0u64);
        for (m, v) in rx.drain().zip(verdicts.iter()) {
            match *v {
                // A packet sent to a port this runtime lacks (never expected) was
                // rewritten: its family as received is not known here, so it stays in
                // the forwarded by family.
                Verdict::Forward { port } => match self.tx.get_mut(port as usize) {
                    Some(t) => t.push(m),
                    None => {
                        dropped += 1;
                        push_drop(drops, m, c, RuntimeDrop::UnknownEgressPort.index())
                    }
                },
                Verdict::Drop(r) => {
                    dropped += 1;
                    not_forwarded(unforwarded, m.data(), *v);
                    push_drop(drops, m, c, r.index())
                }
                // Admitted (or dropped in the worker: neighbour incomplete, over budget)
                // before anything is built for the hand-off.
                Verdict::SlowPath(reason) => {
                    not_forwarded(unforwarded, m.data(), *v);
                    match self.punt.admit(reason, port, m.data()) {
                        Err(why) => {
                            dropped += 1;
                            push_drop(drops, m, c, why.index())
                        }
                        Ok(class) => {
                            let p = Punted {
                                mbuf: m,
                                reason,
                                in_port: port,
                            };
                            match self.punt.send(class, p) {
                                Ok(()) => slow += 1,
                                Err(p) => {
                                    overflow += 1;
                                    overflow_control += (class == PuntClass::Control) as u64;
                                    drop(p);
                                }
                            }
                        }
                    }
                }
            }
        }
        let fwd = n - dropped - slow - overflow;
        if fwd > 0 {
            bump(&c.forwarded, fwd);
        }
        if slow > 0 {
            bump(&c.slow_path, slow);
        }
        if overflow > 0 {
            bump(&c.punt_overflow, overflow);
        }
        if overflow_control > 0 {
            bump(&c.punt_overflow_control, overflow_control);
        }
    }

    /// Queues up to a burst of each inject queue's frames (the control interfaces' first)
    /// on their ports' TX buffers; a frame for a port that does not exist is freed and
    /// counted.
    #[inline]
    fn take_injected(&mut self) {
        let c = &*self.counters;
        let (mut n, mut unknown) = (0u64, 0u64);
        for inj in [&self.inject_control, &self.inject].into_iter().flatten() {
            for Injected { port, mbuf } in inj.try_iter().take(BURST_MAX) {
                n += 1;
                match self.tx.get_mut(port as usize) {
                    Some(t) => t.push(mbuf),
                    None => {
                        unknown += 1;
                        drop(mbuf);
                    }
                }
            }
        }
        if n > 0 {
            bump(&c.injected, n);
        }
        if unknown > 0 {
            bump(&c.drops[RuntimeDrop::InjectUnknownPort.index()], unknown);
        }
    }
}

/// Notes a dropped or punted packet by the family it was received as: out of line, so
/// that the dispatch loop's forward arm keeps its registers.
#[cold]
#[inline(never)]
fn not_forwarded(unforwarded: &mut Unforwarded, data: &[u8], v: Verdict) {
    unforwarded[Family::of_unforwarded(data, v) as usize] += 1;
}

/// The egress port when every verdict forwards to the same one.
#[inline]
fn single_egress(verdicts: &[Verdict]) -> Option<u16> {
    let (Some(&first), Some(&last)) = (verdicts.first(), verdicts.last()) else {
        return None;
    };
    // The last verdict first: a mixed burst is usually turned away there, at once.
    match first {
        Verdict::Forward { port } if last == first => {
            // Four at a time, one branch each (one per verdict cost 8 instructions).
            let same = |v: &Verdict| *v == first;
            let mut fours = verdicts.chunks_exact(4);
            for c in &mut fours {
                if !(same(&c[0]) & same(&c[1]) & same(&c[2]) & same(&c[3])) {
                    return None;
                }
            }
            fours.remainder().iter().all(same).then_some(port)
        }
        _ => None,
    }
}

#[inline]
fn push_drop(drops: &mut Burst, m: Mbuf, c: &WorkerCounters, reason: usize) {
    bump(&c.drops[reason.min(c.drops.len() - 1)], 1);
    if let Err(m) = drops.push(m) {
        drop(m);
    }
}

/// Flushes every TX buffer and publishes the TX totals (the buffers also flush by
/// themselves when full, so totals come from their own counts).
#[inline]
fn flush_all(tx: &mut [TxBuffer], c: &WorkerCounters) {
    let (mut sent, mut refused) = (0, 0);
    for t in tx.iter_mut() {
        if !t.is_empty() {
            t.flush();
        }
        sent += t.sent();
        refused += t.dropped();
    }
    c.tx_packets.store(sent, Ordering::Relaxed);
    c.tx_refused.store(refused, Ordering::Relaxed);
}

#[cfg(test)]
#[path = "worker_tests.rs"]
mod tests;
