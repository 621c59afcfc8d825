//! Reading a patch file (SPEC §1): a regular file, never more than [`MAX_PATCH_BYTES`],
//! opened without blocking and checked on the open handle — so a FIFO cannot hang the run, a
//! device such as `/dev/zero` is never read, and nothing swapped in between the check and the
//! read is read. One reader for every door that takes a patch file by name: the command
//! line's PATCH and `-i FILE`, and `check-patches`' series. Nothing here quotes what it read.

use std::io::Read as _;

use crate::usage::UsageError;
use crate::Error;

/// The largest patch read (1 GiB): larger input is refused (`usage`) before it is read whole.
pub const MAX_PATCH_BYTES: u64 = 1 << 30;

/// A patch file: opened without blocking (a FIFO with no writer would otherwise wait
/// forever), then checked on the open handle — a regular file, within the limit — before a
/// byte is read, so that nothing swapped in between the check and the read is read.
pub fn read_patch_file(path: &std::path::Path) -> Result<Vec<u8>, Error> {
    let shown = path.display().to_string();
    let io = |e: std::io::Error| -> Error {
        if e.kind() == std::io::ErrorKind::NotFound {
            UsageError::PatchUnreadable {
                path: shown.clone(),
                cause: e.to_string(),
            }
            .into()
        } else {
            Error::io(&shown, "cannot read the patch", &e)
        }
    };
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    let file = match options.open(path) {
        Ok(f) => f,
        // Windows refuses to open a folder as a file: say what it is, as on Unix.
        Err(_) if path.is_dir() => return Err(not_regular(shown.clone(), "a folder")),
        Err(e) => return Err(io(e)),
    };
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(not_regular(shown.clone(), kind_of(&meta.file_type())));
    }
    if meta.len() > MAX_PATCH_BYTES {
        return Err(too_large(format!("the patch {shown}"), Some(meta.len())));
    }
    read_limited(file, meta.len(), &format!("the patch {shown}")).map_err(|e| e.unwrap_or_else(io))
}

/// Everything `reader` holds, refused once it passes the limit (`Err(Ok(refusal))`; an I/O
/// failure is `Err(Err(e))`). `expected` sizes the buffer for a file; `shown` names the
/// input in the refusal ("the patch FILE").
pub(crate) fn read_limited(
    reader: impl std::io::Read,
    expected: u64,
    shown: &str,
) -> Result<Vec<u8>, Result<Error, std::io::Error>> {
    read_up_to(reader, expected, MAX_PATCH_BYTES)
        .map_err(Err)?
        .ok_or_else(|| Ok(too_large(shown.to_string(), None)))
}

/// At most `limit` bytes of `reader`: `None` when it holds more.
pub(crate) fn read_up_to(
    reader: impl std::io::Read,
    expected: u64,
    limit: u64,
) -> std::io::Result<Option<Vec<u8>>> {
    let capacity = usize::try_from(expected.min(limit)).unwrap_or(0);
    let mut buf = Vec::with_capacity(capacity);
    reader.take(limit.saturating_add(1)).read_to_end(&mut buf)?;
    Ok((buf.len() as u64 <= limit).then_some(buf))
}

pub(crate) fn not_regular(path: String, kind: &'static str) -> Error {
    UsageError::PatchNotRegular { path, kind }.into()
}

pub(crate) fn too_large(from: String, size: Option<u64>) -> Error {
    UsageError::PatchTooLarge {
        from,
        size,
        limit: MAX_PATCH_BYTES,
    }
    .into()
}

/// What a file that is not a regular file is, in a message's words.
pub(crate) fn kind_of(kind: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        if kind.is_fifo() {
            return "a FIFO";
        }
        if kind.is_char_device() || kind.is_block_device() {
            return "a device";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    if kind.is_dir() {
        "a folder"
    } else {
        "not a regular file"
    }
}
