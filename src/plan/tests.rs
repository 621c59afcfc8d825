//! Planner tests on in-memory trees, including the byte-preservation property.

use super::*;
use crate::model::{Hunk, Line, LineKind};
use crate::tree::{MemEntry, MemTree};
use proptest::prelude::*;

fn fp<'a>(op: FileOp, old: Option<&str>, new: Option<&str>, hunks: Vec<Hunk<'a>>) -> FilePatch<'a> {
    FilePatch {
        op,
        old_path: old.map(str::to_string),
        new_path: new.map(str::to_string),
        old_mode: None,
        new_mode: None,
        base: None,
        blob_ids: None,
        body: Body::Hunks(hunks),
        patch_line: 1,
    }
}

fn inserts(lines: &[&'static str]) -> Hunk<'static> {
    Hunk {
        lines: lines
            .iter()
            .map(|l| Line::new(LineKind::Insert, l.as_bytes()))
            .collect(),
        ..Hunk::default()
    }
}

fn set(files: Vec<FilePatch<'static>>) -> PatchSet<'static> {
    PatchSet {
        format: Format::Agent,
        cd: None,
        files,
    }
}

#[test]
fn delete_then_add_replaces_the_file() {
    let mut tree = MemTree::new();
    tree.insert("x", b"old\n".to_vec());
    let patch = set(vec![
        fp(FileOp::Delete, Some("x"), None, vec![]),
        fp(FileOp::Add, None, Some("x"), vec![inserts(&["new"])]),
    ]);
    let plan = plan(&tree, &patch, &PlanOptions::default()).expect("plans");
    assert_eq!(plan.changes.len(), 1);
    assert_eq!(
        plan.changes[0].after,
        NewState::File {
            bytes: b"new\n".to_vec(),
            mode: 0o644
        }
    );
    assert_eq!(plan.files.len(), 2);
}

#[test]
fn add_then_delete_changes_nothing() {
    let tree = MemTree::new();
    let patch = set(vec![
        fp(FileOp::Add, None, Some("x"), vec![inserts(&["a"])]),
        fp(FileOp::Delete, Some("x"), None, vec![]),
    ]);
    let plan = plan(&tree, &patch, &PlanOptions::default()).expect("plans");
    assert!(plan.changes.is_empty());
}

#[test]
fn add_of_identical_file_is_already_applied() {
    let mut tree = MemTree::new();
    tree.insert("x", b"a\n".to_vec());
    let patch = set(vec![fp(
        FileOp::Add,
        None,
        Some("x"),
        vec![inserts(&["a"])],
    )]);
    let planned = plan(&tree, &patch, &PlanOptions::default()).expect("plans");
    assert!(planned.changes.is_empty());
    assert_eq!(planned.warnings[0].code, WarningCode::AlreadyApplied);
    // Partly applied: the identical Add plus a real Add is refused.
    let patch = set(vec![
        fp(FileOp::Add, None, Some("x"), vec![inserts(&["a"])]),
        fp(FileOp::Add, None, Some("y"), vec![inserts(&["b"])]),
    ]);
    let refusal = plan(&tree, &patch, &PlanOptions::default()).expect_err("partly applied");
    assert_eq!(refusal.error.code, ErrorCode::AlreadyApplied);
    assert!(refusal.error.message.contains("x (already added)"));
}

#[test]
fn mode_change_keeps_content_and_sets_exec_bits() {
    let mut tree = MemTree::new();
    tree.insert("run.sh", b"echo\n".to_vec());
    let mut p = fp(FileOp::Mode, Some("run.sh"), Some("run.sh"), vec![]);
    p.old_mode = Some(Mode::FILE);
    p.new_mode = Some(Mode::EXECUTABLE);
    let plan = plan(&tree, &set(vec![p]), &PlanOptions::default()).expect("plans");
    assert_eq!(
        plan.changes[0].after,
        NewState::File {
            bytes: b"echo\n".to_vec(),
            mode: 0o755
        }
    );
}

#[test]
fn symlink_added_from_a_diff_is_a_link() {
    let tree = MemTree::new();
    let mut p = fp(
        FileOp::Add,
        None,
        Some("l"),
        vec![Hunk {
            new_no_newline: true,
            ..inserts(&["target.txt"])
        }],
    );
    p.new_mode = Some(Mode::SYMLINK);
    let plan = plan(&tree, &set(vec![p]), &PlanOptions::default()).expect("plans");
    assert_eq!(
        plan.changes[0].after,
        NewState::Symlink {
            target: b"target.txt".to_vec()
        }
    );
}

#[test]
fn gitlinks_and_directories_are_refused() {
    let mut tree = MemTree::new();
    tree.insert("d/f", b"x".to_vec());
    let mut p = fp(FileOp::Add, None, Some("sub"), vec![]);
    p.new_mode = Some(Mode::GITLINK);
    let code = |ps| {
        plan(&tree, &set(ps), &PlanOptions::default())
            .err()
            .map(|r| r.error.code)
    };
    assert_eq!(code(vec![p]), Some(ErrorCode::UnsupportedFile));
    assert_eq!(
        code(vec![fp(FileOp::Delete, Some("d"), None, vec![])]),
        Some(ErrorCode::IsDirectory)
    );
    assert_eq!(
        code(vec![fp(FileOp::Delete, Some("nope"), None, vec![])]),
        Some(ErrorCode::FileNotFound)
    );
}

#[test]
fn delete_of_a_symlink_removes_the_link() {
    let mut tree = MemTree::new();
    tree.insert("real", b"x\n".to_vec());
    tree.insert_entry(
        "l",
        MemEntry::Symlink {
            target: b"real".to_vec(),
        },
    );
    let plan = plan(
        &tree,
        &set(vec![fp(FileOp::Delete, Some("l"), None, vec![])]),
        &PlanOptions::default(),
    )
    .expect("plans");
    assert_eq!(plan.changes.len(), 1);
    assert_eq!(plan.changes[0].path, "l");
    assert_eq!(plan.changes[0].after, NewState::Absent);
}

/// A random file: unique line contents with random tabs and spaces, random endings,
/// maybe a BOM, maybe no final newline.
fn file_strategy() -> impl Strategy<Value = (bool, Vec<(String, bool)>, bool)> {
    let line = ("[ \t]{0,3}", "[a-z ]{0,8}", "[ \t]{0,2}", any::<bool>());
    (
        any::<bool>(),
        prop::collection::vec(line, 1..25),
        any::<bool>(),
    )
        .prop_map(|(bom, lines, final_nl)| {
            let lines = lines
                .into_iter()
                .enumerate()
                .map(|(i, (lead, body, trail, crlf))| (format!("{lead}{i}:{body}{trail}"), crlf))
                .collect();
            (bom, lines, final_nl)
        })
}

fn line_bytes(
    lines: &[(String, bool)],
    range: std::ops::Range<usize>,
    last_ending: bool,
) -> Vec<u8> {
    let n = lines.len();
    let mut out = Vec::new();
    for i in range {
        out.extend_from_slice(lines[i].0.as_bytes());
        if i + 1 < n || last_ending {
            out.extend_from_slice(if lines[i].1 { b"\r\n" } else { b"\n" });
        }
    }
    out
}

proptest! {
    #[test]
    fn bytes_outside_the_edit_never_change(
        (bom, lines, final_nl) in file_strategy(),
        at in 0usize..25, deleted in 0usize..3, inserted in prop::collection::vec("[a-z]{1,6}", 0..3),
    ) {
        let n = lines.len();
        let at = at % n;
        let deleted = deleted.min(n - at);
        prop_assume!(deleted + inserted.len() > 0);
        let mut bytes = if bom { crate::text::BOM.to_vec() } else { Vec::new() };
        bytes.extend(line_bytes(&lines, 0..n, final_nl));
        let mut tree = MemTree::new();
        tree.insert("f", bytes.clone());
        // Context: one line before and after when there is one.
        let ctx_before = at.checked_sub(1);
        let ctx_after = (at + deleted < n).then_some(at + deleted);
        let mut hunk_lines = Vec::new();
        if let Some(c) = ctx_before { hunk_lines.push(Line::new(LineKind::Context, lines[c].0.clone().into_bytes())); }
        for line in &lines[at..at + deleted] { hunk_lines.push(Line::new(LineKind::Delete, line.0.clone().into_bytes())); }
        for text in &inserted { hunk_lines.push(Line::new(LineKind::Insert, format!("new {text}").into_bytes())); }
        if let Some(c) = ctx_after { hunk_lines.push(Line::new(LineKind::Context, lines[c].0.clone().into_bytes())); }
        let hunk = Hunk { lines: hunk_lines, end_of_file: ctx_after.is_none(), ..Hunk::default() };
        let patch = set(vec![fp(FileOp::Modify, Some("f"), Some("f"), vec![hunk])]);
        let planned = plan(&tree, &patch, &PlanOptions::default()).map_err(|r| TestCaseError::fail(r.error.message))?;
        let new = match planned.changes.first().map(|c| &c.after) {
            Some(NewState::File { bytes, .. }) => bytes.clone(),
            _ => bytes.clone(),
        };
        let mut prefix = if bom { crate::text::BOM.to_vec() } else { Vec::new() };
        prefix.extend(line_bytes(&lines, 0..at, true));
        if at + deleted == n && inserted.is_empty() {
            // The last kept line becomes the last line: it ends as the file did.
            let mut expected = prefix.clone();
            if !final_nl && at > 0 {
                let cut = if lines[at - 1].1 { 2 } else { 1 };
                expected.truncate(expected.len() - cut);
            }
            prop_assert_eq!(new, expected);
            return Ok(());
        }
        let suffix = line_bytes(&lines, at + deleted..n, final_nl);
        prop_assert!(new.starts_with(&prefix), "prefix changed: {:?}", String::from_utf8_lossy(&new));
        prop_assert!(new.ends_with(&suffix), "suffix changed: {:?}", String::from_utf8_lossy(&new));
        prop_assert_eq!(new.ends_with(b"\n"), final_nl);
        let middle = &new[prefix.len()..new.len() - suffix.len()];
        let middle_lines: Vec<String> = String::from_utf8_lossy(middle)
            .lines()
            .map(|l| l.trim_end_matches('\r').to_string())
            .collect();
        let wanted: Vec<String> = inserted.iter().map(|t| format!("new {t}")).collect();
        prop_assert_eq!(middle_lines, wanted);
    }
}

#[test]
fn move_already_done_counts_as_applied() {
    let mut tree = MemTree::new();
    tree.insert("new.txt", b"two\n".to_vec());
    let hunk = Hunk {
        lines: vec![
            Line::new(LineKind::Delete, &b"one"[..]),
            Line::new(LineKind::Insert, &b"two"[..]),
        ],
        ..Hunk::default()
    };
    let patch = set(vec![fp(
        FileOp::Rename,
        Some("old.txt"),
        Some("new.txt"),
        vec![hunk],
    )]);
    let planned = plan(&tree, &patch, &PlanOptions::default()).expect("already applied");
    assert!(planned.changes.is_empty());
    assert_eq!(planned.warnings[0].code, WarningCode::AlreadyApplied);
}

#[test]
fn mode_already_set_counts_as_applied() {
    let mut tree = MemTree::new();
    tree.insert_entry(
        "run.sh",
        MemEntry::File {
            bytes: b"x\n".to_vec(),
            mode: 0o755,
        },
    );
    let mut p = fp(FileOp::Mode, Some("run.sh"), Some("run.sh"), vec![]);
    p.old_mode = Some(Mode::FILE);
    p.new_mode = Some(Mode::EXECUTABLE);
    let planned = plan(&tree, &set(vec![p]), &PlanOptions::default()).expect("plans");
    assert!(planned.changes.is_empty());
    assert_eq!(planned.warnings[0].code, WarningCode::AlreadyApplied);
}

#[test]
fn same_file_updated_twice_sees_the_first_update() {
    let mut tree = MemTree::new();
    tree.insert("a", b"one\ntwo\n".to_vec());
    let edit = |old: &'static str, new: &'static str| Hunk {
        lines: vec![
            Line::new(LineKind::Delete, old.as_bytes()),
            Line::new(LineKind::Insert, new.as_bytes()),
        ],
        ..Hunk::default()
    };
    let patch = set(vec![
        fp(
            FileOp::Modify,
            Some("a"),
            Some("a"),
            vec![edit("one", "ONE")],
        ),
        fp(FileOp::Modify, Some("a"), Some("a"), vec![edit("ONE", "1")]),
    ]);
    let planned = plan(&tree, &patch, &PlanOptions::default()).expect("plans");
    assert_eq!(
        planned.changes[0].after,
        NewState::File {
            bytes: b"1\ntwo\n".to_vec(),
            mode: 0o644
        }
    );
}
