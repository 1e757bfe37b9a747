//! Control-plane interfaces: a Linux TAP twin per port (`control_interface:` in the
//! port's config), so FRR's daemons (OSPF, LDP, BGP) talk through the router's ports.
//!
//! - Up: the slow path writes to the TAP what the router does not answer itself
//!   ([`ControlIfaces::to_kernel`]), and mirrors every ARP frame so the kernel resolves
//!   its own neighbours (the router keeps resolving next hops by itself).
//! - Down: a thread ([`down`]) reads what the kernel sends and hands it to the worker's
//!   inject queue, counted, rate limited, too-big frames dropped.
//!
//! Why a plain tun/tap fd on the control side and not DPDK's `net_tap`: a `net_tap` port
//! would be a DPDK port, polled by a worker, with its own queues and mbufs on the data
//! path; the control traffic is a few packets per second, and the data path must never
//! touch a TAP. A non-persistent TAP also disappears with the router, even when killed.
//! The interface is configured with `ip` (iproute2), the simplest robust way: one line per
//! setting, the kernel's own error text in the message ([`link`]).
//! Addresses are the startup config's, read once: a SIGHUP logs a changed address as
//! needing a restart ([`startup`]). Never on a worker; the fd is only written by the slow
//! path and read by [`down`].

pub mod down;
pub mod link;
pub mod startup;
mod stats;
mod tap;

pub use stats::{CpifStats, DownDrop};
pub use tap::{ControlIfaces, CpifError, UpError};
