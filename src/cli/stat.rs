//! Stage: command line (output). `--stat`, `--numstat` and `--summary`: what a patch touches,
//! counted from the patch itself as `git apply` does (no file is planned or written), in
//! `git apply`'s formats so that scripts reading one can read the other.

use std::fmt::Write as _;
use std::path::Path;

use apply_patch::model::{Body, Edit, FileOp, FilePatch, LineKind, Mode, PatchSet};
use apply_patch::quote::quote_for_terminal;

/// The counts of one file patch.
struct FileStat {
    /// The path shown: the new path, else the old one; quoted as git quotes it (SPEC §6), so
    /// that the columns are laid out around what is printed.
    name: String,
    old_name: Option<String>,
    added: usize,
    deleted: usize,
    binary: bool,
}

/// What `--stat`, `--numstat` and `--summary` print for `patch` (in git's order). `input` is
/// the patch text (for rename scores); `root` serves the line count of a file that a patch
/// deletes without listing its lines (agent `*** Delete File`, JSON `delete`).
pub fn render(patch: &PatchSet<'_>, input: &[u8], root: &Path, show: super::Show) -> String {
    let stats: Vec<FileStat> = patch.files.iter().map(|f| file_stat(f, root)).collect();
    let mut out = String::new();
    if show.stat {
        out.push_str(&diffstat(&stats));
    }
    if show.numstat {
        for s in &stats {
            if s.binary {
                let _ = writeln!(out, "-\t-\t{}", s.name);
            } else {
                let _ = writeln!(out, "{}\t{}\t{}", s.added, s.deleted, s.name);
            }
        }
    }
    if show.summary {
        for f in &patch.files {
            out.push_str(&summary_line(f, input));
        }
    }
    out
}

fn file_stat(f: &FilePatch<'_>, root: &Path) -> FileStat {
    let (mut added, mut deleted) = (0, 0);
    let mut binary = false;
    match &f.body {
        Body::Hunks(hunks) => {
            for line in hunks.iter().flat_map(|h| &h.lines) {
                match line.kind {
                    LineKind::Insert => added += 1,
                    LineKind::Delete => deleted += 1,
                    LineKind::Context => {}
                }
            }
        }
        Body::Edits(edits) => {
            for edit in edits {
                let (a, d) = edit_counts(edit);
                added += a;
                deleted += d;
            }
        }
        Body::Binary(_) | Body::BinaryWithoutData => binary = true,
    }
    if f.op == FileOp::Delete && deleted == 0 && !binary {
        deleted = f
            .old_path
            .as_deref()
            .map_or(0, |p| lines_on_disk(&root.join(p)));
    }
    FileStat {
        name: quote_for_terminal(f.path()).into_owned(),
        old_name: f
            .old_path
            .as_deref()
            .filter(|o| Some(*o) != f.new_path.as_deref())
            .map(|o| quote_for_terminal(o).into_owned()),
        added,
        deleted,
        binary,
    }
}

/// Lines added and deleted by a JSON edit, as its strings say.
fn edit_counts(edit: &Edit<'_>) -> (usize, usize) {
    let lines = |s: &str| s.lines().count();
    match edit {
        Edit::Replace { old, new, .. } => (lines(new), lines(old)),
        Edit::LineRange {
            start,
            end,
            new_content,
            ..
        } => (lines(new_content), end.saturating_sub(*start) + 1),
        Edit::Insert { content, .. } | Edit::Append { content } => (lines(content), 0),
    }
}

fn lines_on_disk(path: &Path) -> usize {
    std::fs::read(path).map_or(0, |b| {
        let newlines = b.iter().filter(|&&c| c == b'\n').count();
        newlines + usize::from(!b.is_empty() && !b.ends_with(b"\n"))
    })
}

/// `git apply --stat`: names padded to the longest (at most 50, longer ones cut at the front
/// with `...`), the count in five columns, a graph scaled to fit 70 columns, and a total.
fn diffstat(stats: &[FileStat]) -> String {
    let longest = stats
        .iter()
        .flat_map(|s| std::iter::once(&s.name).chain(s.old_name.as_ref()))
        .map(|n| n.chars().count())
        .max()
        .unwrap_or(0);
    let width = longest.min(50);
    let max_change = stats.iter().map(|s| s.added + s.deleted).max().unwrap_or(0);
    let graph = if width + max_change > 70 {
        70 - width
    } else {
        max_change
    };
    let mut out = String::new();
    for s in stats {
        let name = cut_name(&s.name, width);
        if s.binary {
            let _ = writeln!(out, " {name:<width$} |  Bin");
            continue;
        }
        let (mut add, mut del) = (s.added, s.deleted);
        // Rounded to the nearest column, as git does.
        let scale = |n: usize| (n * graph + max_change / 2).checked_div(max_change);
        if let (Some(total), Some(scaled)) = (scale(add + del), scale(add)) {
            add = scaled;
            del = total.saturating_sub(scaled);
        }
        let _ = writeln!(
            out,
            " {name:<width$} |{:5} {}{}",
            s.added + s.deleted,
            "+".repeat(add),
            "-".repeat(del)
        );
    }
    let files = stats.len();
    let added: usize = stats.iter().map(|s| s.added).sum();
    let deleted: usize = stats.iter().map(|s| s.deleted).sum();
    out.push_str(&total_line(files, added, deleted));
    out
}

