//! Setting a control interface's MAC, MTU, addresses (IPv4 and IPv6) and link state with
//! `ip` (iproute2) and the interface's IPv6 sysctls: one command per setting, the
//! kernel's own message in the error.
//!
//! IPv6: the interface carries exactly the router's addresses on the port, its link-local
//! one included (configured, else EUI-64 from the MAC: what the router answers NDP for),
//! so ospf6d and bgpd speak from the addresses the data path delivers to. The kernel must
//! never make an address of its own (`addr_gen_mode` none, no SLAAC, no router
//! advertisements taken or solicited) nor hold one tentative (no DAD: the router, not
//! the kernel, owns the addresses on the wire), and keeps them when the link goes down.

use std::process::Command;

use config::startup::PortIface;
use config::types::{Cidr, Cidr6};
use net::wire::ipv6;

/// Why an interface could not be configured.
#[derive(Debug, thiserror::Error)]
pub enum LinkError {
    #[error("`ip {cmd}` failed: {stderr}")]
    Ip { cmd: String, stderr: String },
    #[error("cannot run `ip` (install iproute2): {0}")]
    NoIp(std::io::Error),
    #[error("no ifindex for it in /sys/class/net")]
    NoIfindex,
    #[error("cannot set net.ipv6.conf.{name}.{key}: {error}")]
    Sysctl {
        name: String,
        key: &'static str,
        error: std::io::Error,
    },
}

/// The IPv6 settings of a control interface, in the order they are written (IPv6 is
/// enabled last, once nothing can make an address of its own).
const IPV6_SYSCTLS: [(&str, &str); 8] = [
    // No link-local of the kernel's making (IN6_ADDR_GEN_MODE_NONE): only the router's.
    ("addr_gen_mode", "1"),
    ("accept_ra", "0"),
    ("autoconf", "0"),
    ("router_solicitations", "0"),
    ("accept_dad", "0"),
    ("dad_transmits", "0"),
    ("keep_addr_on_down", "1"),
    ("disable_ipv6", "0"),
];

fn ip(args: &[&str]) -> Result<(), LinkError> {
    let out = Command::new("ip")
        .args(args)
        .output()
        .map_err(LinkError::NoIp)?;
    if out.status.success() {
        return Ok(());
    }
    Err(LinkError::Ip {
        cmd: args.join(" "),
        stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
    })
}

fn mac_string(m: [u8; 6]) -> String {
    m.map(|b| format!("{b:02x}")).join(":")
}

fn cidr_string(addr: u32, len: u8) -> String {
    format!("{}/{len}", std::net::Ipv4Addr::from(addr))
}

/// A control interface's addresses: the port's IPv4 ones, and its IPv6 ones with the
/// link-local address the router answers for on the port.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TapAddrs {
    pub v4: Vec<Cidr>,
    pub v6: Vec<Cidr6>,
}

impl TapAddrs {
    /// `port`'s addresses; without a configured link-local one (fe80::/10), the EUI-64
    /// one from its MAC first, as the router's slow path and pipeline have it.
    pub fn of(port: &PortIface) -> TapAddrs {
        let ll = |c: &Cidr6| ipv6::is_link_local(&c.addr.to_be_bytes());
        let eui64 = (!port.addresses6.iter().any(ll)).then(|| Cidr6 {
            addr: u128::from_be_bytes(ipv6::link_local_from_mac(port.mac)),
            len: 64,
        });
        TapAddrs {
            v4: port.addresses.clone(),
            v6: eui64
                .into_iter()
                .chain(port.addresses6.iter().copied())
                .collect(),
        }
    }
}

/// The `ip` commands that take interface `name` from `old` to `now`: removals first.
/// IPv6 addresses are added without duplicate address detection (`nodad`).
fn changes(name: &str, old: &TapAddrs, now: &TapAddrs) -> Vec<Vec<String>> {
    let cmd = |verb: &str, a: String, tail: &[&str]| {
        let mut c: Vec<String> = ["addr", verb, &a, "dev", name].map(String::from).to_vec();
        c.extend(tail.iter().map(|s| s.to_string()));
        c
    };
    let gone4 = old.v4.iter().filter(|a| !now.v4.contains(a));
    let gone6 = old.v6.iter().filter(|a| !now.v6.contains(a));
    let new4 = now.v4.iter().filter(|a| !old.v4.contains(a));
    let new6 = now.v6.iter().filter(|a| !old.v6.contains(a));
    let del4 = gone4.map(|a| cmd("del", cidr_string(a.addr, a.len), &[]));
    let del6 = gone6.map(|a| cmd("del", a.to_string(), &[]));
    let add4 = new4.map(|a| cmd("replace", cidr_string(a.addr, a.len), &[]));
    let add6 = new6.map(|a| cmd("replace", a.to_string(), &["nodad"]));
    del4.chain(del6).chain(add4).chain(add6).collect()
}

fn run_all(cmds: Vec<Vec<String>>) -> Result<(), LinkError> {
    for c in cmds {
        ip(&c.iter().map(String::as_str).collect::<Vec<_>>())?;
    }
    Ok(())
}

