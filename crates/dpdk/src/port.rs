//! Ethernet ports: configuration, queues, start/stop, MAC, link and statistics.

use std::ffi::CStr;

use crate::error::{check, DpdkError, Result};
use crate::mbuf::Burst;
use crate::mempool::Mempool;

/// How to set a port up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortConfig {
    pub rx_queues: u16,
    pub tx_queues: u16,
    pub rx_desc: u16,
    pub tx_desc: u16,
    /// L3 MTU to set; `None` leaves the PMD's default.
    pub mtu: Option<u16>,
    /// Receive frames for any destination MAC (virtual PMDs ignore it).
    pub promiscuous: bool,
}

impl Default for PortConfig {
    fn default() -> Self {
        PortConfig {
            rx_queues: 1,
            tx_queues: 1,
            rx_desc: 1024,
            tx_desc: 1024,
            mtu: None,
            promiscuous: true,
        }
    }
}

/// Link state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct LinkStatus {
    pub up: bool,
    pub speed_mbps: u32,
    pub full_duplex: bool,
}

/// The basic counters of `rte_eth_stats`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct PortStats {
    pub ipackets: u64,
    pub opackets: u64,
    pub ibytes: u64,
    pub obytes: u64,
    /// Packets dropped by the NIC because no RX descriptor was free.
    pub imissed: u64,
    pub ierrors: u64,
    pub oerrors: u64,
    /// RX mbuf allocation failures.
    pub rx_nombuf: u64,
}

/// A configured ethdev port. Stopped and closed on drop.
#[derive(Debug)]
pub struct Port {
    id: u16,
    cfg: PortConfig,
    started: bool,
}

impl Port {
    /// Configures port `id` with `cfg`, its RX queues drawing from `pool`. RSS over IP
    /// (and TCP/UDP ports where the device supports it) is enabled when there are several
    /// RX queues.
    pub fn configure(id: u16, cfg: &PortConfig, pool: &Mempool) -> Result<Port> {
        if cfg.rx_queues == 0 || cfg.tx_queues == 0 {
            return Err(DpdkError::invalid(
                "configure port",
                "need at least one rx and one tx queue",
            ));
        }
        // SAFETY: zeroed C structs are valid "default" values for these configs.
        let mut info: dpdk_sys::rte_eth_dev_info = unsafe { std::mem::zeroed() };
        // SAFETY: valid out pointer.
        check(&format!("port {id}: dev info"), unsafe {
            dpdk_sys::rte_eth_dev_info_get(id, &mut info)
        })?;
        if cfg.rx_queues > info.max_rx_queues || cfg.tx_queues > info.max_tx_queues {
            return Err(DpdkError::invalid(
                format!("configure port {id}"),
                format!(
                    "asked for {} rx / {} tx queues, the device has at most {} / {}",
                    cfg.rx_queues, cfg.tx_queues, info.max_rx_queues, info.max_tx_queues
                ),
            ));
        }
        // SAFETY: as above.
        let mut conf: dpdk_sys::rte_eth_conf = unsafe { std::mem::zeroed() };
        if cfg.rx_queues > 1 {
            // SAFETY: reading constants.
            let wanted = unsafe {
                dpdk_sys::shim_RTE_ETH_RSS_IP
                    | dpdk_sys::shim_RTE_ETH_RSS_TCP
                    | dpdk_sys::shim_RTE_ETH_RSS_UDP
            };
            let hf = wanted & info.flow_type_rss_offloads;
            if hf != 0 {
                conf.rxmode.mq_mode = dpdk_sys::RTE_ETH_MQ_RX_RSS;
                conf.rx_adv_conf.rss_conf.rss_hf = hf;
            }
        }
        // SAFETY: conf is a valid, initialised config.
        check(&format!("port {id}: configure"), unsafe {
            dpdk_sys::rte_eth_dev_configure(id, cfg.rx_queues, cfg.tx_queues, &conf)
        })?;
        let mut rx_desc = cfg.rx_desc;
        let mut tx_desc = cfg.tx_desc;
        // SAFETY: valid in/out pointers.
        check(&format!("port {id}: adjust descriptors"), unsafe {
            dpdk_sys::rte_eth_dev_adjust_nb_rx_tx_desc(id, &mut rx_desc, &mut tx_desc)
        })?;
        // SAFETY: reading the port's NUMA socket.
        let socket = unsafe { dpdk_sys::rte_eth_dev_socket_id(id) };
        let socket = if socket < 0 { 0 } else { socket as u32 };
        for q in 0..cfg.rx_queues {
            // SAFETY: NULL rx_conf means the PMD's defaults; the pool outlives the port
            // (the runtime drops ports before pools).
            check(&format!("port {id}: rx queue {q} setup"), unsafe {
                dpdk_sys::rte_eth_rx_queue_setup(
                    id,
                    q,
                    rx_desc,
                    socket,
                    std::ptr::null(),
                    pool.as_ptr(),
                )
            })?;
        }
        for q in 0..cfg.tx_queues {
            // SAFETY: NULL tx_conf means the PMD's defaults.
            check(&format!("port {id}: tx queue {q} setup"), unsafe {
                dpdk_sys::rte_eth_tx_queue_setup(id, q, tx_desc, socket, std::ptr::null())
            })?;
        }
        let mut port = Port {
            id,
            cfg: cfg.clone(),
            started: false,
        };
        if let Some(mtu) = cfg.mtu {
            // Virtual PMDs may not support it, which is not fatal.
            match port.set_mtu(mtu) {
                Err(e) if e.errno == libc::ENOTSUP => {}
                r => r?,
            }
        }
        Ok(port)
    }

