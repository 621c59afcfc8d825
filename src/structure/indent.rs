//! Ranges by indentation, for Python and YAML: a block is a header line (Python: a logical
//! line ending in `:`; YAML: a key or `-` item) and the lines after it that are deeper.
//!
//! Stage: structure signals. Pure; reads the lexer's mask, so a `def` inside a docstring, a
//! `#` comment at column 0 inside a function or the lines of a YAML block scalar never
//! count as structure.

use super::lang::Lang;
use super::range::{line_end, Ctx};

/// What one line is, structurally.
#[derive(Debug, Clone, Copy, Default)]
struct LineInfo {
    /// Indentation width (a tab advances to the next multiple of 8).
    indent: usize,
    /// Starts a statement (Python logical line) or a node (YAML): not blank, not a comment,
    /// not inside a string, brackets or a backslash continuation.
    structural: bool,
    /// Has text (a comment counts).
    text: bool,
    /// A comment-only line.
    comment: bool,
    /// YAML: starts with `- `.
    dash: bool,
}

/// The Python or YAML block (with `function`: Python `def`/`class`) enclosing the 1-based
/// `line`, as 1-based `(start, end)`.
pub(crate) fn range(ctx: &Ctx<'_>, line: usize, function: bool) -> Option<(usize, usize)> {
    let info = line_infos(ctx);
    let yaml = ctx.lang == Lang::Yaml;
    let target = line - 1;
    // Start from the statement the target line belongs to.
    let mut h = target;
    while h > 0 && info[h].text && !info[h].structural && !info[h].comment {
        h -= 1;
    }
    let mut min_indent = usize::MAX;
    let mut min_all_dash = true;
    loop {
        let li = info[h];
        if li.structural {
            let ancestor = li.indent < min_indent
                || (yaml && li.indent == min_indent && min_all_dash && key_opens(ctx, h));
            if ancestor {
                if let Some(end) = block_end(ctx, &info, h) {
                    if end >= target && (!function || declares_function(ctx, h)) {
                        return Some((h + 1, end + 1));
                    }
                }
            }
            if li.indent < min_indent {
                min_indent = li.indent;
                min_all_dash = li.dash;
            } else if li.indent == min_indent {
                min_all_dash &= li.dash;
            }
        }
        if h == 0 {
            return None;
        }
        h -= 1;
    }
}

fn mask_line<'a>(ctx: &Ctx<'a>, i: usize) -> &'a [u8] {
    let s = ctx.starts[i];
    &ctx.scan.mask[s..line_end(ctx.scan.mask.as_slice(), s)]
}

fn text_line<'a>(ctx: &Ctx<'a>, i: usize) -> &'a [u8] {
    let s = ctx.starts[i];
    &ctx.text[s..line_end(ctx.text, s)]
}

/// A YAML key with nothing after its `:` (its sequence may sit at its own indentation).
fn key_opens(ctx: &Ctx<'_>, i: usize) -> bool {
    let mask = mask_line(ctx, i).trim_ascii_end();
    // The mask blanks the value (`- uses: x` masks to `-     :`): the text after the `:`
    // must be empty or a comment.
    mask.ends_with(b":") && {
        let after = text_line(ctx, i)[mask.len()..].trim_ascii();
        after.is_empty() || after.starts_with(b"#")
    }
}

fn declares_function(ctx: &Ctx<'_>, i: usize) -> bool {
    let words: Vec<&[u8]> = mask_line(ctx, i)
        .split(|b| b.is_ascii_whitespace() || *b == b'(' || *b == b':')
        .filter(|w| !w.is_empty())
        .take(2)
        .collect();
    matches!(
        words.as_slice(),
        [b"def" | b"class", ..] | [b"async", b"def"]
    )
}

fn line_infos(ctx: &Ctx<'_>) -> Vec<LineInfo> {
    let mut info = vec![LineInfo::default(); ctx.lines];
    // Lines that start inside a multi-line string or scalar.
    let mut inside = vec![false; ctx.lines];
    for &(a, b) in &ctx.scan.spans {
        let first = ctx.line_of(a);
        for (l, flag) in inside
            .iter_mut()
            .enumerate()
            .take(ctx.line_of(b.saturating_sub(1)))
            .skip(first)
        {
            *flag = ctx.starts[l] > a;
        }
    }
    let mut depth = 0usize;
    let mut backslash = false;
    for (i, li) in info.iter_mut().enumerate() {
        let text = text_line(ctx, i);
        let mask = mask_line(ctx, i);
        li.indent = text
            .iter()
            .take_while(|b| matches!(b, b' ' | b'\t'))
            .fold(0, |w, &b| if b == b'\t' { w / 8 * 8 + 8 } else { w + 1 });
        li.text = text.iter().any(|b| !b.is_ascii_whitespace());
        let code = mask.iter().any(|b| !b.is_ascii_whitespace());
        li.comment = li.text && !code && !inside[i];
        li.structural = code && depth == 0 && !backslash && !inside[i];
        li.dash = mask.trim_ascii_start().starts_with(b"-");
        for &b in mask {
            match b {
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
        backslash = mask.trim_ascii_end().ends_with(b"\\");
    }
    info
}

/// The last line (0-based) of the block headed by line `h`, or `None` when `h` heads no
/// block (a Python line not ending in `:`, a YAML node without children).
fn block_end(ctx: &Ctx<'_>, info: &[LineInfo], h: usize) -> Option<usize> {
    let yaml = ctx.lang == Lang::Yaml;
    let head = info[h];
    // The header's logical line: continuation lines after it.
    let mut logical_end = h;
    while logical_end + 1 < info.len()
        && info[logical_end + 1].text
        && !info[logical_end + 1].structural
        && !info[logical_end + 1].comment
    {
        logical_end += 1;
    }
    if !yaml {
        let last = (h..=logical_end)
            .rev()
            .map(|i| mask_line(ctx, i).trim_ascii_end())
            .find(|m| !m.is_empty())?;
        if !last.ends_with(b":") {
            return None;
        }
    }
    let key = yaml && key_opens(ctx, h);
    let mut end = logical_end;
    for (k, li) in info.iter().enumerate().skip(logical_end + 1) {
        if li.structural
            && (li.indent < head.indent || (li.indent == head.indent && !(key && li.dash)))
        {
            break;
        }
        let trailing_comment = li.comment && li.indent <= head.indent;
        if li.text && !trailing_comment {
            end = k;
        }
    }
    (end > logical_end).then_some(end)
}
