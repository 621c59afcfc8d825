//! Stage: locate — placing the hunks of one file (SPEC §5): hints and drift, `@@ ANCHOR`
//! narrowing, the order of hunks (each below the previous one), `*** End of File`, pure
//! insertions, `--unidiff-zero`, the already-applied check, the ladder with its uniqueness
//! rule, and the pieces each placement writes.
//!
//! Pure. Must not touch line endings (the splicer owns them) nor decide the whole patch's
//! already-applied state (the planner does, from `Placement::already_applied`).

use crate::model::{Hunk, LineKind, Rules, Selector};

use super::diagnose::{self, lossy};
use super::ladder;
use super::reindent::{self, Rebase, TooShallow, Unit};
use super::search::{self, Ends, FileView, Found, Outcome, Pattern, Scope};
use super::{Fuzz, Level, LocateError, LocateOptions, PatchPart, Piece, Placement};
use applied::{applied, changes_only_final_newline, Around};

mod applied;
mod fuzz;
mod insert;

/// Place every hunk of one file. See [`super::locate_hunks`].
pub(crate) fn locate_hunks(
    lines: &[&[u8]],
    hunks: &[Hunk<'_>],
    rules: impl Into<Rules>,
    opts: &LocateOptions,
) -> Result<Vec<Placement>, LocateError> {
    let mut locator = Locator::new(lines, rules.into(), opts, true);
    let mut placements = Vec::with_capacity(hunks.len());
    for (index, hunk) in hunks.iter().enumerate() {
        placements.push(locator.place(index, hunk)?);
    }
    super::overlap::arrange(placements)
}

/// Which hunks of one file would apply, in order: hunk `i` applies when it can be placed
/// (and arranged) together with the applicable hunks before it. The same answer as running
/// [`locate_hunks`] on each growing trial list, in one pass: the locator's state is rolled
/// back after a refused hunk, its search indexes are shared by all hunks, refusals skip the
/// nearest-text diagnosis (only their codes are wanted), and the overlap check of a new
/// placement looks only at the run of overlapping placements around it.
pub(crate) fn assess_hunks(
    lines: &[&[u8]],
    hunks: &[Hunk<'_>],
    rules: impl Into<Rules>,
    opts: &LocateOptions,
) -> Vec<Result<(), crate::error::ErrorCode>> {
    let mut locator = Locator::new(lines, rules.into(), opts, false);
    // The accepted placements that are not already applied, as placed (untrimmed), sorted by
    // arrangement order.
    let mut accepted: Vec<Placement> = Vec::new();
    let mut out = Vec::with_capacity(hunks.len());
    for (index, hunk) in hunks.iter().enumerate() {
        let (drift, prev_end, prev) = (locator.drift, locator.prev_end, locator.prev);
        let result = locator
            .place(index, hunk)
            .and_then(|p| super::overlap::insert_arranged(&mut accepted, p));
        if result.is_err() {
            locator.drift = drift;
            locator.prev_end = prev_end;
            locator.prev = prev;
        }
        out.push(result.map_err(|e| e.code()));
    }
    out
}

/// The state carried from hunk to hunk of one file.
struct Locator<'f, 'o> {
    view: FileView<'f>,
    opts: &'o LocateOptions,
    rules: Rules,
    /// Net offset of the hunks placed so far at explicit hints (GNU patch's running offset).
    drift: isize,
    /// End of the previous hunk's old side: the next agent hunk's hint.
    prev_end: Option<usize>,
    /// The previous hunk's match, which the next hunk must begin below.
    prev: Option<Prev>,
    /// The file's indentation unit, computed the first time a hunk is re-based.
    file_unit: Option<Option<Unit>>,
    /// Refusals carry the nearest text (false when only the refusal's code is wanted).
    diagnose: bool,
    /// The hunks' line numbers are trusted: one may choose among equal candidates.
    trusted: bool,
}

/// The previous hunk of the file as placed (SPEC §5 "Order": the next one begins below it).
#[derive(Debug, Clone, Copy)]
struct Prev {
    /// 0-based index of the hunk.
    hunk: usize,
    /// 0-based first line of its match (for a pure insertion, the line it inserts before).
    start: usize,
    /// The first line the next hunk may begin at: below `start`, or at it when the hunk
    /// begins with inserted lines (a pure insertion, or `+` lines above its first context
    /// line): they go before line `start`, which the next hunk may then share as context.
    floor: usize,
}

/// Where a hunk is looked for, worked out from its hints and anchors.
struct Aim {
    /// 0-based line of the last anchor found.
    anchor: Option<usize>,
    /// The drift-adjusted explicit hint.
    explicit: Option<usize>,
    /// The line the old side's window is centred on: the explicit hint as written, also
    /// when it placed an anchor. None without one (SPEC §5: a derived hint opens no window).
    window_at: Option<usize>,
    /// Where a hunk without old lines goes when it has no anchor: its explicit hint, else
    /// the line after the previous hunk (an agent hunk's derived hint). Only an explicit hint
    /// sets a window for the old side's search (SPEC §5 "Trust in line numbers").
    hint: Option<usize>,
    /// Below the anchor and the previous hunk's first line.
    lo: usize,
    /// The ends of the file the hunk is pinned to.
    ends: Ends,
}

impl<'f, 'o> Locator<'f, 'o> {
    /// A locator at the top of the file; `diagnose`: a refusal carries the nearest-text
    /// diagnosis.
    fn new(lines: &'f [&'f [u8]], rules: Rules, opts: &'o LocateOptions, diagnose: bool) -> Self {
        Locator {
            view: FileView::new(lines),
            opts,
            rules,
            drift: 0,
            prev_end: None,
            prev: None,
            file_unit: None,
            diagnose,
            trusted: opts.line_numbers.trusted(rules),
        }
    }

    fn place(&mut self, index: usize, hunk: &Hunk<'_>) -> Result<Placement, LocateError> {
        let written = self.explicit_hint(hunk);
        let has_context = hunk.lines.iter().any(|l| l.kind == LineKind::Context);
        if self.rules.zero_context_at_numbers && self.opts.unidiff_zero && !has_context {
            return self.place_exactly(index, hunk);
        }
        let (anchor, hint_placed_anchor) = self.find_anchors(index, hunk, written)?;
        // A line-number hint that placed an anchor was the anchor's, not the hunk's: the
        // hunk's offset is not measured from it, but it still centres the hunk's window.
        let explicit = written.filter(|_| !hint_placed_anchor);
        let soft = self.prev_end.filter(|_| self.rules.follows_previous);
        let after_anchor = anchor.map(|a| a + 1);
        let floor = self.prev.map_or(0, |p| p.floor);
        let aim = Aim {
            anchor,
            explicit,
            window_at: written,
            // The later of "after the anchor" and "after the previous hunk" (None < Some).
            hint: explicit.or(after_anchor.max(soft)),
            lo: after_anchor.unwrap_or(0).max(floor),
            ends: self.ends(hunk),
        };
        let placement = if hunk.old_lines().next().is_none() {
            self.place_insertion(index, hunk, &aim)?
        } else {
            self.place_old_side(index, hunk, &aim)?
        };
        self.prev_end = Some(placement.start + placement.old_len);
        let inserts_first = hunk
            .lines
            .first()
            .is_some_and(|l| l.kind == LineKind::Insert);
        self.prev = Some(Prev {
            hunk: index,
            start: placement.start,
            floor: placement.start + usize::from(placement.old_len > 0 && !inserts_first),
        });
        if let (Some(offset), false) = (placement.offset, placement.already_applied) {
            self.drift += offset;
        }
        Ok(placement)
    }

    /// The ends of the file a hunk is pinned to (SPEC §5 "Anchored ends"): a unified hunk
    /// without leading context whose old side starts at line 0 or 1 matches only at the
    /// start, one without trailing context (unless `--unidiff-zero`) only at the end, as `git
    /// apply` places them; `*** End of File` pins an agent hunk to the end.
    fn ends(&self, hunk: &Hunk<'_>) -> Ends {
        let context =
            |l: Option<&crate::model::Line<'_>>| l.is_some_and(|l| l.kind == LineKind::Context);
        match self.rules.anchored_ends {
            true => Ends {
                start: !context(hunk.lines.first()) && matches!(hunk.old_start, Some(0 | 1)),
                end: hunk.end_of_file || (!context(hunk.lines.last()) && !self.opts.unidiff_zero),
            },
            false => Ends {
                start: false,
                end: hunk.end_of_file,
            },
        }
    }

    /// `@@ -N`: the 0-based line the old side starts at (for `-N,0`, the line after N),
    /// shifted by the drift and kept inside the file.
    /// Untrusted numbers of rules that ignore them give no hint at all.
    fn explicit_hint(&self, hunk: &Hunk<'_>) -> Option<usize> {
        let start = hunk
            .old_start
            .filter(|_| self.trusted || !self.rules.untrusted_numbers_ignored)?;
        let base = if hunk.old_count == Some(0) {
            start
        } else {
            start.saturating_sub(1)
        };
        let shifted = (base as isize).saturating_add(self.drift).max(0) as usize;
        Some(shifted.min(self.view.len()))
    }

    /// Find the hunk's `@@ ANCHOR` lines one after the other: the last one's line, and
    /// whether the explicit line-number hint placed one of them. Anchors are exempt from the
    /// order of hunks: the first is looked for around the hint, then in the whole file.
    fn find_anchors(
        &mut self,
        index: usize,
        hunk: &Hunk<'_>,
        explicit: Option<usize>,
    ) -> Result<(Option<usize>, bool), LocateError> {
        let mut lo = 0;
        let mut hint = explicit.or(self.prev_end);
        let mut found = None;
        let mut by_hint = false;
        for anchor in &hunk.anchors {
            let mut pat = Pattern::new(vec![anchor.as_ref()]);
            let scope = Scope {
                lo,
                hint,
                ends: Ends::default(),
                window: self.opts.window,
            };
            let what = format!("anchor `{}`", lossy(anchor));
            let at_hint = explicit.filter(|_| self.trusted && !by_hint).and_then(|h| {
                search::level_at(&mut self.view, &mut pat, h, lo, self.opts.bytes_only)
                    .map(|level| (h, level))
            });
            let outcome = match at_hint {
                Some((h, level)) => {
                    by_hint = true;
                    Outcome::Placed(h, level)
                }
                None => search::ladder(&mut self.view, &mut pat, &scope, self.opts.bytes_only),
            };
            match outcome {
                Outcome::Placed(s, _) => {
                    found = Some(s);
                    lo = s + 1;
                    hint = Some(s + 1);
                }
                Outcome::Ambiguous(all, level) => {
                    let selects = |k: usize| Some(self.header_for(None, all[k]));
                    return Err(ambiguous_error(
                        (PatchPart::Hunk, index),
                        &what,
                        &pat.lines,
                        self.view.lines,
                        &all,
                        level,
                        selects,
                        ANCHOR_WAYS_OUT,
                    ));
                }
                Outcome::NotFound => {
                    let looked = diagnose::where_looked(
                        scope.hint,
                        scope.window,
                        found,
                        (Ends::default(), false),
                    );
                    return Err(self.not_found(
                        index,
                        Missing::anchor(&what),
                        &pat.lines,
                        &scope,
                        looked,
                    ));
                }
            }
        }
        Ok((found, by_hint))
    }

    /// The `@@` line whose line-number hint, shifted by the current drift, is line `s`:
    /// `@@ -N @@` for an agent hunk or an anchor, the full header for a unified hunk.
    fn header_for(&self, hunk: Option<&Hunk<'_>>, s: usize) -> serde_json::Value {
        let n = (s as isize + 1 - self.drift).max(1);
        let header = match (self.rules.selector, hunk) {
            (Selector::UnifiedHeader, Some(h)) => {
                let old_count = h.old_count.unwrap_or_else(|| h.old_lines().count());
                let new_count = h.new_count.unwrap_or_else(|| h.new_lines().count());
                let shift = match (h.new_start, h.old_start) {
                    (Some(new), Some(old)) => new as isize - old as isize,
                    _ => 0,
                };
                let new_start = (n + shift).max(0);
                format!("@@ -{n},{old_count} +{new_start},{new_count} @@")
            }
            (Selector::StartLine, Some(_)) => format!(":start_line:{n}"),
            _ => format!("@@ -{n} @@"),
        };
        serde_json::Value::String(header)
    }

    /// A hunk with old lines: the ladder, with the already-applied check at level 1.
    fn place_old_side(
        &mut self,
        index: usize,
        hunk: &Hunk<'_>,
        aim: &Aim,
    ) -> Result<Placement, LocateError> {
        let mut pat = Pattern::new(hunk.old_lines().collect());
        // A derived hint ("the line after the previous hunk") grants no window acceptance:
        // the hunk must be unique below the previous hunk (SPEC §5).
        let scope = Scope {
            lo: aim.lo,
            hint: aim.window_at,
            ends: aim.ends,
            window: self.opts.window,
        };
        if let Some(placed) = self.at_hint(index, hunk, &mut pat, &scope, aim.explicit) {
            return placed;
        }
        for &level in ladder::levels(self.opts.bytes_only) {
            let mut found = search::search_level(&mut self.view, &mut pat, level, &scope);
            if level == Level::Exact {
                match self.applied_or(index, hunk, &mut pat, &scope, (found, aim.explicit)) {
                    Ok(p) => return Ok(p),
                    Err(f) => found = f,
                }
            }
            match found {
                Found::One(s) => return self.build(index, hunk, s, level, aim.explicit),
                Found::Many(all) => {
                    let ways_out = match self.rules.selector {
                        Selector::UnifiedHeader => UNIFIED_WAYS_OUT,
                        Selector::AgentHeader => HUNK_WAYS_OUT,
                        Selector::StartLine => BLOCK_WAYS_OUT,
                    };
                    let selects = |k: usize| Some(self.header_for(Some(hunk), all[k]));
                    return Err(ambiguous_error(
                        (PatchPart::Hunk, index),
                        "context",
                        &pat.lines,
                        self.view.lines,
                        &all,
                        level,
                        selects,
                        ways_out,
                    ));
                }
                Found::None => {}
            }
        }
        // Fuzz runs only once no level found the hunk (never on the common path).
        if let Some(fuzzed) = self.fuzz(index, hunk, aim) {
            return fuzzed;
        }
        if let Some(err) = self.above_previous(index, &mut pat, aim) {
            return Err(err);
        }
        let looked = diagnose::where_looked(
            scope.hint,
            scope.window,
            aim.anchor,
            (scope.ends, hunk.end_of_file),
        );
        // A hunk that starts with its own anchor line cannot be found after that line.
        let repeats = match (hunk.anchors.last(), pat.lines.first()) {
            (Some(anchor), Some(first)) => ladder::line_eq(anchor, first, Level::Unicode),
            _ => false,
        };
        let missing = if repeats {
            Missing {
                what: "context",
                hint: "drop the @@ anchor or the repeated first line of the hunk",
                note: Some(
                    "the hunk's first line repeats its @@ anchor, and a hunk is searched only \
                     after its anchor line",
                ),
            }
        } else {
            Missing::lines("context")
        };
        Err(self.not_found(index, missing, &pat.lines, &scope, looked))
    }

    /// What level 1 found, with the already-applied check of SPEC §5 made: the hunk's
    /// already-applied placement, or what the ladder goes on with — `found` itself, or,
    /// when the one match found lies inside the new side's one match (the hunk's own earlier
    /// application) while the old side stands elsewhere too, every place: a hint must not
    /// choose the place that would apply the hunk a second time.
    fn applied_or(
        &mut self,
        index: usize,
        hunk: &Hunk<'_>,
        pat: &mut Pattern<'_>,
        scope: &Scope,
        (found, explicit): (Found, Option<usize>),
    ) -> Result<Placement, Found> {
        let first = match &found {
            Found::None => {
                return self
                    .already_applied(index, hunk, scope, explicit)
                    .ok_or(Found::None)
            }
            Found::One(s) => *s,
            Found::Many(all) => all[0],
        };
        match self.around(index, hunk, pat, scope, (first, explicit)) {
            Around::No => Err(found),
            Around::Applied(p) => Ok(p),
            Around::Elsewhere(all) => Err(Found::Many(all)),
        }
    }

    /// A match starting exactly at the explicit hint, at the strictest level that has one
    /// there; the already-applied check comes first (a level-1 match there rules it out,
    /// unless it lies inside the new side's one match and no other level-1 match exists).
    fn at_hint(
        &mut self,
        index: usize,
        hunk: &Hunk<'_>,
        pat: &mut Pattern<'_>,
        scope: &Scope,
        explicit: Option<usize>,
    ) -> Option<Result<Placement, LocateError>> {
        let h = explicit.filter(|_| self.trusted && !scope.ends.any())?;
        let level = search::level_at(&mut self.view, pat, h, scope.lo, self.opts.bytes_only)?;
        if level == Level::Exact {
            if let Around::Applied(p) = self.around(index, hunk, pat, scope, (h, explicit)) {
                return Some(Ok(p));
            }
        } else if self
            .view
            .all_matches(pat, Level::Exact, scope.lo)
            .is_empty()
        {
            if let Some(p) = self.already_applied(index, hunk, scope, explicit) {
                return Some(Ok(p));
            }
        }
        Some(self.build(index, hunk, h, level, explicit))
    }

    /// The old side, found nowhere below the previous hunk, matches above it (below the
    /// anchor): the refusal says so and shows that place (SPEC §5 "Order").
    fn above_previous(
        &mut self,
        index: usize,
        pat: &mut Pattern<'_>,
        aim: &Aim,
    ) -> Option<LocateError> {
        let prev = self.prev?;
        let lo = aim.anchor.map_or(0, |a| a + 1);
        if !self.diagnose || prev.floor <= lo {
            return None;
        }
        // Nothing matches from the floor on, so every match found from `lo` is above it; the
        // lowest one at the strictest level is the place the hunk was most likely meant for.
        let s = ladder::levels(self.opts.bytes_only)
            .iter()
            .find_map(|&level| self.view.all_matches(pat, level, lo).last().copied())?;
        let nearest = diagnose::at(self.view.lines, &pat.lines, s);
        let message = format!(
            "context not found below hunk {}, whose match starts at line {}; it matches only \
             above, at line {}",
            prev.hunk + 1,
            prev.start + 1,
            s + 1
        );
        let below = nearest
            .as_ref()
            .map(|near| diagnose::comparison(&pat.lines, near));
        Some(LocateError::ContextNotFound {
            unit: PatchPart::Hunk,
            hunk: index,
            message,
            below,
            expected: pat.lines.iter().map(|l| lossy(l)).collect(),
            nearest: nearest.map(Box::new),
            hint: order_hint(prev.hunk),
        })
    }

    /// The placement of a hunk whose old side matched at `s` at `level`; refused when an
    /// inserted line cannot be re-based (it would need negative indentation).
    fn build(
        &mut self,
        index: usize,
        hunk: &Hunk<'_>,
        s: usize,
        level: Level,
        explicit: Option<usize>,
    ) -> Result<Placement, LocateError> {
        // The old side as a list only where it is read (a re-indented match, or its
        // refusal): an exact match, the common case, needs its length alone.
        let old = || hunk.old_lines().collect::<Vec<&[u8]>>();
        let m = hunk.old_lines().count();
        let touches_end = s + m == self.view.len();
        // Only the final newline changes, and the file already ends as the hunk leaves it.
        if touches_end
            && level == Level::Exact
            && self.opts.ends_with_newline == Some(!hunk.new_no_newline)
            && changes_only_final_newline(hunk)
        {
            return Ok(applied(index, s, m, explicit));
        }
        let rebase = if level >= Level::Whitespace {
            let lines = self.view.lines;
            let file_unit = *self
                .file_unit
                .get_or_insert_with(|| reindent::unit_of(lines.iter().copied()));
            let hunk_lines: Vec<&[u8]> = hunk.lines.iter().map(|l| l.text.as_ref()).collect();
            Rebase::new(&old(), &lines[s..s + m], &hunk_lines, file_unit)
        } else {
            None
        };
        let pieces = pieces(hunk, s, rebase.as_ref())
            .map_err(|e| e.into_error((PatchPart::Hunk, index), s, &old()))?;
        Ok(Placement {
            hunk: index,
            start: s,
            old_len: m,
            level,
            offset: explicit.map(|h| s as isize - h as isize),
            already_applied: false,
            fuzz: Fuzz::default(),
            pieces,
            final_newline: final_newline(hunk, touches_end),
        })
    }

    fn not_found(
        &mut self,
        index: usize,
        missing: Missing<'_>,
        expected: &[&[u8]],
        scope: &Scope,
        looked: String,
    ) -> LocateError {
        // A hunk that may only go to one place is compared with that place.
        let nearest = match (scope.ends.any(), scope.window, scope.hint) {
            _ if !self.diagnose => None,
            (true, ..) => {
                let s = match scope.ends.start {
                    true => 0,
                    false => self.view.len().saturating_sub(expected.len()),
                };
                diagnose::at(self.view.lines, expected, s)
            }
            (false, 0, Some(s)) => diagnose::at(self.view.lines, expected, s),
            _ => diagnose::nearest(&mut self.view, expected, scope.lo, scope.hint),
        };
        let only_exact = if self.opts.bytes_only {
            " (exact matches only: the file is not UTF-8)"
        } else {
            ""
        };
        let message = format!("{} not found {looked}{only_exact}", missing.what);
        let below: Vec<String> = (nearest.as_ref())
            .map(|near| diagnose::comparison(expected, near))
            .into_iter()
            .chain(missing.note.map(str::to_string))
            .collect();
        LocateError::ContextNotFound {
            unit: PatchPart::Hunk,
            hunk: index,
            message,
            below: (!below.is_empty()).then(|| below.join("\n")),
            expected: expected.iter().map(|l| lossy(l)).collect(),
            nearest: nearest.map(Box::new),
            hint: missing.hint.to_string(),
        }
    }
}

/// What a hunk looked for and did not find, with the next step to take and an extra line of
/// explanation: all known before the refusal's message is written, which is written once.
struct Missing<'a> {
    what: &'a str,
    hint: &'a str,
    note: Option<&'a str>,
}

