//! Stage: command line (input). What the PATCH argument is (SPEC §1) and reading the patch:
//! a regular file or standard input, never more than [`MAX_PATCH_BYTES`]. Nothing here
//! parses a patch beyond asking detection whether an argument holds one, and nothing here
//! quotes what it read: a file that is not a patch must not leak through an error.
//!
//! Why each rule: the Codex drop-in's argument is written by a model, so there it is only
//! ever text (`apply_patch /etc/shadow` must not read the file); a file is opened without
//! blocking and checked on the open handle, so a FIFO cannot hang the run and a device such
//! as `/dev/zero` is never read; and input is read with a limit, so that no input exhausts
//! the memory before it is refused.

use std::io::Read as _;

use super::*;
use crate::usage::UsageError;

/// The largest patch read (1 GiB): larger input is refused (`usage`) before it is read whole.
pub(crate) const MAX_PATCH_BYTES: u64 = 1 << 30;

/// PATCH (SPEC §1): none or `-` is standard input; an argument holding a line break is the
/// patch text (never a file name); an existing file is the file; an argument that holds a
/// patch — found as in standard input, after a heredoc opener, a BOM, blank lines or prose —
/// is the patch text; anything else is a usage error that does not echo the argument.
pub(crate) fn input_of(arg: Option<OsString>) -> Result<Input, Error> {
    let Some(arg) = arg else {
        return Ok(Input::Stdin);
    };
    if arg == "-" {
        return Ok(Input::Stdin);
    }
    if holds_line_break(&arg) {
        return text_of(arg);
    }
    let path = PathBuf::from(&arg);
    // `symlink_metadata`: a dangling link is an existing name too, and reading it says why
    // it cannot be read rather than taking its name for patch text.
    if path.symlink_metadata().is_ok() {
        return Ok(Input::File(path));
    }
    match arg.to_str() {
        Some(text) if apply_patch::parse::detect(text.as_bytes()).is_some() => {
            Ok(Input::Text(text.to_string()))
        }
        _ => Err(UsageError::NeitherFileNorPatch.into()),
    }
}

/// The Codex drop-in's arguments (after argv\[0\]): none is standard input, `-i FILE` (or
/// `--input FILE`) reads FILE (`-`: standard input), and the one other argument is always
/// the patch text, as in Codex: it is never opened as a file.
pub(crate) fn codex_input(args: &[OsString]) -> Result<Input, Error> {
    match args {
        [] => Ok(Input::Stdin),
        [flag, file] if flag == "-i" || flag == "--input" => Ok(if file == "-" {
            Input::Stdin
        } else {
            Input::File(PathBuf::from(file))
        }),
        [text] => text_of(text.clone()),
        _ => Err(UsageError::CodexArguments.into()),
    }
}

fn holds_line_break(arg: &std::ffi::OsStr) -> bool {
    arg.as_encoded_bytes()
        .iter()
        .any(|&b| b == b'\n' || b == b'\r')
}

/// An argument taken as patch text; the model holds text as UTF-8 (a diff of other bytes
/// comes as a file or on standard input).
fn text_of(arg: OsString) -> Result<Input, Error> {
    arg.into_string()
        .map(Input::Text)
        .map_err(|_| UsageError::PatchTextNotUtf8.into())
}

/// The patch bytes of `input`.
pub(crate) fn read_input(input: &Input) -> Result<Vec<u8>, Error> {
    match input {
        Input::Text(t) => Ok(t.clone().into_bytes()),
        Input::File(p) => read_file(p),
        Input::Stdin => read_stdin(),
    }
}

/// A patch file: opened without blocking (a FIFO with no writer would otherwise wait
/// forever), then checked on the open handle — a regular file, within the limit — before a
/// byte is read, so that nothing swapped in between the check and the read is read.
fn read_file(path: &std::path::Path) -> Result<Vec<u8>, Error> {
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

/// Standard input, read up to the limit (a regular file redirected in is measured first).
fn read_stdin() -> Result<Vec<u8>, Error> {
    const SHOWN: &str = "the patch on standard input";
    let size = stdin_size();
    if let Some(size) = size.filter(|&s| s > MAX_PATCH_BYTES) {
        return Err(too_large(SHOWN.into(), Some(size)));
    }
    read_limited(std::io::stdin().lock(), size.unwrap_or(0), SHOWN)
        .map_err(|e| e.unwrap_or_else(|e| Error::io("<stdin>", "cannot read the patch from", &e)))
}

/// The size of standard input when it is a regular file.
fn stdin_size() -> Option<u64> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd as _;
        let fd = std::io::stdin().as_fd().try_clone_to_owned().ok()?;
        let meta = std::fs::File::from(fd).metadata().ok()?;
        meta.is_file().then_some(meta.len())
    }
    #[cfg(not(unix))]
    None
}

/// Everything `reader` holds, refused once it passes the limit (`Err(Ok(refusal))`; an I/O
/// failure is `Err(Err(e))`). `expected` sizes the buffer for a file; `shown` names the
/// input in the refusal ("the patch FILE").
fn read_limited(
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

fn not_regular(path: String, kind: &'static str) -> Error {
    UsageError::PatchNotRegular { path, kind }.into()
}

fn too_large(from: String, size: Option<u64>) -> Error {
    UsageError::PatchTooLarge {
        from,
        size,
        limit: MAX_PATCH_BYTES,
    }
    .into()
}

/// What a file that is not a regular file is, in a message's words.
fn kind_of(kind: &std::fs::FileType) -> &'static str {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reading_stops_one_byte_past_the_limit() {
        let data = [7u8; 10];
        let within = read_up_to(&data[..], 0, 10).expect("memory reads");
        assert_eq!(within.as_deref(), Some(&data[..]));
        assert_eq!(read_up_to(&data[..], 0, 9).expect("memory reads"), None);
        // An endless reader (as `/dev/zero` on standard input) is refused, not read whole.
        assert_eq!(
            read_up_to(std::io::repeat(0), 0, 1000).expect("reads"),
            None
        );
    }

    // A file name holding a line break: not on Windows.
    #[cfg(unix)]
    #[test]
    fn a_line_break_makes_text_and_the_drop_in_never_opens_its_argument() {
        let dir = tempfile::tempdir().expect("temp dir");
        let named = dir.path().join("x\ny");
        std::fs::write(&named, "not a patch").expect("a name with a line break");
        let arg = named.clone().into_os_string();
        assert_eq!(
            input_of(Some(arg.clone())).ok(),
            Some(Input::Text(named.to_string_lossy().into_owned()))
        );
        let plain = dir.path().join("p.patch");
        std::fs::write(&plain, "*** Begin Patch\n").expect("write");
        let arg = plain.clone().into_os_string();
        assert_eq!(input_of(Some(arg.clone())).ok(), Some(Input::File(plain)));
        assert_eq!(
            codex_input(std::slice::from_ref(&arg)).ok(),
            Some(Input::Text(arg.to_string_lossy().into_owned()))
        );
        let i = [OsString::from("-i"), arg.clone()];
        assert_eq!(codex_input(&i).ok(), Some(Input::File(arg.into())));
        assert_eq!(codex_input(&[]).ok(), Some(Input::Stdin));
        let three = [OsString::from("a"), "b".into(), "c".into()];
        assert_eq!(
            codex_input(&three).map_err(|e| e.code),
            Err(ErrorCode::Usage)
        );
    }
}
