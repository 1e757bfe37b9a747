//! Adjacencies: an egress port plus the precomputed bytes that rewrite a packet for it.

/// Most labels one adjacency may push.
pub const MAX_PUSH: usize = 8;

/// Bytes of an Ethernet II header without VLAN tag.
const ETH_LEN: usize = 14;

/// The network-layer family an adjacency carries when it pushes no label: it picks the
/// ethertype of the template (0x0800 or 0x86DD), and a penultimate-hop pop towards it
/// must expose a header of that family (the first nibble is checked against it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Family {
    #[default]
    Ipv4,
    Ipv6,
}

impl Family {
    /// The ethertype of a packet of this family without labels.
    pub fn ethertype(self) -> u16 {
        match self {
            Family::Ipv4 => 0x0800,
            Family::Ipv6 => 0x86DD,
        }
    }

    /// The IP version nibble of this family.
    pub fn version(self) -> u8 {
        match self {
            Family::Ipv4 => 4,
            Family::Ipv6 => 6,
        }
    }
}

/// An egress port, a neighbor and the rewrite that reaches it.
///
/// The rewrite is precomputed as a header template: destination MAC, source MAC,
/// ethertype (0x8847 when labels are pushed, else 0x0800), then the pushed label stack
/// (outermost first) with TC = 0, TTL = 0 and the S bit clear on every label. The
/// pipeline copies the Ethernet part as is and writes each pushed label as one word with
/// its TC, TTL and S bit (which depends on whether labels remain below it).
///
/// Laid out so that what forwarding reads (the template's Ethernet header and first label,
/// port, label count, limit, whether the neighbor is resolved) fills the first cache line.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[repr(C, align(64))]
pub struct Adjacency {
    template: [u8; ETH_LEN + 4 * MAX_PUSH],
    /// Egress port id.
    pub port: u16,
    /// IP MTU of the egress link (payload bytes after the Ethernet header).
    pub mtu: u16,
    label_count: u8,
    /// [`Adjacency::limit`], rendered with the template from `dst_mac`, `mtu` and the
    /// labels (the constructors render it; a field set by hand would leave it stale).
    limit: u32,
    /// The neighbor's MAC address; `None` until ARP resolves it (packets go to the slow path).
    pub dst_mac: Option<[u8; 6]>,
    /// The egress port's MAC address.
    pub src_mac: [u8; 6],
    /// The neighbor's IPv4 address (for ARP and logs); zero for a neighbor known only by
    /// an IPv6 address.
    pub neighbor: [u8; 4],
    labels: [u32; MAX_PUSH],
    /// The neighbor's IPv6 address, when it is resolved by NDP instead of ARP.
    pub neighbor6: Option<[u8; 16]>,
    /// What the template's ethertype says when no label is pushed.
    pub payload: Family,
}

impl Adjacency {
    /// An adjacency pushing `labels` (outermost first, at most [`MAX_PUSH`], each < 2^20).
    ///
    /// # Panics
    /// When `labels` is longer than [`MAX_PUSH`] or a label does not fit in 20 bits: the
    /// config layer validates both before building tables.
    pub fn new(
        port: u16,
        mtu: u16,
        neighbor: [u8; 4],
        dst_mac: Option<[u8; 6]>,
        src_mac: [u8; 6],
        labels: &[u32],
    ) -> Adjacency {
        assert!(labels.len() <= MAX_PUSH, "too many labels to push");
        let mut adj = Adjacency {
            port,
            mtu,
            neighbor,
            dst_mac,
            src_mac,
            labels: [0; MAX_PUSH],
            label_count: labels.len() as u8,
            template: [0; ETH_LEN + 4 * MAX_PUSH],
            neighbor6: None,
            payload: Family::Ipv4,
            limit: 0,
        };
        for (i, &l) in labels.iter().enumerate() {
            assert!(l < (1 << 20), "label {l} does not fit in 20 bits");
            adj.labels[i] = l;
        }
        adj.render_template();
        adj
    }

