//! Stage: parse — SEARCH/REPLACE blocks into the model's hunks (SPEC §4b "Meaning"): SEARCH
//! is the old side, REPLACE the new side, the lines equal at both ends are context, the rest
//! deleted and inserted lines; the blocks of each file in input order. Pure; an empty SEARCH
//! is marked, not decided (create, already applied or `file_exists` is the planner's call,
//! with the file at hand).

use std::borrow::Cow;

use super::{Block, Blocks};
use crate::model::{Body, FileOp, FilePatch, Hunk, Line, LineKind};

/// The blocks of one file, as hunks that apply in sequence, each to the content the previous
/// ones left (SPEC §4b).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileBlocks<'a> {
    /// The file, relative to the root.
    pub path: String,
    pub changes: Vec<Change<'a>>,
    /// 1-based line of the file's first block in the text read.
    pub patch_line: usize,
}

/// One block of a file as a hunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change<'a> {
    /// SEARCH names lines: the hunk is placed like any other (SPEC §5), its `old_start` the
    /// block's line hint.
    Hunk(Hunk<'a>),
    /// SEARCH is empty: the hunk holds REPLACE's lines, all inserted; a missing file is
    /// created with them, a file with exactly that content is already applied, an empty file
    /// is written, a non-empty one is refused (`file_exists`) — the planner decides.
    EmptySearch(Hunk<'a>),
}

impl<'a> Change<'a> {
    /// The hunk, whichever the kind.
    pub fn hunk(&self) -> &Hunk<'a> {
        match self {
            Change::Hunk(h) | Change::EmptySearch(h) => h,
        }
    }

    /// The hunk, whichever the kind.
    pub fn into_hunk(self) -> Hunk<'a> {
        match self {
            Change::Hunk(h) | Change::EmptySearch(h) => h,
        }
    }
}

