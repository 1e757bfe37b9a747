//! Running a trace or a capture: arm the workers (and the slow path), take records until
//! the count or the deadline, disarm; pair each punted packet with the slow path's
//! record of it. Runs on a control socket thread, one trace or capture at a time.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use net::pipeline::Verdict;

use crate::trace::filter::Filter;
use crate::trace::slow::{Outcome, SlowRecord};
use crate::trace::{CapturePlan, CaptureRecord, TraceControl, TraceRecord, QUEUE};

/// How long a trace waits, after its last packet, for the slow path's records.
const SLOW_GRACE: Duration = Duration::from_millis(500);

/// Pairs the workers' punted records with the slow path's, by port and bytes, in order.
#[derive(Default)]
pub struct Pairer {
    /// Per worker record: the slow path's outcome, once paired.
    pub outcomes: Vec<Option<Outcome>>,
    /// Punted worker records not paired yet (indices).
    waiting: Vec<usize>,
    /// Slow-path records not paired yet (oldest first, at most [`QUEUE`]).
    spare: VecDeque<SlowRecord>,
}

fn same(w: &TraceRecord, s: &SlowRecord) -> bool {
    w.in_port == s.in_port && w.in_len == s.len && w.input() == s.input()
}

impl Pairer {
    /// Worker record `i` of `recs` arrived.
    pub fn worker(&mut self, recs: &[TraceRecord], i: usize) {
        self.outcomes.resize(recs.len(), None);
        if !matches!(recs[i].verdict, Verdict::SlowPath(_)) {
            return;
        }
        match self.spare.iter().position(|s| same(&recs[i], s)) {
            Some(k) => self.outcomes[i] = self.spare.remove(k).map(|s| s.outcome),
            None => self.waiting.push(i),
        }
    }

    /// A slow-path record arrived.
    pub fn slow(&mut self, recs: &[TraceRecord], s: SlowRecord) {
        match self.waiting.iter().position(|&i| same(&recs[i], &s)) {
            Some(k) => {
                let i = self.waiting.remove(k);
                self.outcomes[i] = Some(s.outcome);
            }
            None => {
                if self.spare.len() == QUEUE {
                    self.spare.pop_front();
                }
                self.spare.push_back(s);
            }
        }
    }

    pub fn waiting(&self) -> usize {
        self.waiting.len()
    }
}

/// Traces up to `count` packets from `port` passing `filter` within `timeout`.
pub fn trace(
    ctl: &TraceControl,
    (count, port, timeout): (usize, Option<u16>, Duration),
    filter: &Filter,
) -> (Vec<TraceRecord>, Vec<Option<Outcome>>) {
    while ctl.records.try_recv().is_ok() {}
    while ctl.slow.records.try_recv().is_ok() {}
    let deadline = Instant::now() + timeout;
    let (session, slow_session) = ctl.arm(port, filter);
    let mut got = Vec::with_capacity(count);
    let mut pairs = Pairer::default();
    while got.len() < count {
        let left = deadline.saturating_duration_since(Instant::now());
        crossbeam_channel::select! {
            recv(ctl.records) -> r => match r {
                Ok(r) if r.session == session => {
                    got.push(r);
                    pairs.worker(&got, got.len() - 1);
                }
                Ok(_) => {} // a burst of the previous trace, finished late
                Err(_) => break,
            },
            recv(ctl.slow.records) -> r => match r {
                Ok(r) if r.session == slow_session => pairs.slow(&got, r),
                _ => {}
            },
            default(left) => break,
        }
    }
    ctl.disarm();
    let grace = Instant::now() + SLOW_GRACE;
    while pairs.waiting() > 0 {
        match ctl.slow.records.recv_deadline(grace) {
            Ok(r) if r.session == slow_session => pairs.slow(&got, r),
            Ok(_) => {}
            Err(_) => break,
        }
    }
    ctl.slow.disarm();
    pairs.outcomes.resize(got.len(), None);
    (got, pairs.outcomes)
}

/// What a capture took: the frames, when it was armed (TSC, Unix µs), and the frames
/// it skipped (over the rate, queue full).
pub struct Captured {
    pub frames: Vec<CaptureRecord>,
    pub tsc0: u64,
    pub unix_us0: u64,
    pub skipped: (u64, u64),
}

/// Captures up to `count` frames of `plan.port` passing `filter` within `timeout`.
pub fn capture(
    ctl: &TraceControl,
    plan: CapturePlan,
    count: usize,
    timeout: Duration,
    filter: &Filter,
) -> Captured {
    while ctl.frames.try_recv().is_ok() {}
    let before = ctl.skipped();
    let unix_us0 = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64);
    let tsc0 = dpdk::rdtsc();
    let deadline = Instant::now() + timeout;
    let session = ctl.arm_capture(plan, filter);
    let mut frames = Vec::with_capacity(count);
    while frames.len() < count {
        match ctl.frames.recv_deadline(deadline) {
            Ok(f) if f.session == session => frames.push(f),
            Ok(_) => {}
            Err(_) => break,
        }
    }
    ctl.disarm();
    let after = ctl.skipped();
    Captured {
        frames,
        tsc0,
        unix_us0,
        skipped: (after.0 - before.0, after.1 - before.1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use net::pipeline::{DropReason, PuntReason};

    fn w(port: u16, byte: u8, verdict: Verdict) -> TraceRecord {
        let mut frame_in = [0u8; crate::trace::SNAP];
        frame_in[0] = byte;
        TraceRecord {
            session: 1,
            lcore: 1,
            in_port: port,
            in_len: 60,
            out_len: 0,
            frame_in,
            verdict,
            frame_out: [0; crate::trace::SNAP],
        }
    }

    fn s(port: u16, byte: u8, action: &'static str) -> SlowRecord {
        let mut frame = [0u8; crate::trace::SNAP];
        frame[0] = byte;
        SlowRecord {
            session: 1,
            in_port: port,
            len: 60,
            frame,
            outcome: Outcome {
                action,
                detail: None,
            },
        }
    }

    #[test]
    fn punted_packets_pair_by_port_and_bytes_in_order_whichever_comes_first() {
        let punt = Verdict::SlowPath(PuntReason::Arp);
        let mut recs = Vec::new();
        let mut p = Pairer::default();
        // A slow record before its worker record; one for another port; one never paired.
        p.slow(&recs, s(0, 1, "first"));
        p.slow(&recs, s(1, 1, "other_port"));
        for r in [
            w(0, 1, punt),
            w(0, 2, Verdict::Drop(DropReason::NoRoute)),
            w(0, 1, punt),
            w(0, 3, punt),
        ] {
            recs.push(r);
            p.worker(&recs, recs.len() - 1);
        }
        assert_eq!(p.waiting(), 2);
        p.slow(&recs, s(0, 1, "second"));
        assert_eq!(p.waiting(), 1);
        let got: Vec<Option<&str>> = p.outcomes.iter().map(|o| o.map(|o| o.action)).collect();
        assert_eq!(got, [Some("first"), None, Some("second"), None]);
    }
}
