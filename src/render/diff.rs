//! Stage: render. A git-style unified diff of two contents of one file, computed with
//! `similar` (Myers, 3 lines of context): what `--diff` and previews print.
//!
//! Pure; the contents come from the planner. Lines are compared with their endings, so a
//! change of CRLF or of the final newline shows.

use std::fmt::Write as _;

use similar::{Algorithm, DiffOp};

use super::{side, NO_NEWLINE};

/// Lines of `bytes`, each with its `\n` (the last may lack it).
fn split(bytes: &[u8]) -> Vec<&[u8]> {
    bytes.split_inclusive(|&b| b == b'\n').collect()
}

/// A git-style diff of `old` → `new` for one file. `None` for the old path: the file is
/// created; `None` for the new path: deleted. Empty when nothing differs. Contents holding a
/// NUL byte are shown as `Binary files … differ`; other non-UTF-8 bytes are shown lossily.
///
/// ```
/// use apply_patch::render::file_diff;
/// let d = file_diff(Some("a.txt"), Some("a.txt"), b"one\ntwo\n", b"one\n2\n");
/// assert_eq!(d, "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+2\n");
/// ```
pub fn file_diff(old_path: Option<&str>, new_path: Option<&str>, old: &[u8], new: &[u8]) -> String {
    let (o, n) = match (old_path, new_path) {
        (None, None) => return String::new(),
        (Some(o), None) => (o, o),
        (None, Some(n)) => (n, n),
        (Some(o), Some(n)) => (o, n),
    };
    let renamed = o != n && old_path.is_some() && new_path.is_some();
    if old == new && !renamed && old_path.is_some() && new_path.is_some() {
        return String::new();
    }
    let mut out = format!("diff --git {} {}\n", side("a/", o), side("b/", n));
    if old_path.is_none() {
        out.push_str("new file mode 100644\n");
    } else if new_path.is_none() {
        out.push_str("deleted file mode 100644\n");
    } else if renamed {
        let _ = writeln!(
            out,
            "rename from {}\nrename to {}",
            crate::quote::quote(o.as_bytes()),
            crate::quote::quote(n.as_bytes())
        );
    }
    if old == new {
        return out;
    }
    let old_name = old_path.map_or("/dev/null".to_string(), |p| side("a/", p));
    let new_name = new_path.map_or("/dev/null".to_string(), |p| side("b/", p));
    if old.contains(&0) || new.contains(&0) {
        let _ = writeln!(out, "Binary files {old_name} and {new_name} differ");
        return out;
    }
    let _ = writeln!(out, "--- {old_name}\n+++ {new_name}");
    let (a, b) = (split(old), split(new));
    let (ia, ib) = intern(&a, &b);
    let ops = similar::capture_diff_slices(Algorithm::Myers, &ia, &ib);
    let script = script(&ops, &a, &b);
    for (start, end) in groups(&script, 3) {
        write_group(&script[start..end], &mut out);
    }
    out
}

/// The lines of both sides as small ids (equal lines, equal ids): the diff then compares
/// integers instead of byte strings.
fn intern<'a>(a: &[&'a [u8]], b: &[&'a [u8]]) -> (Vec<u32>, Vec<u32>) {
    let mut ids: std::collections::HashMap<&'a [u8], u32> = std::collections::HashMap::new();
    let mut id = |line: &'a [u8]| -> u32 {
        let next = ids.len() as u32;
        *ids.entry(line).or_insert(next)
    };
    let ia = a.iter().map(|&l| id(l)).collect();
    let ib = b.iter().map(|&l| id(l)).collect();
    (ia, ib)
}

/// One line of the edit script: its prefix, text, and 0-based positions in old and new
/// before it.
type Step<'a> = (char, &'a [u8], usize, usize);

/// The flat edit script. Positions are recomputed from the ops' lengths alone (the indices
/// `similar` stores in some ops are not always monotonic).
fn script<'a>(ops: &[DiffOp], a: &[&'a [u8]], b: &[&'a [u8]]) -> Vec<Step<'a>> {
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::with_capacity(a.len() + b.len());
    for op in ops {
        let (tag, old_r, new_r) = op.as_tag_tuple();
        let (old_len, new_len) = (old_r.len(), new_r.len());
        if tag == similar::DiffTag::Equal {
            for k in 0..old_len {
                out.push((' ', a[i + k], i + k, j + k));
            }
        } else {
            for k in 0..old_len {
                out.push(('-', a[i + k], i + k, j));
            }
            for k in 0..new_len {
                out.push(('+', b[j + k], i + old_len, j + k));
            }
        }
        i += old_len;
        j += new_len;
    }
    out
}

/// Index ranges of the script to show as hunks: every change with up to `context` equal
/// lines around it, hunks closer than twice that merged.
fn groups(script: &[Step<'_>], context: usize) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    for (k, step) in script.iter().enumerate() {
        if step.0 == ' ' {
            continue;
        }
        let start = k.saturating_sub(context);
        let end = (k + 1 + context).min(script.len());
        match out.last_mut() {
            Some(last) if start <= last.1 => last.1 = end,
            _ => out.push((start, end)),
        }
    }
    out
}

fn write_group(steps: &[Step<'_>], out: &mut String) {
    let Some(first) = steps.first() else {
        return;
    };
    let old_count = steps.iter().filter(|s| s.0 != '+').count();
    let new_count = steps.iter().filter(|s| s.0 != '-').count();
    let head = |pos: usize, count: usize| {
        let start = if count == 0 { pos } else { pos + 1 };
        if count == 1 {
            format!("{start}")
        } else {
            format!("{start},{count}")
        }
    };
    let _ = writeln!(
        out,
        "@@ -{} +{} @@",
        head(first.2, old_count),
        head(first.3, new_count)
    );
    for (prefix, text, _, _) in steps {
        line(*prefix, text, out);
    }
}

fn line(prefix: char, text: &[u8], out: &mut String) {
    out.push(prefix);
    match text.strip_suffix(b"\n") {
        Some(t) => {
            out.push_str(&String::from_utf8_lossy(t));
            out.push('\n');
        }
        None => {
            out.push_str(&String::from_utf8_lossy(text));
            out.push('\n');
            out.push_str(NO_NEWLINE);
        }
    }
}