/// The blocks grouped per file, files in the order of their first block, each file's blocks
/// in input order (blocks of different files are independent, so the grouping changes no
/// result).
///
/// ```
/// use apply_patch::parse::blocks::{self, Change};
/// use apply_patch::model::LineKind;
/// let text = b"a.txt\n<<<<<<< SEARCH\nkeep\nold\n=======\nkeep\nnew\n>>>>>>> REPLACE\n";
/// let files = blocks::into_files(blocks::parse(text, None).unwrap());
/// assert_eq!(files[0].path, "a.txt");
/// let Change::Hunk(hunk) = &files[0].changes[0] else { panic!("SEARCH is not empty") };
/// let kinds: Vec<LineKind> = hunk.lines.iter().map(|l| l.kind).collect();
/// assert_eq!(kinds, [LineKind::Context, LineKind::Delete, LineKind::Insert]);
/// ```
pub fn into_files(blocks: Blocks<'_>) -> Vec<FileBlocks<'_>> {
    let mut files: Vec<FileBlocks<'_>> = Vec::new();
    for block in blocks.blocks {
        let empty = block.is_empty_search();
        let at = block.patch_line;
        let path = block.path.clone();
        let hunk = block_hunk(block);
        let change = if empty {
            Change::EmptySearch(hunk)
        } else {
            Change::Hunk(hunk)
        };
        match files.iter_mut().find(|f| f.path == path) {
            Some(file) => file.changes.push(change),
            None => files.push(FileBlocks {
                path,
                changes: vec![change],
                patch_line: at,
            }),
        }
    }
    files
}

/// The blocks as file patches, in the order of [`into_files`]: a file's consecutive blocks
/// with a SEARCH are one Modify whose hunks apply in sequence (the planner reads them so under
/// [`crate::model::Rules::BLOCKS`]); a block with an empty SEARCH is an Add of REPLACE's
/// lines (a missing file is created, an empty one filled, one with exactly that content is
/// already applied, any other is `file_exists`). `base` goes to the first file patch of the
/// path, when that is a Modify (only one path is given when a Base is).
pub fn into_patches(blocks: Blocks<'_>, base: Option<String>) -> Vec<FilePatch<'_>> {
    let mut out: Vec<FilePatch<'_>> = Vec::new();
    for file in into_files(blocks) {
        let first = out.len();
        for change in file.changes {
            let at = change.hunk().patch_line;
            // A file patch of this file is the last one: the block joins it if a Modify.
            let open = out.len() > first;
            let path = Some(file.path.clone());
            let empty = matches!(change, Change::EmptySearch(_));
            let hunk = change.into_hunk();
            if empty {
                out.push(FilePatch::new(
                    FileOp::Add,
                    None,
                    path,
                    Body::Hunks(vec![hunk]),
                    at,
                ));
                continue;
            }
            match out.last_mut().filter(|_| open) {
                Some(FilePatch {
                    op: FileOp::Modify,
                    body: Body::Hunks(hunks),
                    ..
                }) => hunks.push(hunk),
                _ => out.push(FilePatch::new(
                    FileOp::Modify,
                    path.clone(),
                    path,
                    Body::Hunks(vec![hunk]),
                    at,
                )),
            }
        }
        if let Some(fp) = out.get_mut(first).filter(|fp| fp.op == FileOp::Modify) {
            fp.base = base.clone();
        }
    }
    out
}

/// One block as a hunk: the longest common prefix of SEARCH and REPLACE, then the longest
/// common suffix of what remains (they never overlap), are context lines; SEARCH's other
/// lines are deleted and REPLACE's other lines inserted, in that order. The line hint becomes
/// `old_start`; `patch_line` is the opener's line.
pub fn block_hunk<'a>(block: Block<'a>) -> Hunk<'a> {
    let Block {
        search,
        replace,
        hint,
        patch_line,
        ..
    } = block;
    let prefix = search
        .iter()
        .zip(&replace)
        .take_while(|(a, b)| a == b)
        .count();
    let suffix = search[prefix..]
        .iter()
        .rev()
        .zip(replace[prefix..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let (old_end, new_end) = (search.len() - suffix, replace.len() - suffix);
    let mut lines = Vec::with_capacity(old_end + replace.len() - prefix);
    let mut search = search.into_iter();
    let mut replace = replace.into_iter();
    let context = |text: Cow<'a, [u8]>| Line::new(LineKind::Context, text);
    lines.extend(search.by_ref().take(prefix).map(context));
    lines.extend(
        search
            .by_ref()
            .take(old_end - prefix)
            .map(|t| Line::new(LineKind::Delete, t)),
    );
    lines.extend(
        replace
            .by_ref()
            .skip(prefix)
            .take(new_end - prefix)
            .map(|t| Line::new(LineKind::Insert, t)),
    );
    lines.extend(search.map(context));
    Hunk {
        old_start: hint.map(|h| h.line),
        lines,
        patch_line,
        ..Hunk::default()
    }
}

#[cfg(test)]
mod tests {
    use super::super::{HintSource, LineHint, PathFrom};
    use super::*;

    fn block(search: &[&str], replace: &[&str]) -> Block<'static> {
        let lines = |l: &[&str]| {
            l.iter()
                .map(|s| Cow::Owned(s.as_bytes().to_vec()))
                .collect()
        };
        Block {
            path: "f".into(),
            path_from: PathFrom::Given,
            search: lines(search),
            replace: lines(replace),
            hint: None,
            end_line: None,
            patch_line: 1,
        }
    }

    fn shape(hunk: &Hunk<'_>) -> String {
        hunk.lines
            .iter()
            .map(|l| {
                let mark = match l.kind {
                    LineKind::Context => ' ',
                    LineKind::Delete => '-',
                    LineKind::Insert => '+',
                };
                format!("{mark}{}", String::from_utf8_lossy(&l.text))
            })
            .collect::<Vec<_>>()
            .join("|")
    }

    #[test]
    fn equal_ends_are_context_and_the_middle_changes() {
        let h = block_hunk(block(&["a", "b", "c"], &["a", "x", "y", "c"]));
        assert_eq!(shape(&h), " a|-b|+x|+y| c");
        let h = block_hunk(block(&["a", "b"], &["x"]));
        assert_eq!(shape(&h), "-a|-b|+x");
        let h = block_hunk(block(&["a"], &["a", "b"]));
        assert_eq!(shape(&h), " a|+b");
        let h = block_hunk(block(&["a", "b"], &["b"]));
        assert_eq!(shape(&h), "-a| b");
    }

    #[test]
    fn prefix_and_suffix_never_overlap() {
        // "a" could be both the common prefix and the common suffix: the prefix takes it.
        let h = block_hunk(block(&["a", "b", "a"], &["a"]));
        assert_eq!(shape(&h), " a|-b|-a");
        let h = block_hunk(block(&["a"], &["a", "a"]));
        assert_eq!(shape(&h), " a|+a");
        let h = block_hunk(block(&["x", "y"], &["x", "y"]));
        assert_eq!(shape(&h), " x| y");
    }

    #[test]
    fn empty_sides() {
        let h = block_hunk(block(&[], &["n1", "n2"]));
        assert_eq!(shape(&h), "+n1|+n2");
        assert!(h.is_pure_insertion());
        let h = block_hunk(block(&["gone"], &[]));
        assert_eq!(shape(&h), "-gone");
        assert!(block_hunk(block(&[], &[])).lines.is_empty());
    }

    #[test]
    fn the_hint_becomes_old_start_and_the_opener_line_the_patch_line() {
        let mut b = block(&["a"], &["b"]);
        b.hint = Some(LineHint {
            line: 12,
            source: HintSource::StartLine,
        });
        b.patch_line = 7;
        let h = block_hunk(b);
        assert_eq!(
            (h.old_start, h.old_count, h.patch_line),
            (Some(12), None, 7)
        );
        assert!(!h.end_of_file && !h.new_no_newline && h.anchors.is_empty());
    }

    #[test]
    fn blocks_gather_per_file_in_order_and_empty_search_is_marked() {
        let mut one = block(&["a"], &["b"]);
        one.path = "x".into();
        let mut two = block(&[], &["new"]);
        two.path = "y".into();
        two.patch_line = 5;
        let mut three = block(&["b"], &["c"]);
        three.path = "x".into();
        three.patch_line = 9;
        let files = into_files(Blocks {
            form: super::super::Form::Text,
            blocks: vec![one, two, three],
        });
        assert_eq!(files.len(), 2);
        assert_eq!((files[0].path.as_str(), files[0].patch_line), ("x", 1));
        assert_eq!(files[0].changes.len(), 2);
        assert_eq!(files[0].changes[1].hunk().patch_line, 9);
        assert!(matches!(files[0].changes[0], Change::Hunk(_)));
        assert_eq!((files[1].path.as_str(), files[1].patch_line), ("y", 5));
        assert!(matches!(files[1].changes[0], Change::EmptySearch(_)));
        assert_eq!(shape(&files[1].changes[0].clone().into_hunk()), "+new");
    }
}
