//! SPEC §5 "Uniqueness": a match starting exactly at an explicit line-number hint is taken at
//! the strictest level that has one there, and every candidate of an `ambiguous_match` names
//! the selector (`@@` line, hunk header, `line_range` edit) that lands the change on it. Each
//! candidate of every ambiguity fixture is sent again as its error says, and must land there.

use std::borrow::Cow;

use apply_patch::error::Candidate;
use apply_patch::locate::{locate_edits, LocateError, LocateOptions};
use apply_patch::model::Edit;
use apply_patch::text::Text;
use apply_patch::{Format, Hunk};

use super::{apply, apply_with, hunk, run, trusted};

/// The candidates of an ambiguous refusal, as the boundary error carries them.
fn candidates(err: LocateError) -> (bool, Vec<Candidate>) {
    let anchor = matches!(&err, LocateError::AmbiguousMatch { message, .. }
        if message.starts_with("anchor "));
    let error = err.into_error("f");
    assert_eq!(error.code.as_str(), "ambiguous_match", "{}", error.message);
    (
        anchor,
        error
            .candidates()
            .expect("an ambiguity names its candidates")
            .to_vec(),
    )
}

/// `@@ -N @@` or `@@ -N,C +M,D @@`, read as the parser reads an `@@` line-number hint.
fn parse_header(header: &str) -> (usize, Option<usize>, Option<(usize, usize)>) {
    let inner = header
        .strip_prefix("@@ -")
        .and_then(|h| h.strip_suffix(" @@"))
        .unwrap_or_else(|| panic!("not an @@ line: {header}"));
    let mut parts = inner.split(" +");
    let pair = |p: &str| -> (usize, Option<usize>) {
        let mut n = p.split(',').map(|x| x.parse().expect("a number"));
        (n.next().expect("a start"), n.next())
    };
    let (old, old_count) = pair(parts.next().expect("the old side"));
    let new = parts
        .next()
        .map(pair)
        .map(|(s, c)| (s, c.expect("a unified header has counts")));
    (old, old_count, new)
}

/// Send `specs` again with candidate `c`'s selector on hunk `k`: in place of the hunk's @@
/// lines for a hunk, added to them (the hint replaced) for an anchor.
fn resend(specs: &[&str], k: usize, c: &Candidate, anchor: bool) -> Vec<Hunk<'static>> {
    let mut hunks: Vec<Hunk<'static>> = specs.iter().map(|s| hunk(s)).collect();
    let header = c
        .select
        .as_ref()
        .and_then(|s| s.as_str())
        .expect("a hunk candidate's select is an @@ line");
    let (old, old_count, new) = parse_header(header);
    let h = &mut hunks[k];
    if !anchor {
        h.anchors.clear();
    }
    h.old_start = Some(old);
    h.old_count = old_count;
    (h.new_start, h.new_count) = match new {
        Some((s, n)) => (Some(s), Some(n)),
        None => (None, None),
    };
    hunks
}

/// Resend every candidate of the refusal of `specs` on `file`; the failures, described. The
/// planner puts the file's `*** Base:` line above an agent candidate's `@@` line (the
/// command-line resend in `tests/it/regression.rs` sends both): here the `@@` line is resent
/// under the trust that Base line grants.
fn resend_each(name: &str, file: &[u8], specs: &[&str], format: Format) -> Vec<String> {
    let opts = LocateOptions::default();
    let hunks: Vec<Hunk<'_>> = specs.iter().map(|s| hunk(s)).collect();
    let err = match run(file, &hunks, format, &opts) {
        Err(e) => e,
        Ok(_) => return vec![format!("{name}: not refused")],
    };
    let k = err.hunk();
    let (anchor, cands) = candidates(err);
    let mut failures = Vec::new();
    for (i, c) in cands.iter().enumerate() {
        let label = format!("{name}, candidate {} ({:?})", i + 1, c.select);
        match run(file, &resend(specs, k, c, anchor), format, &trusted()) {
            Err(e) => failures.push(format!("{label}: refused again: {e}")),
            Ok((_, placed)) => {
                let p = placed.iter().find(|p| p.hunk == k).expect("placed");
                // A hunk starts on its candidate; after an anchor, below that anchor.
                let lands = if anchor {
                    p.start >= c.line
                } else {
                    p.start + 1 == c.line
                };
                if !lands {
                    failures.push(format!("{label}: landed at line {}", p.start + 1));
                }
            }
        }
    }
    failures
}

