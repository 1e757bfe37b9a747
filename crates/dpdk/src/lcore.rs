//! Running closures on EAL worker lcores.
//!
//! `rte_eal_remote_launch` takes a C function pointer and one argument; we pass a boxed
//! closure through a trampoline. A panic inside the closure is caught in the trampoline
//! (unwinding into C is undefined behaviour) and reported by [`LcoreHandle::join`].

use std::any::Any;
use std::os::raw::{c_int, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};

use crate::error::{check, DpdkError};

type Outcome<T> = Arc<Mutex<Option<std::thread::Result<T>>>>;

struct Job<F, T> {
    f: F,
    out: Outcome<T>,
}

/// A closure running on a worker lcore.
pub struct LcoreHandle<T> {
    lcore: u32,
    out: Outcome<T>,
}

/// Why a worker did not return a value.
#[derive(Debug, thiserror::Error)]
pub enum JoinError {
    #[error("worker on lcore {lcore} panicked: {message}")]
    Panicked { lcore: u32, message: String },
    #[error("worker on lcore {lcore} finished without a result")]
    Lost { lcore: u32 },
}

extern "C" fn trampoline<F, T>(arg: *mut c_void) -> c_int
where
    F: FnOnce() -> T,
{
    // SAFETY: `arg` is the Box<Job<F, T>> leaked by `launch`, handed to exactly one lcore.
    let job: Box<Job<F, T>> = unsafe { Box::from_raw(arg as *mut Job<F, T>) };
    let Job { f, out } = *job;
    let r = catch_unwind(AssertUnwindSafe(f));
    let code = if r.is_ok() { 0 } else { -1 };
    *out.lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
    code
}

/// Runs `f` on worker lcore `lcore` (which must be enabled and idle).
pub fn launch<F, T>(lcore: u32, f: F) -> crate::Result<LcoreHandle<T>>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    let out: Outcome<T> = Arc::new(Mutex::new(None));
    let job = Box::into_raw(Box::new(Job {
        f,
        out: out.clone(),
    }));
    // SAFETY: the trampoline matches lcore_function_t and takes back the box exactly once.
    let ret = unsafe {
        dpdk_sys::rte_eal_remote_launch(Some(trampoline::<F, T>), job as *mut c_void, lcore)
    };
    if ret < 0 {
        // SAFETY: the launch failed, so the job was not handed over; reclaim it.
        drop(unsafe { Box::from_raw(job) });
        check(&format!("launch on lcore {lcore}"), ret)?;
        return Err(DpdkError::invalid("launch", "unreachable"));
    }
    Ok(LcoreHandle { lcore, out })
}

/// The text of a panic payload (`&str` or `String`; others are named as such).
pub fn panic_message(p: &(dyn Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_owned()
    }
}

impl<T> LcoreHandle<T> {
    /// The lcore it runs on.
    pub fn lcore(&self) -> u32 {
        self.lcore
    }

    /// True once the closure has returned or panicked (without waiting). The control side
    /// polls this to notice a worker that died while it should still be running.
    pub fn is_finished(&self) -> bool {
        self.out.lock().unwrap_or_else(|e| e.into_inner()).is_some()
    }

    /// Waits for the closure to finish and returns its value.
    pub fn join(self) -> Result<T, JoinError> {
        // SAFETY: waits for the lcore we launched on.
        unsafe { dpdk_sys::rte_eal_wait_lcore(self.lcore) };
        let r = self.out.lock().unwrap_or_else(|e| e.into_inner()).take();
        match r {
            Some(Ok(v)) => Ok(v),
            Some(Err(p)) => Err(JoinError::Panicked {
                lcore: self.lcore,
                message: panic_message(p.as_ref()),
            }),
            None => Err(JoinError::Lost { lcore: self.lcore }),
        }
    }
}

/// The id of the lcore the calling thread runs on (`u32::MAX` for non-EAL threads).
pub fn current() -> u32 {
    // SAFETY: reads a per-thread variable.
    unsafe { dpdk_sys::shim_rte_lcore_id() }
}
