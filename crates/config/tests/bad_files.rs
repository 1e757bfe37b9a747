//! Runs every file in `tests/bad/` and compares the diagnostics with its `.expect` file.
//!
//! `NAME.routes.yaml` is checked as a routes file against the ports of `bad/_ports.yaml`
//! (in 10.0.0.1/24 2001:db8::1/64 fe80::1/64, out 10.0.1.1/24 2001:db8:1::1/64,
//! max_label_depth 16); `NAME.startup.yaml` as a
//! startup config. Each `.expect` line is `LINE:COL KEY.PATH: MESSAGE`, in report order;
//! every diagnostic must match and none may be missing. Run with `BLESS=1` to rewrite
//! the `.expect` files after a deliberate change (then review the diff).
#![forbid(unsafe_code)]

mod common;

use std::path::{Path, PathBuf};

use config::{parse_routes, ConfigError, RouteContext, StartupConfig};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bad")
}

fn ctx() -> RouteContext {
    let cfg = StartupConfig::load(&dir().join("_ports.yaml")).expect("_ports.yaml is valid");
    common::ctx_of(&cfg)
}

fn diagnostics(path: &Path) -> ConfigError {
    let text = std::fs::read_to_string(path).unwrap();
    let name = path.file_name().unwrap().to_str().unwrap();
    let r = if name.ends_with(".routes.yaml") {
        parse_routes(path, &text, &ctx()).map(|_| ())
    } else if name.ends_with(".startup.yaml") {
        StartupConfig::parse(path, &text).map(|_| ())
    } else {
        panic!("{name}: name it *.routes.yaml or *.startup.yaml")
    };
    r.expect_err(&format!("{name} must be refused"))
}

#[test]
fn every_bad_file_reports_exactly_the_expected_errors() {
    let bless = std::env::var_os("BLESS").is_some();
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml") && !p.ends_with("_ports.yaml"))
        .collect();
    files.sort();
    assert!(files.len() >= 15, "corpus went missing: {files:?}");
    let mut failures = Vec::new();
    for f in &files {
        let err = diagnostics(f);
        let d = err.diagnostics().expect("a validation error, not I/O");
        let got: Vec<String> = d
            .iter()
            .map(|x| format!("{}:{} {}: {}", x.line, x.col, x.path, x.message))
            .collect();
        // Every diagnostic names its file and says how to fix most problems.
        let rendered = err.to_string();
        assert!(
            rendered.contains(&format!("{}:", f.display())),
            "{rendered}"
        );
        let expect_path = f.with_extension("expect");
        if bless {
            std::fs::write(&expect_path, got.join("\n") + "\n").unwrap();
            continue;
        }
        let want: Vec<String> = std::fs::read_to_string(&expect_path)
            .unwrap_or_else(|_| panic!("missing {}", expect_path.display()))
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(str::to_string)
            .collect();
        if got != want {
            failures.push(format!(
                "{}:\n  expected:\n    {}\n  got:\n    {}",
                f.display(),
                want.join("\n    "),
                got.join("\n    ")
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
