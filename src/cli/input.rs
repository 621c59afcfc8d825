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

use super::*;
#[cfg(test)]
use crate::patch_file::read_up_to;
use crate::patch_file::{read_limited, too_large, MAX_PATCH_BYTES};
use crate::usage::UsageError;

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
        Input::File(p) => crate::patch_file::read_patch_file(p),
        Input::Stdin => read_stdin(),
    }
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
