//! Stage: parse — the error type the nom front ends (the agent language, SEARCH/REPLACE
//! blocks) share: where a production failed and why, and the helpers that raise it.

use nom::error::ErrorKind;
use nom::IResult;

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
