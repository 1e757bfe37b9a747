//! The test kit's one live-router harness: the real `mplsrouter run` (optionally inside a
//! network namespace), its stdout and stderr in files next to the test's config (readable
//! while it runs and after a failure), readiness by a line it prints, and one way to stop
//! it: SIGTERM by PID, a bounded wait, SIGKILL by PID past it, the exit status checked.
//! Dropping a running router stops it the same way without panicking, so a failing
//! assertion leaves no process behind. It never kills by name.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::{bin, signal};

/// How long [`Router::stop`] waits after SIGTERM before SIGKILL (and a failed test).
pub const STOP_LIMIT: Duration = Duration::from_secs(20);
/// How long a router being dropped gets after SIGTERM before SIGKILL.
const DROP_LIMIT: Duration = Duration::from_secs(10);

/// What to run: `mplsrouter run --stats-interval 0 --duration D --config C`.
#[derive(Clone, Debug)]
pub struct Launch {
    pub config: PathBuf,
    /// Run inside this namespace (`ip netns exec NS`, which execs: the PID is the router's).
    pub netns: Option<String>,
    /// `--duration`: the router stops by itself after this at the latest.
    pub duration_s: f64,
    /// stdout goes here, stderr next to it with the extension `err`.
    pub log: PathBuf,
    /// A line the router prints once ready; `start` waits for it (None: no wait).
    pub ready: Option<String>,
    /// How long `start` waits for `ready`.
    pub ready_limit: Duration,
    /// Extra environment (e.g. `MPLSROUTER_TEST_FAULT`).
    pub env: Vec<(String, String)>,
}

impl Launch {
    /// `config` run for at most `duration_s`, logs next to it (`<stem>-<n>.log` and
    /// `.err`, a new `n` for each launch), ready once it prints its first table
    /// (`tables: generation`).
    pub fn new(config: &Path, duration_s: f64) -> Launch {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let stem = config.file_stem().unwrap_or_default().to_string_lossy();
        Launch {
            config: config.to_path_buf(),
            netns: None,
            duration_s,
            log: config.with_file_name(format!("{stem}-{n}.log")),
            ready: Some("tables: generation".into()),
            ready_limit: Duration::from_secs(20),
            env: Vec::new(),
        }
    }
    pub fn netns(mut self, ns: &str) -> Launch {
        self.netns = Some(ns.to_string());
        self
    }
    pub fn log(mut self, path: PathBuf) -> Launch {
        self.log = path;
        self
    }
    /// Ready once the router printed `text` (None: `start` returns at once).
    pub fn ready(mut self, text: Option<&str>, limit: Duration) -> Launch {
        self.ready = text.map(str::to_string);
        self.ready_limit = limit;
        self
    }
    pub fn env(mut self, k: &str, v: &str) -> Launch {
        self.env.push((k.to_string(), v.to_string()));
        self
    }

    fn command(&self) -> Command {
        let mut c = match &self.netns {
            Some(ns) => {
                let mut c = Command::new("ip");
                c.args(["netns", "exec", ns]).arg(bin());
                c
            }
            None => Command::new(bin()),
        };
        c.args(["run", "--stats-interval", "0", "--duration"])
            .arg(self.duration_s.to_string())
            .arg("--config")
            .arg(&self.config)
            .envs(self.env.iter().map(|(k, v)| (k, v)));
        c
    }
}

/// One running `mplsrouter run`.
pub struct Router {
    child: Option<Child>,
    pid: u32,
    /// The namespace it runs in, if any (its metrics are reached from there).
    netns: Option<String>,
    /// Its stdout; stderr is `err`.
    pub log: PathBuf,
    pub err: PathBuf,
}

impl Router {
    /// Starts the router and waits until it is ready (see [`Launch::ready`]).
    pub fn start(l: &Launch) -> Router {
        let mut r = Router::spawn(l);
        if let Some(text) = &l.ready {
            r.wait_for(text, l.ready_limit);
        }
        r
    }

