//! A real FRR (zebra with `dplane_fpm_nl`, staticd) for tests, in a network namespace of its
//! own, so zebra never programs the host, with `vtysh ... json` as the oracle.
//!
//! Two things about the test machines are handled here and must stay here:
//! - No MPLS in the kernel: zebra runs in a private mount namespace where a bind mount over
//!   `/proc/sys/net` shows it an `mpls/` folder (else "Disabling MPLS support").
//! - zebra's kernel provider runs before FPM and a rejected context never reaches FPM, so
//!   zebra runs with `nl_shim.c` preloaded (its route/nexthop writes are ACKed unapplied).
//!
//! Every daemon gets its own pid file, zserv socket and vty directory; all are stopped by
//! PID and the namespace and directories removed on drop, also when a test panics.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};
use std::time::{Duration, Instant};

pub const ZEBRA: &str = "/usr/lib/frr/zebra";
pub const STATICD: &str = "/usr/lib/frr/staticd";
const FPM_MODULE: &str = "/usr/lib/x86_64-linux-gnu/frr/modules/dplane_fpm_nl.so";

/// Why FRR tests cannot run here, or None when they can (root, FRR, vtysh, cc, tshark).
pub fn unavailable() -> Option<String> {
    let root = Command::new("id")
        .arg("-u")
        .output()
        .map(|o| o.stdout == b"0\n")
        .unwrap_or(false);
    if !root {
        return Some("needs root (network and mount namespaces)".into());
    }
    for p in [ZEBRA, STATICD, FPM_MODULE] {
        if !Path::new(p).exists() {
            return Some(format!(
                "{p} missing: install Debian's frr (scripts/install-deps.sh)"
            ));
        }
    }
    for tool in ["vtysh", "cc", "tshark", "unshare"] {
        let found = Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false);
        if !found {
            return Some(format!("{tool} missing (scripts/install-deps.sh)"));
        }
    }
    None
}

/// Runs a command, panicking with its stderr when it fails (the test kit's).
pub use crate::common::sh;

/// Polls `f` with backoff (5 ms doubling to 200 ms) until it returns Some, or panics with
/// `what` and the last state after `limit`.
pub fn wait_until<T>(what: &str, limit: Duration, mut f: impl FnMut() -> Result<T, String>) -> T {
    let deadline = Instant::now() + limit;
    let mut pause = Duration::from_millis(5);
    loop {
        match f() {
            Ok(v) => return v,
            Err(last) => {
                assert!(
                    Instant::now() < deadline,
                    "timeout ({limit:?}) waiting for {what}: {last}"
                );
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(200));
            }
        }
    }
}

/// One interface of the namespace: a veth `name` carrying `addr` (e.g. 10.0.1.1/24), its
/// peer `<name>p` up without an address (so the carrier is up).
pub struct Iface {
    pub name: String,
    pub addr: String,
}

/// What zebra and staticd start with.
pub struct FrrConfig {
    pub fpm_port: u16,
    /// `fpm use-next-hop-groups` (FRR's default) or `no fpm use-next-hop-groups`.
    pub next_hop_groups: bool,
    /// Extra zebra.conf lines (e.g. `mpls lsp ...`).
    pub zebra: String,
    /// Extra staticd.conf lines (e.g. `ip route ...`).
    pub staticd: String,
}

/// A network namespace with FRR's daemons. Drop stops everything and removes it all.
pub struct Frr {
    pub ns: String,
    pub dir: PathBuf,
    run: PathBuf,
    /// What the daemons start with; a restart re-reads it (change `staticd` to keep
    /// routes configured at run time across a staticd restart).
    pub cfg: FrrConfig,
    zebra: Option<Child>,
    staticd: Option<Child>,
    /// Other processes started in the namespace (the router, recorders), killed on drop.
    pub others: Vec<Child>,
    /// Protocol daemons (ospfd, ldpd, bgpd) by name, stopped on drop before zebra.
    daemons: Vec<(String, Child)>,
}

