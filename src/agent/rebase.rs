//! Stage: plan (agent rebase). `--rebase`: a file patch whose `*** Base:` names a version the
//! file no longer has is not refused when that version's content is known — the snapshot
//! `read` kept, or the file's index or HEAD version when its SHA-256 matches. The patch is
//! placed on that base, and the change (base → patched base) is merged onto the current file
//! with [`crate::merge::three_way`]: a clean merge is used (warning `rebased`), overlapping
//! changes are `merge_conflict` with the conflicting lines.
//!
//! Pure apart from reading the snapshot store and git's objects; never writes.

use std::path::Path;

use crate::agent::AgentError;
use crate::agent::sha256_hex;
use crate::agent::snapshots::SnapshotStore;
use crate::merge::{three_way, Labels};

/// Where the content of a stale base came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BaseSource {
    /// What `apply-patch read` (or the MCP `read`) served and kept.
    Snapshot,
    /// The file's entry in the git index.
    Index,
    /// The file in the HEAD commit.
    Head,
}

impl BaseSource {
    pub fn as_str(self) -> &'static str {
        match self {
            BaseSource::Snapshot => "the content read earlier",
            BaseSource::Index => "the git index",
            BaseSource::Head => "HEAD",
        }
    }
}

/// The content whose SHA-256 starts with `prefix`: the kept snapshot first, then the file's
/// index and HEAD versions (raw, and as a checkout would write them) when `root` is in a git
/// work tree. None when no known content has that version.
pub fn find_base(
    root: &Path,
    rel: &str,
    prefix: &str,
    store: Option<&SnapshotStore>,
) -> Option<(Vec<u8>, BaseSource)> {
    let prefix = prefix.to_ascii_lowercase();
    if let Some(bytes) = store.and_then(|s| s.find(&prefix)) {
        return Some((bytes, BaseSource::Snapshot));
    }
    git_versions(root, rel)
        .into_iter()
        .find(|(bytes, _)| sha256_hex(bytes).starts_with(&prefix))
}

/// The index and HEAD versions of `rel`, each raw and smudged (best effort: any git error
/// only means "no such base").
fn git_versions(root: &Path, rel: &str) -> Vec<(Vec<u8>, BaseSource)> {
    let Ok(Some(repo)) = crate::git::Repo::discover(root) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut push = |blob: Vec<u8>, source| {
        if let Ok(smudged) = repo.smudge(rel, &blob) {
            if smudged != blob {
                out.push((smudged, source));
            }
        }
        out.push((blob, source));
    };
    if let Ok(Some((blob, _))) = repo.index_blob(rel) {
        push(blob, BaseSource::Index);
    }
    if let Some(blob) = head_blob(&repo, rel) {
        push(blob, BaseSource::Head);
    }
    out
}

fn head_blob(repo: &crate::git::Repo, rel: &str) -> Option<Vec<u8>> {
    let path = repo.repo_path(rel).ok()?;
    let tree = repo.gix().head_commit().ok()?.tree().ok()?;
    let entry = tree.lookup_entry_by_path(path.as_str()).ok()??;
    if !entry.mode().is_blob() {
        return None;
    }
    Some(entry.object().ok()?.detach().data)
}

