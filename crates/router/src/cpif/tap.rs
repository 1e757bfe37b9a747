//! The set of control interfaces: one TAP per opted-in port, created at startup (an error
//! naming the port when that fails) and recreated when deleted from outside.

use std::fs::File;
use std::io::{self, Write};
use std::sync::atomic::{
    AtomicU32, AtomicU64, Ordering::Acquire, Ordering::Relaxed, Ordering::Release,
};
use std::sync::{Arc, RwLock};

use config::startup::{ControlIfaceConfig, PortIface};

use super::link::{self, LinkError, TapAddrs};
use super::stats::CpifStats;
use crate::metrics::ControlStats;

/// Why a control interface could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum CpifError {
    #[error("port {port:?}: cannot create control interface {name:?}: {error}\n  hint: {hint}")]
    Create {
        port: String,
        name: String,
        error: io::Error,
        hint: &'static str,
    },
    #[error("port {port:?}: control interface {name:?}: {error}")]
    Configure {
        port: String,
        name: String,
        error: LinkError,
    },
}

/// Why a frame did not reach the kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpError {
    /// The port has no control interface.
    NoInterface,
    /// The interface is gone or the kernel refused the frame.
    WriteFailed,
}

fn hint(e: &io::Error) -> &'static str {
    match e.raw_os_error() {
        Some(libc::ENOENT) | Some(libc::ENODEV) => {
            "no /dev/net/tun: load the tun module (modprobe tun) or give the container the device"
        }
        Some(libc::EPERM) | Some(libc::EACCES) => {
            "creating a TAP needs CAP_NET_ADMIN: run as root or grant the capability"
        }
        Some(libc::EBUSY) | Some(libc::EINVAL) => {
            "the name is taken (another interface, or a TAP another process holds): choose \
             another control_interface name or delete that interface"
        }
        _ => "check control_interface in the port's config",
    }
}

/// One TAP and the port it belongs to.
pub struct Tap {
    pub port: u16,
    pub name: String,
    file: RwLock<Option<Arc<File>>>,
    ifindex: AtomicU32,
}

impl Tap {
    /// The open fd, or `None` while the interface is gone.
    pub fn file(&self) -> Option<Arc<File>> {
        self.file.read().expect("not poisoned").clone()
    }

    pub fn ifindex(&self) -> u32 {
        self.ifindex.load(Relaxed)
    }

    /// Forgets the fd of an interface found deleted (closing it).
    pub(super) fn lost(&self) {
        *self.file.write().expect("not poisoned") = None;
    }
}

/// Every control interface, indexed by port.
pub struct ControlIfaces {
    pub taps: Vec<Tap>,
    by_port: Vec<Option<usize>>,
    pub ports: Vec<PortIface>,
    control: Arc<ControlStats>,
    /// Bumped after an interface is recreated (new ifindex): FPM rebuilds its map.
    generation: AtomicU64,
    /// Each port's interface addresses now (they follow the startup config on SIGHUP):
    /// what a recreated interface gets.
    addresses: RwLock<Vec<TapAddrs>>,
}

/// Creates and configures one TAP with `addrs`; its ifindex.
fn open(
    c: &ControlIfaceConfig,
    port: &PortIface,
    addrs: &TapAddrs,
) -> Result<(File, u32), CpifError> {
    let f = dpdk::tap::open_tap(&c.name).map_err(|error| CpifError::Create {
        port: port.name.clone(),
        name: c.name.clone(),
        hint: hint(&error),
        error,
    })?;
    let ifindex = link::configure(&c.name, port, addrs).map_err(|error| CpifError::Configure {
        port: port.name.clone(),
        name: c.name.clone(),
        error,
    })?;
    Ok((f, ifindex))
}

