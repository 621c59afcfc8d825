//! Stage: locate — fuzz under uniqueness (SPEC §5 "Fuzz"): when no level of the ladder finds
//! a hunk, its outer context lines are ignored step by step, and the trimmed hunk goes through
//! the already-applied check and the ladder again. A match is taken only when it is the one
//! match of the trimmed hunk in the whole file, in order, and the hunk trimmed as far as fuzz
//! allows matches nowhere else: no hint, no window and no nearness ever chooses.
//!
//! Pure. Runs only after the ladder found nothing (never on the common path); never trims a
//! deleted or inserted line, a pinned end, or an end with `\ No newline at end of file`.

use crate::model::{Hunk, LineKind};

use super::super::ladder;
use super::super::search::{Ends, Pattern, Scope};
use super::super::{Fuzz, Level, LocateError, PatchPart, Placement};
use super::applied::Around;
use super::{order_hint, Aim, Locator};

/// The next step when fuzz found the hunk in several places.
const FUZZ_WAYS_OUT: &str = "the hunk's context differs from the file, and what is left once \
    its outer context lines are ignored stands in several places: make the hunk again against \
    the file as it is, with more context lines";

/// The trims fuzz tries on `hunk`, in order: step k ignores up to k outer context lines at
/// each end that can lose them. An end can when it begins with context, is not pinned, and
/// (at the bottom) carries no `\ No newline` marker; it keeps one context line. At each step
/// the top end trims its next line first, then the bottom end, each only while a non-blank old
/// line is left: an end whose next line would leave only blank lines keeps it, and the other
/// end goes on (a hunk at the top of a file whose lower context is `""`, `""`, `def f():`
/// may still lose two lines above). A step that trims no more than the one before it ends the
/// list.
pub(super) fn steps(hunk: &Hunk<'_>, ends: Ends, fuzz: usize) -> Vec<Fuzz> {
    let context_run = |lines: &mut dyn Iterator<Item = &crate::model::Line<'_>>| {
        lines.take_while(|l| l.kind == LineKind::Context).count()
    };
    let leading = context_run(&mut hunk.lines.iter());
    let trailing = context_run(&mut hunk.lines.iter().rev());
    // A hunk of context lines only has no change to hold: nothing to trim towards.
    if leading == hunk.lines.len() {
        return Vec::new();
    }
    let no_newline = hunk.old_no_newline || hunk.new_no_newline;
    let top_max = if ends.start {
        0
    } else {
        leading.saturating_sub(1)
    };
    let bottom_max = if ends.end || no_newline {
        0
    } else {
        trailing.saturating_sub(1)
    };
    let keeps_text = |trim: Fuzz| {
        trimmed(hunk, trim)
            .old_lines()
            .any(|l| !ladder::trim(l).is_empty())
    };
    let mut out: Vec<Fuzz> = Vec::new();
    let mut trim = Fuzz::default();
    for k in 1..=fuzz {
        let before = trim;
        let top = Fuzz {
            top: trim.top + 1,
            ..trim
        };
        if trim.top < k.min(top_max) && keeps_text(top) {
            trim = top;
        }
        let bottom = Fuzz {
            bottom: trim.bottom + 1,
            ..trim
        };
        if trim.bottom < k.min(bottom_max) && keeps_text(bottom) {
            trim = bottom;
        }
        if trim == before {
            break;
        }
        out.push(trim);
    }
    out
}

/// `hunk` without its `trim.top` first and `trim.bottom` last lines (all context lines).
pub(super) fn trimmed<'h>(hunk: &Hunk<'h>, trim: Fuzz) -> Hunk<'h> {
    Hunk {
        lines: hunk.lines[trim.top..hunk.lines.len() - trim.bottom].to_vec(),
        anchors: Vec::new(),
        ..hunk.clone()
    }
}

/// What one step of fuzz decided.
enum Step {
    /// Nothing at any level: try the next step.
    Nothing,
    Placed(Placement),
    Refused(LocateError),
}

impl Locator<'_, '_> {
    /// Fuzz for a hunk no level found (SPEC §5 "Fuzz"): its placement with `fuzz` set, a
    /// refusal (several places, or one out of order), or None when no step finds it.
    pub(super) fn fuzz(
        &mut self,
        index: usize,
        hunk: &Hunk<'_>,
        aim: &Aim,
    ) -> Option<Result<Placement, LocateError>> {
        let steps = steps(hunk, aim.ends, self.opts.fuzz);
        let widest = *steps.last()?;
        for trim in steps {
            match self.fuzz_step(index, hunk, aim, (trim, widest)) {
                Step::Nothing => {}
                Step::Placed(p) => return Some(Ok(p)),
                Step::Refused(e) => return Some(Err(e)),
            }
        }
        None
    }

