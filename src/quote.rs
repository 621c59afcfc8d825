//! Git's C-style path quoting, the encoding half (the decoding is the unified-diff front
//! end's, `parse::quoted`): for the renderer's headers ([`quote`]) and
//! for every path and message human output prints ([`quote_for_terminal`],
//! [`escape_for_terminal`]), so that no path can rewrite the terminal a person reads. The
//! lowest layer: errors, reports and renderers all use it; it uses nothing of the crate.

use std::borrow::Cow;

/// True when git would quote `path` (core.quotePath): it holds `"`, `\`, a control character
/// or a non-ASCII byte.
pub fn needs_quoting(path: &[u8]) -> bool {
    path.iter().any(|&b| !is_plain(b))
}

/// A byte that stands for itself inside and outside quotes: printable ASCII but `"` and `\`.
pub(crate) fn is_plain(b: u8) -> bool {
    (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\'
}

/// `path` as git writes it in a header: unchanged when no quoting is needed, else
/// double-quoted with C escapes (octal for non-ASCII bytes, as core.quotePath=true).
pub fn quote(path: &[u8]) -> String {
    if !needs_quoting(path) {
        return String::from_utf8_lossy(path).into_owned();
    }
    let mut out = String::with_capacity(path.len() + 2);
    out.push('"');
    for &b in path {
        push_byte(&mut out, b);
    }
    out.push('"');
    out
}

/// `path` as human output prints it (SPEC §6): unchanged unless it holds a control character,
/// `"` or `\`, or a character that moves the cursor or reorders the text shown (see
/// [`moves_text`]); then in double quotes with git's C escapes, those characters' bytes in
/// octal. Other non-ASCII characters are kept as they are, as git prints them with
/// core.quotePath=false: a person reads `café.txt`, not `"caf\303\251.txt"`, and such a
/// character cannot act on the terminal.
///
/// ```
/// use apply_patch::quote::quote_for_terminal;
/// assert_eq!(quote_for_terminal("src/café.rs"), "src/café.rs");
/// assert_eq!(quote_for_terminal("a\x1b[2K\rb"), r#""a\033[2K\rb""#);
/// assert_eq!(quote_for_terminal("say \"hi\""), r#""say \"hi\"""#);
/// ```
pub fn quote_for_terminal(path: &str) -> Cow<'_, str> {
    let escaped = |c: char| if c.is_ascii() { !is_plain(c as u8) } else { moves_text(c) };
    if !path.chars().any(escaped) {
        return Cow::Borrowed(path);
    }
    let mut out = String::with_capacity(path.len() + 2);
    out.push('"');
    push_escaped(&mut out, path, escaped);
    out.push('"');
    Cow::Owned(out)
}

/// `text` onto `out`: the characters `escaped` picks as the octal or C escapes of their
/// UTF-8 bytes, the rest as they are.
fn push_escaped(out: &mut String, text: &str, escaped: impl Fn(char) -> bool) {
    for c in text.chars() {
        if escaped(c) {
            let mut utf8 = [0; 4];
            for &b in c.encode_utf8(&mut utf8).as_bytes() {
                push_byte(out, b);
            }
        } else {
            out.push(c);
        }
    }
}

/// `text` (a message, a hint) for a terminal: every control character but the line break
/// and the tab, and every character [`moves_text`] names, written as C escapes or octal
/// bytes; the rest as it is. The net under [`quote_for_terminal`]: a message may name
/// paths the error does not carry as fields.
pub fn escape_for_terminal(text: &str) -> Cow<'_, str> {
    let escaped = |c: char| (c.is_control() && c != '\n' && c != '\t') || moves_text(c);
    if !text.chars().any(escaped) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    push_escaped(&mut out, text, escaped);
    Cow::Owned(out)
}

/// Non-ASCII characters a terminal acts on, or that change what the text around them looks
/// like: the C1 controls (U+0080–U+009F; some terminals take U+009B for an escape), the
/// bidirectional formatting characters (a name can be shown reversed) and the line and
/// paragraph separators.
fn moves_text(c: char) -> bool {
    matches!(
        c,
        '\u{80}'..='\u{9f}'
            | '\u{061c}'
            | '\u{200e}'
            | '\u{200f}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2066}'..='\u{2069}'
    )
}

/// One byte of a quoted path: itself, a C escape (`\t`, `\"`…), or three octal digits.
pub(crate) fn push_byte(out: &mut String, b: u8) {
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
        b if is_plain(b) => out.push(b as char),
        b => out.push_str(&format!("\\{b:03o}")),
    }
}

