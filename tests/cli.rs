//! The binary's own surface: --help, --version, argument errors.
#![forbid(unsafe_code)]

use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_mplsrouter"))
}

#[test]
fn help_lists_every_subcommand() {
    let out = bin().arg("--help").output().unwrap();
    assert!(out.status.success());
    let s = String::from_utf8(out.stdout).unwrap();
    for sub in [
        "run",
        "check",
        "gen-traffic",
        "bench-lookup",
        "stats",
        "show",
        "lookup",
        "trace",
        "capture",
    ] {
        assert!(s.contains(sub), "--help does not mention {sub}:\n{s}");
    }
}

#[test]
fn version_names_git_revision_and_dpdk() {
    let out = bin().arg("--version").output().unwrap();
    assert!(out.status.success());
    let s = String::from_utf8(out.stdout).unwrap();
    assert!(
        s.starts_with(&format!("mplsrouter {}", env!("CARGO_PKG_VERSION"))),
        "{s}"
    );
    let dpdk = Command::new("pkg-config")
        .args(["--modversion", "libdpdk"])
        .output()
        .unwrap();
    let dpdk = String::from_utf8(dpdk.stdout).unwrap();
    assert!(
        s.contains(&format!("DPDK (build, pkg-config): {}", dpdk.trim())),
        "{s}"
    );
    let rev = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .unwrap();
    if rev.status.success() {
        let rev = String::from_utf8(rev.stdout).unwrap();
        assert!(s.contains(&format!("git revision: {}", rev.trim())), "{s}");
    }
}

/// The DPDK libraries a binary loads at run time (`objdump -p`'s NEEDED `librte_*`).
fn needed_librte(binary: &std::path::Path) -> Vec<String> {
    let out = Command::new("objdump")
        .arg("-p")
        .arg(binary)
        .output()
        .unwrap();
    assert!(out.status.success(), "objdump -p {}", binary.display());
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| l.trim().strip_prefix("NEEDED"))
        .map(str::trim)
        .filter(|l| l.starts_with("librte_"))
        .map(str::to_owned)
        .collect()
}

/// The text symbols `nm` lists for `binary`, by name.
fn text_symbols(binary: &std::path::Path) -> std::collections::HashMap<String, u64> {
    let out = Command::new("nm").arg(binary).output().unwrap();
    assert!(out.status.success(), "nm {}", binary.display());
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| match l.split_whitespace().collect::<Vec<_>>()[..] {
            [addr, "t" | "T", name] => Some((name.to_owned(), u64::from_str_radix(addr, 16).ok()?)),
            _ => None,
        })
        .collect()
}

/// A static build places DPDK's code after a page-aligned marker (dpdk-sys/build.rs), so
/// that the PMDs' offsets in a page do not move with the Rust code before them.
fn dpdk_text_starts_on_a_page(binary: &std::path::Path) {
    let syms = text_symbols(binary);
    let at = |name: &str| {
        *syms
            .get(name)
            .unwrap_or_else(|| panic!("{}: no text symbol {name}", binary.display()))
    };
    let marker = at("mplsrouter_dpdk_text_start");
    assert_eq!(
        marker % 4096,
        0,
        "{}: marker at {marker:#x}",
        binary.display()
    );
    for pmd in ["eth_pcap_rx_infinite", "eth_null_tx", "eth_ring_rx"] {
        let pmd_at = at(pmd);
        assert!(
            pmd_at > marker,
            "{}: {pmd} at {pmd_at:#x}, before the marker",
            binary.display()
        );
    }
}

