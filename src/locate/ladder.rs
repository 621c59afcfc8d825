//! Stage: locate — the ladder of SPEC §5 as data: how a line is normalised at each level, and
//! the hashed per-level keys the search compares (computed once per line and level, lazily, so
//! no line is re-normalised per comparison).
//!
//! Pure. This module decides nothing about where a hunk goes; `search` does.

use std::borrow::Cow;

use super::Level;

/// ASCII whitespace of levels 2–3: space, tab, CR, FF, VT.
pub(crate) fn is_ascii_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | 0x0c | 0x0b)
}

/// `line` without trailing ASCII whitespace.
pub(crate) fn trim_end(line: &[u8]) -> &[u8] {
    let end = line
        .iter()
        .rposition(|&b| !is_ascii_ws(b))
        .map_or(0, |i| i + 1);
    &line[..end]
}

/// `line` without leading and trailing ASCII whitespace.
pub(crate) fn trim(line: &[u8]) -> &[u8] {
    let line = trim_end(line);
    let start = line
        .iter()
        .position(|&b| !is_ascii_ws(b))
        .unwrap_or(line.len());
    &line[start..]
}

/// What level 4 does with one character.
pub(crate) enum Fold {
    Keep,
    To(&'static str),
    Remove,
}

/// The folding table of level 4 (SPEC §5).
pub(crate) fn fold_char(c: char) -> Fold {
    match c {
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' => Fold::To("'"),
        '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{2033}' => Fold::To("\""),
        '\u{2010}'..='\u{2015}' | '\u{2212}' => Fold::To("-"),
        '\u{2026}' => Fold::To("..."),
        '\u{00A0}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => {
            Fold::To(" ")
        }
        '\u{200B}'..='\u{200D}' | '\u{FEFF}' => Fold::Remove,
        _ => Fold::Keep,
    }
}

/// Level-4 folding of a whole line. Bytes that are not UTF-8 are left alone (such lines can
/// only match lines with the same bytes).
pub(crate) fn fold_unicode(line: &[u8]) -> Cow<'_, [u8]> {
    if line.is_ascii() {
        return Cow::Borrowed(line);
    }
    let Ok(text) = std::str::from_utf8(line) else {
        return Cow::Borrowed(line);
    };
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match fold_char(c) {
            Fold::Keep => out.push(c),
            Fold::To(s) => out.push_str(s),
            Fold::Remove => {}
        }
    }
    Cow::Owned(out.into_bytes())
}

/// Curly quotes folded to straight ones (the `line_range` check of SPEC §4), other text kept.
pub(crate) fn fold_quotes(text: &str) -> Cow<'_, str> {
    if text.is_ascii() {
        return Cow::Borrowed(text);
    }
    Cow::Owned(
        text.chars()
            .map(|c| match c {
                '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' => '\'',
                '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{2033}' => '"',
                c => c,
            })
            .collect(),
    )
}

/// A line as level `level` sees it.
pub(crate) fn normalise(line: &[u8], level: Level) -> Cow<'_, [u8]> {
    match level {
        Level::Exact => Cow::Borrowed(line),
        Level::TrailingWhitespace => Cow::Borrowed(trim_end(line)),
        Level::Whitespace => Cow::Borrowed(trim(line)),
        Level::Unicode => match fold_unicode(line) {
            Cow::Borrowed(b) => Cow::Borrowed(trim(b)),
            Cow::Owned(v) => Cow::Owned(trim(&v).to_vec()),
        },
    }
}

/// True when two lines are equal at `level`.
pub(crate) fn line_eq(a: &[u8], b: &[u8], level: Level) -> bool {
    match level {
        Level::Exact => a == b,
        Level::TrailingWhitespace => trim_end(a) == trim_end(b),
        Level::Whitespace => trim(a) == trim(b),
        Level::Unicode => normalise(a, level) == normalise(b, level),
    }
}

