//! The RFC 4884 extension structure and its RFC 4950 MPLS label stack object, shared by
//! ICMPv4 ([`super::icmp`]) and ICMPv6 ([`super::icmpv6`]) error messages.
//!
//! Both families append the same structure after the original datagram, padded to 128
//! bytes; they differ only in the unit of the length field that tells where it starts
//! (32-bit words in ICMPv4, 64-bit words in ICMPv6), which the callers convert to bytes.

use super::{be16, checksum, put16, Result, WireError};

/// RFC 4884: with an extension, the original datagram field is padded to this length.
pub const ORIGINAL_LEN_WITH_EXTENSION: usize = 128;
/// RFC 4884 extension structure version.
pub const EXTENSION_VERSION: u8 = 2;
/// RFC 4950: MPLS label stack object class and C-type.
pub const CLASS_MPLS_STACK: u8 = 1;
pub const CTYPE_INCOMING_STACK: u8 = 1;
pub(crate) const EXT_HEADER_LEN: usize = 4;
pub(crate) const OBJ_HEADER_LEN: usize = 4;

/// Length of the original datagram field when an extension follows: the quote padded to
/// 128 bytes and to a multiple of `unit` (4 for ICMPv4, 8 for ICMPv6).
pub fn padded_original_len(quote: usize, unit: usize) -> usize {
    quote
        .max(ORIGINAL_LEN_WITH_EXTENSION)
        .next_multiple_of(unit)
}

/// Bytes of an extension structure holding one label stack object of `stack` bytes.
pub fn extension_len(stack: &[u8]) -> usize {
    EXT_HEADER_LEN + OBJ_HEADER_LEN + stack.len()
}

/// Bytes of a message of the 8-byte header (`header`), `original` and, with `stack`, the
/// padding to [`padded_original_len`] and the extension.
pub fn message_len(header: usize, original: usize, stack: Option<&[u8]>, unit: usize) -> usize {
    match stack {
        None => header + original,
        Some(s) => header + padded_original_len(original, unit) + extension_len(s),
    }
}

/// Writes `original` at the start of `body` (the message after its header, sized by
/// [`message_len`]) and, with `stack`, the extension after the padded original. Returns
/// the RFC 4884 length of the original datagram field in units of `unit` bytes (0: no
/// extension), which the caller stores in its header.
pub fn emit_body(
    body: &mut [u8],
    original: &[u8],
    stack: Option<&[u8]>,
    unit: usize,
) -> Result<u8> {
    body[..original.len()].copy_from_slice(original);
    let Some(stack) = stack else { return Ok(0) };
    let orig = padded_original_len(original.len(), unit);
    let units = u8::try_from(orig / unit)
        .map_err(|_| WireError::Malformed("original datagram too long"))?;
    emit_mpls_extension(&mut body[orig..], stack)?;
    Ok(units)
}

/// The type-specific word of an echo request or reply: identifier, then sequence number.
pub fn echo_word(ident: u16, seq: u16) -> [u8; 4] {
    let (i, s) = (ident.to_be_bytes(), seq.to_be_bytes());
    [i[0], i[1], s[0], s[1]]
}

/// Writes the extension header and the RFC 4950 object (raw label stack entries) at the
/// start of `ext`, which must be exactly [`extension_len`] bytes, with its checksum.
pub fn emit_mpls_extension(ext: &mut [u8], stack: &[u8]) -> Result<()> {
    if !stack.len().is_multiple_of(4) || stack.len() + OBJ_HEADER_LEN > u16::MAX as usize {
        return Err(WireError::Malformed("label stack object length"));
    }
    if ext.len() != extension_len(stack) {
        return Err(WireError::Truncated);
    }
    ext.fill(0);
    ext[0] = EXTENSION_VERSION << 4;
    put16(ext, 4, (OBJ_HEADER_LEN + stack.len()) as u16);
    ext[6] = CLASS_MPLS_STACK;
    ext[7] = CTYPE_INCOMING_STACK;
    ext[8..].copy_from_slice(stack);
    let c = checksum::compute(ext);
    put16(ext, 2, c);
    Ok(())
}

/// Splits an error message's data into the original datagram (`original_len` bytes; 0:
/// no extension, all of `data`) and the RFC 4950 label stack, if the extension has one.
/// A nonzero extension checksum must verify.
pub fn parse_extension(data: &[u8], original_len: usize) -> Result<(&[u8], Option<&[u8]>)> {
    if original_len == 0 {
        return Ok((data, None));
    }
    let (original, ext) = data
        .split_at_checked(original_len)
        .ok_or(WireError::Truncated)?;
    if ext.len() < EXT_HEADER_LEN || ext[0] >> 4 != EXTENSION_VERSION {
        return Err(WireError::Malformed("RFC 4884 extension header"));
    }
    if be16(ext, 2) != 0 && checksum::sum(ext) != 0xffff {
        return Err(WireError::Checksum);
    }
    let mut objs = &ext[EXT_HEADER_LEN..];
    while objs.len() >= OBJ_HEADER_LEN {
        let l = be16(objs, 0) as usize;
        if l < OBJ_HEADER_LEN || l > objs.len() {
            return Err(WireError::Malformed("RFC 4884 object length"));
        }
        if objs[2] == CLASS_MPLS_STACK && objs[3] == CTYPE_INCOMING_STACK {
            // Whole 4-byte entries only (RFC 4950 §7): what parses must re-emit.
            if !(l - OBJ_HEADER_LEN).is_multiple_of(4) {
                return Err(WireError::Malformed(
                    "RFC 4950 object is not whole label entries",
                ));
            }
            return Ok((original, Some(&objs[OBJ_HEADER_LEN..l])));
        }
        objs = &objs[l..];
    }
    Ok((original, None))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_stack_object_round_trips_and_partial_entries_are_refused() {
        let stack = [0x00, 0x06, 0x41, 0x01];
        let mut data = [0u8; 8 + 12];
        emit_mpls_extension(&mut data[8..], &stack).unwrap();
        assert_eq!(
            parse_extension(&data, 8),
            Ok((&data[..8], Some(&stack[..])))
        );
        // Found by the wire6 fuzz target: a 6-byte object parsed, then could not be emitted.
        data[8 + 4..8 + 6].copy_from_slice(&6u16.to_be_bytes());
        data[8 + 2..8 + 4].fill(0);
        let c = checksum::compute(&data[8..]);
        data[8 + 2..8 + 4].copy_from_slice(&c.to_be_bytes());
        assert!(matches!(
            parse_extension(&data, 8),
            Err(WireError::Malformed(_))
        ));
    }
}
