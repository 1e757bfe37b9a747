//! The FPM session as a pure state machine: bytes and time in, route changes out.
//!
//! - `connect`: zebra resends its whole table after every connect. Everything known is
//!   marked stale; what the new session sends again is unmarked. zebra sends no end
//!   marker, so the resync is over after `resync_settle` without a message, and not
//!   before `resync_min` after the connect (zebra resends in waves); then the stale
//!   routes are withdrawn (sweep). Routes that did not change emit nothing.
//! - `disconnect`: routes are kept for `hold_time`; a reconnect within it resyncs, else
//!   everything is withdrawn when it expires.
//! - Next-hop groups: routes that name one by id are re-resolved whenever it (or a
//!   member of it) changes; routes with inline next hops work without groups. Stale
//!   routes are not: zebra reuses ids for other next hops after a restart.
//!
//! Output is a list of [`Change`]s (key -> target or removal), drained by the caller,
//! plus [`Event`]s to log. It never does I/O and never reads a clock.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::error::{MsgError, ERROR_REASONS};
use crate::frame::{FrameDecoder, FrameError};
use crate::msg::{Key, Message, NexthopBody, Op, RouteBody, MESSAGE_KINDS};
use crate::netlink::{Limits, Messages};
use crate::ports::PortMap;
use crate::resolve::{resolve, Groups, Target};

/// Timers and limits of a session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionConfig {
    pub hold_time: Duration,
    pub resync_settle: Duration,
    /// The shortest resync: zebra resends in waves (its own routes at connect, each
    /// client daemon's when that daemon reconnects, ~10 s after a zebra restart), so a
    /// quiet gap alone must not end it.
    pub resync_min: Duration,
    pub limits: Limits,
}

/// One route to set (target) or withdraw (`None`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    pub key: Key,
    pub target: Option<Arc<Target>>,
}

/// Where the session is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// No connection and no routes.
    Idle,
    /// Connected, table being resent (stale routes not swept yet).
    Resyncing,
    /// Connected and in sync.
    Established,
    /// Connection lost; routes kept until the hold time ends.
    Holding,
}

impl State {
    pub fn as_str(self) -> &'static str {
        match self {
            State::Idle => "idle",
            State::Resyncing => "resyncing",
            State::Established => "established",
            State::Holding => "holding",
        }
    }
    pub const ALL: [State; 4] = [
        State::Idle,
        State::Resyncing,
        State::Established,
        State::Holding,
    ];
}

/// Something worth a log line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    Connected { stale: usize },
    ResyncDone { swept: usize, routes: usize },
    Disconnected { routes: usize, cut_frame: bool },
    HoldExpired { withdrawn: usize },
    FrameError(FrameError),
    Skipped(MsgError),
}

/// Counters; `messages` follow [`MESSAGE_KINDS`], `errors` follow [`ERROR_REASONS`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SessionStats {
    pub connects: u64,
    pub frames: u64,
    pub messages: [u64; MESSAGE_KINDS.len()],
    pub errors: [u64; ERROR_REASONS.len()],
    pub resyncs: u64,
    pub hold_withdrawals: u64,
    pub swept: u64,
}

impl SessionStats {
    fn error(&mut self, reason: &str) {
        if let Some(i) = ERROR_REASONS.iter().position(|&r| r == reason) {
            self.errors[i] += 1;
        }
    }
    /// The count of one error reason.
    pub fn errors_of(&self, reason: &str) -> u64 {
        ERROR_REASONS
            .iter()
            .position(|&r| r == reason)
            .map_or(0, |i| self.errors[i])
    }
}

struct Stored {
    body: Arc<RouteBody>,
    stale: bool,
    installed: Option<Arc<Target>>,
}

/// See the module docs.
pub struct Session {
    cfg: SessionConfig,
    ports: PortMap,
    decoder: FrameDecoder,
    routes: HashMap<Key, Stored>,
    groups: Groups,
    stale_groups: HashSet<u32>,
    /// Next-hop id -> routes naming it; member id -> groups holding it.
    users: HashMap<u32, HashSet<Key>>,
    parents: HashMap<u32, HashSet<u32>>,
    bodies: HashMap<Arc<RouteBody>, ()>,
    targets: HashMap<Arc<Target>, ()>,
    state: State,
    last_activity: Instant,
    connected_at: Instant,
    hold_until: Option<Instant>,
    changes: Vec<Change>,
    events: Vec<Event>,
    stats: SessionStats,
}

fn intern<T: std::hash::Hash + Eq>(map: &mut HashMap<Arc<T>, ()>, v: T) -> Arc<T> {
    if let Some((k, _)) = map.get_key_value(&v) {
        return k.clone();
    }
    let a = Arc::new(v);
    map.insert(a.clone(), ());
    a
}

