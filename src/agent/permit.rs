//! Stage: agent MCP (permissions). The default mode of the MCP server refuses a change to an
//! existing file that the session has not read (`not_read`); a line-number edit (JSON
//! `line_range` / `insert`) also needs the read's line count to still match the file
//! (`stale_file` otherwise), and only warns when the content changed with the same count.
//!
//! Pure over the parsed patch and the session's records, plus reading the current files to
//! count their lines. Must not write anything.

use super::AgentError;
use std::collections::HashMap;

use crate::agent::read::read_confined_in;
use crate::agent::sha256_hex;
use crate::model::{Body, Edit, FileOp, PatchSet};
use crate::text::Text;
use crate::tree::DiskTree;

/// What the session served of a file: the proof a later edit is checked against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadRecord {
    pub sha256: String,
    pub total_lines: usize,
}

/// A note for the report: the edit went ahead, but something differs from what was read.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Notice {
    pub code: crate::report::WarningCode,
    pub message: String,
    pub path: String,
}

/// Check that every existing file `patch` changes was read in this session. Returns the
/// notices to add to the report, or the refusal.
pub fn check(
    tree: &DiskTree,
    patch: &PatchSet<'_>,
    reads: &HashMap<String, ReadRecord>,
) -> Result<Vec<Notice>, AgentError> {
    let mut notices = Vec::new();
    for fp in patch.files.iter() {
        if !matches!(
            fp.op,
            FileOp::Modify | FileOp::Rename | FileOp::Delete | FileOp::Mode
        ) {
            continue;
        }
        let Some(old) = fp.old_path.as_deref() else {
            continue;
        };
        let joined = crate::guard::join_cd(patch.cd.as_deref(), old);
        // A path the guards will refuse, or a file that is not there, is the planner's to
        // report: only existing files need a read.
        let Ok((rel, bytes)) = read_confined_in(tree, &joined) else {
            continue;
        };
        let Some(record) = reads.get(&rel) else {
            return Err(AgentError::NotRead { path: rel });
        };
        if uses_line_numbers(&fp.body) {
            let lines = Text::parse(&bytes).len();
            if lines != record.total_lines {
                return Err(AgentError::LineCountChanged {
                    path: rel,
                    now: lines,
                    then: record.total_lines,
                });
            }
            if sha256_hex(&bytes) != record.sha256 {
                notices.push(Notice {
                    code: crate::report::WarningCode::ChangedSinceRead,
                    message: format!(
                        "{rel} changed since it was read (same line count): check the result"
                    ),
                    path: rel,
                });
            }
        }
    }
    Ok(notices)
}

/// True when an edit of `body` names lines by number.
fn uses_line_numbers(body: &Body<'_>) -> bool {
    match body {
        Body::Edits(edits) => edits
            .iter()
            .any(|e| matches!(e, Edit::LineRange { .. } | Edit::Insert { .. })),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use crate::ErrorCode;
    use super::*;
    use crate::model::{FilePatch, Format};
    use std::borrow::Cow;

    fn file_patch(op: FileOp, path: &str, body: Body<'static>) -> FilePatch<'static> {
        FilePatch {
            op,
            old_path: (op != FileOp::Add).then(|| path.to_string()),
            new_path: (op != FileOp::Delete).then(|| path.to_string()),
            old_mode: None,
            new_mode: None,
            base: None,
            blob_ids: None,
            body,
            patch_line: 1,
        }
    }

    fn set(files: Vec<FilePatch<'static>>) -> PatchSet<'static> {
        PatchSet {
            format: Format::Json,
            rules: crate::model::Rules::JSON,
            cd: None,
            files,
        }
    }

    fn record(bytes: &[u8]) -> ReadRecord {
        ReadRecord {
            sha256: sha256_hex(bytes),
            total_lines: Text::parse(bytes).len(),
        }
    }

    fn insert() -> Body<'static> {
        Body::Edits(vec![Edit::Insert {
            after: 1,
            content: Cow::Borrowed("x\n"),
        }])
    }

    #[test]
    fn unread_existing_files_are_refused() {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("a.txt"), "a\nb\n").expect("write");
        let patch = set(vec![
            file_patch(FileOp::Add, "new.txt", Body::Hunks(vec![])),
            file_patch(FileOp::Modify, "missing.txt", Body::Hunks(vec![])),
            file_patch(FileOp::Delete, "./a.txt", Body::Hunks(vec![])),
        ]);
        let e = check(&DiskTree::new(dir.path()).expect("tree"), &patch, &HashMap::new()).expect_err("a.txt unread");
        let e = crate::Error::from(e);
        assert_eq!(e.code, ErrorCode::NotRead);
        assert_eq!(e.path.as_deref(), Some("a.txt"));
        let reads = HashMap::from([("a.txt".to_string(), record(b"a\nb\n"))]);
        assert_eq!(
            check(&DiskTree::new(dir.path()).expect("tree"), &patch, &reads).expect("read first"),
            vec![]
        );
    }

    #[test]
    fn line_number_edits_need_the_same_line_count() {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("a.txt"), "a\nb\nc\n").expect("write");
        let patch = set(vec![file_patch(FileOp::Modify, "a.txt", insert())]);
        let stale = HashMap::from([("a.txt".to_string(), record(b"a\nb\n"))]);
        let e = check(&DiskTree::new(dir.path()).expect("tree"), &patch, &stale).expect_err("2 lines read, 3 now");
        assert_eq!(e.code(), ErrorCode::StaleFile);
        let changed = HashMap::from([("a.txt".to_string(), record(b"a\nB\nc\n"))]);
        let notices = check(&DiskTree::new(dir.path()).expect("tree"), &patch, &changed).expect("same count");
        assert_eq!(notices.len(), 1);
        assert_eq!(
            notices[0].code,
            crate::report::WarningCode::ChangedSinceRead
        );
        let same = HashMap::from([("a.txt".to_string(), record(b"a\nb\nc\n"))]);
        assert!(check(&DiskTree::new(dir.path()).expect("tree"), &patch, &same)
            .expect("unchanged")
            .is_empty());
    }
}
