//! Finds the system DPDK with pkg-config, compiles the C shim and generates bindings.
//!
//! Release builds (what ships, what the benchmarks measure) link every DPDK library and
//! driver from its static archive, as `pkg-config --static` lists them (drivers whole, so
//! that their constructors register them): no plugin directory is read at run time, and
//! the PMDs reach the lcore id with one `%fs` load instead of a `__tls_get_addr` call per
//! mbuf (docs/benchmarks.md, "Session 11": up to 11% more packets per second). Other builds
//! (tests, clippy) link the `librte_*` shared objects, which link in a fraction of the
//! time; the EAL then loads the PMDs from its plugin directory.
//! `MPLSROUTER_DPDK_LINK=static|shared` overrides; the choice is passed on as
//! `DEP_DPDK_LINK` (for `mplsrouter --version`).

use std::env;
use std::path::PathBuf;
use std::process::Command;

const MIN_DPDK: &str = "22.11";

fn main() {
    println!("cargo:rerun-if-changed=csrc/shim.h");
    println!("cargo:rerun-if-changed=csrc/shim.c");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    println!("cargo:rerun-if-env-changed=MPLSROUTER_DPDK_LINK");
    let link_static = link_static();

    let lib = pkg_config::Config::new()
        .atleast_version(MIN_DPDK)
        .cargo_metadata(!link_static)
        .probe("libdpdk")
        .unwrap_or_else(|e| {
            panic!(
                "libdpdk >= {MIN_DPDK} not found by pkg-config ({e}).\n\
                 Install it with scripts/install-deps.sh (Debian: libdpdk-dev)."
            )
        });
    if link_static {
        link_text_align();
        link_static_archives();
    }
    println!("cargo:rustc-env=DPDK_VERSION={}", lib.version);
    println!("cargo:version={}", lib.version);
    // DEP_DPDK_LINK for the crates that depend on this one (the root build.rs names it
    // in `mplsrouter --version`).
    let link = if link_static {
        "static archives"
    } else {
        "shared libraries"
    };
    println!("cargo:link={link}");

    // The full cflags carry `-include rte_config.h` and the `-march` DPDK was built for;
    // the pkg-config crate only exposes include paths and defines, so ask the tool itself.
    let out = Command::new(env::var("PKG_CONFIG").unwrap_or_else(|_| "pkg-config".into()))
        .args(["--cflags", "libdpdk"])
        .output()
        .expect("run pkg-config --cflags libdpdk");
    assert!(out.status.success(), "pkg-config --cflags libdpdk failed");
    let cflags: Vec<String> = String::from_utf8(out.stdout)
        .expect("utf-8 cflags")
        .split_whitespace()
        .map(str::to_owned)
        .collect();

    let mut build = cc::Build::new();
    build
        .file("csrc/shim.c")
        .include("csrc")
        .warnings(true)
        .extra_warnings(true)
        .warnings_into_errors(true)
        .opt_level(3);
    for f in &cflags {
        build.flag(f);
    }
    build.compile("dpdkshim");

    let bindings = bindgen::Builder::default()
        .header("csrc/shim.h")
        .clang_args(&cflags)
        .clang_arg("-Icsrc")
        .allowlist_function("rte_.*")
        .allowlist_function("shim_.*")
        .allowlist_type("rte_.*")
        .allowlist_var("RTE_.*")
        .allowlist_var("rte_.*")
        .allowlist_var("shim_.*")
        // Packed structs with aligned members that Rust cannot express on 22.11.
        .opaque_type("rte_arp_hdr")
        .opaque_type("rte_arp_ipv4")
        .opaque_type("rte_l2tpv2_combined_msg_hdr")
        .opaque_type("rte_gtp_psc_generic_hdr")
        .derive_default(true)
        .derive_debug(false)
        .prepend_enum_name(false)
        .layout_tests(true)
        .generate_comments(false)
        .parse_callbacks(Box::new(bindgen::CargoCallbacks::new()))
        .generate()
        .expect("generate DPDK bindings");
    let out_path = PathBuf::from(env::var("OUT_DIR").unwrap()).join("bindings.rs");
    bindings.write_to_file(out_path).expect("write bindings");
}

/// Whether to link DPDK's static archives: `MPLSROUTER_DPDK_LINK` if set, else for
/// release builds only.
fn link_static() -> bool {
    match env::var("MPLSROUTER_DPDK_LINK").as_deref() {
        Ok("static") => true,
        Ok("shared") => false,
        Ok(other) => panic!("MPLSROUTER_DPDK_LINK={other}: want static or shared"),
        Err(_) => env::var("PROFILE").as_deref() == Ok("release"),
    }
}

/// Links `csrc/text_align.c` whole, before DPDK's archives: DPDK's code then starts on a
/// page boundary instead of wherever the Rust code before it ends, so a change to the
/// router no longer moves the PMDs' loops within their cache lines (which moved the
/// bench's packet rate by 3-8%; docs/benchmarks.md, "Session 20").
fn link_text_align() {
    println!("cargo:rerun-if-changed=csrc/text_align.c");
    cc::Build::new()
        .file("csrc/text_align.c")
        .warnings(true)
        .warnings_into_errors(true)
        .cargo_metadata(false)
        .compile("dpdktextalign");
    let out = env::var("OUT_DIR").expect("OUT_DIR");
    println!("cargo:rustc-link-search=native={out}");
    println!("cargo:rustc-link-lib=static:+whole-archive,-bundle=dpdktextalign");
}

/// Links DPDK from its static archives as `pkg-config --static --libs libdpdk` lists them:
/// `-l:librte_x.a` inside `--whole-archive` become whole static libraries (not bundled
/// into the rlib), `-lfoo` the system libraries they need. The shared `-lrte_*` names the
/// list also carries are skipped: everything they hold is already linked in.
fn link_static_archives() {
    let out = Command::new(env::var("PKG_CONFIG").unwrap_or_else(|_| "pkg-config".into()))
        .args(["--static", "--libs", "libdpdk"])
        .output()
        .expect("run pkg-config --static --libs libdpdk");
    assert!(
        out.status.success(),
        "pkg-config --static --libs libdpdk failed"
    );
    let libs = String::from_utf8(out.stdout).expect("utf-8 libs");
    let mut whole = false;
    for arg in libs.split_whitespace() {
        match arg {
            "-Wl,--whole-archive" => whole = true,
            "-Wl,--no-whole-archive" => whole = false,
            "-pthread" => println!("cargo:rustc-link-lib=pthread"),
            a if a.starts_with("-L") => println!("cargo:rustc-link-search=native={}", &a[2..]),
            a if a.starts_with("-l:lib") && a.ends_with(".a") => {
                let name = &a["-l:lib".len()..a.len() - ".a".len()];
                let modifiers = if whole {
                    "+whole-archive,-bundle"
                } else {
                    "-bundle"
                };
                println!("cargo:rustc-link-lib=static:{modifiers}={name}");
            }
            a if a.starts_with("-lrte_") => {}
            a if a.starts_with("-l") => println!("cargo:rustc-link-lib={}", &a[2..]),
            // --as-needed and --export-dynamic: rustc's own link line decides those.
            _ => {}
        }
    }
}