/// Writes [`IPV6_SYSCTLS`] for `name`; false when the kernel has no IPv6 (then the
/// interface carries IPv4 only).
fn ipv6_settings(name: &str) -> Result<bool, LinkError> {
    if !kernel_ipv6(name) {
        return Ok(false);
    }
    let dir = std::path::Path::new("/proc/sys/net/ipv6/conf").join(name);
    for (key, value) in IPV6_SYSCTLS {
        std::fs::write(dir.join(key), value).map_err(|error| LinkError::Sysctl {
            name: name.to_string(),
            key,
            error,
        })?;
    }
    Ok(true)
}

/// The ifindex of interface `name` in this network namespace.
pub fn ifindex(name: &str) -> Option<u32> {
    let p = std::path::Path::new("/sys/class/net")
        .join(name)
        .join("ifindex");
    std::fs::read_to_string(p).ok()?.trim().parse().ok()
}

/// Gives `name` the port's MAC and MTU, the IPv6 settings and `addrs`, and sets it up;
/// its ifindex.
pub fn configure(name: &str, port: &PortIface, addrs: &TapAddrs) -> Result<u32, LinkError> {
    let mac = mac_string(port.mac);
    let mtu = port.mtu.to_string();
    ip(&["link", "set", "dev", name, "address", &mac, "mtu", &mtu])?;
    let mut addrs = addrs.clone();
    if !ipv6_settings(name)? {
        if !addrs.v6.is_empty() {
            eprintln!("cpif: {name:?}: the kernel has no IPv6: the interface carries IPv4 only");
        }
        addrs.v6.clear();
    }
    run_all(changes(name, &TapAddrs::default(), &addrs))?;
    ip(&["link", "set", "dev", name, "up"])?;
    ifindex(name).ok_or(LinkError::NoIfindex)
}

/// Removes from `name` the addresses of `old` not in `now`, and adds those of `now`
/// (IPv4 only when the kernel has no IPv6).
pub fn set_addresses(name: &str, old: &TapAddrs, now: &TapAddrs) -> Result<(), LinkError> {
    if kernel_ipv6(name) {
        return run_all(changes(name, old, now));
    }
    let v4 = |a: &TapAddrs| TapAddrs {
        v4: a.v4.clone(),
        v6: Vec::new(),
    };
    run_all(changes(name, &v4(old), &v4(now)))
}

/// Whether the kernel has IPv6 on interface `name` (its sysctl folder exists).
fn kernel_ipv6(name: &str) -> bool {
    std::path::Path::new("/proc/sys/net/ipv6/conf")
        .join(name)
        .exists()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn port(v6: &[&str]) -> PortIface {
        PortIface {
            id: 0,
            name: "p".into(),
            mac: [2, 0, 0, 0, 0xab, 1],
            mtu: 1500,
            addresses: vec![Cidr {
                addr: 0x0a00_0102,
                len: 24,
            }],
            addresses6: v6.iter().map(|s| s.parse().unwrap()).collect(),
        }
    }

    fn strings(a: &[Cidr6]) -> Vec<String> {
        a.iter().map(|c| c.to_string()).collect()
    }

    #[test]
    fn formats_what_ip_reads() {
        assert_eq!(mac_string([2, 0, 0, 0, 0xab, 1]), "02:00:00:00:ab:01");
        assert_eq!(cidr_string(0x0a00_0102, 24), "10.0.1.2/24");
    }

    #[test]
    fn the_link_local_address_is_the_routers() {
        // RFC 4291 appendix A by hand: 02:00:00:00:ab:01 -> 00:00:00:ff:fe:00:ab:01.
        let a = TapAddrs::of(&port(&["2001:db8::1/64"]));
        assert_eq!(strings(&a.v6), ["fe80::ff:fe00:ab01/64", "2001:db8::1/64"]);
        // A configured one replaces the EUI-64 address, as in the slow path.
        let a = TapAddrs::of(&port(&["fe80::1/64", "2001:db8::1/64"]));
        assert_eq!(strings(&a.v6), ["fe80::1/64", "2001:db8::1/64"]);
        // A port without IPv6 addresses still has its link-local one.
        assert_eq!(
            strings(&TapAddrs::of(&port(&[])).v6),
            ["fe80::ff:fe00:ab01/64"]
        );
    }

    #[test]
    fn changes_remove_first_and_add_ipv6_without_dad() {
        let old = TapAddrs::of(&port(&["2001:db8::1/64"]));
        let now = TapAddrs::of(&port(&["2001:db8:2::1/64"]));
        let c: Vec<String> = changes("mr", &old, &now)
            .iter()
            .map(|c| c.join(" "))
            .collect();
        assert_eq!(
            c,
            [
                "addr del 2001:db8::1/64 dev mr",
                "addr replace 2001:db8:2::1/64 dev mr nodad"
            ]
        );
        let c: Vec<String> = changes("mr", &TapAddrs::default(), &old)
            .iter()
            .map(|c| c.join(" "))
            .collect();
        assert_eq!(
            c,
            [
                "addr replace 10.0.1.2/24 dev mr",
                "addr replace fe80::ff:fe00:ab01/64 dev mr nodad",
                "addr replace 2001:db8::1/64 dev mr nodad"
            ]
        );
        assert!(changes("mr", &old, &old).is_empty());
    }
}