impl<'a> Missing<'a> {
    /// An `@@` anchor line (`what` quotes it).
    fn anchor(what: &'a str) -> Self {
        Missing {
            what,
            hint: ANCHOR_NOT_FOUND,
            note: None,
        }
    }

    /// Context or deleted lines.
    fn lines(what: &'a str) -> Self {
        Missing {
            what,
            hint: LINES_NOT_FOUND,
            note: None,
        }
    }
}

/// The next step when an `@@` anchor line is not in the file.
const ANCHOR_NOT_FOUND: &str = "the @@ line must name one line of the file above the change \
    (e.g. the enclosing function's first line); check it against the file";

/// The next step when a hunk's context or deleted lines are not in the file.
const LINES_NOT_FOUND: &str = "copy the context and deleted lines exactly as the file has them \
    (see the nearest text), or re-read the file and make the patch again";

/// The ways out of an ambiguous agent hunk.
const HUNK_WAYS_OUT: &str = "say which one: send the hunk again with the `@@` line its \
    candidate names, in place of the hunk's @@ lines, and the `*** Base:` line it names under \
    the file's `*** Update File:` line (line numbers count only under the file's Base); or add \
    context lines that tell the places apart, or an `@@ ANCHOR` line naming a line above the \
    change (e.g. the enclosing function)";

