//! The startup config (`dpdk-config/*.yaml`): EAL, ports, workers, pools, limits.
//!
//! Read once at start. [`StartupConfig::load`] decodes and validates the whole file and
//! reports every problem with its position; the result is plain data the runtime turns
//! into DPDK calls ([`StartupConfig::eal_args`], [`StartupConfig::workers`]). This module
//! never touches DPDK or the routes: it only says where the routes file is.
//!
//! Port ids: the config's port id is the index in `ports` (0, 1, ...), the id used in
//! every [`net::fib::Fib`]. DPDK numbers devices itself (PCI devices are probed before
//! vdevs, in bus order), so the runtime must map config index -> DPDK port id by name
//! with [`PortConfig::device_name`] (`rte_eth_dev_get_port_by_name`). vdevs are passed
//! to the EAL in `ports` order, so for an all-vdev config the two numberings coincide.

use std::net::SocketAddr;
use std::path::{Path as FsPath, PathBuf};

use serde::Deserialize;

mod fpm;
mod punt;
mod validate;

pub use fpm::{
    FpmConfig, LinuxIf, DEFAULT_FPM_LISTEN, DEFAULT_HOLD_TIME_S, DEFAULT_PUBLISH_INTERVAL_MS,
    DEFAULT_RESYNC_MIN_S, DEFAULT_RESYNC_SETTLE_MS,
};
pub use punt::{PuntConfig, MAX_PUNT_PPS};

use crate::de::{Decoder, Path, Spanned};
use crate::diag::{ConfigError, Diagnostic, Diagnostics};
use crate::read::{self, DEFAULT_MAX_ROUTES_FILE_BYTES};
use crate::types::{AnyCidr, Cidr, Cidr6, MacAddr};
use crate::yaml::{self, Node};

/// Top-level keys of a startup config (also used to tell the two file kinds apart).
pub const STARTUP_KEYS: &[&str] = &[
    "eal",
    "ports",
    "workers",
    "mempool",
    "burst_size",
    "idle",
    "metrics_listen",
    "routes",
    "icmp_rate_limit",
    "arp",
    "punt",
    "max_label_depth",
    "ttl_expiry_reply",
    "max_routes_file_bytes",
    "fpm",
    "control_socket",
];

/// EAL settings: convenience keys plus raw `args` appended last (they win).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EalConfig {
    /// Extra EAL arguments, passed after the generated ones.
    #[serde(default)]
    pub args: Vec<String>,
    /// `-l` core list, e.g. `0-3` or `0,2,4`. Default `0,1`: main lcore 0, one worker.
    pub lcores: Option<Spanned<String>>,
    /// `-m` memory in MB. Default 512 with `no_huge`, else DPDK's own default.
    pub memory_mb: Option<u32>,
    /// Run without hugepages (containers, CI).
    #[serde(default)]
    pub no_huge: bool,
    /// `--file-prefix`, so several instances can share a host.
    pub file_prefix: Option<String>,
    /// Extra `--vdev` devices that are not router ports (ports bring their own).
    #[serde(default)]
    pub vdevs: Vec<String>,
}

/// One network port.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PortConfig {
    pub name: Spanned<String>,
    /// PCI address (`0000:01:00.0`) of a NIC bound to vfio-pci; exclusive with `vdev`.
    pub pci: Option<Spanned<String>>,
    /// A virtual device (`net_pcap0,rx_pcap=in.pcap`, `net_null0`, `net_af_packet0,iface=veth0`).
    pub vdev: Option<Spanned<String>>,
    /// Override the NIC's MAC address.
    pub mac: Option<MacAddr>,
    /// Receive frames for every MAC, not only the port's own (and broadcast/multicast).
    /// The router routes only frames addressed to the port's MAC either way (others are
    /// counted as `other_host` drops), so this only decides what reaches the workers.
    /// Default: off for PCI ports (the NIC filters on its MAC, which `mac` sets); on for
    /// vdevs, which often cannot take the configured MAC (net_pcap, net_null; af_packet
    /// without CAP_NET_ADMIN) and would otherwise never see frames sent to it. See
    /// [`PortConfig::promiscuous`].
    #[serde(default)]
    pub promiscuous: Option<Spanned<bool>>,
    /// The router's addresses on this port, `10.0.0.1/24` or `2001:db8:1::1/64`; the
    /// first of each family is the source of ICMP errors sent from this port.
    #[serde(default)]
    pub addresses: Vec<Spanned<AnyCidr>>,
    #[serde(default = "default_mtu")]
    pub mtu: Spanned<u16>,
    #[serde(default = "one")]
    pub rx_queues: Spanned<u16>,
    /// Default: one per worker (each worker owns a TX queue on every port).
    pub tx_queues: Option<Spanned<u16>>,
    #[serde(default = "default_desc")]
    pub rx_desc: Spanned<u16>,
    #[serde(default = "default_desc")]
    pub tx_desc: Spanned<u16>,
    /// A Linux TAP twin of the port for FRR's daemons (`control_interface: mr-in`): the
    /// router creates it with the port's MAC, MTU and addresses, sends it the control
    /// traffic it does not answer itself and transmits what the kernel writes to it.
    pub control_interface: Option<Spanned<String>>,
    /// The port's IPv6 link-local address (`link_local6: fe80::1`), instead of the
    /// EUI-64 one derived from its MAC (RFC 4291 appendix A). The source of the NDP the
    /// router sends on the port, and of its ICMPv6 when the port has no global address.
    pub link_local6: Option<Spanned<String>>,
}

/// `link_local6` as an address: `None` when unset or not a link-local IPv6 address
/// (validation reports that).
fn link_local6(p: &PortConfig) -> Option<Cidr6> {
    let a = crate::types::parse_ipv6(&p.link_local6.as_ref()?.value)?;
    crate::types::is_link_local6(a).then_some(Cidr6 { addr: a, len: 64 })
}

