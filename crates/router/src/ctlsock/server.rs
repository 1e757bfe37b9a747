//! The socket side: binding (refusing a path another router answers on, replacing a
//! stale one), accepting, and one short-lived thread per client with bounded reads.
//!
//! Never blocks the control loop (it runs on its own threads), never lets a client hold
//! more than one request line of memory, and never waits on a client for long: reads and
//! writes time out, at most [`MAX_CLIENTS`] are served at once and the next ones are told
//! so and closed. Requests are answered one at a time through one RCU reader, online
//! only while it answers.

use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use net::fib::Fib;
use net::rcu::OfflineReader;

use super::handle::{self, Handler, Live};
use super::proto::{Request, Response, MAX_REQUEST_BYTES};
use super::CtlError;
use super::{collect, trace};
use crate::trace::filter::Filter;
use crate::trace::{CapturePlan, TraceControl};

/// Clients served at once.
pub const MAX_CLIENTS: usize = 8;
/// How long a client may take to send a request line or to read a response.
pub const CLIENT_TIMEOUT: Duration = Duration::from_secs(5);
/// How often the accept loop checks for the stop flag.
const ACCEPT_POLL: Duration = Duration::from_millis(20);

/// Binds `path` (mode 0660), creating its directory. Refuses a path another process
/// answers on; replaces a socket nobody answers on (a crashed router's).
pub fn bind(path: &Path) -> Result<UnixListener, CtlError> {
    let err = |what: &str, e: std::io::Error| CtlError::Io {
        path: path.to_path_buf(),
        what: what.to_string(),
        source: e,
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| err("create its directory", e))?;
    }
    if let Ok(m) = std::fs::symlink_metadata(path) {
        if !m.file_type().is_socket() {
            return Err(CtlError::NotASocket(path.to_path_buf()));
        }
        match UnixStream::connect(path) {
            Ok(_) => return Err(CtlError::InUse(path.to_path_buf())),
            Err(e) if e.kind() == ErrorKind::ConnectionRefused => {
                eprintln!(
                    "mplsrouter: replacing the stale control socket {} (nobody answers on it)",
                    path.display()
                );
                std::fs::remove_file(path).map_err(|e| err("remove the stale socket", e))?;
            }
            Err(e) => return Err(err("probe the existing socket", e)),
        }
    }
    let l = UnixListener::bind(path).map_err(|e| err("bind", e))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o660))
        .map_err(|e| err("set mode 0660 on", e))?;
    l.set_nonblocking(true)
        .map_err(|e| err("make non-blocking", e))?;
    Ok(l)
}

/// What every client thread shares.
pub struct Service<L: Live> {
    pub handler: Handler,
    pub live: L,
    pub reader: Mutex<Option<OfflineReader<Fib>>>,
    pub clients: AtomicUsize,
    /// The workers' trace taps (none in tests without workers); one trace at a time.
    pub trace: Option<Mutex<crate::trace::TraceControl>>,
}

impl<L: Live> Service<L> {
    /// Answers one line with the current snapshot.
    pub fn answer(&self, line: &[u8]) -> Response {
        match handle::parse(line) {
            Err(e) => e,
            Ok(Request::Trace {
                count,
                port,
                timeout_ms,
                filter,
            }) => self.trace(count, port.as_deref(), timeout_ms, filter.as_deref()),
            Ok(Request::Capture {
                count,
                port,
                timeout_ms,
                direction,
                snaplen,
                pps,
                filter,
            }) => {
                let plan =
                    trace::params(&self.handler, count, Some(&port), timeout_ms).and_then(|p| {
                        let c = trace::capture_plan(p.1.unwrap_or(0), direction, snaplen, pps)?;
                        Ok((p, c, trace::filter(filter.as_deref())?))
                    });
                match plan {
                    Ok((p, c, f)) => self.capture(p.0, p.2, c, &f),
                    Err(e) => Response::error(e),
                }
            }
            Ok(req) => self
                .with_fib(|fib| self.handler.respond(req, fib, &self.live))
                .unwrap_or_else(Response::error),
        }
    }

    /// Runs `f` on the current snapshot, through the socket's one reader.
    fn with_fib<R>(&self, f: impl FnOnce(&Fib) -> R) -> Result<R, String> {
        let mut slot = self.reader.lock().unwrap_or_else(|e| e.into_inner());
        let off = slot.take().ok_or("the table reader is gone")?;
        let on = off.online();
        let r = f(on.load());
        *slot = Some(on.offline());
        Ok(r)
    }

