//! Packets through real DPDK rx/tx bursts on virtual devices, without hugepages or a NIC.
//!
//! One EAL per test process (DPDK cannot be initialised twice), shared by the tests
//! below; each test uses its own vdev and its own mempool so they can run in parallel.
#![forbid(unsafe_code)]

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use dpdk::{lcore, Burst, Eal, Mempool, Port, PortConfig, TxBuffer};
use net::packet::PacketBuf;

fn tmpdir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("dpdk-vdev-io-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn pcap_in() -> PathBuf {
    tmpdir().join("in.pcap")
}
fn pcap_out() -> PathBuf {
    tmpdir().join("out.pcap")
}

/// Distinct, recognisable frames of varying length.
fn frame(i: usize) -> Vec<u8> {
    let len = 60 + (i * 7) % 200;
    (0..len)
        .map(|b| (b as u8) ^ (i as u8).wrapping_mul(31))
        .collect()
}

fn write_pcap(path: &PathBuf, frames: &[Vec<u8>]) {
    let f = std::fs::File::create(path).unwrap();
    let mut w = pcap_file::pcap::PcapWriter::new(f).unwrap();
    for (i, fr) in frames.iter().enumerate() {
        let p =
            pcap_file::pcap::PcapPacket::new(Duration::from_micros(i as u64), fr.len() as u32, fr);
        w.write_packet(&p).unwrap();
    }
}

fn read_pcap(path: &PathBuf) -> Vec<Vec<u8>> {
    let f = std::fs::File::open(path).unwrap();
    let mut r = pcap_file::pcap::PcapReader::new(f).unwrap();
    let mut out = Vec::new();
    while let Some(p) = r.next_packet() {
        out.push(p.unwrap().data.into_owned());
    }
    out
}

const PCAP_FRAMES: usize = 50;

fn eal() -> &'static Eal {
    static EAL: OnceLock<Eal> = OnceLock::new();
    EAL.get_or_init(|| {
        let frames: Vec<Vec<u8>> = (0..PCAP_FRAMES).map(frame).collect();
        write_pcap(&pcap_in(), &frames);
        let prefix = format!("--file-prefix=dpdk-test-{}", std::process::id());
        let pcap_vdev = format!(
            "--vdev=net_pcap_io0,rx_pcap={},tx_pcap={}",
            pcap_in().display(),
            pcap_out().display()
        );
        Eal::init(&[
            "dpdk-test",
            "-l",
            "0,1",
            "--no-huge",
            "--no-pci",
            "--no-shconf",
            "--no-telemetry",
            "-m",
            "256",
            prefix.as_str(),
            "--log-level=lib.eal:error",
            "--vdev=net_ring_loop0",
            "--vdev=net_ring_full0",
            pcap_vdev.as_str(),
        ])
        .expect("EAL init with --no-huge and vdevs")
    })
}

fn rx_all(port: &Port, want: usize, burst: &mut Burst, out: &mut Vec<Vec<u8>>) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while out.len() < want && Instant::now() < deadline {
        port.rx_burst(0, burst);
        for m in burst.drain() {
            out.push(m.data().to_vec());
        }
    }
}

#[test]
fn ring_loopback_preserves_every_byte_and_returns_every_mbuf() {
    let eal = eal();
    let pool = Mempool::new("pool_loop", 1023, 0, -1).unwrap();
    let id = eal.port_by_name("net_ring_loop0").unwrap();
    let mut port = Port::configure(id, &PortConfig::default(), &pool).unwrap();
    port.start().unwrap();
    let baseline = pool.in_use();

    const N: usize = 300;
    let mut tx = TxBuffer::new(id, 0);
    let mut got = Vec::new();
    let mut burst = Burst::new();
    for i in 0..N {
        tx.push(pool.alloc_with(&frame(i)).unwrap());
        if tx.len() == 32 {
            tx.flush();
            rx_all(&port, got.len() + 32, &mut burst, &mut got);
        }
    }
    tx.flush();
    rx_all(&port, N, &mut burst, &mut got);

    assert_eq!(tx.sent(), N as u64);
    assert_eq!(tx.dropped(), 0);
    assert_eq!(got.len(), N);
    for (i, g) in got.iter().enumerate() {
        assert_eq!(g, &frame(i), "frame {i} differs");
    }
    let st = port.stats().unwrap();
    assert_eq!(st.opackets, N as u64);
    assert_eq!(st.ipackets, N as u64);
    assert_eq!(pool.in_use(), baseline, "mbufs leaked");
    port.stop().unwrap();
}

#[test]
fn refused_tx_is_freed_and_counted() {
    let eal = eal();
    let pool = Mempool::new("pool_full", 4095, 0, -1).unwrap();
    let id = eal.port_by_name("net_ring_full0").unwrap();
    let mut port = Port::configure(id, &PortConfig::default(), &pool).unwrap();
    port.start().unwrap();
    let baseline = pool.in_use();

    // Nobody receives: the ring fills and the PMD refuses the rest.
    const N: u64 = 3000;
    let mut tx = TxBuffer::new(id, 0);
    for i in 0..N as usize {
        tx.push(pool.alloc_with(&frame(i)).unwrap());
    }
    tx.flush();
    assert_eq!(tx.sent() + tx.dropped(), N);
    assert!(
        tx.dropped() > 0,
        "the ring should have refused some packets"
    );
    // What was refused is already back in the pool; what was sent sits in the ring.
    assert_eq!(pool.in_use() as u64, baseline as u64 + tx.sent());

    let mut burst = Burst::new();
    let mut got = Vec::new();
    rx_all(&port, tx.sent() as usize, &mut burst, &mut got);
    assert_eq!(got.len() as u64, tx.sent());
    assert_eq!(pool.in_use(), baseline, "mbufs leaked");
    port.stop().unwrap();
}

