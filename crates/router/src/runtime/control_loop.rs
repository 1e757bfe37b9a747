//! The control loop, on the main lcore while the workers run.
//!
//! It sleeps on its inputs (routes-file events, signals, neighbours learned by the slow
//! path, FPM batches) and a tick for the periodic work (RCU reclamation, the fallback file
//! check, stats lines, the run's duration, watching the threads). It must never touch a
//! port or an mbuf: tables go to the workers only through the RCU publish.

use std::time::{Duration, Instant};

use crossbeam_channel::Receiver;

use super::workers::Threads;
use super::Stop;
use crate::control::{ControlPlane, WATCH_INTERVAL};
use crate::counters::WorkerCounters;
use crate::error::ThreadDeath;
use crate::report::{next_tick, Reporter};
use crate::signals::SignalFlags;
use crate::slowpath::SlowPathEvent;
use crate::spec::RuntimeSpec;
use crate::watch::{ControlInput, FileWatcher, SignalWaker};
use std::sync::Arc;

/// Longest sleep of the control loop between its periodic jobs.
const CONTROL_TICK: Duration = Duration::from_millis(5);

/// What the control loop waits on besides its tick.
pub(super) struct Inputs {
    pub events: Receiver<SlowPathEvent>,
    pub fpm: Receiver<crate::fpm::Batch>,
}

/// The loop's view of the router.
pub(super) struct ControlLoop<'a> {
    pub spec: &'a RuntimeSpec,
    pub signals: &'a SignalFlags,
    pub stop: &'a Stop,
    pub control: &'a mut ControlPlane,
    pub inputs: &'a mut Inputs,
    pub threads: &'a Threads,
    pub counters: &'a [Arc<WorkerCounters>],
    pub reporter: &'a mut Reporter,
    pub startup_check: &'a mut crate::cpif::startup::StartupCheck,
    pub started: Instant,
}

/// The loop's own wake-ups: the routes file's watcher and the signal waker.
struct Wakers {
    rx: Receiver<ControlInput>,
    watcher: Option<FileWatcher>,
    _signals: Option<SignalWaker>,
}

impl ControlLoop<'_> {
    /// Runs until a stop is requested (signal or `stop`), the spec's duration passes, or
    /// a thread dies (returned).
    pub fn run(mut self) -> Option<ThreadDeath> {
        let wakers = self.start_wakers();
        let mut next_report = self.spec.stats_interval.map(|i| self.started + i);
        loop {
            self.wait_for_input(&wakers, next_report);
            self.control.fpm_poll();
            let hup = self.signals.take_reload();
            if hup {
                self.startup_check.on_reload(self.control);
            }
            self.control.poll(hup);
            if self.signals.stop_requested() || self.stop.requested() {
                return None;
            }
            if let Some(d) = self.threads.first_death() {
                eprintln!("mplsrouter: error: {d} while the router was running; stopping");
                return Some(d);
            }
            if self
                .spec
                .duration
                .is_some_and(|d| self.started.elapsed() >= d)
            {
                return None;
            }
            self.report(&mut next_report);
        }
    }

    /// The routes file's watcher (else the tick's fallback check) and the signal waker
    /// (else the tick polls the signal flags).
    fn start_wakers(&mut self) -> Wakers {
        let (input_tx, rx) = crossbeam_channel::bounded::<ControlInput>(64);
        let watcher = self.control.routes_path().and_then(|p| {
            FileWatcher::start(p, input_tx.clone())
                .inspect_err(|e| {
                    eprintln!(
                        "mplsrouter: cannot watch {} ({e}); checking it every {} ms",
                        p.display(),
                        WATCH_INTERVAL.as_millis()
                    )
                })
                .ok()
        });
        self.control
            .set_watched(watcher.as_ref().map(FileWatcher::status));
        let signals = match SignalWaker::start(input_tx) {
            Ok(w) => Some(w),
            Err(e) => {
                eprintln!("mplsrouter: cannot wake on signals ({e}); polling them every tick");
                None
            }
        };
        Wakers {
            rx,
            watcher,
            _signals: signals,
        }
    }

    /// When the loop must wake at the latest: the tick, the next stats line, the end of
    /// the run, an FPM deadline.
    fn wake_at(&self, now: Instant, next_report: Option<Instant>) -> Instant {
        let mut wake = now + CONTROL_TICK;
        if let Some(at) = next_report {
            wake = wake.min(at);
        }
        if let Some(d) = self.spec.duration {
            wake = wake.min(self.started + d);
        }
        if let Some(at) = self.control.fpm_deadline() {
            wake = wake.min(at);
        }
        wake
    }

    /// Sleeps until an input arrives or [`Self::wake_at`], and hands the input to the
    /// control plane.
    fn wait_for_input(&mut self, wakers: &Wakers, next_report: Option<Instant>) {
        let now = Instant::now();
        let wake = self.wake_at(now, next_report);
        let inputs = &mut *self.inputs;
        let mut events_closed = false;
        crossbeam_channel::select! {
            recv(wakers.rx) -> first => {
                // A burst of file events (an editor's save, a storm of writes) is one
                // reload: the file is read after the last event queued so far.
                let file = first
                    .into_iter()
                    .chain(wakers.rx.try_iter())
                    .any(|i| i == ControlInput::RoutesFile);
                if file {
                    let last = wakers.watcher.as_ref().and_then(|w| w.last_event());
                    self.control.routes_file_changed(last);
                }
            }
            recv(inputs.events) -> ev => match ev {
                // One table for all the updates queued so far.
                Ok(ev) => self
                    .control
                    .slow_path_events(std::iter::once(ev).chain(inputs.events.try_iter())),
                Err(_) => events_closed = true,
            },
            recv(inputs.fpm) -> b => match b {
                Ok(b) => {
                    self.control.fpm_receive(b);
                    for more in inputs.fpm.try_iter() {
                        self.control.fpm_receive(more);
                    }
                }
                Err(_) => inputs.fpm = crossbeam_channel::never(),
            },
            default(wake.saturating_duration_since(now)) => {}
        }
        if events_closed {
            // The slow path is gone (the thread watch reports it); do not spin on its
            // closed channel.
            inputs.events = crossbeam_channel::never();
        }
    }

    /// The counters line, when one is due.
    fn report(&mut self, next_report: &mut Option<Instant>) {
        if let (Some(at), Some(iv)) = (*next_report, self.spec.stats_interval) {
            let now = Instant::now();
            if now >= at {
                self.reporter.line(self.started.elapsed(), self.counters);
                *next_report = Some(next_tick(at, iv, now));
            }
        }
    }
}