    /// Starts the router without waiting for anything.
    pub fn spawn(l: &Launch) -> Router {
        let err = l.log.with_extension("err");
        let child = l
            .command()
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&l.log).unwrap())
            .stderr(std::fs::File::create(&err).unwrap())
            .spawn()
            .expect("start mplsrouter");
        Router {
            pid: child.id(),
            child: Some(child),
            netns: l.netns.clone(),
            log: l.log.clone(),
            err,
        }
    }

    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Sends `sig` (`HUP`, ...) by PID; false when the process is gone.
    pub fn signal(&self, sig: &str) -> bool {
        self.child.is_some() && signal(self.pid, sig)
    }

    /// Whether it is still running (false once it exited or was stopped).
    pub fn running(&mut self) -> bool {
        self.child
            .as_mut()
            .is_some_and(|c| c.try_wait().ok().flatten().is_none())
    }

    /// What it printed on stderr so far.
    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.err).unwrap_or_default()
    }

    /// What it printed on stdout so far.
    pub fn stdout(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Everything it printed so far: stdout, then stderr.
    pub fn output(&self) -> String {
        self.stdout() + &self.stderr()
    }

    /// Waits (bounded) until the output contains `text`; panics with the output when
    /// the router exits first or `limit` passes.
    pub fn wait_for(&mut self, text: &str, limit: Duration) {
        let start = Instant::now();
        while !self.output().contains(text) {
            if let Some(st) = self.child.as_mut().and_then(|c| c.try_wait().unwrap()) {
                panic!("router exited ({st}) before {text:?}:\n{}", self.output());
            }
            assert!(
                start.elapsed() < limit,
                "router never printed {text:?}:\n{}",
                self.output()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// `http://host:port/metrics` as the router printed it.
    pub fn metrics_url(&self) -> String {
        let out = self.output();
        out.lines()
            .find_map(|l| l.strip_prefix("metrics: "))
            .unwrap_or_else(|| panic!("no metrics address:\n{out}"))
            .to_string()
    }

    /// `host:port` of the metrics endpoint.
    pub fn metrics_addr(&self) -> String {
        let url = self.metrics_url();
        let a = url.strip_prefix("http://").unwrap_or(&url);
        a.trim_end_matches("/metrics").to_string()
    }

    /// The non-zero samples of the live `/metrics` whose line contains one of `words`
    /// (`drop`, `slow`, `ndp`, ...): where packets went, for a failure message. A note
    /// instead when the router is not running or does not answer within 2 s.
    pub fn metrics_nonzero(&mut self, words: &[&str]) -> String {
        let out = self.output();
        let url = out.lines().find_map(|l| l.strip_prefix("metrics: "));
        let Some(url) = url.filter(|_| self.running()) else {
            return "(metrics: the router is not running)".into();
        };
        let mut c = match &self.netns {
            Some(ns) => {
                let mut c = Command::new("ip");
                c.args(["netns", "exec", ns, "curl"]);
                c
            }
            None => Command::new("curl"),
        };
        let text = match c.args(["-sf", "--max-time", "2", url.trim()]).output() {
            Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).into_owned(),
            Ok(o) => return format!("(metrics: curl {}: {})", o.status, o.stderr.escape_ascii()),
            Err(e) => return format!("(metrics: curl: {e})"),
        };
        text.lines()
            .filter(|l| !l.starts_with('#') && words.iter().any(|w| l.contains(w)))
            .filter(|l| l.rsplit(' ').next().is_some_and(|v| v != "0"))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// For a failure message: the non-zero metrics matching `words` (see
    /// [`Router::metrics_nonzero`]) while it runs, then its output once stopped (stop
    /// summary included: ports, drops by reason, slow-path counts). Stops it if it is
    /// still running without judging the exit status; idempotent.
    pub fn report(&mut self, words: &[&str]) -> String {
        let m = self.metrics_nonzero(words);
        if let Some(mut c) = self.child.take() {
            terminate(&mut c, STOP_LIMIT);
        }
        format!("{m}\n{}", self.output())
    }

    /// The control socket's path as the router printed it.
    pub fn control_socket(&self) -> PathBuf {
        let out = self.output();
        out.lines()
            .find_map(|l| l.strip_prefix("control socket: "))
            .map(PathBuf::from)
            .unwrap_or_else(|| panic!("no control socket:\n{out}"))
    }

    /// The one way to stop it: SIGTERM (a clean stop: summary printed, pcaps flushed),
    /// then up to [`STOP_LIMIT`]; the exit status must be success. Returns the output.
    pub fn stop(&mut self) -> String {
        let (st, out) = self.stop_within(STOP_LIMIT);
        assert!(st.success(), "the router exited with {st}:\n{out}");
        out
    }

    /// SIGTERM, then up to `limit` (SIGKILL by PID past it, and the test fails); returns
    /// the exit status and the output without judging the status.
    pub fn stop_within(&mut self, limit: Duration) -> (ExitStatus, String) {
        let mut c = self.child.take().expect("the router is running");
        if c.try_wait().ok().flatten().is_none() {
            // Not reaped yet, so the PID is still the router's.
            signal(self.pid, "TERM");
        }
        let st = reap_within(&mut c, self.pid, limit);
        let out = self.output();
        let st = st.unwrap_or_else(|| {
            panic!("the router did not stop within {limit:?} of SIGTERM:\n{out}")
        });
        (st, out)
    }

    /// Waits up to `limit` for the router to exit by itself (SIGKILL and a failed test
    /// past it); returns the exit status and the output.
    pub fn wait_exit(&mut self, limit: Duration) -> (ExitStatus, String) {
        let mut c = self.child.take().expect("the router is running");
        let st = reap_within(&mut c, self.pid, limit);
        let out = self.output();
        let st = st.unwrap_or_else(|| panic!("the router did not exit within {limit:?}:\n{out}"));
        (st, out)
    }
}

/// Waits up to `limit` for `c` to exit; past it, SIGKILL by PID, reap, and None.
pub(crate) fn reap_within(c: &mut Child, pid: u32, limit: Duration) -> Option<ExitStatus> {
    let start = Instant::now();
    while start.elapsed() < limit {
        if let Ok(Some(st)) = c.try_wait() {
            return Some(st);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    if !signal(pid, "KILL") {
        let _ = c.kill();
    }
    let _ = c.wait();
    None
}

/// Stops `c` without judging it (for drops and helpers): SIGTERM by PID unless it has
/// exited, up to `limit`, then SIGKILL by PID; reaped either way.
pub fn terminate(c: &mut Child, limit: Duration) {
    if c.try_wait().ok().flatten().is_none() {
        signal(c.id(), "TERM");
        reap_within(c, c.id(), limit);
    }
}

impl Drop for Router {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            terminate(&mut c, DROP_LIMIT);
        }
    }
}
