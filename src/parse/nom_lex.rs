//! Stage: parse — what the nom front ends (the agent language, SEARCH/REPLACE blocks) share:
//! the error type (where a production failed and why) with the helpers that raise it, and the
//! line-level productions both grammars name (`line`, `text`, `eol`, `ws`, `ws1`). Pure.

use nom::bytes::complete::{tag, take_till, take_while, take_while1};
use nom::combinator::eof;
use nom::error::ErrorKind;
use nom::{IResult, Parser};

pub(crate) type In<'a> = &'a [u8];
pub(crate) type Res<'a, O> = IResult<In<'a>, O, Fail>;

/// Why a production failed. `addr` is the address of the offending spot: every slice the
/// parsers see lies inside the input, so the byte offset is recovered from the input's address
/// (slices of a line's content are not suffixes of the input, so a remaining length would not
/// do).
#[derive(Debug)]
pub(crate) struct Fail {
    pub addr: usize,
    pub message: String,
    pub hint: Option<String>,
}

impl<'a> nom::error::ParseError<In<'a>> for Fail {
    fn from_error_kind(i: In<'a>, kind: ErrorKind) -> Self {
        Fail {
            addr: i.as_ptr() as usize,
            message: format!("unexpected input ({})", kind.description()),
            hint: None,
        }
    }

    fn append(_: In<'a>, _: ErrorKind, other: Self) -> Self {
        other
    }
}

/// A hard failure at `at`: no other production can apply.
pub(crate) fn fail<'a, O>(
    at: In<'a>,
    message: impl Into<String>,
    hint: impl Into<String>,
) -> Res<'a, O> {
    Err(failure(at, message, hint))
}

pub(crate) fn failure(
    at: In<'_>,
    message: impl Into<String>,
    hint: impl Into<String>,
) -> nom::Err<Fail> {
    nom::Err::Failure(Fail {
        addr: at.as_ptr() as usize,
        message: message.into(),
        hint: Some(hint.into()),
    })
}

/// Not this production: let the caller try another.
pub(crate) fn miss<O>(at: In<'_>) -> Res<'_, O> {
    Err(not_here(at))
}

/// The error of [`miss`], as a value.
pub(crate) fn not_here(at: In<'_>) -> nom::Err<Fail> {
    nom::Err::Error(Fail {
        addr: at.as_ptr() as usize,
        message: "unexpected input".into(),
        hint: None,
    })
}

/// grammar: line
///
/// One physical line: its text (without the ending) — never matches at the end of the input.
pub(crate) fn line(i: In<'_>) -> Res<'_, In<'_>> {
    if i.is_empty() {
        return miss(i);
    }
    let (i, content) = text(i)?;
    let (i, _) = eol(i)?;
    Ok((i, content))
}

/// grammar: text
///
/// The bytes up to the line feed; a CR right before it belongs to the line ending.
pub(crate) fn text(i: In<'_>) -> Res<'_, In<'_>> {
    let (rest, content) = take_till(|b| b == b'\n').parse(i)?;
    Ok((rest, content.strip_suffix(b"\r").unwrap_or(content)))
}

/// grammar: eol
pub(crate) fn eol(i: In<'_>) -> Res<'_, In<'_>> {
    nom::branch::alt((tag("\n"), eof)).parse(i)
}

/// grammar: ws
pub(crate) fn ws(i: In<'_>) -> Res<'_, In<'_>> {
    take_while(|b| b == b' ' || b == b'\t').parse(i)
}

/// grammar: ws1
pub(crate) fn ws1(i: In<'_>) -> Res<'_, In<'_>> {
    take_while1(|b| b == b' ' || b == b'\t').parse(i)
}
