//! Stage: parse (and a pure helper for plan). `GIT binary patch` sections: base85 lines,
//! zlib data, literal and delta payloads; [`apply`] rebuilds the new content from a base.
//!
//! Pure and bounded: every size and offset read from the input is checked, nothing panics on
//! hostile data, and inflating stops at the size the header declares.

use std::io::{Read, Write};

use flate2::read::ZlibDecoder;
use flate2::write::ZlibEncoder;

use crate::model::{BinaryData, BinaryKind, BinaryPatch};
use crate::parse::unified::lines::{with_hint, Cursor, RawLine};
use crate::parse::ParseError;

/// git's base85 alphabet.
const ALPHABET: &[u8; 85] =
    b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~";

/// Largest payload a binary patch may declare (1 GiB): beyond it the patch is refused rather
/// than inflated.
const MAX_SIZE: u64 = 1 << 30;

fn digit(c: u8) -> Option<u32> {
    ALPHABET.iter().position(|&a| a == c).map(|p| p as u32)
}

/// grammar: git_binary_patch
///
/// `GIT binary patch`, the forward section, and optionally the reverse one.
pub fn git_binary_patch(cur: &mut Cursor<'_>) -> Result<BinaryPatch, ParseError> {
    let Some(first) = cur.next_line().filter(|l| l.body() == b"GIT binary patch") else {
        return Err(cur.error_at_end("expected 'GIT binary patch'"));
    };
    let forward = binary_section(cur)?.ok_or_else(|| {
        let err = match cur.peek() {
            Some(l) => l.error("expected 'literal SIZE' or 'delta SIZE'"),
            None => cur.error_at_end("expected 'literal SIZE' or 'delta SIZE'"),
        };
        with_hint(
            err,
            format!("the binary patch starts at line {}", first.number),
        )
    })?;
    let reverse = binary_section(cur)?;
    Ok(BinaryPatch { forward, reverse })
}

/// grammar: binary_section
///
/// `literal SIZE` or `delta SIZE`, base85 lines, then an empty line (or the end of input).
/// None when the cursor is not at a section header.
fn binary_section(cur: &mut Cursor<'_>) -> Result<Option<BinaryData>, ParseError> {
    let Some(head) = cur.peek() else {
        return Ok(None);
    };
    let (kind, size_text) = if let Some(s) = head.body().strip_prefix(b"literal ") {
        (BinaryKind::Literal, s)
    } else if let Some(s) = head.body().strip_prefix(b"delta ") {
        (BinaryKind::Delta, s)
    } else {
        return Ok(None);
    };
    let size = std::str::from_utf8(size_text)
        .ok()
        .filter(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|s| s.parse::<u64>().ok())
        .filter(|&s| s <= MAX_SIZE)
        .ok_or_else(|| {
            head.error_at(
                head.body().len() - size_text.len(),
                "expected a size up to 1 GiB",
            )
        })?;
    cur.pos += 1;
    let mut deflated = Vec::new();
    while let Some(line) = cur.peek() {
        cur.pos += 1;
        if line.body().is_empty() {
            break;
        }
        base85_line(line, &mut deflated)?;
    }
    let data = inflate(&deflated, size).map_err(|m| head.error(m))?;
    Ok(Some(BinaryData { kind, size, data }))
}

/// grammar: base85_line
///
/// A length character (`A`–`Z`: 1–26 bytes, `a`–`z`: 27–52) then base85 groups of five.
fn base85_line(line: RawLine<'_>, out: &mut Vec<u8>) -> Result<(), ParseError> {
    let body = line.body();
    let len = match body.first() {
        Some(&c @ b'A'..=b'Z') => usize::from(c - b'A') + 1,
        Some(&c @ b'a'..=b'z') => usize::from(c - b'a') + 27,
        _ => return Err(line.error("expected a base85 line starting with a length letter")),
    };
    let groups = &body[1..];
    if groups.len() != len.div_ceil(4) * 5 {
        return Err(line.error(format!(
            "base85 line has {} characters, its length letter says {}",
            groups.len(),
            len.div_ceil(4) * 5
        )));
    }
    let mut decoded = Vec::with_capacity(groups.len() / 5 * 4);
    for (g, chunk) in groups.chunks(5).enumerate() {
        let mut acc: u32 = 0;
        for (k, &c) in chunk.iter().enumerate() {
            let d =
                digit(c).ok_or_else(|| line.error_at(1 + g * 5 + k, "not a base85 character"))?;
            acc = acc
                .checked_mul(85)
                .and_then(|a| a.checked_add(d))
                .ok_or_else(|| line.error_at(1 + g * 5, "base85 group out of range"))?;
        }
        decoded.extend_from_slice(&acc.to_be_bytes());
    }
    decoded.truncate(len);
    out.extend_from_slice(&decoded);
    Ok(())
}

/// Inflate zlib `data`, which must give exactly `size` bytes.
fn inflate(data: &[u8], size: u64) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    ZlibDecoder::new(data)
        .take(size + 1)
        .read_to_end(&mut out)
        .map_err(|e| format!("binary patch data does not inflate: {e}"))?;
    if out.len() as u64 != size {
        return Err(format!(
            "binary patch data inflates to {}{} bytes, its header says {size}",
            out.len(),
            if out.len() as u64 > size {
                " or more"
            } else {
                ""
            }
        ));
    }
    Ok(out)
}