/// `--version` says how DPDK is linked, and the binary agrees: static archives leave no
/// `librte_*` to load, shared libraries do. Checked
/// on this test run's build and on `MPLSROUTER_BIN` (scripts/test.sh: the release build,
/// which links the archives).
#[test]
fn version_says_how_dpdk_is_linked() {
    let cargo_bin = std::path::PathBuf::from(env!("CARGO_BIN_EXE_mplsrouter"));
    let release = std::env::var_os("MPLSROUTER_BIN").map(std::path::PathBuf::from);
    for binary in std::iter::once(cargo_bin).chain(release) {
        let out = Command::new(&binary).arg("--version").output().unwrap();
        let s = String::from_utf8(out.stdout).unwrap();
        let needed = needed_librte(&binary);
        if s.contains("DPDK linked from: static archives") {
            assert!(
                needed.is_empty(),
                "{}: {s} but needs {needed:?}",
                binary.display()
            );
            dpdk_text_starts_on_a_page(&binary);
        } else {
            assert!(
                s.contains("DPDK linked from: shared libraries"),
                "{}: {s}",
                binary.display()
            );
            assert!(
                needed.iter().any(|l| l.starts_with("librte_eal.so")),
                "{}: shared, but needs {needed:?}",
                binary.display()
            );
        }
    }
}

#[test]
fn unknown_scenario_is_a_clear_error() {
    let out = bin()
        .args(["gen-traffic", "bogus", "--out", "/dev/null"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let e = String::from_utf8(out.stderr).unwrap();
    assert!(
        e.contains("unknown scenario \"bogus\"") && e.contains("mpls-swap"),
        "{e}"
    );
}

#[test]
fn committed_demo_routes_match_the_demo_traffic() {
    let dir = std::env::temp_dir().join(format!("mplsrouter-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = bin()
        .args(["gen-traffic", "demo", "--count", "64", "--out"])
        .arg(dir.join("demo.pcap"))
        .arg("--routes")
        .arg(dir.join("routes.yaml"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let generated = std::fs::read_to_string(dir.join("routes.yaml")).unwrap();
    let committed = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/dpdk-config/demo-routes.yaml"
    ))
    .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(
        generated, committed,
        "regenerate with: mplsrouter gen-traffic demo --out out/demo-in.pcap --routes dpdk-config/demo-routes.yaml"
    );
}

#[test]
fn check_accepts_the_shipped_configs_and_rejects_a_bad_one_with_positions() {
    let root = env!("CARGO_MANIFEST_DIR");
    for f in ["dpdk-config/demo.yaml", "dpdk-config/routes.example.yaml"] {
        let out = bin()
            .arg("check")
            .arg(format!("{root}/{f}"))
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{f}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let bad = std::env::temp_dir().join(format!("mplsrouter-bad-{}.yaml", std::process::id()));
    std::fs::write(&bad, "ipv4:\n  - {prefix: 10.0.0.1/8, via: 10.0.1.2}\n").unwrap();
    let out = bin().arg("check").arg(&bad).output().unwrap();
    let _ = std::fs::remove_file(&bad);
    assert_eq!(out.status.code(), Some(1));
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(
        e.contains(":2:14: ipv4[0].prefix") && e.contains("host bits"),
        "{e}"
    );
}

#[test]
fn check_reports_ipv6_mistakes_with_positions() {
    let dir = std::env::temp_dir().join(format!("mplsrouter-check6-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("startup.yaml"),
        "ports:\n  - {name: out, vdev: net_null0, addresses: [10.0.1.1/24, \"2001:db8:1::1/64\"]}\nroutes: routes.yaml\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("routes.yaml"),
        "ipv6:\n  - {prefix: \"2001:db8:100::1/40\", via: \"2001:db8:1::2\"}\n  - {prefix: \"2001:db8:200::/40\", via: 10.0.1.2}\n",
    )
    .unwrap();
    let out = bin()
        .arg("check")
        .arg(dir.join("startup.yaml"))
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(out.status.code(), Some(1));
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(
        e.contains("routes.yaml:2:14: ipv6[0].prefix") && e.contains("host bits"),
        "{e}"
    );
    assert!(
        e.contains("routes.yaml:3:40: ipv6[1].via") && e.contains("6PE"),
        "{e}"
    );
}
