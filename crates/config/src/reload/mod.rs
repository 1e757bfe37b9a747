//! The pure half of live reload: turn a new routes file into a new [`Fib`], or refuse it
//! and keep the last good state.
//!
//! The runtime's control thread owns a [`ReloadState`]; on a file event or SIGHUP it
//! calls [`ReloadState::reload`] and publishes the returned `Fib` through `net::rcu`.
//! Nothing here does I/O beyond reading the routes file, and nothing is changed unless
//! the new file is valid and compiles.
//!
//! Reading: the file is compared with the last text as it is read, and only the
//! changed lines are kept (see [`source`]), as every changed run of lines ([`diff`]:
//! BGP-like churn changes lines all over the file, and one span from the first change to
//! the last would be nearly all of it); the last text is then edited in place, not
//! replaced, so a small edit of a large file costs one pass over the file and no copy.
//!
//! Diff: an edit confined to `routes_compact` lines is parsed and validated on its own
//! and patched into the last good [`RouteSet`] (see [`fast`]); any other change is fully
//! parsed and validated, then compared with the last good set. An unchanged set (a
//! comment edit, a rewrite with the same content) yields [`ReloadOutcome::Unchanged`]
//! and no new table. Otherwise the new `Fib` is derived from the last one when the
//! change is small (see [`derive`]): only the changed prefixes and labels are applied, in
//! time proportional to the edit; a large change, a neighbor change, or a change to the
//! prefixes the compiler adds itself falls back to a full [`routes::compile`].
//!
//! What a reload costs (a one-line edit and the soak's churn of a full view) is in
//! docs/measurements.md ("Live reload").

use std::path::{Path as FsPath, PathBuf};
use std::time::{Duration, Instant};

use net::fib::Fib;

mod derive;
mod diff;
mod fast;
mod source;
mod splice;

use derive::RouteChanges;
use source::{Edit, Found};

use crate::diag::{ConfigError, Diagnostic, Diagnostics};
use crate::routes::{self, RouteContext, RouteSet, RouteSpec};
use crate::types::{Cidr, Cidr6, FastMap, FastSet};

/// What changed between two route sets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RouteDiff {
    pub ipv4_added: usize,
    pub ipv4_removed: usize,
    /// Same prefix, different target or TTL mode.
    pub ipv4_changed: usize,
    pub ipv6_added: usize,
    pub ipv6_removed: usize,
    pub ipv6_changed: usize,
    pub labels_added: usize,
    pub labels_removed: usize,
    pub labels_changed: usize,
    pub neighbors_changed: bool,
}

impl RouteDiff {
    /// True when the two sets route exactly alike.
    pub fn is_empty(&self) -> bool {
        *self == RouteDiff::default()
    }

    /// Compares two sets (prefix order does not matter).
    pub fn between(old: &RouteSet, new: &RouteSet) -> RouteDiff {
        RouteDiff::with_changes(old, new, 0).0
    }

