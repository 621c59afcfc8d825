//! Stage: locate — finding a run of lines in a file at one level of the ladder: at an explicit
//! hint (at the strictest level matching there), in the window around a hint, and in the whole file (after an anchor) through an index
//! of per-level keys built lazily, so a file of n lines costs O(n) once per level however many
//! hunks search it.
//!
//! Pure. This module counts matches; it does not decide what a count means (`hunks` and
//! `edits` apply the uniqueness rule of SPEC §5) and never builds messages.

use super::ladder::{self, key, line_eq};
use super::Level;

/// How many whole-file searches at one level run as a plain scan before the level's index
/// is built: a scan is cheaper for the first few, the index for any more.
const SCANS_BEFORE_INDEX: usize = 4;

/// Lines a plain scan may compare per line of the file before it leaves the search to the
/// index (see [`FileView::scan`]).
const SCAN_BUDGET: usize = 8;

/// A file's lines with their per-level keys and indexes, computed on first use.
pub(crate) struct FileView<'f> {
    pub lines: &'f [&'f [u8]],
    /// Per level: the key of each line, 0 = not computed yet (keys are never 0).
    keys: [Vec<u64>; 4],
    /// Per level: (key, line) sorted, for whole-file searches.
    index: [Option<Vec<(u64, usize)>>; 4],
    /// Per level: whole-file searches done so far without the index.
    scans: [usize; 4],
}

/// The lines a hunk (or anchor, or edit) looks for, with their per-level keys.
pub(crate) struct Pattern<'p> {
    pub lines: Vec<&'p [u8]>,
    keys: [Vec<u64>; 4],
}

impl<'p> Pattern<'p> {
    /// A pattern of lines. A leading BOM is dropped from each: a BOM is never part of a
    /// line (a diff of a file with a BOM shows it at the start of line 1).
    pub fn new(mut lines: Vec<&'p [u8]>) -> Self {
        for line in &mut lines {
            if let Some(rest) = line.strip_prefix(crate::text::BOM) {
                *line = rest;
            }
        }
        Pattern {
            lines,
            keys: Default::default(),
        }
    }

    pub fn len(&self) -> usize {
        self.lines.len()
    }

    fn keys(&mut self, level: Level) -> &[u64] {
        let slot = &mut self.keys[level as usize];
        if slot.len() != self.lines.len() {
            *slot = self.lines.iter().map(|l| key(l, level)).collect();
        }
        slot
    }
}