fn default_mtu() -> Spanned<u16> {
    Spanned::new(1500, Default::default())
}
fn one() -> Spanned<u16> {
    Spanned::new(1, Default::default())
}
fn default_desc() -> Spanned<u16> {
    Spanned::new(1024, Default::default())
}

impl PortConfig {
    /// Whether the port runs in promiscuous mode: as configured, else on for vdevs and
    /// off for PCI ports.
    pub fn promiscuous(&self) -> bool {
        self.promiscuous
            .as_ref()
            .map_or(self.vdev.is_some(), |p| p.value)
    }

    /// The DPDK device name to look the port id up with (`rte_eth_dev_get_port_by_name`):
    /// the PCI address, or the vdev string up to its first comma.
    pub fn device_name(&self) -> &str {
        match (&self.pci, &self.vdev) {
            (Some(p), _) => p.value.as_str(),
            (None, Some(v)) => v.value.split(',').next().unwrap_or(""),
            (None, None) => "",
        }
    }
}

/// One RX queue polled by a worker.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RxQueueConfig {
    /// Port name.
    pub port: Spanned<String>,
    pub queue: Spanned<u16>,
}

/// A worker lcore and the queues it polls.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkerConfig {
    pub lcore: Spanned<u32>,
    pub rx: Vec<RxQueueConfig>,
}

/// Packet buffer pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MempoolConfig {
    /// Number of mbufs (2^n - 1 is the most memory-efficient). Default: enough for
    /// every descriptor and lcore cache, twice over ([`StartupConfig::mempool_size`]).
    pub size: Option<u32>,
    /// Per-lcore cache (at most 512, DPDK's limit).
    #[serde(default = "default_cache")]
    pub cache: u32,
}

fn default_cache() -> u32 {
    256
}

impl Default for MempoolConfig {
    fn default() -> Self {
        MempoolConfig {
            size: None,
            cache: default_cache(),
        }
    }
}

/// What a worker does when a poll returns no packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub enum IdlePolicy {
    /// Spin: lowest latency, one core at 100%.
    #[default]
    BusyPoll,
    /// Sleep after `after_empty_polls` empty polls, doubling from `min_us` to `max_us`;
    /// the worker goes offline for epoch publication while it sleeps.
    Backoff {
        #[serde(default = "default_after")]
        after_empty_polls: u32,
        #[serde(default = "default_min_us")]
        min_us: u32,
        #[serde(default = "default_max_us")]
        max_us: u32,
    },
}

fn default_after() -> u32 {
    100
}
fn default_min_us() -> u32 {
    1
}
fn default_max_us() -> u32 {
    1000
}

/// Token buckets for the ICMP messages the router generates: one for errors (time
/// exceeded, fragmentation needed), one for echo replies (`echo_per_second` and
/// `echo_burst`, by default the same numbers as the errors').
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IcmpRateLimit {
    #[serde(default = "default_icmp_rate")]
    pub per_second: u32,
    #[serde(default = "default_icmp_burst")]
    pub burst: u32,
    #[serde(default)]
    pub echo_per_second: Option<u32>,
    #[serde(default)]
    pub echo_burst: Option<u32>,
}

/// Neighbor learning (`arp:`): whether unsolicited ARP replies create entries (Linux's
/// `arp_accept`), how long a learned entry is trusted before it is probed again, and
/// how many learned entries there may be.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArpConfig {
    #[serde(default)]
    pub accept_unsolicited: bool,
    #[serde(default = "default_reachable_ms")]
    pub reachable_ms: u32,
    #[serde(default = "default_max_entries")]
    pub max_entries: u32,
}

fn default_reachable_ms() -> u32 {
    30_000
}
fn default_max_entries() -> u32 {
    4096
}

impl Default for ArpConfig {
    fn default() -> Self {
        ArpConfig {
            accept_unsolicited: false,
            reachable_ms: default_reachable_ms(),
            max_entries: default_max_entries(),
        }
    }
}

fn default_icmp_rate() -> u32 {
    1000
}
fn default_icmp_burst() -> u32 {
    100
}

impl Default for IcmpRateLimit {
    fn default() -> Self {
        IcmpRateLimit {
            per_second: default_icmp_rate(),
            burst: default_icmp_burst(),
            echo_per_second: None,
            echo_burst: None,
        }
    }
}

/// Where "TTL exceeded" for a labelled packet goes (RFC 3032 section 2.3.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub enum TtlExpiryReply {
    /// Send the ICMP error onwards along the LSP with the original label stack, so the
    /// egress LER (which has an IP route back) returns it.
    #[default]
    AlongLsp,
    /// Reply directly from this router (needs an IP route to the source).
    Direct,
}

/// The decoded startup config, with defaults filled in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StartupConfig {
    /// The file it was read from.
    pub file: PathBuf,
    pub eal: EalConfig,
    pub ports: Vec<PortConfig>,
    /// As written; `None` means the default (see [`StartupConfig::workers`]).
    pub workers_config: Option<Vec<WorkerConfig>>,
    pub mempool: MempoolConfig,
    pub burst_size: u16,
    pub idle: IdlePolicy,
    pub metrics_listen: SocketAddr,
    /// Routes file, resolved against the config file's directory.
    pub routes: Option<PathBuf>,
    pub icmp_rate_limit: IcmpRateLimit,
    pub arp: ArpConfig,
    /// Per-reason punt budgets of each worker (`punt:`).
    pub punt: PuntConfig,
    pub max_label_depth: u8,
    pub ttl_expiry_reply: TtlExpiryReply,
    /// Largest routes file read, at startup, on reload and by `check` (bytes).
    pub max_routes_file_bytes: u64,
    /// FRR's zebra over FPM; `None` (the default) keeps the listener off.
    pub fpm: Option<FpmConfig>,
    /// The operator's control socket (`show`, `lookup`), resolved against the config
    /// file's directory; `None`: the default, see [`StartupConfig::control_socket_path`].
    pub control_socket: Option<PathBuf>,
}

