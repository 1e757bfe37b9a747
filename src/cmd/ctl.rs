//! Talking to a running router's control socket (`show`, `lookup`): finding the socket,
//! one request line out, one response line back.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use router::ctlsock::proto::{Reply, Request, Response};

/// How to find the socket.
#[derive(Args, Debug, Clone)]
pub struct SocketArgs {
    /// The router's control socket.
    #[arg(long, global = true, value_name = "PATH")]
    pub socket: Option<PathBuf>,
    /// The router's startup config (its `control_socket:`, else its EAL file prefix).
    #[arg(
        long,
        short,
        global = true,
        value_name = "FILE",
        conflicts_with = "socket"
    )]
    pub config: Option<PathBuf>,
    /// Print the response as JSON (one object) instead of a table.
    #[arg(long, global = true)]
    pub json: bool,
}

/// How long the router may take to answer (`show ports` samples for 0.2 s).
const TIMEOUT: Duration = Duration::from_secs(10);

impl SocketArgs {
    /// The socket path: given, from the config, or the only one in /run/mplsrouter that
    /// a router answers on.
    pub fn path(&self) -> Result<PathBuf> {
        if let Some(s) = &self.socket {
            return Ok(s.clone());
        }
        if let Some(c) = &self.config {
            let cfg = config::StartupConfig::load(c).map_err(|e| anyhow!("{e}"))?;
            return cfg.control_socket_path().ok_or_else(|| {
                anyhow!(
                    "{} sets neither `control_socket:` nor `eal: file_prefix:`; pass --socket",
                    c.display()
                )
            });
        }
        let dir = Path::new(config::startup::CONTROL_SOCKET_DIR);
        let mut socks: Vec<PathBuf> = std::fs::read_dir(dir)
            .map(|d| {
                d.filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.extension().is_some_and(|x| x == "sock"))
                    // Sockets of crashed routers do not count.
                    .filter(|p| UnixStream::connect(p).is_ok())
                    .collect()
            })
            .unwrap_or_default();
        socks.sort();
        match socks.len() {
            0 => bail!(
                "no router is running (no control socket in {})",
                dir.display()
            ),
            1 => Ok(socks.remove(0)),
            _ => bail!(
                "several routers are running; pick one with --socket: {}",
                socks
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }

    /// Sends `req` and returns the router's reply (an error reply is an error).
    pub fn ask(&self, req: &Request) -> Result<Reply> {
        self.ask_within(req, TIMEOUT)
    }

    /// [`SocketArgs::ask`], waiting up to `timeout` for the answer.
    pub fn ask_within(&self, req: &Request, timeout: Duration) -> Result<Reply> {
        let path = self.path()?;
        let r = exchange(&path, req, timeout)?;
        match (r.ok, r.result) {
            (true, Some(res)) => Ok(res),
            _ => bail!(
                "the router refused the request: {}",
                r.error.unwrap_or_else(|| "no reason given".into())
            ),
        }
    }
}

/// One request, one response.
pub fn exchange(path: &Path, req: &Request, timeout: Duration) -> Result<Response> {
    let mut s = UnixStream::connect(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused => {
            anyhow!("no router is running on {}", path.display())
        }
        _ => anyhow!("cannot connect to {}: {e}", path.display()),
    })?;
    s.set_read_timeout(Some(timeout))?;
    s.set_write_timeout(Some(TIMEOUT))?;
    let mut line = serde_json::to_vec(req)?;
    line.push(b'\n');
    s.write_all(&line)
        .with_context(|| format!("sending to {}", path.display()))?;
    let mut back = String::new();
    BufReader::new(s)
        .read_line(&mut back)
        .with_context(|| format!("reading from {}", path.display()))?;
    if back.is_empty() {
        bail!("{} closed the connection without answering", path.display());
    }
    serde_json::from_str(&back).with_context(|| format!("{} answered garbage", path.display()))
}
