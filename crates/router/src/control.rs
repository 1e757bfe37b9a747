//! The control side: loads the routes, watches the file, applies reloads and learned
//! neighbors, and publishes complete new tables through RCU.
//!
//! Invalid input never reaches the data path: a routes file that does not parse,
//! validate or compile leaves the running table in place; the error is printed and
//! counted. Every publish is a whole new snapshot (the data path never sees a
//! half-built table); the old one is freed once every online reader has moved on.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use config::routes::RouteSet;
use config::startup::PortIface;
use config::{ConfigError, ReloadOutcome, ReloadState};
use net::fib::{Adjacency, Fib, FibDelta, Ipv4Route, NextHop, RouteTarget, TtlMode};
use net::rcu::Rcu;

use crate::metrics::ControlStats;

/// How often the routes file's inode, mtime and size are checked: the fallback when
/// inotify misses a change (see `watch`).
pub const WATCH_INTERVAL: Duration = Duration::from_millis(10);

/// How long a changed signature must hold before the periodic check reloads, while
/// inotify watches the file: a writer that truncates the file and then stalls would
/// otherwise have its empty or half-written file read.
const SETTLE: Duration = Duration::from_millis(100);

/// What identifies one version of a file: editors that save by rename change the inode,
/// in-place writers change mtime or size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct FileSig {
    ino: u64,
    mtime: SystemTime,
    len: u64,
}

fn file_sig(path: &Path) -> Option<FileSig> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).ok()?;
    Some(FileSig {
        ino: m.ino(),
        mtime: m.modified().ok()?,
        len: m.len(),
    })
}

/// Owner of the routes and of every publish.
pub struct ControlPlane {
    reload: Option<ReloadState>,
    ports: Vec<PortIface>,
    learned: BTreeMap<(u16, u32), [u8; 6]>,
    generation: u64,
    rcu: Arc<Rcu<Fib>>,
    stats: Arc<ControlStats>,
    sig: Option<FileSig>,
    /// Set while inotify watches the file: the periodic check then waits until a new
    /// signature has held for [`SETTLE`], so it does not read a file that is still
    /// being written in place (the write's close event reloads it at once).
    watched: bool,
    /// A new signature the periodic check saw, and since when, while it waits.
    pending: Option<(Option<FileSig>, Instant)>,
    last_check: Instant,
    /// When the last read of the routes file started.
    last_read: Option<Instant>,
    missing_reported: bool,
    /// Routes from FRR's zebra, when the `fpm:` section is on.
    fpm: Option<crate::fpm::FpmControl>,
}

impl ControlPlane {
    /// Loads the routes (or, without a routes file, only the connected and local routes)
    /// and returns the control plane with the first table, not yet published.
    pub fn load(
        routes: Option<PathBuf>,
        ctx: config::RouteContext,
        stats: Arc<ControlStats>,
    ) -> Result<(ControlPlane, Fib), ConfigError> {
        let ports = ctx.ports.clone().unwrap_or_default();
        let t = Instant::now();
        let (reload, fib) = match routes {
            Some(p) => {
                let mut st = ReloadState::new(p, ctx);
                match st.reload()? {
                    ReloadOutcome::Updated { fib, .. } => (Some(st), *fib),
                    ReloadOutcome::Unchanged { .. } => {
                        unreachable!("the first load always yields a table")
                    }
                }
            }
            None => {
                let set = RouteSet {
                    ports_checked: true,
                    ..RouteSet::default()
                };
                let fib = config::compile(&set, &ports, 1).map_err(|e| {
                    ConfigError::Invalid(config::Diagnostics(vec![config::Diagnostic {
                        file: PathBuf::from("<connected routes>"),
                        line: 1,
                        col: 1,
                        path: String::new(),
                        message: e.to_string(),
                        hint: None,
                    }]))
                })?;
                (None, fib)
            }
        };
        stats.record_reload(true, t.elapsed().as_secs_f64());
        stats.set_fib(1, &fib.stats());
        let sig = reload.as_ref().and_then(|r| file_sig(r.path()));
        // The rcu is created by the caller from the returned table; a placeholder until then.
        let rcu = Arc::new(Rcu::new(Fib::empty(), 1));
        Ok((
            ControlPlane {
                reload,
                ports,
                learned: BTreeMap::new(),
                generation: 1,
                rcu,
                stats,
                sig,
                watched: false,
                pending: None,
                last_check: Instant::now(),
                last_read: None,
                missing_reported: false,
                fpm: None,
            },
            fib,
        ))
    }

    /// Attaches the RCU the first table was published in.
    pub fn attach(&mut self, rcu: Arc<Rcu<Fib>>) {
        self.rcu = rcu;
    }