    /// Compares two sets and lists what changed, unless more than `max` items did.
    fn with_changes(
        old: &RouteSet,
        new: &RouteSet,
        max: usize,
    ) -> (RouteDiff, Option<RouteChanges>) {
        let mut ch = RouteChanges::default();
        let mut d = RouteDiff {
            neighbors_changed: {
                let mut a = old.neighbors.clone();
                let mut b = new.neighbors.clone();
                a.sort_by_key(|n| (n.ip, n.port));
                b.sort_by_key(|n| (n.ip, n.port));
                let mut a6 = old.neighbors6.clone();
                let mut b6 = new.neighbors6.clone();
                a6.sort();
                b6.sort();
                a != b || a6 != b6
            },
            ..RouteDiff::default()
        };
        // Specs are few: match them once, then compare prefixes by spec id.
        let new_ids: FastMap<&RouteSpec, u32> = new
            .specs
            .iter()
            .enumerate()
            .map(|(i, s)| (s, i as u32))
            .collect();
        let old_to_new: Vec<Option<u32>> =
            old.specs.iter().map(|s| new_ids.get(s).copied()).collect();
        let old_map: FastMap<Cidr, u32> = old.ipv4.iter().copied().collect();
        let mut seen = 0;
        let mut keep = max > 0;
        for &(c, id) in &new.ipv4 {
            let changed = match old_map.get(&c) {
                None => {
                    d.ipv4_added += 1;
                    true
                }
                Some(&o) => {
                    seen += 1;
                    let changed = old_to_new[o as usize] != Some(id);
                    d.ipv4_changed += usize::from(changed);
                    changed
                }
            };
            if changed && keep {
                ch.ipv4_set.push((c, id));
                keep = ch.ipv4_set.len() <= max;
            }
        }
        d.ipv4_removed = old.ipv4.len() - seen;
        keep &= d.ipv4_removed + ch.ipv4_set.len() <= max;
        if keep && d.ipv4_removed > 0 {
            let new_map: FastSet<Cidr> = new.ipv4.iter().map(|(c, _)| *c).collect();
            ch.ipv4_removed = old
                .ipv4
                .iter()
                .map(|(c, _)| *c)
                .filter(|c| !new_map.contains(c))
                .collect();
        }
        keep &= diff6(old, new, &old_to_new, &mut d, &mut ch, max);
        let old_labels: FastMap<u32, _> = old.labels.iter().map(|(l, s)| (*l, s)).collect();
        let mut seen = 0;
        for (l, s) in &new.labels {
            let changed = match old_labels.get(l) {
                None => {
                    d.labels_added += 1;
                    true
                }
                Some(o) => {
                    seen += 1;
                    let changed = *o != s;
                    d.labels_changed += usize::from(changed);
                    changed
                }
            };
            if changed {
                ch.labels_set.push((*l, s.clone()));
            }
        }
        d.labels_removed = old.labels.len() - seen;
        if d.labels_removed > 0 {
            let new_labels: FastSet<u32> = new.labels.iter().map(|(l, _)| *l).collect();
            ch.labels_removed = old
                .labels
                .iter()
                .map(|(l, _)| *l)
                .filter(|l| !new_labels.contains(l))
                .collect();
        }
        let keep = keep && ch.len() <= max;
        (d, keep.then_some(ch))
    }

    /// The diff of a patch: `removed` routes replaced by `added` (same spec ids).
    fn from_patch(removed: &[(Cidr, u32)], added: &[(Cidr, u32)]) -> (RouteDiff, RouteChanges) {
        let old: FastMap<Cidr, u32> = removed.iter().copied().collect();
        let mut d = RouteDiff::default();
        let mut ch = RouteChanges::default();
        let mut kept = FastSet::default();
        for &(c, id) in added {
            match old.get(&c) {
                None => d.ipv4_added += 1,
                Some(&o) => {
                    kept.insert(c);
                    if o == id {
                        continue;
                    }
                    d.ipv4_changed += 1;
                }
            }
            ch.ipv4_set.push((c, id));
        }
        ch.ipv4_removed = removed
            .iter()
            .map(|(c, _)| *c)
            .filter(|c| !kept.contains(c))
            .collect();
        d.ipv4_removed = ch.ipv4_removed.len();
        (d, ch)
    }
}

/// The IPv6 part of [`RouteDiff::with_changes`]; false when more than `max` changed.
fn diff6(
    old: &RouteSet,
    new: &RouteSet,
    old_to_new: &[Option<u32>],
    d: &mut RouteDiff,
    ch: &mut RouteChanges,
    max: usize,
) -> bool {
    let old_map: FastMap<Cidr6, u32> = old.ipv6.iter().copied().collect();
    let mut seen = 0;
    for &(c, id) in &new.ipv6 {
        let changed = match old_map.get(&c) {
            None => {
                d.ipv6_added += 1;
                true
            }
            Some(&o) => {
                seen += 1;
                let changed = old_to_new[o as usize] != Some(id);
                d.ipv6_changed += usize::from(changed);
                changed
            }
        };
        if changed && ch.ipv6_set.len() <= max {
            ch.ipv6_set.push((c, id));
        }
    }
    d.ipv6_removed = old.ipv6.len() - seen;
    if d.ipv6_removed + ch.ipv6_set.len() > max {
        return false;
    }
    if d.ipv6_removed > 0 {
        let new_map: FastSet<Cidr6> = new.ipv6.iter().map(|(c, _)| *c).collect();
        ch.ipv6_removed = old
            .ipv6
            .iter()
            .map(|(c, _)| *c)
            .filter(|c| !new_map.contains(c))
            .collect();
    }
    true
}