impl Frr {
    /// Creates the namespace `frr<tag><pid>` with `ifaces`, the config and run folders and
    /// the shim; starts nothing.
    pub fn new(tag: &str, ifaces: &[Iface], cfg: FrrConfig) -> Frr {
        let ns = format!("frr{tag}{}", std::process::id() % 100_000);
        let dir = std::env::temp_dir().join(format!("mplsrouter-{ns}"));
        let _ = Command::new("ip").args(["netns", "del", &ns]).output();
        let _ = std::fs::remove_dir_all(&dir);
        let run = dir.join("run");
        let mut frr = Frr {
            ns: ns.clone(),
            dir: dir.clone(),
            run: run.clone(),
            cfg,
            zebra: None,
            staticd: None,
            others: Vec::new(),
            daemons: Vec::new(),
        };
        sh(&["ip", "netns", "add", &ns]);
        sh(&["ip", "-n", &ns, "link", "set", "lo", "up"]);
        for i in ifaces {
            let peer = format!("{}p", i.name);
            sh(&[
                "ip", "-n", &ns, "link", "add", &i.name, "type", "veth", "peer", "name", &peer,
            ]);
            sh(&["ip", "-n", &ns, "link", "set", &i.name, "up"]);
            sh(&["ip", "-n", &ns, "link", "set", &peer, "up"]);
            sh(&["ip", "-n", &ns, "addr", "add", &i.addr, "dev", &i.name]);
        }
        frr.prepare_dirs(ifaces);
        frr
    }

    fn prepare_dirs(&mut self, ifaces: &[Iface]) {
        let mpls = self.dir.join("procnet/mpls");
        for sub in ["ipv4", "ipv6", "core"] {
            std::fs::create_dir_all(self.dir.join("procnet").join(sub)).unwrap();
        }
        std::fs::create_dir_all(&self.run).unwrap();
        std::fs::write(mpls_dir(&mpls, "platform_labels"), "1048575\n").unwrap();
        for i in ifaces.iter().map(|i| i.name.as_str()).chain(["lo"]) {
            let conf = mpls.join("conf").join(i);
            std::fs::create_dir_all(&conf).unwrap();
            std::fs::write(conf.join("input"), "1\n").unwrap();
        }
        sh(&["chown", "frr:frr", &self.run.display().to_string()]);
        let shim = self.dir.join("nl_shim.so");
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/frr/nl_shim.c");
        sh(&[
            "cc",
            "-shared",
            "-fPIC",
            "-O2",
            "-o",
            &shim.display().to_string(),
            &src.display().to_string(),
            "-ldl",
        ]);
        self.write_configs();
    }

    fn write_configs(&self) {
        let c = &self.cfg;
        let nhg = if c.next_hop_groups {
            ""
        } else {
            "no fpm use-next-hop-groups\n"
        };
        let zebra = format!(
            "hostname zebra\nfpm address 127.0.0.1 port {}\n{nhg}{}\n",
            c.fpm_port, c.zebra
        );
        std::fs::write(self.dir.join("zebra.conf"), zebra).unwrap();
        // staticd's routes are applied through vtysh once it runs (see start_staticd).
        std::fs::write(self.dir.join("staticd.conf"), "hostname staticd\n").unwrap();
    }