impl Session {
    pub fn new(cfg: SessionConfig, ports: PortMap, now: Instant) -> Session {
        Session {
            cfg,
            ports,
            decoder: FrameDecoder::new(),
            routes: HashMap::new(),
            groups: HashMap::new(),
            stale_groups: HashSet::new(),
            users: HashMap::new(),
            parents: HashMap::new(),
            bodies: HashMap::new(),
            targets: HashMap::new(),
            state: State::Idle,
            last_activity: now,
            connected_at: now,
            hold_until: None,
            changes: Vec::new(),
            events: Vec::new(),
            stats: SessionStats::default(),
        }
    }

    pub fn state(&self) -> State {
        self.state
    }
    pub fn stats(&self) -> &SessionStats {
        &self.stats
    }
    /// Routes installed now: (IPv4 prefixes, IPv6 prefixes, labels).
    pub fn installed(&self) -> (usize, usize, usize) {
        let mut n = (0, 0, 0);
        for (k, s) in &self.routes {
            if s.installed.is_some() {
                match k {
                    Key::Ipv4 { .. } => n.0 += 1,
                    Key::Ipv6 { .. } => n.1 += 1,
                    Key::Label(_) => n.2 += 1,
                }
            }
        }
        n
    }

    /// Replaces the ifindex -> port map (a control interface was recreated with a new
    /// ifindex). Routes already installed keep their ports; zebra sends the routes over
    /// the new interface again, and those are resolved with this map.
    pub fn set_ports(&mut self, ports: PortMap) {
        self.ports = ports;
    }

    /// A new connection (replacing any previous one).
    pub fn connect(&mut self, now: Instant) {
        self.decoder.reset();
        self.stats.connects += 1;
        for s in self.routes.values_mut() {
            s.stale = true;
        }
        self.stale_groups = self.groups.keys().copied().collect();
        self.state = State::Resyncing;
        self.last_activity = now;
        self.connected_at = now;
        self.hold_until = None;
        self.events.push(Event::Connected {
            stale: self.routes.len(),
        });
    }

    /// The connection is gone (closed by zebra, or by us after a framing error).
    pub fn disconnect(&mut self, now: Instant) {
        if !matches!(self.state, State::Resyncing | State::Established) {
            return;
        }
        let cut = self.decoder.pending() > 0 && !self.decoder.failed();
        if cut {
            self.stats.error("truncated_frame");
        }
        self.decoder.reset();
        self.state = State::Holding;
        self.hold_until = Some(now + self.cfg.hold_time);
        self.events.push(Event::Disconnected {
            routes: self.routes.len(),
            cut_frame: cut,
        });
    }

    /// Bytes from the connection. A framing error is returned (and counted): the
    /// caller must close the connection and call [`Session::disconnect`].
    pub fn feed(&mut self, bytes: &[u8], now: Instant) -> Result<(), FrameError> {
        self.last_activity = now;
        self.decoder.push(bytes);
        loop {
            let frame = match self.decoder.next_frame() {
                Ok(Some(f)) => f,
                Ok(None) => return Ok(()),
                Err(e) => {
                    self.stats.error(e.reason());
                    self.events.push(Event::FrameError(e));
                    return Err(e);
                }
            };
            self.stats.frames += 1;
            let mut it = Messages::new(frame, self.cfg.limits);
            let msgs: Vec<_> = it.by_ref().collect();
            for _ in 0..it.unknown_attributes() {
                self.stats.error("unknown_attribute");
            }
            for m in msgs {
                match m {
                    Ok(m) => self.apply(m),
                    Err(e) => self.skipped(e),
                }
            }
        }
    }

    /// Runs the timers: the end of a resync, the end of the hold time.
    pub fn poll(&mut self, now: Instant) {
        if self.state == State::Resyncing && now >= self.resync_end() {
            self.sweep();
        }
        if self.state == State::Holding && self.hold_until.is_some_and(|t| now >= t) {
            self.withdraw_all();
        }
    }

    /// When [`Session::poll`] has something to do next.
    pub fn next_deadline(&self) -> Option<Instant> {
        match self.state {
            State::Resyncing => Some(self.resync_end()),
            State::Holding => self.hold_until,
            _ => None,
        }
    }

    /// When the current resync ends: quiet for `resync_settle`, and at least
    /// `resync_min` after the connect.
    fn resync_end(&self) -> Instant {
        (self.last_activity + self.cfg.resync_settle).max(self.connected_at + self.cfg.resync_min)
    }

    /// Changes since the last call, in order.
    pub fn take_changes(&mut self) -> Vec<Change> {
        std::mem::take(&mut self.changes)
    }

    /// Events since the last call.
    pub fn take_events(&mut self) -> Vec<Event> {
        std::mem::take(&mut self.events)
    }

    fn skipped(&mut self, e: MsgError) {
        self.stats.error(e.reason());
        self.events.push(Event::Skipped(e));
    }

    fn count(&mut self, m: &Message) {
        if let Some(i) = MESSAGE_KINDS.iter().position(|&k| k == m.kind()) {
            self.stats.messages[i] += 1;
        }
    }

