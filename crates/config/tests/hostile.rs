//! Hostile routes files through `check` and reload: an alias bomb, deep nesting, a FIFO,
//! `/dev/zero`, a file over `max_routes_file_bytes`. Each is refused with a message (and
//! a position where there is one) without blocking, crashing or reading without end, and
//! a reload keeps the last good routes.
#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use config::{check_file, ConfigError, ReloadOutcome, ReloadState, RouteContext, StartupConfig};

const GOOD: &str = "neighbors:\n  - {ip: 10.0.1.2, mac: \"02:00:00:00:01:02\"}\n\
                    ipv4:\n  - {prefix: 198.51.100.0/24, via: 10.0.1.2}\n";

struct Dir(PathBuf);

impl Dir {
    fn new(tag: &str) -> Dir {
        let d = std::env::temp_dir().join(format!("config-hostile-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Dir(d)
    }
    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn startup(dir: &Dir, extra: &str) -> PathBuf {
    let p = dir.path("startup.yaml");
    std::fs::write(
        &p,
        format!(
            "ports:\n  - {{name: in, vdev: net_null0, addresses: [10.0.0.1/24]}}\n  \
             - {{name: out, vdev: net_null1, addresses: [10.0.1.1/24]}}\nroutes: routes.yaml\n{extra}"
        ),
    )
    .unwrap();
    p
}

fn ctx(cfg: &Path) -> RouteContext {
    RouteContext::from_startup(&StartupConfig::load(cfg).unwrap(), |id| {
        [2, 0, 0, 0, 0, id as u8]
    })
}

fn bomb() -> String {
    let mut s = String::from(
        "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
    );
    for (p, c) in "abcdefgh".chars().zip("bcdefghi".chars()) {
        s += &format!("{c}: &{c} [{}]\n", vec![format!("*{p}"); 9].join(","));
    }
    s
}

fn mkfifo(p: &Path) {
    let st = std::process::Command::new("mkfifo")
        .arg(p)
        .status()
        .unwrap();
    assert!(st.success(), "mkfifo");
}

/// Runs `f` on a thread, failing (instead of hanging the suite) if it blocks.
fn bounded<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || tx.send(f()).unwrap())
        .unwrap();
    rx.recv_timeout(Duration::from_secs(20))
        .unwrap_or_else(|_| panic!("{what}: blocked or crashed"))
}

/// Writes each hostile file over `routes.yaml` in turn; returns its path.
fn hostile(dir: &Dir, name: &str) -> PathBuf {
    let p = dir.path("routes.yaml");
    let _ = std::fs::remove_file(&p);
    let _ = std::fs::remove_dir(&p);
    match name {
        "bomb" => std::fs::write(&p, bomb()).unwrap(),
        "deep" => std::fs::write(&p, format!("ipv4:\n{}x\n", "- ".repeat(40_000))).unwrap(),
        "flow" => std::fs::write(&p, format!("ipv4: {}\n", "[".repeat(1 << 20))).unwrap(),
        "fifo" => mkfifo(&p),
        "zero" => std::os::unix::fs::symlink("/dev/zero", &p).unwrap(),
        "dir" => std::fs::create_dir(&p).unwrap(),
        "big" => std::fs::write(&p, format!("{GOOD}{}", "# padding\n".repeat(300_000))).unwrap(),
        _ => unreachable!(),
    }
    p
}

/// The text every hostile file must be refused with.
fn expected(name: &str) -> &'static str {
    match name {
        "bomb" => "alias bomb",
        "deep" | "flow" => "nest more than 64 deep",
        "fifo" => "a FIFO (named pipe), not a regular file",
        "zero" => "a character device, not a regular file",
        "dir" => "a directory, not a regular file",
        "big" => "larger than the limit of 2097152 bytes",
        _ => unreachable!(),
    }
}

const ALL: [&str; 7] = ["bomb", "deep", "flow", "fifo", "zero", "dir", "big"];

