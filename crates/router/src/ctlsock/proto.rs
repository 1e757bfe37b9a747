//! The control socket's protocol: JSON lines, one request object per line in, one
//! response object per line out (schema: docs/control-socket.md). The same types are
//! used by the server and by the CLI, so the two cannot drift apart.

use serde::{Deserialize, Serialize};

/// Longest request line accepted (bytes, newline included); longer ones are refused
/// and the connection closed.
pub const MAX_REQUEST_BYTES: usize = 4096;

/// Routes or label entries listed when a request gives no `limit`.
pub const DEFAULT_LIMIT: usize = 100;

/// Most routes or label entries one response lists.
pub const MAX_LIMIT: usize = 100_000;

/// Which source installed a route or label entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// The routes file, or the connected and local routes of the ports.
    Yaml,
    /// FRR's zebra over FPM.
    Fpm,
    /// A host route for a neighbour learned by ARP (or, for IPv6, by NDP).
    Arp,
}

/// An address family of the routing table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AddrFamily {
    Ipv4,
    Ipv6,
}

/// One request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "cmd", rename_all = "snake_case", deny_unknown_fields)]
pub enum Request {
    /// Routes of one family: the longest match of an address, the entries under a
    /// prefix, or all.
    ShowRoutes {
        /// `A.B.C.D` or an IPv6 address (longest match), `A.B.C.D/N` or `X::/N` (entries
        /// under it); none: all of `family`.
        #[serde(default)]
        prefix: Option<String>,
        /// The table listed without a prefix (default `ipv4`); a prefix names its own.
        #[serde(default)]
        family: Option<AddrFamily>,
        #[serde(default)]
        source: Option<Source>,
        #[serde(default)]
        limit: Option<usize>,
        /// Continue after this prefix (`next_after` of the previous page).
        #[serde(default)]
        after: Option<String>,
    },
    /// Label entries: one, or all.
    ShowMpls {
        #[serde(default)]
        label: Option<u32>,
        #[serde(default)]
        source: Option<Source>,
        #[serde(default)]
        limit: Option<usize>,
        #[serde(default)]
        after: Option<u32>,
    },
    ShowNeighbors {},
    ShowPorts {},
    ShowWorkers {},
    ShowTable {},
    /// What the running table would do with a synthetic packet.
    Lookup(LookupRequest),
    /// What the next `count` packets (received on `port`, passing `filter`) did.
    Trace {
        #[serde(default)]
        count: Option<usize>,
        #[serde(default)]
        port: Option<String>,
        /// How long to wait for them (ms; default 10000, at most 60000).
        #[serde(default)]
        timeout_ms: Option<u64>,
        /// A filter expression (`dst 10.0.0.0/8 and udp`; docs/control-socket.md).
        #[serde(default)]
        filter: Option<String>,
    },
    /// The next `count` frames `port` received, transmitted or both, passing `filter`.
    Capture {
        port: String,
        #[serde(default)]
        count: Option<usize>,
        #[serde(default)]
        timeout_ms: Option<u64>,
        /// Default `rx`.
        #[serde(default)]
        direction: Option<Direction>,
        /// Bytes kept of each frame (default and most: 9216).
        #[serde(default)]
        snaplen: Option<u32>,
        /// Frames per second taken at most (default 1000, at most 100000).
        #[serde(default)]
        pps: Option<u32>,
        #[serde(default)]
        filter: Option<String>,
    },
    /// The FPM session and what it installed.
    ShowFpm {},
    /// The ports' control interfaces (TAPs).
    ShowInterfaces {},
}

/// Which frames of a port a capture takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    Rx,
    Tx,
    Both,
}

/// Frames per second a capture takes by default, and at most.
pub const DEFAULT_CAPTURE_PPS: u32 = 1000;
pub const MAX_CAPTURE_PPS: u32 = 100_000;

/// Packets a trace returns when the request gives no `count`, and at most.
pub const DEFAULT_TRACE_COUNT: usize = 10;
pub const MAX_TRACE_COUNT: usize = 1000;
/// How long a trace waits for its packets by default, and at most (ms).
pub const DEFAULT_TRACE_MS: u64 = 10_000;
pub const MAX_TRACE_MS: u64 = 60_000;

/// A synthetic packet: IPv4 or IPv6 (by the addresses given) to `dst`, optionally under
/// one label.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LookupRequest {
    /// Receiving port name (default: the first port).
    #[serde(default)]
    pub in_port: Option<String>,
    /// IPv4 or IPv6 destination (default 198.51.100.1 under a label).
    #[serde(default)]
    pub dst: Option<String>,
    /// Top (and only) label; none: a plain IPv4 packet.
    #[serde(default)]
    pub label: Option<u32>,
    #[serde(default)]
    pub src: Option<String>,
    #[serde(default)]
    pub proto: Option<u8>,
    #[serde(default)]
    pub sport: Option<u16>,
    #[serde(default)]
    pub dport: Option<u16>,
    /// IPv4 TTL or IPv6 hop limit (and the label's TTL), default 64.
    #[serde(default)]
    pub ttl: Option<u8>,
}