/// A worker with its queues resolved to port ids.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkerPlan {
    pub lcore: u32,
    /// (port id, queue id) pairs.
    pub rx: Vec<(u16, u16)>,
}

/// A port as the route compiler needs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortIface {
    pub id: u16,
    pub name: String,
    pub mac: [u8; 6],
    pub mtu: u16,
    /// IPv4 addresses.
    pub addresses: Vec<Cidr>,
    /// IPv6 addresses (global or link-local), in file order.
    pub addresses6: Vec<Cidr6>,
}

/// A port's Linux twin as the runtime creates it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ControlIfaceConfig {
    pub port: u16,
    /// The Linux interface name (at most 15 bytes).
    pub name: String,
}

/// The largest `burst_size`: a worker's burst arrays hold 64 mbufs (`dpdk::BURST_MAX`;
/// the router asserts the two agree), so a larger setting could not be honoured.
pub const MAX_BURST: u16 = 64;
/// Packets per RX poll and TX burst when `burst_size` is left out: the largest a worker
/// holds. A poll takes what is waiting, up to this, and never waits to fill it, so the
/// size matters only under load, where 64 forwards 5-16% more than DPDK's customary 32
/// (docs/benchmarks.md, sessions 18 and 19).
pub const DEFAULT_BURST: u16 = MAX_BURST;
pub const DEFAULT_MAX_LABEL_DEPTH: u8 = 16;
pub const DEFAULT_METRICS_LISTEN: &str = "127.0.0.1:9550";

/// DPDK's `RTE_PKTMBUF_HEADROOM` (the default build's 128 bytes).
pub const MBUF_HEADROOM: u32 = 128;

/// Directory of the default control sockets (`<file_prefix>.sock`).
pub const CONTROL_SOCKET_DIR: &str = "/run/mplsrouter";

impl StartupConfig {
    /// The control socket: `control_socket` if set, else
    /// `/run/mplsrouter/<file_prefix>.sock` once the EAL file prefix is known.
    pub fn control_socket_path(&self) -> Option<PathBuf> {
        self.control_socket.clone().or_else(|| {
            let prefix = self.eal.file_prefix.as_ref()?;
            Some(PathBuf::from(CONTROL_SOCKET_DIR).join(format!("{prefix}.sock")))
        })
    }

    /// Reads, decodes and validates a startup config file.
    pub fn load(path: &FsPath) -> Result<StartupConfig, ConfigError> {
        let text = read::read_file(path, read::Limit::STARTUP)?;
        StartupConfig::parse(path, &text)
    }

    /// Decodes and validates `text` as if read from `path` (used for messages and to
    /// resolve the routes path).
    pub fn parse(path: &FsPath, text: &str) -> Result<StartupConfig, ConfigError> {
        let root = yaml::parse(text).map_err(|e| {
            ConfigError::Invalid(Diagnostics(vec![Diagnostic::from_syntax(path, e)]))
        })?;
        StartupConfig::from_node(path, &root)
    }

    pub(crate) fn from_node(path: &FsPath, root: &Node) -> Result<StartupConfig, ConfigError> {
        let (cfg, errors) = StartupConfig::from_node_partial(path, root);
        if !errors.is_empty() {
            return Err(ConfigError::Invalid(errors));
        }
        Ok(cfg)
    }

    /// Decodes what it can, and the errors: `check` goes on to the routes file with the
    /// ports that did decode.
    pub(crate) fn from_node_partial(path: &FsPath, root: &Node) -> (StartupConfig, Diagnostics) {
        let d = Decoder::new();
        let cfg = decode(&d, path, root);
        (cfg, Diagnostics::from_de(path, d.into_errors()))
    }

    /// Workers as configured, or the default: one worker on the first non-main lcore
    /// polling every RX queue of every port.
    pub fn workers(&self) -> Vec<WorkerPlan> {
        match &self.workers_config {
            Some(ws) => ws
                .iter()
                .map(|w| WorkerPlan {
                    lcore: w.lcore.value,
                    rx: w
                        .rx
                        .iter()
                        .filter_map(|q| Some((self.port_id(&q.port.value)?, q.queue.value)))
                        .collect(),
                })
                .collect(),
            None => vec![WorkerPlan {
                lcore: self.lcores().get(1).copied().unwrap_or(1),
                rx: self
                    .ports
                    .iter()
                    .enumerate()
                    .flat_map(|(i, p)| (0..p.rx_queues.value).map(move |q| (i as u16, q)))
                    .collect(),
            }],
        }
    }

    /// Mbufs the pool must hold at least: every RX and TX descriptor, plus a full cache
    /// and a burst for each lcore.
    pub fn mempool_needed(&self) -> u32 {
        let desc: u32 = (0..self.ports.len() as u16)
            .map(|i| {
                let p = &self.ports[i as usize];
                p.rx_queues.value as u32 * p.rx_desc.value as u32
                    + self.tx_queues(i) as u32 * p.tx_desc.value as u32
            })
            .sum();
        let lcores = self.workers().len() as u32 + 1;
        desc + lcores * (self.mempool.cache + self.burst_size as u32)
    }

