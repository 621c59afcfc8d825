//! Stage: parse. Git's C-style quoted paths (`"a/sp ace\303\251"`): decoding for the
//! unified-diff front end and encoding for the renderer.
//!
//! Pure byte handling; no path policy here (stripping and normalising live in
//! `parse::unified`), and no I/O.

use nom::IResult;

/// Why a quoted path could not be read. `remaining` is the length of the input left at the
/// offending spot, so the caller can turn it into a column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fail {
    pub remaining: usize,
    pub message: String,
}

impl Fail {
    /// A failure at `rest`, the input left at the offending spot.
    pub fn at(rest: &[u8], message: impl Into<String>) -> Self {
        Fail {
            remaining: rest.len(),
            message: message.into(),
        }
    }
}

impl<'a> nom::error::ParseError<&'a [u8]> for Fail {
    fn from_error_kind(input: &'a [u8], kind: nom::error::ErrorKind) -> Self {
        Fail::at(input, format!("unexpected text ({})", kind.description()))
    }

    fn append(_: &'a [u8], _: nom::error::ErrorKind, other: Self) -> Self {
        other
    }
}

/// The result type of every nom function of the unified-diff front end.
pub type PResult<'a, T> = IResult<&'a [u8], T, Fail>;

/// A hard failure (no backtracking) at `rest`.
pub fn fail<T>(rest: &[u8], message: impl Into<String>) -> PResult<'_, T> {
    Err(nom::Err::Failure(Fail::at(rest, message)))
}

/// grammar: quoted_path
///
/// A double-quoted path with C escapes: `\a \b \t \n \v \f \r \" \\` and three-digit octal
/// bytes (`\303\251`). Returns the decoded bytes; the caller decides whether they must be UTF-8.
pub fn quoted_path(input: &[u8]) -> PResult<'_, Vec<u8>> {
    let Some(mut rest) = input.strip_prefix(b"\"") else {
        return Err(nom::Err::Error(Fail::at(input, "expected '\"'")));
    };
    let mut out = Vec::new();
    loop {
        match rest.first() {
            None => return fail(rest, "unterminated quoted path: missing the closing '\"'"),
            Some(b'"') => return Ok((&rest[1..], out)),
            Some(b'\\') => {
                let (next, byte) = escape(rest)?;
                out.push(byte);
                rest = next;
            }
            Some(&b) => {
                out.push(b);
                rest = &rest[1..];
            }
        }
    }
}

/// One escape sequence starting at the backslash of `input`.
fn escape(input: &[u8]) -> PResult<'_, u8> {
    let simple = |b: u8| -> Option<u8> {
        Some(match b {
            b'a' => 0x07,
            b'b' => 0x08,
            b't' => b'\t',
            b'n' => b'\n',
            b'v' => 0x0b,
            b'f' => 0x0c,
            b'r' => b'\r',
            b'"' => b'"',
            b'\\' => b'\\',
            _ => return None,
        })
    };
    match input.get(1) {
        Some(&b) if simple(b).is_some() => Ok((&input[2..], simple(b).unwrap_or(b))),
        Some(b'0'..=b'3') => {
            let digits = input
                .get(1..4)
                .filter(|d| d.iter().all(|c| (b'0'..=b'7').contains(c)));
            match digits {
                Some(d) => {
                    let v = d.iter().fold(0u8, |acc, c| (acc << 3) | (c - b'0'));
                    Ok((&input[4..], v))
                }
                None => fail(
                    input,
                    "bad octal escape in quoted path: expected three octal digits",
                ),
            }
        }
        Some(_) => fail(input, "unknown escape in quoted path"),
        None => fail(input, "unterminated quoted path: missing the closing '\"'"),
    }
}

/// True when git would quote `path` (core.quotePath): it holds `"`, `\`, a control character
/// or a non-ASCII byte.
pub fn needs_quoting(path: &[u8]) -> bool {
    path.iter()
        .any(|&b| b == b'"' || b == b'\\' || !(0x20..0x7f).contains(&b))
}

/// `path` as git writes it in a header: unchanged when no quoting is needed, else
/// double-quoted with C escapes (octal for non-ASCII bytes).
pub fn quote(path: &[u8]) -> String {
    if !needs_quoting(path) {
        return String::from_utf8_lossy(path).into_owned();
    }
    let mut out = String::with_capacity(path.len() + 2);
    out.push('"');
    for &b in path {
        match b {
            0x07 => out.push_str("\\a"),
            0x08 => out.push_str("\\b"),
            b'\t' => out.push_str("\\t"),
            b'\n' => out.push_str("\\n"),
            0x0b => out.push_str("\\v"),
            0x0c => out.push_str("\\f"),
            b'\r' => out.push_str("\\r"),
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b if !(0x20..0x7f).contains(&b) => out.push_str(&format!("\\{b:03o}")),
            b => out.push(b as char),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_octal_and_simple_escapes() {
        let (rest, p) = quoted_path(br#""a/sp ace\303\251\t\"q\"\\" tail"#).expect("valid");
        assert_eq!(rest, b" tail");
        assert_eq!(p, "a/sp ace\u{e9}\t\"q\"\\".as_bytes());
    }

    #[test]
    fn refuses_unterminated_and_bad_escapes() {
        let err = |i: &'static [u8]| match quoted_path(i) {
            Err(nom::Err::Failure(f)) => f.message,
            other => panic!("expected a failure, got {other:?}"),
        };
        assert!(err(b"\"abc").contains("unterminated"));
        assert!(err(b"\"a\\q\"").contains("unknown escape"));
        assert!(err(b"\"a\\39\"").contains("octal"));
        assert!(err(b"\"a\\").contains("unterminated"));
    }

    #[test]
    fn quote_round_trips() {
        for p in [
            &b"plain/path"[..],
            b"sp ace",
            "caf\u{e9}".as_bytes(),
            b"t\tab\"\\x\x01",
        ] {
            let q = quote(p);
            if needs_quoting(p) {
                let (rest, back) = quoted_path(q.as_bytes()).expect("quote output parses");
                assert!(rest.is_empty());
                assert_eq!(back, p);
            } else {
                assert_eq!(q.as_bytes(), p);
            }
        }
    }
}