/// Ambiguity fixtures of this file: agent, unified (with drift), anchors, loose levels.
const FIXTURES: &[(&str, &str, &[&str], Format)] = &[
    (
        "two places",
        "a\nx += 1;\nb\nc\nx += 1;\nd\n",
        &["-x += 1;\n+x += 2;"],
        Format::Agent,
    ),
    (
        "twelve places at level 2",
        "}  \n}  \n}  \n}  \n}  \n}  \n}  \n}  \n}  \n}  \n}  \n}  \n",
        &["-}\n+};"],
        Format::Agent,
    ),
    (
        "exact candidates a few lines apart",
        "x = 1\ny\nx = 1\ny\nx = 1\ny\n",
        &[" x = 1\n-y\n+z"],
        Format::Agent,
    ),
    (
        "two blocks equal once whitespace is ignored",
        "a:\n\tgo()\nb:\n  go()\n",
        &["-    go()\n+    stop()"],
        Format::Agent,
    ),
    (
        "an anchor in two places, its hunk near each",
        "impl A {\n    x();\n}\n//\n//\n//\n//\n//\n//\n//\n//\n//\n//\n//\n//\n//\n//\n//\n//\n//\n//\n//\n//\nimpl A {\n    x();\n}\n",
        &["@@ impl A {\n-    x();\n+    y();"],
        Format::Agent,
    ),
    (
        "a second hunk with an anchor after the first",
        "fn a() {\n  z();\n}\nfn b() {\n  z();\n}\n",
        &["-fn a() {\n+fn a2() {", "  z();\n-}\n+};"],
        Format::Agent,
    ),
    (
        "unified, after a hunk found 3 lines down",
        "0\n1\n2\n3\ntop\nq\nq\nx\nq\nq\nx\nq\n",
        &["@@ -1,3\n 3\n-top\n+TOP\n q", "@@ -6,2\n-x\n+y\n q"],
        Format::Unified,
    ),
];

