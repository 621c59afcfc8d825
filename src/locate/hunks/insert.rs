//! Stage: locate — hunks without old lines (SPEC §5 "Hint", "Anchored ends"): a pure
//! insertion after its anchor, at its hint or at the end; the diff of an empty file; and
//! `--unidiff-zero` hunks placed exactly at their line numbers.
//!
//! Pure, like the rest of the locator: never decides the whole patch's already-applied state.

use crate::model::Hunk;

use super::super::diagnose::lossy;
use super::super::ladder;
use super::super::search::{Ends, Pattern, Scope};
use super::super::{Fuzz, Level, LocateError, PatchPart, Piece, Placement};
use super::applied::applied;
use super::{final_newline, order_hint, Aim, Locator, Missing};

impl Locator<'_, '_> {
    /// A hunk without old lines: after its anchor, else at its hint, else at the end; never
    /// above the previous hunk.
    pub(super) fn place_insertion(
        &mut self,
        index: usize,
        hunk: &Hunk<'_>,
        aim: &Aim,
    ) -> Result<Placement, LocateError> {
        let n = self.view.len();
        if aim.ends.start && aim.ends.end {
            return self.fill_empty(index, hunk, aim.explicit);
        }
        let pos = if aim.ends.end {
            n
        } else {
            aim.anchor.map(|a| a + 1).or(aim.hint).unwrap_or(n)
        };
        match self.prev {
            Some(prev) if pos < prev.floor => {
                let place = match aim.anchor {
                    Some(a) => format!("after its anchor at line {}", a + 1),
                    None => "at its line number".to_string(),
                };
                Err(LocateError::ContextNotFound {
                    unit: PatchPart::Hunk,
                    hunk: index,
                    message: format!(
                        "the hunk inserts before line {} ({place}), above hunk {}, whose match \
                         starts at line {}",
                        pos + 1,
                        prev.hunk + 1,
                        prev.start + 1
                    ),
                    below: None,
                    expected: Vec::new(),
                    nearest: None,
                    hint: order_hint(prev.hunk),
                })
            }
            _ => Ok(self.insertion_at(index, hunk, pos, aim.explicit)),
        }
    }

    /// A unified hunk with no old lines and no context (`@@ -0,0 +1,N @@`, the diff of an
    /// empty file): pinned to both ends, it fills an empty file, is already applied to a
    /// file that holds exactly its lines, and is refused anywhere else (SPEC §5 "Anchored
    /// ends"), as `git apply` refuses it.
    fn fill_empty(
        &mut self,
        index: usize,
        hunk: &Hunk<'_>,
        explicit: Option<usize>,
    ) -> Result<Placement, LocateError> {
        let n = self.view.len();
        if n == 0 || self.view.lines.iter().copied().eq(hunk.new_lines()) {
            return Ok(self.insertion_at(index, hunk, 0, explicit));
        }
        let lines = if n == 1 { "line" } else { "lines" };
        Err(LocateError::ContextNotFound {
            unit: PatchPart::Hunk,
            hunk: index,
            message: format!(
                "the hunk fills an empty file (it has no old lines and no context), but the \
                 file has {n} {lines}"
            ),
            below: None,
            expected: Vec::new(),
            nearest: None,
            hint: "the diff was made against an empty version of the file: re-read the file and \
                   make the diff again"
                .to_string(),
        })
    }

    pub(super) fn insertion_at(
        &mut self,
        index: usize,
        hunk: &Hunk<'_>,
        pos: usize,
        explicit: Option<usize>,
    ) -> Placement {
        let n = self.view.len();
        let new: Vec<&[u8]> = hunk.new_lines().collect();
        let k = new.len();
        // Already there? Right at the insertion point, or (inserting at the end) just before it.
        let at = if pos == n {
            n.checked_sub(k)
        } else {
            Some(pos)
        };
        if let Some(s) = at.filter(|&s| k > 0 && self.view.lines.get(s..s + k) == Some(&new[..])) {
            return applied(index, s, k, explicit);
        }
        Placement {
            hunk: index,
            start: pos,
            old_len: 0,
            level: Level::Exact,
            offset: explicit.map(|h| pos as isize - h as isize),
            already_applied: false,
            fuzz: Fuzz::default(),
            pieces: new
                .iter()
                .map(|t| Piece::Insert {
                    text: t.to_vec(),
                    replaces: None,
                })
                .collect(),
            final_newline: final_newline(hunk, pos == n),
        }
    }

    /// `--unidiff-zero`: a hunk without context goes exactly at its line numbers.
    pub(super) fn place_exactly(
        &mut self,
        index: usize,
        hunk: &Hunk<'_>,
    ) -> Result<Placement, LocateError> {
        let n = self.view.len();
        let start = hunk.old_start.unwrap_or(0);
        let mut pat = Pattern::new(hunk.old_lines().collect());
        if pat.len() == 0 {
            let pos = if hunk.old_count == Some(0) {
                start
            } else {
                start.saturating_sub(1)
            };
            if pos > n {
                let what = format!("the hunk inserts after line {pos}");
                return Err(past_the_end(index, &what, n, Vec::new()));
            }
            return Ok(self.insertion_at(index, hunk, pos, Some(pos)));
        }
        let s = start.saturating_sub(1);
        if s + pat.len() > n {
            let what = format!("the hunk deletes lines {}-{}", s + 1, s + pat.len());
            let expected = pat.lines.iter().map(|l| lossy(l)).collect();
            return Err(past_the_end(index, &what, n, expected));
        }
        for &level in ladder::levels(self.opts.bytes_only) {
            if self.view.matches_at(&mut pat, level, s) {
                return self.build(index, hunk, s, level, Some(s));
            }
        }
        let scope = Scope {
            lo: 0,
            hint: Some(s),
            ends: Ends::default(),
            window: 0,
        };
        let looked = format!("exactly at line {} (--unidiff-zero)", s + 1);
        Err(self.not_found(
            index,
            Missing::lines("deleted lines"),
            &pat.lines,
            &scope,
            looked,
        ))
    }
}

/// A `--unidiff-zero` hunk whose line numbers lie past the end of an `n`-line file: refused
/// rather than put at the end (where `git apply` would put it), since the patch was made
/// against another version of the file.
fn past_the_end(index: usize, what: &str, n: usize, expected: Vec<String>) -> LocateError {
    let lines = if n == 1 { "line" } else { "lines" };
    LocateError::ContextNotFound {
        unit: PatchPart::Hunk,
        hunk: index,
        message: format!("{what} (--unidiff-zero), but the file has only {n} {lines}"),
        below: None,
        expected,
        nearest: None,
        hint: "the patch was made against a longer version of the file: re-read the file and \
               make the diff again"
            .to_string(),
    }
}
