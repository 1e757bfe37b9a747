//! `udp_rr`: netperf's UDP_RR experiment without netperf (not in Debian main), for
//! scripts/bench/latency.sh. The client keeps exactly one request outstanding and times
//! each round trip; the server echoes. `flood` and `sink` make a paced background load.
//!
//! Blocking sockets on purpose, as netperf's: the figure includes the hosts' wake-ups,
//! the same for every forwarding element measured. Statistics live in the library.

#![forbid(unsafe_code)]

use std::io::ErrorKind;
use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use udp_rr::args::{Args, Mode, USAGE};
use udp_rr::{check_family, parse_sock_addr, wildcard_for, Summary};

fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    if argv.iter().any(|a| a == "-h" || a == "--help") {
        println!("{USAGE}");
        return;
    }
    let result = Args::parse(&argv).and_then(|a| match a.mode {
        Mode::Server => server(&a),
        Mode::Client => client(&a),
        Mode::Flood => flood(&a),
        Mode::Sink => sink(&a),
    });
    if let Err(e) = result {
        eprintln!("udp_rr: {e}\n\n{USAGE}");
        std::process::exit(2);
    }
}

fn addr(a: &Args, key: &str) -> Result<SocketAddr, String> {
    parse_sock_addr(a.required(key)?).map_err(|e| format!("--{key}: {e}"))
}

/// A socket for talking to `target`: bound to `--bind` (same family) or to the wildcard
/// of `target`'s family, and connected.
fn connected(a: &Args, target: SocketAddr) -> Result<UdpSocket, String> {
    let bind = match a.str("bind") {
        Some(_) => addr(a, "bind")?,
        None => wildcard_for(&target),
    };
    check_family(&bind, &target)?;
    let sock = io("bind", UdpSocket::bind(bind))?;
    io("connect", sock.connect(target))?;
    Ok(sock)
}

fn io<T>(what: &str, r: std::io::Result<T>) -> Result<T, String> {
    r.map_err(|e| format!("{what}: {e}"))
}

fn is_timeout(e: &std::io::Error) -> bool {
    matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut)
}

/// Errors a path that is still coming up (or going away) gives: counted as losses.
fn transient(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        ErrorKind::ConnectionRefused
            | ErrorKind::HostUnreachable
            | ErrorKind::NetworkUnreachable
            | ErrorKind::WouldBlock
    ) || e.raw_os_error() == Some(libc_enobufs())
}

/// ENOBUFS on Linux (a full socket or device queue); std has no kind for it.
const fn libc_enobufs() -> i32 {
    105
}

/// Deadline from `--duration` (0 or absent with `default` 0: none).
fn deadline(a: &Args, default: f64) -> Result<Option<Instant>, String> {
    let s: f64 = a.num("duration", default)?;
    if !(s >= 0.0 && s.is_finite()) {
        return Err(format!("--duration {s} must be >= 0"));
    }
    Ok((s > 0.0).then(|| Instant::now() + Duration::from_secs_f64(s)))
}

fn server(a: &Args) -> Result<(), String> {
    let sock = io("bind", UdpSocket::bind(addr(a, "bind")?))?;
    let end = deadline(a, 0.0)?;
    io(
        "set_read_timeout",
        sock.set_read_timeout(Some(Duration::from_millis(200))),
    )?;
    let mut buf = [0u8; 65536];
    while end.is_none_or(|e| Instant::now() < e) {
        match sock.recv_from(&mut buf) {
            Ok((n, from)) => {
                io("send_to", sock.send_to(&buf[..n], from))?;
            }
            Err(e) if is_timeout(&e) => {}
            Err(e) => return Err(format!("recv_from: {e}")),
        }
    }
    Ok(())
}

struct ClientCfg {
    warmup: Duration,
    measure: Duration,
    size: usize,
    timeout: Duration,
}

fn client(a: &Args) -> Result<(), String> {
    let target = addr(a, "target")?;
    let cfg = ClientCfg {
        warmup: secs(a.num("warmup", 1.0)?)?,
        measure: secs(a.num("duration", 10.0)?)?,
        size: a.num("size", 64usize)?.clamp(8, 65507),
        timeout: Duration::from_millis(a.num("timeout-ms", 200u64)?.max(1)),
    };
    let sock = connected(a, target)?;
    io("set_read_timeout", sock.set_read_timeout(Some(cfg.timeout)))?;
    let (mut rtts, lost, seconds) = run_transactions(&sock, &cfg)?;
    let s = Summary::new(a.str("label").unwrap_or("run"), &mut rtts, lost, seconds);
    println!("{}", s.text());
    if let Some(path) = a.str("json") {
        io(path, std::fs::write(path, s.json() + "\n"))?;
    }
    Ok(())
}