    /// One step: the hunk trimmed by `trim` through the already-applied check and the
    /// ladder, each match checked against the whole file and against `widest`, the hunk
    /// trimmed as far as fuzz allows.
    fn fuzz_step(
        &mut self,
        index: usize,
        hunk: &Hunk<'_>,
        aim: &Aim,
        (trim, widest): (Fuzz, Fuzz),
    ) -> Step {
        let cut = trimmed(hunk, trim);
        let mut pat = Pattern::new(cut.old_lines().collect());
        let explicit = aim.explicit.map(|h| h + trim.top);
        // The whole file: neither a hint nor the window chooses, and order is checked after.
        let whole = Scope {
            lo: 0,
            hint: None,
            ends: aim.ends,
            window: 0,
        };
        if let Some(mut p) = self.fuzz_applied(index, &cut, &mut pat, &whole, explicit) {
            if let Some(refused) = self.refuse(
                index,
                (p.start, Level::Exact, true),
                aim,
                (trim, widest),
                hunk,
            ) {
                return Step::Refused(refused);
            }
            p.fuzz = trim;
            return Step::Placed(p);
        }
        for &level in ladder::levels(self.opts.bytes_only) {
            let starts = self.starts(&mut pat, level, &whole);
            let s = match starts[..] {
                [] => continue,
                [s] => s,
                _ => return Step::Refused(self.fuzz_ambiguous(index, &pat.lines, &starts, level)),
            };
            if let Some(refused) = self.refuse(index, (s, level, false), aim, (trim, widest), hunk)
            {
                return Step::Refused(refused);
            }
            return match self.build(index, &cut, s, level, explicit) {
                Ok(mut p) => {
                    p.fuzz = trim;
                    Step::Placed(p)
                }
                Err(e) => Step::Refused(e),
            };
        }
        Step::Nothing
    }

    /// The already-applied check of the trimmed hunk, file-wide (SPEC §5: a trimmed hunk
    /// goes through it too).
    fn fuzz_applied(
        &mut self,
        index: usize,
        cut: &Hunk<'_>,
        pat: &mut Pattern<'_>,
        whole: &Scope,
        explicit: Option<usize>,
    ) -> Option<Placement> {
        match self.starts(pat, Level::Exact, whole).first() {
            None => self.already_applied(index, cut, whole, explicit),
            Some(&s) => match self.around(index, cut, pat, whole, (s, explicit)) {
                Around::Applied(p) => Some(p),
                Around::No | Around::Elsewhere(_) => None,
            },
        }
    }

    /// Every match of `pat` at `level` the scope allows (pinned, or anywhere from `lo`).
    fn starts(&mut self, pat: &mut Pattern<'_>, level: Level, scope: &Scope) -> Vec<usize> {
        if !scope.ends.any() {
            return self.view.all_matches(pat, level, scope.lo);
        }
        let n = self.view.len();
        scope
            .ends
            .only_start(n, pat.len())
            .filter(|&s| s >= scope.lo && self.view.matches_at(pat, level, s))
            .into_iter()
            .collect()
    }

    /// Why the one match of a trimmed hunk at `s` (`applied`: of its new side) is not taken,
    /// if it is not: the widest trim matches elsewhere at its level, so the outer lines would
    /// be what chose this place (`ambiguous_match`); or it lies out of order.
    fn refuse(
        &mut self,
        index: usize,
        (s, level, applied): (usize, Level, bool),
        aim: &Aim,
        (trim, widest): (Fuzz, Fuzz),
        hunk: &Hunk<'_>,
    ) -> Option<LocateError> {
        let widest_hunk = trimmed(hunk, widest);
        let mut wide = Pattern::new(if applied {
            widest_hunk.new_lines().collect()
        } else {
            widest_hunk.old_lines().collect()
        });
        let whole = Scope {
            lo: 0,
            hint: None,
            ends: aim.ends,
            window: 0,
        };
        // The widest trim stands inside this match, at `own`.
        let own = s + (widest.top - trim.top);
        let all = self.starts(&mut wide, level, &whole);
        if all.iter().any(|&w| w != own) {
            return Some(self.fuzz_ambiguous(index, &wide.lines, &all, level));
        }
        (s < aim.lo).then(|| self.fuzz_out_of_order(index, (s, trim), aim))
    }

