//! Property tests: (a) the diff `similar` makes from a to b applies to a and gives b, also
//! after unrelated lines are inserted above when each hunk's old side is unique; (b) every
//! placement and refusal is the one a deliberately simple, brute-force reading of SPEC §5
//! calls for; (c) applying and then reverse-applying gives the original back.

use apply_patch::locate::{Level, LineNumbers, LocateError, LocateOptions};
use apply_patch::{Format, Hunk, Line, LineKind};
use proptest::prelude::*;
use similar::{capture_diff_slices, group_diff_ops, Algorithm, DiffTag};

use super::run;

/// Lines as the diff sees them: with their `\n`, except a last line without one.
fn tokens(lines: &[String], newline: bool) -> Vec<String> {
    let n = lines.len();
    lines
        .iter()
        .enumerate()
        .map(|(i, l)| {
            if i + 1 < n || newline {
                format!("{l}\n")
            } else {
                l.clone()
            }
        })
        .collect()
}

fn bytes(lines: &[String], newline: bool) -> Vec<u8> {
    tokens(lines, newline).concat().into_bytes()
}

fn line(kind: LineKind, token: &str) -> Line<'static> {
    Line::new(kind, token.trim_end_matches('\n').as_bytes().to_vec())
}

/// The unified diff of a → b as hunks, built from similar's grouped ops (3 lines of context).
fn diff(a: &[String], a_nl: bool, b: &[String], b_nl: bool) -> Vec<Hunk<'static>> {
    let (ta, tb) = (tokens(a, a_nl), tokens(b, b_nl));
    let ops = capture_diff_slices(Algorithm::Myers, &ta, &tb);
    let mut hunks = Vec::new();
    for group in group_diff_ops(ops, 3) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let old = first.old_range().start..last.old_range().end;
        let new = first.new_range().start..last.new_range().end;
        let mut h = Hunk::default();
        for op in &group {
            let (tag, o, n) = op.as_tag_tuple();
            match tag {
                DiffTag::Equal => h
                    .lines
                    .extend(ta[o].iter().map(|t| line(LineKind::Context, t))),
                DiffTag::Delete => h
                    .lines
                    .extend(ta[o].iter().map(|t| line(LineKind::Delete, t))),
                DiffTag::Insert => h
                    .lines
                    .extend(tb[n].iter().map(|t| line(LineKind::Insert, t))),
                DiffTag::Replace => {
                    h.lines
                        .extend(ta[o].iter().map(|t| line(LineKind::Delete, t)));
                    h.lines
                        .extend(tb[n].iter().map(|t| line(LineKind::Insert, t)));
                }
            }
        }
        let start = |r: &std::ops::Range<usize>| if r.is_empty() { r.start } else { r.start + 1 };
        h.old_start = Some(start(&old));
        h.old_count = Some(old.len());
        h.new_start = Some(start(&new));
        h.new_count = Some(new.len());
        h.old_no_newline = !a_nl && !a.is_empty() && old.end == a.len();
        h.new_no_newline = !b_nl && !b.is_empty() && new.end == b.len();
        hunks.push(h);
    }
    hunks
}

