//! Setting a control interface's MAC, MTU, IPv4 addresses and link state with `ip`
//! (iproute2): one command per setting, the kernel's own message in the error. IPv6 is
//! turned off on the interface (the router forwards IPv4 and MPLS; the kernel's IPv6
//! chatter would only be sent out of the port).

use std::process::Command;

use config::startup::PortIface;
use config::types::Cidr;

/// Why an interface could not be configured.
#[derive(Debug, thiserror::Error)]
pub enum LinkError {
    #[error("`ip {cmd}` failed: {stderr}")]
    Ip { cmd: String, stderr: String },
    #[error("cannot run `ip` (install iproute2): {0}")]
    NoIp(std::io::Error),
    #[error("no ifindex for it in /sys/class/net")]
    NoIfindex,
}

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

/// The ifindex of interface `name` in this network namespace.
pub fn ifindex(name: &str) -> Option<u32> {
    let p = std::path::Path::new("/sys/class/net")
        .join(name)
        .join("ifindex");
    std::fs::read_to_string(p).ok()?.trim().parse().ok()
}

/// Gives `name` the port's MAC, MTU and addresses and sets it up; its ifindex.
pub fn configure(name: &str, port: &PortIface) -> Result<u32, LinkError> {
    let _ = std::fs::write(format!("/proc/sys/net/ipv6/conf/{name}/disable_ipv6"), "1");
    let mac = mac_string(port.mac);
    let mtu = port.mtu.to_string();
    ip(&["link", "set", "dev", name, "address", &mac, "mtu", &mtu])?;
    for a in &port.addresses {
        ip(&["addr", "replace", &cidr_string(a.addr, a.len), "dev", name])?;
    }
    ip(&["link", "set", "dev", name, "up"])?;
    ifindex(name).ok_or(LinkError::NoIfindex)
}

/// Removes from `name` the addresses of `old` not in `now`, and adds those of `now`.
pub fn set_addresses(name: &str, old: &[Cidr], now: &[Cidr]) -> Result<(), LinkError> {
    for a in old.iter().filter(|a| !now.contains(a)) {
        ip(&["addr", "del", &cidr_string(a.addr, a.len), "dev", name])?;
    }
    for a in now.iter().filter(|a| !old.contains(a)) {
        ip(&["addr", "replace", &cidr_string(a.addr, a.len), "dev", name])?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_what_ip_reads() {
        assert_eq!(mac_string([2, 0, 0, 0, 0xab, 1]), "02:00:00:00:ab:01");
        assert_eq!(cidr_string(0x0a00_0102, 24), "10.0.1.2/24");
    }
}
