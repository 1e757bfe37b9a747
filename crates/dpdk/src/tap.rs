//! Linux TAP devices for the control-plane interfaces, and a `poll(2)` over their fds.
//!
//! Not DPDK, but the two system calls need `unsafe` and this crate is where the project
//! keeps it. A TAP opened here is non-persistent: the kernel deletes the interface when
//! the fd is closed, so a router that exits (even killed) leaves no interface behind.
//! Frames are plain Ethernet (`IFF_TAP | IFF_NO_PI`: no packet-information header).

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::time::Duration;

/// `_IOW('T', 202, int)`.
const TUNSETIFF: libc::c_ulong = 0x4004_54ca;
/// `_IOW('T', 226, int)` (Linux 4.20+).
const TUNSETCARRIER: libc::c_ulong = 0x4004_54e2;
const IFF_TAP: libc::c_short = 0x0002;
const IFF_NO_PI: libc::c_short = 0x1000;

/// `struct ifreq` as TUNSETIFF reads and writes it: the name and the flags (the rest of
/// the 40-byte union is padding).
#[repr(C)]
struct IfReq {
    name: [u8; libc::IFNAMSIZ],
    flags: libc::c_short,
    _pad: [u8; 22],
}

/// Creates (or attaches to) the TAP interface `name`, non-blocking. Fails with
/// `InvalidInput` for a name that does not fit, and with the kernel's error otherwise
/// (`ENOENT` without `/dev/net/tun`, `EPERM` without CAP_NET_ADMIN, `EBUSY` when another
/// process holds it, `EINVAL` when a non-TAP interface has that name).
pub fn open_tap(name: &str) -> io::Result<File> {
    if name.is_empty() || name.len() >= libc::IFNAMSIZ || name.contains('\0') {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "interface names have 1 to 15 bytes",
        ));
    }
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open("/dev/net/tun")?;
    let mut req = IfReq {
        name: [0; libc::IFNAMSIZ],
        flags: IFF_TAP | IFF_NO_PI,
        _pad: [0; 22],
    };
    req.name[..name.len()].copy_from_slice(name.as_bytes());
    // SAFETY: TUNSETIFF reads and writes one `struct ifreq` (40 bytes, which `IfReq` is,
    // with the name NUL-terminated) at the pointer, which is valid for the call; the fd
    // is open for as long as `f` lives.
    let rc = unsafe { libc::ioctl(f.as_raw_fd(), TUNSETIFF as _, &mut req as *mut IfReq) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(f)
}

/// Sets the carrier of the TAP behind `f` (the kernel's link state of the interface), so
/// the protocols on it see the port's link go down and up.
pub fn set_carrier(f: &File, up: bool) -> io::Result<()> {
    let v: libc::c_int = up.into();
    // SAFETY: TUNSETCARRIER reads one int at the pointer, valid for the call; the fd is
    // open for as long as `f` lives.
    let rc = unsafe { libc::ioctl(f.as_raw_fd(), TUNSETCARRIER as _, &v as *const libc::c_int) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Waits until one of `files` is readable (or reports an error or hang-up), at most
/// `timeout`; sets `ready[i]` for each file that is. Returns how many are ready (0 on a
/// timeout or a signal).
pub fn poll_readable(files: &[&File], ready: &mut [bool], timeout: Duration) -> io::Result<usize> {
    let mut fds: Vec<libc::pollfd> = files
        .iter()
        .map(|f| libc::pollfd {
            fd: f.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    let ms = timeout.as_millis().min(i32::MAX as u128) as libc::c_int;
    // SAFETY: `fds` is a valid array of `fds.len()` pollfd structs for the duration of the
    // call; the fds belong to `files`, which outlive it.
    let rc = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms) };
    if rc < 0 {
        let e = io::Error::last_os_error();
        return if e.kind() == io::ErrorKind::Interrupted {
            Ok(0)
        } else {
            Err(e)
        };
    }
    for (r, p) in ready.iter_mut().zip(&fds) {
        *r = p.revents != 0;
    }
    Ok(rc as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_do_not_fit_are_refused_before_the_kernel() {
        for n in ["", "a-name-far-too-long", "a\0b"] {
            assert_eq!(
                open_tap(n).unwrap_err().kind(),
                io::ErrorKind::InvalidInput,
                "{n:?}"
            );
        }
    }

    #[test]
    fn ifreq_has_the_kernel_layout() {
        assert_eq!(std::mem::size_of::<IfReq>(), 40);
    }
}