#[test]
fn pcap_in_pcap_out_round_trip() {
    let eal = eal();
    let pool = Mempool::new("pool_pcap", 1023, 0, -1).unwrap();
    let id = eal.port_by_name("net_pcap_io0").unwrap();
    let mut port = Port::configure(id, &PortConfig::default(), &pool).unwrap();
    port.start().unwrap();
    let baseline = pool.in_use();
    let mut burst = Burst::new();
    let mut tx = TxBuffer::new(id, 0);
    let mut n = 0;
    let deadline = Instant::now() + Duration::from_secs(10);
    while n < PCAP_FRAMES && Instant::now() < deadline {
        port.rx_burst(0, &mut burst);
        for m in burst.drain() {
            n += 1;
            tx.push(m);
        }
        tx.flush();
    }
    assert_eq!(n, PCAP_FRAMES);
    assert_eq!(tx.sent(), PCAP_FRAMES as u64);
    port.stop().unwrap(); // net_pcap closes its dump file on stop
    assert_eq!(pool.in_use(), baseline, "mbufs leaked");
    let out = read_pcap(&pcap_out());
    let want: Vec<Vec<u8>> = (0..PCAP_FRAMES).map(frame).collect();
    assert_eq!(out, want);
}

#[test]
fn panic_on_worker_lcore_is_reported() {
    let eal = eal();
    let workers = eal.worker_lcores();
    assert_eq!(workers, vec![1]);
    let ok = lcore::launch(1, || lcore::current() * 10).unwrap();
    assert_eq!(ok.join().unwrap(), 10);
    let bad = lcore::launch(1, || -> u32 { panic!("boom in worker") }).unwrap();
    // Noticed without joining (the runtime's control loop polls this).
    let t = Instant::now();
    while !bad.is_finished() {
        assert!(t.elapsed() < Duration::from_secs(10), "never finished");
        std::thread::sleep(Duration::from_millis(1));
    }
    let err = bad.join().unwrap_err();
    assert!(err.to_string().contains("boom in worker"), "{err}");
    // The lcore is usable again after a panic; a running closure is not finished.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let s = stop.clone();
    let running = lcore::launch(1, move || {
        while !s.load(std::sync::atomic::Ordering::SeqCst) {
            std::hint::spin_loop();
        }
        7
    })
    .unwrap();
    std::thread::sleep(Duration::from_millis(20));
    assert!(!running.is_finished());
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    assert_eq!(running.join().unwrap(), 7);
}

#[test]
fn errors_carry_dpdk_text() {
    let eal = eal();
    let e = eal.port_by_name("no_such_port").unwrap_err();
    assert!(e.to_string().contains("no_such_port"), "{e}");
    let e2 = Eal::init(&["again"]).unwrap_err();
    assert!(e2.to_string().contains("already initialised"), "{e2}");
}

#[test]
fn rte_lpm_longest_match_and_bulk() {
    let _eal = eal();
    let mut lpm = dpdk::RteLpm::new("test_lpm", 64, 16).unwrap();
    lpm.add(0x0a000000, 8, 1).unwrap();
    lpm.add(0x0a010000, 16, 2).unwrap();
    lpm.add(0x0a010203, 32, 3).unwrap();
    assert_eq!(lpm.lookup(0x0a020304), Some(1));
    assert_eq!(lpm.lookup(0x0a010505), Some(2));
    assert_eq!(lpm.lookup(0x0a010203), Some(3));
    assert_eq!(lpm.lookup(0x0b000000), None);
    let ips = [0x0a020304, 0x0a010505, 0x0a010203, 0x0b000000];
    let mut out = [0u32; 4];
    lpm.lookup_bulk(&ips, &mut out, u32::MAX);
    assert_eq!(out, [1, 2, 3, u32::MAX]);
    assert_eq!(lpm.lookup_x4(&ips, 77), [1, 2, 3, 77]);
    lpm.delete(0x0a010000, 16).unwrap();
    assert_eq!(lpm.lookup(0x0a010505), Some(1));
}

/// `Mbuf`'s one-call `shrink` (its own code, not the trait's default) leaves the same
/// bytes and headroom as the default on a `VecBuf`, and keeps `pkt_len` equal to
/// `data_len` on a single segment.
#[test]
fn mbuf_shrink_matches_the_default() {
    let _eal = eal();
    let pool = Mempool::new("pool_shrink", 63, 0, -1).unwrap();
    let bytes: Vec<u8> = (0..64u8).collect();
    let mut m = pool.alloc_with(&bytes).unwrap();
    let mut v = net::packet::VecBuf::with_headroom(&bytes, m.headroom());
    // (front, back): within bounds, then past what is left.
    for (front, back) in [(4, 6), (0, 3), (18, 0), (0, 100), (100, 0), (2, 30)] {
        assert_eq!(
            m.shrink(front, back),
            v.shrink(front, back),
            "{front} {back}"
        );
        assert_eq!(m.headroom(), v.headroom(), "{front} {back}");
        assert_eq!(m.pkt_len() as usize, m.len());
    }
}
