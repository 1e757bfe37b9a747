//! A small HTTP server for `/metrics`, on its own thread.
//!
//! Serves only `GET /metrics` (and a pointer at `/`). Binds to loopback unless the config
//! says otherwise; refuses request bodies and long URLs so a scraper cannot make it buffer
//! much. Never runs on a worker lcore.

use std::net::SocketAddr;
use std::sync::Arc;
use std::thread::JoinHandle;

use prometheus::{Encoder, Registry, TextEncoder};

/// Longest request URL accepted.
const MAX_URL: usize = 256;

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum MetricsError {
    #[error("metrics: cannot listen on {addr}: {msg}\n  hint: another process uses the port? set metrics_listen in the startup config")]
    Bind { addr: SocketAddr, msg: String },
}

/// The running server; stops when dropped.
pub struct MetricsServer {
    server: Arc<tiny_http::Server>,
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
    /// Starts serving `registry` on `addr` (port 0 picks a free port).
    pub fn start(addr: SocketAddr, registry: Registry) -> Result<MetricsServer, MetricsError> {
        let server = tiny_http::Server::http(addr).map_err(|e| MetricsError::Bind {
            addr,
            msg: e.to_string(),
        })?;
        let bound = server.server_addr().to_ip().unwrap_or(addr);
        let server = Arc::new(server);
        let s = server.clone();
        let thread = std::thread::Builder::new()
            .name("metrics".into())
            .spawn(move || serve(&s, &registry))
            .expect("spawn the metrics thread");
        Ok(MetricsServer {
            server,
            thread: Some(thread),
            addr: bound,
        })
    }

    /// The address actually bound.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

fn respond(req: tiny_http::Request, code: u16, body: String, content_type: &str) {
    let header = tiny_http::Header::from_bytes(&b"Content-Type"[..], content_type.as_bytes())
        .expect("static header is valid");
    let _ = req.respond(
        tiny_http::Response::from_string(body)
            .with_status_code(code)
            .with_header(header),
    );
}

fn serve(server: &tiny_http::Server, registry: &Registry) {
    for req in server.incoming_requests() {
        if req.url().len() > MAX_URL || req.body_length().unwrap_or(0) > 0 {
            respond(req, 413, "request too large\n".into(), "text/plain");
            continue;
        }
        if *req.method() != tiny_http::Method::Get {
            respond(req, 405, "only GET\n".into(), "text/plain");
            continue;
        }
        let path = req.url().split('?').next().unwrap_or("");
        match path {
            "/metrics" => {
                let body = render(registry);
                respond(req, 200, body, "text/plain; version=0.0.4; charset=utf-8");
            }
            "/" => respond(
                req,
                200,
                "mplsrouter: metrics at /metrics\n".into(),
                "text/plain",
            ),
            _ => respond(req, 404, "not found; try /metrics\n".into(), "text/plain"),
        }
    }
}

impl Drop for MetricsServer {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
