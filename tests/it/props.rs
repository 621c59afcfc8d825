//! Property tests of the whole pipeline: random multi-file trees and random edits, the
//! unified diff of each file made with `render::file_diff`, applied with
//! `pipeline::apply_bytes` on a memory tree. The result must be exactly the intended tree; and a patch one of
//! whose files cannot apply must leave every file unchanged. `--reverse` then gives the
//! original bytes back.

use std::collections::BTreeMap;

use apply_patch::pipeline::{apply_bytes, Mode, Options, Target};
use apply_patch::render;
use apply_patch::report::Report;
use apply_patch::tree::MemTree;
use proptest::prelude::*;

/// One file's content: lines from a small vocabulary (repeats make placement non-trivial),
/// one line ending for the whole file, with or without a final newline.
#[derive(Debug, Clone)]
struct Content {
    lines: Vec<String>,
    crlf: bool,
    final_newline: bool,
    /// A UTF-8 BOM before line 1 (kept by every edit).
    bom: bool,
}

impl Content {
    fn bytes(&self) -> Vec<u8> {
        let eol = if self.crlf { "\r\n" } else { "\n" };
        let mut s = if self.bom {
            "\u{feff}".to_string()
        } else {
            String::new()
        };
        s.push_str(&self.lines.join(eol));
        if self.final_newline && !self.lines.is_empty() {
            s.push_str(eol);
        }
        s.into_bytes()
    }
}

fn line() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just("}".to_string()),
        Just("    return x;".to_string()),
        Just("\tindented".to_string()),
        "[a-e]{1,3}",
        "fn [a-z]{1,6}\\(\\) \\{",
    ]
}

fn content() -> impl Strategy<Value = Content> {
    (
        proptest::collection::vec(line(), 0..24),
        any::<bool>(),
        any::<bool>(),
        proptest::bool::weighted(0.2),
    )
        .prop_map(|(lines, crlf, final_newline, bom)| Content {
            lines,
            crlf,
            final_newline,
            bom,
        })
}

/// What happens to one file.
#[derive(Debug, Clone)]
enum Fate {
    Keep,
    /// (position seed, remove count, inserted lines) edits applied in turn.
    Edit(Vec<(usize, usize, Vec<String>)>, Option<bool>),
    Delete,
    Rename(Vec<(usize, usize, Vec<String>)>),
}

fn edits() -> impl Strategy<Value = Vec<(usize, usize, Vec<String>)>> {
    proptest::collection::vec(
        (
            any::<usize>(),
            0usize..3,
            proptest::collection::vec(line(), 0..3),
        ),
        1..4,
    )
}

fn fate() -> impl Strategy<Value = Fate> {
    prop_oneof![
        1 => Just(Fate::Keep),
        6 => (edits(), proptest::option::of(any::<bool>())).prop_map(|(e, nl)| Fate::Edit(e, nl)),
        1 => Just(Fate::Delete),
        1 => edits().prop_map(Fate::Rename),
    ]
}

fn edited(c: &Content, edits: &[(usize, usize, Vec<String>)], nl: Option<bool>) -> Content {
    let mut out = c.clone();
    // Inserted lines take the endings of the lines around them (SPEC §6), LF when there is
    // none: a file shows CRLF only when one of its lines has that ending.
    out.crlf = c.crlf && c.bytes().windows(2).any(|w| w == b"\r\n");
    for (pos, remove, insert) in edits {
        let at = pos % (out.lines.len() + 1);
        let end = (at + remove).min(out.lines.len());
        out.lines.splice(at..end, insert.iter().cloned());
    }
    if let Some(nl) = nl {
        out.final_newline = nl;
    }
    out
}

fn has_crlf(b: &[u8]) -> bool {
    b.windows(2).any(|w| w == b"\r\n")
}

/// The tree before, the intended tree after, the patch between them, and whether reversing
/// can give the CRLF endings back (a file left without lines, or deleted, keeps no ending to
/// copy: lines re-inserted there get LF, SPEC §6).
fn scenario(
    files: &[(Content, Fate)],
    added: &[Content],
) -> (MemTree, BTreeMap<String, Vec<u8>>, String, bool) {
    let mut reversible = true;
    let mut tree = MemTree::new();
    let mut want = BTreeMap::new();
    let mut patch = String::new();
    for (i, (c, fate)) in files.iter().enumerate() {
        let path = format!("dir{}/f{i}.txt", i % 2);
        let old = c.bytes();
        tree.insert(&path, old.clone());
        let kept_crlf = |new: &[u8]| !has_crlf(&old) || has_crlf(new);
        match fate {
            Fate::Keep => {
                want.insert(path, old);
            }
            Fate::Edit(e, nl) => {
                let new = edited(c, e, *nl).bytes();
                reversible &= kept_crlf(&new);
                patch.push_str(&render::file_diff(Some(&path), Some(&path), &old, &new));
                want.insert(path, new);
            }
            Fate::Delete => {
                reversible &= kept_crlf(b"");
                patch.push_str(&render::file_diff(Some(&path), None, &old, b""));
            }
            Fate::Rename(e) => {
                let to = format!("moved/f{i}.txt");
                let new = edited(c, e, None).bytes();
                reversible &= kept_crlf(&new);
                patch.push_str(&render::file_diff(Some(&path), Some(&to), &old, &new));
                want.insert(to, new);
            }
        }
    }
    for (i, c) in added.iter().enumerate() {
        let path = format!("new/n{i}.txt");
        let bytes = c.bytes();
        patch.push_str(&render::file_diff(None, Some(&path), b"", &bytes));
        want.insert(path, bytes);
    }
    (tree, want, patch, reversible)
}

