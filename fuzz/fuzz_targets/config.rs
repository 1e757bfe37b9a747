//! Arbitrary text into the startup and routes parsers (and the compiler behind them): an
//! error or a valid table, never a panic. Input is capped at 64 KiB; memory is bounded by
//! `-rss_limit_mb` in scripts/fuzz.sh.
#![no_main]

use std::path::Path;
use std::sync::OnceLock;

use config::{RouteContext, StartupConfig};
use libfuzzer_sys::fuzz_target;

const STARTUP: &str = "\
eal: {lcores: \"0,1\", no_huge: true}
ports:
  - {name: a, vdev: net_null0, mac: \"02:00:00:00:00:01\", addresses: [10.0.0.1/24]}
  - {name: b, vdev: net_null1, mac: \"02:00:00:00:01:01\", addresses: [10.0.1.1/24, 10.9.0.1/16]}
routes: routes.yaml
";

fn ctx() -> &'static RouteContext {
    static C: OnceLock<RouteContext> = OnceLock::new();
    C.get_or_init(|| {
        let cfg = StartupConfig::parse(Path::new("startup.yaml"), STARTUP).expect("base startup");
        RouteContext::from_startup(&cfg, |p| [2, 0, 0, 0, p as u8, 1])
    })
}

fuzz_target!(|data: &[u8]| {
    if data.len() > 64 * 1024 {
        return;
    }
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = StartupConfig::parse(Path::new("fuzz.yaml"), text).map(|c| {
        let _ = (c.workers(), c.lcores(), c.eal_args("mplsrouter"));
    });
    let ctx = ctx();
    if let Ok(set) = config::parse_routes(Path::new("routes.yaml"), text, ctx) {
        // A set that validated must compile: the builder's errors are validation gaps.
        let ports = ctx.ports.as_ref().unwrap();
        if let Err(e) = config::compile(&set, ports, 1) {
            panic!("validated routes failed to compile: {e}");
        }
    }
    let _ = config::parse_routes(Path::new("routes.yaml"), text, &RouteContext::standalone());
});
