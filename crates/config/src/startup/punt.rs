//! `punt:`: how many packets per second of each punt reason one worker may hand to the
//! slow path, and the largest burst. Beyond that a worker drops them itself (counted as
//! `<reason>_throttled`). Unset keys take the runtime's defaults, which follow what the
//! slow path will do with the packets (ICMP errors: `icmp_rate_limit`; echo: its echo
//! limit; see docs/slow-path.md); this module only decodes and checks the numbers.

use serde::Deserialize;

use crate::de::{Decoder, Path};
use crate::yaml::Node;

/// Per-reason budgets; `None`: the runtime's default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PuntConfig {
    pub glean_pps: Option<u32>,
    pub glean_burst: Option<u32>,
    pub ttl_expired_pps: Option<u32>,
    pub ttl_expired_burst: Option<u32>,
    pub frag_needed_pps: Option<u32>,
    pub frag_needed_burst: Option<u32>,
    pub echo_pps: Option<u32>,
    pub echo_burst: Option<u32>,
    pub arp_pps: Option<u32>,
    pub arp_burst: Option<u32>,
    pub other_pps: Option<u32>,
    pub other_burst: Option<u32>,
    pub unreachable_pps: Option<u32>,
    pub unreachable_burst: Option<u32>,
}

/// Largest budget accepted: far above what a slow-path thread handles (about 1 Mpps),
/// so a larger number is a typo, and a bucket's size in TSC cycles cannot overflow.
pub const MAX_PUNT_PPS: u32 = 10_000_000;

impl PuntConfig {
    /// (key, value) of every key that is set.
    fn set(&self) -> [(&'static str, Option<u32>); 14] {
        [
            ("glean_pps", self.glean_pps),
            ("glean_burst", self.glean_burst),
            ("ttl_expired_pps", self.ttl_expired_pps),
            ("ttl_expired_burst", self.ttl_expired_burst),
            ("frag_needed_pps", self.frag_needed_pps),
            ("frag_needed_burst", self.frag_needed_burst),
            ("echo_pps", self.echo_pps),
            ("echo_burst", self.echo_burst),
            ("arp_pps", self.arp_pps),
            ("arp_burst", self.arp_burst),
            ("other_pps", self.other_pps),
            ("other_burst", self.other_burst),
            ("unreachable_pps", self.unreachable_pps),
            ("unreachable_burst", self.unreachable_burst),
        ]
    }
}

/// A burst of 0 admits nothing (write `<reason>_pps: 0` for that); ARP at 0 pps would
/// stop the router from answering ARP, so no neighbour could reach it; above
/// [`MAX_PUNT_PPS`] is a typo.
pub(super) fn validate(d: &Decoder, cfg: &PuntConfig, root: &Node) {
    for (key, v) in cfg.set() {
        let Some(v) = v else { continue };
        let problem = if key.ends_with("_burst") && v == 0 {
            Some(("is 0", "use at least 1; `<reason>_pps: 0` punts nothing"))
        } else if key == "arp_pps" && v == 0 {
            Some(("is 0", "ARP must reach the slow path: use at least 1"))
        } else if v > MAX_PUNT_PPS {
            Some(("is too large", "use at most 10000000"))
        } else {
            None
        };
        if let Some((what, hint)) = problem {
            let m = root
                .get("punt")
                .and_then(|n| n.get(key))
                .map(|n| n.mark)
                .unwrap_or_default();
            d.error(
                m,
                &Path::Key(&Path::Key(&Path::Root, "punt"), key),
                format!("punt.{key} {what}"),
                Some(hint.into()),
            );
        }
    }
}
