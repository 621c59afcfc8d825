//! Stage: plan (balance). After a text file's new bytes are built, ask the structure signals
//! whether the edit left brackets, tags or quotes unbalanced (Issue 7): a newly unbalanced
//! file adds the `unbalanced_edit` warning, or with `--strict-balance` refuses the patch. A
//! file that was already unbalanced is not blamed. Pure; never refuses without the option.

use super::content::Span;
use super::PlanError;
use crate::model::FilePatch;
use crate::report::{FileReport, Warning};
use crate::structure::{edit_balance, edit_introduced_problem, EditBalance};

use super::{Edited, Planner};

/// Where a hunk that changed something stands in the new file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Region {
    /// 1-based hunk (or edit) number.
    hunk: usize,
    /// 0-based first line of the hunk's new side in the new file.
    start: usize,
    /// Lines of the new side; a pure deletion counts the line after it (where it joined).
    len: usize,
}

impl Region {
    fn covers(&self, line: usize) -> bool {
        self.start < line && line <= self.start + self.len
    }
}

/// The new-file regions of the placed hunks that change something.
pub(super) fn regions(spans: &[Span]) -> Vec<Region> {
    spans
        .iter()
        .filter(|s| !s.already_applied)
        .map(|s| Region {
            hunk: s.hunk + 1,
            start: s.start,
            len: s.len.max(1),
        })
        .collect()
}

/// The hunk to blame for a new problem: the only hunk that changed the file, else the one
/// whose new lines hold the line where the problem was noticed, else where the unclosed or
/// mismatched opener stands.
fn blame(balance: &EditBalance, regions: &[Region]) -> Option<usize> {
    let problem = balance.new_problem()?;
    if let [only] = regions {
        return Some(only.hunk);
    }
    let lines = std::iter::once(problem.line).chain(problem.open.as_ref().map(|o| o.line));
    lines
        .into_iter()
        .find_map(|line| regions.iter().find(|r| r.covers(line)))
        .map(|r| r.hunk)
}

impl Planner<'_> {
    /// Check the balance of `shown` (its language comes from this path) before and after the
    /// edit. With `--strict-balance` the report's `balance` note says what was found, and a
    /// newly unbalanced file refuses the patch.
    pub(super) fn check_balance(
        &mut self,
        fp: &FilePatch<'_>,
        shown: &str,
        before: &[u8],
        edited: &Edited,
        report: &mut FileReport,
    ) -> Result<(), PlanError> {
        if !fp.body.edits_text() {
            return Ok(());
        }
        if self.opts.strict_balance {
            let balance = edit_balance(shown, before, &edited.bytes);
            // Name the hunk in the message too, as the warning's human form does.
            let refused = balance.to_error(shown, blame(&balance, &edited.regions));
            report.balance = Some(balance);
            return refused.map_or(Ok(()), |e| Err(e.into()));
        }
        // Only a new problem warns: the old text is lexed only when the new one is broken.
        let Some(balance) = edit_introduced_problem(shown, before, &edited.bytes) else {
            return Ok(());
        };
        let hunk = blame(&balance, &edited.regions);
        if let Some(warning) = Warning::unbalanced_edit(shown, &balance) {
            self.warnings.push(match hunk {
                Some(h) => warning.with_hunk(h),
                None => warning,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::structure::{Opened, Problem, ProblemKind};

    fn unclosed(line: usize, open_line: usize) -> EditBalance {
        EditBalance::NewlyUnbalanced {
            problem: Problem {
                kind: ProblemKind::Unclosed,
                line,
                column: 1,
                found: "end of file".into(),
                open: Some(Opened {
                    text: "{".into(),
                    line: open_line,
                    column: 1,
                }),
                hint: None,
            },
        }
    }

    fn region(hunk: usize, start: usize, len: usize) -> Region {
        Region { hunk, start, len }
    }

    #[test]
    fn the_only_changing_hunk_is_blamed() {
        assert_eq!(blame(&unclosed(40, 1), &[region(2, 10, 3)]), Some(2));
    }

    #[test]
    fn the_hunk_holding_the_problem_then_the_opener_is_blamed() {
        let regions = [region(1, 2, 2), region(2, 10, 3)];
        // Line 12 is the 2nd line of hunk 2's new side (lines 11-13).
        assert_eq!(blame(&unclosed(12, 1), &regions), Some(2));
        // The problem is at the end of the file; the opener on line 3 is hunk 1's.
        assert_eq!(blame(&unclosed(40, 3), &regions), Some(1));
        assert_eq!(blame(&unclosed(40, 30), &regions), None);
    }

    #[test]
    fn nothing_is_blamed_without_a_new_problem() {
        assert_eq!(blame(&EditBalance::StillBalanced, &[region(1, 0, 1)]), None);
    }
}