    /// An adjacency to a neighbor known by its IPv6 address (resolved by NDP); it carries
    /// IPv6 when it pushes no label. Panics as [`Adjacency::new`] does.
    pub fn new_v6(
        port: u16,
        mtu: u16,
        neighbor: [u8; 16],
        dst_mac: Option<[u8; 6]>,
        src_mac: [u8; 6],
        labels: &[u32],
    ) -> Adjacency {
        let mut adj = Adjacency::new(port, mtu, [0; 4], dst_mac, src_mac, labels);
        adj.neighbor6 = Some(neighbor);
        adj.with_payload(Family::Ipv6)
    }

    /// The same adjacency carrying `family` when it pushes no label (an IPv4 neighbor
    /// that receives IPv6 after a penultimate-hop pop, say).
    pub fn with_payload(mut self, family: Family) -> Adjacency {
        self.payload = family;
        self.render_template();
        self
    }

    /// The same adjacency with the neighbor's MAC now known (ARP resolved it).
    pub fn with_dst_mac(&self, mac: [u8; 6]) -> Adjacency {
        let mut adj = self.clone();
        adj.dst_mac = Some(mac);
        adj.render_template();
        adj
    }

    fn render_template(&mut self) {
        let t = &mut self.template;
        t[0..6].copy_from_slice(&self.dst_mac.unwrap_or([0; 6]));
        t[6..12].copy_from_slice(&self.src_mac);
        let ethertype: u16 = if self.label_count > 0 {
            0x8847
        } else {
            self.payload.ethertype()
        };
        t[12..14].copy_from_slice(&ethertype.to_be_bytes());
        for i in 0..self.label_count as usize {
            let word = self.labels[i] << 12;
            t[ETH_LEN + 4 * i..ETH_LEN + 4 * i + 4].copy_from_slice(&word.to_be_bytes());
        }
        let push = 4 * u32::from(self.label_count);
        self.limit = match self.dst_mac {
            Some(_) if u32::from(self.mtu) >= push => u32::from(self.mtu) - push + 1,
            _ => 0,
        };
    }

    /// The labels this adjacency pushes, outermost first.
    #[inline]
    pub fn labels(&self) -> &[u32] {
        &self.labels[..self.label_count as usize]
    }

    /// Whether a datagram of `family` may leave through this adjacency: one that pushes
    /// labels takes any, one that pushes none only the family its ethertype names.
    #[inline]
    pub fn carries(&self, family: Family) -> bool {
        self.label_count > 0 || self.payload == family
    }

    /// Bytes of label stack this adjacency pushes.
    #[inline]
    pub fn push_bytes(&self) -> usize {
        4 * self.label_count as usize
    }

    /// The precomputed header: Ethernet header followed by the pushed labels (see the type
    /// docs for what the pipeline must still fill in).
    #[inline]
    pub fn header_template(&self) -> &[u8] {
        &self.template[..ETH_LEN + self.push_bytes()]
    }

    /// The Ethernet part of the template (a fixed size, so copying it is a few moves).
    #[inline]
    pub fn ethernet_template(&self) -> &[u8; ETH_LEN] {
        self.template[..ETH_LEN]
            .try_into()
            .expect("the template starts with an Ethernet header")
    }

    /// Whether packets can be sent (the neighbor's MAC is known).
    #[inline]
    pub fn is_resolved(&self) -> bool {
        self.dst_mac.is_some()
    }

