//! The socket side on a real UNIX socket (no DPDK): mode 0660, a live socket refused, a
//! stale one replaced, garbage, oversized lines and slow or excess clients handled
//! without blocking anyone else.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use net::fib::Fib;
use net::pipeline::{Pipeline, PipelineConfig};
use net::rcu::Rcu;

use super::handle::{Handler, Live};
use super::proto::*;
use super::{Bound, CtlError, CtlSock, MAX_CLIENTS};

struct NoLive;
impl Live for NoLive {
    fn ports(&self) -> Vec<PortView> {
        Vec::new()
    }
    fn workers(&self) -> Vec<WorkerView> {
        Vec::new()
    }
    fn table(&self) -> TableView {
        serde_json::from_str(
            r#"{"generation":1,"ipv4_routes":0,"labels":0,"next_hops":0,"ecmp_groups":0,
            "bytes":0,"reloads_ok":0,"reloads_error":0,"last_good_reload_ms":0,"rcu_pending":0}"#,
        )
        .unwrap()
    }
}

fn dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ctlsock-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn serve(path: &std::path::Path) -> CtlSock {
    serve_bound(Bound::bind(path).unwrap())
}

fn connect(path: &std::path::Path) -> (UnixStream, BufReader<UnixStream>) {
    let s = UnixStream::connect(path).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let r = BufReader::new(s.try_clone().unwrap());
    (s, r)
}

fn line(r: &mut BufReader<UnixStream>) -> Response {
    let mut l = String::new();
    r.read_line(&mut l).unwrap();
    serde_json::from_str(&l).unwrap_or_else(|e| panic!("{l:?}: {e}"))
}

const TABLE: &[u8] = b"{\"cmd\":\"show_table\"}\n";

#[test]
fn mode_0660_refuses_a_live_socket_and_replaces_a_stale_one() {
    let d = dir("bind");
    let path = d.join("sub/r.sock");
    let s = serve(&path);
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o660);
    match Bound::bind(&path) {
        Err(CtlError::InUse(p)) => assert_eq!(p, path),
        other => panic!(
            "a second router bound a live socket: {:?}",
            other.map(|_| ())
        ),
    }
    drop(s);
    assert!(!path.exists(), "the socket file outlived its server");

    // A crashed router's socket: the file is there, nobody listens.
    drop(UnixListener::bind(&path).unwrap());
    assert!(path.exists());
    let s = serve(&path);
    let (mut w, mut r) = connect(&path);
    w.write_all(TABLE).unwrap();
    assert!(line(&mut r).ok);
    drop(s);

    std::fs::write(&path, "not a socket").unwrap();
    assert!(matches!(Bound::bind(&path), Err(CtlError::NotASocket(_))));
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn garbage_oversized_slow_and_excess_clients_never_block_the_others() {
    let d = dir("bad");
    let path = d.join("r.sock");
    let _s = serve(&path);

    // Garbage gets an error and the connection stays usable.
    let (mut w, mut r) = connect(&path);
    w.write_all(b"\x00\xffgarbage\n").unwrap();
    assert!(!line(&mut r).ok);
    w.write_all(TABLE).unwrap();
    assert!(line(&mut r).ok);

    // An endless line: refused at the cap, then closed.
    let (mut w, mut r) = connect(&path);
    let big = vec![b'x'; MAX_REQUEST_BYTES * 4];
    let _ = w.write_all(&big);
    let resp = line(&mut r);
    assert!(resp.error.unwrap().contains("over"));
    let mut rest = Vec::new();
    let _ = r.read_to_end(&mut rest);

    // Slow clients holding every slot: a new one is told it is busy at once...
    let slow: Vec<UnixStream> = (0..MAX_CLIENTS)
        .map(|_| {
            let s = UnixStream::connect(&path).unwrap();
            s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            s
        })
        .collect();
    std::thread::sleep(Duration::from_millis(200));
    let (_w, mut r) = connect(&path);
    let t = Instant::now();
    let resp = line(&mut r);
    assert!(resp.error.unwrap().contains("busy"));
    assert!(t.elapsed() < Duration::from_secs(2));
    // ...and once they time out, the socket serves again.
    std::thread::sleep(super::CLIENT_TIMEOUT + Duration::from_millis(500));
    let (mut w, mut r) = connect(&path);
    w.write_all(TABLE).unwrap();
    assert!(line(&mut r).ok);
    drop(slow);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_configured_socket_in_use_stops_the_router_the_default_one_is_skipped() {
    let d = dir("cfg");
    std::fs::create_dir_all(&d).unwrap();
    let startup = |extra: &str| {
        config::StartupConfig::parse(
            &d.join("r.yaml"),
            &format!(
                "eal: {{file_prefix: ctlsock-test-{}}}\nports:\n  - {{name: in, vdev: net_null0}}\n{extra}",
                std::process::id()
            ),
        )
        .unwrap()
    };
    let explicit = startup("control_socket: r.sock\n");
    let a = super::bind_for(&explicit).unwrap().expect("bound");
    let _served = serve_bound(a);
    assert!(matches!(
        super::bind_for(&explicit),
        Err(CtlError::InUse(_))
    ));

    let default = startup("");
    let path = default.control_socket_path().unwrap();
    assert!(path.starts_with(config::startup::CONTROL_SOCKET_DIR));
    let b = super::bind_for(&default).unwrap().expect("bound");
    let served = serve_bound(b);
    assert!(
        super::bind_for(&default).unwrap().is_none(),
        "a second router took the default socket"
    );
    drop(served);
    assert!(!path.exists());
    std::fs::remove_dir_all(&d).unwrap();
}

fn serve_bound(b: Bound) -> CtlSock {
    let rcu = Arc::new(Rcu::new(Fib::empty(), 2));
    let h = Handler {
        port_names: vec!["in".into()],
        port_macs: vec![[2, 0, 0, 0, 0, 1]],
        pipeline: Pipeline::new(
            PipelineConfig::default(),
            net::pipeline::LocalAddrs::new(&[[2, 0, 0, 0, 0, 1]], []),
        ),
        book: Arc::default(),
        statics: Arc::default(),
    };
    b.serve(h, NoLive, &rcu, None).unwrap()
}
