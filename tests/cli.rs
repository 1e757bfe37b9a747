//! The binary's own surface: --help, --version, argument errors.

use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_mplsrouter"))
}

#[test]
fn help_lists_every_subcommand() {
    let out = bin().arg("--help").output().unwrap();
    assert!(out.status.success());
    let s = String::from_utf8(out.stdout).unwrap();
    for sub in ["run", "check", "gen-traffic", "bench-lookup"] {
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
