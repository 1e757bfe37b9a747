//! Embeds build information for `mplsrouter --version` and the build-info metric:
//! the git revision of the source tree, the DPDK version found by pkg-config and how
//! DPDK is linked.

use std::process::Command;

fn run(cmd: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(cmd).args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let s = String::from_utf8(out.stdout).ok()?.trim().to_owned();
    (!s.is_empty()).then_some(s)
}

fn main() {
    let rev = run("git", &["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".into());
    let dirty = run("git", &["status", "--porcelain", "--untracked-files=no"]).is_some();
    let rev = if dirty && rev != "unknown" {
        format!("{rev}-dirty")
    } else {
        rev
    };
    let dpdk = run("pkg-config", &["--modversion", "libdpdk"]).unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=MPLSROUTER_GIT_REV={rev}");
    println!("cargo:rustc-env=MPLSROUTER_DPDK_VERSION={dpdk}");
    // How crates/dpdk-sys/build.rs linked DPDK (its `cargo:link` metadata).
    let link = std::env::var("DEP_DPDK_LINK").unwrap_or_else(|_| "unknown".into());
    println!("cargo:rustc-env=MPLSROUTER_DPDK_LINK={link}");
    // Rebuild when the checked-out commit or the index changes. Ask git where its
    // directory is: in a worktree `.git` is a file pointing elsewhere.
    if let Some(git_dir) = run("git", &["rev-parse", "--git-dir"]) {
        let common =
            run("git", &["rev-parse", "--git-common-dir"]).unwrap_or_else(|| git_dir.clone());
        for p in [
            format!("{git_dir}/HEAD"),
            format!("{git_dir}/index"),
            format!("{common}/refs/heads"),
        ] {
            if std::path::Path::new(&p).exists() {
                println!("cargo:rerun-if-changed={p}");
            }
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}
