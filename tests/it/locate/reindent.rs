//! Re-basing inserted lines after a level-3/4 match (SPEC §5 "What is written"): the whole
//! inserted block moves from the patch's indentation to the file's, lines shallower than the
//! hunk's first line included; a line that would need negative indentation is refused. YAML,
//! Python and Makefile-like (tab) examples, JSON `replace`, and the property that re-indenting
//! a whole patch changes nothing in the result.

use std::borrow::Cow;

use apply_patch::locate::{locate_edits, Level, LocateError, LocateOptions};
use apply_patch::model::Edit;
use apply_patch::splice::splice;
use apply_patch::text::Text;
use apply_patch::{Format, Hunk, Line, LineKind};
use proptest::prelude::*;

use super::{apply, run};

#[test]
fn yaml_block_keeps_its_items_when_the_patch_is_two_columns_shallower() {
    let file = "jobs:\n  build:\n    steps:\n      - name: test\n        run: |\n          \
                cargo test\n          cargo build\n      - name: lint\n        run: cargo clippy\n";
    // The patch is indented 2 columns less than the file; its new step is shallower than
    // the hunk's first line (`run: |`).
    let patch = "       run: |\n         cargo test\n-        cargo build\n+        cargo build \
                 --release\n+    - name: docs\n+      run: cargo doc\n     - name: lint";
    let got = apply(file, &[patch], Format::Agent).expect("level 3");
    assert_eq!(
        got,
        "jobs:\n  build:\n    steps:\n      - name: test\n        run: |\n          cargo test\n          \
         cargo build --release\n      - name: docs\n        run: cargo doc\n      - name: lint\n        \
         run: cargo clippy\n"
    );
}

#[test]
fn python_method_added_from_inside_a_body_lands_in_the_class() {
    let file =
        "class A:\n    def f(self):\n        return 1\n\n    def g(self):\n        return 2\n";
    // Written without the class's indentation: the body line is the hunk's first line, the
    // new method is one level shallower than it.
    let patch = "     return 1\n+\n+def h(self):\n+    return 3\n \n def g(self):";
    let got = apply(file, &[patch], Format::Agent).expect("level 3");
    assert_eq!(
        got,
        "class A:\n    def f(self):\n        return 1\n\n    def h(self):\n        return 3\n\n    \
         def g(self):\n        return 2\n"
    );
}

#[test]
fn makefile_conditional_one_tab_shallower_is_shifted_by_one_tab() {
    let file =
        "ifeq ($(OS),linux)\n\tifdef DEBUG\n\t\tCFLAGS += -g\n\tendif\n\tLDFLAGS += -lm\nendif\n";
    let patch =
        " \tCFLAGS += -g\n endif\n+ifdef PROFILE\n+\tCFLAGS += -pg\n+endif\n LDFLAGS += -lm";
    let got = apply(file, &[patch], Format::Agent).expect("level 3");
    assert_eq!(
        got,
        "ifeq ($(OS),linux)\n\tifdef DEBUG\n\t\tCFLAGS += -g\n\tendif\n\tifdef PROFILE\n\t\tCFLAGS += \
         -pg\n\tendif\n\tLDFLAGS += -lm\nendif\n"
    );
}

#[test]
fn spaces_patch_on_a_tab_file_is_shifted_and_converted() {
    let file = "build:\n\tif [ -d out ]; then \\\n\t\trm -rf out; \\\n\tfi\ntest:\n\t./run-tests\n";
    let patch =
        "         rm -rf out; \\\n     fi\n+    @echo done\n+clean:\n+    rm -rf out\n test:";
    let got = apply(file, &[patch], Format::Agent).expect("level 3");
    assert_eq!(
        got,
        "build:\n\tif [ -d out ]; then \\\n\t\trm -rf out; \\\n\tfi\n\t@echo done\nclean:\n\trm -rf \
         out\ntest:\n\t./run-tests\n"
    );
}

#[test]
fn a_line_that_would_need_negative_indentation_is_refused() {
    let file = "a:\n  b: 1\n  c: 2\n";
    let patch = "     b: 1\n+x: 3\n     c: 2";
    let err = apply(file, &[patch], Format::Agent).expect_err("x would be 2 columns left of 0");
    let LocateError::ContextNotFound { message, hint, .. } = &err else {
        panic!("context_not_found expected: {err:?}");
    };
    assert!(message.contains("negative indentation"), "{message}");
    assert!(message.contains("`x: 3`"), "{message}");
    assert!(hint.contains("indentation"), "{hint}");
}

