//! The metrics HTTP server against misbehaving clients: stalled, slow, oversized, and
//! still connected at shutdown. A scrape must keep working beside all of them.
#![forbid(unsafe_code)]

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use prometheus::{IntCounter, Registry};
use router::metrics::{Limits, MetricsServer};

fn registry() -> Registry {
    let r = Registry::new();
    let c = IntCounter::new("scrape_test_total", "A counter to find in the scrape.").unwrap();
    c.inc_by(7);
    r.register(Box::new(c)).unwrap();
    r
}

fn server(limits: Limits) -> MetricsServer {
    MetricsServer::start_with("127.0.0.1:0".parse().unwrap(), registry(), limits).unwrap()
}

fn scrape(addr: SocketAddr) -> std::io::Result<String> {
    let mut s = TcpStream::connect(addr)?;
    s.set_read_timeout(Some(Duration::from_secs(10)))?;
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")?;
    let mut out = String::new();
    s.read_to_string(&mut out)?;
    Ok(out)
}

fn stalled(addr: SocketAddr) -> TcpStream {
    let mut s = TcpStream::connect(addr).unwrap();
    s.write_all(b"GET /metr").unwrap();
    s
}

/// True when the server has closed `s` (EOF or reset), false when it is still open.
/// Anything the server sent before closing (a 408) is skipped.
fn closed_by_server(s: &mut TcpStream) -> bool {
    s.set_nonblocking(true).unwrap();
    let mut buf = [0u8; 512];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e) if e.kind() == ErrorKind::WouldBlock => return false,
            Err(_) => return true,
        }
    }
}

#[test]
fn scrape_answers_beside_64_stalled_clients_and_the_oldest_are_closed() {
    let limits = Limits::default();
    let srv = server(limits);
    let mut held: Vec<TcpStream> = (0..64).map(|_| stalled(srv.addr())).collect();
    let t = Instant::now();
    let body = scrape(srv.addr()).expect("scrape beside stalled clients");
    let took = t.elapsed();
    assert!(body.starts_with("HTTP/1.1 200 OK"), "{body:.200}");
    assert!(body.contains("scrape_test_total 7"), "{body}");
    // A hang bound, not a speed claim: the stalled clients hold no thread.
    assert!(took < Duration::from_secs(3), "scrape took {took:?}");
    std::thread::sleep(Duration::from_millis(100));
    let closed: Vec<bool> = held.iter_mut().map(closed_by_server).collect();
    let n_closed = closed.iter().filter(|&&c| c).count();
    // The cap holds: every connection past it closed one, oldest first.
    assert!(
        n_closed >= 64 - limits.max_connections,
        "{n_closed} of 64 stalled clients closed, cap {}",
        limits.max_connections
    );
    assert!(closed[0], "the oldest stalled client is closed first");
    assert!(!closed[63], "the newest stalled client is still held");
}

#[test]
fn oversized_requests_are_refused_and_scrapes_continue() {
    let srv = server(Limits::default());
    // A header that never ends: refused once past the limit, connection closed.
    let mut s = TcpStream::connect(srv.addr()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.set_write_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut big = b"GET /metrics HTTP/1.1\r\nX-Big: ".to_vec();
    big.resize(Limits::default().max_request_bytes * 2, b'a');
    let _ = s.write_all(&big);
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    let out = String::from_utf8_lossy(&out);
    assert!(
        out.starts_with("HTTP/1.1 431 "),
        "oversized head answered: {out:.200}"
    );
    assert!(!out.contains("scrape_test_total"), "{out}");
    // A body is refused without being read.
    let mut s = TcpStream::connect(srv.addr()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(b"POST /metrics HTTP/1.1\r\nContent-Length: 100000\r\n\r\nabc")
        .unwrap();
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    assert!(out.starts_with("HTTP/1.1 413 "), "{out:.200}");
    let body = scrape(srv.addr()).unwrap();
    assert!(body.contains("scrape_test_total 7"), "{body:.200}");
}

#[test]
fn slowloris_is_cut_off_by_the_request_timeout() {
    let limits = Limits {
        request_timeout: Duration::from_secs(2),
        ..Limits::default()
    };
    let srv = server(limits);
    let mut s = TcpStream::connect(srv.addr()).unwrap();
    let t = Instant::now();
    let mut sent = 0;
    let request = b"GET /metrics HTTP/1.1\r\nHost: slow.example\r\nUser-Agent: slowloris\r\n\r\n";
    // One byte a second: each byte arrives well within any per-read timeout, so only a
    // deadline on the whole request head stops it.
    let cut = loop {
        if s.write_all(&request[sent..sent + 1]).is_err() {
            break true;
        }
        sent += 1;
        if closed_by_server(&mut s) {
            break true;
        }
        s.set_nonblocking(false).unwrap();
        if t.elapsed() > limits.request_timeout + Duration::from_secs(3) {
            break false;
        }
        std::thread::sleep(Duration::from_secs(1));
    };
    assert!(
        cut,
        "a client sending a byte a second still held after {:?} ({sent} bytes)",
        t.elapsed()
    );
    assert!(sent < request.len(), "the whole request got through");
    let body = scrape(srv.addr()).unwrap();
    assert!(body.starts_with("HTTP/1.1 200"), "{body:.200}");
}

#[test]
fn a_timed_out_client_gets_408() {
    let srv = server(Limits {
        request_timeout: Duration::from_millis(300),
        ..Limits::default()
    });
    let mut s = stalled(srv.addr());
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    assert!(out.starts_with("HTTP/1.1 408 "), "{out:.200}");
}

#[test]
fn shutdown_with_stalled_clients_connected_is_prompt_and_frees_the_port() {
    let srv = server(Limits::default());
    let addr = srv.addr();
    let mut held: Vec<TcpStream> = (0..16).map(|_| stalled(addr)).collect();
    assert!(scrape(addr).unwrap().starts_with("HTTP/1.1 200"));
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        drop(srv);
        tx.send(()).unwrap();
    });
    rx.recv_timeout(Duration::from_secs(5))
        .expect("dropping the server with stalled clients hangs");
    for (i, s) in held.iter_mut().enumerate() {
        assert!(closed_by_server(s), "stalled client {i} still open");
    }
    // The port is free again: a new server binds it.
    let again = MetricsServer::start(addr, registry()).expect("rebind after shutdown");
    assert!(scrape(again.addr())
        .unwrap()
        .contains("scrape_test_total 7"));
}
