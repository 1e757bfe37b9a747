//! The pure half of live reload: turn a new routes file into a new [`Fib`], or refuse it
//! and keep the last good state.
//!
//! The runtime's control thread owns a [`ReloadState`]; on a file event or SIGHUP it
//! calls [`ReloadState::reload`] and publishes the returned `Fib` through `net::rcu`.
//! Nothing here does I/O beyond reading the routes file, and nothing is changed unless
//! the new file is valid and compiles.
//!
//! Diff: an edit confined to `routes_compact` lines is parsed and validated on its own
//! and patched into the last good [`RouteSet`] (see [`fast`]); any other change is fully
//! parsed and validated, then compared with the last good set. An unchanged set (a
//! comment edit, a rewrite with the same content) yields [`ReloadOutcome::Unchanged`]
//! and no new table. Otherwise the `Fib` is rebuilt from the set: `net::fib` has no way
//! yet to derive a snapshot from the running one (its fields are private and
//! `FibBuilder` starts empty), so the compile step is a full rebuild and dominates a
//! small edit of a full table.

use std::path::{Path as FsPath, PathBuf};
use std::time::{Duration, Instant};

use net::fib::Fib;

mod fast;

use crate::diag::{read_file, ConfigError, Diagnostic, Diagnostics};
use crate::routes::{self, RouteContext, RouteSet, RouteSpec};
use crate::types::{Cidr, FastMap};

/// What changed between two route sets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RouteDiff {
    pub ipv4_added: usize,
    pub ipv4_removed: usize,
    /// Same prefix, different target or TTL mode.
    pub ipv4_changed: usize,
    pub labels_added: usize,
    pub labels_removed: usize,
    pub labels_changed: usize,
    pub neighbors_changed: bool,
}

impl RouteDiff {
    /// Compares two sets (prefix order does not matter).
    pub fn between(old: &RouteSet, new: &RouteSet) -> RouteDiff {
        let mut d = RouteDiff {
            neighbors_changed: {
                let mut a = old.neighbors.clone();
                let mut b = new.neighbors.clone();
                a.sort_by_key(|n| (n.ip, n.port));
                b.sort_by_key(|n| (n.ip, n.port));
                a != b
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
        for (c, id) in &new.ipv4 {
            match old_map.get(c) {
                None => d.ipv4_added += 1,
                Some(&o) => {
                    seen += 1;
                    if old_to_new[o as usize] != Some(*id) {
                        d.ipv4_changed += 1;
                    }
                }
            }
        }
        d.ipv4_removed = old.ipv4.len() - seen;
        let old_labels: FastMap<u32, _> = old.labels.iter().map(|(l, s)| (*l, s)).collect();
        let mut seen = 0;
        for (l, s) in &new.labels {
            match old_labels.get(l) {
                None => d.labels_added += 1,
                Some(o) => {
                    seen += 1;
                    if *o != s {
                        d.labels_changed += 1;
                    }
                }
            }
        }
        d.labels_removed = old.labels.len() - seen;
        d
    }

    pub fn is_empty(&self) -> bool {
        *self == RouteDiff::default()
    }

    /// The diff of a patch: `removed` routes replaced by `added` (same spec ids).
    fn from_patch(removed: &[(Cidr, u32)], added: &[(Cidr, u32)]) -> RouteDiff {
        let old: FastMap<Cidr, u32> = removed.iter().copied().collect();
        let mut d = RouteDiff::default();
        let mut kept = 0;
        for (c, id) in added {
            match old.get(c) {
                None => d.ipv4_added += 1,
                Some(o) => {
                    kept += 1;
                    if o != id {
                        d.ipv4_changed += 1;
                    }
                }
            }
        }
        d.ipv4_removed = removed.len() - kept;
        d
    }
}

/// Time spent in each step of a reload.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReloadTimings {
    pub read: Duration,
    /// Parse and validate.
    pub check: Duration,
    pub diff: Duration,
    pub compile: Duration,
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
    last_text: Option<String>,
    /// Where the compact block of `last_text` is, for the fast path.
    layout: Option<fast::Layout>,
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
            layout: None,
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

    /// Reads the routes file and applies it.
    pub fn reload(&mut self) -> Result<ReloadOutcome, ConfigError> {
        let t = Instant::now();
        let text = read_file(&self.path)?;
        let read = t.elapsed();
        let mut out = self.apply_text(text)?;
        match &mut out {
            ReloadOutcome::Unchanged { timings } | ReloadOutcome::Updated { timings, .. } => {
                timings.read = read
            }
        }
        Ok(out)
    }

    /// Applies new file content (as if read from the routes path). On error nothing
    /// changes: the previous routes and generation stay.
    pub fn apply_text(&mut self, text: String) -> Result<ReloadOutcome, ConfigError> {
        let mut timings = ReloadTimings::default();
        if self.current.is_some() && self.last_text.as_deref() == Some(text.as_str()) {
            return Ok(ReloadOutcome::Unchanged { timings });
        }
        let t = Instant::now();
        if let (Some(cur), Some(old), Some(lay)) =
            (&self.current, &self.last_text, &mut self.layout)
        {
            if let Some(p) = fast::apply(old, &text, lay, cur, &self.ctx) {
                timings.check = t.elapsed();
                timings.fast_path = true;
                let t = Instant::now();
                let diff = RouteDiff::from_patch(&p.removed, &p.added);
                timings.diff = t.elapsed();
                if diff.is_empty() {
                    self.current = Some(p.set);
                    self.last_text = Some(text);
                    return Ok(ReloadOutcome::Unchanged { timings });
                }
                return self.commit(p.set, text, diff, timings);
            }
        }
        let root = crate::yaml::parse(&text).map_err(|e| {
            ConfigError::Invalid(Diagnostics(vec![Diagnostic::from_syntax(&self.path, e)]))
        })?;
        let set = routes::routes_from_node(&self.path, &root, &self.ctx)?;
        let layout = fast::layout(&text, &root, &set);
        drop(root);
        timings.check = t.elapsed();
        let t = Instant::now();
        let diff = match &self.current {
            Some(old) => {
                if *old == set {
                    timings.diff = t.elapsed();
                    self.last_text = Some(text);
                    self.layout = layout;
                    return Ok(ReloadOutcome::Unchanged { timings });
                }
                RouteDiff::between(old, &set)
            }
            None => RouteDiff::between(&RouteSet::default(), &set),
        };
        timings.diff = t.elapsed();
        let out = self.commit(set, text, diff, timings);
        if out.is_ok() {
            self.layout = layout;
        }
        out
    }

    fn commit(
        &mut self,
        set: RouteSet,
        text: String,
        diff: RouteDiff,
        mut timings: ReloadTimings,
    ) -> Result<ReloadOutcome, ConfigError> {
        let t = Instant::now();
        let ports = self.ctx.ports.as_deref().unwrap_or_default();
        let fib = match routes::compile(&set, ports, self.generation + 1) {
            Ok(f) => f,
            Err(e) => {
                // A validation gap. The fast path may already have moved its layout on:
                // forget it so the next reload takes the full path.
                self.layout = None;
                return Err(ConfigError::Invalid(Diagnostics(vec![Diagnostic {
                    file: self.path.clone(),
                    line: 1,
                    col: 1,
                    path: String::new(),
                    message: e.to_string(),
                    hint: None,
                }])));
            }
        };
        timings.compile = t.elapsed();
        self.generation += 1;
        self.current = Some(set);
        self.last_text = Some(text);
        Ok(ReloadOutcome::Updated {
            fib: Box::new(fib),
            diff,
            timings,
        })
    }
}
