//! The IPv6 slow path through the real binary on net_pcap: neighbour solicitations for
//! the router's global and link-local addresses answered (and their senders learned),
//! next hops resolved by solicitations to the solicited-node group (retried, then given
//! up with the held packet counted), router solicitations counted and dropped, an echo
//! reply (to a link-local address too: straight back out of the port, from its
//! link-local address, to the sender's MAC, which is in no table), time exceeded and
//! no-route errors back to the source, and a labelled packet's
//! time exceeded with the RFC 4950 label stack sent on along the LSP. The output pcaps
//! are decoded by tshark (an independent dissector).
#![forbid(unsafe_code)]

mod common;
mod live;

use std::time::{Duration, Instant};

use common::frames6::{icmp, ns, udp, HOST, ROUTER};
use common::{tshark, TempDir};
use live::{sum, LiveRouter};
use net::wire::icmpv6::Icmpv6Repr;
use net::wire::ndp::NdpRepr;
use traffic::write_pcap;

const ROUTES: &str = r#"
neighbors:
  - {ip: 10.0.1.2, mac: "02:00:00:00:01:02"}
mpls:
  - {in_label: 1000, action: swap, via: 10.0.1.2, push: [2000]}
"#;

fn config(dir: &TempDir) -> std::path::PathBuf {
    let prefix = format!("mplsr-test6-{}", std::process::id());
    let cfg = format!(
        "eal: {{lcores: \"0,1\", no_huge: true, memory_mb: 256, file_prefix: {prefix}}}\n\
         ports:\n\
         \x20 - {{name: in, vdev: \"net_pcap_in6{n},rx_pcap={d}/in.pcap,tx_pcap={d}/in-out.pcap\", mac: \"02:00:00:00:00:01\", addresses: [10.0.0.1/24, \"2001:db8::1/64\"]}}\n\
         \x20 - {{name: out, vdev: \"net_pcap_out6{n},tx_pcap={d}/out.pcap\", mac: \"02:00:00:00:01:01\", addresses: [10.0.1.1/24, \"2001:db8:1::1/64\"]}}\n\
         routes: routes.yaml\n\
         metrics_listen: 127.0.0.1:0\n\
         idle: {{backoff: {{}}}}\n\
         punt: {{ttl_expired_pps: 1000, unreachable_pps: 1000, echo_pps: 1000}}\n",
        n = std::process::id(),
        d = dir.0.display()
    );
    let p = dir.path("startup.yaml");
    std::fs::write(&p, cfg).unwrap();
    p
}

fn dropped(text: &str, reason: &str) -> u64 {
    let r = format!("reason=\"{reason}\"");
    sum(text, "mplsrouter_slow_path_dropped_total", &r)
}

fn ndp(text: &str, message: &str) -> u64 {
    let m = format!("message=\"{message}\"");
    sum(text, "mplsrouter_slow_path_ndp_total", &m)
}