    /// The routes file, if there is one.
    pub fn routes_path(&self) -> Option<&Path> {
        self.reload.as_ref().map(|r| r.path())
    }

    /// Periodic work: the fallback file check, SIGHUP reload, reclamation. `force`
    /// reloads now.
    pub fn poll(&mut self, force: bool) {
        self.rcu.reclaim();
        self.stats.rcu_pending.store(
            self.rcu.pending() as u64,
            std::sync::atomic::Ordering::Relaxed,
        );
        if self.reload.is_none() || (!force && self.last_check.elapsed() < WATCH_INTERVAL) {
            return;
        }
        self.check_file(force);
    }

    /// Whether inotify watches the routes file (see `pending`).
    pub fn set_watched(&mut self, watched: bool) {
        self.watched = watched;
    }

    /// The file watcher saw the routes file written, replaced or removed (the last time
    /// at `event`). Reloads even if inode, mtime and size look the same (two writes of
    /// equal length within one timestamp tick do), unless a read that started after the
    /// event, by the periodic check, has already seen it.
    pub fn routes_file_changed(&mut self, event: Option<Instant>) {
        if self.reload.is_some() {
            let seen = matches!((self.last_read, event), (Some(r), Some(e)) if r > e);
            self.check_file(!seen);
        }
    }

    fn check_file(&mut self, force: bool) {
        self.last_check = Instant::now();
        let path = self
            .reload
            .as_ref()
            .map(|r| r.path().to_path_buf())
            .unwrap_or_default();
        let sig = file_sig(&path);
        if sig.is_none() {
            if !self.missing_reported {
                eprintln!(
                    "mplsrouter: routes file {} is gone; still serving generation {}",
                    path.display(),
                    self.generation
                );
                self.missing_reported = true;
            }
            return;
        }
        self.missing_reported = false;
        if sig == self.sig {
            // Back to the known version: what the check saw before is stale (a later
            // truncation can bring back the very signature it saw mid-write).
            self.pending = None;
            if !force {
                return;
            }
        }
        if !force && self.watched {
            match self.pending {
                Some((p, since)) if p == sig && since.elapsed() >= SETTLE => {}
                Some((p, _)) if p == sig => return,
                _ => {
                    self.pending = Some((sig, Instant::now()));
                    return;
                }
            }
        }
        self.sig = sig;
        self.pending = None;
        self.reload_now();
    }

    fn reload_now(&mut self) {
        let t = Instant::now();
        let Some(st) = self.reload.as_mut() else {
            return;
        };
        self.last_read = Some(t);
        match st.reload() {
            Ok(ReloadOutcome::Unchanged { .. }) => {
                self.stats.record_reload(true, t.elapsed().as_secs_f64());
            }
            Ok(ReloadOutcome::Updated { fib, diff, timings }) => match self.publish(*fib) {
                Ok(()) => {
                    let secs = t.elapsed().as_secs_f64();
                    if let Some(st) = self.reload.as_mut() {
                        st.settle();
                    }
                    self.stats.record_reload(true, secs);
                    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
                    let steps = timings.read + timings.check + timings.diff + timings.compile;
                    println!(
                        "reload: generation {} live in {:.1} ms (ipv4 +{} -{} ~{}, labels +{} -{} ~{}; \
                         read {:.1} check {:.1} diff {:.1} {} {:.1} publish {:.1} ms)",
                        self.generation,
                        secs * 1e3,
                        diff.ipv4_added,
                        diff.ipv4_removed,
                        diff.ipv4_changed,
                        diff.labels_added,
                        diff.labels_removed,
                        diff.labels_changed,
                        ms(timings.read),
                        ms(timings.check),
                        ms(timings.diff),
                        if timings.derived { "derive" } else { "compile" },
                        ms(timings.compile),
                        (secs * 1e3 - ms(steps)).max(0.0),
                    );
                }
                Err(e) => {
                    self.stats.record_reload(false, t.elapsed().as_secs_f64());
                    eprintln!(
                        "reload rejected, still serving generation {}: {e}",
                        self.generation
                    );
                }
            },
            Err(e) => {
                self.stats.record_reload(false, t.elapsed().as_secs_f64());
                eprintln!(
                    "reload rejected, still serving generation {}:\n{e}",
                    self.generation
                );
            }
        }
    }

    /// A neighbor learned by ARP: republish with its MAC.
    pub fn neighbor_learned(&mut self, port: u16, ip: u32, mac: [u8; 6]) {
        if self.learned.get(&(port, ip)) == Some(&mac) {
            return;
        }
        self.learned.insert((port, ip), mac);
        let mut delta = self.rcu.with_current(|f| f.derive());
        if let Err(e) = self.learn_into(&mut delta, port, ip, mac) {
            eprintln!(
                "mplsrouter: could not add neighbor {}: {e}",
                std::net::Ipv4Addr::from(ip)
            );
            return;
        }
        self.publish_delta(delta);
    }