    /// The trace taps, if no other trace or capture holds them.
    fn taps(&self) -> Result<std::sync::MutexGuard<'_, TraceControl>, String> {
        let ctl = self
            .trace
            .as_ref()
            .ok_or("this router has no workers to trace")?;
        ctl.try_lock()
            .map_err(|_| "another trace or capture is running; try again when it ends".into())
    }

    /// Traces packets and explains them. Other requests are answered meanwhile (the
    /// reader is only taken to explain).
    fn trace(
        &self,
        count: Option<usize>,
        port: Option<&str>,
        ms: Option<u64>,
        filter: Option<&str>,
    ) -> Response {
        let got = trace::params(&self.handler, count, port, ms)
            .and_then(|p| Ok((p, trace::filter(filter)?)))
            .and_then(|(p, f)| Ok(collect::trace(&*self.taps()?, p, &f)));
        match got {
            Ok((got, outcomes)) => self
                .with_fib(|fib| trace::explain_all(&self.handler, &got, &outcomes, fib))
                .map_or_else(Response::error, Response::ok),
            Err(e) => Response::error(e),
        }
    }

    /// Frames received or transmitted on a port.
    fn capture(&self, count: usize, timeout: Duration, c: CapturePlan, f: &Filter) -> Response {
        match self.taps() {
            Ok(ctl) => {
                let got = collect::capture(&ctl, c, count, timeout, f);
                Response::ok(trace::frames(&got, c.snaplen, ctl.tsc_hz))
            }
            Err(e) => Response::error(e),
        }
    }
}

/// Accepts until `stop`, then removes the socket file.
pub fn serve<L: Live + Send + Sync + 'static>(
    listener: UnixListener,
    path: PathBuf,
    svc: Arc<Service<L>>,
    stop: Arc<AtomicBool>,
) {
    while !stop.load(Ordering::Relaxed) {
        match listener.accept() {
            Ok((s, _)) => admit(s, &svc),
            Err(e) if e.kind() == ErrorKind::WouldBlock => std::thread::sleep(ACCEPT_POLL),
            Err(e) => {
                eprintln!("mplsrouter: control socket: accept: {e}");
                std::thread::sleep(ACCEPT_POLL);
            }
        }
    }
    let _ = std::fs::remove_file(&path);
}

fn admit<L: Live + Send + Sync + 'static>(mut s: UnixStream, svc: &Arc<Service<L>>) {
    let _ = s.set_nonblocking(false);
    let _ = s.set_read_timeout(Some(CLIENT_TIMEOUT));
    let _ = s.set_write_timeout(Some(CLIENT_TIMEOUT));
    if svc.clients.fetch_add(1, Ordering::AcqRel) >= MAX_CLIENTS {
        svc.clients.fetch_sub(1, Ordering::AcqRel);
        let _ = reply(
            &mut s,
            &Response::error(format!("busy: {MAX_CLIENTS} clients already connected")),
        );
        return;
    }
    let svc = svc.clone();
    let spawned = std::thread::Builder::new()
        .name("ctlsock-client".into())
        .spawn({
            let svc = svc.clone();
            move || {
                client(s, &svc);
                svc.clients.fetch_sub(1, Ordering::AcqRel);
            }
        });
    if let Err(e) = spawned {
        svc.clients.fetch_sub(1, Ordering::AcqRel);
        eprintln!("mplsrouter: control socket: cannot start a client thread: {e}");
    }
}

fn reply(s: &mut UnixStream, r: &Response) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(r).unwrap_or_else(|e| {
        format!("{{\"ok\":false,\"error\":\"cannot encode the response: {e}\"}}").into_bytes()
    });
    line.push(b'\n');
    s.write_all(&line)
}

/// Serves one client: request lines until it closes, times out or oversteps.
fn client<L: Live>(s: UnixStream, svc: &Service<L>) {
    let Ok(mut w) = s.try_clone() else { return };
    let mut r = BufReader::new(s);
    let mut line = Vec::with_capacity(256);
    loop {
        line.clear();
        let n = match (&mut r)
            .take(MAX_REQUEST_BYTES as u64)
            .read_until(b'\n', &mut line)
        {
            Ok(n) => n,
            Err(_) => return, // timed out or reset: nothing to answer
        };
        if n == 0 {
            return;
        }
        // A line cut short by the cap (without its newline) is refused; a last line
        // without a newline under the cap is answered, then the client is done.
        if line.last() != Some(&b'\n') && n >= MAX_REQUEST_BYTES {
            let msg = format!("request over {MAX_REQUEST_BYTES} bytes; closing");
            let _ = reply(&mut w, &Response::error(msg));
            return;
        }
        let text = line.strip_suffix(b"\n").unwrap_or(&line);
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        if text.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        if reply(&mut w, &svc.answer(text)).is_err() {
            return;
        }
    }
}
