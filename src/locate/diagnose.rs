//! Stage: locate — refusals that teach (SPEC §6): the nearest region of the file to what a
//! hunk expected, a line-by-line comparison, the first difference named in words, and the
//! candidates of an ambiguous match with the ways out.
//!
//! Pure. Runs only after a search failed, so it may be slower than the search; it never
//! changes where anything is placed.

use crate::error::{Candidate, Nearest, NumberedLine};

use super::ladder::{self, fold_char, trim, trim_end, Fold};
use super::search::{Ends, FileView};
use super::Level;

/// Lines that occur more often than this do not vote for a nearest region (a `}` or a blank
/// line says nothing about where a hunk belongs).
const MAX_VOTES_PER_LINE: usize = 64;
/// How many candidate regions are scored with a full diff.
const SCORED: usize = 5;
/// How many candidates an ambiguity message lists (the structured error has them all, up to
/// `MAX_CANDIDATES`).
const LISTED: usize = 10;
const MAX_CANDIDATES: usize = 100;

pub(crate) fn lossy(line: &[u8]) -> String {
    String::from_utf8_lossy(line).into_owned()
}

/// Where a failed search looked, in words: "in the window of 20 lines around line 41, then
/// in the whole file after the anchor at line 12".
/// A hunk pinned to an end of the file (`marker`: by `*** End of File`) was looked for there
/// only.
pub(crate) fn where_looked(
    hint: Option<usize>,
    window: usize,
    anchor: Option<usize>,
    (ends, marker): (Ends, bool),
) -> String {
    let pinned = match (ends.start, ends.end) {
        _ if marker => "at the end of the file (the hunk ends with *** End of File)",
        (true, true) => "as the whole file (the hunk has no context lines and starts at line 1)",
        (true, false) => {
            "at the start of the file (the hunk starts at line 1 and has no context lines above \
             its change)"
        }
        (false, true) => "at the end of the file (the hunk has no context lines below its change)",
        (false, false) => "",
    };
    if !pinned.is_empty() {
        return pinned.to_string();
    }
    let whole = match anchor {
        Some(a) => format!("in the whole file after the anchor at line {}", a + 1),
        None => "in the whole file".to_string(),
    };
    match hint {
        Some(h) => format!(
            "in the window of {window} lines around line {}, then {whole}",
            h + 1
        ),
        None => whole,
    }
}

/// The region of the file (starting at or after `lo`) most similar to `expected`.
pub(crate) fn nearest(
    view: &mut FileView<'_>,
    expected: &[&[u8]],
    lo: usize,
    hint: Option<usize>,
) -> Option<Nearest> {
    let n = view.len();
    if expected.is_empty() || lo >= n {
        return None;
    }
    let mut starts = voted_starts(view, expected, lo);
    if starts.is_empty() {
        // Nothing matches even loosely: look around the hint (or the start of the region).
        let centre = hint.unwrap_or(lo).clamp(lo, n - 1);
        starts = (centre.saturating_sub(25).max(lo)..(centre + 25).min(n)).collect();
    }
    let exp: Vec<String> = expected.iter().map(|l| lossy(l)).collect();
    let mut best: Option<(f32, usize)> = None;
    for s in starts {
        let end = (s + expected.len()).min(n);
        let act: Vec<String> = view.lines[s..end].iter().map(|l| lossy(l)).collect();
        let score = similarity(&exp, &act);
        // On a tie, the region nearer the hint (a region offset by a line scores the same).
        let nearer = |b: usize| hint.is_some_and(|h| s.abs_diff(h) < b.abs_diff(h));
        if best.is_none_or(|(b, bs)| score > b || (score == b && nearer(bs))) {
            best = Some((score, s));
        }
    }
    let (similarity, s) = best?;
    let end = (s + expected.len()).min(n);
    let lines = numbered(view.lines, s, end);
    let difference = first_difference(expected, view.lines, s, end);
    Some(Nearest {
        start_line: s + 1,
        lines,
        difference,
        similarity,
    })
}