/// The same hunks applied backwards.
fn reverse(hunks: &[Hunk<'static>]) -> Vec<Hunk<'static>> {
    hunks
        .iter()
        .map(|h| {
            let mut r = h.clone();
            for l in &mut r.lines {
                l.kind = match l.kind {
                    LineKind::Insert => LineKind::Delete,
                    LineKind::Delete => LineKind::Insert,
                    LineKind::Context => LineKind::Context,
                };
            }
            // Within a change block, deletions come first again.
            sort_blocks(&mut r.lines);
            (r.old_start, r.new_start) = (h.new_start, h.old_start);
            (r.old_count, r.new_count) = (h.new_count, h.old_count);
            (r.old_no_newline, r.new_no_newline) = (h.new_no_newline, h.old_no_newline);
            r
        })
        .collect()
}

fn sort_blocks(lines: &mut [Line<'static>]) {
    for block in lines.split_mut(|l| l.kind == LineKind::Context) {
        block.sort_by_key(|l| l.kind == LineKind::Insert);
    }
}

fn apply(file: &[u8], hunks: &[Hunk<'_>]) -> Result<Vec<u8>, LocateError> {
    run(file, hunks, Format::Unified, &LocateOptions::default()).map(|(b, _)| b)
}

fn text() -> impl Strategy<Value = (Vec<String>, bool)> {
    let words = prop::sample::select(vec!["a", "b", "c", "d", "e", "", "}"]);
    (
        prop::collection::vec(words.prop_map(String::from), 0..24),
        any::<bool>(),
    )
        .prop_map(
            // An empty last line without a newline is no line at all: keep texts representable.
            |(lines, nl)| {
                let nl = nl || lines.last().is_some_and(String::is_empty);
                (lines, nl)
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn diff_applies_and_reverses((a, a_nl) in text(), (b, b_nl) in text()) {
        let hunks = diff(&a, a_nl, &b, b_nl);
        let (old, new) = (bytes(&a, a_nl), bytes(&b, b_nl));
        prop_assert_eq!(apply(&old, &hunks).map_err(|e| TestCaseError::fail(e.to_string()))?, new.clone());
        prop_assert_eq!(apply(&new, &reverse(&hunks)).map_err(|e| TestCaseError::fail(e.to_string()))?, old);
    }

    #[test]
    fn diff_applies_after_lines_are_added_above(
        (a, a_nl) in text(),
        (b, b_nl) in text(),
        above in 1usize..60,
    ) {
        let hunks = diff(&a, a_nl, &b, b_nl);
        let extra: Vec<String> = (0..above).map(|i| format!("unrelated {i}")).collect();
        // Lines above an emptied text keep their newline.
        let b2_nl = b_nl || b.is_empty();
        let (a2, b2) = ([extra.clone(), a].concat(), [extra, b].concat());
        let file: Vec<&str> = a2.iter().map(String::as_str).collect();
        let unique = hunks.iter().all(|h| {
            let old: Vec<&str> = h.old_lines().map(|l| std::str::from_utf8(l).unwrap_or("\u{0}")).collect();
            !old.is_empty() && file.windows(old.len()).filter(|w| *w == &old[..]).count() == 1
        });
        prop_assume!(unique && !hunks.is_empty());
        // A hunk without leading context from line 1 is pinned to the start of the file
        // (SPEC §5 "Anchored ends"): lines added above it leave it nowhere to go.
        let pinned_to_start = hunks.iter().any(|h| {
            h.old_start.is_some_and(|s| s <= 1) && h.lines.first().is_some_and(|l| l.kind != LineKind::Context)
        });
        let got = apply(&bytes(&a2, a_nl), &hunks);
        if pinned_to_start {
            prop_assert!(matches!(got, Err(LocateError::ContextNotFound { .. })), "{:?}", got);
        } else {
            let got = got.map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(got, bytes(&b2, b2_nl));
        }
    }
}

// ---- (b): the rules, brute force ----

const WS: [char; 5] = [' ', '\t', '\r', '\x0c', '\x0b'];

fn fold(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        match c {
            '‘' | '’' | '‚' | '‛' | '′' => out.push('\''),
            '“' | '”' | '„' | '‟' | '″' => out.push('"'),
            '‐' | '‑' | '‒' | '–' | '—' | '―' | '−' => out.push('-'),
            '…' => out.push_str("..."),
            '\u{00A0}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => {
                out.push(' ')
            }
            '\u{200B}'..='\u{200D}' | '\u{FEFF}' => {}
            c => out.push(c),
        }
    }
    out
}

fn same(level: usize, a: &str, b: &str) -> bool {
    match level {
        1 => a == b,
        2 => a.trim_end_matches(WS) == b.trim_end_matches(WS),
        3 => a.trim_matches(WS) == b.trim_matches(WS),
        _ => fold(a).trim_matches(WS) == fold(b).trim_matches(WS),
    }
}

fn starts(level: usize, file: &[&str], pat: &[&str]) -> Vec<usize> {
    if pat.len() > file.len() {
        return Vec::new();
    }
    (0..=file.len() - pat.len())
        .filter(|&s| matches_at(level, file, pat, s))
        .collect()
}

fn matches_at(level: usize, file: &[&str], pat: &[&str], s: usize) -> bool {
    s + pat.len() <= file.len()
        && pat
            .iter()
            .enumerate()
            .all(|(j, p)| same(level, file[s + j], p))
}

#[derive(Debug, PartialEq)]
enum Verdict {
    /// Placed at a start and level, with this many outer context lines ignored (fuzz).
    Placed(usize, Level, usize),
    /// Already applied at a start, with this many context lines ignored.
    Applied(usize, usize),
    Ambiguous,
    NotFound,
}

/// Where the hunk is looked for: its explicit line-number hint (which chooses only when
/// `trusted`; "the line after the previous hunk" opens no window); `floor`: candidates begin
/// at or after it (below the previous hunk's first line); `start` / `end`: the ends of the
/// file it is pinned to; `fuzz`: `--fuzz N`.
struct Aim {
    explicit: Option<usize>,
    trusted: bool,
    floor: usize,
    window: usize,
    start: bool,
    end: bool,
    fuzz: usize,
}

/// A hunk as (kind, text) lines: ' ' context, '-' deleted, '+' inserted.
type Lines<'a> = [(char, &'a str)];

fn side<'a>(lines: &Lines<'a>, drop: char) -> Vec<&'a str> {
    lines
        .iter()
        .filter(|(k, _)| *k != drop)
        .map(|(_, t)| *t)
        .collect()
}