/// The ways out of an ambiguous SEARCH/REPLACE block.
const BLOCK_WAYS_OUT: &str = "say which one: send the block again with the `:start_line:N` \
    line its candidate names right after the SEARCH opener, together with the file's Base it \
    names (`--base`, or `base` beside `path`: line numbers count only under the file's Base); \
    or add lines to SEARCH (and REPLACE) that tell the places apart";

/// The ways out of an ambiguous unified hunk.
const UNIFIED_WAYS_OUT: &str = "say which one: send the hunk again with the header its \
    candidate names (and the `index` line it names, when it names one: line numbers count only \
    for the file's own version), or with more context lines that tell the places apart";

/// The ways out of an ambiguous anchor.
const ANCHOR_WAYS_OUT: &str = "say which one: add the `@@ -N @@` line its candidate names to the \
    hunk's @@ lines (in place of its line-number hint, if it has one) and the `*** Base:` line \
    it names under the file's `*** Update File:` line, or name a more specific anchor (e.g. the \
    enclosing class first, then the function)";

/// The next step for a hunk that fits only above its predecessor.
fn order_hint(prev: usize) -> String {
    format!(
        "the hunks of a file are placed in patch order, each below the one before: put this \
         hunk before hunk {} (or merge the two), or fix the context lines of both",
        prev + 1
    )
}