    /// The pool size to create: as configured, or the smallest 2^n - 1 holding twice
    /// [`StartupConfig::mempool_needed`].
    pub fn mempool_size(&self) -> u32 {
        self.mempool
            .size
            .unwrap_or_else(|| (2 * self.mempool_needed() + 1).next_power_of_two() - 1)
    }

    /// Packet bytes one mbuf must hold so a frame of the largest port MTU fits in one
    /// segment: the MTU plus Ethernet header, two VLAN tags and FCS, plus the 34 bytes
    /// af_packet puts before a frame in its ring frames (which are this size too, see
    /// [`StartupConfig::vdev_arg`]); at least DPDK's default 2048, rounded up to 1 KiB
    /// (MTU 1500: 2048; MTU 9000: 9216).
    pub fn mbuf_data_size(&self) -> u32 {
        let mtu = self.ports.iter().map(|p| p.mtu.value).max().unwrap_or(1500) as u32;
        (mtu + 14 + 8 + 4 + 34).max(2048).next_multiple_of(1024)
    }

    /// A port's `--vdev` argument: as written, except that an af_packet device that names
    /// no `framesz`, on a router whose largest MTU does not fit af_packet's default
    /// 2048-byte ring frames (the kernel would cut jumbo frames short), gets ring frames
    /// holding a whole frame: `framesz` is the mbuf data size (a ring frame's data then
    /// fits one mbuf, as the PMD checks), `blocksz` the smallest multiple of both it and
    /// the page size (the PMD addresses frames as if blocks were back to back).
    pub fn vdev_arg(&self, vdev: &str) -> String {
        let size = self.mbuf_data_size();
        if !vdev.starts_with("net_af_packet") || size <= 2048 || vdev.contains("framesz=") {
            return vdev.to_string();
        }
        let mut block = size;
        while !block.is_multiple_of(4096) {
            block += size;
        }
        format!("{vdev},framesz={size},blocksz={block}")
    }

    /// The pool's data room per mbuf: [`StartupConfig::mbuf_data_size`] plus DPDK's
    /// headroom (`RTE_PKTMBUF_HEADROOM`, 128), where labels are pushed.
    pub fn mbuf_data_room(&self) -> u16 {
        (MBUF_HEADROOM + self.mbuf_data_size()) as u16
    }

    /// Memory the packet pool takes: per mbuf its data room, the 128-byte `rte_mbuf` and
    /// the mempool's 64-byte object header.
    pub fn mempool_bytes(&self) -> u64 {
        self.mempool_size() as u64 * (self.mbuf_data_room() as u64 + 128 + 64)
    }

    /// TX queues to configure on `port`: as written, or one per worker.
    pub fn tx_queues(&self, port: u16) -> u16 {
        self.ports
            .get(port as usize)
            .and_then(|p| p.tx_queues.map(|t| t.value))
            .unwrap_or(self.workers().len() as u16)
    }

    /// The config port id of the port called `name`.
    pub fn port_id(&self, name: &str) -> Option<u16> {
        self.ports
            .iter()
            .position(|p| p.name.value == name)
            .map(|i| i as u16)
    }

    /// The lcores the EAL is started with, main lcore first.
    pub fn lcores(&self) -> Vec<u32> {
        match &self.eal.lcores {
            Some(s) => parse_lcores(&s.value).unwrap_or_default(),
            None => vec![0, 1],
        }
    }

    /// The EAL argument vector, program name first.
    ///
    /// Generated: `-l` (`--lcores` when the list places lcores on CPUs), `-m`, `--no-huge`, `--file-prefix`, one `-a PCI` per PCI port
    /// (or `--no-pci` when there is none and `args` allow-lists nothing), one
    /// `--vdev` per vdev port in port order, then `eal.vdevs`, then `eal.args`.
    pub fn eal_args(&self, program: &str) -> Vec<String> {
        let mut a = vec![program.to_string()];
        let lcores = self
            .eal
            .lcores
            .as_ref()
            .map_or("0,1".to_string(), |l| l.value.clone());
        let flag = if lcores_mapped(&lcores) {
            "--lcores"
        } else {
            "-l"
        };
        a.extend([flag.into(), lcores]);
        let mem = self
            .eal
            .memory_mb
            .or(if self.eal.no_huge { Some(512) } else { None });
        if let Some(m) = mem {
            a.extend(["-m".into(), m.to_string()]);
        }
        if self.eal.no_huge {
            a.push("--no-huge".into());
        }
        if let Some(p) = &self.eal.file_prefix {
            a.extend(["--file-prefix".into(), p.clone()]);
        }
        let mut any_pci = false;
        for p in &self.ports {
            if let Some(pci) = &p.pci {
                a.extend(["-a".into(), pci.value.clone()]);
                any_pci = true;
            }
        }
        let user_pci = self
            .eal
            .args
            .iter()
            .any(|x| matches!(x.as_str(), "-a" | "--allow" | "-b" | "--block" | "--no-pci"));
        if !any_pci && !user_pci {
            a.push("--no-pci".into());
        }
        for p in &self.ports {
            if let Some(v) = &p.vdev {
                a.extend(["--vdev".into(), self.vdev_arg(&v.value)]);
            }
        }
        for v in &self.eal.vdevs {
            a.extend(["--vdev".into(), v.clone()]);
        }
        a.extend(self.eal.args.iter().cloned());
        a
    }

    /// The ports' control interfaces (`control_interface:`), in port order.
    pub fn control_interfaces(&self) -> Vec<ControlIfaceConfig> {
        self.ports
            .iter()
            .enumerate()
            .filter_map(|(i, p)| {
                Some(ControlIfaceConfig {
                    port: i as u16,
                    name: p.control_interface.as_ref()?.value.clone(),
                })
            })
            .collect()
    }

