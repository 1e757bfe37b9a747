//! Control-plane interfaces: a Linux TAP twin per port (`control_interface:` in the
//! port's config), so FRR's daemons (OSPF, LDP, BGP) talk through the router's ports.
//!
//! - Up: the slow path writes to the TAP what the router does not answer itself
//!   ([`ControlIfaces::to_kernel`]), and mirrors every ARP frame and every neighbour
//!   solicitation and advertisement so the kernel resolves its own neighbours (the router
//!   keeps resolving next hops by itself).
//! - Down: a thread ([`down`]) reads what the kernel sends and hands it to the worker's
//!   inject queue, counted, rate limited, too-big frames dropped.
//!
//! Why a plain tun/tap fd on the control side and not DPDK's `net_tap`: a `net_tap` port
//! would be a DPDK port, polled by a worker, with its own queues and mbufs on the data
//! path; the control traffic is a few packets per second, and the data path must never
//! touch a TAP. A non-persistent TAP also disappears with the router, even when killed.
//! The interface is configured with `ip` (iproute2), the simplest robust way: one line per
//! setting, the kernel's own error text in the message ([`link`]).
//! The TAP carries the port's IPv4 and IPv6 addresses and the router's link-local one,
//! and no address the kernel makes itself ([`link`]); they follow the startup config on
//! SIGHUP ([`startup`]). Never on a worker; the fd is only written by the slow path and
//! read by [`down`].

pub mod down;
pub mod link;
pub mod startup;
mod stats;
mod tap;

pub use stats::{CpifStats, DownDrop};
pub use tap::{ControlIfaces, CpifError, UpError};