/// Time spent in each step of a reload.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReloadTimings {
    pub read: Duration,
    /// Parse and validate.
    pub check: Duration,
    pub diff: Duration,
    /// Building the new table: a full compile, or deriving it from the last one.
    pub compile: Duration,
    /// The table was derived from the last one (only the changes applied).
    pub derived: bool,
    /// The edit was applied by patching the compact block, without a full parse.
    pub fast_path: bool,
}

/// Result of a successful reload.
#[derive(Debug)]
pub enum ReloadOutcome {
    /// The file means the same as the running table: nothing to publish.
    Unchanged { timings: ReloadTimings },
    /// A new table to publish.
    Updated {
        /// Boxed: ready to hand to `net::rcu` without moving a large value around.
        fib: Box<Fib>,
        diff: RouteDiff,
        timings: ReloadTimings,
    },
}

/// Last good routes and the generation counter.
#[derive(Debug)]
pub struct ReloadState {
    path: PathBuf,
    ctx: RouteContext,
    current: Option<RouteSet>,
    generation: u64,
    /// The file content `current` was made from: the next read is compared with it.
    last_text: Option<String>,
    /// An edit of `last_text` not applied yet: splicing a line of another length into a
    /// full view moves megabytes, so it waits until the table is live ([`Self::settle`]).
    unsettled: Option<Edit>,
    /// Read buffer of [`source::read`], kept between reloads.
    scratch: Vec<u8>,
    /// Where the compact block of `last_text` is, for the fast path.
    layout: Option<fast::Layout>,
    /// A copy of the last table produced (sharing its LPM blocks), to derive the next.
    base: Option<Fib>,
    /// Adjacencies + ECMP groups of the last full compile: derived tables keep unused
    /// ones, so past twice that (plus some slack) the next change compiles in full.
    full_size: usize,
}

/// Most changed prefixes and labels applied by deriving; more compile in full.
const DERIVE_MAX: usize = 4096;

/// The new file content, whole or as an edit of `last_text`.
enum NewText {
    Whole(String),
    Edit(Edit),
}

impl ReloadState {
    /// Starts with no routes loaded; the first successful reload is generation 1.
    /// `ctx` must have ports (built with [`RouteContext::from_startup`]).
    pub fn new(path: impl Into<PathBuf>, ctx: RouteContext) -> ReloadState {
        ReloadState {
            path: path.into(),
            ctx,
            current: None,
            generation: 0,
            last_text: None,
            unsettled: None,
            scratch: Vec::new(),
            layout: None,
            base: None,
            full_size: 0,
        }
    }

    /// The routes file watched.
    pub fn path(&self) -> &FsPath {
        &self.path
    }

    /// Generation of the last table produced (0 before the first).
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The last good routes.
    pub fn current(&self) -> Option<&RouteSet> {
        self.current.as_ref()
    }

    /// The text to compare the next file with: only once there are routes from it.
    fn baseline(&self) -> Option<&str> {
        self.current.as_ref().and(self.last_text.as_deref())
    }

    /// Finishes the bookkeeping of the last reload that was left for after the publish
    /// (the splice of the saved file text). Call it once the new table is live; the next
    /// reload does it first otherwise.
    pub fn settle(&mut self) {
        if let (Some(e), Some(old)) = (self.unsettled.take(), self.last_text.as_mut()) {
            e.apply_to(old);
        }
    }