impl<'f> FileView<'f> {
    pub fn new(lines: &'f [&'f [u8]]) -> Self {
        FileView {
            lines,
            keys: Default::default(),
            index: Default::default(),
            scans: [0; 4],
        }
    }

    pub fn len(&self) -> usize {
        self.lines.len()
    }

    /// The key of line `i` at `level`.
    pub fn key(&mut self, level: Level, i: usize) -> u64 {
        let lines = self.lines;
        let slot = &mut self.keys[level as usize];
        if slot.is_empty() {
            *slot = vec![0; lines.len()];
        }
        if slot[i] == 0 {
            slot[i] = key(lines[i], level);
        }
        slot[i]
    }

    /// True when the pattern matches at line `s` (which must leave room for it) at `level`.
    pub fn matches_at(&mut self, pat: &mut Pattern<'_>, level: Level, s: usize) -> bool {
        let m = pat.len();
        if s + m > self.len() {
            return false;
        }
        if level == Level::Exact {
            return self.lines[s..s + m] == pat.lines[..];
        }
        let keys = pat.keys(level);
        for (j, &k) in keys.iter().enumerate() {
            if self.key(level, s + j) != k {
                return false;
            }
        }
        // Keys agree: confirm on the normalised text, so a hash collision cannot place a hunk.
        (0..m).all(|j| line_eq(self.lines[s + j], pat.lines[j], level))
    }

    /// Every match starting in `lo..` whose start is within `window` lines of `hint`.
    pub fn window_matches(
        &mut self,
        pat: &mut Pattern<'_>,
        level: Level,
        lo: usize,
        hint: usize,
        window: usize,
    ) -> Vec<usize> {
        let Some(last) = self.len().checked_sub(pat.len()) else {
            return Vec::new();
        };
        let from = hint.saturating_sub(window).max(lo);
        let to = hint.saturating_add(window).min(last);
        (from..=to)
            .filter(|&s| self.matches_at(pat, level, s))
            .collect()
    }

    /// Every match starting in `lo..`, in file order.
    pub fn all_matches(&mut self, pat: &mut Pattern<'_>, level: Level, lo: usize) -> Vec<usize> {
        let m = pat.len();
        if m == 0 || m > self.len() || lo > self.len() - m {
            return Vec::new();
        }
        let slot = level as usize;
        if self.index[slot].is_none() && self.scans[slot] < SCANS_BEFORE_INDEX {
            self.scans[slot] += 1;
            if let Some(found) = self.scan(pat, level, lo) {
                return found;
            }
        }
        let index = self.build_index(level);
        // Start from the pattern line that occurs least often in the file.
        let keys = pat.keys(level).to_vec();
        let (pivot, range) = keys
            .iter()
            .enumerate()
            .map(|(j, &k)| (j, equal_range(index, k)))
            .min_by_key(|(_, r)| r.len())
            .expect("the pattern has at least one line because m > 0");
        let starts: Vec<usize> = index[range]
            .iter()
            .filter_map(|&(_, p)| p.checked_sub(pivot))
            .filter(|&s| s >= lo)
            .collect();
        starts
            .into_iter()
            .filter(|&s| self.matches_at(pat, level, s))
            .collect()
    }

    /// A plain pass over the file: compare the first pattern line, then the rest. `None`
    /// when it has compared [`SCAN_BUDGET`] lines per file line: the file repeats the
    /// pattern's first lines so often (100,000 identical lines and a hunk of them with one
    /// line that is not there) that the scan would cost lines × hunk; the index, which
    /// starts from the pattern line that occurs least often, takes over.
    fn scan(&mut self, pat: &mut Pattern<'_>, level: Level, lo: usize) -> Option<Vec<usize>> {
        let last = self.len() - pat.len();
        let mut budget = SCAN_BUDGET * self.len() + pat.len();
        let mut spend = |cost: usize| {
            budget = budget.checked_sub(cost)?;
            Some(())
        };
        let mut found = Vec::new();
        if level == Level::Exact {
            // The lengths of all the pattern's lines first: they stand in the line list,
            // read in order, while a line's bytes are somewhere in the file (a cache miss
            // each); many lines of a code file have one length, few runs have the pattern's.
            let lengths: Vec<usize> = pat.lines.iter().map(|l| l.len()).collect();
            let m = lengths.len();
            for s in lo..=last {
                let here = &self.lines[s..s + m];
                let same_lengths = here.iter().zip(&lengths).take_while(|(l, &n)| l.len() == n);
                let agree = same_lengths.count();
                spend(agree + 1)?;
                if agree == m && here == &pat.lines[..] {
                    spend(m)?;
                    found.push(s);
                }
            }
            return Some(found);
        }
        let first = pat.keys(level)[0];
        for s in lo..=last {
            if self.key(level, s) == first {
                spend(pat.len())?;
                if self.matches_at(pat, level, s) {
                    found.push(s);
                }
            }
        }
        Some(found)
    }

    fn build_index(&mut self, level: Level) -> &[(u64, usize)] {
        let slot = level as usize;
        if self.index[slot].is_none() {
            let mut index: Vec<(u64, usize)> =
                (0..self.len()).map(|i| (self.key(level, i), i)).collect();
            index.sort_unstable();
            self.index[slot] = Some(index);
        }
        self.index[slot]
            .as_deref()
            .expect("the index was built just above")
    }

    /// How often a line with this key occurs at `level` (builds the index).
    pub fn occurrences(&mut self, level: Level, k: u64) -> Vec<usize> {
        let index = self.build_index(level);
        index[equal_range(index, k)]
            .iter()
            .map(|&(_, p)| p)
            .collect()
    }
}