#[test]
fn every_candidate_resent_as_the_error_says_lands_there() {
    let mut failures = Vec::new();
    for (name, file, specs, format) in FIXTURES {
        failures.extend(resend_each(name, file.as_bytes(), specs, *format));
    }
    for (name, file, specs, format) in super::table::ambiguous_cases() {
        failures.extend(resend_each(&name, &file, specs, format));
    }
    for (name, file, specs, format) in super::refusals::AMBIGUOUS {
        failures.extend(resend_each(name, file.as_bytes(), specs, *format));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn an_anchor_selected_by_its_line_takes_the_hunk_near_it() {
    let (_, file, specs, _) = FIXTURES[4];
    let hunks = [hunk(specs[0])];
    let err = run(
        file.as_bytes(),
        &hunks,
        Format::Agent,
        &LocateOptions::default(),
    )
    .expect_err("two anchors");
    let (anchor, cands) = candidates(err);
    assert!(anchor);
    let landed: Vec<usize> = cands
        .iter()
        .map(|c| {
            let (_, placed) = run(
                file.as_bytes(),
                &resend(specs, 0, c, true),
                Format::Agent,
                &trusted(),
            )
            .expect("selected");
            placed[0].start + 1
        })
        .collect();
    assert_eq!(landed, [2, 25]);
}

#[test]
fn the_unified_selector_accounts_for_the_drift() {
    let file = "0\n1\n2\n3\ntop\nq\nq\nx\nq\nq\nx\nq\n";
    // Context on both sides: without it a unified hunk is pinned to an end of the file.
    let hunks: Vec<_> = ["@@ -1,3\n 3\n-top\n+TOP\n q", "@@ -6,2\n-x\n+y\n q"]
        .iter()
        .map(|s| hunk(s))
        .collect();
    let err = run(
        file.as_bytes(),
        &hunks,
        Format::Unified,
        &LocateOptions::default(),
    )
    .expect_err("x at lines 8 and 11, both near line 9");
    let (_, cands) = candidates(err);
    let selects: Vec<_> = cands.iter().map(|c| c.select.clone()).collect();
    assert_eq!(
        selects,
        [
            Some("@@ -5,2 +5,2 @@".into()),
            Some("@@ -8,2 +8,2 @@".into())
        ]
    );
}

#[test]
fn a_hint_on_a_loose_match_settles_it() {
    // Equal once leading whitespace is ignored: the hint on line 4 picks the second block.
    let file = "a:\n\tgo()\nb:\n  go()\n";
    let hunk = ["@@ -4\n-    go()\n+    stop()"];
    let got = apply_with(file, &hunk, Format::Agent, &trusted());
    assert_eq!(
        got.expect("the hint settles it"),
        "a:\n\tgo()\nb:\n  stop()\n"
    );
    // Without a Base the number only centres the window: both are near it.
    let guessed = apply(file, &hunk, Format::Agent);
    assert!(matches!(guessed, Err(LocateError::AmbiguousMatch { .. })));
}

#[test]
fn a_hint_on_a_candidates_first_line_settles_exact_candidates() {
    let file = "x = 1\ny\nx = 1\ny\nx = 1\ny\n";
    let got = apply_with(file, &["@@ -3\n x = 1\n-y\n+z"], Format::Agent, &trusted());
    assert_eq!(got.expect("at line 3"), "x = 1\ny\nx = 1\nz\nx = 1\ny\n");
    // A number inside the candidate is not its first line: still ambiguous, and the error
    // names the line that selects each candidate.
    let hunks = [hunk("@@ -4\n x = 1\n-y\n+z")];
    let err = run(
        file.as_bytes(),
        &hunks,
        Format::Agent,
        &LocateOptions::default(),
    )
    .expect_err("three candidates near line 4");
    let (_, cands) = candidates(err);
    let lines: Vec<_> = cands.iter().map(|c| (c.line, c.select.clone())).collect();
    assert_eq!(
        lines,
        [
            (1, Some("@@ -1 @@".into())),
            (3, Some("@@ -3 @@".into())),
            (5, Some("@@ -5 @@".into()))
        ]
    );
}

#[test]
fn an_already_applied_hunk_is_not_applied_again_at_its_hint() {
    // The old side matches loosely at the hint, the new side stands exactly elsewhere: the
    // already-applied check comes first.
    let file = "  x\nfiller\nnew\n";
    let placed = run(
        file.as_bytes(),
        &[hunk("@@ -1\n-x\n+new")],
        Format::Agent,
        &trusted(),
    )
    .expect("already applied");
    assert!(placed.1[0].already_applied, "{:?}", placed.1);
}

/// The `line_range` edit a `replace` candidate names.
fn line_range_of(c: &Candidate) -> Edit<'static> {
    let s = c
        .select
        .as_ref()
        .expect("a replace candidate names a line_range");
    assert_eq!(s["op"], "line_range");
    assert_eq!(s["path"], "f");
    let text = |k: &str| Cow::Owned(s[k].as_str().expect("a string").to_string());
    let number = |k: &str| s[k].as_u64().expect("a number") as usize;
    Edit::LineRange {
        start: number("start_line"),
        end: number("end_line"),
        expected: text("expected"),
        new_content: text("new_content"),
    }
}

#[test]
fn every_replace_candidate_resent_as_its_line_range_lands_there() {
    // (file, old, new, what the file becomes at each candidate)
    let cases: [(&str, &str, &str, &[&str]); 3] = [
        (
            "x = 1\nx = 2\nkeep\nlast\n",
            "x",
            "y",
            &["y = 1\nx = 2\nkeep\nlast\n", "x = 1\ny = 2\nkeep\nlast\n"],
        ),
        (
            "a\n  f(1)\n  g()\nb\n\tf(1)\n\tg()\nc\nd\n",
            "f(1)\ng()\n",
            "h()\n",
            &[
                "a\n  h()\nb\n\tf(1)\n\tg()\nc\nd\n",
                "a\n  f(1)\n  g()\nb\n\th()\nc\nd\n",
            ],
        ),
        (
            "top\nsame\nmid\nmore\nsame\n",
            "same",
            "diff",
            &[
                "top\ndiff\nmid\nmore\nsame\n",
                "top\nsame\nmid\nmore\ndiff\n",
            ],
        ),
    ];
    for (file, old, new, want) in cases {
        let text = Text::parse(file.as_bytes());
        let replace = Edit::Replace {
            old: Cow::Borrowed(old),
            new: Cow::Borrowed(new),
            all: false,
        };
        let err =
            locate_edits(&text, &[replace], &LocateOptions::default()).expect_err("two places");
        let (_, cands) = candidates(err);
        assert_eq!(cands.len(), want.len(), "{file:?}");
        for (c, want) in cands.iter().zip(want) {
            let placed = locate_edits(&text, &[line_range_of(c)], &LocateOptions::default())
                .unwrap_or_else(|e| panic!("{file:?}, {:?}: {e}", c.select));
            assert_eq!(placed[0].start + 1, c.line);
            let got = apply_patch::splice::splice(&text, &placed);
            assert_eq!(String::from_utf8_lossy(&got), *want, "{:?}", c.select);
        }
    }
}
