//! MPLS label stack entries (RFC 3032) and a depth-limited stack walker.

use super::{Result, WireError};

/// IPv4 explicit null (RFC 3032, RFC 4182: valid at any depth).
pub const LABEL_IPV4_EXPLICIT_NULL: u32 = 0;
/// Router alert: deliver to the control plane.
pub const LABEL_ROUTER_ALERT: u32 = 1;
/// IPv6 explicit null.
pub const LABEL_IPV6_EXPLICIT_NULL: u32 = 2;
/// Implicit null: signalled only, never on the wire.
pub const LABEL_IMPLICIT_NULL: u32 = 3;
/// Entropy label indicator (RFC 6790): the next entry is an entropy label.
pub const LABEL_ELI: u32 = 7;
/// Labels below this are reserved.
pub const FIRST_UNRESERVED_LABEL: u32 = 16;
/// Default limit on the number of entries the router will walk.
pub const DEFAULT_MAX_DEPTH: usize = 16;
/// Bytes per label stack entry.
pub const ENTRY_LEN: usize = 4;
/// The bottom-of-stack (S) bit of an entry read as a word.
pub const BOS_BIT: u32 = 1 << 8;
/// Position of the traffic class in an entry read as a word.
pub const TC_SHIFT: u32 = 9;
/// The traffic class bits of an entry read as a word.
pub const TC_MASK: u32 = 7 << TC_SHIFT;

/// Byte positions within one label stack entry (the label and TC share bytes, so those
/// are read as a word).
pub mod field {
    /// The byte whose lowest bit is S (bottom of stack).
    pub const S_BYTE: usize = 2;
    pub const TTL: usize = 3;
}

/// One 32-bit label stack entry: label (20), TC (3), S (1), TTL (8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LabelStackEntry(pub u32);

impl LabelStackEntry {
    /// An entry; `label` is truncated to 20 bits and `tc` to 3.
    #[inline]
    pub fn new(label: u32, tc: u8, bos: bool, ttl: u8) -> Self {
        LabelStackEntry(
            (label & 0xfffff) << 12 | ((tc as u32 & 7) << 9) | ((bos as u32) << 8) | ttl as u32,
        )
    }

    /// Reads an entry from the first four bytes of `b`.
    #[inline]
    pub fn read(b: &[u8]) -> Result<Self> {
        match b.get(..ENTRY_LEN) {
            Some(w) => Ok(LabelStackEntry(u32::from_be_bytes([
                w[0], w[1], w[2], w[3],
            ]))),
            None => Err(WireError::Truncated),
        }
    }

    /// Writes the entry into the first four bytes of `b`.
    #[inline]
    pub fn write(self, b: &mut [u8]) -> Result<()> {
        match b.get_mut(..ENTRY_LEN) {
            Some(w) => {
                w.copy_from_slice(&self.0.to_be_bytes());
                Ok(())
            }
            None => Err(WireError::Truncated),
        }
    }

    #[inline]
    pub fn label(self) -> u32 {
        self.0 >> 12
    }
    #[inline]
    pub fn tc(self) -> u8 {
        ((self.0 >> 9) & 7) as u8
    }
    /// Bottom of stack.
    #[inline]
    pub fn bos(self) -> bool {
        self.0 & 0x100 != 0
    }
    #[inline]
    pub fn ttl(self) -> u8 {
        self.0 as u8
    }
    #[inline]
    pub fn with_ttl(self, ttl: u8) -> Self {
        LabelStackEntry((self.0 & !0xff) | ttl as u32)
    }
    #[inline]
    pub fn with_bos(self, bos: bool) -> Self {
        LabelStackEntry((self.0 & !0x100) | ((bos as u32) << 8))
    }
    #[inline]
    pub fn with_tc(self, tc: u8) -> Self {
        LabelStackEntry((self.0 & !0xe00) | ((tc as u32 & 7) << 9))
    }
}