    /// `ip netns exec NS` + `args`, as a Command to adjust and spawn.
    pub fn exec(&self, args: &[&str]) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.ns]).args(args);
        c
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// Starts zebra (with `-M dplane_fpm_nl`) and waits until its vty answers.
    pub fn start_zebra(&mut self) {
        assert!(self.zebra.is_none(), "zebra already running");
        let d = self.dir.display();
        let r = self.run.display();
        let script = format!(
            "for s in ipv4 ipv6 core; do mount --bind /proc/sys/net/$s {d}/procnet/$s || exit 1; done\n\
             mount --bind {d}/procnet /proc/sys/net || exit 1\n\
             exec env LD_PRELOAD={d}/nl_shim.so {ZEBRA} -M dplane_fpm_nl -u frr -g frr \
             -f {d}/zebra.conf -i {r}/zebra.pid -z {r}/zserv.api --vty_socket {r} \
             --log file:{r}/zebra.log"
        );
        let _ = std::fs::remove_file(self.run.join("zebra.vty"));
        let child = self
            .exec(&[
                "unshare",
                "-m",
                "--propagation",
                "private",
                "sh",
                "-c",
                &script,
            ])
            .stdout(log_file(&self.dir.join("zebra.out")))
            .stderr(log_file(&self.dir.join("zebra.out")))
            .spawn()
            .expect("start zebra");
        self.zebra = Some(child);
        self.wait_vty("zebra");
    }

    /// Starts staticd (connecting to this zebra) and waits until its vty answers.
    pub fn start_staticd(&mut self) {
        assert!(self.staticd.is_none(), "staticd already running");
        let d = self.dir.display().to_string();
        let r = self.run.display().to_string();
        let child = self
            .exec(&[
                STATICD,
                "-u",
                "frr",
                "-g",
                "frr",
                "-f",
                &format!("{d}/staticd.conf"),
            ])
            .args([
                "-i",
                &format!("{r}/staticd.pid"),
                "-z",
                &format!("{r}/zserv.api"),
            ])
            .args([
                "--vty_socket",
                &r,
                "--log",
                &format!("file:{r}/staticd.log"),
            ])
            .stdout(log_file(&self.dir.join("staticd.out")))
            .stderr(log_file(&self.dir.join("staticd.out")))
            .spawn()
            .expect("start staticd");
        self.staticd = Some(child);
        self.wait_vty("staticd");
        // staticd refuses `label` until zebra has told it that MPLS is on ("% MPLS not
        // turned on in kernel"), which is after the config file was read: apply the
        // routes once that holds.
        let lines: Vec<String> = self.cfg.staticd.lines().map(str::to_owned).collect();
        if lines.is_empty() {
            return;
        }
        wait_until(
            "staticd accepts its routes",
            Duration::from_secs(10),
            || {
                let mut cmds = vec!["configure terminal"];
                cmds.extend(lines.iter().map(String::as_str));
                let mut args = Vec::new();
                for c in &cmds {
                    args.extend(["-c", c]);
                }
                let out = self.vtysh_raw(&args);
                let text = String::from_utf8_lossy(&out.stdout).into_owned();
                if out.status.success() && !text.contains("% ") {
                    Ok(())
                } else {
                    Err(text)
                }
            },
        );
    }

    fn wait_vty(&mut self, daemon: &str) {
        wait_until(&format!("{daemon}'s vty"), Duration::from_secs(15), || {
            let mut exited = None;
            for c in [&mut self.zebra, &mut self.staticd].into_iter().flatten() {
                exited = exited.or(c.try_wait().unwrap());
            }
            if let Some(st) = exited {
                return Err(format!("a daemon exited ({st}): {}", self.logs()));
            }
            if !self.run.join(format!("{daemon}.vty")).exists() {
                return Err("no vty socket yet".into());
            }
            let out = self.vtysh_raw(&["-d", daemon, "-c", "show version"]);
            if out.status.success() {
                Ok(())
            } else {
                Err(String::from_utf8_lossy(&out.stderr).into_owned())
            }
        })
    }

    /// Lets zebra see MPLS input enabled on `ifname` (an interface made after `new`).
    pub fn add_mpls_conf(&self, ifname: &str) {
        let conf = self.dir.join("procnet/mpls/conf").join(ifname);
        std::fs::create_dir_all(&conf).unwrap();
        std::fs::write(conf.join("input"), "1\n").unwrap();
    }

    /// Starts FRR's `daemon` (ospfd, ldpd, bgpd, ...) in the namespace with `conf` as its
    /// config file, connected to this zebra, and waits until its vty answers. ldpd gets a
    /// control socket in the run folder (several run on one host).
    pub fn start_daemon(&mut self, daemon: &str, conf: &str) {
        let d = self.dir.display().to_string();
        let r = self.run.display().to_string();
        let cfg = self.dir.join(format!("{daemon}.conf"));
        std::fs::write(&cfg, conf).unwrap();
        sh(&["chown", "frr:frr", &cfg.display().to_string()]);
        let _ = std::fs::remove_file(self.run.join(format!("{daemon}.vty")));
        let mut cmd = self.exec(&[&format!("/usr/lib/frr/{daemon}")]);
        cmd.args(["-u", "frr", "-g", "frr", "-f", &cfg.display().to_string()])
            .args(["-i", &format!("{r}/{daemon}.pid")])
            .args(["-z", &format!("{r}/zserv.api"), "--vty_socket", &r])
            .args(["--log", &format!("file:{r}/{daemon}.log")]);
        if daemon == "ldpd" {
            cmd.args(["--ctl_socket", &r]);
        }
        let child = cmd
            .stdout(log_file(&self.dir.join(format!("{daemon}.out"))))
            .stderr(log_file(&self.dir.join(format!("{daemon}.out"))))
            .spawn()
            .unwrap_or_else(|e| panic!("start {daemon} ({d}): {e}"));
        self.daemons.push((daemon.to_string(), child));
        let run = self.run.clone();
        wait_until(&format!("{daemon}'s vty"), Duration::from_secs(15), || {
            if !run.join(format!("{daemon}.vty")).exists() {
                return Err(format!("no vty socket yet: {}", self.logs()));
            }
            let out = self.vtysh_raw(&["-d", daemon, "-c", "show version"]);
            if out.status.success() {
                Ok(())
            } else {
                Err(String::from_utf8_lossy(&out.stderr).into_owned())
            }
        });
    }

    /// Stops a daemon started with `start_daemon` (SIGTERM, or SIGKILL with `kill`).
    pub fn stop_daemon(&mut self, daemon: &str, kill: bool) {
        if let Some(i) = self.daemons.iter().position(|(n, _)| n == daemon) {
            let (_, c) = self.daemons.remove(i);
            stop(c, kill);
        }
    }

    /// zebra's and staticd's output and logs, for failure messages.
    pub fn logs(&self) -> String {
        let mut s = String::new();
        let daemon_logs: Vec<String> = self
            .daemons
            .iter()
            .flat_map(|(n, _)| [format!("{n}.out"), format!("run/{n}.log")])
            .collect();
        for f in [
            "zebra.out",
            "staticd.out",
            "run/zebra.log",
            "run/staticd.log",
        ]
        .into_iter()
        .chain(daemon_logs.iter().map(String::as_str))
        {
            let text = std::fs::read_to_string(self.dir.join(f)).unwrap_or_default();
            let tail: Vec<&str> = text.lines().rev().take(30).collect();
            s += &format!("--- {f} (last lines)\n");
            for l in tail.iter().rev() {
                s += l;
                s.push('\n');
            }
        }
        s
    }

    fn vtysh_raw(&self, args: &[&str]) -> Output {
        // vtysh reaches the daemons through the vty sockets only: no namespace needed.
        Command::new("timeout")
            .args(["10", "vtysh", "--vty_socket"])
            .arg(&self.run)
            .args(args)
            .output()
            .expect("run vtysh")
    }

    /// Runs vtysh commands (each `-c`), panicking on failure; returns stdout.
    pub fn vtysh(&self, cmds: &[&str]) -> String {
        let mut args = Vec::new();
        for c in cmds {
            args.extend(["-c", c]);
        }
        let out = self.vtysh_raw(&args);
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success() && !stdout.contains("% "),
            "vtysh {cmds:?} failed: {stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        stdout
    }

    /// Applies config lines in `configure terminal`.
    pub fn configure(&self, lines: &[&str]) {
        let mut cmds = vec!["configure terminal"];
        cmds.extend_from_slice(lines);
        self.vtysh(&cmds);
    }

    /// `show ... json`, parsed.
    pub fn json(&self, show: &str) -> serde_json::Value {
        let out = self.vtysh(&[show]);
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{show}: bad JSON ({e}): {out}"))
    }

    /// Stops zebra: SIGTERM (clean shutdown) or SIGKILL (a crash, FPM connection dropped
    /// without zebra withdrawing anything).
    pub fn stop_zebra(&mut self, kill: bool) {
        if let Some(c) = self.zebra.take() {
            stop(c, kill);
        }
    }

    pub fn stop_staticd(&mut self) {
        if let Some(c) = self.staticd.take() {
            stop(c, false);
        }
    }

    /// The kernel's ifindex of `ifname` in the namespace.
    pub fn ifindex(&self, ifname: &str) -> u32 {
        let out = sh(&["ip", "-n", &self.ns, "-o", "link", "show", "dev", ifname]);
        out.split(':').next().unwrap().trim().parse().unwrap()
    }
}