/// SPEC §5 for one hunk, read as plainly as possible: the ladder, then fuzz.
fn reference(file: &[&str], lines: &Lines<'_>, aim: &Aim) -> Verdict {
    let (old, new) = (side(lines, '+'), side(lines, '-'));
    // A pinned pattern may start only where it touches its ends of the file.
    let pinned =
        |s: usize, len: usize| (!aim.start || s == 0) && (!aim.end || s + len == file.len());
    let from = |floor: usize, level: usize, pat: &[&str]| -> Vec<usize> {
        starts(level, file, pat)
            .into_iter()
            .filter(|&s| s >= floor && pinned(s, pat.len()))
            .collect()
    };
    let below = |level: usize, pat: &[&str]| from(aim.floor, level, pat);
    // Already applied: no level-1 match of the old side, exactly one of the new side.
    let applied = || match (below(1, &old).is_empty(), &below(1, &new)[..]) {
        (true, [s]) => Some(Verdict::Applied(*s, 0)),
        _ => None,
    };
    // A match exactly at a trusted explicit hint, at the strictest level there, after the
    // already-applied check.
    let pinned_anywhere = aim.start || aim.end;
    if let Some(h) = aim
        .explicit
        .filter(|&h| aim.trusted && h >= aim.floor && !pinned_anywhere)
    {
        if let Some((level, name)) = (1..=4)
            .zip(Level::ALL)
            .find(|&(level, _)| matches_at(level, file, &old, h))
        {
            if level > 1 {
                if let Some(v) = applied() {
                    return v;
                }
            }
            return Verdict::Placed(h, name, 0);
        }
    }
    for (level, name) in (1..=4).zip(Level::ALL) {
        let all = below(level, &old);
        if let Some(h) = aim.explicit.filter(|_| !pinned_anywhere) {
            let near: Vec<&usize> = all.iter().filter(|s| s.abs_diff(h) <= aim.window).collect();
            if near.len() == 1 {
                return Verdict::Placed(*near[0], name, 0);
            }
        }
        match all.len() {
            0 => {}
            1 => return Verdict::Placed(all[0], name, 0),
            _ => return Verdict::Ambiguous,
        }
        if level == 1 {
            if let Some(v) = applied() {
                return v;
            }
        }
    }
    // Fuzz: the whole file, at each step; the widest trim must match nowhere else.
    let trims = fuzz_steps(lines, aim);
    let Some(&widest) = trims.last() else {
        return Verdict::NotFound;
    };
    let cut = |t: (usize, usize)| &lines[t.0..lines.len() - t.1];
    let whole = |level: usize, pat: &[&str]| from(0, level, pat);
    for &t in &trims {
        let (old, new) = (side(cut(t), '+'), side(cut(t), '-'));
        let (w_old, w_new) = (side(cut(widest), '+'), side(cut(widest), '-'));
        let shift = widest.0 - t.0;
        let lone = |all: &[usize], s: usize| all.iter().all(|&w| w == s + shift);
        let fuzz = t.0 + t.1;
        if whole(1, &old).is_empty() {
            if let [s] = whole(1, &new)[..] {
                if !lone(&whole(1, &w_new), s) {
                    return Verdict::Ambiguous;
                }
                return if s >= aim.floor {
                    Verdict::Applied(s, fuzz)
                } else {
                    Verdict::NotFound
                };
            }
        }
        for (level, name) in (1..=4).zip(Level::ALL) {
            match whole(level, &old)[..] {
                [] => continue,
                [s] if !lone(&whole(level, &w_old), s) => return Verdict::Ambiguous,
                [s] if s < aim.floor => return Verdict::NotFound,
                [s] => return Verdict::Placed(s, name, fuzz),
                _ => return Verdict::Ambiguous,
            }
        }
    }
    Verdict::NotFound
}