    /// Several places once the outer context is ignored: `ambiguous_match` without
    /// selectors (no line number may choose here).
    fn fuzz_ambiguous(
        &self,
        index: usize,
        expected: &[&[u8]],
        starts: &[usize],
        level: Level,
    ) -> LocateError {
        let mut err = super::ambiguous_error(
            (PatchPart::Hunk, index),
            "context, with its outer lines ignored (fuzz),",
            expected,
            self.view.lines,
            starts,
            level,
            |_| None,
            FUZZ_WAYS_OUT,
        );
        if let LocateError::AmbiguousMatch { candidates, .. } = &mut err {
            candidates.iter_mut().for_each(|c| c.select = None);
        }
        err
    }

    /// The one place found with fuzz lies above the previous hunk or before the anchor.
    fn fuzz_out_of_order(&self, index: usize, (s, trim): (usize, Fuzz), aim: &Aim) -> LocateError {
        let what = match (self.prev, aim.anchor) {
            (Some(prev), _) if s < prev.floor => format!(
                "above hunk {}, whose match starts at line {}",
                prev.hunk + 1,
                prev.start + 1
            ),
            (_, Some(a)) => format!("above its anchor at line {}", a + 1),
            _ => "out of order".to_string(),
        };
        let hint = match self.prev {
            Some(prev) => order_hint(prev.hunk),
            None => "fix the hunk's context lines, or its @@ anchor".to_string(),
        };
        LocateError::ContextNotFound {
            unit: PatchPart::Hunk,
            hunk: index,
            message: format!(
                "context not found; with {} outer context line{} ignored (fuzz) it matches only \
                 at line {}, {what}",
                trim.lines(),
                if trim.lines() == 1 { "" } else { "s" },
                s + 1,
            ),
            below: None,
            expected: Vec::new(),
            nearest: None,
            hint,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::hunk;
    use super::*;

    fn fz(top: usize, bottom: usize) -> Fuzz {
        Fuzz { top, bottom }
    }

    #[test]
    fn each_step_trims_one_more_line_at_each_end_that_can_lose_one() {
        let three = hunk(" a\n b\n c\n-x\n+y\n d\n e\n f");
        let free = Ends::default();
        assert_eq!(steps(&three, free, 2), [fz(1, 1), fz(2, 2)]);
        assert_eq!(steps(&three, free, 5), [fz(1, 1), fz(2, 2)]);
        assert_eq!(steps(&three, free, 0), []);
        // One context line above: that end is never trimmed.
        let one_above = hunk(" a\n-x\n+y\n d\n e\n f");
        assert_eq!(steps(&one_above, free, 2), [fz(0, 1), fz(0, 2)]);
        // An end that begins with a change, or is pinned, or ends without a newline.
        assert_eq!(steps(&hunk("-x\n+y\n d\n e"), free, 2), [fz(0, 1)]);
        let pinned = Ends {
            start: false,
            end: true,
        };
        assert_eq!(steps(&three, pinned, 2), [fz(1, 0), fz(2, 0)]);
        let mut no_newline = three.clone();
        no_newline.new_no_newline = true;
        assert_eq!(steps(&no_newline, free, 2), [fz(1, 0), fz(2, 0)]);
        // One line of context at each end: no fuzz at all.
        assert_eq!(steps(&hunk(" a\n-x\n+y\n d"), free, 2), []);
    }

    #[test]
    fn a_non_blank_old_line_must_remain() {
        // Only blank context would be left around a pure insertion once both ends lost a
        // line: the top loses its line, the bottom keeps `b`.
        let h = hunk(" a\n \n+y\n \n b");
        assert_eq!(steps(&h, Ends::default(), 2), [fz(1, 0)]);
        let h = hunk(" \n+y\n \n b");
        assert_eq!(steps(&h, Ends::default(), 2), []);
        let h = hunk(" a\n b\n \n+y\n \n c");
        // Step 2 would leave only the blank lines around the insertion.
        assert_eq!(steps(&h, Ends::default(), 2), [fz(1, 1)]);
    }

    #[test]
    fn an_end_that_would_leave_only_blank_lines_keeps_its_line_and_the_other_goes_on() {
        // A hunk at the top of a file (click's utils.py, replayed): step 2 cannot trim both
        // ends, since `""`, `""` would be left; the top still can, with `def` kept below.
        let h = hunk(" import a, \\\n      b\n \n+x = 1\n \n def f():\n     pass");
        assert_eq!(steps(&h, Ends::default(), 2), [fz(1, 1), fz(2, 1)]);
        // The top end trims first: where either end alone could lose its second line but
        // not both, the top does.
        let h = hunk(" a\n b\n \n+x\n \n c\n d");
        assert_eq!(steps(&h, Ends::default(), 2), [fz(1, 1), fz(2, 1)]);
        // The bottom goes on when the top has no more lines to lose.
        let h = hunk(" a\n b\n+x\n c\n d\n e");
        assert_eq!(steps(&h, Ends::default(), 2), [fz(1, 1), fz(1, 2)]);
    }
}