    /// Ports for the route compiler. `mac(id)` gives the NIC's MAC when the config has
    /// no override (the runtime reads it from the device; `check` passes zeros).
    pub fn port_ifaces(&self, mut mac: impl FnMut(u16) -> [u8; 6]) -> Vec<PortIface> {
        self.ports
            .iter()
            .enumerate()
            .map(|(i, p)| PortIface {
                id: i as u16,
                name: p.name.value.clone(),
                mac: p.mac.map_or_else(|| mac(i as u16), |m| m.0),
                mtu: p.mtu.value,
                addresses: p
                    .addresses
                    .iter()
                    .filter_map(|a| match a.value {
                        AnyCidr::V4(c) => Some(c),
                        AnyCidr::V6(_) => None,
                    })
                    .collect(),
                // The configured link-local first: the port's link-local address is
                // the first fe80::/10 one of its addresses.
                addresses6: link_local6(p)
                    .into_iter()
                    .chain(p.addresses.iter().filter_map(|a| match a.value {
                        AnyCidr::V6(c) => Some(c),
                        AnyCidr::V4(_) => None,
                    }))
                    .collect(),
            })
            .collect()
    }
}

/// Parses an EAL core list (`0-3,6`); `None` if malformed.
pub fn parse_lcores(s: &str) -> Option<Vec<u32>> {
    let mut out = Vec::new();
    for part in s.split(',') {
        let part = part.trim();
        if let Some((lcore, cpu)) = part.split_once('@') {
            // `lcore@cpu`: the lcore's thread runs on that CPU (EAL `--lcores`).
            let _: u32 = cpu.trim().parse().ok()?;
            out.push(lcore.trim().parse().ok()?);
            continue;
        }
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (u32, u32) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
                if a > b || b - a > 1024 {
                    return None;
                }
                out.extend(a..=b);
            }
            None => out.push(part.parse().ok()?),
        }
    }
    Some(out)
}

/// Whether an lcore list places lcores on CPUs (`lcore@cpu`, EAL `--lcores`) rather than
/// naming CPUs (EAL `-l`).
fn lcores_mapped(s: &str) -> bool {
    s.contains('@')
}