fn secs(s: f64) -> Result<Duration, String> {
    Duration::try_from_secs_f64(s).map_err(|_| format!("{s} is not a duration in seconds"))
}

/// Warm-up, then the measured interval: RTTs (ns) of the measured transactions, the
/// measured requests lost, and the measured interval's length in seconds.
fn run_transactions(sock: &UdpSocket, cfg: &ClientCfg) -> Result<(Vec<u64>, u64, f64), String> {
    let mut req = vec![0u8; cfg.size];
    let mut resp = vec![0u8; cfg.size.max(2048)];
    let mut rtts = Vec::with_capacity(1 << 20);
    let mut lost = 0;
    let mut seq = 0u64;
    let start = Instant::now();
    let measure_from = start + cfg.warmup;
    let end = measure_from + cfg.measure;
    loop {
        let now = Instant::now();
        if now >= end {
            break;
        }
        seq += 1;
        req[..8].copy_from_slice(&seq.to_le_bytes());
        let got = transaction(sock, &req, &mut resp, seq, cfg.timeout)?;
        if now >= measure_from {
            match got {
                Some(rtt) => rtts.push(rtt),
                None => lost += 1,
            }
        }
    }
    Ok((rtts, lost, cfg.measure.as_secs_f64()))
}

/// One request and its response: the RTT in ns, or `None` when it timed out. Responses
/// to earlier (timed-out) requests are skipped.
fn transaction(
    sock: &UdpSocket,
    req: &[u8],
    resp: &mut [u8],
    seq: u64,
    timeout: Duration,
) -> Result<Option<u64>, String> {
    let t0 = Instant::now();
    match sock.send(req) {
        Ok(_) => {}
        // No route or neighbour yet, or an ICMP error from an earlier request: a loss.
        Err(e) if transient(&e) => {
            std::thread::sleep(timeout.min(Duration::from_millis(10)));
            return Ok(None);
        }
        Err(e) => return Err(format!("send: {e}")),
    }
    loop {
        match sock.recv(resp) {
            Ok(n) if n >= 8 && resp[..8] == seq.to_le_bytes() => {
                return Ok(Some(t0.elapsed().as_nanos() as u64));
            }
            Ok(_) => {}
            Err(e) if is_timeout(&e) => return Ok(None),
            Err(e) if transient(&e) => return Ok(None),
            Err(e) => return Err(format!("recv: {e}")),
        }
        if t0.elapsed() >= timeout {
            return Ok(None);
        }
    }
}

fn flood(a: &Args) -> Result<(), String> {
    let target = addr(a, "target")?;
    let rate: u64 = a.num("rate", 0)?;
    if rate == 0 {
        return Err("--rate must be > 0".into());
    }
    let end = deadline(a, 10.0)?;
    let sock = connected(a, target)?;
    let buf = vec![0u8; a.num("size", 64usize)?.clamp(1, 65507)];
    let (mut sent, mut failed) = (0u64, 0u64);
    let start = Instant::now();
    // Paced by the clock in 1 ms ticks: at the tick, send what is due so far.
    while end.is_none_or(|e| Instant::now() < e) {
        let due = (start.elapsed().as_secs_f64() * rate as f64) as u64;
        while sent + failed < due {
            match sock.send(&buf) {
                Ok(_) => sent += 1,
                Err(_) => failed += 1,
            }
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let s = start.elapsed().as_secs_f64();
    println!(
        "udp_rr flood: {sent} sent, {failed} send errors in {s:.2} s = {:.0} pps",
        sent as f64 / s
    );
    Ok(())
}

fn sink(a: &Args) -> Result<(), String> {
    let sock = io("bind", UdpSocket::bind(addr(a, "bind")?))?;
    let end = deadline(a, 0.0)?;
    io(
        "set_read_timeout",
        sock.set_read_timeout(Some(Duration::from_millis(200))),
    )?;
    let mut buf = [0u8; 65536];
    let mut got = 0u64;
    while end.is_none_or(|e| Instant::now() < e) {
        match sock.recv(&mut buf) {
            Ok(_) => got += 1,
            Err(e) if is_timeout(&e) => {}
            Err(e) => return Err(format!("recv: {e}")),
        }
    }
    println!("udp_rr sink: {got} datagrams received");
    Ok(())
}