    /// Reads the routes file and applies it.
    pub fn reload(&mut self) -> Result<ReloadOutcome, ConfigError> {
        self.settle();
        let t = Instant::now();
        let old = self.current.as_ref().and(self.last_text.as_deref());
        let limit = crate::read::Limit::routes(self.ctx.max_file_bytes);
        let found = source::read(&self.path, old, &mut self.scratch, limit)?;
        let read = t.elapsed();
        let text = match found {
            Found::Same => {
                return Ok(ReloadOutcome::Unchanged {
                    timings: ReloadTimings {
                        read,
                        ..ReloadTimings::default()
                    },
                })
            }
            Found::Edit(e) => NewText::Edit(e),
            Found::Whole(t) => NewText::Whole(t),
        };
        let mut out = self.apply(text)?;
        match &mut out {
            ReloadOutcome::Unchanged { timings } | ReloadOutcome::Updated { timings, .. } => {
                timings.read = read
            }
        }
        Ok(out)
    }

    /// The ports' addresses changed (a SIGHUP reread the startup config): checks and
    /// compiles the whole routes file against `ports`. On error nothing changes: the
    /// previous ports, routes and generation stay.
    pub fn reload_with_ports(
        &mut self,
        ports: Vec<crate::startup::PortIface>,
    ) -> Result<ReloadOutcome, ConfigError> {
        self.settle();
        let old_ports = self.ctx.ports.replace(ports);
        let saved = (
            self.current.take(),
            self.last_text.take(),
            self.layout.take(),
            self.base.take(),
        );
        let out = self.reload();
        if out.is_err() {
            self.ctx.ports = old_ports;
            (self.current, self.last_text, self.layout, self.base) = saved;
        }
        out
    }

    /// Applies new file content (as if read from the routes path). On error nothing
    /// changes: the previous routes and generation stay.
    pub fn apply_text(&mut self, text: String) -> Result<ReloadOutcome, ConfigError> {
        self.settle();
        let t = Instant::now();
        let edit = match self.baseline() {
            Some(old) => match Edit::between(old, &text) {
                None => {
                    return Ok(ReloadOutcome::Unchanged {
                        timings: ReloadTimings {
                            check: t.elapsed(),
                            ..ReloadTimings::default()
                        },
                    })
                }
                Some(e) => Some(e),
            },
            None => None,
        };
        match edit {
            // Through the edit, as `reload` does, so the fast path is exercised; a
            // refused edit is rebuilt into the same text.
            Some(e) => self.apply(NewText::Edit(e)),
            None => self.apply(NewText::Whole(text)),
        }
    }

    fn apply(&mut self, text: NewText) -> Result<ReloadOutcome, ConfigError> {
        let mut timings = ReloadTimings::default();
        let t = Instant::now();
        if let (NewText::Edit(edit), Some(cur), Some(old), Some(lay)) =
            (&text, &mut self.current, &self.last_text, &mut self.layout)
        {
            if let Some(p) = fast::apply(old, edit, lay, cur, &self.ctx) {
                timings.check = t.elapsed();
                timings.fast_path = true;
                let t = Instant::now();
                let (diff, changes) = RouteDiff::from_patch(&p.removed, &p.added);
                timings.diff = t.elapsed();
                if diff.is_empty() {
                    self.set_text(text);
                    return Ok(ReloadOutcome::Unchanged { timings });
                }
                let set = self.current.take().expect("patched in place");
                return self
                    .commit(set, text, diff, Some(changes), timings)
                    .map_err(|b| {
                        let (e, mut set) = *b;
                        p.undo(&mut set);
                        self.current = Some(set);
                        e
                    });
            }
        }
        let text = match text {
            NewText::Whole(t) => t,
            NewText::Edit(e) => e.assemble(self.last_text.as_deref().unwrap_or_default()),
        };
        let root = crate::yaml::parse(&text).map_err(|e| {
            ConfigError::Invalid(Diagnostics(vec![Diagnostic::from_syntax(&self.path, e)]))
        })?;
        let set = routes::routes_from_node(&self.path, &root, &self.ctx)?;
        let layout = fast::layout(&text, &root, &set);
        drop(root);
        timings.check = t.elapsed();
        let t = Instant::now();
        let (diff, changes) = match &self.current {
            Some(old) => {
                if *old == set {
                    timings.diff = t.elapsed();
                    self.set_text(NewText::Whole(text));
                    self.layout = layout;
                    return Ok(ReloadOutcome::Unchanged { timings });
                }
                RouteDiff::with_changes(old, &set, DERIVE_MAX)
            }
            None => RouteDiff::with_changes(&RouteSet::default(), &set, 0),
        };
        timings.diff = t.elapsed();
        // Equal in meaning though not in form (routes reordered, or the running set was
        // patched by the fast path, which appends targets): nothing to publish. The new
        // set is kept, in the form a full parse gives.
        if self.current.is_some() && diff.is_empty() {
            self.current = Some(set);
            self.set_text(NewText::Whole(text));
            self.layout = layout;
            return Ok(ReloadOutcome::Unchanged { timings });
        }
        let out = self.commit(set, NewText::Whole(text), diff, changes, timings);
        if out.is_ok() {
            self.layout = layout;
        }
        out.map_err(|b| b.0)
    }