fn files_of(tree: &MemTree) -> BTreeMap<String, Vec<u8>> {
    tree.entries()
        .filter_map(|(p, _)| tree.get(p).map(|b| (p.to_string(), b.to_vec())))
        .collect()
}

/// An added file from a diff gets LF endings (SPEC §6: an inserted line with no neighbour
/// takes LF), so new files are generated with LF only.
fn lf(c: Content) -> Content {
    Content { crlf: false, ..c }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn rendered_diffs_apply_to_exactly_the_intended_tree(
        files in proptest::collection::vec((content(), fate()), 1..5),
        added in proptest::collection::vec(content().prop_map(lf), 0..2),
    ) {
        let (mut tree, want, patch, reversible) = scenario(&files, &added);
        prop_assume!(!patch.is_empty());
        let before = files_of(&tree);
        let report = Report::from(&apply_bytes(Target::Memory(&mut tree), patch.as_bytes(), &Options::default(), Mode::Write));
        prop_assert!(report.ok, "{:?}\n{}", report.error, patch);
        prop_assert_eq!(files_of(&tree), want, "{}", patch);
        if !reversible {
            return Ok(());
        }
        // --reverse gives the original bytes back.
        let reverse = Options::builder().reverse(true).build();
        let report = Report::from(&apply_bytes(Target::Memory(&mut tree), patch.as_bytes(), &reverse, Mode::Write));
        prop_assert!(report.ok, "reverse: {:?}\n{}", report.error, patch);
        prop_assert_eq!(files_of(&tree), before, "reverse: {}", patch);
    }

    #[test]
    fn one_failing_file_leaves_every_file_unchanged(
        files in proptest::collection::vec((content(), fate()), 1..5),
        at in any::<usize>(),
    ) {
        let (mut tree, _, patch, _) = scenario(&files, &[]);
        // A file whose diff was made against other content: its hunk cannot be placed.
        tree.insert("victim.txt", b"what is really there\n".to_vec());
        let bad = render::file_diff(
            Some("victim.txt"),
            Some("victim.txt"),
            b"what the patch author saw\n",
            b"their edit\n",
        );
        let mut parts: Vec<&str> = patch.split_inclusive('\n').collect();
        let starts: Vec<usize> = parts
            .iter()
            .enumerate()
            .filter(|(_, l)| l.starts_with("diff --git "))
            .map(|(i, _)| i)
            .chain(std::iter::once(parts.len()))
            .collect();
        parts.insert(starts[at % starts.len()], &bad);
        let patch = parts.concat();
        let before = tree.clone();
        let report = Report::from(&apply_bytes(Target::Memory(&mut tree), patch.as_bytes(), &Options::default(), Mode::Write));
        prop_assert!(!report.ok, "{}", patch);
        prop_assert_eq!(
            report.error.as_ref().map(|e| e.code.as_str()),
            Some("context_not_found"),
            "{}", patch
        );
        prop_assert_eq!(tree, before);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// The same change in the agent language (converted with `render::to_agent`): it may be
    /// refused (repeated lines make places ambiguous), but what it applies is exactly the
    /// intended tree — never a misplaced hunk.
    #[test]
    fn agent_form_applies_exactly_or_refuses(
        files in proptest::collection::vec((content().prop_map(lf), fate()), 1..4),
    ) {
        let (mut tree, want, patch, _) = scenario(&files, &[]);
        prop_assume!(!patch.is_empty());
        let Ok(set) = apply_patch::parse::unified::parse(patch.as_bytes(), 0, &Default::default()) else {
            return Err(TestCaseError::fail(format!("a rendered diff parses: {patch}")));
        };
        let Ok(agent) = render::to_agent(&set) else {
            return Ok(());
        };
        let before = tree.clone();
        let report = Report::from(&apply_bytes(Target::Memory(&mut tree), agent.as_bytes(), &Options::default(), Mode::Write));
        if report.ok {
            prop_assert_eq!(files_of(&tree), want, "{}", agent);
        } else {
            prop_assert_eq!(tree, before, "{}", agent);
        }
    }
}
