//! The FPM listener thread: accepts zebra's connection, feeds the bytes to the pure
//! session and hands its changes to the control thread.
//!
//! One session at a time: a new connection replaces the old one (zebra reconnects after
//! a restart before the old socket is known dead). Sockets use short timeouts so a stop
//! request is seen within tens of milliseconds. Nothing is ever dropped: when the
//! control side's channel is full, this thread waits before reading more, and TCP flow
//! control slows zebra down. It never touches a worker or the table.

use std::io::{ErrorKind, Read};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Sender, TrySendError};
use fpm::{Event, Session};

use super::{Batch, PortMapSource};

use super::stats::FpmStats;

/// How long a read or an idle loop waits before checking timers and the stop flag.
const TICK: Duration = Duration::from_millis(10);
/// Skipped-message log lines per connection before they are only counted.
const LOG_SKIPPED: u32 = 20;

/// The running listener; stopped on drop.
pub struct Listener {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Listener {
    pub fn start(
        addr: SocketAddr,
        session: Session,
        ports: PortMapSource,
        stats: Arc<FpmStats>,
        tx: Sender<Batch>,
    ) -> std::io::Result<Listener> {
        let l = TcpListener::bind(addr)?;
        l.set_nonblocking(true)?;
        let addr = l.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let mut run = Run {
            listener: l,
            conn: None,
            session,
            ports,
            stats,
            tx,
            stop: stop.clone(),
            buf: vec![0; 64 * 1024],
            read_at: None,
            logged: 0,
        };
        let thread = std::thread::Builder::new()
            .name("fpm".into())
            .spawn(move || run.run())?;
        Ok(Listener {
            addr,
            stop,
            thread: Some(thread),
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

struct Run {
    listener: TcpListener,
    conn: Option<TcpStream>,
    session: Session,
    /// Rebuilds the session's ifindex -> port map when a control interface is recreated.
    ports: PortMapSource,
    stats: Arc<FpmStats>,
    tx: Sender<Batch>,
    stop: Arc<AtomicBool>,
    buf: Vec<u8>,
    /// When the bytes of the changes not handed over yet were read.
    read_at: Option<Instant>,
    logged: u32,
}

impl Run {
    fn run(&mut self) {
        while !self.stop.load(Ordering::Relaxed) {
            if let Some(m) = self.ports.refresh() {
                println!("fpm: a control interface was recreated; ifindex map refreshed");
                self.session.set_ports(m);
            }
            self.accept();
            if !self.read() {
                std::thread::sleep(TICK);
            }
            self.session.poll(Instant::now());
            self.flush();
        }
    }

    fn accept(&mut self) {
        match self.listener.accept() {
            Ok((s, peer)) => {
                if self.conn.take().is_some() {
                    println!("fpm: a new connection from {peer} replaces the current one");
                    self.session.disconnect(Instant::now());
                }
                if let Err(e) = s
                    .set_nonblocking(false)
                    .and_then(|_| s.set_read_timeout(Some(TICK)))
                {
                    eprintln!("fpm: cannot use the connection from {peer}: {e}");
                    return;
                }
                println!("fpm: zebra connected from {peer}");
                self.logged = 0;
                self.conn = Some(s);
                self.session.connect(Instant::now());
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => {}
            Err(e) => eprintln!("fpm: accept failed: {e}"),
        }
    }

    /// Reads once from the connection; false when there is none (the caller sleeps).
    fn read(&mut self) -> bool {
        let Some(s) = self.conn.as_mut() else {
            return false;
        };
        match s.read(&mut self.buf) {
            Ok(0) => self.close("zebra closed the connection"),
            Ok(n) => {
                let now = Instant::now();
                self.read_at.get_or_insert(now);
                if let Err(e) = self.session.feed(&self.buf[..n], now) {
                    self.close(&format!("closing the session: {e}"));
                }
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => self.close(&format!("read failed: {e}")),
        }
        true
    }

    fn close(&mut self, why: &str) {
        println!("fpm: {why}");
        self.conn = None;
        self.session.disconnect(Instant::now());
    }

    /// Hands changes to the control thread (waiting while its channel is full), logs
    /// events and publishes the counters.
    fn flush(&mut self) {
        let changes = self.session.take_changes();
        let read_at = self.read_at.take().unwrap_or_else(Instant::now);
        let mut batch = Batch { read_at, changes };
        while !batch.changes.is_empty() {
            match self.tx.try_send(batch) {
                Ok(()) => break,
                Err(TrySendError::Full(b)) => {
                    if self.stop.load(Ordering::Relaxed) {
                        return;
                    }
                    batch = b;
                    std::thread::sleep(Duration::from_millis(1));
                }
                Err(TrySendError::Disconnected(_)) => break,
            }
        }
        for e in self.session.take_events() {
            self.log(e);
        }
        self.stats
            .store_session(self.session.stats(), self.session.state());
    }

    fn log(&mut self, e: Event) {
        match e {
            Event::Connected { stale } if stale > 0 => {
                println!("fpm: resync started, {stale} routes marked stale")
            }
            Event::Connected { .. } => {}
            Event::ResyncDone { swept, routes } => {
                println!("fpm: resync done, {routes} routes, {swept} stale routes withdrawn")
            }
            Event::Disconnected { routes, cut_frame } => println!(
                "fpm: disconnected{}; keeping {routes} routes for the hold time",
                if cut_frame { " mid-frame" } else { "" }
            ),
            Event::HoldExpired { withdrawn } => {
                println!("fpm: hold time expired, {withdrawn} routes withdrawn")
            }
            Event::FrameError(e) => eprintln!("fpm: framing error: {e}"),
            Event::Skipped(e) => {
                self.logged += 1;
                if self.logged <= LOG_SKIPPED {
                    eprintln!("fpm: message skipped ({}): {e}", e.reason());
                } else if self.logged == LOG_SKIPPED + 1 {
                    eprintln!(
                        "fpm: more skipped messages are only counted (mplsrouter_fpm_errors_total)"
                    );
                }
            }
        }
    }
}
