//! A small HTTP/1.x server for `/metrics`, on one thread of its own (never a worker lcore).
//!
//! Serves `GET /metrics` (and `HEAD`, and a pointer at `/`); binds to loopback unless the
//! config says otherwise. It exists instead of an HTTP library because a scrape must keep
//! working beside clients that misbehave: tiny_http, used before, served connections from
//! a pool of four threads with no read timeout, so four clients that connected and sent
//! nothing blocked every scrape. Here one thread drives nonblocking sockets:
//!
//! - a connection has [`Limits::request_timeout`] for its whole request head (a slowloris
//!   client sending a byte a second is cut off, not kept alive by each byte) and
//!   [`Limits::response_timeout`] to take the response;
//! - at most [`Limits::max_connections`] are held; a new one past that closes the oldest
//!   still reading its request, so the accept loop never waits and fresh scrapes get in;
//! - a request head is at most [`Limits::max_request_bytes`], the URL at most
//!   [`MAX_URL`] bytes, and a request body is refused (413) without being read;
//! - one request per connection (`Connection: close`), answered with the client's HTTP
//!   version.
//!
//! Idle, the thread polls its listener every [`IDLE_POLL`]; dropping the server stops it
//! within that time, closing the connections it holds.

use std::collections::VecDeque;
use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use prometheus::{Encoder, Registry, TextEncoder};

/// Longest request URL accepted.
pub const MAX_URL: usize = 256;

/// Sleep between polls when nothing happened: bounds the added latency of a scrape and
/// the time shutdown takes.
pub const IDLE_POLL: Duration = Duration::from_millis(10);

/// After the response, how long the client's leftover input (a refused body, an
/// oversized header) is read and discarded before closing: closing with unread input
/// makes the kernel send a reset, which can destroy the response before it is read.
const LINGER: Duration = Duration::from_millis(500);
/// Most leftover input discarded while lingering.
const LINGER_BYTES: usize = 256 * 1024;

/// What the server tolerates from one client.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Connections held at once; a new one past that closes the oldest still reading.
    pub max_connections: usize,
    /// Longest request head (request line and headers).
    pub max_request_bytes: usize,
    /// From accept to the end of the request head.
    pub request_timeout: Duration,
    /// From the request to the last byte of the response taken by the client.
    pub response_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_connections: 32,
            max_request_bytes: 8 * 1024,
            request_timeout: Duration::from_secs(5),
            response_timeout: Duration::from_secs(10),
        }
    }
}

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum MetricsError {
    #[error("metrics: cannot listen on {addr}: {msg}\n  hint: another process uses the port? set metrics_listen in the startup config")]
    Bind { addr: SocketAddr, msg: String },
}

/// The running server; stops when dropped.
pub struct MetricsServer {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    addr: SocketAddr,
}

/// Renders the registry in the text exposition format.
pub fn render(registry: &Registry) -> String {
    let mut buf = Vec::new();
    TextEncoder::new()
        .encode(&registry.gather(), &mut buf)
        .expect("text encoding to a Vec cannot fail");
    String::from_utf8(buf).expect("the text format is UTF-8")
}

impl MetricsServer {
    /// Starts serving `registry` on `addr` (port 0 picks a free port) with the default
    /// [`Limits`].
    pub fn start(addr: SocketAddr, registry: Registry) -> Result<MetricsServer, MetricsError> {
        MetricsServer::start_with(addr, registry, Limits::default())
    }

    /// Starts serving with explicit limits.
    pub fn start_with(
        addr: SocketAddr,
        registry: Registry,
        limits: Limits,
    ) -> Result<MetricsServer, MetricsError> {
        let bind_err = |e: std::io::Error| MetricsError::Bind {
            addr,
            msg: e.to_string(),
        };
        let listener = TcpListener::bind(addr).map_err(bind_err)?;
        listener.set_nonblocking(true).map_err(bind_err)?;
        let bound = listener.local_addr().map_err(bind_err)?;
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let thread = std::thread::Builder::new()
            .name("metrics".into())
            .spawn(move || serve(&listener, &registry, limits, &s))
            .expect("spawn the metrics thread");
        Ok(MetricsServer {
            stop,
            thread: Some(thread),
            addr: bound,
        })
    }

