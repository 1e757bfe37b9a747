//! The Environment Abstraction Layer: initialised once per process.
//!
//! The EAL keeps per-process runtime files in a directory named after `--file-prefix`
//! (`/var/run/dpdk/<prefix>` as root), and on hugepages one file per page in hugetlbfs
//! (`<prefix>map_<n>`; none with `--huge-unlink`). A primary process removes both when the
//! [`Eal`] is dropped, so runs with a per-process prefix leave neither behind: a
//! hugepage file holds its page until it is deleted.
//! A failed init removes the directory when it created it. A failed init that DPDK
//! reports without a reason (`rte_errno` 0) is diagnosed here:
//! the usual cause is another primary process holding the prefix's config lock.

use std::ffi::CString;
use std::os::raw::c_char;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::error::{DpdkError, Result};

static INITIALISED: AtomicBool = AtomicBool::new(false);

/// The initialised EAL. Dropping it calls `rte_eal_cleanup`; DPDK cannot be initialised
/// again in the same process afterwards.
#[derive(Debug)]
pub struct Eal {
    /// The `--file-prefix`, and where its hugepage files may be (removed on drop).
    prefix: String,
    huge_dirs: Vec<std::path::PathBuf>,
}

impl Eal {
    /// Initialises the EAL with `args` (the program name first, as in `argv`).
    ///
    /// Fails when called a second time in the same process, or when the EAL rejects the
    /// arguments (the error carries DPDK's reason, e.g. no hugepages or an unknown vdev).
    pub fn init<S: AsRef<str>>(args: &[S]) -> Result<Eal> {
        if INITIALISED.swap(true, Ordering::SeqCst) {
            return Err(DpdkError::invalid(
                "rte_eal_init",
                "the EAL is already initialised in this process",
            ));
        }
        let cargs: Vec<CString> = args
            .iter()
            .map(|a| CString::new(a.as_ref()))
            .collect::<std::result::Result<_, _>>()
            .map_err(|_| DpdkError::invalid("rte_eal_init", "argument contains a NUL byte"))?;
        // rte_eal_init may permute argv; keep the CStrings alive and pass copies of the
        // pointers. The EAL keeps pointers into argv (e.g. the program name) for the
        // process lifetime, so the strings are leaked on success.
        let prefix = crate::prefix::file_prefix(args);
        let run_dir = crate::prefix::runtime_dir(&prefix);
        let run_dir_existed = run_dir.exists();
        let mut argv: Vec<*mut c_char> = cargs.iter().map(|c| c.as_ptr() as *mut c_char).collect();
        argv.push(std::ptr::null_mut());
        // SAFETY: argv is a NULL-terminated array of valid NUL-terminated strings that
        // outlive the call (and, on success, the process, see below).
        let ret = unsafe { dpdk_sys::rte_eal_init((argv.len() - 1) as i32, argv.as_mut_ptr()) };
        if ret < 0 {
            INITIALISED.store(false, Ordering::SeqCst);
            let e = DpdkError::last("rte_eal_init");
            let e = if e.errno == 0 {
                crate::prefix::diagnose_silent_failure(args)
            } else {
                e
            };
            if !run_dir_existed {
                // Created by this failed init (e.g. an unknown vdev): nobody else uses it.
                let _ = std::fs::remove_dir_all(&run_dir);
            }
            return Err(e);
        }
        std::mem::forget(cargs);
        std::mem::forget(argv);
        let mounts = std::fs::read_to_string("/proc/mounts").unwrap_or_default();
        let huge_dirs = crate::prefix::hugepage_dirs(args, &mounts);
        Ok(Eal { prefix, huge_dirs })
    }

    /// Number of lcores enabled by `-l`/`--lcores`, the main lcore included.
    pub fn lcore_count(&self) -> u32 {
        // SAFETY: reads EAL configuration after init.
        unsafe { dpdk_sys::rte_lcore_count() }
    }

    /// The main lcore's id.
    pub fn main_lcore(&self) -> u32 {
        // SAFETY: reads EAL configuration after init.
        unsafe { dpdk_sys::rte_get_main_lcore() }
    }

    /// Ids of the enabled worker lcores (all enabled lcores but the main one).
    pub fn worker_lcores(&self) -> Vec<u32> {
        let mut out = Vec::new();
        let mut i: u32 = u32::MAX;
        loop {
            // SAFETY: iterates the EAL's lcore table; -1 (u32::MAX) starts the walk.
            i = unsafe { dpdk_sys::rte_get_next_lcore(i, 1, 0) };
            if i >= dpdk_sys::RTE_MAX_LCORE {
                break;
            }
            out.push(i);
        }
        out
    }

    /// Number of ethdev ports the EAL probed (vdevs and bound PCI devices).
    pub fn port_count(&self) -> u16 {
        // SAFETY: reads ethdev state after init.
        unsafe { dpdk_sys::rte_eth_dev_count_avail() }
    }

    /// The port id of the ethdev named `name` (e.g. a vdev "net_pcap0" or a PCI address).
    pub fn port_by_name(&self, name: &str) -> Result<u16> {
        let c = CString::new(name)
            .map_err(|_| DpdkError::invalid("rte_eth_dev_get_port_by_name", "NUL in name"))?;
        let mut id: u16 = 0;
        // SAFETY: c is a valid C string, id a valid out pointer.
        let ret = unsafe { dpdk_sys::rte_eth_dev_get_port_by_name(c.as_ptr(), &mut id) };
        crate::error::check(&format!("find port {name:?}"), ret)?;
        Ok(id)
    }
}

impl Drop for Eal {
    fn drop(&mut self) {
        // SAFETY: reads EAL state after init.
        let primary = unsafe { dpdk_sys::rte_eal_process_type() } == dpdk_sys::RTE_PROC_PRIMARY;
        // SAFETY: returns a pointer to the EAL's NUL-terminated runtime dir path; copied at once.
        let dir = unsafe { std::ffi::CStr::from_ptr(dpdk_sys::rte_eal_get_runtime_dir()) }
            .to_string_lossy()
            .into_owned();
        // SAFETY: all ports and lcores are stopped by their owners before the Eal is
        // dropped (the runtime owns the Eal last); cleanup unmaps the EAL's memory (its
        // hugepage files stay: removed below).
        unsafe {
            dpdk_sys::rte_eal_cleanup();
        }
        if primary && !dir.is_empty() {
            // Secondary processes cannot outlive a useful primary anyway; without this,
            // every run with a fresh prefix leaves a directory behind, and (without
            // --huge-unlink) its hugepages allocated. A secondary still attached keeps
            // its mappings: the pages go back when it unmaps them.
            let _ = std::fs::remove_dir_all(&dir);
            let (_, failed) = crate::prefix::remove_hugepage_files(&self.prefix, &self.huge_dirs);
            for f in failed {
                eprintln!(
                    "dpdk: could not remove hugepage file {} (it holds a hugepage until \
                     deleted)",
                    f.display()
                );
            }
        }
    }
}
