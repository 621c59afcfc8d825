//! Stage: parse (unified diffs). nom parsers for the header lines of one file patch:
//! `diff --git`, git's extended headers, and the `--- ` / `+++ ` file-name lines.
//!
//! Each function reads one line's body (no LF, no CR) and returns raw path bytes; stripping
//! (`-p`), UTF-8 checks and the choice of op happen in `paths` and `super`, not here.

use nom::branch::alt;
use nom::bytes::complete::{tag, take_while1, take_while_m_n};
use nom::combinator::{map, opt, rest};
use nom::sequence::preceded;
use nom::Parser;

use crate::model::Mode;
use crate::parse::quoted::{fail, quoted_path, PResult};

/// One git extended header line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Extended {
    OldMode(Mode),
    NewMode(Mode),
    DeletedFileMode(Mode),
    NewFileMode(Mode),
    RenameFrom(Vec<u8>),
    RenameTo(Vec<u8>),
    CopyFrom(Vec<u8>),
    CopyTo(Vec<u8>),
    /// Similarity or dissimilarity percentage: informative only.
    Similarity,
    Index {
        old: String,
        new: String,
        mode: Option<Mode>,
    },
}

/// A name on a `---` / `+++` line: a path, or `/dev/null` (no file on that side).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileName {
    DevNull,
    Path(Vec<u8>),
}

/// grammar: git_header
///
/// `diff --git ` followed by the two names, kept raw: with unquoted names that contain
/// spaces the split is only decided later (`paths::split_git_names`).
pub fn git_header(i: &[u8]) -> PResult<'_, &[u8]> {
    preceded(tag(&b"diff --git "[..]), rest).parse(i)
}

/// grammar: mode
///
/// Six (or fewer) octal digits, as git writes file modes.
pub fn mode(i: &[u8]) -> PResult<'_, Mode> {
    let (rest_in, digits) = take_while_m_n(1, 6, |c: u8| (b'0'..=b'7').contains(&c)).parse(i)?;
    let value = digits
        .iter()
        .fold(0u32, |acc, c| (acc << 3) | u32::from(c - b'0'));
    if !rest_in.is_empty() && !rest_in.starts_with(b" ") {
        return fail(rest_in, "expected an octal file mode such as 100644");
    }
    Ok((rest_in, Mode(value)))
}

/// A mode that must end the line.
fn mode_eol(i: &[u8]) -> PResult<'_, Mode> {
    let (r, m) = mode(i)?;
    if !r.is_empty() {
        return fail(r, "unexpected text after the file mode");
    }
    Ok((r, m))
}

/// grammar: path
///
/// A quoted path, or the rest of the line taken as it is.
pub fn path(i: &[u8]) -> PResult<'_, Vec<u8>> {
    if i.starts_with(b"\"") {
        let (r, p) = quoted_path(i)?;
        if !r.is_empty() {
            return fail(r, "unexpected text after the quoted path");
        }
        return Ok((r, p));
    }
    if i.is_empty() {
        return fail(i, "expected a path");
    }
    Ok((&i[i.len()..], i.to_vec()))
}

/// grammar: old_mode
fn old_mode(i: &[u8]) -> PResult<'_, Extended> {
    map(
        preceded(tag(&b"old mode "[..]), mode_eol),
        Extended::OldMode,
    )
    .parse(i)
}

/// grammar: new_mode
fn new_mode(i: &[u8]) -> PResult<'_, Extended> {
    map(
        preceded(tag(&b"new mode "[..]), mode_eol),
        Extended::NewMode,
    )
    .parse(i)
}

/// grammar: deleted_file_mode
fn deleted_file_mode(i: &[u8]) -> PResult<'_, Extended> {
    map(
        preceded(tag(&b"deleted file mode "[..]), mode_eol),
        Extended::DeletedFileMode,
    )
    .parse(i)
}

/// grammar: new_file_mode
fn new_file_mode(i: &[u8]) -> PResult<'_, Extended> {
    map(
        preceded(tag(&b"new file mode "[..]), mode_eol),
        Extended::NewFileMode,
    )
    .parse(i)
}

/// grammar: rename_from
fn rename_from(i: &[u8]) -> PResult<'_, Extended> {
    map(
        preceded(tag(&b"rename from "[..]), path),
        Extended::RenameFrom,
    )
    .parse(i)
}

/// grammar: rename_to
fn rename_to(i: &[u8]) -> PResult<'_, Extended> {
    map(preceded(tag(&b"rename to "[..]), path), Extended::RenameTo).parse(i)
}

/// grammar: copy_from
fn copy_from(i: &[u8]) -> PResult<'_, Extended> {
    map(preceded(tag(&b"copy from "[..]), path), Extended::CopyFrom).parse(i)
}

/// grammar: copy_to
fn copy_to(i: &[u8]) -> PResult<'_, Extended> {
    map(preceded(tag(&b"copy to "[..]), path), Extended::CopyTo).parse(i)
}