    fn commit(
        &mut self,
        set: RouteSet,
        text: NewText,
        diff: RouteDiff,
        changes: Option<RouteChanges>,
        mut timings: ReloadTimings,
    ) -> Result<ReloadOutcome, Box<(ConfigError, RouteSet)>> {
        let t = Instant::now();
        let ports = self.ctx.ports.as_deref().unwrap_or_default();
        let generation = self.generation + 1;
        let derived = match (&self.base, &changes) {
            (Some(base), Some(ch))
                if !diff.neighbors_changed && ch.len() <= DERIVE_MAX && self.garbage_ok(base) =>
            {
                derive::derive(base, &set, ch, ports, generation).transpose()
            }
            _ => None,
        };
        timings.derived = matches!(derived, Some(Ok(_)));
        let built = match derived {
            Some(r) => r,
            None => routes::compile(&set, ports, generation).inspect(|f| {
                let s = f.stats();
                self.full_size = s.adjacencies + s.ecmp_groups;
            }),
        };
        let fib = match built {
            Ok(f) => f,
            Err(e) => {
                // A validation gap. The fast path may already have moved its layout on:
                // forget it so the next reload takes the full path.
                self.layout = None;
                self.base = None;
                let e = ConfigError::Invalid(Diagnostics(vec![Diagnostic {
                    file: self.path.clone(),
                    line: 1,
                    col: 1,
                    path: String::new(),
                    message: e.to_string(),
                    hint: None,
                }]));
                return Err(Box::new((e, set)));
            }
        };
        timings.compile = t.elapsed();
        // Shares the LPM blocks with `fib`; the next derive copies only what it changes.
        self.base = Some(fib.clone());
        self.generation += 1;
        self.current = Some(set);
        self.set_text(text);
        Ok(ReloadOutcome::Updated {
            fib: Box::new(fib),
            diff,
            timings,
        })
    }

    /// Makes `text` the last text. An edit of the same length is applied in place at once
    /// (no bytes move); any other waits for [`Self::settle`].
    fn set_text(&mut self, text: NewText) {
        debug_assert!(self.unsettled.is_none(), "settled before every reload");
        match (text, &mut self.last_text) {
            (NewText::Edit(e), Some(old)) if e.in_place() => e.apply_to(old),
            (NewText::Edit(e), Some(_)) => self.unsettled = Some(e),
            (NewText::Edit(_), None) => unreachable!("edits are made against a last text"),
            (NewText::Whole(t), _) => self.last_text = Some(t),
        }
    }

    fn garbage_ok(&self, base: &Fib) -> bool {
        let s = base.stats();
        s.adjacencies + s.ecmp_groups <= 2 * self.full_size + 256
    }
}