/// One response line: `{"ok":true,"result":{...}}` or `{"ok":false,"error":"..."}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Response {
    pub ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Reply>,
}

impl Response {
    pub fn ok(r: Reply) -> Response {
        Response {
            ok: true,
            error: None,
            result: Some(r),
        }
    }
    pub fn error(msg: impl Into<String>) -> Response {
        Response {
            ok: false,
            error: Some(msg.into()),
            result: None,
        }
    }
}

/// What a request answers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Reply {
    Routes(RoutesReply),
    Mpls(MplsReply),
    Neighbors { neighbors: Vec<NeighborView> },
    Ports { ports: Vec<PortView> },
    Workers { workers: Vec<WorkerView> },
    Table(Box<TableView>),
    Lookup(Box<LookupReply>),
    Trace { packets: Vec<TracedPacket> },
    Capture(CaptureReply),
    Fpm(Box<FpmView>),
    Interfaces { interfaces: Vec<InterfaceView> },
}

/// What a capture took, and what it left out.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CaptureReply {
    pub frames: Vec<CapturedFrame>,
    /// Bytes kept of each frame.
    pub snaplen: u32,
    /// Frames that passed the filter but were not taken: over the pps limit, or the
    /// queue to the control side was full.
    #[serde(default)]
    pub skipped_rate: u64,
    #[serde(default)]
    pub skipped_queue_full: u64,
}

/// The FPM session (`show fpm`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FpmView {
    /// Whether this router listens for FPM at all, and where.
    pub enabled: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub listen: Option<String>,
    /// `idle`, `connected`, `holding`... (the session's state machine).
    pub state: String,
    /// zebra's address while a session is up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer: Option<String>,
    pub connects: u64,
    pub messages: u64,
    pub errors: u64,
    /// Entries FPM has in the table now, and those the routes file overrides.
    pub ipv4_routes: u64,
    #[serde(default)]
    pub ipv6_routes: u64,
    pub labels: u64,
    pub overridden_ipv4_routes: u64,
    #[serde(default)]
    pub overridden_ipv6_routes: u64,
    pub overridden_labels: u64,
    /// Routes in the table by source: `yaml`, `fpm`, `arp`.
    pub routes_by_source: Vec<(Source, u64)>,
    pub resyncs: u64,
    /// Unix time of the last completed resync, ms (0: never).
    pub last_resync_ms: u64,
    pub swept: u64,
    pub publishes: u64,
    pub rejected: u64,
}

impl FpmView {
    /// A router that does not listen for FPM.
    pub fn disabled() -> FpmView {
        FpmView {
            enabled: false,
            listen: None,
            state: "disabled".into(),
            peer: None,
            connects: 0,
            messages: 0,
            errors: 0,
            ipv4_routes: 0,
            ipv6_routes: 0,
            labels: 0,
            overridden_ipv4_routes: 0,
            overridden_ipv6_routes: 0,
            overridden_labels: 0,
            routes_by_source: Vec::new(),
            resyncs: 0,
            last_resync_ms: 0,
            swept: 0,
            publishes: 0,
            rejected: 0,
        }
    }
}

/// One control interface (`show interfaces`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InterfaceView {
    pub name: String,
    pub ifindex: u32,
    /// The port it is the twin of.
    pub port: String,
    /// The Linux interface is up (IFF_UP).
    pub up: bool,
    pub mac: String,
    pub mtu: u16,
    pub addresses: Vec<String>,
    /// The kernel's counters of the interface: frames the router wrote up to it
    /// (its rx), and frames it sent down to the router (its tx).
    pub to_kernel_packets: u64,
    pub from_kernel_packets: u64,
}

/// One captured frame: its length on the wire (without FCS) and its first bytes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CapturedFrame {
    pub lcore: u32,
    /// `rx` or `tx`.
    #[serde(default = "rx")]
    pub direction: String,
    /// Microseconds since the Unix epoch when the worker copied it.
    pub time_us: u64,
    pub len: u32,
    /// The first `min(len, snaplen)` bytes, hex.
    pub data: String,
}

fn rx() -> String {
    "rx".into()
}

/// One traced packet: the headers as received and every decision, as `lookup` names
/// them (route or label entry, ECMP member, rewrite, verdict), from the real frames.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TracedPacket {
    pub lcore: u32,
    /// The received headers, outermost first (`eth ...`, `mpls ...`, `ipv4 ...`, `udp ...`).
    pub headers: Vec<String>,
    pub decision: LookupReply,
    /// For a packet punted to the slow path: what the slow path did with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slow_path: Option<SlowPathView>,
}

