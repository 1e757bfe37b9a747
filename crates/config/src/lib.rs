//! mplsrouter configuration: the startup config and the routes file, their validation,
//! and compilation of routes into a [`net::fib::Fib`]. Pure: no DPDK, no threads, no
//! I/O other than reading the files it is given.
//!
//! Entry points for the runtime:
//! - [`startup::StartupConfig::load`] -> EAL argv ([`startup::StartupConfig::eal_args`]),
//!   ports, workers ([`startup::StartupConfig::workers`]), limits.
//! - [`routes::RouteContext::from_startup`] + [`reload::ReloadState`]: initial load and
//!   every reload (returns a new `Fib` or the errors; the old state stays on error).
//! - [`check::check_file`] + [`check::render`]: `mplsrouter check FILE`.
//! - [`generate::fullview_routes`]: full-view routes files for scale tests.
//!
//! Files are read through [`read`]: only regular files, under a size limit, without
//! blocking; YAML nesting and alias expansion are bounded in [`yaml`].
//!
//! Errors are [`diag::ConfigError`]; a validation failure holds every problem found, each
//! with file, line, column, key path and a hint ([`diag::Diagnostic`]).
//!
//! Positions: YAML is parsed with `yaml-rust2`'s event API into a tree that keeps the
//! line and column of every node ([`yaml`]); serde derives run over that tree ([`de`]),
//! so unknown keys and type errors come with positions, and semantic checks find the
//! position of any value through [`de::Spanned`].
//!
//! No `unsafe` (`#![forbid(unsafe_code)]`): it lives in dpdk-sys, dpdk and net only.

#![forbid(unsafe_code)]

pub mod check;
pub mod de;
pub mod diag;
pub mod generate;
pub mod read;
pub mod reload;
pub mod routes;
pub mod startup;
pub mod types;
pub mod yaml;

pub use check::{check_file, render as render_check, CheckSummary, FileKind};
pub use diag::{ConfigError, Diagnostic, Diagnostics};
pub use reload::{ReloadOutcome, ReloadState, RouteDiff};
pub use routes::{compile, connected_only, load_routes, parse_routes, RouteContext, RouteSet};
pub use startup::StartupConfig;
