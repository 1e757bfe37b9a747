//! Arbitrary text into the startup and routes parsers (and the compiler behind them): an
//! error or a valid table, never a panic. Input is capped at 64 KiB; memory is bounded by
//! `-rss_limit_mb` in scripts/fuzz.sh.
//!
//! The YAML bounds are checked on every input: a parsed tree never nests deeper than
//! `yaml::MAX_DEPTH` nor holds more nodes than the text plus what aliases may copy, and
//! an error's position lies inside the text. At 64 KiB an input can nest 65,536 deep or
//! hold an alias bomb (`fuzz/dicts/config.dict` and the seeds supply those shapes), so
//! the bounds, not the input cap, are what stop them.
#![no_main]

use std::path::Path;
use std::sync::OnceLock;

use config::yaml::{self, Node, NodeKind, MAX_COPIED_NODES, MAX_DEPTH};
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

/// Depth and node count of a tree, walked without recursion.
fn shape(root: &Node) -> (usize, usize) {
    let (mut depth, mut nodes) = (0, 0);
    let mut stack = vec![(root, 0usize)];
    while let Some((n, d)) = stack.pop() {
        nodes += 1;
        match &n.kind {
            NodeKind::Scalar { .. } => {}
            NodeKind::Seq(items) => {
                depth = depth.max(d + 1);
                stack.extend(items.iter().map(|i| (i, d + 1)));
            }
            NodeKind::Map(pairs) => {
                depth = depth.max(d + 1);
                stack.extend(pairs.iter().flat_map(|(k, v)| [(k, d + 1), (v, d + 1)]));
            }
        }
    }
    (depth, nodes)
}

fn check_bounds(text: &str) {
    match yaml::parse(text) {
        Ok(root) => {
            let (depth, nodes) = shape(&root);
            assert!(depth <= MAX_DEPTH, "nested {depth} deep");
            // Without aliases every node but a few implicit ones (an empty key or value,
            // the root) takes a byte of text: a small multiple of the length bounds them.
            assert!(
                nodes <= 4 * (text.len() + 1) + MAX_COPIED_NODES,
                "{nodes} nodes"
            );
        }
        Err(e) => {
            // YAML breaks lines at \n, \r\n and a lone \r (str::lines() does not split
            // at a lone \r), so count its line breaks for the bound.
            // An error at the end of a file without a final line break (an unterminated
            // flow or quoted scalar) is placed on the line after the last one.
            let lines = text.replace("\r\n", "\n").matches(['\n', '\r']).count() + 1;
            assert!(e.mark.line >= 1 && e.mark.line as usize <= lines + 1, "{e:?}");
            assert!(e.mark.col >= 1, "{e:?}");
        }
    }
}

fuzz_target!(|data: &[u8]| {
    if data.len() > 64 * 1024 {
        return;
    }
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    check_bounds(text);
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