fn mpls_dir(mpls: &Path, file: &str) -> PathBuf {
    std::fs::create_dir_all(mpls).unwrap();
    mpls.join(file)
}

fn log_file(p: &Path) -> std::fs::File {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(p)
        .unwrap()
}

/// Stops a child by PID: SIGTERM (or SIGKILL), bounded wait, SIGKILL after 5 s.
pub fn stop(mut c: Child, kill: bool) {
    let sig = if kill { "-KILL" } else { "-TERM" };
    let _ = Command::new("kill")
        .args([sig, &c.id().to_string()])
        .status();
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if c.try_wait().ok().flatten().is_some() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = c.kill();
    let _ = c.wait();
}

impl Drop for Frr {
    fn drop(&mut self) {
        for c in self.others.drain(..) {
            stop(c, false);
        }
        for (_, c) in self.daemons.drain(..) {
            stop(c, false);
        }
        self.stop_staticd();
        // SIGKILL: zebra with dplane_fpm_nl does not always exit on SIGTERM, and nothing
        // of it outlives the namespace (the shim kept it out of the kernel's tables).
        self.stop_zebra(true);
        let _ = Command::new("ip").args(["netns", "del", &self.ns]).output();
        if std::env::var_os("KEEP_TEST_DIRS").is_none() {
            let _ = std::fs::remove_dir_all(&self.dir);
        } else {
            eprintln!("kept {}", self.dir.display());
        }
    }
}
