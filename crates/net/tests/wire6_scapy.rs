//! The ICMPv6 and NDP bytes this crate emits, decoded by scapy (an independent decoder):
//! types, fields, options, the ICMPv6 checksum (scapy's `in6_chksum`) and the RFC 4884
//! extension checksum and RFC 4950 labels. Needs python3 with scapy (`SCAPY_PYTHON`
//! names the interpreter; default /usr/bin/python3); fails if it is missing.
#![forbid(unsafe_code)]

use std::io::Write;
use std::net::Ipv6Addr;
use std::process::{Command, Stdio};

use net::wire::icmpv6::Icmpv6Repr;
use net::wire::ipv6::{Ipv6Repr, NH_ICMPV6};
use net::wire::ndp::NdpRepr;

const DECODE: &str = r#"
import sys
from scapy.layers.inet6 import IPv6, in6_chksum, ICMPv6NDOptSrcLLAddr, ICMPv6NDOptDstLLAddr, ICMPv6NDOptMTU
from scapy.utils import checksum
for h in sys.stdin.read().split():
    b = bytes.fromhex(h)
    p = IPv6(b)
    i = p.payload
    m = bytearray(b[40:]); m[2:4] = b"\0\0"
    out = ["type=%d" % i.type, "code=%d" % i.code, "cksum=%s" % ("ok" if in6_chksum(58, p, bytes(m)) == i.cksum else "bad")]
    t = i.type
    if t in (128, 129): out += ["id=%d" % i.id, "seq=%d" % i.seq]
    if t == 2: out += ["mtu=%d" % i.mtu]
    if t in (1, 3):
        n = b[44] * 8
        ext = b[48 + n:]
        out += ["len=%d" % b[44], "extver=%d" % (ext[0] >> 4), "extcksum=%s" % ("ok" if checksum(ext) == 0 else "bad")]
        out += ["label=%d" % (int.from_bytes(ext[8 + 4*k:12 + 4*k], "big") >> 12) for k in range((len(ext) - 8) // 4)]
    if t in (135, 136): out += ["tgt=%s" % i.tgt]
    if t == 136: out += ["R=%d" % i.R, "S=%d" % i.S, "O=%d" % i.O]
    if t == 134: out += ["chlim=%d" % i.chlim, "M=%d" % i.M, "O=%d" % i.O, "lifetime=%d" % i.routerlifetime,
                         "reachable=%d" % i.reachabletime, "retrans=%d" % i.retranstimer]
    for cls, name in ((ICMPv6NDOptSrcLLAddr, "sll"), (ICMPv6NDOptDstLLAddr, "tll")):
        if cls in p: out += ["%s=%s" % (name, p[cls].lladdr)]
    if ICMPv6NDOptMTU in p: out += ["optmtu=%d" % p[ICMPv6NDOptMTU].mtu]
    print(" ".join(out))
"#;

fn o(s: &str) -> [u8; 16] {
    s.parse::<Ipv6Addr>().unwrap().octets()
}

fn packet(src: &str, dst: &str, icmp: &Icmpv6Repr) -> String {
    let (s, d) = (o(src), o(dst));
    let mut b = vec![0u8; 40 + icmp.buffer_len()];
    let ip = Ipv6Repr {
        src: s,
        dst: d,
        next_header: NH_ICMPV6,
        hop_limit: 255,
        traffic_class: 0,
        flow_label: 0,
        payload_len: icmp.buffer_len(),
    };
    ip.emit(&mut b).unwrap();
    icmp.emit(&s, &d, &mut b[40..]).unwrap();
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn scapy(packets: &[String]) -> Vec<String> {
    let python = std::env::var("SCAPY_PYTHON").unwrap_or_else(|_| "/usr/bin/python3".into());
    let mut child = Command::new(&python)
        .args(["-c", DECODE])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {python} (set SCAPY_PYTHON): {e}"));
    child
        .stdin
        .take()
        .unwrap()
        .write_all(packets.join("\n").as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "scapy: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn scapy_decodes_icmpv6_and_ndp_as_emitted() {
    let mac = [0x02, 0x00, 0x00, 0xaa, 0xbb, 0xcc];
    let quote = [0x60u8; 72];
    // Labels 100 and 200 (bottom of stack), TTL 1.
    let stack = [0x00, 0x06, 0x40, 0x01, 0x00, 0x0c, 0x81, 0x01];
    let cases: Vec<(Icmpv6Repr, &str)> = vec![
        (
            Icmpv6Repr::EchoRequest {
                ident: 0x1234,
                seq: 7,
                data: b"ping",
            },
            "type=128 code=0 cksum=ok id=4660 seq=7",
        ),
        (
            Icmpv6Repr::TimeExceeded {
                code: 0,
                original: &quote,
                mpls: Some(&stack),
            },
            "type=3 code=0 cksum=ok len=16 extver=2 extcksum=ok label=100 label=200",
        ),
        (
            Icmpv6Repr::PacketTooBig {
                mtu: 1492,
                original: &quote,
            },
            "type=2 code=0 cksum=ok mtu=1492",
        ),
        (
            Icmpv6Repr::Ndp(NdpRepr::NeighborSolicit {
                target: o("2001:db8::2"),
                lladdr: Some(mac),
            }),
            "type=135 code=0 cksum=ok tgt=2001:db8::2 sll=02:00:00:aa:bb:cc",
        ),
        (
            Icmpv6Repr::Ndp(NdpRepr::NeighborAdvert {
                router: true,
                solicited: true,
                override_: false,
                target: o("2001:db8::1"),
                lladdr: Some(mac),
            }),
            "type=136 code=0 cksum=ok tgt=2001:db8::1 R=1 S=1 O=0 tll=02:00:00:aa:bb:cc",
        ),
        (
            Icmpv6Repr::Ndp(NdpRepr::RouterAdvert {
                hop_limit: 64,
                managed: false,
                other: true,
                router_lifetime: 1800,
                reachable_time: 30000,
                retrans_time: 1000,
                lladdr: Some(mac),
                mtu: Some(1500),
            }),
            "type=134 code=0 cksum=ok chlim=64 M=0 O=1 lifetime=1800 reachable=30000 retrans=1000 \
             sll=02:00:00:aa:bb:cc optmtu=1500",
        ),
        (
            Icmpv6Repr::Ndp(NdpRepr::RouterSolicit { lladdr: Some(mac) }),
            "type=133 code=0 cksum=ok sll=02:00:00:aa:bb:cc",
        ),
    ];
    let hex: Vec<String> = cases
        .iter()
        .map(|(r, _)| packet("fe80::1", "ff02::1:ff00:2", r))
        .collect();
    let got = scapy(&hex);
    assert_eq!(got.len(), cases.len(), "{got:?}");
    for ((_, want), got) in cases.iter().zip(&got) {
        assert_eq!(got, want);
    }
}
