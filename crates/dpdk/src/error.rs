//! Errors from DPDK calls, carrying `rte_strerror` text.

use std::ffi::CStr;

/// A failed DPDK call: which operation, the errno it reported and DPDK's text for it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{op}: {msg} (errno {errno})")]
pub struct DpdkError {
    pub op: String,
    pub errno: i32,
    pub msg: String,
}

/// Result alias for this crate.
pub type Result<T> = std::result::Result<T, DpdkError>;

impl DpdkError {
    /// An error for `op` from a negative return value or an errno.
    pub fn from_errno(op: impl Into<String>, errno: i32) -> DpdkError {
        let errno = errno.abs();
        // SAFETY: rte_strerror returns a pointer to a NUL-terminated string that stays
        // valid at least until the next call on this thread; we copy it at once.
        let msg = unsafe { CStr::from_ptr(dpdk_sys::rte_strerror(errno)) }
            .to_string_lossy()
            .into_owned();
        DpdkError {
            op: op.into(),
            errno,
            msg,
        }
    }

    /// An error for `op` from the thread's current `rte_errno`.
    pub fn last(op: impl Into<String>) -> DpdkError {
        // SAFETY: reads the per-thread rte_errno.
        let errno = unsafe { dpdk_sys::shim_rte_errno() };
        DpdkError::from_errno(op, errno)
    }

    /// An error that did not come from DPDK's errno (bad argument on our side).
    pub fn invalid(op: impl Into<String>, msg: impl Into<String>) -> DpdkError {
        DpdkError {
            op: op.into(),
            errno: libc::EINVAL,
            msg: msg.into(),
        }
    }
}

/// Turns a DPDK `int` return value (negative errno on failure) into a `Result`.
pub(crate) fn check(op: &str, ret: i32) -> Result<i32> {
    if ret < 0 {
        Err(DpdkError::from_errno(op, ret))
    } else {
        Ok(ret)
    }
}