#[test]
fn ndp_echo_and_icmpv6_errors() {
    let dir = TempDir::new("slowpath6");
    std::fs::write(dir.path("routes.yaml"), ROUTES).unwrap();
    let echo = Icmpv6Repr::EchoRequest {
        ident: 0x77,
        seq: 1,
        data: b"ping6",
    };
    let rs = Icmpv6Repr::Ndp(NdpRepr::RouterSolicit { lladdr: Some(HOST) });
    let frames = vec![
        // Solicitations for the global and the (EUI-64) link-local address.
        ns("2001:db8::7", "2001:db8::1"),
        ns("fe80::7", "fe80::ff:fe00:1"),
        // One for an address that is not the router's.
        ns("2001:db8::7", "2001:db8::2"),
        icmp([0x33, 0x33, 0, 0, 0, 2], "fe80::7", "ff02::2", 255, rs),
        icmp(ROUTER, "2001:db8::7", "2001:db8::1", 64, echo),
        // From a link-local address the router has not learned.
        icmp(ROUTER, "fe80::8", "fe80::ff:fe00:1", 64, echo),
        // Hop limit 1 through the router, no route, and a labelled packet expiring.
        udp("2001:db8::7", "2001:db8:1::5", 1, &[]),
        udp("2001:db8::7", "2001:db8:99::1", 64, &[]),
        udp("2001:db8::7", "2001:db8:1::5", 64, &[(1000, 1)]),
        // An on-link host nobody answers for: solicited, retried, given up after 3 s.
        udp("2001:db8::7", "2001:db8:1::9", 64, &[]),
    ];
    write_pcap(&dir.path("in.pcap"), &frames).unwrap();
    let r = LiveRouter::start(&config(&dir), 30.0);
    let deadline = Instant::now() + Duration::from_secs(15);
    let m = loop {
        let m = r.scrape();
        if dropped(&m, "ndp_unresolved") == 1 && sum(&m, "mplsrouter_arp_held_packets", "") == 0 {
            break m;
        }
        assert!(Instant::now() < deadline, "did not settle:\n{m}");
        std::thread::sleep(Duration::from_millis(200));
    };
    let (status, out) = r.stop(Duration::from_secs(20));
    assert!(status.success(), "{out}");

    assert_eq!(ndp(&m, "ns_received"), 3, "{m}");
    assert_eq!(ndp(&m, "na_sent"), 2, "{m}");
    assert_eq!(ndp(&m, "rs_received"), 1, "{m}");
    assert_eq!(dropped(&m, "ndp_not_for_us"), 1);
    // The one resolution nobody answered, and none that was answered.
    assert_eq!(ndp(&m, "resolution_failed"), 1, "{m}");
    assert_eq!(ndp(&m, "resolved"), 0, "{m}");
    assert_eq!(dropped(&m, "ndp_router_solicitation"), 1);
    let ns_sent = ndp(&m, "ns_sent");
    assert!(
        (5..=8).contains(&ns_sent),
        "retried every 500 ms for 3 s: {ns_sent}"
    );
    // (`icmp_sent_total` counts replies sent at once; those held until the source's
    // MAC is in the table are counted as transmitted: the pcaps below count them all.)
    let got = sum(&m, "mplsrouter_slow_path_packets_total", "")
        + sum(&m, "mplsrouter_slow_path_generated_total", "");
    let went = sum(&m, "mplsrouter_slow_path_handled_total", "")
        + sum(&m, "mplsrouter_slow_path_transmitted_total", "")
        + sum(&m, "mplsrouter_slow_path_dropped_total", "");
    assert_eq!(got, went, "slow-path accounting:\n{m}");

    let fields = [
        "eth.dst",
        "ipv6.src",
        "ipv6.dst",
        "icmpv6.type",
        "icmpv6.checksum.status",
        "icmpv6.nd.ns.target_address",
        "icmpv6.nd.na.target_address",
        "icmpv6.nd.na.flag.s",
        "icmpv6.opt.linkaddr",
        "mpls.label",
        "icmp.mpls.label",
    ];
    let back = tshark(&dir.path("in-out.pcap"), &fields);
    let of = |t: &str| {
        back.iter()
            .filter(|d| d.get("icmpv6.type") == t)
            .collect::<Vec<_>>()
    };
    let na = of("136");
    assert_eq!(na.len(), 2, "{back:?}");
    for (d, target, to) in [
        (na[0], "2001:db8::1", "2001:db8::7"),
        (na[1], "fe80::ff:fe00:1", "fe80::7"),
    ] {
        assert_eq!(d.get("icmpv6.nd.na.target_address"), target);
        assert_eq!(d.get("ipv6.dst"), to);
        assert_eq!(d.get("eth.dst"), "02:00:00:00:00:07");
        assert_eq!(d.get("icmpv6.opt.linkaddr"), "02:00:00:00:00:01");
        assert_eq!(d.get("icmpv6.checksum.status"), "1");
    }
    let reply = of("129");
    assert_eq!(reply.len(), 2, "{back:?}");
    let to = |dst: &str| *reply.iter().find(|d| d.get("ipv6.dst") == dst).unwrap();
    assert_eq!(to("2001:db8::7").get("ipv6.src"), "2001:db8::1");
    assert_eq!(
        to("2001:db8::7").get("eth.dst"),
        "02:00:00:00:00:07",
        "the learned MAC"
    );
    let ll = to("fe80::8");
    assert_eq!(
        ll.get("ipv6.src"),
        "fe80::ff:fe00:1",
        "the port's link-local"
    );
    assert_eq!(ll.get("eth.dst"), "02:00:00:00:00:07", "the request's MAC");
    assert_eq!(ll.get("icmpv6.checksum.status"), "1");
    let errors: Vec<(&str, &str)> = of("3")
        .into_iter()
        .chain(of("1"))
        .map(|d| (d.get("ipv6.src"), d.get("icmpv6.checksum.status")))
        .collect();
    // (The outer source, then the quoted packet's.)
    let quoted = ("2001:db8::1,2001:db8::7", "1");
    assert_eq!(errors, [quoted, quoted]);

    let fwd = tshark(&dir.path("out.pcap"), &fields);
    let te: Vec<_> = fwd.iter().filter(|d| d.get("icmpv6.type") == "3").collect();
    assert_eq!(te.len(), 1, "along the LSP: {fwd:?}");
    assert_eq!(
        te[0].get("mpls.label"),
        "2000",
        "label-switched like the packet"
    );
    assert_eq!(
        te[0].get("icmp.mpls.label"),
        "1000",
        "RFC 4950: the stack received"
    );
    assert_eq!(te[0].get("ipv6.dst"), "2001:db8::7,2001:db8:1::5");
    let asks: Vec<_> = fwd
        .iter()
        .filter(|d| d.get("icmpv6.nd.ns.target_address") == "2001:db8:1::9")
        .collect();
    assert_eq!(
        asks.len() as u64,
        ns_sent,
        "every solicitation went out on port out"
    );
    assert!(asks.iter().all(|d| d.get("eth.dst") == "33:33:ff:00:00:09"));
    assert!(asks.iter().all(|d| d.get("ipv6.dst") == "ff02::1:ff00:9"));
}