/// Whether `label` is one of the reserved values 0..=15.
#[inline]
pub fn is_reserved(label: u32) -> bool {
    label < FIRST_UNRESERVED_LABEL
}

/// A checked view of a whole label stack: every entry up to and including the one with
/// the S bit, at most `max_depth` of them.
#[derive(Debug, Clone, Copy)]
pub struct LabelStack<'a> {
    bytes: &'a [u8],
    depth: usize,
}

impl<'a> LabelStack<'a> {
    /// Walks `buf` (starting at the top entry) to the bottom of stack.
    pub fn new_checked(buf: &'a [u8], max_depth: usize) -> Result<Self> {
        // Only the S bit of each entry is read here: this runs for every labelled packet.
        let mut end = 0;
        for _ in 0..max_depth {
            if buf.len() < end + ENTRY_LEN {
                return Err(WireError::Truncated);
            }
            end += ENTRY_LEN;
            if buf[end - 2] & 1 != 0 {
                return Ok(LabelStack {
                    bytes: &buf[..end],
                    depth: end / ENTRY_LEN,
                });
            }
        }
        Err(WireError::TooDeep(max_depth))
    }

    /// Number of entries.
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// Bytes of the stack (the payload starts right after them).
    pub fn len(&self) -> usize {
        self.depth * ENTRY_LEN
    }

    /// Never true: a checked stack holds at least one entry.
    pub fn is_empty(&self) -> bool {
        self.depth == 0
    }

    /// The `i`-th entry from the top.
    pub fn get(&self, i: usize) -> Option<LabelStackEntry> {
        let w = self.bytes.get(i * ENTRY_LEN..(i + 1) * ENTRY_LEN)?;
        Some(LabelStackEntry(u32::from_be_bytes([
            w[0], w[1], w[2], w[3],
        ])))
    }

    /// Entries from the top down.
    pub fn iter(&self) -> impl Iterator<Item = LabelStackEntry> + 'a {
        self.bytes
            .chunks_exact(ENTRY_LEN)
            .map(|w| LabelStackEntry(u32::from_be_bytes([w[0], w[1], w[2], w[3]])))
    }

    /// The raw bytes of the stack.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_fields() {
        let e = LabelStackEntry::new(0xabcde, 5, true, 64);
        let mut b = [0u8; 4];
        e.write(&mut b).unwrap();
        assert_eq!(b, [0xab, 0xcd, 0xeb, 0x40]);
        let r = LabelStackEntry::read(&b).unwrap();
        assert_eq!(
            (r.label(), r.tc(), r.bos(), r.ttl()),
            (0xabcde, 5, true, 64)
        );
        let r = r.with_ttl(1).with_bos(false).with_tc(2);
        assert_eq!(
            (r.label(), r.tc(), r.bos(), r.ttl()),
            (0xabcde, 2, false, 1)
        );
    }

    #[test]
    fn walker_stops_at_bos_and_limits_depth() {
        let mut b = Vec::new();
        for (i, l) in [100u32, 200, 300].iter().enumerate() {
            b.extend_from_slice(&LabelStackEntry::new(*l, 0, i == 2, 9).0.to_be_bytes());
        }
        b.extend_from_slice(&[0x45, 0]);
        let s = LabelStack::new_checked(&b, 16).unwrap();
        assert_eq!(s.depth(), 3);
        assert_eq!(s.len(), 12);
        assert_eq!(
            s.iter().map(|e| e.label()).collect::<Vec<_>>(),
            [100, 200, 300]
        );
        assert_eq!(s.get(1).unwrap().label(), 200);
        assert_eq!(s.get(3), None);
        assert_eq!(
            LabelStack::new_checked(&b, 2).unwrap_err(),
            WireError::TooDeep(2)
        );
        assert_eq!(
            LabelStack::new_checked(&b[..10], 16).unwrap_err(),
            WireError::Truncated
        );
    }
}
