//! The live side of `show fpm` and `show interfaces`: the FPM session's counters (and
//! its peer, read from the kernel's TCP table: the listener keeps no copy), and the
//! control interfaces with their kernel-side link flag and counters from sysfs.
//! Read-only.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

use super::proto::{FpmView, InterfaceView};
use super::table::mac_str;
use crate::cpif::ControlIfaces;
use crate::fpm::FpmStats;

/// The FPM listener as the socket reads it.
pub struct FpmLive {
    pub stats: Arc<FpmStats>,
    pub listen: SocketAddr,
}

/// The remote end of an established TCP connection to local `port` (IPv4).
pub fn tcp_peer(port: u16) -> Option<String> {
    let table = std::fs::read_to_string("/proc/net/tcp").ok()?;
    table.lines().skip(1).find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        let (local, remote, state) = (f.get(1)?, f.get(2)?, f.get(3)?);
        let lport = u16::from_str_radix(local.split_once(':')?.1, 16).ok()?;
        if lport != port || *state != "01" {
            return None;
        }
        let (ip, rport) = remote.split_once(':')?;
        let ip = u32::from_str_radix(ip, 16).ok()?;
        let rport = u16::from_str_radix(rport, 16).ok()?;
        Some(format!("{}:{rport}", Ipv4Addr::from(ip.to_le_bytes())))
    })
}

pub fn fpm_view(f: &FpmLive) -> FpmView {
    let s = &f.stats;
    let sum = |a: &[std::sync::atomic::AtomicU64]| a.iter().map(|x| x.load(Relaxed)).sum();
    let state = fpm::State::ALL
        .get(s.state.load(Relaxed) as usize)
        .map_or("unknown", |s| s.as_str());
    FpmView {
        enabled: true,
        listen: Some(f.listen.to_string()),
        state: state.into(),
        peer: if state == "idle" || state == "holding" {
            None
        } else {
            tcp_peer(f.listen.port())
        },
        connects: s.connects.load(Relaxed),
        messages: sum(&s.messages),
        errors: sum(&s.errors),
        ipv4_routes: s.active[0].load(Relaxed),
        ipv6_routes: s.active[1].load(Relaxed),
        labels: s.active[2].load(Relaxed),
        overridden_ipv4_routes: s.overridden[0].load(Relaxed),
        overridden_ipv6_routes: s.overridden[1].load(Relaxed),
        overridden_labels: s.overridden[2].load(Relaxed),
        routes_by_source: Vec::new(),
        resyncs: s.resyncs.load(Relaxed),
        last_resync_ms: s.last_resync_ms.load(Relaxed),
        swept: s.swept.load(Relaxed),
        publishes: s.publishes.load(Relaxed),
        rejected: s.rejected.load(Relaxed),
    }
}

fn sysfs(name: &str, what: &str) -> Option<String> {
    let s = std::fs::read_to_string(format!("/sys/class/net/{name}/{what}")).ok()?;
    Some(s.trim().to_string())
}

fn counter(name: &str, what: &str) -> u64 {
    sysfs(name, &format!("statistics/{what}")).map_or(0, |s| s.parse().unwrap_or(0))
}

pub fn interfaces_view(c: &ControlIfaces, port_names: &[String]) -> Vec<InterfaceView> {
    c.taps
        .iter()
        .map(|t| {
            let port = c.ports.get(t.port as usize);
            let flags = sysfs(&t.name, "flags")
                .and_then(|f| u32::from_str_radix(f.trim_start_matches("0x"), 16).ok())
                .unwrap_or(0);
            InterfaceView {
                name: t.name.clone(),
                ifindex: t.ifindex(),
                port: port_names
                    .get(t.port as usize)
                    .cloned()
                    .unwrap_or_else(|| format!("port{}", t.port)),
                up: flags & 1 != 0,
                mac: port.map(|p| mac_str(p.mac)).unwrap_or_default(),
                mtu: port.map_or(0, |p| p.mtu),
                addresses: port
                    .map(|p| p.addresses.iter().map(|a| a.to_string()).collect())
                    .unwrap_or_default(),
                to_kernel_packets: counter(&t.name, "rx_packets"),
                from_kernel_packets: counter(&t.name, "tx_packets"),
            }
        })
        .collect()
}