fn equal_range(index: &[(u64, usize)], k: u64) -> std::ops::Range<usize> {
    let from = index.partition_point(|&(x, _)| x < k);
    let to = index.partition_point(|&(x, _)| x <= k);
    from..to
}

/// Where a search may look and what it starts from.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Scope {
    /// Matches must start at or after this line (after an anchor or a previous hunk).
    pub lo: usize,
    /// 0-based line the search starts from, if any.
    pub hint: Option<usize>,
    /// The ends of the file a match is pinned to (SPEC §5 "Anchored ends").
    pub ends: Ends,
    /// `--window N`.
    pub window: usize,
}

/// The ends of the file a hunk is pinned to (SPEC §5 "Anchored ends"): a unified hunk
/// without leading context from line 0 or 1 matches only at the start, one without trailing
/// context only at the end (as `git apply`), and `*** End of File` pins to the end.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Ends {
    pub start: bool,
    pub end: bool,
}

impl Ends {
    /// Pinned to either end: the one place a match may start is [`Self::only_start`].
    pub fn any(self) -> bool {
        self.start || self.end
    }

    /// The one start an `m`-line match may have in an `n`-line file when pinned: 0 at the
    /// start, `n - m` at the end (both: the match is the whole file); None when no start can
    /// satisfy the pins (or nothing is pinned).
    pub fn only_start(self, n: usize, m: usize) -> Option<usize> {
        match (self.start, self.end) {
            (true, true) => (n == m).then_some(0),
            (true, false) => (m <= n).then_some(0),
            (false, true) => n.checked_sub(m),
            (false, false) => None,
        }
    }
}

/// What one level of the ladder found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Found {
    /// The one match the uniqueness rule accepts.
    One(usize),
    /// Two or more in the file: ambiguous (every start, in file order).
    Many(Vec<usize>),
    None,
}

/// Apply the uniqueness rule of SPEC §5 at one level.
pub(crate) fn search_level(
    view: &mut FileView<'_>,
    pat: &mut Pattern<'_>,
    level: Level,
    scope: &Scope,
) -> Found {
    if scope.ends.any() {
        return match scope.ends.only_start(view.len(), pat.len()) {
            Some(s) if s >= scope.lo && view.matches_at(pat, level, s) => Found::One(s),
            _ => Found::None,
        };
    }
    if let Some(hint) = scope.hint {
        if let [one] = view.window_matches(pat, level, scope.lo, hint, scope.window)[..] {
            return Found::One(one);
        }
    }
    let all = view.all_matches(pat, level, scope.lo);
    match all.len() {
        0 => Found::None,
        1 => Found::One(all[0]),
        _ => Found::Many(all),
    }
}

/// The strictest level at which the pattern matches starting exactly at line `s` (an explicit
/// line-number hint, SPEC §5 "Uniqueness"); None when no level does or `s` is before `lo`.
pub(crate) fn level_at(
    view: &mut FileView<'_>,
    pat: &mut Pattern<'_>,
    s: usize,
    lo: usize,
    bytes_only: bool,
) -> Option<Level> {
    if s < lo {
        return None;
    }
    ladder::levels(bytes_only)
        .iter()
        .copied()
        .find(|&level| view.matches_at(pat, level, s))
}

/// The result of running a pattern down the ladder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Outcome {
    Placed(usize, Level),
    Ambiguous(Vec<usize>, Level),
    NotFound,
}

