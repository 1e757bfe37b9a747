//! Request handling, pure: a request line and the live snapshot in, a response out. No
//! socket here, so every request shape is tested on bytes (see `handle_tests.rs`).

use std::sync::Arc;
use std::time::Instant;

use net::fib::Fib;
use net::pipeline::Pipeline;

use super::book::SourceBook;
use super::lookup::{self, PortMacs};
use super::proto::*;
use super::routes::{self, RoutesQuery};
use super::table::Names;
use crate::slowpath::StaticNeighbors;

/// What the router measures live (ports, workers, table counters): DPDK calls in the
/// server, fixed values in tests.
pub trait Live {
    fn ports(&self) -> Vec<PortView>;
    fn workers(&self) -> Vec<WorkerView>;
    fn table(&self) -> TableView;
    /// The slow path's neighbours (learned, stale, being resolved), if it publishes them.
    fn neighbors(&self) -> Option<Arc<Vec<super::board::NeighborEntry>>> {
        None
    }
    /// The FPM session (`routes_by_source` is filled from the table by the handler).
    fn fpm(&self) -> FpmView {
        FpmView::disabled()
    }
    /// The control interfaces (none: the router runs without them).
    fn interfaces(&self) -> Vec<InterfaceView> {
        Vec::new()
    }
}

/// Everything a request needs besides the snapshot and the live counters.
pub struct Handler {
    pub port_names: Vec<String>,
    pub port_macs: Vec<[u8; 6]>,
    pub pipeline: Pipeline,
    pub book: Arc<SourceBook>,
    pub statics: Arc<StaticNeighbors>,
}

/// Parses one request line.
pub fn parse(line: &[u8]) -> Result<Request, Response> {
    serde_json::from_slice(line).map_err(|e| Response::error(format!("bad request: {e}")))
}

fn limit(l: Option<usize>) -> Result<usize, String> {
    match l.unwrap_or(DEFAULT_LIMIT) {
        0 => Err("limit must be at least 1".into()),
        n if n > MAX_LIMIT => Err(format!("limit {n} is over {MAX_LIMIT}; page with `after`")),
        n => Ok(n),
    }
}

impl Handler {
    fn names(&self) -> Names<'_> {
        Names {
            ports: &self.port_names,
            book: &self.book,
        }
    }

    /// Answers one request line (without its newline).
    pub fn handle(&self, line: &[u8], fib: &Fib, live: &dyn Live) -> Response {
        match parse(line) {
            Ok(req) => self.respond(req, fib, live),
            Err(e) => e,
        }
    }

    /// Answers a parsed request.
    pub fn respond(&self, req: Request, fib: &Fib, live: &dyn Live) -> Response {
        match self.answer(req, fib, live) {
            Ok(r) => Response::ok(r),
            Err(e) => Response::error(e),
        }
    }

    fn answer(&self, req: Request, fib: &Fib, live: &dyn Live) -> Result<Reply, String> {
        Ok(match req {
            Request::ShowRoutes {
                prefix,
                family,
                source,
                limit: l,
                after,
            } => {
                let q = RoutesQuery {
                    prefix: prefix.as_deref(),
                    family,
                    source,
                    limit: limit(l)?,
                    after,
                };
                Reply::Routes(routes::routes(&self.names(), fib, q)?)
            }
            Request::ShowMpls {
                label,
                source,
                limit: l,
                after,
            } => Reply::Mpls(self.mpls(fib, label, source, limit(l)?, after)),
            Request::ShowNeighbors {} => {
                let learned = live.neighbors();
                let learned = learned.as_ref().map(|v| v.as_slice());
                Reply::Neighbors {
                    neighbors: self
                        .names()
                        .neighbors(fib, &self.statics, learned, Instant::now()),
                }
            }
            Request::ShowPorts {} => Reply::Ports {
                ports: live.ports(),
            },
            Request::ShowWorkers {} => Reply::Workers {
                workers: live.workers(),
            },
            Request::ShowTable {} => Reply::Table(Box::new(live.table())),
            Request::ShowFpm {} => {
                let mut v = live.fpm();
                v.routes_by_source = self.names().routes_by_source(fib);
                Reply::Fpm(Box::new(v))
            }
            Request::ShowInterfaces {} => Reply::Interfaces {
                interfaces: live.interfaces(),
            },
            Request::Trace { .. } | Request::Capture { .. } => {
                return Err("trace needs the running router's workers".into());
            }
            Request::Lookup(r) => {
                let ports = PortMacs {
                    names: &self.port_names,
                    macs: &self.port_macs,
                };
                let names = self.names();
                let l = lookup::lookup(&self.pipeline, fib, &names, &ports, &r)?;
                Reply::Lookup(Box::new(l))
            }
        })
    }

    fn mpls(
        &self,
        fib: &Fib,
        label: Option<u32>,
        source: Option<Source>,
        limit: usize,
        after: Option<u32>,
    ) -> MplsReply {
        let names = self.names();
        let mut it = fib
            .label_entries()
            .into_iter()
            .filter(|&(l, _)| label.is_none_or(|x| x == l) && after.is_none_or(|a| l > a))
            .map(|(l, e)| names.label(fib, l, e))
            .filter(|v| source.is_none_or(|s| s == v.source));
        let entries: Vec<LabelView> = it.by_ref().take(limit).collect();
        let next_after = it.next().and(entries.last().map(|e| e.label));
        MplsReply {
            generation: fib.generation(),
            entries,
            next_after,
        }
    }
}
