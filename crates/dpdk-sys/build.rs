//! Finds the system DPDK with pkg-config, compiles the C shim and generates bindings.
//!
//! Linking is dynamic against the `librte_*` shared objects: the EAL loads PMDs from its
//! plugin directory at run time, so no PMD is linked here.

use std::env;
use std::path::PathBuf;
use std::process::Command;

const MIN_DPDK: &str = "22.11";

fn main() {
    println!("cargo:rerun-if-changed=csrc/shim.h");
    println!("cargo:rerun-if-changed=csrc/shim.c");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");

    let lib = pkg_config::Config::new()
        .atleast_version(MIN_DPDK)
        .probe("libdpdk")
        .unwrap_or_else(|e| {
            panic!(
                "libdpdk >= {MIN_DPDK} not found by pkg-config ({e}).\n\
                 Install it with scripts/install-deps.sh (Debian: libdpdk-dev)."
            )
        });
    println!("cargo:rustc-env=DPDK_VERSION={}", lib.version);
    println!("cargo:version={}", lib.version);

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