    /// One more than the longest payload forwarded through here (below the labels pushed,
    /// within the MTU), 0 while unresolved: a payload of `n` bytes goes out when `n <
    /// limit`. [`Adjacency::is_resolved`], [`Adjacency::push_bytes`] and
    /// [`Adjacency::mtu`] in the one compare the fast paths make per packet.
    #[inline]
    pub fn limit(&self) -> usize {
        self.limit as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn template_holds_macs_ethertype_and_labels() {
        let a = Adjacency::new(
            1,
            1500,
            [10, 0, 0, 2],
            Some([2, 0, 0, 0, 0, 2]),
            [2, 0, 0, 0, 0, 1],
            &[100, 0xFFFFF],
        );
        let t = a.header_template();
        assert_eq!(t.len(), 22);
        assert_eq!(&t[0..6], &[2, 0, 0, 0, 0, 2]);
        assert_eq!(&t[6..12], &[2, 0, 0, 0, 0, 1]);
        assert_eq!(&t[12..14], &[0x88, 0x47]);
        assert_eq!(&t[14..18], &(100u32 << 12).to_be_bytes());
        assert_eq!(&t[18..22], &(0xFFFFFu32 << 12).to_be_bytes());
        assert_eq!(a.push_bytes(), 8);
    }

    #[test]
    fn plain_ipv4_adjacency_and_resolution() {
        let a = Adjacency::new(0, 1500, [10, 0, 0, 2], None, [2, 0, 0, 0, 0, 1], &[]);
        assert!(!a.is_resolved());
        assert_eq!(&a.header_template()[12..14], &[0x08, 0x00]);
        let r = a.with_dst_mac([9; 6]);
        assert!(r.is_resolved());
        assert_eq!(&r.header_template()[0..6], &[9; 6]);
    }

    #[test]
    fn the_first_cache_line_holds_what_forwarding_reads() {
        use core::mem::{offset_of, size_of};
        let end = |offset: usize, size: usize| offset + size;
        for (field, last) in [
            (
                "template",
                end(offset_of!(Adjacency, template), ETH_LEN + 4),
            ),
            ("port", end(offset_of!(Adjacency, port), 2)),
            ("label_count", end(offset_of!(Adjacency, label_count), 1)),
            ("limit", end(offset_of!(Adjacency, limit), 4)),
            (
                "dst_mac",
                end(offset_of!(Adjacency, dst_mac), size_of::<Option<[u8; 6]>>()),
            ),
        ] {
            assert!(last <= 64, "{field} ends at byte {last}");
        }
    }

    #[test]
    fn limit_is_one_past_the_longest_payload_and_zero_while_unresolved() {
        let mac = [2, 0, 0, 0, 0, 1];
        let plain = Adjacency::new(0, 1500, [10, 0, 0, 2], None, mac, &[]);
        assert_eq!(plain.limit(), 0, "unresolved: nothing goes out");
        assert_eq!(plain.with_dst_mac([9; 6]).limit(), 1501);
        let two = Adjacency::new(0, 1500, [10, 0, 0, 2], Some([9; 6]), mac, &[16, 17]);
        assert_eq!(two.limit(), 1500 - 8 + 1);
        // The labels alone overflow the MTU: not even an empty payload fits.
        assert_eq!(
            Adjacency::new(0, 3, [0; 4], Some([9; 6]), mac, &[16]).limit(),
            0
        );
        assert_eq!(
            Adjacency::new(0, 4, [0; 4], Some([9; 6]), mac, &[16]).limit(),
            1
        );
        assert_eq!(
            Adjacency::new(0, u16::MAX, [0; 4], Some([9; 6]), mac, &[]).limit(),
            65536
        );
    }

    #[test]
    fn ipv6_adjacency_template_and_payload() {
        let n = [0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2];
        let a = Adjacency::new_v6(0, 1500, n, Some([9; 6]), [1; 6], &[]);
        assert_eq!(&a.header_template()[12..14], &[0x86, 0xdd]);
        assert_eq!(a.neighbor6, Some(n));
        assert_eq!(a.payload.version(), 6);
        // With labels the ethertype is MPLS whatever the payload.
        let l = Adjacency::new_v6(0, 1500, n, Some([9; 6]), [1; 6], &[16]);
        assert_eq!(&l.header_template()[12..14], &[0x88, 0x47]);
        // An IPv4 neighbor receiving IPv6 (PHP) differs from the IPv4 one.
        let v4 = Adjacency::new(0, 1500, [10, 0, 0, 2], None, [1; 6], &[]);
        let v6 = v4.clone().with_payload(Family::Ipv6);
        assert_ne!(v4, v6);
        assert_eq!(&v6.header_template()[12..14], &[0x86, 0xdd]);
        assert_eq!(
            &v6.with_dst_mac([3; 6]).header_template()[12..14],
            &[0x86, 0xdd]
        );
    }
}