/// A fast 64-bit hash of bytes (multiply–rotate over 8-byte words, then a final mix). Not
/// for adversaries: a key match is always confirmed on the normalised bytes.
pub(crate) fn hash(bytes: &[u8]) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let mut h = (bytes.len() as u64).wrapping_mul(K);
    let mut words = bytes.chunks_exact(8);
    for w in &mut words {
        let mut buf = [0u8; 8];
        buf.copy_from_slice(w);
        h = (h.rotate_left(5) ^ u64::from_le_bytes(buf)).wrapping_mul(K);
    }
    let rest = words.remainder();
    if !rest.is_empty() {
        let mut buf = [0u8; 8];
        buf[..rest.len()].copy_from_slice(rest);
        h = (h.rotate_left(5) ^ u64::from_le_bytes(buf)).wrapping_mul(K);
    }
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h
}

/// The key of a line at a level: never 0 (0 marks "not computed yet" in caches).
pub(crate) fn key(line: &[u8], level: Level) -> u64 {
    hash(&normalise(line, level)) | 1
}

/// The levels a file is matched at: all four, or only level 1 for a non-UTF-8 file.
pub(crate) fn levels(bytes_only: bool) -> &'static [Level] {
    if bytes_only {
        &Level::ALL[..1]
    } else {
        &Level::ALL
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_whitespace_is_exactly_five_bytes() {
        for b in 0u8..=255 {
            let expected = matches!(b, b' ' | b'\t' | b'\r' | 0x0b | 0x0c);
            assert_eq!(is_ascii_ws(b), expected, "byte {b:#x}");
        }
    }

    #[test]
    fn each_level_normalises_as_the_spec_says() {
        let line = " \tx = 1; \r\x0b".as_bytes();
        assert_eq!(&*normalise(line, Level::Exact), line);
        assert_eq!(&*normalise(line, Level::TrailingWhitespace), b" \tx = 1;");
        assert_eq!(&*normalise(line, Level::Whitespace), b"x = 1;");
        let nbsp = "\u{00A0}say \u{201C}hi\u{201D} \u{2014} it\u{2019}s\u{2026}\u{200B}";
        assert_eq!(
            &*normalise(nbsp.as_bytes(), Level::Unicode),
            b"say \"hi\" - it's..."
        );
    }

    #[test]
    fn folding_table_is_complete() {
        let quotes = "\u{2018}\u{2019}\u{201A}\u{201B}\u{2032}";
        let dquotes = "\u{201C}\u{201D}\u{201E}\u{201F}\u{2033}";
        let dashes = "\u{2010}\u{2011}\u{2012}\u{2013}\u{2014}\u{2015}\u{2212}";
        let spaces: String = ['\u{00A0}', '\u{202F}', '\u{205F}', '\u{3000}']
            .into_iter()
            .chain('\u{2000}'..='\u{200A}')
            .collect();
        let removed = "\u{200B}\u{200C}\u{200D}\u{FEFF}";
        let all = format!("a{quotes}{dquotes}{dashes}{spaces}\u{2026}{removed}b");
        let folded = fold_unicode(all.as_bytes());
        let expect = format!("a'''''\"\"\"\"\"-------{}...b", " ".repeat(15));
        assert_eq!(String::from_utf8_lossy(&folded), expect);
        // Other Unicode (an en space's neighbour U+200E, accents) is kept.
        assert_eq!(
            &*fold_unicode("é\u{200E}".as_bytes()),
            "é\u{200E}".as_bytes()
        );
    }

    #[test]
    fn non_utf8_lines_only_trim() {
        let line = b"\xff\xfe x ";
        assert_eq!(&*normalise(line, Level::Unicode), b"\xff\xfe x");
    }

    #[test]
    fn keys_agree_with_equality() {
        assert_eq!(
            key(b"x  ", Level::TrailingWhitespace),
            key(b"x", Level::Exact)
        );
        assert_ne!(key(b"x  ", Level::Exact), key(b"x", Level::Exact));
        assert_ne!(key(b"", Level::Exact), 0);
        assert_ne!(hash(b"abcdefgh1"), hash(b"abcdefgh2"));
    }
}