/// Candidate starts: each expected line that occurs (at level 4) rarely in the file votes for
/// the start it implies; the best-voted starts win.
fn voted_starts(view: &mut FileView<'_>, expected: &[&[u8]], lo: usize) -> Vec<usize> {
    let mut votes: std::collections::HashMap<usize, usize> = Default::default();
    for (j, line) in expected.iter().enumerate() {
        if trim(line).is_empty() {
            continue;
        }
        let occurrences = view.occurrences(Level::Unicode, ladder::key(line, Level::Unicode));
        if occurrences.len() > MAX_VOTES_PER_LINE {
            continue;
        }
        for p in occurrences {
            if let Some(s) = p.checked_sub(j).filter(|&s| s >= lo) {
                *votes.entry(s).or_default() += 1;
            }
        }
    }
    let mut ranked: Vec<(usize, usize)> = votes.into_iter().collect();
    ranked.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    ranked.into_iter().take(SCORED).map(|(s, _)| s).collect()
}

/// 0.0–1.0: how alike two runs of lines are (characters, or whole lines for long runs).
fn similarity(expected: &[String], actual: &[String]) -> f32 {
    let a = expected.join("\n");
    let b = actual.join("\n");
    if a.len() + b.len() > 20_000 {
        let a: Vec<&str> = expected.iter().map(String::as_str).collect();
        let b: Vec<&str> = actual.iter().map(String::as_str).collect();
        return similar::TextDiff::from_slices(&a, &b).ratio();
    }
    similar::TextDiff::from_chars(&a, &b).ratio()
}

pub(crate) fn numbered(lines: &[&[u8]], from: usize, to: usize) -> Vec<NumberedLine> {
    (from..to.min(lines.len()))
        .map(|i| NumberedLine {
            line: i + 1,
            text: lossy(lines[i]),
        })
        .collect()
}

/// The first line where the file's lines `start..end` differ from the patch, named in words,
/// with its number. When the patch's lines are the file's offset by one or more lines, that
/// is what is named (lines missing or extra), never a changed word.
fn first_difference(
    expected: &[&[u8]],
    lines: &[&[u8]],
    start: usize,
    end: usize,
) -> Option<String> {
    let actual = &lines[start..end];
    for (j, exp) in expected.iter().enumerate() {
        match actual.get(j) {
            Some(act) if act == exp => continue,
            Some(act) => {
                let n = start + j + 1;
                let what = offset(&expected[j..], &lines[start + j..], n)
                    .unwrap_or_else(|| describe(exp, act));
                return Some(format!("line {n}: {what}"));
            }
            None => {
                return Some(format!(
                    "the file ends at line {} but the patch expects {} more line(s)",
                    start + actual.len(),
                    expected.len() - j
                ))
            }
        }
    }
    None
}

/// How many lines the patch's must skip, or the file's, before they run in step again for
/// a few lines (up to 3, as many as the patch has left).
const IN_STEP: usize = 3;

/// The patch's lines `expected` against the file's lines from the same point `actual` (the
/// rest of the file), first lines differing: "1 line missing" when skipping k of the patch's
/// lines brings them in step with the file's, "2 extra lines in the file" when skipping k of
/// the file's does; the smaller k wins. `n` is the 1-based file line where they differ.
fn offset(expected: &[&[u8]], actual: &[&[u8]], n: usize) -> Option<String> {
    let same = |a: &[&[u8]], b: &[&[u8]]| -> bool {
        a.len() <= b.len()
            && a.iter()
                .zip(b)
                .all(|(x, y)| ladder::line_eq(x, y, Level::Unicode))
    };
    let plural = |k: usize| if k == 1 { "line" } else { "lines" };
    for k in 1..expected.len() {
        let rest = &expected[k..];
        if same(&rest[..rest.len().min(IN_STEP)], actual) {
            return Some(format!(
                "{k} {} missing: the patch expects `{}` here, but its next lines are the \
                 file's from line {n} on",
                plural(k),
                lossy(expected[0])
            ));
        }
        let head = &expected[..expected.len().min(IN_STEP)];
        if actual.get(k..).is_some_and(|later| same(head, later)) {
            return Some(format!(
                "{k} extra {} in the file: `{}` stands here where the patch does not expect \
                 it; the patch's lines are the file's from line {} on",
                plural(k),
                lossy(actual[0]),
                n + k
            ));
        }
    }
    None
}

