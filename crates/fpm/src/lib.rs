//! FPM (Forwarding Plane Manager) input: how FRR's zebra (`dplane_fpm_nl`) programs the
//! router's table. Pure: no sockets, no threads, no DPDK, no clock (time is passed in),
//! so every behaviour is tested on bytes and is deterministic.
//!
//! Layers, bottom up:
//! - [`frame`]: the 4-byte FPM header; a streaming decoder over arbitrary chunks.
//! - [`netlink`], [`route`], [`nexthop`]: netlink messages to typed [`msg::Message`]s
//!   (`netlink-packet-route` for routes; next-hop objects by hand).
//! - [`resolve`] + [`ports`]: next hops to router ports, groups expanded, label ops chosen.
//! - [`session`]: connect/resync (mark and sweep), deletes, replaces, next-hop groups,
//!   hold time after a disconnect; output is a list of [`session::Change`]s.
//!
//! It must never panic on input: a bad frame header closes the session (the stream
//! cannot be resynchronised), a bad message is skipped; both are counted by reason.
//!
//! No `unsafe` (`#![forbid(unsafe_code)]`).

#![forbid(unsafe_code)]

pub mod encode;
pub mod error;
pub mod frame;
pub mod msg;
pub mod netlink;
pub mod nexthop;
pub mod ports;
pub mod resolve;
pub mod route;
pub mod session;

pub use error::{MsgError, ERROR_REASONS};
pub use frame::{FrameDecoder, FrameError};
pub use msg::{Key, Message, MESSAGE_KINDS};
pub use netlink::Limits;
pub use ports::{PortMap, PortSubnets};
pub use resolve::{Hop, Target};
pub use session::{Change, Event, Session, SessionConfig, SessionStats, State};
