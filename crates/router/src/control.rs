//! The control side: loads the routes, watches the file, applies reloads and learned
//! neighbors, and publishes complete new tables through RCU.
//!
//! Invalid input never reaches the data path: a routes file that does not parse,
//! validate or compile leaves the running table in place; the error is printed and
//! counted. Every publish is a whole new snapshot (the data path never sees a
//! half-built table); the old one is freed once every online reader has moved on.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use config::routes::RouteSet;
use config::startup::PortIface;
use config::{ConfigError, ReloadOutcome, ReloadState};
use net::fib::{Fib, FibDelta};
use net::pipeline::LocalAddrs;
use net::rcu::Rcu;

use crate::learned::Learned;
use crate::metrics::ControlStats;
use crate::slowpath::{NbrAddr, SlowPathEvent, StaticNeighbors};
use crate::watch::WatchStatus;

/// How often the routes file's inode, mtime and size are checked: the fallback when
/// inotify misses a change (see `watch`).
pub const WATCH_INTERVAL: Duration = Duration::from_millis(10);

/// How long a changed signature must hold before the periodic check reloads a file that
/// inotify does not cover (no inotify, or a symlink into a directory not watched): a
/// writer that truncates the file and then stalls would otherwise have its empty or
/// half-written file read. A writer that stalls longer than this mid-file can still have
/// a prefix read there; where inotify covers the file, the periodic check never reads it
/// (only the writer's close or rename does), so no stall is too long.
const SETTLE: Duration = Duration::from_millis(1000);

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
    learned: Learned,
    statics: Arc<StaticNeighbors>,
    generation: u64,
    rcu: Arc<Rcu<Fib>>,
    stats: Arc<ControlStats>,
    sig: Option<FileSig>,
    /// What inotify covers. Where it covers the file, the periodic check leaves changes
    /// to the close and rename events: a file a writer still holds open is never read.
    watched: Option<WatchStatus>,
    /// The last signature found covered by inotify (saves resolving the path each tick).
    covered: Option<FileSig>,
    /// A new signature the periodic check saw, and since when, while it waits.
    pending: Option<(Option<FileSig>, Instant)>,
    last_check: Instant,
    /// When the last read of the routes file started.
    last_read: Option<Instant>,
    missing_reported: bool,
    /// Routes from FRR's zebra, when the `fpm:` section is on.
    fpm: Option<crate::fpm::FpmControl>,
    /// What `show` needs and the table cannot say (sources, learning times).
    book: Arc<crate::ctlsock::SourceBook>,
    /// The router's addresses once the ports' addresses changed while running: stamped on
    /// every snapshot published after (`None`: the pipelines' startup view holds).
    local: Option<Arc<LocalAddrs>>,
}

/// The MAC each port answers to (by port id) and the router's IPv4 and IPv6 addresses
/// (each port's link-local one derived from its MAC unless configured), for the
/// pipeline's input checks.
pub fn local_addrs(ports: &[PortIface]) -> LocalAddrs {
    let mut macs = vec![[0u8; 6]; ports.iter().map(|p| p.id as usize + 1).max().unwrap_or(0)];
    for p in ports {
        macs[p.id as usize] = p.mac;
    }
    let addrs = ports.iter().flat_map(|p| p.addresses.iter());
    let addrs6 = ports
        .iter()
        .flat_map(|p| p.addresses6.iter().map(|a| (p.id, a.addr.to_be_bytes())));
    LocalAddrs::new(&macs, addrs.map(|a| a.addr.to_be_bytes())).with_ipv6(addrs6)
}

