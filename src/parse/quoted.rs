//! Stage: parse. Git's C-style quoted paths (`"a/sp ace\303\251"`, git's `quote_c_style`):
//! decoding for the unified-diff front end. The encoding — for the renderer's headers and
//! for every path human output prints — lives in the crate's lowest layer, `crate::quote`
//! (errors and reports quote their paths too, and a stage below them may not be used).
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quote::{escape_for_terminal, needs_quoting, quote, quote_for_terminal};
    use std::borrow::Cow;

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
    fn terminal_quoting_escapes_what_acts_on_a_terminal_and_keeps_readable_names() {
        assert_eq!(quote_for_terminal("src/main.rs"), "src/main.rs");
        assert!(matches!(quote_for_terminal("naïve/日本.txt"), Cow::Borrowed(_)));
        assert_eq!(quote_for_terminal("sp ace"), "sp ace");
        assert_eq!(
            quote_for_terminal("\x1b[1A\x1b[2K\rx"),
            r#""\033[1A\033[2K\rx""#
        );
        assert_eq!(quote_for_terminal("a\tb\nc\x07\x7f"), r#""a\tb\nc\a\177""#);
        assert_eq!(quote_for_terminal(r#"back\slash"#), r#""back\\slash""#);
        // U+009B (a CSI for some terminals) and U+202E (shows the rest reversed): octal
        // bytes; the other non-ASCII characters of the same name are kept.
        assert_eq!(quote_for_terminal("é\u{9b}2J"), r#""é\302\2332J""#);
        assert_eq!(quote_for_terminal("x\u{202e}txt.exe"), r#""x\342\200\256txt.exe""#);
        // What is quoted reads back as the same name.
        for name in ["\x1b[31mred", "q\"uote\\", "é\u{9b}"] {
            let shown = quote_for_terminal(name);
            let (rest, back) = quoted_path(shown.as_bytes()).expect("a quoted path");
            assert!(rest.is_empty());
            assert_eq!(back, name.as_bytes());
        }
    }

    #[test]
    fn escaping_text_keeps_its_lines_and_tabs() {
        assert_eq!(escape_for_terminal("two\nlines\tand \"q\""), "two\nlines\tand \"q\"");
        assert_eq!(escape_for_terminal("a\x1b[2Kb\r\u{9b}"), r"a\033[2Kb\r\302\233");
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