    /// Publishes a table from the reload state, with the FPM routes the file does not
    /// name and the neighbors learned so far.
    fn publish(&mut self, fib: Fib) -> Result<(), net::fib::FibError> {
        let mut delta = fib.derive();
        if let Some(f) = self.fpm.as_mut() {
            let neighbors = self.reload.as_ref().and_then(|r| r.current());
            f.set_file_view(&fib, neighbors.map_or(&[][..], |s| &s.neighbors));
            f.reapply_all(&mut delta, &self.learned);
        }
        let learned: Vec<_> = self
            .learned
            .iter()
            .map(|(&(p, ip), &mac)| (p, ip, mac))
            .collect();
        for (port, ip, mac) in learned {
            self.learn_into(&mut delta, port, ip, mac)?;
        }
        self.publish_delta(delta);
        Ok(())
    }

    /// Gives every adjacency towards `ip` on `port` its MAC, and routes `ip/32` to the
    /// neighbor unless the routes file routes that /32 itself (as the compiler does for
    /// static neighbors).
    fn learn_into(
        &self,
        delta: &mut FibDelta,
        port: u16,
        ip: u32,
        mac: [u8; 6],
    ) -> Result<(), net::fib::FibError> {
        let updates: Vec<(u32, Adjacency)> = delta
            .adjacencies()
            .iter()
            .enumerate()
            .filter(|(_, a)| {
                a.port == port && a.neighbor == ip.to_be_bytes() && a.dst_mac != Some(mac)
            })
            .map(|(i, a)| (i as u32, a.with_dst_mac(mac)))
            .collect();
        for (id, adj) in updates {
            delta.set_adjacency(id, adj)?;
        }
        let Some(iface) = self.ports.get(port as usize) else {
            return Ok(());
        };
        let host = delta.ipv4_route(ip, 32);
        let ours = match host.map(|r| r.target) {
            None => true,
            Some(RouteTarget::NextHop(NextHop::Adjacency(a))) => {
                let a = &delta.adjacencies()[a as usize];
                a.port == port && a.neighbor == ip.to_be_bytes() && a.labels().is_empty()
            }
            Some(_) => false,
        };
        if ours {
            let adj = delta.intern_adjacency(Adjacency::new(
                port,
                iface.mtu,
                ip.to_be_bytes(),
                Some(mac),
                iface.mac,
                &[],
            ));
            delta.replace_ipv4_route(
                ip,
                32,
                Ipv4Route {
                    target: RouteTarget::NextHop(NextHop::Adjacency(adj)),
                    ttl_mode: TtlMode::Uniform,
                },
            )?;
        }
        Ok(())
    }

    /// Turns FPM on: `f` gets the running table as the file's view.
    pub fn attach_fpm(&mut self, mut f: crate::fpm::FpmControl) {
        let set = self.reload.as_ref().and_then(|r| r.current());
        let neighbors = set.map_or(&[][..], |s| &s.neighbors);
        self.rcu.with_current(|fib| f.set_file_view(fib, neighbors));
        self.fpm = Some(f);
    }

    /// FPM changes from the listener; applied by [`Self::fpm_poll`] when due.
    pub fn fpm_receive(&mut self, batch: crate::fpm::Batch) {
        if let Some(f) = self.fpm.as_mut() {
            f.receive(batch, Instant::now());
        }
    }

    /// When FPM changes are due to be published.
    pub fn fpm_deadline(&self) -> Option<Instant> {
        self.fpm.as_ref().and_then(|f| f.deadline())
    }

    /// Publishes the FPM changes of the last interval as one new table.
    pub fn fpm_poll(&mut self) {
        let Some(f) = self.fpm.as_mut() else { return };
        let Some((changes, read_at)) = f.take_due(Instant::now()) else {
            return;
        };
        let mut delta = self.rcu.with_current(|fib| fib.derive());
        f.apply(&mut delta, &changes, &self.learned);
        self.publish_delta(delta);
        if let Some(f) = self.fpm.as_ref() {
            f.published(read_at);
        }
    }

    /// Stamps the next generation on `delta` and publishes it.
    fn publish_delta(&mut self, delta: FibDelta) {
        let generation = self.generation + 1;
        let fib = delta.build(generation);
        self.stats.set_fib(generation, &fib.stats());
        self.generation = generation;
        self.rcu.publish(fib);
        self.rcu.reclaim();
    }
}
