//! SPEC §5 "Fuzz": outer context lines ignored step by step when no level finds a hunk, under
//! uniqueness in the whole file — one test per rule, and properties: a trimmed hunk never
//! lands where its untrimmed hunk has another unique place, bytes outside the edit never
//! change, and the result's reverse gives the file back.

use apply_patch::locate::{Fuzz, LocateError, LocateOptions};
use apply_patch::{Format, Hunk, LineKind};
use proptest::prelude::*;

use super::{hunk, run, trusted};

fn fuzz(n: usize) -> LocateOptions {
    LocateOptions::default().with_fuzz(n)
}

/// The file after `specs`, and each placement's (start, fuzz), with `opts`.
fn apply(
    file: &str,
    specs: &[&str],
    format: Format,
    opts: &LocateOptions,
) -> Result<(String, Vec<(usize, Fuzz)>), LocateError> {
    let hunks: Vec<Hunk<'_>> = specs.iter().map(|s| hunk(s)).collect();
    let (bytes, placed) = run(file.as_bytes(), &hunks, format, opts)?;
    let text = String::from_utf8(bytes).expect("utf-8 in, utf-8 out");
    Ok((text, placed.iter().map(|p| (p.start, p.fuzz)).collect()))
}

const FILE: &str = "fn main() {\n    let a = 1;\n    let b = 2;\n    let c = 3;\n    let d = 4;\n    let e = 5;\n}\n";

#[test]
fn drifted_outer_context_is_ignored_and_keeps_the_file_text() {
    // The outermost context line at each end changed since the hunk was made.
    let spec = " fn start() {\n     let a = 1;\n-    let b = 2;\n+    let b = 20;\n     let c = 3;\n     let z = 9;";
    let refused = apply(FILE, &[spec], Format::Agent, &fuzz(0));
    assert!(matches!(refused, Err(LocateError::ContextNotFound { .. })));
    let (got, placed) = apply(FILE, &[spec], Format::Agent, &fuzz(2)).expect("fuzz 1 finds it");
    assert_eq!(got, FILE.replace("b = 2;", "b = 20;"));
    // `start` is the first line of the trimmed match: `let a = 1;`, line 2.
    assert_eq!(placed, [(1, Fuzz::new(1, 1))]);
}

#[test]
fn the_second_outer_line_is_ignored_at_step_two_only_when_needed() {
    let spec = " changed one\n changed two\n     let c = 3;\n-    let d = 4;\n+    let d = 40;\n     let e = 5;\n }";
    let (_, placed) = apply(FILE, &[spec], Format::Agent, &fuzz(2)).expect("step 2");
    // Step 2 ignores two lines above, but only one below (one context line stays).
    assert_eq!(placed, [(3, Fuzz::new(2, 1))]);
    assert!(apply(FILE, &[spec], Format::Agent, &fuzz(1)).is_err());
}

#[test]
fn a_trimmed_hunk_in_two_places_is_ambiguous_without_selectors() {
    let file = "a\nx\ny\nz\nc\nx\ny\nz\nd\n";
    let spec = " q\n x\n-y\n+Y\n z";
    // Two hints and the window would pick the first: fuzz ignores them (and the trust).
    let mut h = hunk(spec);
    h.old_start = Some(2);
    let err = run(file.as_bytes(), &[h], Format::Agent, &trusted()).expect_err("two places");
    let LocateError::AmbiguousMatch { candidates, .. } = err else {
        panic!("want ambiguous_match: {err:?}");
    };
    assert_eq!(candidates.len(), 2);
    assert!(
        candidates.iter().all(|c| c.select.is_none()),
        "{candidates:?}"
    );
}

#[test]
fn a_copy_that_differs_only_in_the_outer_lines_cannot_be_chosen_by_them() {
    // Trimmed by one line the hunk (`k`, `x`, `-y`, `l`) is unique, but the widest trim
    // (`x`, `-y`, `l`) also stands at the top: the outer lines would be what chose.
    let file = "x\ny\nl\nk\nx\ny\nl\nw\n";
    let spec = " j\n k\n x\n-y\n+Y\n l\n m";
    let err = apply(file, &[spec], Format::Agent, &fuzz(2)).expect_err("the widest is twice");
    assert!(matches!(err, LocateError::AmbiguousMatch { .. }), "{err}");
    // With fuzz 1 the widest trim is the one-line trim, which is unique.
    let (got, _) = apply(file, &[spec], Format::Agent, &fuzz(1)).expect("fuzz 1");
    assert_eq!(got, "x\ny\nl\nk\nx\nY\nl\nw\n");
}

