//! One HTTP/1.0 GET over a plain TCP stream: enough for a loopback `/metrics`, without
//! pulling an HTTP client crate into the binary.

use std::fmt;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::Duration;

/// Largest response accepted; a router's exposition is a few tens of KiB.
const MAX_RESPONSE: u64 = 16 << 20;

const HINT: &str = "hint: is the router running? Its address is metrics_listen in the startup \
                    config (it prints `metrics: http://ADDR/metrics` at start); pass it with --url";

/// Why the endpoint could not be read.
#[derive(Debug)]
pub enum FetchError {
    BadUrl(String),
    Unreachable { url: String, msg: String },
    Io { url: String, msg: String },
    Status { url: String, status: String },
}

impl fmt::Display for FetchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FetchError::BadUrl(u) => write!(
                f,
                "bad --url {u:?}: expected http://HOST:PORT/metrics (e.g. http://127.0.0.1:9550/metrics)"
            ),
            FetchError::Unreachable { url, msg } => {
                write!(f, "cannot connect to {url}: {msg}\n  {HINT}")
            }
            FetchError::Io { url, msg } => write!(f, "reading {url}: {msg}\n  {HINT}"),
            FetchError::Status { url, status } => write!(
                f,
                "{url} answered {status:?}; is this the router's /metrics endpoint?"
            ),
        }
    }
}

impl std::error::Error for FetchError {}

/// `http://host[:port][/path]` split into (host:port, path); the path defaults to /metrics.
pub fn split_url(url: &str) -> Result<(String, String), FetchError> {
    let rest = url.strip_prefix("http://").unwrap_or(url);
    if rest.contains("://") {
        return Err(FetchError::BadUrl(url.into()));
    }
    let (hostport, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/metrics"),
    };
    if hostport.is_empty() {
        return Err(FetchError::BadUrl(url.into()));
    }
    let has_port = match hostport.rfind(']') {
        Some(b) => hostport[b..].contains(':'),
        None => hostport.contains(':'),
    };
    let hostport = if has_port {
        hostport.to_string()
    } else {
        format!("{hostport}:80")
    };
    Ok((hostport, path.to_string()))
}

/// GETs `url` and returns the body of a 200 response.
pub fn get(url: &str, timeout: Duration) -> Result<String, FetchError> {
    let (hostport, path) = split_url(url)?;
    let unreachable = |msg: String| FetchError::Unreachable {
        url: url.into(),
        msg,
    };
    let addrs: Vec<SocketAddr> = hostport
        .to_socket_addrs()
        .map_err(|e| unreachable(e.to_string()))?
        .collect();
    let mut last = String::from("no address");
    let mut stream = None;
    for a in addrs {
        match TcpStream::connect_timeout(&a, timeout) {
            Ok(s) => {
                stream = Some(s);
                break;
            }
            Err(e) => last = e.to_string(),
        }
    }
    let mut s = stream.ok_or_else(|| unreachable(last))?;
    let io = |e: std::io::Error| FetchError::Io {
        url: url.into(),
        msg: e.to_string(),
    };
    s.set_read_timeout(Some(timeout)).map_err(io)?;
    s.set_write_timeout(Some(timeout)).map_err(io)?;
    let host = hostport.rsplit_once(':').map_or(&*hostport, |(h, _)| h);
    write!(
        s,
        "GET {path} HTTP/1.0\r\nHost: {host}\r\nAccept: text/plain\r\nUser-Agent: mplsrouter-stats\r\n\r\n"
    )
    .map_err(io)?;
    let mut raw = Vec::new();
    s.take(MAX_RESPONSE).read_to_end(&mut raw).map_err(io)?;
    body(url, &raw)
}

/// The body of a raw HTTP response, or why it is not a usable one.
fn body(url: &str, raw: &[u8]) -> Result<String, FetchError> {
    let text = String::from_utf8_lossy(raw);
    let bad = |status: &str| FetchError::Status {
        url: url.into(),
        status: status.into(),
    };
    let (head, body) = text
        .split_once("\r\n\r\n")
        .ok_or_else(|| bad("an incomplete HTTP response"))?;
    let status = head.lines().next().unwrap_or("");
    let code = status.split_whitespace().nth(1);
    if !status.starts_with("HTTP/") || code != Some("200") {
        return Err(bad(status));
    }
    let chunked = head.lines().any(|l| {
        let l = l.to_ascii_lowercase();
        l.starts_with("transfer-encoding:") && l.contains("chunked")
    });
    if chunked {
        return Err(bad("a chunked response to an HTTP/1.0 request"));
    }
    Ok(body.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_default_the_port_and_path() {
        let s = |u: &str| split_url(u).unwrap();
        assert_eq!(
            s("http://127.0.0.1:9550/metrics"),
            ("127.0.0.1:9550".into(), "/metrics".into())
        );
        assert_eq!(
            s("127.0.0.1:9550"),
            ("127.0.0.1:9550".into(), "/metrics".into())
        );
        assert_eq!(
            s("http://localhost/x"),
            ("localhost:80".into(), "/x".into())
        );
        assert_eq!(s("http://[::1]:9/m"), ("[::1]:9".into(), "/m".into()));
        assert!(split_url("https://a/b").is_err());
        assert!(split_url("http:///metrics").is_err());
    }

    #[test]
    fn only_a_200_response_yields_a_body() {
        assert_eq!(
            body(
                "u",
                b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\na 1\n"
            )
            .unwrap(),
            "a 1\n"
        );
        let e = body("u", b"HTTP/1.0 404 Not Found\r\n\r\nnope").unwrap_err();
        assert!(e.to_string().contains("404"), "{e}");
        assert!(body("u", b"SSH-2.0-OpenSSH\r\n").is_err());
    }

    #[test]
    fn a_closed_port_is_a_clear_error_with_a_hint() {
        // Bind then drop: the port is free and (almost certainly) nothing listens on it.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let url = format!("http://127.0.0.1:{port}/metrics");
        let e = get(&url, Duration::from_secs(2)).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains(&format!("cannot connect to {url}")), "{msg}");
        assert!(msg.contains("is the router running?"), "{msg}");
        assert!(msg.contains("metrics_listen"), "{msg}");
    }
}