/// Name the difference between a patch line and a file line.
pub(crate) fn describe(exp: &[u8], act: &[u8]) -> String {
    if contains(exp, b"\\n") && !contains(act, b"\\n") {
        return "the patch has a literal `\\n` where the file has a line break \
                (write separate lines)"
            .to_string();
    }
    if trim_end(exp) == trim_end(act) {
        return trailing(exp, act);
    }
    if trim(exp) == trim(act) {
        return leading(exp, act);
    }
    if act.contains(&b'\r') != exp.contains(&b'\r') {
        let who = if act.contains(&b'\r') {
            "the file"
        } else {
            "the patch"
        };
        return format!("{who} has a carriage return (CR) inside the line");
    }
    if ladder::line_eq(exp, act, Level::Unicode) {
        return unicode(exp, act);
    }
    words(exp, act)
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// Whitespace in words: "4 spaces", "a tab and 2 spaces".
pub(crate) fn ws_words(ws: &[u8]) -> String {
    let count = |b: u8| ws.iter().filter(|&&x| x == b).count();
    let mut parts = Vec::new();
    for (b, one, many) in [
        (b'\t', "a tab", "tabs"),
        (b' ', "a space", "spaces"),
        (b'\r', "a CR", "CRs"),
        (0x0c, "a form feed", "form feeds"),
        (0x0b, "a vertical tab", "vertical tabs"),
    ] {
        match count(b) {
            0 => {}
            1 => parts.push(one.to_string()),
            k => parts.push(format!("{k} {many}")),
        }
    }
    if parts.is_empty() {
        "nothing".to_string()
    } else {
        parts.join(" and ")
    }
}

fn trailing(exp: &[u8], act: &[u8]) -> String {
    let (e, a) = (&exp[trim_end(exp).len()..], &act[trim_end(act).len()..]);
    if a.contains(&b'\r') && !e.contains(&b'\r') {
        return "the file's line ends with a CR (a CRLF line ending inside the text) \
                that the patch lacks"
            .to_string();
    }
    format!(
        "trailing whitespace: the file has {} at the end of the line where the patch has {}",
        ws_words(a),
        ws_words(e)
    )
}

fn leading(exp: &[u8], act: &[u8]) -> String {
    let lead = |l: &[u8]| trim_end(l).len() - trim(l).len();
    let (e, a) = (&exp[..lead(exp)], &act[..lead(act)]);
    let what = if a.contains(&b'\t') != e.contains(&b'\t') {
        "tab vs spaces"
    } else {
        "indentation"
    };
    format!(
        "{what}: the file indents with {} where the patch has {}",
        ws_words(a),
        ws_words(e)
    )
}

/// The first character that folds the same but differs (a curly quote, a dash, an NBSP).
fn unicode(exp: &[u8], act: &[u8]) -> String {
    let (e, a) = (lossy(exp), lossy(act));
    let pick =
        |s: &str| -> Option<char> { s.chars().find(|c| !matches!(fold_char(*c), Fold::Keep)) };
    let (fc, pc) = (pick(&a), pick(&e));
    let name = |c: char| -> String {
        let kind = match c {
            '\u{00A0}' => "a non-breaking space",
            '\u{2018}'..='\u{201F}' | '\u{2032}' | '\u{2033}' => "a curly quote",
            '\u{2010}'..='\u{2015}' | '\u{2212}' => "a dash",
            '\u{2026}' => "an ellipsis",
            '\u{200B}'..='\u{200D}' | '\u{FEFF}' => "an invisible zero-width character",
            _ => "a Unicode space",
        };
        // Spaces and zero-width characters are invisible: name them by code point only.
        let glyph = match c {
            '\u{2018}'..='\u{201F}' | '\u{2032}' | '\u{2033}' | '\u{2010}'..='\u{2015}' => {
                format!("{c} ")
            }
            '\u{2212}' | '\u{2026}' => format!("{c} "),
            _ => String::new(),
        };
        format!("{kind} {glyph}(U+{:04X})", c as u32)
    };
    let plain = |c: char| -> String {
        match fold_char(c) {
            Fold::To(" ") => "a plain space".to_string(),
            Fold::To(s) => format!("`{s}`"),
            _ => "nothing".to_string(),
        }
    };
    match (fc, pc) {
        (Some(c), _) => format!("the file has {} where the patch has {}", name(c), plain(c)),
        (None, Some(c)) => format!("the patch has {} where the file has {}", name(c), plain(c)),
        (None, None) => "the lines differ in Unicode punctuation or spaces".to_string(),
    }
}

fn tokens(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in line.char_indices() {
        let word = c.is_alphanumeric() || c == '_';
        match (word, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                out.push(&line[s..i]);
                start = None;
            }
            _ => {}
        }
        if !word && !c.is_whitespace() {
            out.push(&line[i..i + c.len_utf8()]);
        }
    }
    if let Some(s) = start {
        out.push(&line[s..]);
    }
    out
}

