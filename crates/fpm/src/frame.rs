//! FPM framing: a 4-byte header (version 1, type 1 = netlink, u16 total length including
//! the header, network byte order) before each block of netlink messages.
//!
//! [`FrameDecoder`] is a streaming decoder: bytes arrive in arbitrary chunks (TCP), whole
//! frames come out. A bad header is fatal for the stream: FPM has no sync marker, so after
//! a wrong version, type or length nothing later can be trusted and the session must be
//! closed. It never allocates per frame: the buffer is compacted when it is drained.

/// Bytes of the FPM header.
pub const HEADER_LEN: usize = 4;
/// The only FPM protocol version.
pub const VERSION: u8 = 1;
/// Message type: netlink.
pub const TYPE_NETLINK: u8 = 1;

/// Named offsets of the header fields.
mod off {
    pub const VERSION: usize = 0;
    pub const TYPE: usize = 1;
    pub const LEN: std::ops::Range<usize> = 2..4;
}

/// Why the stream cannot be decoded further (the session is closed).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    #[error("FPM header has version {0}, only version 1 exists")]
    BadVersion(u8),
    #[error("FPM header has message type {0}, only 1 (netlink) is understood")]
    BadType(u8),
    #[error("FPM header says the frame is {0} bytes, shorter than the 4-byte header")]
    ShortLength(u16),
}

impl FrameError {
    /// Metric label of this error.
    pub fn reason(&self) -> &'static str {
        match self {
            FrameError::BadVersion(_) => "bad_version",
            FrameError::BadType(_) => "bad_type",
            FrameError::ShortLength(_) => "short_length",
        }
    }
}

/// Reassembles FPM frames from a byte stream.
#[derive(Debug, Default)]
pub struct FrameDecoder {
    buf: Vec<u8>,
    /// Start of the first byte not yet consumed.
    start: usize,
    failed: Option<FrameError>,
}

impl FrameDecoder {
    pub fn new() -> FrameDecoder {
        FrameDecoder::default()
    }

    /// Appends bytes read from the stream.
    pub fn push(&mut self, bytes: &[u8]) {
        if self.start > 0 && self.start == self.buf.len() {
            self.buf.clear();
            self.start = 0;
        } else if self.start > 64 * 1024 {
            self.buf.drain(..self.start);
            self.start = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// The netlink payload of the next complete frame, `None` until one is complete.
    /// After an error every later call returns the same error.
    pub fn next_frame(&mut self) -> Result<Option<&[u8]>, FrameError> {
        if let Some(e) = self.failed {
            return Err(e);
        }
        let rest = &self.buf[self.start..];
        if rest.len() < HEADER_LEN {
            return Ok(None);
        }
        let len = u16::from_be_bytes([rest[off::LEN.start], rest[off::LEN.start + 1]]);
        let err = if rest[off::VERSION] != VERSION {
            Some(FrameError::BadVersion(rest[off::VERSION]))
        } else if rest[off::TYPE] != TYPE_NETLINK {
            Some(FrameError::BadType(rest[off::TYPE]))
        } else if (len as usize) < HEADER_LEN {
            Some(FrameError::ShortLength(len))
        } else {
            None
        };
        if let Some(e) = err {
            self.failed = Some(e);
            return Err(e);
        }
        if rest.len() < len as usize {
            return Ok(None);
        }
        let from = self.start + HEADER_LEN;
        self.start += len as usize;
        Ok(Some(&self.buf[from..self.start]))
    }

    /// Bytes received that do not make a whole frame yet (a connection closed with some
    /// left was cut mid-frame).
    pub fn pending(&self) -> usize {
        self.buf.len() - self.start
    }

    /// Whether the stream hit a framing error.
    pub fn failed(&self) -> bool {
        self.failed.is_some()
    }

    /// Forgets everything (a new connection).
    pub fn reset(&mut self) {
        *self = FrameDecoder::default();
    }
}

/// Wraps one netlink payload in an FPM header (for tests, the fuzzer and feeders).
///
/// # Panics
/// When the frame would be longer than 65535 bytes.
pub fn encode_frame(payload: &[u8], out: &mut Vec<u8>) {
    let len = u16::try_from(payload.len() + HEADER_LEN).expect("FPM frame over 64 KiB");
    out.extend_from_slice(&[VERSION, TYPE_NETLINK]);
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(payload);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(d: &mut FrameDecoder) -> Result<Vec<Vec<u8>>, FrameError> {
        let mut out = Vec::new();
        while let Some(f) = d.next_frame()? {
            out.push(f.to_vec());
        }
        Ok(out)
    }

    #[test]
    fn reassembles_frames_from_any_chunking() {
        let mut stream = Vec::new();
        encode_frame(b"abc", &mut stream);
        encode_frame(b"", &mut stream);
        encode_frame(&[7; 300], &mut stream);
        for chunk in 1..stream.len() {
            let mut d = FrameDecoder::new();
            let mut got = Vec::new();
            for c in stream.chunks(chunk) {
                d.push(c);
                got.extend(frames(&mut d).unwrap());
            }
            assert_eq!(
                got,
                vec![b"abc".to_vec(), vec![], vec![7; 300]],
                "chunk {chunk}"
            );
            assert_eq!(d.pending(), 0);
        }
    }

    #[test]
    fn bad_headers_are_fatal_and_sticky() {
        for (bytes, e) in [
            ([2u8, 1, 0, 8], FrameError::BadVersion(2)),
            ([1, 2, 0, 8], FrameError::BadType(2)),
            ([1, 1, 0, 3], FrameError::ShortLength(3)),
        ] {
            let mut d = FrameDecoder::new();
            d.push(&bytes);
            assert_eq!(d.next_frame(), Err(e));
            d.push(&[1, 1, 0, 4]);
            assert_eq!(d.next_frame(), Err(e));
        }
    }

    #[test]
    fn a_frame_longer_than_the_data_waits() {
        let mut d = FrameDecoder::new();
        d.push(&[1, 1, 0, 10, 1, 2]);
        assert_eq!(d.next_frame(), Ok(None));
        assert_eq!(d.pending(), 6);
    }
}