fn decode(d: &Decoder, file: &FsPath, root: &Node) -> StartupConfig {
    let mut cfg = StartupConfig {
        file: file.to_path_buf(),
        eal: EalConfig::default(),
        ports: Vec::new(),
        workers_config: None,
        mempool: MempoolConfig::default(),
        burst_size: DEFAULT_BURST,
        idle: IdlePolicy::default(),
        metrics_listen: DEFAULT_METRICS_LISTEN.parse().expect("valid default"),
        routes: None,
        icmp_rate_limit: IcmpRateLimit::default(),
        arp: ArpConfig::default(),
        punt: PuntConfig::default(),
        max_label_depth: DEFAULT_MAX_LABEL_DEPTH,
        ttl_expiry_reply: TtlExpiryReply::default(),
        max_routes_file_bytes: DEFAULT_MAX_ROUTES_FILE_BYTES,
        fpm: None,
        control_socket: None,
    };
    let mut fpm_section = None;
    let mut seen_ports = false;
    // Source index of each decoded port/worker: bad elements are skipped, and messages
    // must still name the element as written.
    let mut port_idx: Vec<usize> = Vec::new();
    let mut worker_idx: Vec<usize> = Vec::new();
    let mut burst = None;
    let mut depth = None;
    let mut listen = None;
    let mut max_routes = None;
    for (key, v) in d.top_level(root, STARTUP_KEYS, "a startup config") {
        let p = Path::Key(&Path::Root, key);
        match key {
            "eal" => cfg.eal = d.value(v, &p).unwrap_or_default(),
            "ports" => {
                seen_ports = true;
                let items = d.items(v, &p);
                port_idx = items.iter().map(|(i, _)| *i).collect();
                cfg.ports = items.into_iter().map(|(_, x)| x).collect();
            }
            "workers" => {
                let items = d.items(v, &p);
                worker_idx = items.iter().map(|(i, _)| *i).collect();
                cfg.workers_config = Some(items.into_iter().map(|(_, x)| x).collect());
            }
            "mempool" => cfg.mempool = d.value(v, &p).unwrap_or_default(),
            "burst_size" => burst = d.value::<Spanned<u16>>(v, &p),
            "idle" => cfg.idle = d.value(v, &p).unwrap_or_default(),
            "metrics_listen" => listen = d.value::<Spanned<String>>(v, &p),
            "routes" => {
                cfg.routes = d.value::<String>(v, &p).map(|r| {
                    let base = file.parent().unwrap_or(FsPath::new(""));
                    base.join(r)
                })
            }
            "icmp_rate_limit" => cfg.icmp_rate_limit = d.value(v, &p).unwrap_or_default(),
            "arp" => cfg.arp = d.value(v, &p).unwrap_or_default(),
            "punt" => cfg.punt = d.value(v, &p).unwrap_or_default(),
            "max_label_depth" => depth = d.value::<Spanned<u8>>(v, &p),
            "ttl_expiry_reply" => cfg.ttl_expiry_reply = d.value(v, &p).unwrap_or_default(),
            "max_routes_file_bytes" => max_routes = d.value::<Spanned<u64>>(v, &p),
            "control_socket" => {
                cfg.control_socket = d.value::<String>(v, &p).map(|r| {
                    let base = file.parent().unwrap_or(FsPath::new(""));
                    base.join(r)
                })
            }
            "fpm" => fpm_section = Some(d.value::<fpm::FpmSection>(v, &p).unwrap_or_default()),
            _ => unreachable!("top_level filters keys"),
        }
    }
    if !seen_ports && matches!(root.kind, yaml::NodeKind::Map(_)) {
        d.error(
            root.mark,
            &Path::Root,
            "missing key `ports`",
            Some("list the router's ports under `ports:` (name, pci or vdev, addresses)".into()),
        );
    }
    if let Some(b) = burst {
        let p = Path::Key(&Path::Root, "burst_size");
        if b.value == 0 || b.value > MAX_BURST {
            d.error(
                b.mark,
                &p,
                format!("burst_size {} is out of range", b.value),
                Some(format!(
                    "use 1..={MAX_BURST} (a worker's burst holds at most {MAX_BURST} packets); \
                     32 or 64 is usual"
                )),
            );
        }
        cfg.burst_size = b.value;
    }
    if let Some(m) = depth {
        if m.value == 0 {
            d.error(
                m.mark,
                &Path::Key(&Path::Root, "max_label_depth"),
                "max_label_depth must be at least 1",
                Some(format!("the default is {DEFAULT_MAX_LABEL_DEPTH}")),
            );
        }
        cfg.max_label_depth = m.value;
    }
    if let Some(m) = max_routes {
        if m.value == 0 {
            d.error(
                m.mark,
                &Path::Key(&Path::Root, "max_routes_file_bytes"),
                "max_routes_file_bytes must be at least 1",
                Some(format!(
                    "the default is {DEFAULT_MAX_ROUTES_FILE_BYTES} (256 MiB; a full view is ~28 MB)"
                )),
            );
        }
        cfg.max_routes_file_bytes = m.value;
    }
    if let Some(l) = listen {
        match l.value.parse() {
            Ok(a) => cfg.metrics_listen = a,
            Err(_) => d.error(
                l.mark,
                &Path::Key(&Path::Root, "metrics_listen"),
                format!("`{}` is not an address:port", l.value),
                Some("write e.g. 127.0.0.1:9550 or 0.0.0.0:9550".into()),
            ),
        }
    }
    if let Some(sec) = fpm_section {
        let names: Vec<&str> = cfg.ports.iter().map(|p| p.name.value.as_str()).collect();
        let f = fpm::decode(
            d,
            sec,
            &Path::Key(&Path::Root, "fpm"),
            |n| cfg.port_id(n),
            &names.join(", "),
        );
        cfg.fpm = Some(f);
    }
    validate::validate(d, &cfg, root, &port_idx, &worker_idx);
    cfg
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<StartupConfig, ConfigError> {
        StartupConfig::parse(FsPath::new("/etc/mplsrouter/r.yaml"), text)
    }

    const DEMO: &str = "\
eal:
  no_huge: true
  file_prefix: demo
  lcores: 0-2
ports:
  - name: in
    vdev: net_pcap0,rx_pcap=in.pcap
    addresses: [10.0.0.1/24]
  - name: out
    vdev: net_null0
    mac: 02:00:00:00:01:01
    addresses: [10.0.1.1/24]
    rx_queues: 2
routes: routes/demo.yaml
";

    #[test]
    fn the_control_socket_is_configured_or_named_after_the_file_prefix() {
        let c = parse(DEMO).unwrap();
        assert_eq!(
            c.control_socket_path(),
            Some(PathBuf::from("/run/mplsrouter/demo.sock"))
        );
        let c = parse(&format!("{DEMO}control_socket: run/r.sock\n")).unwrap();
        assert_eq!(
            c.control_socket_path(),
            Some(PathBuf::from("/etc/mplsrouter/run/r.sock"))
        );
        let c = parse(&DEMO.replace("  file_prefix: demo\n", "")).unwrap();
        assert_eq!(c.control_socket_path(), None);
    }

    #[test]
    fn the_mbuf_data_room_fits_a_frame_of_the_largest_mtu() {
        let jumbo = DEMO.replace("    rx_queues: 2\n", "    rx_queues: 2\n    mtu: 9000\n");
        let c = parse(&jumbo).unwrap();
        assert_eq!(c.ports[1].mtu.value, 9000);
        assert!(c.mbuf_data_size() >= 9000 + 14 + 4);
        assert_eq!(c.mbuf_data_room(), 128 + 9216);
        let per_mbuf = 128 + 9216 + 128 + 64;
        assert_eq!(c.mempool_bytes(), c.mempool_size() as u64 * per_mbuf);
        let max = DEMO.replace("    rx_queues: 2\n", "    rx_queues: 2\n    mtu: 9600\n");
        let c = parse(&max).unwrap();
        assert_eq!(
            c.mbuf_data_room(),
            128 + 10240,
            "the largest accepted MTU fits a u16"
        );
    }

    #[test]
    fn af_packet_ports_get_ring_frames_for_a_jumbo_mtu() {
        let with_mtu = |mtu: u32| {
            parse(&DEMO.replace(
                "    rx_queues: 2\n",
                &format!("    rx_queues: 2\n    mtu: {mtu}\n"),
            ))
            .unwrap()
        };
        let c = with_mtu(9000);
        assert_eq!(
            c.vdev_arg("net_af_packet0,iface=veth0"),
            "net_af_packet0,iface=veth0,framesz=9216,blocksz=36864"
        );
        let own = "net_af_packet0,iface=v,framesz=4096";
        assert_eq!(c.vdev_arg(own), own, "the user's framesz is kept");
        assert_eq!(c.vdev_arg("net_pcap0,rx_pcap=a"), "net_pcap0,rx_pcap=a");
        // Room in a ring frame (framesz minus the kernel's 34-byte offset of the MAC
        // header) for the largest frame, no more than an mbuf holds, and whole frames
        // in page-sized blocks.
        for mtu in [2100u32, 4000, 9000, 9190, 9600] {
            let c = with_mtu(mtu);
            let arg = c.vdev_arg("net_af_packet0,iface=v");
            let field = |k: &str| -> u32 {
                arg.split(k)
                    .nth(1)
                    .unwrap()
                    .split(',')
                    .next()
                    .unwrap()
                    .parse()
                    .unwrap()
            };
            let (frame, block) = (field("framesz="), field("blocksz="));
            assert!(frame - 34 >= mtu + 14 + 4, "{mtu}: {arg}");
            assert!(frame - 32 <= c.mbuf_data_size(), "{mtu}: {arg}");
            assert!(
                block.is_multiple_of(4096) && block.is_multiple_of(frame),
                "{mtu}: {arg}"
            );
        }
        let c = parse(DEMO).unwrap();
        let plain = "net_af_packet0,iface=v";
        assert_eq!(c.vdev_arg(plain), plain, "MTU 1500: as written");
    }

    #[test]
    fn promiscuous_defaults_by_port_kind_and_can_be_set() {
        let c = parse(DEMO).unwrap();
        assert!(
            c.ports.iter().all(|p| p.promiscuous()),
            "vdevs default to on"
        );
        let text = "\
ports:
  - {name: a, pci: \"0000:01:00.0\", addresses: [10.0.0.1/24]}
  - {name: b, pci: \"0000:01:00.1\", promiscuous: true, addresses: [10.0.1.1/24]}
  - {name: c, vdev: \"net_af_packet0,iface=veth0\", promiscuous: false}
";
        let c = parse(text).unwrap();
        let modes: Vec<_> = c.ports.iter().map(|p| p.promiscuous()).collect();
        assert_eq!(modes, [false, true, false]);
    }

    #[test]
    fn defaults_and_derived_values() {
        let c = parse(DEMO).unwrap();
        // The largest burst a worker holds, unless set.
        assert_eq!(c.burst_size, 64);
        assert_eq!(c.burst_size, MAX_BURST);
        assert_eq!(c.max_label_depth, 16);
        assert_eq!(c.metrics_listen.to_string(), "127.0.0.1:9550");
        assert_eq!(
            c.routes.as_deref(),
            Some(FsPath::new("/etc/mplsrouter/routes/demo.yaml"))
        );
        assert_eq!(c.ports[0].mtu.value, 1500);
        let w = c.workers();
        assert_eq!(
            w,
            vec![WorkerPlan {
                lcore: 1,
                rx: vec![(0, 0), (1, 0), (1, 1)]
            }]
        );
        assert_eq!(c.tx_queues(0), 1);
        // 3 RX + 2 TX queues of 1024 descriptors, 2 lcores x (256 cache + 64 burst).
        assert_eq!(c.mempool_needed(), 5 * 1024 + 2 * 320);
        assert_eq!(c.mempool_size(), 16383);
        assert_eq!(
            c.mbuf_data_room(),
            128 + 2048,
            "MTU 1500 keeps DPDK's default"
        );
        assert_eq!(c.ports[0].device_name(), "net_pcap0");
        let ifs = c.port_ifaces(|id| [0, 0, 0, 0, 0, id as u8 + 7]);
        assert_eq!(ifs[0].mac, [0, 0, 0, 0, 0, 7]);
        assert_eq!(ifs[1].mac, [2, 0, 0, 0, 1, 1]);
    }

    #[test]
    fn eal_args_in_port_order() {
        let c = parse(DEMO).unwrap();
        let a = c.eal_args("mplsrouter");
        let expect: Vec<&str> = vec![
            "mplsrouter",
            "-l",
            "0-2",
            "-m",
            "512",
            "--no-huge",
            "--file-prefix",
            "demo",
            "--no-pci",
            "--vdev",
            "net_pcap0,rx_pcap=in.pcap",
            "--vdev",
            "net_null0",
        ];
        assert_eq!(a, expect);
    }

    #[test]
    fn lcores_placed_on_cpus_go_to_eal_as_lcores() {
        let text = DEMO.replace("lcores: 0-2", "lcores: \"0@0,1@1,2@1\"");
        assert_ne!(text, DEMO);
        let c = parse(&text).unwrap();
        assert_eq!(c.lcores(), [0, 1, 2]);
        let a = c.eal_args("mplsrouter");
        assert_eq!(a[1..3], ["--lcores", "0@0,1@1,2@1"]);
    }

    #[test]
    fn all_problems_reported_with_positions() {
        let text = "\
ports:
  - name: a
    pci: 0000:01:00.0
    vdev: net_null0
    addresses: [10.0.0.0/24]
  - name: b
    pci: 1:2
    addresses: [10.0.0.9/16]
    mtu: 10
workers:
  - lcore: 1
    rx: [{port: c, queue: 0}]
burst_size: 0
colour: red
";
        let e = parse(text).unwrap_err();
        let d = e.diagnostics().unwrap();
        let got: Vec<String> = d
            .iter()
            .map(|d| format!("{}:{} {}: {}", d.line, d.col, d.path, d.message))
            .collect();
        let want = [
            "4:11 ports[0].vdev: a port has either `pci` or `vdev`, not both",
            "5:17 ports[0].addresses[0]: 10.0.0.0/24 is a network address, not an address of this router",
            "7:10 ports[1].pci: `1:2` is not a PCI address",
            "8:17 ports[1].addresses[0]: 10.0.0.9/16 overlaps 10.0.0.0/24 on port `a`",
            "9:10 ports[1].mtu: mtu 10 is out of range",
            "11:3 workers: RX queue 0 of port `a` is polled by no worker (its packets would be dropped)",
            "11:3 workers: RX queue 0 of port `b` is polled by no worker (its packets would be dropped)",
            "12:17 workers[0].rx[0].port: unknown port `c`",
            "13:13 burst_size: burst_size 0 is out of range",
            "14:1 colour: unknown key `colour`",
        ];
        assert_eq!(got, want);
    }

    #[test]
    fn burst_size_is_refused_above_what_a_worker_holds() {
        let base = "eal: {lcores: \"0,1\"}\nports:\n  - {name: a, vdev: net_null0}\n";
        let ok = parse(&format!("{base}burst_size: {MAX_BURST}\n")).unwrap();
        assert_eq!(ok.burst_size, 64);
        let e = parse(&format!("{base}burst_size: 65\n")).unwrap_err();
        let d: Vec<_> = e.diagnostics().unwrap().iter().collect();
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].message, "burst_size 65 is out of range");
        assert!(
            d[0].hint.as_deref().unwrap_or("").contains("1..=64"),
            "{d:?}"
        );
    }

    #[test]
    fn default_worker_needs_a_second_lcore() {
        let e = parse("eal: {lcores: \"3\"}\nports: [{name: a, vdev: net_null0}]\n").unwrap_err();
        let d = &e.diagnostics().unwrap().0[0];
        assert_eq!((d.line, d.col, d.path.as_str()), (1, 15, "eal.lcores"));
        let c = parse("eal: {lcores: 2-3}\nports: [{name: a, vdev: net_null0}]\n").unwrap();
        assert_eq!(c.workers()[0].lcore, 3);
    }

    #[test]
    fn fpm_section_off_by_default_and_decoded() {
        assert_eq!(parse(DEMO).unwrap().fpm, None);
        let c = parse(&format!(
            "{DEMO}fpm:\n  listen: 127.0.0.1:2700\n  hold_time_s: 5\n  interfaces: {{\"7\": out, eth1: in}}\n"
        ))
        .unwrap();
        let f = c.fpm.unwrap();
        assert_eq!(f.listen.to_string(), "127.0.0.1:2700");
        assert_eq!(f.hold_time, std::time::Duration::from_secs(5));
        assert_eq!(
            f.resync_settle.as_millis(),
            DEFAULT_RESYNC_SETTLE_MS as u128
        );
        assert_eq!(f.resync_min.as_secs(), DEFAULT_RESYNC_MIN_S as u64);
        assert_eq!(
            f.interfaces,
            vec![(LinuxIf::Index(7), 1), (LinuxIf::Name("eth1".into()), 0)]
        );
        let c = parse(&format!("{DEMO}fpm: {{}}\n")).unwrap();
        assert_eq!(c.fpm.unwrap().listen.to_string(), DEFAULT_FPM_LISTEN);
    }

    #[test]
    fn lcore_lists() {
        assert_eq!(parse_lcores("0-2,5"), Some(vec![0, 1, 2, 5]));
        assert_eq!(parse_lcores("0@0,1@1,2@1"), Some(vec![0, 1, 2]));
        assert_eq!(parse_lcores("1@x"), None);
        assert_eq!(parse_lcores("0-1@1"), None);
        assert_eq!(parse_lcores("2-1"), None);
        assert_eq!(parse_lcores("x"), None);
    }

    #[test]
    fn arp_and_echo_limits() {
        let c = parse(DEMO).unwrap();
        assert_eq!(c.arp, ArpConfig::default());
        assert!(!c.arp.accept_unsolicited);
        assert_eq!((c.arp.reachable_ms, c.arp.max_entries), (30_000, 4096));
        assert_eq!(c.icmp_rate_limit.echo_per_second, None);
        let text = format!(
            "{DEMO}arp: {{accept_unsolicited: true, max_entries: 10}}\n\
             icmp_rate_limit: {{per_second: 5, echo_per_second: 7, echo_burst: 2}}\n"
        );
        let c = parse(&text).unwrap();
        assert!(c.arp.accept_unsolicited);
        assert_eq!((c.arp.reachable_ms, c.arp.max_entries), (30_000, 10));
        let r = c.icmp_rate_limit;
        assert_eq!((r.per_second, r.burst), (5, 100));
        assert_eq!((r.echo_per_second, r.echo_burst), (Some(7), Some(2)));
        let e = parse(&format!(
            "{DEMO}arp: {{max_entries: 0, reachable_ms: 10}}\n"
        ))
        .unwrap_err();
        let got: Vec<String> = e
            .diagnostics()
            .unwrap()
            .0
            .iter()
            .map(|d| d.path.clone())
            .collect();
        assert_eq!(got, ["arp.max_entries", "arp.reachable_ms"]);
        let e = parse(&format!("{DEMO}arp: {{accept: true}}\n")).unwrap_err();
        assert!(e.to_string().contains("accept"), "{e}");
    }

    #[test]
    fn punt_budgets_are_optional_and_checked() {
        let c = parse(DEMO).unwrap();
        assert_eq!(c.punt, PuntConfig::default());
        let c = parse(&format!("{DEMO}punt: {{glean_pps: 50, echo_burst: 3}}\n")).unwrap();
        assert_eq!((c.punt.glean_pps, c.punt.echo_burst), (Some(50), Some(3)));
        assert_eq!(c.punt.ttl_expired_pps, None);
        let e = parse(&format!(
            "{DEMO}punt: {{glean_burst: 0, arp_pps: 0, echo_pps: 20000000, other_pps: 0}}\n"
        ))
        .unwrap_err();
        let got: Vec<String> = e
            .diagnostics()
            .unwrap()
            .0
            .iter()
            .map(|d| d.path.clone())
            .collect();
        assert_eq!(got, ["punt.glean_burst", "punt.arp_pps", "punt.echo_pps"]);
        let e = parse(&format!("{DEMO}punt: {{glean: 5}}\n")).unwrap_err();
        assert!(e.to_string().contains("glean"), "{e}");
    }
}
