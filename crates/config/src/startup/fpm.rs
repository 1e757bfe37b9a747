//! The `fpm:` section: FRR's zebra (`dplane_fpm_nl`) programs routes over FPM. Off when
//! absent.
//!
//! ```yaml
//! fpm:
//!   listen: 127.0.0.1:2620      # zebra: `fpm address 127.0.0.1 port 2620`
//!   hold_time_s: 30             # keep FPM routes this long after zebra disconnects
//!   resync_settle_ms: 1000      # quiet time that ends a resync (stale routes swept)
//!   resync_min_s: 15            # ... but never before this long after the connect
//!   publish_interval_ms: 5      # FPM changes are coalesced into one table per interval
//!   interfaces:                 # Linux ifindex or ifname -> port name
//!     "7": in
//!     eth2: out
//! ```
//! Next hops whose ifindex is not listed go to the port whose subnet holds the gateway.
//! An ifname is resolved to its ifindex in the router's network namespace when the
//! listener starts, so it only fits a zebra running in that same namespace.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Duration;

use serde::Deserialize;

use crate::de::{Decoder, Path, Spanned};

pub const DEFAULT_FPM_LISTEN: &str = "127.0.0.1:2620";
pub const DEFAULT_HOLD_TIME_S: u32 = 30;
pub const DEFAULT_RESYNC_SETTLE_MS: u32 = 1000;
pub const DEFAULT_PUBLISH_INTERVAL_MS: u32 = 5;
pub const DEFAULT_RESYNC_MIN_S: u32 = 15;

/// The section as written.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FpmSection {
    listen: Option<Spanned<String>>,
    hold_time_s: Option<u32>,
    resync_settle_ms: Option<Spanned<u32>>,
    resync_min_s: Option<u32>,
    publish_interval_ms: Option<Spanned<u32>>,
    #[serde(default)]
    interfaces: BTreeMap<String, Spanned<String>>,
}

/// How a Linux interface is named in `fpm.interfaces`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LinuxIf {
    Index(u32),
    Name(String),
}

/// The decoded section.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FpmConfig {
    pub listen: SocketAddr,
    pub hold_time: Duration,
    pub resync_settle: Duration,
    pub resync_min: Duration,
    pub publish_interval: Duration,
    /// (Linux interface, port id).
    pub interfaces: Vec<(LinuxIf, u16)>,
}

/// Decodes and checks the section; `port_id` maps a port name to its id.
pub(crate) fn decode(
    d: &Decoder,
    s: FpmSection,
    path: &Path,
    port_id: impl Fn(&str) -> Option<u16>,
    port_names: &str,
) -> FpmConfig {
    let mut cfg = FpmConfig {
        listen: DEFAULT_FPM_LISTEN.parse().expect("valid default"),
        hold_time: Duration::from_secs(s.hold_time_s.unwrap_or(DEFAULT_HOLD_TIME_S) as u64),
        resync_settle: Duration::from_millis(DEFAULT_RESYNC_SETTLE_MS as u64),
        resync_min: Duration::from_secs(s.resync_min_s.unwrap_or(DEFAULT_RESYNC_MIN_S) as u64),
        publish_interval: Duration::from_millis(DEFAULT_PUBLISH_INTERVAL_MS as u64),
        interfaces: Vec::new(),
    };
    if let Some(l) = s.listen {
        match l.value.parse() {
            Ok(a) => cfg.listen = a,
            Err(_) => d.error(
                l.mark,
                &Path::Key(path, "listen"),
                format!("`{}` is not an address:port", l.value),
                Some(format!(
                    "write e.g. {DEFAULT_FPM_LISTEN} (zebra's default FPM port is 2620)"
                )),
            ),
        }
    }
    if let Some(v) = s.resync_settle_ms {
        if v.value == 0 {
            d.error(
                v.mark,
                &Path::Key(path, "resync_settle_ms"),
                "resync_settle_ms must be at least 1",
                Some(format!("the default is {DEFAULT_RESYNC_SETTLE_MS}")),
            );
        }
        cfg.resync_settle = Duration::from_millis(v.value as u64);
    }
    if let Some(v) = s.publish_interval_ms {
        if v.value > 1000 {
            d.error(
                v.mark,
                &Path::Key(path, "publish_interval_ms"),
                format!("publish_interval_ms {} is over 1000", v.value),
                Some(format!(
                    "the default is {DEFAULT_PUBLISH_INTERVAL_MS}; 0 publishes every batch at once"
                )),
            );
        }
        cfg.publish_interval = Duration::from_millis(v.value as u64);
    }
    let ifs = Path::Key(path, "interfaces");
    for (k, port) in s.interfaces {
        let key = match k.parse::<u32>() {
            Ok(i) => LinuxIf::Index(i),
            Err(_) => LinuxIf::Name(k.clone()),
        };
        match port_id(&port.value) {
            Some(id) => cfg.interfaces.push((key, id)),
            None => d.error(
                port.mark,
                &Path::Key(&ifs, &k),
                format!("unknown port `{}`", port.value),
                Some(format!("ports are: {port_names}")),
            ),
        }
    }
    cfg
}