/// The first differing word (an identifier changed, a token added or missing).
fn words(exp: &[u8], act: &[u8]) -> String {
    let (e, a) = (lossy(exp), lossy(act));
    let (te, ta) = (tokens(&e), tokens(&a));
    let k = te.iter().zip(&ta).take_while(|(x, y)| x == y).count();
    match (te.get(k), ta.get(k)) {
        (Some(x), Some(y)) => {
            let ident = |s: &str| s.chars().all(|c| c.is_alphanumeric() || c == '_');
            let number = |s: &str| s.chars().all(|c| c.is_ascii_digit());
            let what = if number(x) && number(y) {
                "a changed number"
            } else if ident(x) && ident(y) {
                "a changed identifier"
            } else {
                "different text"
            };
            format!("{what}: the patch has `{x}` where the file has `{y}`")
        }
        (Some(x), None) => format!("the patch has `{x}` more at the end of the line"),
        (None, Some(y)) => format!("the file has `{y}` more at the end of the line"),
        (None, None) => "the lines differ only in spacing between words".to_string(),
    }
}

/// A line with its invisible characters shown: tab `\t`, CR `\r`, other controls and
/// Unicode spaces / zero-width characters as `\u{..}`.
fn visible(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    for c in line.chars() {
        match c {
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control()
                || matches!(
                    c,
                    '\u{00A0}' | '\u{2000}'..='\u{200D}' | '\u{202F}' | '\u{205F}'
                )
                || matches!(c, '\u{3000}' | '\u{FEFF}') =>
            {
                out.push_str(&format!("\\u{{{:04x}}}", c as u32));
            }
            c => out.push(c),
        }
    }
    out
}

/// The region at `s` itself (for placements that may only go there: `*** End of File`,
/// `--unidiff-zero`).
pub(crate) fn at(lines: &[&[u8]], expected: &[&[u8]], s: usize) -> Option<Nearest> {
    let s = s.min(lines.len());
    let end = (s + expected.len()).min(lines.len());
    if s >= end {
        return None;
    }
    let exp: Vec<String> = expected.iter().map(|l| lossy(l)).collect();
    let act: Vec<String> = lines[s..end].iter().map(|l| lossy(l)).collect();
    Some(Nearest {
        start_line: s + 1,
        lines: numbered(lines, s, end),
        difference: first_difference(expected, lines, s, end),
        similarity: similarity(&exp, &act),
    })
}

/// The line-by-line comparison block of a context-not-found message.
pub(crate) fn comparison(expected: &[&[u8]], nearest: &Nearest) -> String {
    let mut out = format!(
        "nearest text: lines {}-{} ({:.0}% similar):\n",
        nearest.start_line,
        nearest.start_line + nearest.lines.len().saturating_sub(1),
        nearest.similarity * 100.0
    );
    for (j, exp) in expected.iter().enumerate() {
        let exp = lossy(exp);
        match nearest.lines.get(j) {
            Some(act) if act.text == exp => {
                out.push_str(&format!("  {:>6} | {}\n", act.line, act.text));
            }
            Some(act) => {
                out.push_str(&format!("- patch  | {}\n", visible(&exp)));
                out.push_str(&format!("+ {:>6} | {}\n", act.line, visible(&act.text)));
            }
            None => out.push_str(&format!("- patch  | {}\n", visible(&exp))),
        }
    }
    if let Some(d) = &nearest.difference {
        out.push_str(&format!("first difference, {d}"));
    }
    out.trim_end().to_string()
}

/// Candidates of an ambiguous match: each start with one line of context on each side, and
/// what selects it (`selects(k)` for `starts[k]`).
pub(crate) fn candidates(
    lines: &[&[u8]],
    starts: &[usize],
    mut selects: impl FnMut(usize) -> Option<serde_json::Value>,
) -> Vec<Candidate> {
    starts
        .iter()
        .take(MAX_CANDIDATES)
        .enumerate()
        .map(|(k, &s)| Candidate {
            line: s + 1,
            context: numbered(lines, s.saturating_sub(1), s + 2),
            select: selects(k),
        })
        .collect()
}