/// The new content: `data` itself when literal, else the git delta applied to `base`.
///
/// ```
/// use apply_patch::model::{BinaryData, BinaryKind};
/// use apply_patch::parse::binary::apply;
/// // source size 3, target size 5, copy 3 bytes from offset 0, insert "!!"
/// let delta = vec![3, 5, 0x90, 3, 2, b'!', b'!'];
/// let data = BinaryData { kind: BinaryKind::Delta, size: delta.len() as u64, data: delta };
/// assert_eq!(apply(b"abc", &data).unwrap(), b"abc!!");
/// ```
pub fn apply(base: &[u8], data: &BinaryData) -> Result<Vec<u8>, String> {
    match data.kind {
        BinaryKind::Literal => Ok(data.data.clone()),
        BinaryKind::Delta => apply_delta(base, &data.data),
    }
}

/// A little-endian base-128 size of a delta header.
fn varint(d: &[u8], pos: &mut usize) -> Result<u64, String> {
    let mut value: u64 = 0;
    let mut shift = 0;
    loop {
        let b = *d.get(*pos).ok_or("delta ends inside its header")?;
        *pos += 1;
        if shift > 63 {
            return Err("delta header size too large".into());
        }
        value |= u64::from(b & 0x7f) << shift;
        shift += 7;
        if b & 0x80 == 0 {
            return Ok(value);
        }
    }
}

fn apply_delta(base: &[u8], d: &[u8]) -> Result<Vec<u8>, String> {
    let mut pos = 0;
    let source = varint(d, &mut pos)?;
    let target = varint(d, &mut pos)?;
    if source != base.len() as u64 {
        return Err(format!(
            "delta expects a {source}-byte base, the file has {} bytes",
            base.len()
        ));
    }
    if target > MAX_SIZE {
        return Err("delta target larger than 1 GiB".into());
    }
    // The header's size is not trusted for the allocation: the output grows as it is built.
    let mut out = Vec::with_capacity((target as usize).min(base.len() + d.len()));
    while pos < d.len() {
        let op = d[pos];
        pos += 1;
        if op & 0x80 != 0 {
            let (offset, size) = copy_args(op, d, &mut pos)?;
            let end = offset
                .checked_add(size)
                .filter(|&e| e <= base.len())
                .ok_or("delta copies past the end of the base")?;
            out.extend_from_slice(&base[offset..end]);
        } else if op != 0 {
            let n = usize::from(op);
            let bytes = d.get(pos..pos + n).ok_or("delta ends inside an insert")?;
            out.extend_from_slice(bytes);
            pos += n;
        } else {
            return Err("delta holds the reserved opcode 0".into());
        }
        if out.len() as u64 > target {
            return Err("delta writes more than its target size".into());
        }
    }
    if out.len() as u64 != target {
        return Err(format!(
            "delta gives {} bytes, its header says {target}",
            out.len()
        ));
    }
    Ok(out)
}

/// Offset (bits 0–3 of `op`) and size (bits 4–6; 0 means 0x10000) of a copy opcode.
fn copy_args(op: u8, d: &[u8], pos: &mut usize) -> Result<(usize, usize), String> {
    let mut read = |bits: std::ops::Range<u8>| -> Result<usize, String> {
        let mut v = 0usize;
        for (k, bit) in bits.enumerate() {
            if op & (1 << bit) != 0 {
                let b = *d.get(*pos).ok_or("delta ends inside a copy")?;
                *pos += 1;
                v |= usize::from(b) << (8 * k);
            }
        }
        Ok(v)
    };
    let offset = read(0..4)?;
    let size = match read(4..7)? {
        0 => 0x10000,
        s => s,
    };
    Ok((offset, size))
}

/// `GIT binary patch` text for `patch` (zlib + base85, lines of up to 52 bytes).
pub fn encode(patch: &BinaryPatch) -> String {
    let mut out = String::from("GIT binary patch\n");
    encode_section(&patch.forward, &mut out);
    if let Some(rev) = &patch.reverse {
        encode_section(rev, &mut out);
    }
    out
}

fn encode_section(data: &BinaryData, out: &mut String) {
    let kind = match data.kind {
        BinaryKind::Literal => "literal",
        BinaryKind::Delta => "delta",
    };
    out.push_str(&format!("{kind} {}\n", data.data.len()));
    let mut z = ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    // Writing to a Vec cannot fail.
    let deflated = z
        .write_all(&data.data)
        .and_then(|_| z.finish())
        .unwrap_or_default();
    for chunk in deflated.chunks(52) {
        let letter = if chunk.len() <= 26 {
            b'A' + chunk.len() as u8 - 1
        } else {
            b'a' + chunk.len() as u8 - 27
        };
        out.push(letter as char);
        for group in chunk.chunks(4) {
            let mut word = [0u8; 4];
            word[..group.len()].copy_from_slice(group);
            let mut v = u32::from_be_bytes(word);
            let mut digits = [0u8; 5];
            for d in digits.iter_mut().rev() {
                *d = ALPHABET[(v % 85) as usize];
                v /= 85;
            }
            out.push_str(std::str::from_utf8(&digits).unwrap_or_default());
        }
        out.push('\n');
    }
    out.push('\n');
}

#[cfg(test)]
mod tests;