/// grammar: similarity_index
///
/// `similarity index N%` or `dissimilarity index N%`; informative only.
fn similarity_index(i: &[u8]) -> PResult<'_, Extended> {
    let (r, _) = (
        alt((
            tag(&b"similarity index "[..]),
            tag(&b"dissimilarity index "[..]),
        )),
        take_while1(|c: u8| c.is_ascii_digit()),
        tag(&b"%"[..]),
    )
        .parse(i)?;
    if !r.is_empty() {
        return fail(r, "unexpected text after the similarity percentage");
    }
    Ok((r, Extended::Similarity))
}

/// grammar: index_line
///
/// `index OLD..NEW [MODE]`: abbreviated or full hex blob ids.
fn index_line(i: &[u8]) -> PResult<'_, Extended> {
    let hex = |i| take_while1(|c: u8| c.is_ascii_hexdigit()).parse(i);
    let (r, (_, old, _, new, mode)) = (
        tag(&b"index "[..]),
        hex,
        tag(&b".."[..]),
        hex,
        opt(preceded(tag(&b" "[..]), mode_eol)),
    )
        .parse(i)?;
    if !r.is_empty() {
        return fail(r, "unexpected text after the blob ids of the index line");
    }
    let text = |b: &[u8]| String::from_utf8_lossy(b).to_ascii_lowercase();
    Ok((
        r,
        Extended::Index {
            old: text(old),
            new: text(new),
            mode,
        },
    ))
}

/// grammar: extended_header
pub fn extended_header(i: &[u8]) -> PResult<'_, Extended> {
    alt((
        old_mode,
        new_mode,
        deleted_file_mode,
        new_file_mode,
        rename_from,
        rename_to,
        copy_from,
        copy_to,
        similarity_index,
        index_line,
    ))
    .parse(i)
}

/// grammar: file_name
///
/// The name of a `---` / `+++` line: quoted, or raw up to a TAB (a timestamp follows it in
/// `diff -u` output; git adds a lone TAB after names holding a space).
fn file_name(i: &[u8]) -> PResult<'_, FileName> {
    let (r, raw) = if i.starts_with(b"\"") {
        let (r, p) = quoted_path(i)?;
        if !r.is_empty() && !r.starts_with(b"\t") {
            return fail(r, "unexpected text after the quoted path");
        }
        (r, p)
    } else {
        let end = i.iter().position(|&b| b == b'\t').unwrap_or(i.len());
        (&i[end..], i[..end].to_vec())
    };
    if raw.is_empty() {
        return fail(i, "expected a path or /dev/null");
    }
    let name = if raw == b"/dev/null" {
        FileName::DevNull
    } else {
        FileName::Path(raw)
    };
    Ok((r, name))
}

/// grammar: old_file_line
pub fn old_file_line(i: &[u8]) -> PResult<'_, FileName> {
    preceded(tag(&b"--- "[..]), file_name).parse(i)
}

/// grammar: new_file_line
pub fn new_file_line(i: &[u8]) -> PResult<'_, FileName> {
    preceded(tag(&b"+++ "[..]), file_name).parse(i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ext(i: &str) -> Extended {
        extended_header(i.as_bytes()).expect("parses").1
    }

    #[test]
    fn reads_extended_headers() {
        assert_eq!(ext("old mode 100644"), Extended::OldMode(Mode::FILE));
        assert_eq!(
            ext("new file mode 120000"),
            Extended::NewFileMode(Mode::SYMLINK)
        );
        assert_eq!(
            ext("deleted file mode 160000"),
            Extended::DeletedFileMode(Mode::GITLINK)
        );
        assert_eq!(
            ext("rename from \"a b\\303\\251\""),
            Extended::RenameFrom("a bé".into())
        );
        assert_eq!(ext("copy to x y"), Extended::CopyTo(b"x y".to_vec()));
        assert_eq!(ext("dissimilarity index 12%"), Extended::Similarity);
        assert_eq!(
            ext("index 1d351dF..228dbb4 100755"),
            Extended::Index {
                old: "1d351df".into(),
                new: "228dbb4".into(),
                mode: Some(Mode::EXECUTABLE)
            }
        );
    }

    #[test]
    fn refuses_trailing_garbage_in_headers() {
        assert!(extended_header(b"old mode 100644x").is_err());
        assert!(extended_header(b"index abc..def 100644 extra").is_err());
        assert!(extended_header(b"similarity index 90").is_err());
    }

    #[test]
    fn file_names_cut_timestamps() {
        let (_, n) = old_file_line(b"--- src/a.c\t2024-01-01 10:00:00").expect("parses");
        assert_eq!(n, FileName::Path(b"src/a.c".to_vec()));
        let (_, n) = new_file_line(b"+++ /dev/null").expect("parses");
        assert_eq!(n, FileName::DevNull);
        let (_, n) = new_file_line(b"+++ \"b/t\\tab\"").expect("parses");
        assert_eq!(n, FileName::Path(b"b/t\tab".to_vec()));
    }
}