#[test]
fn reload_refuses_hostile_files_and_keeps_the_last_good_routes() {
    let dir = Dir::new("reload");
    let cfg = startup(&dir, "max_routes_file_bytes: 2097152\n");
    let path = dir.path("routes.yaml");
    std::fs::write(&path, GOOD).unwrap();
    let mut st = ReloadState::new(&path, ctx(&cfg));
    assert!(matches!(
        st.reload().unwrap(),
        ReloadOutcome::Updated { .. }
    ));
    let good = st.current().cloned();
    for name in ALL {
        hostile(&dir, name);
        let t = Instant::now();
        let (r, st2) = bounded(name, move || {
            let r = st.reload().map(|_| ());
            (r, st)
        });
        st = st2;
        let e = r.expect_err(name);
        assert!(e.to_string().contains(expected(name)), "{name}: {e}");
        assert!(e.to_string().contains("routes.yaml"), "{name}: {e}");
        if matches!(name, "bomb" | "deep" | "flow") {
            let d = &e.diagnostics().expect("a positioned error").0[0];
            assert!(d.line >= 1 && d.col > 1, "{name}: {d}");
        }
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "{name}: {:?}",
            t.elapsed()
        );
        assert_eq!(st.generation(), 1, "{name}");
        assert_eq!(st.current().cloned(), good, "{name}");
    }
    // A good file again is taken.
    let _ = std::fs::remove_dir(&path);
    std::fs::write(&path, GOOD.replace("/24", "/25")).unwrap();
    assert!(matches!(
        st.reload().unwrap(),
        ReloadOutcome::Updated { .. }
    ));
    assert_eq!(st.generation(), 2);
}

#[test]
fn check_refuses_hostile_files_alone_and_through_the_startup_config() {
    let dir = Dir::new("check");
    let cfg = startup(&dir, "max_routes_file_bytes: 2097152\n");
    for name in ALL {
        let p = hostile(&dir, name);
        // On its own: the routes file's default limit (256 MiB) lets "big" through.
        let r = bounded(name, move || check_file(&p).map(|_| ()));
        if name == "big" {
            r.expect("a 3 MB routes file is under the default limit");
        } else {
            let e = r.expect_err(name);
            assert!(e.to_string().contains(expected(name)), "{name}: {e}");
        }
        // Through the startup config: its limit, and the position of `routes:`.
        let c = cfg.clone();
        let e = bounded(name, move || check_file(&c).map(|_| ())).expect_err(name);
        let d = &e.diagnostics().expect("positioned").0[0];
        assert!(d.to_string().contains(expected(name)), "{name}: {e}");
        if matches!(name, "fifo" | "zero" | "dir" | "big") {
            assert_eq!(
                (d.line, d.col, d.path.as_str()),
                (4, 9, "routes"),
                "{name}: {e}"
            );
        }
    }
}

#[test]
fn a_hostile_startup_config_is_refused() {
    let dir = Dir::new("startup");
    let p = dir.path("startup.yaml");
    std::fs::write(&p, format!("eal:\n  args: {}\n", "[".repeat(1 << 20))).unwrap();
    let q = p.clone();
    let e = bounded("deep", move || StartupConfig::load(&q).map(|_| ())).unwrap_err();
    assert!(e.to_string().contains("nest more than 64 deep"), "{e}");
    std::fs::remove_file(&p).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &p).unwrap();
    let q = p.clone();
    let e = bounded("zero", move || StartupConfig::load(&q).map(|_| ())).unwrap_err();
    assert!(matches!(e, ConfigError::Refused { .. }), "{e}");
    std::fs::remove_file(&p).unwrap();
    mkfifo(&p);
    let e = bounded("fifo", move || StartupConfig::load(&p).map(|_| ())).unwrap_err();
    assert!(e.to_string().contains("a FIFO"), "{e}");
    // max_routes_file_bytes: 0 is an error with its position.
    let e = StartupConfig::parse(Path::new("s.yaml"), "ports: []\nmax_routes_file_bytes: 0\n")
        .unwrap_err();
    let d = &e.diagnostics().unwrap().0;
    assert!(
        d.iter()
            .any(|d| (d.line, d.col) == (2, 24) && d.message.contains("at least 1")),
        "{e}"
    );
}