fn edit(file: &str, old: &'static str, new: &'static str) -> Result<String, LocateError> {
    let text = Text::parse(file.as_bytes());
    let edits = [Edit::Replace {
        old: Cow::Borrowed(old),
        new: Cow::Borrowed(new),
        all: false,
    }];
    let placed = locate_edits(&text, &edits, &LocateOptions::default())?;
    Ok(String::from_utf8(splice(&text, &placed)).expect("utf-8"))
}

#[test]
fn json_replace_shifts_every_new_line() {
    let file = "top:\n  a:\n    b: 1\n    c: 2\n";
    // `old` is 2 columns shallower than the file; `new` adds a sibling of `a`, shallower
    // than `old`'s first line.
    let got = edit(file, "  b: 1\n  c: 2\n", "  b: 1\n  c: 2\nd: 3\n").expect("level 3");
    assert_eq!(got, "top:\n  a:\n    b: 1\n    c: 2\n  d: 3\n");
    let err = edit("a:\n  b: 1\n", "    b: 1\n", "    b: 1\nx: 0\n").expect_err("negative");
    let LocateError::ContextNotFound { message, .. } = &err else {
        panic!("context_not_found expected: {err:?}");
    };
    assert!(message.starts_with("`old` "), "{message}");
    assert!(message.contains("negative indentation"), "{message}");
}

/// A file of unique lines indented in `unit` (depth 1 present so the unit is clear), with
/// some blank lines.
fn file_strategy() -> impl Strategy<Value = (String, Vec<String>)> {
    let unit = prop_oneof![Just("\t"), Just("  "), Just("    ")].prop_map(str::to_string);
    (unit, prop::collection::vec((0usize..4, 0u8..8), 4..16)).prop_map(|(unit, specs)| {
        let mut lines = vec![format!("{unit}first")];
        for (k, (depth, kind)) in specs.into_iter().enumerate() {
            lines.push(match kind {
                0 => String::new(),
                _ => format!("{}w{k}", unit.repeat(depth)),
            });
        }
        (unit, lines)
    })
}

/// A hunk over file lines `from..to` (some deleted) with inserted lines at depths 0..5,
/// blank ones included, each prefixed with `prefix`.
fn hunk_of(
    lines: &[String],
    from: usize,
    to: usize,
    plan: &[(u8, usize)],
    unit: &str,
) -> Hunk<'static> {
    let mut h = Hunk::default();
    for (i, line) in lines[from..to].iter().enumerate() {
        let (what, depth) = plan.get(i).copied().unwrap_or((0, 0));
        let kind = if what == 1 {
            LineKind::Delete
        } else {
            LineKind::Context
        };
        h.lines.push(Line::new(kind, line.clone().into_bytes()));
        if what == 2 {
            let text = format!("{}ins{i}", unit.repeat(depth));
            h.lines.push(Line::new(LineKind::Insert, text.into_bytes()));
        } else if what == 3 {
            h.lines.push(Line::new(LineKind::Insert, Vec::new()));
        }
    }
    h
}

fn prefixed(h: &Hunk<'static>, prefix: &str) -> Hunk<'static> {
    let mut out = h.clone();
    for line in &mut out.lines {
        let mut text = prefix.as_bytes().to_vec();
        text.extend_from_slice(&line.text);
        *line = Line::new(line.kind, text);
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn reindenting_the_whole_patch_changes_nothing(
        (unit, lines) in file_strategy(),
        span in (0usize..16, 1usize..6),
        plan in prop::collection::vec((0u8..4, 0usize..5), 6),
        prefix in "[ \t]{1,6}",
    ) {
        let from = span.0 % lines.len();
        let to = (from + span.1).min(lines.len());
        // The old side needs a non-blank line to have a base (and to match only at level 3).
        prop_assume!(lines[from..to].iter().any(|l| !l.trim().is_empty()));
        let file = lines.iter().map(|l| format!("{l}\n")).collect::<String>();
        let h = hunk_of(&lines, from, to, &plan, &unit);
        let opts = LocateOptions::default();
        let (want, placed) = run(file.as_bytes(), std::slice::from_ref(&h), Format::Agent, &opts)
            .expect("the patch copies the file");
        prop_assert_eq!(placed[0].level, Level::Exact);
        // Inserted blank lines beside blank context can make the patch's own new side
        // stand in the file already (already applied, SPEC §5), which only level 1 sees.
        prop_assume!(!placed[0].already_applied);
        let (got, placed) = run(file.as_bytes(), &[prefixed(&h, &prefix)], Format::Agent, &opts)
            .expect("the re-indented patch applies");
        prop_assert!(placed[0].level >= Level::Whitespace || placed[0].already_applied);
        prop_assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(&want));
    }
}
