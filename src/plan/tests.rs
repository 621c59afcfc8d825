//! Planner tests on in-memory trees, including the byte-preservation property.

use super::edit::PARALLEL_BYTES;
use super::*;
use crate::error::ErrorCode;
use crate::model::{Hunk, Line, LineKind};
use crate::tree::{MemEntry, MemTree};
use proptest::prelude::*;

fn fp<'a>(op: FileOp, old: Option<&str>, new: Option<&str>, hunks: Vec<Hunk<'a>>) -> FilePatch<'a> {
    let (old, new) = (old.map(str::to_string), new.map(str::to_string));
    FilePatch::new(op, old, new, Body::Hunks(hunks), 1)
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
        rules: crate::model::Rules::AGENT,
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
            bytes: b"new\n".to_vec().into(),
            mode: 0o644,
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
            bytes: b"echo\n".to_vec().into(),
            mode: 0o755,
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

/// One edit site: first line, lines deleted, lines inserted.
type Site = (usize, usize, Vec<String>);

/// Up to three non-overlapping edit sites with at least one untouched line between them.
fn sites(n: usize, raw: Vec<(usize, usize, Vec<String>)>) -> Vec<Site> {
    let mut starts: Vec<(usize, usize, Vec<String>)> = raw
        .into_iter()
        .map(|(at, del, ins)| (at % n, del, ins))
        .collect();
    starts.sort_by_key(|s| s.0);
    let mut out: Vec<Site> = Vec::new();
    let mut free = 0;
    for (at, del, ins) in starts {
        if at < free {
            continue;
        }
        let del = del.min(n - at);
        if del + ins.len() == 0 {
            continue;
        }
        out.push((at, del, ins));
        free = at + del + 1;
    }
    out
}

/// What a line of the result must end with.
#[derive(Debug, Clone, Copy, PartialEq)]
enum End {
    Exact(&'static [u8]),
    AnyNewline,
    Nothing,
}

/// The result's lines: untouched ones with their own bytes, inserted ones by content.
fn expected_lines(lines: &[(String, bool)], sites: &[Site], final_nl: bool) -> Vec<(String, End)> {
    let n = lines.len();
    let own = |i: usize| {
        if i + 1 == n && !final_nl {
            End::Nothing
        } else if lines[i].1 {
            End::Exact(b"\r\n")
        } else {
            End::Exact(b"\n")
        }
    };
    let mut out = Vec::new();
    let mut cursor = 0;
    for (at, del, ins) in sites {
        out.extend((cursor..*at).map(|i| (lines[i].0.clone(), own(i))));
        out.extend(ins.iter().map(|t| (format!("new {t}"), End::AnyNewline)));
        cursor = at + del;
    }
    out.extend((cursor..n).map(|i| (lines[i].0.clone(), own(i))));
    if let Some(last) = out.last_mut() {
        if !final_nl {
            last.1 = End::Nothing;
        }
    }
    out
}

/// Check `new` against the expected lines; Err names the first difference.
fn matches_expected(mut new: &[u8], bom: bool, expected: &[(String, End)]) -> Result<(), String> {
    if bom {
        new = new
            .strip_prefix(crate::text::BOM)
            .ok_or("the BOM is gone")?;
    }
    for (k, (content, end)) in expected.iter().enumerate() {
        new = new
            .strip_prefix(content.as_bytes())
            .ok_or_else(|| format!("line {}: expected {content:?}", k + 1))?;
        new = match end {
            End::Nothing => new,
            End::Exact(e) => new
                .strip_prefix(*e)
                .ok_or_else(|| format!("line {}: ending changed", k + 1))?,
            End::AnyNewline => new
                .strip_prefix(b"\r\n")
                .or_else(|| new.strip_prefix(b"\n"))
                .ok_or_else(|| format!("line {}: no line ending", k + 1))?,
        };
    }
    if new.is_empty() {
        Ok(())
    } else {
        Err(format!("{} unexpected bytes at the end", new.len()))
    }
}

/// One agent-style hunk per site, with one context line on each side when there is one.
fn site_hunks(lines: &[(String, bool)], sites: &[Site]) -> Vec<Hunk<'static>> {
    let n = lines.len();
    sites
        .iter()
        .map(|(at, del, ins)| {
            let text = |i: usize| lines[i].0.clone().into_bytes();
            let mut hl = Vec::new();
            if *at > 0 {
                hl.push(Line::new(LineKind::Context, text(at - 1)));
            }
            hl.extend((*at..at + del).map(|i| Line::new(LineKind::Delete, text(i))));
            hl.extend(
                ins.iter()
                    .map(|t| Line::new(LineKind::Insert, format!("new {t}").into_bytes())),
            );
            let after = at + del;
            if after < n {
                hl.push(Line::new(LineKind::Context, text(after)));
            }
            Hunk {
                lines: hl,
                end_of_file: after == n,
                ..Hunk::default()
            }
        })
        .collect()
}