/// Merge the change `base → patched` onto `current`; overlapping changes are
/// `merge_conflict`, naming the conflicting lines.
pub fn merge(
    rel: &str,
    base: &[u8],
    current: &[u8],
    patched: &[u8],
) -> Result<Vec<u8>, AgentError> {
    let labels = Labels {
        ours: "current",
        theirs: "patch",
        base: None,
    };
    three_way(base, current, patched, labels).map_err(|conflicts| AgentError::RebaseConflict {
        path: rel.to_string(),
        summary: conflicts.summary(),
        conflicts: Box::new(conflicts.to_details()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    #[test]
    fn disjoint_changes_merge_and_overlapping_ones_conflict() {
        let base = b"fn a() {\n    1\n}\n\nfn b() {\n    2\n}\n";
        let current = b"fn a() {\n    10\n}\n\nfn b() {\n    2\n}\n";
        let patched = b"fn a() {\n    1\n}\n\nfn b() {\n    20\n}\n";
        let merged = merge("x.rs", base, current, patched).expect("clean");
        assert_eq!(merged, b"fn a() {\n    10\n}\n\nfn b() {\n    20\n}\n");
        let clash = b"fn a() {\n    11\n}\n\nfn b() {\n    2\n}\n";
        let e = crate::Error::from(merge("x.rs", base, current, clash).expect_err("both change line 2"));
        assert_eq!(e.code, ErrorCode::MergeConflict);
        let d = e.details().expect("details");
        assert_eq!(d["conflicts"][0]["ours"][0], "    10");
        assert_eq!(d["conflicts"][0]["theirs"][0], "    11");
    }

    #[test]
    fn the_snapshot_is_the_base_and_unknown_versions_are_none() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = SnapshotStore::new(dir.path().join("snapshots"));
        let base = b"a\nb\nc\n";
        store.keep(&sha256_hex(base), base).expect("kept");
        let v = crate::agent::version_of(base);
        assert_eq!(
            find_base(dir.path(), "f.txt", &v, Some(&store)),
            Some((base.to_vec(), BaseSource::Snapshot))
        );
        let none = find_base(dir.path(), "f.txt", "0123456789abcdef", Some(&store));
        assert_eq!(none, None);
    }

    #[test]
    fn index_and_head_versions_are_bases() {
        let dir = tempfile::tempdir().expect("temp dir");
        let git = |args: &[&str]| {
            std::process::Command::new("git")
                .args(args)
                .current_dir(dir.path())
                .output()
                .is_ok_and(|o| o.status.success())
        };
        if !git(&["init", "-q"]) {
            eprintln!("skipped: git is not available");
            return;
        }
        std::fs::write(dir.path().join("f.txt"), "one\n").expect("write");
        assert!(git(&["add", "f.txt"]));
        assert!(git(&[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-qm",
            "c"
        ]));
        std::fs::write(dir.path().join("f.txt"), "two\n").expect("write");
        assert!(git(&["add", "f.txt"]));
        std::fs::write(dir.path().join("f.txt"), "three\n").expect("write");
        let find =
            |text: &[u8]| find_base(dir.path(), "f.txt", &crate::agent::version_of(text), None);
        assert_eq!(find(b"two\n"), Some((b"two\n".to_vec(), BaseSource::Index)));
        assert_eq!(find(b"one\n"), Some((b"one\n".to_vec(), BaseSource::Head)));
        assert_eq!(find(b"three\n"), None, "the work tree is not a base");
    }

    proptest::proptest! {
        /// Two edits at least two lines apart always merge into the file with both; the
        /// same line changed two ways never merges.
        #[test]
        fn disjoint_edits_merge_and_clashing_ones_do_not(
            n in 6usize..60,
            a in 0usize..60,
            gap in 3usize..30,
            crlf in proptest::bool::ANY,
        ) {
            let eol = if crlf { "\r\n" } else { "\n" };
            let lines: Vec<String> = (0..n).map(|i| format!("line {i}")).collect();
            let a = a % n;
            let b = a + gap;
            proptest::prop_assume!(b < n);
            let text = |edits: &[(usize, &str)]| -> Vec<u8> {
                let mut l = lines.clone();
                for (i, t) in edits {
                    l[*i] = t.to_string();
                }
                l.iter().map(|x| format!("{x}{eol}")).collect::<String>().into_bytes()
            };
            let base = text(&[]);
            let current = text(&[(a, "theirs")]);
            let patched = text(&[(b, "mine")]);
            let merged = merge("f", &base, &current, &patched).expect("disjoint edits merge");
            proptest::prop_assert_eq!(merged, text(&[(a, "theirs"), (b, "mine")]));
            let clash = text(&[(a, "mine")]);
            let e = merge("f", &base, &current, &clash).expect_err("same line, two ways");
            proptest::prop_assert_eq!(e.code(), ErrorCode::MergeConflict);
        }
    }
}
