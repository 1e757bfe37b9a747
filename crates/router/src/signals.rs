//! Signals become flags the control loop polls: SIGINT/SIGTERM stop, SIGHUP reloads.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::error::RouterError;

/// Flags set by signal handlers.
#[derive(Clone, Debug)]
pub struct SignalFlags {
    pub stop: Arc<AtomicBool>,
    pub reload: Arc<AtomicBool>,
}

impl SignalFlags {
    /// Installs the handlers.
    pub fn install() -> Result<SignalFlags, RouterError> {
        let f = SignalFlags {
            stop: Arc::new(AtomicBool::new(false)),
            reload: Arc::new(AtomicBool::new(false)),
        };
        for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
            signal_hook::flag::register(sig, f.stop.clone()).map_err(RouterError::Signal)?;
        }
        signal_hook::flag::register(signal_hook::consts::SIGHUP, f.reload.clone())
            .map_err(RouterError::Signal)?;
        Ok(f)
    }

    /// True once SIGINT or SIGTERM arrived.
    pub fn stop_requested(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// True (once) after a SIGHUP.
    pub fn take_reload(&self) -> bool {
        self.reload.swap(false, Ordering::Relaxed)
    }
}