proptest! {
    #[test]
    fn bytes_outside_the_edits_never_change(
        (bom, lines, final_nl) in file_strategy(),
        raw in prop::collection::vec((0usize..25, 0usize..3, prop::collection::vec("[a-z]{1,6}", 0..3)), 1..4),
    ) {
        let n = lines.len();
        let sites = sites(n, raw);
        prop_assume!(!sites.is_empty());
        let mut bytes = if bom { crate::text::BOM.to_vec() } else { Vec::new() };
        bytes.extend(line_bytes(&lines, 0..n, final_nl));
        let mut tree = MemTree::new();
        tree.insert("f", bytes.clone());
        let patch = set(vec![fp(FileOp::Modify, Some("f"), Some("f"), site_hunks(&lines, &sites))]);
        let planned = plan(&tree, &patch, &PlanOptions::default())
            .map_err(|r| TestCaseError::fail(r.error.message))?;
        let new = match planned.changes.first().map(|c| &c.after) {
            Some(NewState::File { bytes, .. }) => bytes.to_vec(),
            _ => bytes.clone(),
        };
        let expected = expected_lines(&lines, &sites, final_nl);
        if let Err(why) = matches_expected(&new, bom, &expected) {
            return Err(TestCaseError::fail(format!("{why}: {:?}", String::from_utf8_lossy(&new))));
        }
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
            bytes: b"1\ntwo\n".to_vec().into(),
            mode: 0o644,
        }
    );
}

/// `a` edited (`one` → `ONE`), then `op` from `a` to `b` with no hunks, in `format`.
fn edit_then(format: Format, op: FileOp) -> Result<Plan, Box<Refusal>> {
    let mut tree = MemTree::new();
    tree.insert("a", b"one\ntwo\n".to_vec());
    // A line of context below: a unified hunk without it is pinned to the end of the file.
    let edit = Hunk {
        lines: vec![
            Line::new(LineKind::Delete, b"one"),
            Line::new(LineKind::Insert, b"ONE"),
            Line::new(LineKind::Context, b"two"),
        ],
        ..Hunk::default()
    };
    let mut patch = set(vec![
        fp(FileOp::Modify, Some("a"), Some("a"), vec![edit]),
        fp(op, Some("a"), Some("b"), vec![]),
    ]);
    patch.format = format;
    patch.rules = format.into();
    plan(&tree, &patch, &PlanOptions::default())
}

fn after(plan: &Plan, path: &str) -> Option<NewState> {
    let change = plan.changes.iter().find(|c| c.path == path);
    change.map(|c| c.after.clone())
}

#[test]
fn a_git_diff_copies_the_file_as_it_was_before_the_diff() {
    let planned = edit_then(Format::Unified, FileOp::Copy).expect("plans");
    let file = |bytes: &[u8]| {
        Some(NewState::File {
            bytes: bytes.to_vec().into(),
            mode: 0o644,
        })
    };
    assert_eq!(after(&planned, "a"), file(b"ONE\ntwo\n"));
    assert_eq!(after(&planned, "b"), file(b"one\ntwo\n"));
}