/// Run the ladder for a pattern (used for anchors and edits; hunks interleave the
/// already-applied check after level 1 themselves).
pub(crate) fn ladder(
    view: &mut FileView<'_>,
    pat: &mut Pattern<'_>,
    scope: &Scope,
    bytes_only: bool,
) -> Outcome {
    for &level in ladder::levels(bytes_only) {
        match search_level(view, pat, level, scope) {
            Found::One(s) => return Outcome::Placed(s, level),
            Found::Many(all) => return Outcome::Ambiguous(all, level),
            Found::None => {}
        }
    }
    Outcome::NotFound
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope(hint: Option<usize>) -> Scope {
        Scope {
            lo: 0,
            hint,
            ends: Ends::default(),
            window: 2,
        }
    }

    #[test]
    fn a_scan_that_would_cost_lines_times_hunk_leaves_the_search_to_the_index() {
        // 2,000 identical lines; a hunk of 99 of them and one line that is not there: every
        // start agrees on 99 lines before it fails.
        let lines: Vec<&[u8]> = vec![b"same"; 2000];
        let mut hunk: Vec<&[u8]> = vec![b"same"; 99];
        hunk.push(b"not there");
        for level in [Level::Exact, Level::Whitespace] {
            let mut view = FileView::new(&lines);
            let mut pat = Pattern::new(hunk.clone());
            assert_eq!(view.scan(&mut pat, level, 0), None, "{level:?}");
            assert!(view.all_matches(&mut pat, level, 0).is_empty());
            // The same answers as before when the hunk is there (at the end, once).
            let mut there = lines.clone();
            there.push(b"not there");
            let mut view = FileView::new(&there);
            assert_eq!(
                view.all_matches(&mut pat, level, 0),
                vec![1901],
                "{level:?}"
            );
        }
    }

    #[test]
    fn index_and_scan_agree() {
        let lines: Vec<&[u8]> = vec![b"a", b"b", b"a", b"b", b"c", b"a", b"b"];
        let mut view = FileView::new(&lines);
        let mut pat = Pattern::new(vec![b"a", b"b"]);
        let mut results = Vec::new();
        for _ in 0..SCANS_BEFORE_INDEX + 2 {
            results.push(view.all_matches(&mut pat, Level::Exact, 1));
        }
        assert!(results.iter().all(|r| r == &[2, 5]));
    }

    #[test]
    fn the_exact_scan_needs_every_length_and_every_byte() {
        // Lines of one length everywhere: the pattern is at 1, 3 and 6, a longer one at 3
        // only; a byte or a length off is nowhere; matches start at `lo` or after.
        let lines: Vec<&[u8]> = vec![b"ab", b"cd", b"ef", b"cd", b"ef", b"gh", b"cd", b"ef"];
        let mut view = FileView::new(&lines);
        let mut pat = Pattern::new(vec![b"cd", b"ef"]);
        assert_eq!(view.all_matches(&mut pat, Level::Exact, 0), [1, 3, 6]);
        let mut pat = Pattern::new(vec![b"cd", b"ef", b"gh"]);
        assert_eq!(view.all_matches(&mut pat, Level::Exact, 0), [3]);
        let mut pat = Pattern::new(vec![b"cd", b"eF"]);
        assert!(view.all_matches(&mut pat, Level::Exact, 0).is_empty());
        let mut pat = Pattern::new(vec![b"cd", b"e"]);
        assert!(view.all_matches(&mut pat, Level::Exact, 0).is_empty());
        let mut pat = Pattern::new(vec![b"cd", b"ef"]);
        assert_eq!(view.all_matches(&mut pat, Level::Exact, 2), [3, 6]);
    }

    #[test]
    fn window_decides_before_the_file() {
        let lines: Vec<&[u8]> = vec![b"x", b"a", b"y", b"y", b"y", b"y", b"y", b"a"];
        let mut view = FileView::new(&lines);
        let mut pat = Pattern::new(vec![b"a"]);
        let near = search_level(&mut view, &mut pat, Level::Exact, &scope(Some(2)));
        assert_eq!(near, Found::One(1));
        let none = search_level(&mut view, &mut pat, Level::Exact, &scope(None));
        assert_eq!(none, Found::Many(vec![1, 7]));
    }

    #[test]
    fn levels_use_keys() {
        let lines: Vec<&[u8]> = vec![b"  a  ", b"b"];
        let mut view = FileView::new(&lines);
        let mut pat = Pattern::new(vec![b"a"]);
        let got = ladder(&mut view, &mut pat, &scope(None), false);
        assert_eq!(got, Outcome::Placed(0, Level::Whitespace));
        assert_eq!(
            ladder(&mut view, &mut pat, &scope(None), true),
            Outcome::NotFound
        );
    }
}