impl ControlIfaces {
    /// Creates the TAPs of `cfgs` with their ports' MAC, MTU and addresses, link up.
    pub fn create(
        cfgs: &[ControlIfaceConfig],
        ports: &[PortIface],
        control: Arc<ControlStats>,
    ) -> Result<ControlIfaces, CpifError> {
        let mut taps = Vec::new();
        let mut by_port = vec![None; ports.len()];
        for c in cfgs {
            let port = &ports[c.port as usize];
            let (f, ifindex) = open(c, port, &TapAddrs::of(port))?;
            by_port[c.port as usize] = Some(taps.len());
            taps.push(Tap {
                port: c.port,
                name: c.name.clone(),
                file: RwLock::new(Some(Arc::new(f))),
                ifindex: AtomicU32::new(ifindex),
            });
        }
        Ok(ControlIfaces {
            taps,
            by_port,
            ports: ports.to_vec(),
            control,
            generation: AtomicU64::new(0),
            addresses: RwLock::new(ports.iter().map(TapAddrs::of).collect()),
        })
    }

    /// The counters (exported with the control side's metrics).
    pub fn stats(&self) -> &CpifStats {
        &self.control.cpif
    }

    pub fn is_empty(&self) -> bool {
        self.taps.is_empty()
    }

    /// The TAP of `port`, if it has one.
    pub fn of_port(&self, port: u16) -> Option<&Tap> {
        let i = (*self.by_port.get(port as usize)?)?;
        self.taps.get(i)
    }

    /// (ifindex, port) of every interface, for FPM's next hops.
    pub fn ifindexes(&self) -> Vec<(u32, u16)> {
        self.taps.iter().map(|t| (t.ifindex(), t.port)).collect()
    }

    /// Writes one Ethernet frame to `port`'s interface (the kernel receives it).
    pub fn to_kernel(&self, port: u16, frame: &[u8]) -> Result<(), UpError> {
        let f = self
            .of_port(port)
            .ok_or(UpError::NoInterface)?
            .file()
            .ok_or(UpError::WriteFailed)?;
        match (&*f).write(frame) {
            Ok(n) if n == frame.len() => {
                self.stats().up.fetch_add(1, Relaxed);
                Ok(())
            }
            _ => {
                self.stats().up_failed.fetch_add(1, Relaxed);
                Err(UpError::WriteFailed)
            }
        }
    }

    /// Gives `now`'s interface (if it has one) the port's addresses, IPv4 and IPv6, in
    /// place of the ones it has; the error names the `ip` command that failed.
    pub fn set_addresses(&self, now: &PortIface) -> Result<(), link::LinkError> {
        let mut addrs = self.addresses.write().expect("not poisoned");
        let Some(old) = addrs.get_mut(now.id as usize) else {
            return Ok(());
        };
        let tap = self.of_port(now.id);
        let now = TapAddrs::of(now);
        if let Some(tap) = tap {
            link::set_addresses(&tap.name, old, &now)?;
        }
        *old = now;
        Ok(())
    }

    /// Creates `tap` again after it was deleted from outside; the error says why not.
    pub(super) fn recreate(&self, tap: &Tap) -> Result<(), CpifError> {
        let c = ControlIfaceConfig {
            port: tap.port,
            name: tap.name.clone(),
        };
        let port = &self.ports[tap.port as usize];
        let addrs = self.addresses.read().expect("not poisoned")[tap.port as usize].clone();
        let (f, ifindex) = open(&c, port, &addrs)?;
        tap.ifindex.store(ifindex, Relaxed);
        *tap.file.write().expect("not poisoned") = Some(Arc::new(f));
        self.generation.fetch_add(1, Release);
        self.stats().recreated.fetch_add(1, Relaxed);
        Ok(())
    }
}

impl crate::fpm::ControlIfindexes for ControlIfaces {
    fn generation(&self) -> u64 {
        self.generation.load(Acquire)
    }

    fn ifindexes(&self) -> Vec<(u32, u16)> {
        ControlIfaces::ifindexes(self)
    }
}