#[test]
fn an_agent_move_reads_the_file_as_the_operations_before_left_it() {
    let planned = edit_then(Format::Agent, FileOp::Rename).expect("plans");
    assert_eq!(after(&planned, "a"), Some(NewState::Absent));
    assert_eq!(
        after(&planned, "b"),
        Some(NewState::File {
            bytes: b"ONE\ntwo\n".to_vec().into(),
            mode: 0o644,
        })
    );
}

#[test]
fn a_git_diff_that_edits_a_file_and_renames_it_away_is_refused() {
    let refusal = edit_then(Format::Unified, FileOp::Rename).expect_err("refused");
    assert_eq!(refusal.error.code, ErrorCode::OverlappingHunks);
    assert_eq!(refusal.error.path.as_deref(), Some("a"));
}

/// A file large enough for the planner's two-thread path (`PARALLEL_BYTES`), and a hunk
/// that turns line `i` into upper case with one context line on each side.
fn big_file() -> (Vec<u8>, impl Fn(usize) -> Hunk<'static>) {
    let text: String = (0..150_000).map(|i| format!("line {i}\n")).collect();
    assert!(text.len() > PARALLEL_BYTES);
    let hunk = |i: usize| Hunk {
        lines: vec![
            Line::new(LineKind::Context, format!("line {}", i - 1).into_bytes()),
            Line::new(LineKind::Delete, format!("line {i}").into_bytes()),
            Line::new(LineKind::Insert, format!("LINE {i}").into_bytes()),
            Line::new(LineKind::Context, format!("line {}", i + 1).into_bytes()),
        ],
        ..Hunk::default()
    };
    (text.into_bytes(), hunk)
}

#[test]
fn a_large_file_planned_on_two_threads_gives_the_same_result() {
    let (bytes, hunk) = big_file();
    let mut tree = MemTree::new();
    tree.insert("big.txt", bytes.clone());
    let at = [10, 50_000, 149_998];
    let hunks = at.iter().map(|&i| hunk(i)).collect();
    let patch = set(vec![fp(
        FileOp::Modify,
        Some("big.txt"),
        Some("big.txt"),
        hunks,
    )]);
    let planned = plan(&tree, &patch, &PlanOptions::default()).expect("plans");
    let mut want = String::from_utf8(bytes).expect("ASCII");
    for i in at {
        want = want.replace(&format!("\nline {i}\n"), &format!("\nLINE {i}\n"));
    }
    let want = want.into_bytes();
    assert_eq!(
        planned.changes[0].after,
        NewState::File {
            bytes: want.clone().into(),
            mode: 0o644,
        }
    );
    let NewState::File { bytes: new, .. } = &planned.changes[0].after else {
        panic!("a file is planned");
    };
    assert!(
        new.is_recipe(),
        "a large file's new content is not copied at planning"
    );
    // The new content's hash is left to the transaction (it takes it while writing the
    // file); the report shows it either way.
    assert_eq!(planned.files[0].new_sha256, None);
    let report = crate::report::Report::success(planned.files.clone(), Vec::new());
    assert_eq!(
        report.files[0].new_sha256.as_deref(),
        Some(hex(&crate::txn::sha256(&want)).as_str())
    );
    let lines: Vec<usize> = report.files[0].hunks.iter().map(|h| h.line).collect();
    assert_eq!(lines, vec![10, 50_000, 149_998]);
}