    /// The address actually bound.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for MetricsServer {
    fn drop(&mut self) {
        self.stop.store(true, Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn serve(listener: &TcpListener, registry: &Registry, limits: Limits, stop: &AtomicBool) {
    let mut conns: VecDeque<Conn> = VecDeque::new();
    while !stop.load(Relaxed) {
        let mut busy = false;
        loop {
            match listener.accept() {
                Ok((stream, _)) => {
                    busy = true;
                    if stream.set_nonblocking(true).is_err() {
                        continue;
                    }
                    if conns.len() >= limits.max_connections.max(1) {
                        let victim = conns.iter().position(Conn::reading).unwrap_or(0);
                        conns.remove(victim);
                    }
                    conns.push_back(Conn::new(stream, Instant::now() + limits.request_timeout));
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                // Out of descriptors or a connection reset before accept: try next round.
                Err(_) => break,
            }
        }
        let now = Instant::now();
        conns.retain_mut(|c| {
            let (keep, progressed) = c.step(now, registry, &limits);
            busy |= progressed;
            keep
        });
        if !busy {
            std::thread::sleep(IDLE_POLL);
        }
    }
}

enum Phase {
    Reading,
    Writing {
        out: Vec<u8>,
        sent: usize,
    },
    /// Response sent and write side shut: discarding what the client still sends.
    Lingering {
        discarded: usize,
    },
}

struct Conn {
    stream: TcpStream,
    head: Vec<u8>,
    phase: Phase,
    deadline: Instant,
}

/// What one nonblocking read gave.
enum Got {
    Bytes(usize),
    Eof,
    Nothing,
}

impl Conn {
    fn new(stream: TcpStream, deadline: Instant) -> Conn {
        Conn {
            stream,
            head: Vec::new(),
            phase: Phase::Reading,
            deadline,
        }
    }

    fn reading(&self) -> bool {
        matches!(self.phase, Phase::Reading)
    }

    fn read(&mut self, buf: &mut [u8]) -> Got {
        match self.stream.read(buf) {
            Ok(0) => Got::Eof,
            Ok(n) => Got::Bytes(n),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted) => {
                Got::Nothing
            }
            Err(_) => Got::Eof,
        }
    }

    /// Advances the connection as far as it goes without blocking. Returns (keep it,
    /// something happened).
    fn step(&mut self, now: Instant, registry: &Registry, limits: &Limits) -> (bool, bool) {
        let mut progressed = false;
        let mut buf = [0u8; 4096];
        if self.reading() {
            loop {
                match self.read(&mut buf) {
                    Got::Eof => return (false, true),
                    Got::Nothing => break,
                    Got::Bytes(n) => {
                        progressed = true;
                        let from = self.head.len().saturating_sub(3);
                        self.head.extend_from_slice(&buf[..n]);
                        if let Some(end) = head_end(&self.head[from..]) {
                            let head = &self.head[..from + end];
                            let out = answer(head, registry);
                            self.respond(out, now, limits);
                            break;
                        }
                        if self.head.len() > limits.max_request_bytes {
                            self.refuse(431, "request header too large\n", now, limits);
                            break;
                        }
                    }
                }
            }
            if self.reading() && now >= self.deadline {
                self.refuse(408, "request timeout\n", now, limits);
            }
        }
        if let Phase::Writing { out, sent } = &mut self.phase {
            while *sent < out.len() {
                match self.stream.write(&out[*sent..]) {
                    Ok(0) => return (false, true),
                    Ok(n) => {
                        *sent += n;
                        progressed = true;
                    }
                    Err(e)
                        if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted) =>
                    {
                        break
                    }
                    Err(_) => return (false, true),
                }
            }
            if *sent < out.len() {
                return (now < self.deadline, progressed);
            }
            let _ = self.stream.shutdown(Shutdown::Write);
            self.phase = Phase::Lingering { discarded: 0 };
            self.deadline = now + LINGER;
        }
        if let Phase::Lingering { .. } = self.phase {
            loop {
                match self.read(&mut buf) {
                    Got::Eof => return (false, true),
                    Got::Nothing => break,
                    Got::Bytes(n) => {
                        progressed = true;
                        let Phase::Lingering { discarded } = &mut self.phase else {
                            unreachable!("phase checked above");
                        };
                        *discarded += n;
                        if *discarded > LINGER_BYTES {
                            return (false, true);
                        }
                    }
                }
            }
            return (now < self.deadline, progressed);
        }
        (true, progressed)
    }

    /// Answers a request that will not be served (too large, too slow) with `status`.
    fn refuse(&mut self, status: u16, msg: &str, now: Instant, limits: &Limits) {
        let out = response(version_of(&self.head), status, msg, false, None);
        self.respond(out, now, limits);
    }

    fn respond(&mut self, out: Vec<u8>, now: Instant, limits: &Limits) {
        self.head = Vec::new();
        self.phase = Phase::Writing { out, sent: 0 };
        self.deadline = now + limits.response_timeout;
    }
}

/// Length of the request head including its blank line, if complete.
fn head_end(b: &[u8]) -> Option<usize> {
    let crlf = b.windows(4).position(|w| w == b"\r\n\r\n").map(|i| i + 4);
    let lf = b.windows(2).position(|w| w == b"\n\n").map(|i| i + 2);
    match (crlf, lf) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// The HTTP version to answer with: the client's when it is 1.0, else 1.1.
fn version_of(head: &[u8]) -> &'static str {
    let line = head.split(|&c| c == b'\n').next().unwrap_or_default();
    if line.trim_ascii_end().ends_with(b"HTTP/1.0") {
        "HTTP/1.0"
    } else {
        "HTTP/1.1"
    }
}

/// The response to a complete request head.
fn answer(head: &[u8], registry: &Registry) -> Vec<u8> {
    let version = version_of(head);
    let bad = |code, msg| response(version, code, msg, false, None);
    let Ok(text) = std::str::from_utf8(head) else {
        return bad(400, "bad request\n");
    };
    let mut lines = text.lines();
    let mut parts = lines.next().unwrap_or_default().split_ascii_whitespace();
    let (Some(method), Some(target), Some(proto), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return bad(400, "bad request\n");
    };
    if !proto.starts_with("HTTP/1.") {
        return bad(505, "only HTTP/1.x\n");
    }
    if target.len() > MAX_URL {
        return bad(413, "request too large\n");
    }
    for h in lines {
        let Some((name, value)) = h.split_once(':') else {
            continue;
        };
        let name = name.trim();
        let body = (name.eq_ignore_ascii_case("content-length") && value.trim() != "0")
            || name.eq_ignore_ascii_case("transfer-encoding");
        if body {
            return bad(413, "request too large\n");
        }
    }
    let head_only = match method {
        "GET" => false,
        "HEAD" => true,
        _ => return bad(405, "only GET\n"),
    };
    let path = target.split('?').next().unwrap_or_default();
    match path {
        "/metrics" => response(
            version,
            200,
            &render(registry),
            head_only,
            Some("text/plain; version=0.0.4; charset=utf-8"),
        ),
        "/" => response(
            version,
            200,
            "mplsrouter: metrics at /metrics\n",
            head_only,
            None,
        ),
        _ => response(version, 404, "not found; try /metrics\n", head_only, None),
    }
}

fn response(
    version: &str,
    code: u16,
    body: &str,
    head_only: bool,
    content_type: Option<&str>,
) -> Vec<u8> {
    let reason = match code {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        413 => "Payload Too Large",
        431 => "Request Header Fields Too Large",
        505 => "HTTP Version Not Supported",
        _ => "Error",
    };
    let mut out = format!(
        "{version} {code} {reason}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        content_type.unwrap_or("text/plain; charset=utf-8"),
        body.len()
    )
    .into_bytes();
    if !head_only {
        out.extend_from_slice(body.as_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(out: &[u8]) -> &str {
        std::str::from_utf8(out)
            .unwrap()
            .lines()
            .next()
            .unwrap_or_default()
    }

    #[test]
    fn answers_by_method_path_and_size() {
        let r = Registry::new();
        let a = |h: &str| answer(h.as_bytes(), &r);
        assert_eq!(
            status(&a("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")),
            "HTTP/1.1 200 OK"
        );
        assert_eq!(status(&a("GET / HTTP/1.0\n\n")), "HTTP/1.0 200 OK");
        assert_eq!(
            status(&a("GET /x HTTP/1.1\r\n\r\n")),
            "HTTP/1.1 404 Not Found"
        );
        assert_eq!(
            status(&a("DELETE /metrics HTTP/1.1\r\n\r\n")),
            "HTTP/1.1 405 Method Not Allowed"
        );
        assert_eq!(
            status(&a("POST /metrics HTTP/1.1\r\ncontent-length: 5\r\n\r\n")),
            "HTTP/1.1 413 Payload Too Large"
        );
        assert_eq!(
            status(&a(
                "GET /metrics HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
            )),
            "HTTP/1.1 413 Payload Too Large"
        );
        let long = format!("GET /{} HTTP/1.1\r\n\r\n", "a".repeat(MAX_URL));
        assert_eq!(status(&a(&long)), "HTTP/1.1 413 Payload Too Large");
        assert_eq!(
            status(&a("GET /metrics SPDY/3\r\n\r\n")),
            "HTTP/1.1 505 HTTP Version Not Supported"
        );
        assert_eq!(status(&a("GARBAGE\r\n\r\n")), "HTTP/1.1 400 Bad Request");
        let head = a("HEAD /metrics HTTP/1.1\r\n\r\n");
        assert!(String::from_utf8(head).unwrap().ends_with("\r\n\r\n"));
    }

    #[test]
    fn head_end_finds_the_first_blank_line() {
        assert_eq!(head_end(b"GET / HTTP/1.1\r\n\r\nrest"), Some(18));
        assert_eq!(head_end(b"GET / HTTP/1.0\n\n"), Some(16));
        assert_eq!(head_end(b"GET / HTTP/1.1\r\nHost: x\r\n"), None);
    }
}
