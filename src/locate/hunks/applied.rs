//! Stage: locate — the already-applied check of SPEC §5 for one hunk: its new side standing
//! in exactly one place where its old side does not (a match of the old side inside that
//! place does not count: the hunk's own earlier application explains it), a deletion proven
//! by its context lines joined, and a hunk that changes only the final newline of a file that
//! already ends as it leaves it.
//!
//! Pure. Decides about one hunk only; the planner decides what a whole patch of applied and
//! unapplied hunks means.

use crate::model::{Hunk, LineKind};

use super::super::search::{Ends, Pattern, Scope};
use super::super::{Fuzz, Level, Piece, Placement};
use super::Locator;

/// What the new side says about a level-1 match of the old side.
pub(super) enum Around {
    /// The match lies inside no match of the new side (the common case).
    No,
    /// Every level-1 match of the old side lies inside the one level-1 match of the new
    /// side: the hunk is already applied there.
    Applied(Placement),
    /// The match lies inside the new side's one match, but the old side also stands
    /// elsewhere: every start of the old side, in file order.
    Elsewhere(Vec<usize>),
}

impl Locator<'_, '_> {
    /// The old side is nowhere at level 1; the new side (with an inserted line, or the
    /// context lines joined around a deletion) stands in exactly one place: the hunk is
    /// already applied there.
    pub(super) fn already_applied(
        &mut self,
        index: usize,
        hunk: &Hunk<'_>,
        scope: &Scope,
        explicit: Option<usize>,
    ) -> Option<Placement> {
        if !has_insert(hunk) && !deletes_inside(hunk, scope.ends) {
            return None;
        }
        let mut new = Pattern::new(hunk.new_lines().collect());
        let [s] = self.exact_starts(&mut new, scope)[..] else {
            return None;
        };
        Some(applied(index, s, new.len(), explicit))
    }

    /// The old side matches at level 1 at `s`: does that match lie inside the one level-1
    /// match of the new side (SPEC §5 "Already applied": such a match does not count)? Costs
    /// a few line comparisons when it does not, which is nearly always.
    pub(super) fn around(
        &mut self,
        index: usize,
        hunk: &Hunk<'_>,
        old: &mut Pattern<'_>,
        scope: &Scope,
        (s, explicit): (usize, Option<usize>),
    ) -> Around {
        let m = old.len();
        let k = hunk
            .lines
            .iter()
            .filter(|l| l.kind != LineKind::Delete)
            .count();
        // Only a new side longer than the old one can hold a match of it (an equal one
        // holding it would be the same lines).
        if k <= m || !has_insert(hunk) {
            return Around::No;
        }
        let mut new = Pattern::new(hunk.new_lines().collect());
        let n = self.view.len();
        let pinned = scope.ends.only_start(n, k);
        let from = (s + m).saturating_sub(k).max(scope.lo);
        let holds = (from..=s)
            .filter(|&t| !scope.ends.any() || pinned == Some(t))
            .any(|t| self.view.matches_at(&mut new, Level::Exact, t));
        if !holds {
            return Around::No;
        }
        let [t] = self.exact_starts(&mut new, scope)[..] else {
            return Around::No;
        };
        let inside = |o: usize| t <= o && o + m <= t + k;
        if !inside(s) {
            return Around::No;
        }
        let olds = self.exact_starts(old, scope);
        if olds.iter().all(|&o| inside(o)) {
            Around::Applied(applied(index, t, k, explicit))
        } else {
            Around::Elsewhere(olds)
        }
    }

    /// Every level-1 match of `pat` the scope allows: the one pinned place, or every start
    /// from `scope.lo` on.
    fn exact_starts(&mut self, pat: &mut Pattern<'_>, scope: &Scope) -> Vec<usize> {
        if !scope.ends.any() {
            return self.view.all_matches(pat, Level::Exact, scope.lo);
        }
        let n = self.view.len();
        scope
            .ends
            .only_start(n, pat.len())
            .filter(|&s| s >= scope.lo && self.view.matches_at(pat, Level::Exact, s))
            .into_iter()
            .collect()
    }
}

fn has_insert(hunk: &Hunk<'_>) -> bool {
    hunk.lines.iter().any(|l| l.kind == LineKind::Insert)
}

/// A hunk that only deletes, held above its first deleted line and below its last — by a
/// context line, or by the end of the file it is pinned to: its context lines joined can
/// prove the deletion was made (SPEC §5).
fn deletes_inside(hunk: &Hunk<'_>, ends: Ends) -> bool {
    let kinds: Vec<LineKind> = hunk.lines.iter().map(|l| l.kind).collect();
    let (Some(first), Some(last)) = (
        kinds.iter().position(|&k| k == LineKind::Delete),
        kinds.iter().rposition(|&k| k == LineKind::Delete),
    ) else {
        return false;
    };
    !kinds.contains(&LineKind::Insert)
        && (ends.start || kinds[..first].contains(&LineKind::Context))
        && (ends.end || kinds[last..].contains(&LineKind::Context))
}

/// The hunk changes only whether the file ends in a newline: its two sides hold the same
/// lines, and one of them ends without a newline.
pub(super) fn changes_only_final_newline(hunk: &Hunk<'_>) -> bool {
    hunk.old_no_newline != hunk.new_no_newline && hunk.old_lines().eq(hunk.new_lines())
}

/// An already-applied placement: the new side stands at `s..s + len`.
pub(super) fn applied(index: usize, s: usize, len: usize, explicit: Option<usize>) -> Placement {
    Placement {
        hunk: index,
        start: s,
        old_len: len,
        level: Level::Exact,
        offset: explicit.map(|h| s as isize - h as isize),
        already_applied: true,
        fuzz: Fuzz::default(),
        pieces: (s..s + len).map(Piece::Keep).collect(),
        final_newline: None,
    }
}