#[test]
fn on_two_threads_a_stale_base_still_comes_before_a_hunk_that_is_not_found() {
    let (bytes, hunk) = big_file();
    let mut tree = MemTree::new();
    tree.insert("big.txt", bytes);
    let mut missing = hunk(20);
    missing.lines[1] = Line::new(LineKind::Delete, b"no such line".to_vec());
    let mut file = fp(
        FileOp::Modify,
        Some("big.txt"),
        Some("big.txt"),
        vec![missing],
    );
    file.blob_ids = Some(crate::model::BlobIds {
        old: "0123456".into(),
        new: "89abcde".into(),
    });
    let opts = PlanOptions {
        strict_base: true,
        ..PlanOptions::default()
    };
    let refused = plan(&tree, &set(vec![file.clone()]), &opts).expect_err("stale");
    assert_eq!(refused.error.code, ErrorCode::StaleFile);
    let refused = plan(&tree, &set(vec![file]), &PlanOptions::default()).expect_err("refused");
    assert_eq!(refused.error.code, ErrorCode::ContextNotFound);
    assert_eq!(refused.warnings[0].code, WarningCode::BaseMismatch);
}

#[test]
fn on_two_threads_a_large_non_utf8_file_is_placed_byte_for_byte_or_refused() {
    let (mut bytes, hunk) = big_file();
    bytes.extend_from_slice(b"caf\xe9\n");
    let mut tree = MemTree::new();
    tree.insert("big.txt", bytes.clone());
    let file = fp(
        FileOp::Modify,
        Some("big.txt"),
        Some("big.txt"),
        vec![hunk(7)],
    );
    let unified = PatchSet {
        format: Format::Unified,
        rules: crate::model::Rules::UNIFIED,
        cd: None,
        files: vec![file.clone()],
    };
    let planned = plan(&tree, &unified, &PlanOptions::default()).expect("plans");
    let want = [&bytes[..49], b"LINE 7\n", &bytes[56..]].concat();
    assert!(
        matches!(&planned.changes[0].after, NewState::File { bytes, .. } if *bytes == want[..])
    );
    let refused = plan(&tree, &set(vec![file]), &PlanOptions::default()).expect_err("agent");
    assert_eq!(refused.error.code, ErrorCode::InvalidUtf8);
}

/// The new content of a large file with a BOM: kept, it is a recipe made on the placing
/// thread; dropped by the patch (the hunk's old line 1 has it, the new one not), the new
/// bytes are spliced into a buffer of their own, without it.
#[test]
fn a_large_file_with_a_bom_keeps_or_drops_it_as_the_patch_says() {
    let (body, hunk) = big_file();
    let mut bytes = crate::text::BOM.to_vec();
    bytes.extend_from_slice(&body);
    let mut tree = MemTree::new();
    tree.insert("big.txt", bytes.clone());
    let top = |new_first: &str| Hunk {
        old_start: Some(1),
        new_start: Some(1),
        lines: vec![
            Line::new(LineKind::Delete, b"\xEF\xBB\xBFline 0".to_vec()),
            Line::new(LineKind::Insert, new_first.as_bytes().to_vec()),
            Line::new(LineKind::Context, b"line 1".to_vec()),
        ],
        ..Hunk::default()
    };
    for (first, bom) in [("\u{feff}LINE 0", true), ("LINE 0", false)] {
        let patch = set(vec![fp(
            FileOp::Modify,
            Some("big.txt"),
            Some("big.txt"),
            vec![top(first), hunk(70_000)],
        )]);
        let planned = plan(&tree, &patch, &PlanOptions::default()).expect("plans");
        let mut want = if bom {
            crate::text::BOM.to_vec()
        } else {
            Vec::new()
        };
        let rest = String::from_utf8(body.clone()).expect("ASCII");
        let rest = format!("\n{rest}")
            .replacen("\nline 0\n", "\nLINE 0\n", 1)
            .replace("\nline 70000\n", "\nLINE 70000\n");
        want.extend_from_slice(&rest.as_bytes()[1..]);
        let NewState::File { bytes: new, .. } = &planned.changes[0].after else {
            panic!("a file is planned");
        };
        // Asked before the bytes are (asking for them joins a recipe).
        assert_eq!(new.is_recipe(), bom, "only a kept BOM leaves a recipe");
        assert_eq!(new.as_slice(), want.as_slice(), "BOM kept: {bom}");
    }
}