/// An `ambiguous_match` refusal (shared with JSON `replace`); `selects(k)` gives what selects
/// the candidate at `starts[k]`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn ambiguous_error(
    (unit, index): (PatchPart, usize),
    what: &str,
    expected: &[&[u8]],
    lines: &[&[u8]],
    starts: &[usize],
    level: Level,
    selects: impl FnMut(usize) -> Option<serde_json::Value>,
    hint: &str,
) -> LocateError {
    let candidates = diagnose::candidates(lines, starts, selects);
    let at_level = match level {
        Level::Exact => "",
        Level::TrailingWhitespace => " when trailing whitespace is ignored",
        Level::Whitespace => " when leading and trailing whitespace is ignored",
        Level::Unicode => " when whitespace and Unicode punctuation are ignored",
    };
    let message = format!(
        "{what} matches {} places{at_level} ({})",
        starts.len(),
        diagnose::line_list(starts),
    );
    LocateError::AmbiguousMatch {
        unit,
        hunk: index,
        message,
        expected: expected.iter().map(|l| lossy(l)).collect(),
        candidates,
        hint: hint.to_string(),
    }
}

/// `\ No newline at end of file` decides the final newline when the hunk reaches the end.
fn final_newline(hunk: &Hunk<'_>, touches_end: bool) -> Option<bool> {
    (touches_end && (hunk.old_no_newline || hunk.new_no_newline)).then_some(!hunk.new_no_newline)
}

/// The new side as pieces: context kept, deletions dropped, inserts written (re-based), the
/// i-th insert of a change block replacing its i-th deleted line.
fn pieces(hunk: &Hunk<'_>, s: usize, rebase: Option<&Rebase>) -> Result<Vec<Piece>, TooShallow> {
    let lines = &hunk.lines;
    let mut out = Vec::with_capacity(lines.len());
    let (mut i, mut at) = (s, 0);
    while at < lines.len() {
        if lines[at].kind == LineKind::Context {
            out.push(Piece::Keep(i));
            i += 1;
            at += 1;
            continue;
        }
        let end = lines[at..]
            .iter()
            .position(|l| l.kind == LineKind::Context)
            .map_or(lines.len(), |p| at + p);
        let block = &lines[at..end];
        let deletes = block.iter().filter(|l| l.kind == LineKind::Delete).count();
        let inserts = block.iter().filter(|l| l.kind == LineKind::Insert);
        for (k, line) in inserts.enumerate() {
            let text = match rebase {
                Some(r) => r.apply(&line.text)?,
                None => line.text.to_vec(),
            };
            let replaces = (k < deletes).then_some(i + k);
            out.push(Piece::Insert { text, replaces });
        }
        i += deletes;
        at = end;
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