/// The trims of SPEC §5 "Fuzz", step by step: (top, bottom) context lines ignored.
fn fuzz_steps(lines: &Lines<'_>, aim: &Aim) -> Vec<(usize, usize)> {
    let lead = lines.iter().take_while(|(k, _)| *k == ' ').count();
    let trail = lines.iter().rev().take_while(|(k, _)| *k == ' ').count();
    if lead == lines.len() {
        return Vec::new();
    }
    let top_max = if aim.start { 0 } else { lead.saturating_sub(1) };
    let bottom_max = if aim.end { 0 } else { trail.saturating_sub(1) };
    let mut out: Vec<(usize, usize)> = Vec::new();
    for k in 1..=aim.fuzz {
        let t = (k.min(top_max), k.min(bottom_max));
        if out.last().copied().unwrap_or((0, 0)) == t {
            break;
        }
        let rest = &lines[t.0..lines.len() - t.1];
        if !rest
            .iter()
            .any(|(k, l)| *k != '+' && !l.trim_matches(WS).is_empty())
        {
            break;
        }
        out.push(t);
    }
    out
}

fn variant() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "x",
        "x ",
        " x",
        "\tx\t",
        "x\u{2019}",
        "x'",
        "y",
        "y\u{00A0}",
        "y ",
        "n",
        "",
    ])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    /// The hunk under test comes second when `prev` is set: a first hunk rewrites the one
    /// line `P` (inserted into the file at `prev`), and the second must be placed below it.
    #[test]
    fn placements_follow_the_rules(
        mut file in prop::collection::vec(variant(), 0..14),
        old in prop::collection::vec(variant(), 1..4),
        after in prop::collection::vec(variant(), 0..3),
        hint in prop::option::of(0usize..16),
        prev in prop::option::of(0usize..16),
        unified in any::<bool>(),
        window in 0usize..5,
        numbers in prop::sample::select(vec![
            LineNumbers::ByFormat,
            LineNumbers::Trusted,
            LineNumbers::Untrusted,
        ]),
        fuzz in 0usize..3,
    ) {
        let prev = prev.map(|p| p.min(file.len()));
        if let Some(p) = prev {
            file.insert(p, "P");
        }
        let hint = hint.map(|h| h.min(file.len()));
        // Context lines, the last old line deleted, "n" inserted in its place, then the
        // context lines `after`.
        // "n" at the old side's base indentation: re-basing never needs negative indentation.
        let base = old.iter().chain(&after).find(|l| !l.trim_matches(WS).is_empty()).map_or("", |l| {
            &l[..l.len() - l.trim_start_matches([' ', '\t']).len()]
        });
        let inserted = format!("{base}n");
        let mut lines: Vec<(char, &str)> = old[..old.len() - 1].iter().map(|l| (' ', *l)).collect();
        lines.push(('-', old[old.len() - 1]));
        lines.push(('+', inserted.as_str()));
        lines.extend(after.iter().map(|l| (' ', *l)));
        let mut h = Hunk::default();
        for (k, l) in &lines {
            let kind = match k {
                '-' => LineKind::Delete,
                '+' => LineKind::Insert,
                _ => LineKind::Context,
            };
            h.lines.push(Line::new(kind, l.as_bytes().to_vec()));
        }
        if let Some(s) = hint {
            h.old_start = Some(s + 1);
            h.old_count = Some(h.old_lines().count());
        }
        let format = if unified { Format::Unified } else { Format::Agent };
        let mut hunks = Vec::new();
        if let Some(p) = prev {
            let mut first = Hunk::default();
            first.lines.push(Line::new(LineKind::Delete, b"P".to_vec()));
            first.lines.push(Line::new(LineKind::Insert, b"Q".to_vec()));
            if unified {
                // A line of context below when there is one: a unified hunk without it is
                // pinned to the end of the file.
                if let Some(next) = file.get(p + 1) {
                    first.lines.push(Line::new(LineKind::Context, next.as_bytes().to_vec()));
                }
                first.old_start = Some(p + 1);
                first.old_count = Some(first.old_lines().count());
            }
            hunks.push(first);
        }
        hunks.push(h);
        let aim = Aim {
            explicit: hint,
            trusted: numbers.trusted(format),
            floor: prev.map_or(0, |p| p + 1),
            window,
            // A unified hunk without context below its change is pinned to the end; one
            // without context above (a lone deleted line) from line 1 to the start.
            start: unified && old.len() == 1 && hint == Some(0),
            end: unified && after.is_empty(),
            fuzz,
        };
        let want = reference(&file, &lines, &aim);
        let text = file.iter().map(|l| format!("{l}\n")).collect::<String>();
        let opts = LocateOptions::default().with_window(window).with_line_numbers(numbers).with_fuzz(fuzz);
        let index = hunks.len() - 1;
        let got = match run(text.as_bytes(), &hunks, format, &opts) {
            Ok((_, ps)) => {
                let p = ps.iter().find(|p| p.hunk == index).expect("one placement per hunk");
                if p.already_applied {
                    Verdict::Applied(p.start, p.fuzz.lines())
                } else {
                    Verdict::Placed(p.start, p.level, p.fuzz.lines())
                }
            }
            Err(e) if e.hunk() != index => {
                return Err(TestCaseError::fail(format!("the first hunk was refused: {e}")))
            }
            Err(LocateError::AmbiguousMatch { .. }) => Verdict::Ambiguous,
            // Once outer context lines are ignored, the base indentation of the inserted
            // line may be another line's: a place whose re-basing would need negative
            // indentation is refused, never guessed (SPEC §5 "What is written").
            Err(LocateError::ContextNotFound { message, .. })
                if message.contains("negative indentation") =>
            {
                let loose = matches!(want, Verdict::Placed(_, level, _) if level >= Level::Whitespace);
                prop_assert!(loose, "refused for indentation, want {:?}", want);
                return Ok(());
            }
            Err(LocateError::ContextNotFound { .. }) => Verdict::NotFound,
            Err(e) => return Err(TestCaseError::fail(format!("unexpected refusal: {e}"))),
        };
        prop_assert_eq!(got, want);
    }
}
