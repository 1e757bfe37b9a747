//! The operator's control socket: `mplsrouter show ...` and `lookup` ask a running
//! router what it holds and what it would do, over a UNIX socket (JSON lines; schema in
//! docs/control-socket.md), like VPP's `show ip fib` or grout's `grcli`.
//!
//! Served by threads of the control side, never by a worker: workers stay lock-free and
//! syscall-free, and the socket reads the live table through its own RCU reader, online
//! only while it answers. Handling is pure ([`handle`]: request bytes in, response out);
//! [`server`] only moves lines. It must never block the control loop, grow with what a
//! client sends, or let a second router take over a socket a live router answers on.

mod board;
mod book;
mod collect;
mod handle;
mod live;
mod live_cp;
mod lookup;
pub mod proto;
mod routes;
mod server;
mod table;
mod trace;

#[cfg(test)]
mod handle6_tests;
#[cfg(test)]
mod handle_tests;
#[cfg(test)]
mod server_tests;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::sync::{Arc, Mutex};

pub use board::{NeighborBoard, NeighborEntry, NeighborState, PUBLISH_EVERY};
pub use book::SourceBook;
pub use handle::{Handler, Live};
pub use live::LiveRouter;
pub use server::{CLIENT_TIMEOUT, MAX_CLIENTS};

/// Why the control socket could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum CtlError {
    #[error(
        "control socket {0}: another router answers on it; stop that router, or give this \
         one its own `control_socket:` (or EAL file prefix)"
    )]
    InUse(PathBuf),
    #[error("control socket {0}: the path exists and is not a socket; remove it or choose another `control_socket:`")]
    NotASocket(PathBuf),
    #[error("control socket {path}: cannot {what}: {source}")]
    Io {
        path: PathBuf,
        what: String,
        source: std::io::Error,
    },
    #[error("control socket: {0}")]
    Rcu(#[from] net::rcu::RcuError),
}

/// A bound socket, not served yet: bound first thing in `run`, so a second router on
/// the same path stops before it touches the EAL or the ports.
pub struct Bound {
    path: PathBuf,
    /// Taken by [`Bound::serve`].
    listener: Option<std::os::unix::net::UnixListener>,
}

impl Bound {
    /// Binds `path`; see [`server::bind`].
    pub fn bind(path: &Path) -> Result<Bound, CtlError> {
        Ok(Bound {
            path: path.to_path_buf(),
            listener: Some(server::bind(path)?),
        })
    }

    /// Serves the socket on a thread of its own.
    pub fn serve<L: Live + Send + Sync + 'static>(
        mut self,
        handler: Handler,
        live: L,
        rcu: &Arc<net::rcu::Rcu<net::fib::Fib>>,
        trace: Option<crate::trace::TraceControl>,
    ) -> Result<CtlSock, CtlError> {
        let reader = rcu.register()?.offline();
        let svc = Arc::new(server::Service {
            handler,
            live,
            reader: Mutex::new(Some(reader)),
            clients: AtomicUsize::new(0),
            trace: trace.map(Mutex::new),
        });
        let stop = Arc::new(AtomicBool::new(false));
        let path = self.path.clone();
        let listener = self.listener.take().expect("a Bound is served once");
        let thread = std::thread::Builder::new()
            .name("ctlsock".into())
            .spawn({
                let (stop, path) = (stop.clone(), path.clone());
                move || server::serve(listener, path, svc, stop)
            })
            .map_err(|e| CtlError::Io {
                path: path.clone(),
                what: "start its thread".into(),
                source: e,
            })?;
        Ok(CtlSock {
            path,
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for Bound {
    fn drop(&mut self) {
        // Never served (the run stopped before): the file goes with it. Once served,
        // the server thread removes it.
        if self.listener.is_some() {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// The running socket: stops its accept thread and removes the file when dropped.
pub struct CtlSock {
    path: PathBuf,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl CtlSock {
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for CtlSock {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The runtime's pieces the socket reads.
pub(crate) struct Parts<'a> {
    pub spec: &'a crate::spec::RuntimeSpec,
    pub workers: &'a [crate::spec::WorkerSpec],
    pub ports: Vec<config::startup::PortIface>,
    pub dev_ids: Vec<u16>,
    pub counters: &'a [Arc<crate::counters::WorkerCounters>],
    pub control: Arc<crate::metrics::ControlStats>,
    pub pipeline: net::pipeline::PipelineConfig,
    /// The ports' MACs and addresses, as the workers' pipeline has them.
    pub local: net::pipeline::LocalAddrs,
    pub book: Arc<SourceBook>,
    pub statics: Arc<crate::slowpath::StaticNeighbors>,
    pub trace: crate::trace::TraceControl,
    /// The FPM listener's counters and address, if it listens.
    pub fpm: Option<(Arc<crate::fpm::FpmStats>, std::net::SocketAddr)>,
    pub cpif: Option<Arc<crate::cpif::ControlIfaces>>,
}

/// Binds the startup config's control socket. A configured `control_socket:` that
/// cannot be bound, or that another router answers on, stops this router. The default
/// path (named after the EAL file prefix) is best effort: where it cannot be made, or
/// another router with the same prefix already answers there (possible only without
/// shared EAL files: `--no-shconf`, as tests run several routers), this one runs
/// without a socket, warned.
pub(crate) fn bind_for(startup: &config::StartupConfig) -> Result<Option<Bound>, CtlError> {
    let Some(path) = startup.control_socket_path() else {
        return Ok(None);
    };
    match Bound::bind(&path) {
        Err(e) if startup.control_socket.is_none() => {
            eprintln!(
                "mplsrouter: warning: {e}; running without a control socket \
                 (set `control_socket:` to give this router its own)"
            );
            Ok(None)
        }
        r => r.map(Some),
    }
}

/// Serves `bound` with the runtime's pieces.
pub(crate) fn serve_for(
    bound: Bound,
    p: Parts,
    rcu: &Arc<net::rcu::Rcu<net::fib::Fib>>,
) -> Result<CtlSock, CtlError> {
    let names: Vec<String> = p.spec.ports.iter().map(|x| x.name.clone()).collect();
    let handler = Handler {
        port_names: names.clone(),
        port_macs: p.ports.iter().map(|x| x.mac).collect(),
        pipeline: net::pipeline::Pipeline::new(p.pipeline, p.local),
        book: p.book,
        statics: p.statics,
    };
    let live = LiveRouter {
        rx_queues: p.spec.ports.iter().map(|x| x.rx_queues).collect(),
        tx_queues: p.workers.len() as u16,
        workers: p
            .counters
            .iter()
            .zip(p.workers)
            .map(|(c, w)| {
                let q =
                    w.rx.iter()
                        .map(|&(pi, q)| format!("{}/{q}", names[pi as usize]));
                (c.clone(), q.collect())
            })
            .collect(),
        ports: p.ports,
        dev_ids: p.dev_ids,
        control: p.control,
        board: Some(p.trace.slow.board.clone()),
        fpm: p
            .fpm
            .map(|(stats, listen)| live_cp::FpmLive { stats, listen }),
        cpif: p.cpif,
        port_names: names.clone(),
    };
    let s = bound.serve(handler, live, rcu, Some(p.trace))?;
    println!("control socket: {}", s.path().display());
    Ok(s)
}