/// Tables for `ports` without a routes file: their connected and local routes.
fn connected_only(ports: &[PortIface], generation: u64) -> Result<Fib, ConfigError> {
    let set = RouteSet {
        ports_checked: true,
        ..RouteSet::default()
    };
    config::compile(&set, ports, generation).map_err(|e| {
        ConfigError::Invalid(config::Diagnostics(vec![config::Diagnostic {
            file: PathBuf::from("<connected routes>"),
            line: 1,
            col: 1,
            path: String::new(),
            message: e.to_string(),
            hint: None,
        }]))
    })
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
            None => (None, connected_only(&ports, 1)?),
        };
        stats.record_reload(true, t.elapsed().as_secs_f64());
        stats.set_fib(1, &fib.stats());
        let sig = reload.as_ref().and_then(|r| file_sig(r.path()));
        // The rcu is created by the caller from the returned table; a placeholder until then.
        let rcu = Arc::new(Rcu::new(Fib::empty(), 1));
        let cp = ControlPlane {
            reload,
            ports,
            learned: Learned::default(),
            statics: Arc::default(),
            generation: 1,
            rcu,
            stats,
            sig,
            watched: None,
            covered: None,
            pending: None,
            last_check: Instant::now(),
            last_read: None,
            missing_reported: false,
            fpm: None,
            book: Arc::default(),
            local: None,
        };
        cp.set_statics();
        Ok((cp, fib))
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

    /// What inotify watches (`None`: nothing, the periodic check alone finds changes).
    pub fn set_watched(&mut self, watched: Option<WatchStatus>) {
        self.watched = watched;
    }

    /// Whether inotify reports the close and rename events of the file `path` names
    /// now (resolving symlinks: a swap can move it to a directory not watched).
    fn covered(&mut self, path: &Path, sig: Option<FileSig>) -> bool {
        let Some(w) = self.watched.as_ref().filter(|w| w.alive()) else {
            return false;
        };
        // The signature follows symlinks: a swap changes the inode, and is resolved anew.
        if sig.is_some() && self.covered == sig {
            return true;
        }
        let covered = std::fs::canonicalize(path).is_ok_and(|real| w.covers(&real));
        self.covered = if covered { sig } else { None };
        covered
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
        if !force && self.covered(&path, sig) {
            // The writer's close (IN_CLOSE_WRITE) or rename (IN_MOVED_TO) reloads it;
            // reading now could publish what a writer that still holds it has written
            // so far.
            self.pending = None;
            return;
        }
        if !force {
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

    /// The ports' addresses changed: recompiles the connected and local routes (and the
    /// routes file, checked against the new subnets) and publishes them with the router's
    /// new addresses. On error nothing changes and the diagnostics come back.
    pub fn set_ports(&mut self, ports: Vec<PortIface>) -> Result<(), String> {
        let fib = match self.reload.as_mut() {
            Some(st) => match st.reload_with_ports(ports.clone()) {
                Ok(ReloadOutcome::Updated { fib, .. }) => *fib,
                Ok(ReloadOutcome::Unchanged { .. }) => {
                    unreachable!("a reload against new ports compiles in full")
                }
                Err(e) => return Err(e.to_string()),
            },
            None => connected_only(&ports, self.generation + 1).map_err(|e| e.to_string())?,
        };
        let old = std::mem::replace(&mut self.ports, ports);
        let old_local = self.local.replace(Arc::new(local_addrs(&self.ports)));
        if let Err(e) = self.publish(fib) {
            // The routes file's state has moved on; the running table has not.
            self.ports = old;
            self.local = old_local;
            return Err(e.to_string());
        }
        if let Some(st) = self.reload.as_mut() {
            st.settle();
        }
        println!(
            "reload: generation {} live (the ports' addresses changed; connected, local and \
             file routes recompiled)",
            self.generation
        );
        Ok(())
    }

    /// Neighbors the slow path learned or lost (a batch of its events): one new table
    /// for all of them, or none when nothing changes.
    pub fn slow_path_events(&mut self, events: impl IntoIterator<Item = SlowPathEvent>) {
        let (mut delta, mut changed) = (None, false);
        for ev in events {
            let d = delta.get_or_insert_with(|| self.rcu.with_current(|f| f.derive()));
            let r = match ev {
                SlowPathEvent::NeighborLearned { port, ip, mac } => {
                    let is_static = self.statics.contains(port, ip);
                    self.learned
                        .learn(d, &self.ports, is_static, (port, ip, mac))
                }
                SlowPathEvent::NeighborGone { port, ip } => self.learned.forget(d, port, ip),
                SlowPathEvent::Neighbor6Learned { port, ip, mac } => {
                    let n = NbrAddr::v6(ip);
                    let is_static = self.statics.get6(port, u128::from_be_bytes(ip)).is_some();
                    self.learned
                        .learn_addr(d, &self.ports, is_static, (port, n, mac))
                }
                SlowPathEvent::Neighbor6Gone { port, ip } => {
                    self.learned.forget_addr(d, port, NbrAddr::v6(ip))
                }
            };
            match r {
                Ok(true) => {
                    changed = true;
                    match ev {
                        SlowPathEvent::NeighborLearned { port, ip, .. } => {
                            self.book.learned(port, ip, Instant::now())
                        }
                        SlowPathEvent::NeighborGone { port, ip } => self.book.forgotten(port, ip),
                        SlowPathEvent::Neighbor6Learned { port, ip, .. } => {
                            self.book
                                .learned6(port, u128::from_be_bytes(ip), Instant::now())
                        }
                        SlowPathEvent::Neighbor6Gone { port, ip } => {
                            self.book.forgotten6(port, u128::from_be_bytes(ip))
                        }
                    }
                }
                Ok(false) => {}
                Err(e) => eprintln!("mplsrouter: could not apply {ev:?}: {e}"),
            }
        }
        if let Some(d) = delta.filter(|_| changed) {
            self.publish_delta(d);
        }
    }

    /// The source book the control socket reads.
    pub fn source_book(&self) -> Arc<crate::ctlsock::SourceBook> {
        self.book.clone()
    }

    /// The routes file's neighbors, shared with the slow path.
    pub fn static_neighbors(&self) -> Arc<StaticNeighbors> {
        self.statics.clone()
    }

    fn set_statics(&self) {
        let set = self.reload.as_ref().and_then(|r| r.current());
        let entries = set.into_iter().flat_map(|s| &s.neighbors);
        self.statics.set(entries.map(|n| ((n.port, n.ip), n.mac)));
        let set = self.reload.as_ref().and_then(|r| r.current());
        let entries6 = set.into_iter().flat_map(|s| &s.neighbors6);
        self.statics.set6(entries6.map(|n| ((n.port, n.ip), n.mac)));
    }

    /// Publishes a table from the reload state, with the FPM routes the file does not
    /// name and the neighbors learned so far.
    fn publish(&mut self, fib: Fib) -> Result<(), net::fib::FibError> {
        self.set_statics();
        let mut delta = fib.derive();
        if let Some(f) = self.fpm.as_mut() {
            let neighbors = self.reload.as_ref().and_then(|r| r.current());
            f.set_file_view(
                &fib,
                neighbors.map_or(&[][..], |s| &s.neighbors),
                neighbors.map_or(&[][..], |s| &s.neighbors6),
            );
            f.reapply_all(&mut delta, &self.learned);
        }
        let statics = self.statics.clone();
        self.learned
            .reapply(&mut delta, &self.ports, |p, n| match n {
                NbrAddr::V4(ip) => statics.contains(p, ip),
                NbrAddr::V6(ip) => statics.get6(p, ip).is_some(),
            })?;
        self.publish_delta(delta);
        Ok(())
    }

    /// Turns FPM on: `f` gets the running table as the file's view.
    pub fn attach_fpm(&mut self, mut f: crate::fpm::FpmControl) {
        let set = self.reload.as_ref().and_then(|r| r.current());
        let neighbors = set.map_or(&[][..], |s| &s.neighbors);
        let neighbors6 = set.map_or(&[][..], |s| &s.neighbors6);
        self.rcu
            .with_current(|fib| f.set_file_view(fib, neighbors, neighbors6));
        f.set_book(self.book.clone());
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
        let mut fib = delta.build(generation);
        if let Some(l) = &self.local {
            fib.set_local(l.clone());
        }
        self.stats.set_fib(generation, &fib.stats());
        self.generation = generation;
        self.rcu.publish(fib);
        self.rcu.reclaim();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::sync::atomic::AtomicBool;

    const ROUTES: &str = "neighbors:\n  - {ip: 10.0.1.2, mac: \"02:00:00:00:01:02\"}\nipv4:\n";

    fn routes(n: u32) -> String {
        let mut s = ROUTES.to_string();
        for i in 0..n {
            s += &format!("  - {{prefix: 20.0.{i}.0/24, via: 10.0.1.2}}\n");
        }
        s
    }

    fn plane(path: &Path) -> ControlPlane {
        let cfg = config::StartupConfig::parse(
            Path::new("/x/r.yaml"),
            "ports:\n  - {name: in, vdev: net_null0, addresses: [10.0.0.1/24]}\n  \
             - {name: out, vdev: net_null1, addresses: [10.0.1.1/24]}\n",
        )
        .unwrap();
        let ctx = config::RouteContext::from_startup(&cfg, |id| [2, 0, 0, 0, 0, id as u8]);
        let (mut c, fib) =
            ControlPlane::load(Some(path.to_path_buf()), ctx, Arc::default()).unwrap();
        c.attach(Arc::new(Rcu::new(fib, 1)));
        c
    }

    /// The periodic check runs for `d`, as the control loop would run it.
    fn poll_for(c: &mut ControlPlane, d: Duration) {
        let end = Instant::now() + d;
        while Instant::now() < end {
            c.poll(false);
            std::thread::sleep(WATCH_INTERVAL);
        }
    }

    fn routes_live(c: &ControlPlane) -> usize {
        c.rcu.with_current(|f| f.stats().ipv4_routes)
    }

    #[test]
    fn changed_port_addresses_are_published_with_the_tables_or_refused_whole() {
        let dir = std::env::temp_dir().join(format!("control-ports-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("routes.yaml");
        std::fs::write(&path, routes(2)).unwrap();
        let mut c = plane(&path);
        c.poll(true);
        let old = c.ports.clone();
        let new_addr = 0x0a00_0201; // 10.0.2.1
        let has = |c: &ControlPlane| {
            c.rcu.with_current(|f| {
                (
                    f.lookup_ipv4(new_addr + 4).is_some(),
                    f.local().is_some_and(|l| l.is_own(new_addr)),
                    f.stats().ipv4_routes,
                )
            })
        };
        assert_eq!(has(&c), (false, false, routes_live(&c)));
        let before = routes_live(&c);

        // An address added to port 0: its connected and local routes, and the router's
        // addresses, in the next snapshot; the file's routes stay.
        let mut added = old.clone();
        added[0].addresses.push(config::types::Cidr {
            addr: new_addr,
            len: 24,
        });
        c.set_ports(added).unwrap();
        assert_eq!(c.generation, 2);
        assert_eq!(has(&c), (true, true, before + 2));

        // Port 1's subnet removed: the file's next hop 10.0.1.2 is on no port any more,
        // so the change is refused with the diagnostics, and nothing changes.
        let mut removed = old.clone();
        removed[1].addresses.clear();
        let e = c.set_ports(removed).unwrap_err();
        assert!(e.contains("10.0.1.2"), "{e}");
        assert_eq!(c.generation, 2);
        assert_eq!(has(&c), (true, true, before + 2));

        // Back to the startup addresses.
        c.set_ports(old).unwrap();
        assert_eq!(has(&c), (false, false, before));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_file_held_open_by_a_writer_is_not_read_where_inotify_covers_it() {
        let dir = std::env::temp_dir().join(format!("control-held-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("routes.yaml");
        std::fs::write(&path, routes(40)).unwrap();
        let mut c = plane(&path);
        let full = routes_live(&c);
        let alive = Arc::new(AtomicBool::new(true));
        let real_dir = std::fs::canonicalize(&dir).unwrap();
        c.set_watched(Some(WatchStatus::new(vec![real_dir], alive.clone())));

        // A writer truncates the file, writes a valid prefix and stalls, holding it open.
        let text = routes(30);
        let head = &text[..ROUTES.len() + 40];
        let head = &head[..head.rfind('\n').unwrap() + 1];
        let tail = &text[head.len()..];
        let mut w = std::fs::File::create(&path).unwrap();
        w.write_all(head.as_bytes()).unwrap();
        // Far past the settle delay: nothing is read while the writer holds the file.
        poll_for(&mut c, SETTLE + Duration::from_millis(300));
        assert_eq!(c.generation, 1, "a half-written file was published");
        assert_eq!(routes_live(&c), full);
        w.write_all(tail.as_bytes()).unwrap();
        drop(w);
        // Its close event reloads the whole file.
        c.routes_file_changed(Some(Instant::now()));
        assert_eq!(c.generation, 2);
        assert_eq!(routes_live(&c), full - 10);

        // With the watch gone, the periodic check reads a change once it has settled.
        alive.store(false, std::sync::atomic::Ordering::Relaxed);
        std::fs::write(&path, routes(20)).unwrap();
        poll_for(&mut c, SETTLE / 2);
        assert_eq!(c.generation, 2, "read before the settle delay");
        poll_for(&mut c, SETTLE);
        assert_eq!(c.generation, 3);
        assert_eq!(routes_live(&c), full - 20);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[cfg(test)]
mod local_addrs_tests {
    use super::*;
    use config::types::Cidr6;

    fn v6(s: &str) -> [u8; 16] {
        s.parse::<std::net::Ipv6Addr>().unwrap().octets()
    }

    #[test]
    fn ipv6_addresses_and_link_locals_reach_the_pipeline() {
        let port = |id: u16, mac, addrs6: &[&str]| PortIface {
            id,
            name: format!("p{id}"),
            mac,
            mtu: 1500,
            addresses: Vec::new(),
            addresses6: addrs6
                .iter()
                .map(|a| Cidr6 {
                    addr: u128::from_be_bytes(v6(a)),
                    len: 64,
                })
                .collect(),
        };
        let l = local_addrs(&[
            port(0, [2, 0, 0, 0, 0, 1], &["2001:db8::1"]),
            port(1, [2, 0, 0, 0, 0, 2], &["fe80::1", "2001:db8:1::1"]),
        ]);
        let own = |s| l.is_own6(u128::from_be_bytes(v6(s)));
        assert!(own("2001:db8::1") && own("2001:db8:1::1") && own("fe80::1"));
        assert!(!own("2001:db8::2"));
        // EUI-64 from the MAC where none is configured (RFC 4291 appendix A).
        assert_eq!(l.link_local(0), Some(v6("fe80::ff:fe00:1")));
        assert_eq!(l.link_local(1), Some(v6("fe80::1")));
    }
}