/// A name longer than `width`, cut at a `/` near its front and led by `...`.
fn cut_name(name: &str, width: usize) -> String {
    let len = name.chars().count();
    if len <= width {
        return name.to_string();
    }
    let skip = len + 3 - width;
    let tail: String = name.chars().skip(skip).collect();
    match tail.find('/') {
        Some(slash) => format!("...{}", &tail[slash..]),
        None => format!("...{tail}"),
    }
}

fn total_line(files: usize, added: usize, deleted: usize) -> String {
    if files == 0 {
        return " 0 files changed\n".into();
    }
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    let mut s = format!(" {files} file{} changed", plural(files));
    if added > 0 || deleted == 0 {
        let _ = write!(s, ", {added} insertion{}(+)", plural(added));
    }
    if deleted > 0 || added == 0 {
        let _ = write!(s, ", {deleted} deletion{}(-)", plural(deleted));
    }
    s.push('\n');
    s
}

/// `git apply --summary`: created and deleted files with their mode, renames and copies with
/// their common folder in front (`dir/{a => b}`), and mode changes.
fn summary_line(f: &FilePatch<'_>, input: &[u8]) -> String {
    let mode = |m: Option<Mode>, default: u32| format!("{:06o}", m.map_or(default, |m| m.0));
    let mode_change = match (f.old_mode, f.new_mode) {
        (Some(old), Some(new)) if old != new => Some(format!("{:06o} => {:06o}", old.0, new.0)),
        _ => None,
    };
    let old = f.old_path.as_deref().unwrap_or("");
    let path = quote_for_terminal(f.path());
    match f.op {
        FileOp::Add => format!(" create mode {} {path}\n", mode(f.new_mode, 0o100644)),
        FileOp::Delete => format!(
            " delete mode {} {}\n",
            mode(f.old_mode, 0o100644),
            quote_for_terminal(old)
        ),
        FileOp::Rename | FileOp::Copy => {
            let what = if f.op == FileOp::Rename {
                "rename"
            } else {
                "copy"
            };
            let score = similarity(input, f.patch_line)
                .map(|n| format!(" ({n}%)"))
                .unwrap_or_default();
            let mut s = format!(" {what} {}{score}\n", rename_text(old, f.path()));
            if let Some(change) = mode_change {
                let _ = writeln!(s, " mode change {change}");
            }
            s
        }
        FileOp::Modify | FileOp::Mode => mode_change
            .map(|c| format!(" mode change {c} {path}\n"))
            .unwrap_or_default(),
    }
}

/// `old => new`, or `common/{old => new}` when they share leading folders; a name that must
/// be quoted is shown whole, in its quotes.
fn rename_text(old: &str, new: &str) -> String {
    let (quoted_old, quoted_new) = (quote_for_terminal(old), quote_for_terminal(new));
    if quoted_old != old || quoted_new != new {
        return format!("{quoted_old} => {quoted_new}");
    }
    let mut common = 0;
    while let (Some(o), Some(n)) = (old[common..].find('/'), new[common..].find('/')) {
        if o != n || old[common..common + o] != new[common..common + n] {
            break;
        }
        common += o + 1;
    }
    if common == 0 {
        format!("{old} => {new}")
    } else {
        format!(
            "{}{{{} => {}}}",
            &old[..common],
            &old[common..],
            &new[common..]
        )
    }
}

/// The `similarity index N%` of the git header that starts at 1-based line `from`.
fn similarity(input: &[u8], from: usize) -> Option<u32> {
    let text = String::from_utf8_lossy(input);
    text.lines()
        .skip(from.saturating_sub(1))
        .take_while(|l| !l.starts_with("@@") && !l.starts_with("--- "))
        .find_map(|l| l.strip_prefix("similarity index "))
        .and_then(|n| n.trim_end_matches('%').parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renames_show_their_common_folder() {
        assert_eq!(
            rename_text("a/b/c.txt", "a/b/d.txt"),
            "a/b/{c.txt => d.txt}"
        );
        assert_eq!(rename_text("a/c.txt", "b/c.txt"), "a/c.txt => b/c.txt");
        assert_eq!(rename_text("x.txt", "y.txt"), "x.txt => y.txt");
    }

    #[test]
    fn a_rename_whose_name_must_be_quoted_is_shown_whole() {
        assert_eq!(
            rename_text("a/b\x1b.txt", "a/c.txt"),
            r#""a/b\033.txt" => a/c.txt"#
        );
    }

    #[test]
    fn totals_name_zero_counts_only_when_both_are_zero() {
        assert_eq!(total_line(1, 1, 0), " 1 file changed, 1 insertion(+)\n");
        assert_eq!(
            total_line(2, 0, 0),
            " 2 files changed, 0 insertions(+), 0 deletions(-)\n"
        );
        assert_eq!(
            total_line(2, 3, 1),
            " 2 files changed, 3 insertions(+), 1 deletion(-)\n"
        );
    }

    #[test]
    fn long_names_are_cut_at_a_folder() {
        let name = format!("{}/file.rs", "d".repeat(60));
        assert_eq!(cut_name(&name, 20), ".../file.rs");
        assert_eq!(cut_name("short", 20), "short");
    }
}