    /// Sets the L3 MTU (`rte_eth_dev_set_mtu`). ENOTSUP: the PMD has no MTU; EINVAL: out
    /// of the range the device reports (af_packet reports a 1518-byte maximum frame
    /// whatever its interface's MTU).
    pub fn set_mtu(&mut self, mtu: u16) -> Result<()> {
        // SAFETY: plain call on a configured port.
        let ret = unsafe { dpdk_sys::rte_eth_dev_set_mtu(self.id, mtu) };
        check(&format!("port {}: set MTU {mtu}", self.id), ret)?;
        Ok(())
    }

    /// The port id.
    pub fn id(&self) -> u16 {
        self.id
    }

    /// The configuration it was set up with.
    pub fn config(&self) -> &PortConfig {
        &self.cfg
    }

    /// The device name (vdev name or PCI address).
    pub fn name(&self) -> String {
        let mut buf = [0 as std::os::raw::c_char; 64];
        // SAFETY: buffer of RTE_ETH_NAME_MAX_LEN bytes.
        let ret = unsafe { dpdk_sys::rte_eth_dev_get_name_by_port(self.id, buf.as_mut_ptr()) };
        if ret < 0 {
            return format!("port{}", self.id);
        }
        // SAFETY: DPDK wrote a NUL-terminated string.
        unsafe { CStr::from_ptr(buf.as_ptr()) }
            .to_string_lossy()
            .into_owned()
    }

    /// Starts the port (and enables promiscuous mode if configured).
    pub fn start(&mut self) -> Result<()> {
        // SAFETY: configured port.
        check(&format!("port {}: start", self.id), unsafe {
            dpdk_sys::rte_eth_dev_start(self.id)
        })?;
        self.started = true;
        if self.cfg.promiscuous {
            // SAFETY: started port; not all PMDs support it, which is fine.
            unsafe { dpdk_sys::rte_eth_promiscuous_enable(self.id) };
        }
        Ok(())
    }

    /// Stops the port (idempotent). Virtual PMDs flush their outputs here (net_pcap
    /// closes its dump file).
    pub fn stop(&mut self) -> Result<()> {
        if self.started {
            self.started = false;
            // SAFETY: started port; no lcore may poll it any more (the caller's duty).
            check(&format!("port {}: stop", self.id), unsafe {
                dpdk_sys::rte_eth_dev_stop(self.id)
            })?;
        }
        Ok(())
    }

    /// Sets the port's MAC address (before start).
    pub fn set_mac(&mut self, mac: [u8; 6]) -> Result<()> {
        let mut a = dpdk_sys::rte_ether_addr { addr_bytes: mac };
        // SAFETY: valid port and address struct.
        check(&format!("port {}: set MAC", self.id), unsafe {
            dpdk_sys::rte_eth_dev_default_mac_addr_set(self.id, &mut a)
        })?;
        Ok(())
    }

    /// The port's MAC address.
    pub fn mac(&self) -> [u8; 6] {
        // SAFETY: zeroed ether_addr is valid; out pointer valid.
        let mut a: dpdk_sys::rte_ether_addr = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        unsafe { dpdk_sys::rte_eth_macaddr_get(self.id, &mut a) };
        a.addr_bytes
    }

    /// Link state, without waiting.
    pub fn link(&self) -> LinkStatus {
        link(self.id)
    }

    /// Basic counters.
    pub fn stats(&self) -> Result<PortStats> {
        stats(self.id)
    }