/// "lines 10 and 88", "lines 3, 9 and 12 and 5 more".
pub(crate) fn line_list(starts: &[usize]) -> String {
    let shown: Vec<String> = starts
        .iter()
        .take(LISTED)
        .map(|s| (s + 1).to_string())
        .collect();
    let more = starts.len().saturating_sub(LISTED);
    let mut text = match shown.split_last() {
        Some((last, [])) => format!("line {last}"),
        Some((last, rest)) if more == 0 => format!("lines {} and {last}", rest.join(", ")),
        _ => format!("lines {}", shown.join(", ")),
    };
    if more > 0 {
        text.push_str(&format!(" and {more} more"));
    }
    text
}

/// The candidate block of an ambiguity message: numbered, each with what selects it.
pub(crate) fn candidate_block(candidates: &[Candidate]) -> String {
    let mut out = String::new();
    for (k, c) in candidates.iter().take(LISTED).enumerate() {
        let select = match &c.select {
            // A selector of several lines (the `*** Base:` or `index` line, then the `@@`
            // line) is shown one line after the other.
            Some(serde_json::Value::String(lines)) => {
                format!(", selected by `{}`", lines.replace('\n', "` with `"))
            }
            Some(edit) => format!(", selected by sending instead the edit {edit}"),
            None => String::new(),
        };
        out.push_str(&format!(
            "candidate {} at line {}{select}:\n",
            k + 1,
            c.line
        ));
        for l in &c.context {
            out.push_str(&format!("  {:>6} | {}\n", l.line, l.text));
        }
    }
    out.trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differences_are_named() {
        let cases: [(&str, &str, &str); 8] = [
            ("    x", "\tx", "tab vs spaces"),
            ("x", "x  ", "trailing whitespace"),
            ("x", "x\r", "CR"),
            ("a b", "a\u{00A0}b", "non-breaking space"),
            ("it's", "it\u{2019}s", "curly quote"),
            ("a - b", "a \u{2013} b", "a dash"),
            ("print(\"a\\nb\")", "print(\"a", "literal `\\n`"),
            (
                "let foo = 1;",
                "let bar = 1;",
                "the patch has `foo` where the file has `bar`",
            ),
        ];
        for (exp, act, want) in cases {
            let got = describe(exp.as_bytes(), act.as_bytes());
            assert!(got.contains(want), "{exp:?} vs {act:?}: {got}");
        }
    }

    #[test]
    fn shifted_lines_are_named_missing_or_extra_not_changed() {
        let file: Vec<&[u8]> = vec![b"let a = 1;", b"let c = 3;", b"let d = 4;"];
        // The patch still has `b`, which the file no longer has: a line missing.
        let expected: Vec<&[u8]> = vec![b"let a = 1;", b"let b = 2;", b"let c = 3;"];
        let got = first_difference(&expected, &file, 0, 3).expect("a difference");
        assert!(got.starts_with("line 2: 1 line missing"), "{got}");
        assert!(got.contains("`let b = 2;`"), "{got}");
        // The file has a line the patch does not: extra lines.
        let expected: Vec<&[u8]> = vec![b"let c = 3;", b"let d = 4;"];
        let got = first_difference(&expected, &file, 0, 2).expect("a difference");
        assert!(got.starts_with("line 1: 1 extra line in the file"), "{got}");
        assert!(got.contains("from line 2 on"), "{got}");
        // A changed line that is no offset stays a changed identifier.
        let expected: Vec<&[u8]> = vec![b"let a = 1;", b"let x = 3;", b"let d = 4;"];
        let got = first_difference(&expected, &file, 0, 3).expect("a difference");
        assert!(got.contains("a changed identifier"), "{got}");
    }

    #[test]
    fn line_lists_read_naturally() {
        assert_eq!(line_list(&[9]), "line 10");
        assert_eq!(line_list(&[9, 87]), "lines 10 and 88");
        assert_eq!(line_list(&[0, 1, 2]), "lines 1, 2 and 3");
        let many: Vec<usize> = (0..12).collect();
        assert_eq!(
            line_list(&many),
            "lines 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 and 2 more"
        );
    }

    #[test]
    fn nearest_finds_the_similar_region() {
        let lines: Vec<&[u8]> = vec![b"a", b"fn f() {", b"\tx();", b"}", b"b"];
        let mut view = FileView::new(&lines);
        let expected: Vec<&[u8]> = vec![b"fn f() {", b"    x();", b"}"];
        let near = nearest(&mut view, &expected, 0, None).expect("a region");
        assert_eq!(near.start_line, 2);
        let diff = near.difference.expect("a difference");
        assert!(diff.starts_with("line 3: tab vs spaces"), "{diff}");
    }
}
