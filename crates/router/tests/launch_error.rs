//! An error in the middle of the worker launch loop (here: two workers on one lcore, so
//! the second launch finds the lcore busy) stops the lcores already running and returns
//! the error. Without a stop guard in place before the first launch, the first worker
//! kept polling and `rte_eal_cleanup` waited for it forever.
#![forbid(unsafe_code)]

use std::path::Path;
use std::time::Duration;

use router::{IdlePolicy, PortSpec, Router, Routing, RuntimeSpec, WorkerSpec};

#[test]
fn a_failed_launch_stops_the_workers_already_running() {
    let prefix = format!("router-launch-error-{}", std::process::id());
    let startup = config::StartupConfig::parse(
        Path::new("/nonexistent/startup.yaml"),
        "eal: {lcores: \"0,1\", no_huge: true}\n\
         ports:\n  - {name: a, vdev: net_null_le0, addresses: [10.0.0.1/24]}\n",
    )
    .unwrap();
    let eal_args: Vec<String> = [
        "launch-error-test",
        "-l",
        "0,1",
        "--no-huge",
        "--no-pci",
        "--no-shconf",
        "--no-telemetry",
        "-m",
        "128",
        "--log-level=lib.eal:error",
        "--vdev=net_null_le0",
        "--file-prefix",
        &prefix,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let worker = WorkerSpec {
        lcore: 1,
        rx: vec![(0, 0)],
    };
    let spec = RuntimeSpec {
        eal_args,
        ports: vec![PortSpec {
            name: "a".into(),
            device: "net_null_le0".into(),
            rx_queues: 1,
            rx_desc: 256,
            tx_desc: 256,
            mtu: None,
            mac: None,
            vdev: true,
            promiscuous: true,
        }],
        workers: vec![worker.clone(), worker],
        mempool_size: 4095,
        mempool_cache: 64,
        burst: 32,
        idle: IdlePolicy::BusyPoll,
        duration: Some(Duration::from_secs(30)),
        stats_interval: None,
        metrics_listen: None,
        build: router::metrics::BuildInfo {
            version: "test".into(),
            git_rev: "test".into(),
            dpdk_version: "test".into(),
        },
        mbuf_data_room: startup.mbuf_data_room(),
        test_fault: None,
        routing: Routing {
            startup,
            routes: None,
            pipeline: Default::default(),
            icmp: Default::default(),
        },
    };
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let r: Result<Router, router::RouterError> = Router::start(spec);
        let _ = tx.send(r.map(|_| ()).map_err(|e| e.to_string()));
    });
    let r = rx
        .recv_timeout(Duration::from_secs(20))
        .expect("start() returned: the running worker was stopped");
    let e = r.expect_err("the second launch on a busy lcore fails");
    assert!(e.contains("worker on lcore 1"), "{e}");
}