    /// Extended counters: (name, value) pairs as the PMD names them.
    pub fn xstats(&self) -> Result<Vec<(String, u64)>> {
        // SAFETY: NULL/0 asks for the count.
        let n = check("xstats count", unsafe {
            dpdk_sys::rte_eth_xstats_get_names(self.id, std::ptr::null_mut(), 0)
        })? as usize;
        // SAFETY: zeroed name structs are valid.
        let mut names: Vec<dpdk_sys::rte_eth_xstat_name> = vec![unsafe { std::mem::zeroed() }; n];
        let mut vals: Vec<dpdk_sys::rte_eth_xstat> = vec![dpdk_sys::rte_eth_xstat::default(); n];
        // SAFETY: buffers of n entries.
        check("xstats names", unsafe {
            dpdk_sys::rte_eth_xstats_get_names(self.id, names.as_mut_ptr(), n as u32)
        })?;
        // SAFETY: buffer of n entries.
        let got = check("xstats values", unsafe {
            dpdk_sys::rte_eth_xstats_get(self.id, vals.as_mut_ptr(), n as u32)
        })? as usize;
        Ok(vals[..got.min(n)]
            .iter()
            .filter_map(|v| {
                let name = names.get(v.id as usize)?;
                // SAFETY: DPDK NUL-terminates names within the fixed buffer.
                let s = unsafe { CStr::from_ptr(name.name.as_ptr()) }
                    .to_string_lossy()
                    .into_owned();
                Some((s, v.value))
            })
            .collect())
    }

    /// Receives up to the free space of `burst` from RX queue `queue`; returns how many.
    ///
    /// Only one thread may poll a given (port, queue) at a time: the runtime assigns each
    /// queue to exactly one worker.
    #[inline]
    pub fn rx_burst(&self, queue: u16, burst: &mut Burst) -> usize {
        rx_burst(self.id, queue, burst)
    }
}

/// `rx_burst` by port id, for workers that hold no `Port` (ports are owned by the main
/// thread; workers get (port, queue) ids).
#[inline]
pub fn rx_burst(port: u16, queue: u16, burst: &mut Burst) -> usize {
    let (slots, free) = burst.raw_slots();
    // SAFETY: `slots` points at `free` writable pointer slots; rx_burst writes at most
    // `free` valid mbuf pointers that we then own.
    let n = unsafe { dpdk_sys::shim_rte_eth_rx_burst(port, queue, slots, free as u16) } as usize;
    // SAFETY: rx_burst initialised n slots.
    unsafe { burst.set_filled(n) };
    n
}

/// As [`rx_burst`], receiving at most `max` packets.
#[inline]
pub fn rx_burst_max(port: u16, queue: u16, burst: &mut Burst, max: usize) -> usize {
    let (slots, free) = burst.raw_slots();
    let want = free.min(max);
    // SAFETY: as in rx_burst, with at most `want` <= `free` slots written.
    let n = unsafe { dpdk_sys::shim_rte_eth_rx_burst(port, queue, slots, want as u16) } as usize;
    // SAFETY: rx_burst initialised n slots.
    unsafe { burst.set_filled(n) };
    n
}

/// Link state by port id, without waiting.
pub fn link(port: u16) -> LinkStatus {
    // SAFETY: zeroed struct is valid; out pointer valid.
    let mut l: dpdk_sys::rte_eth_link = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { dpdk_sys::rte_eth_link_get_nowait(port, &mut l) } < 0 {
        return LinkStatus::default();
    }
    LinkStatus {
        up: l.link_status() != 0,
        speed_mbps: l.link_speed,
        full_duplex: l.link_duplex() != 0,
    }
}

/// Basic counters by port id.
pub fn stats(port: u16) -> Result<PortStats> {
    let mut s = dpdk_sys::rte_eth_stats::default();
    // SAFETY: valid out pointer.
    check(&format!("port {port}: stats"), unsafe {
        dpdk_sys::rte_eth_stats_get(port, &mut s)
    })?;
    Ok(PortStats {
        ipackets: s.ipackets,
        opackets: s.opackets,
        ibytes: s.ibytes,
        obytes: s.obytes,
        imissed: s.imissed,
        ierrors: s.ierrors,
        oerrors: s.oerrors,
        rx_nombuf: s.rx_nombuf,
    })
}

impl Drop for Port {
    fn drop(&mut self) {
        let _ = self.stop();
        // SAFETY: stopped port, no queue in use any more.
        unsafe { dpdk_sys::rte_eth_dev_close(self.id) };
    }
}