    fn apply(&mut self, m: Message) {
        self.count(&m);
        match m {
            Message::Route {
                op: Op::New,
                key,
                body: Some(b),
            } => self.set_route(key, b),
            Message::Route { key, .. } => self.remove_route(key),
            Message::Nexthop {
                op: Op::New,
                id,
                body: Some(b),
            } => self.set_group(id, b),
            Message::Nexthop { id, .. } => self.remove_group(id),
            Message::Other(_) => {}
        }
    }

    fn set_route(&mut self, key: Key, body: RouteBody) {
        let body = intern(&mut self.bodies, body);
        let old = self.routes.insert(
            key,
            Stored {
                body: body.clone(),
                stale: false,
                installed: None,
            },
        );
        let installed = old.and_then(|o| {
            self.unuse(key, &o.body);
            o.installed
        });
        if let Some(s) = self.routes.get_mut(&key) {
            s.installed = installed;
        }
        if let RouteBody::Group(id) = *body {
            self.users.entry(id).or_default().insert(key);
        }
        self.refresh(key);
    }

    fn unuse(&mut self, key: Key, body: &RouteBody) {
        if let RouteBody::Group(id) = body {
            if let Some(u) = self.users.get_mut(id) {
                u.remove(&key);
                if u.is_empty() {
                    self.users.remove(id);
                }
            }
        }
    }

    fn remove_route(&mut self, key: Key) {
        if let Some(o) = self.routes.remove(&key) {
            self.unuse(key, &o.body);
            if o.installed.is_some() {
                self.changes.push(Change { key, target: None });
            }
        }
    }

    /// Resolves the stored route of `key` and emits what changed. A stale route keeps
    /// what it has: next-hop ids are not stable across zebra restarts, so the new
    /// session's object with the same id says nothing about the old route.
    fn refresh(&mut self, key: Key) {
        let Some(s) = self.routes.get(&key).filter(|s| !s.stale) else {
            return;
        };
        let result = resolve(key, &s.body, &self.groups, &self.ports);
        let installed = s.installed.clone();
        let new = match result {
            Ok(t) => Some(intern(&mut self.targets, t)),
            Err(e) => {
                self.skipped(e);
                None
            }
        };
        if new == installed {
            return;
        }
        if let Some(s) = self.routes.get_mut(&key) {
            s.installed = new.clone();
        }
        self.changes.push(Change { key, target: new });
    }

    /// Routes that depend on next-hop object `id`, directly or through a group.
    fn dependents(&self, id: u32) -> Vec<Key> {
        let mut keys: Vec<Key> = self.users.get(&id).into_iter().flatten().copied().collect();
        for p in self.parents.get(&id).into_iter().flatten() {
            keys.extend(self.users.get(p).into_iter().flatten().copied());
        }
        keys.sort_unstable();
        keys.dedup();
        keys
    }

    fn set_group(&mut self, id: u32, body: NexthopBody) {
        self.stale_groups.remove(&id);
        if let Some(NexthopBody::Group(old)) = self.groups.get(&id) {
            for (m, _) in old.clone() {
                if let Some(p) = self.parents.get_mut(&m) {
                    p.remove(&id);
                }
            }
        }
        if let NexthopBody::Group(members) = &body {
            for &(m, _) in members {
                self.parents.entry(m).or_default().insert(id);
            }
        }
        if self.groups.get(&id) == Some(&body) {
            return;
        }
        self.groups.insert(id, body);
        for k in self.dependents(id) {
            self.refresh(k);
        }
    }

    fn remove_group(&mut self, id: u32) {
        if self.groups.remove(&id).is_some() {
            for k in self.dependents(id) {
                self.refresh(k);
            }
        }
    }

    /// The resync is over: withdraw what the new session did not send again.
    fn sweep(&mut self) {
        let stale: Vec<Key> = self
            .routes
            .iter()
            .filter(|(_, s)| s.stale)
            .map(|(k, _)| *k)
            .collect();
        for &k in &stale {
            self.remove_route(k);
        }
        for id in std::mem::take(&mut self.stale_groups) {
            self.remove_group(id);
        }
        self.state = State::Established;
        self.stats.resyncs += 1;
        self.stats.swept += stale.len() as u64;
        self.events.push(Event::ResyncDone {
            swept: stale.len(),
            routes: self.routes.len(),
        });
    }

    /// The hold time ended without a new session: withdraw everything.
    fn withdraw_all(&mut self) {
        let mut n = 0;
        for (key, s) in self.routes.drain() {
            if s.installed.is_some() {
                self.changes.push(Change { key, target: None });
                n += 1;
            }
        }
        self.groups.clear();
        self.stale_groups.clear();
        self.users.clear();
        self.parents.clear();
        self.bodies.clear();
        self.targets.clear();
        self.state = State::Idle;
        self.hold_until = None;
        self.stats.hold_withdrawals += 1;
        self.events.push(Event::HoldExpired { withdrawn: n });
    }
}