#[test]
fn the_one_match_above_the_previous_hunk_is_not_found() {
    let file = "a\nb\nc\nd\ne\nf\ng\nh\ni\n";
    let specs = [" f\n-g\n+G\n h", " zz\n b\n-c\n+C\n d\n yy"];
    let err = apply(file, &specs, Format::Agent, &fuzz(2)).expect_err("out of order");
    assert!(
        matches!(err, LocateError::ContextNotFound { hunk: 1, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("above hunk 1"), "{err}");
}

#[test]
fn deleted_lines_pinned_ends_and_single_context_lines_are_never_trimmed() {
    // A deleted line that differs is not fuzz's business.
    let spec = " fn main() {\n     let a = 1;\n-    let b = 3;\n+    let b = 20;\n     let c = 3;\n     let d = 4;";
    assert!(apply(FILE, &[spec], Format::Agent, &fuzz(2)).is_err());
    // One line of context at an end keeps it.
    let one = " fn start() {\n-    let a = 1;\n+    let a = 10;\n     let b = 2;";
    assert!(apply(FILE, &[one], Format::Agent, &fuzz(2)).is_err());
    // `*** End of File` pins the bottom: only the top may lose a line.
    let pinned = " other\n     let e = 5;\n-}\n+};\n*** End of File";
    let (got, placed) = apply(FILE, &[pinned], Format::Agent, &fuzz(2)).expect("top trimmed");
    assert!(got.ends_with("    let e = 5;\n};\n"), "{got}");
    assert_eq!(placed[0].1, Fuzz::new(1, 0));
    let bottom = " let e = 5;\n-}\n+};\n other\n*** End of File";
    assert!(apply(FILE, &[bottom], Format::Agent, &fuzz(2)).is_err());
}

#[test]
fn a_trimmed_hunk_already_there_is_already_applied() {
    let spec = " fn start() {\n     let a = 1;\n-    let b = 2;\n+    let b = 20;\n     let c = 3;\n     let z = 9;";
    let done = FILE.replace("b = 2;", "b = 20;");
    let hunks = [hunk(spec)];
    let (bytes, placed) = run(done.as_bytes(), &hunks, Format::Agent, &fuzz(2)).expect("applied");
    assert!(placed[0].already_applied);
    assert_eq!(placed[0].fuzz.lines(), 2);
    assert_eq!(bytes, done.as_bytes());
}

#[test]
fn a_unified_hunk_is_fuzzed_too_and_its_offset_counts_from_the_trimmed_hint() {
    let mut h = hunk(" fn start() {\n     let a = 1;\n-    let b = 2;\n+    let b = 20;\n     let c = 3;\n     let z = 9;");
    h.old_start = Some(1);
    h.old_count = Some(5);
    let (_, placed) = run(FILE.as_bytes(), &[h], Format::Unified, &fuzz(2)).expect("fuzz 1");
    // The trimmed old side starts one line below the hunk's first line, as its hint does.
    assert_eq!((placed[0].start, placed[0].offset), (1, Some(0)));
}

// ---- properties ----

/// A file of numbered lines with a few repeated ones, a random span to edit, and how many
/// outer context lines of the hunk drifted.
fn case() -> impl Strategy<Value = (Vec<String>, usize, usize, usize, usize)> {
    (8usize..40)
        .prop_flat_map(|n| {
            let lines = prop::collection::vec(
                prop::sample::select(vec!["a", "b", "}", "", "x = 1", "y = 2"]),
                n,
            );
            (lines, 3..n - 3, 0usize..3, 0usize..3, 0usize..2)
        })
        .prop_map(|(lines, at, top, bottom, copies)| {
            let lines = lines
                .into_iter()
                .enumerate()
                .map(|(i, l)| {
                    if i % 3 == 0 {
                        format!("line {i}")
                    } else {
                        l.to_string()
                    }
                })
                .collect();
            (lines, at, top, bottom, copies)
        })
}

/// A hunk of three context lines above and below line `at`, which it rewrites; the outer
/// `top` / `bottom` context lines replaced by lines the file does not hold.
fn drifted(file: &[String], at: usize, top: usize, bottom: usize) -> Hunk<'static> {
    let first = at.saturating_sub(3);
    let end = (at + 4).min(file.len());
    let line = |(i, text): (usize, &String)| {
        let drifted = i < first + top || (i > at && i >= end - bottom);
        format!(" {}\n", if drifted { "drifted" } else { text.as_str() })
    };
    let mut spec: String = file
        .iter()
        .enumerate()
        .take(at)
        .skip(first)
        .map(line)
        .collect();
    spec.push_str(&format!("-{}\n+{} edited\n", file[at], file[at]));
    spec.extend(file.iter().enumerate().take(end).skip(at + 1).map(line));
    hunk(spec.trim_end_matches('\n'))
}

fn join(lines: &[String]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

/// The same hunk applied backwards (its context kept).
fn reversed(h: &Hunk<'static>) -> Hunk<'static> {
    let mut r = h.clone();
    for l in &mut r.lines {
        l.kind = match l.kind {
            LineKind::Insert => LineKind::Delete,
            LineKind::Delete => LineKind::Insert,
            LineKind::Context => LineKind::Context,
        };
    }
    for block in r.lines.split_mut(|l| l.kind == LineKind::Context) {
        block.sort_by_key(|l| l.kind == LineKind::Insert);
    }
    r
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    #[test]
    fn fuzz_edits_only_its_own_lines_and_its_reverse_restores_the_file(
        (mut file, at, top, bottom, copies) in case(),
    ) {
        // Optional copies of the edited region elsewhere, to make fuzz refuse.
        for _ in 0..copies {
            let region: Vec<String> = file[at.saturating_sub(1)..(at + 2).min(file.len())].to_vec();
            file.extend(region);
        }
        let h = drifted(&file, at, top, bottom);
        let text = join(&file);
        let opts = LocateOptions::default();
        let Ok((after, placed)) = run(text.as_bytes(), std::slice::from_ref(&h), Format::Agent, &opts)
        else {
            return Ok(());
        };
        let p = &placed[0];
        // The untrimmed hunk had no place; the trimmed one has exactly one, and it is the
        // edited line's: fuzz never chooses a place the untrimmed hunk would not describe.
        let edited = p.start + (3.min(at) - p.fuzz.top);
        prop_assert_eq!(edited, at, "placed {:?}", p);
        // Bytes outside the edited line never change.
        let mut want = file.clone();
        want[at] = format!("{} edited", file[at]);
        prop_assert_eq!(String::from_utf8_lossy(&after), join(&want));
        // The result's reverse (with the same drifted context) gives the file back.
        let (back, _) = run(&after, &[reversed(&h)], Format::Agent, &opts)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(String::from_utf8_lossy(&back), text);
    }

    #[test]
    fn a_trimmed_hunk_never_lands_where_the_untrimmed_hunk_has_another_unique_place(
        (file, at, top, bottom, _) in case(),
        fuzz_n in 1usize..3,
    ) {
        // The untrimmed hunk, exact, unique somewhere: fuzz never runs, whatever it would find.
        let h = drifted(&file, at, 0, 0);
        let old: Vec<&[u8]> = h.old_lines().collect();
        let lines: Vec<&[u8]> = file.iter().map(|l| l.as_bytes()).collect();
        let places: Vec<usize> = (0..=lines.len() - old.len())
            .filter(|&s| lines[s..s + old.len()] == old[..])
            .collect();
        prop_assume!(places.len() == 1);
        let opts = LocateOptions::default().with_fuzz(fuzz_n);
        let (_, placed) = run(join(&file).as_bytes(), &[h], Format::Agent, &opts)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!((placed[0].start, placed[0].fuzz), (places[0], Fuzz::default()));
        // Drifted, it lands on that same place or nowhere.
        let drifted = drifted(&file, at, top, bottom);
        if let Ok((_, placed)) = run(join(&file).as_bytes(), &[drifted], Format::Agent, &opts) {
            prop_assert_eq!(placed[0].start, places[0] + placed[0].fuzz.top);
        }
    }
}