/// What the slow path did with a punted packet.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SlowPathView {
    /// `arp_answered`, `arp_accepted`, `ndp_answered`, `ndp_accepted`, `echo_replied`,
    /// `icmp_error_sent`,
    /// `rate_limited`, `queued_for_resolution`, `reply_queued_for_resolution`,
    /// `sent_to_control_interface`, `transmitted`, `consumed`, `dropped`, or
    /// `not_seen` (the slow path did not report it before the trace ended).
    pub action: String,
    /// The drop reason (the `/metrics` slow-path drop label), the ICMP type,
    /// `arp_request_sent` or `neighbor_solicitation_sent`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// One next hop (an ECMP member or the only one).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HopView {
    pub port: String,
    /// The neighbour's address: IPv6 for an IPv6 neighbour, else IPv4 (a 6PE route's
    /// next hop is the IPv4 address of the LSP's next hop).
    pub via: String,
    /// The neighbour's MAC; none while unresolved.
    pub mac: Option<String>,
    /// Labels pushed, outermost first.
    pub labels: Vec<u32>,
    pub weight: u32,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RouteView {
    pub prefix: String,
    /// `forward`, `local`, `connected`, `blackhole`.
    pub target: String,
    /// The port of a connected route.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<String>,
    pub next_hops: Vec<HopView>,
    /// `uniform` or `pipe` (with `pipe_ttl`).
    pub ttl_mode: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pipe_ttl: Option<u8>,
    pub source: Source,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoutesReply {
    pub generation: u64,
    /// For an address: the prefix it matched (none: no route).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matched: Option<String>,
    pub routes: Vec<RouteView>,
    /// More entries follow: ask again with `after` set to this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_after: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LabelView {
    pub label: u32,
    /// `swap`, `pop`, `pop_and_lookup`.
    pub action: String,
    pub next_hops: Vec<HopView>,
    pub ttl_mode: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pipe_ttl: Option<u8>,
    /// What is forwarded: `labelled` (swap), `as_received_below_top` (pop),
    /// `looked_up` (pop and look up what is below).
    pub payload: String,
    pub source: Source,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MplsReply {
    pub generation: u64,
    pub entries: Vec<LabelView>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_after: Option<u32>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NeighborView {
    pub ip: String,
    pub mac: Option<String>,
    pub port: String,
    /// `static` (routes file), `resolved` (learned by ARP, confirmed within the
    /// reachable time), `stale` (reachable time over, being probed) or `incomplete`
    /// (being resolved, or a next hop nobody answered for).
    pub state: String,
    /// Seconds since a learned neighbour was last confirmed, or since the resolution
    /// of an incomplete one started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub age_s: Option<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PortView {
    pub name: String,
    pub link_up: bool,
    pub speed_mbps: u32,
    pub mac: String,
    pub addresses: Vec<String>,
    pub mtu: u16,
    pub rx_queues: u16,
    pub tx_queues: u16,
    pub rx_packets: u64,
    pub tx_packets: u64,
    pub rx_missed: u64,
    pub rx_errors: u64,
    pub tx_errors: u64,
    /// Over a short sample taken for this request.
    pub rx_pps: f64,
    pub tx_pps: f64,
    pub rx_bps: f64,
    pub tx_bps: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorkerView {
    pub lcore: u32,
    /// `port/queue` names polled.
    pub queues: Vec<String>,
    pub rx_packets: u64,
    pub tx_packets: u64,
    pub forwarded: u64,
    pub dropped: u64,
    pub slow_path: u64,
    /// Share of polling time spent on non-empty polls, since start (0..1).
    pub busy_share: f64,
    pub cycles_per_packet: f64,
    pub bursts: u64,
    pub packets_per_burst: f64,
    /// Non-empty bursts by size bucket: (upper bound, count).
    pub burst_sizes: Vec<(u64, u64)>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableView {
    pub generation: u64,
    pub ipv4_routes: u64,
    #[serde(default)]
    pub ipv6_routes: u64,
    /// Bytes a lookup can read in the IPv4 and IPv6 longest-prefix-match tables.
    #[serde(default)]
    pub lpm4_bytes: u64,
    #[serde(default)]
    pub lpm6_bytes: u64,
    pub labels: u64,
    pub next_hops: u64,
    pub ecmp_groups: u64,
    pub bytes: u64,
    pub reloads_ok: u64,
    pub reloads_error: u64,
    /// Unix time of the last good load, ms.
    pub last_good_reload_ms: u64,
    pub rcu_pending: u64,
}

/// One label stack entry of an output frame.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LabelOut {
    pub label: u32,
    pub tc: u8,
    pub bos: bool,
    pub ttl: u8,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LookupReply {
    pub generation: u64,
    pub in_port: String,
    /// The route the IP lookup (IPv4 or IPv6) used, if it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub route: Option<RouteView>,
    /// The entry of the top label, for a labelled packet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_entry: Option<LabelView>,
    /// `forward`, `drop` or `slow_path`.
    pub verdict: String,
    /// Drop or punt reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub out_port: Option<String>,
    /// The next hop the flow hashed to (of the route's or the entry's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_hop: Option<HopView>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dst_mac: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub src_mac: Option<String>,
    pub out_labels: Vec<LabelOut>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub out_ip_ttl: Option<u8>,
    /// The synthetic frame, hex.
    pub frame_in: String,
    /// The frame as it would leave (forwarded only), hex.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame_out: Option<String>,
}
