//! The config tests' shared kit (also compiled into `benches/routes.rs`): one definition
//! of each helper the test files used to copy.
#![allow(dead_code)]

use std::path::Path;

use config::{RouteContext, StartupConfig};

/// The MAC the tests give port `id`.
pub fn mac(id: u16) -> [u8; 6] {
    [2, 0, 0, 0, 0, id as u8]
}

/// The route context of `cfg`'s ports, with [`mac`] MACs.
pub fn ctx_of(cfg: &StartupConfig) -> RouteContext {
    RouteContext::from_startup(cfg, mac)
}

/// The two-port context the tests share: `in` (10.0.0.1/24) and `out` (10.0.1.1/24).
pub fn ctx() -> RouteContext {
    let cfg = StartupConfig::parse(
        Path::new("/x/r.yaml"),
        "ports:\n  - {name: in, vdev: net_null0, addresses: [10.0.0.1/24]}\n  - {name: out, vdev: net_null1, addresses: [10.0.1.1/24]}\n",
    )
    .unwrap();
    ctx_of(&cfg)
}
