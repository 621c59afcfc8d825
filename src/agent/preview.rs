//! Stage: agent preview. `--preview` plans a patch and keeps the plan — every path's state
//! before (its hash) and the exact bytes after — in the state place (`StateDir::sub
//! ("previews")`) under an event id; `apply-patch confirm ID` commits exactly that plan once,
//! after checking that no target changed since (`stale_file` otherwise), through the
//! pipeline's sink (`pipeline::confirm`): what a preview made with `--index` or `--cached`
//! keeps, its confirm writes to the index too.
//!
//! Exactly once: confirming first claims the preview by renaming its folder (atomic), so two
//! confirms racing cannot both win; a claimed, expired or unknown id is `unknown_preview`. A
//! preview expires [`PREVIEW_TTL`] after it was made (and is pruned when the store is next
//! used). A confirm that is refused (e.g. `stale_file`) still uses the preview up: plan again.
//! Must not write the work tree: committing is the caller's job (through the transaction).

use super::{AgentError, PreviewGone};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::agent::sha256_hex;
use crate::txn::place::{read_file, KEPT_LIMIT};
use crate::txn::{AuditRecord, NewState, Snapshot};

/// How long a preview can be confirmed: one hour.
pub const PREVIEW_TTL: Duration = Duration::from_secs(3600);

/// What a path held when the preview was planned.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Before {
    Missing,
    File { sha256: String },
    Symlink { target: Vec<u8> },
    Directory,
}

impl Before {
    /// The comparable part of a transaction snapshot.
    pub fn of(s: &Snapshot) -> Before {
        match s {
            Snapshot::Missing => Before::Missing,
            Snapshot::File { sha256, .. } => Before::File {
                sha256: crate::report::hex(&sha256.get()),
            },
            Snapshot::Symlink { target } => Before::Symlink {
                target: target.clone(),
            },
            Snapshot::Directory => Before::Directory,
        }
    }
}

/// What a path must hold after the commit; a file's bytes live beside the record.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum After {
    File { sha256: String, mode: u32 },
    Symlink { target: Vec<u8> },
    Absent,
}

/// One path of a kept plan.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PlannedPath {
    pub path: String,
    pub before: Before,
    pub after: After,
}

/// What a confirm writes: the trees of the run's git mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Writes {
    /// The work tree (a preview made without `--index` or `--cached`).
    #[default]
    WorkTree,
    /// The work tree and the index (`--index`): both checked, both written.
    Both,
    /// The index only (`--cached`): `paths` are the index's entries.
    Index,
}

/// What a preview keeps besides its paths, so that its confirm writes what a direct apply
/// would have written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Kept {
    pub writes: Writes,
    /// The audit record of the plan (the confirm's audit line is a direct apply's).
    pub audit: AuditRecord,
}

/// A kept plan.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Preview {
    pub id: String,
    /// Seconds since the Unix epoch when the preview was made.
    pub created: u64,
    pub paths: Vec<PlannedPath>,
    /// The report the preview printed (returned again by `confirm`).
    pub report: serde_json::Value,
    #[serde(default)]
    pub writes: Writes,
    #[serde(default)]
    pub audit: AuditRecord,
}

/// A confirmed preview: the plan with the new contents loaded.
#[derive(Debug, Clone, PartialEq)]
pub struct Claimed {
    pub preview: Preview,
    /// `(path, before, new state)` in plan order.
    pub changes: Vec<(String, Before, NewState)>,
}

/// The folder of kept previews.
#[derive(Debug, Clone)]
pub struct PreviewStore {
    dir: PathBuf,
    ttl: Duration,
}

impl PreviewStore {
    pub fn new(dir: PathBuf) -> Self {
        PreviewStore {
            dir,
            ttl: PREVIEW_TTL,
        }
    }

    /// A store whose previews expire after `ttl` (tests).
    #[cfg(test)]
    pub(crate) fn with_ttl(dir: PathBuf, ttl: Duration) -> Self {
        PreviewStore { dir, ttl }
    }

    /// Keep a plan of the work tree: `changes` are `(path, before, new state)`; returns the
    /// event id.
    #[cfg(test)]
    pub(crate) fn save(
        &self,
        changes: &[(String, Snapshot, NewState)],
        report: serde_json::Value,
    ) -> Result<String, AgentError> {
        self.save_kept(changes, report, &Kept::default())
    }

    /// Keep a plan of the work tree (as `save` does) with what the confirm must write.
    pub fn save_kept(
        &self,
        changes: &[(String, Snapshot, NewState)],
        report: serde_json::Value,
        kept: &Kept,
    ) -> Result<String, AgentError> {
        self.prune();
        let created = now_secs();
        let seed = format!("{created}:{}:{:?}", std::process::id(), SystemTime::now());
        let mut id = sha256_hex(format!("{seed}:{changes:?}").as_bytes());
        id.truncate(12);
        let folder = self.dir.join(&id);
        let shown = folder.display().to_string();
        let io = |e: std::io::Error| AgentError::io(&shown, "cannot keep the preview in", e);
        // Private (0700): it holds the new contents of the user's files.
        crate::state::create_dir_all(&folder).map_err(AgentError::outside)?;
        let mut paths = Vec::with_capacity(changes.len());
        for (path, before, after) in changes {
            let after = match after {
                NewState::File { bytes, mode, .. } => {
                    let sha256 = crate::report::hex(&bytes.sha256());
                    fs::write(folder.join(&sha256), bytes.as_slice()).map_err(io)?;
                    After::File {
                        sha256,
                        mode: *mode,
                    }
                }
                NewState::Symlink { target } => After::Symlink {
                    target: target.clone(),
                },
                NewState::Absent => After::Absent,
            };
            paths.push(PlannedPath {
                path: path.clone(),
                before: Before::of(before),
                after,
            });
        }
        let preview = Preview {
            id: id.clone(),
            created,
            paths,
            report,
            writes: kept.writes,
            audit: kept.audit.clone(),
        };
        let json = serde_json::to_vec_pretty(&preview).map_err(|e| {
            AgentError::PreviewUnencodable {
                cause: e.to_string(),
            }
        })?;
        fs::write(folder.join("preview.json"), json).map_err(io)?;
        Ok(id)
    }

    /// Claim preview `id` for its one confirm: it can never be claimed again. Refuses an
    /// unknown, already confirmed or expired id with `unknown_preview`.
    pub fn claim(&self, id: &str) -> Result<Claimed, AgentError> {
        let unknown = |why: PreviewGone| AgentError::UnknownPreview {
            id: id.to_string(),
            why,
        };
        if id.len() != 12 || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(unknown(PreviewGone::NotAnId));
        }
        let folder = self.dir.join(id.to_ascii_lowercase());
        let claimed = self
            .dir
            .join(format!("{id}.claimed.{}", std::process::id()));
        // The rename is the claim: only one caller can move the folder away.
        if fs::rename(&folder, &claimed).is_err() {
            return Err(unknown(PreviewGone::Unknown));
        }
        let result = load(&claimed);
        let _ = fs::remove_dir_all(&claimed);
        let claimed = result.map_err(|_| unknown(PreviewGone::Damaged))?;
        if now_secs().saturating_sub(claimed.preview.created) > self.ttl.as_secs() {
            return Err(unknown(PreviewGone::Expired {
                minutes: self.ttl.as_secs() / 60,
            }));
        }
        Ok(claimed)
    }

    /// Remove expired previews and left-over claims (best effort).
    fn prune(&self) {
        let Ok(rd) = fs::read_dir(&self.dir) else {
            return;
        };
        let limit = SystemTime::now().checked_sub(self.ttl + Duration::from_secs(60));
        for entry in rd.filter_map(Result::ok) {
            let old = entry
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .zip(limit)
                .is_some_and(|(m, limit)| m < limit);
            if old {
                let _ = fs::remove_dir_all(entry.path());
            }
        }
    }
}

/// The kept plan of a claimed preview, its files read as every state file is
/// (`txn::place`: regular files only, never through a symlink, never waiting on a FIFO; the
/// plan at most [`KEPT_LIMIT`] bytes).
fn load(folder: &Path) -> Result<Claimed, String> {
    let read = |name: &str, limit: u64| match read_file(&folder.join(name), limit) {
        Ok(Some((bytes, _))) => Ok(bytes),
        Ok(None) => Err(format!("{name} is missing")),
        Err(e) => Err(crate::Error::from(e).message),
    };
    let json = read("preview.json", KEPT_LIMIT)?;
    let preview: Preview = serde_json::from_slice(&json).map_err(|e| e.to_string())?;
    let mut changes = Vec::with_capacity(preview.paths.len());
    for p in &preview.paths {
        let after = match &p.after {
            After::File { sha256, mode } => {
                let bytes = read(sha256, u64::MAX)?;
                if &sha256_hex(&bytes) != sha256 {
                    return Err("content does not match its hash".into());
                }
                NewState::File {
                    bytes: bytes.into(),
                    mode: *mode,
                }
            }
            After::Symlink { target } => NewState::Symlink {
                target: target.clone(),
            },
            After::Absent => NewState::Absent,
        };
        changes.push((p.path.clone(), p.before.clone(), after));
    }
    Ok(Claimed { preview, changes })
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use crate::ErrorCode;
    use super::*;

    fn plan() -> Vec<(String, Snapshot, NewState)> {
        vec![
            (
                "a.txt".into(),
                Snapshot::File {
                    len: 4,
                    mtime: None,
                    mode: 0o644,
                    sha256: [7; 32].into(),
                },
                NewState::File {
                    bytes: b"new\n".to_vec().into(),
                    mode: 0o644,
                },
            ),
            ("gone.txt".into(), Snapshot::Missing, NewState::Absent),
        ]
    }

    #[test]
    fn a_preview_is_confirmed_exactly_once() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = PreviewStore::new(dir.path().join("previews"));
        let id = store
            .save(&plan(), serde_json::json!({"ok": true}))
            .expect("kept");
        assert_eq!(id.len(), 12);
        let claimed = store.claim(&id).expect("first confirm");
        assert_eq!(claimed.changes.len(), 2);
        assert_eq!(
            claimed.changes[0],
            (
                "a.txt".to_string(),
                Before::File {
                    sha256: "07".repeat(32)
                },
                NewState::File {
                    bytes: b"new\n".to_vec().into(),
                    mode: 0o644,
                }
            )
        );
        assert_eq!(claimed.preview.report["ok"], true);
        let again = store.claim(&id).expect_err("second confirm");
        assert_eq!(again.code(), ErrorCode::UnknownPreview);
        let bad = store.claim("../../etc").expect_err("not an id");
        assert_eq!(bad.code(), ErrorCode::UnknownPreview);
        assert_eq!(
            store.claim("0123456789ab").map(|_| ()).map_err(|e| e.code()),
            Err(ErrorCode::UnknownPreview)
        );
    }

    #[test]
    fn an_expired_preview_is_unknown() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = PreviewStore::with_ttl(dir.path().to_path_buf(), Duration::from_secs(0));
        let id = store.save(&plan(), serde_json::Value::Null).expect("kept");
        let path = dir.path().join(&id).join("preview.json");
        let mut p: Preview =
            serde_json::from_slice(&fs::read(&path).expect("read")).expect("parse");
        p.created -= 5;
        fs::write(&path, serde_json::to_vec(&p).expect("encode")).expect("write");
        let e = store.claim(&id).expect_err("expired");
        assert_eq!(e.code(), ErrorCode::UnknownPreview);
        assert!(e.to_string().contains("expired"), "{e}");
    }

    use crate::pipeline::confirm::commit_kept as confirm;
    use crate::state::StateDir;
    use crate::txn;

    #[test]
    fn confirm_commits_the_kept_plan_once_and_refuses_a_changed_target() {
        let root = tempfile::tempdir().expect("temp dir");
        let state_base = tempfile::tempdir().expect("temp dir");
        let state = StateDir::outside_git(root.path(), state_base.path().to_path_buf())
            .expect("state place");
        let write =
            |name: &str, text: &str| fs::write(root.path().join(name), text).expect("write");
        write("a.txt", "old\n");
        write("b.txt", "b\n");
        let snap = |p: &str| txn::read_snapshot(root.path(), p).expect("snapshot").0;
        let store = PreviewStore::new(state.sub("previews").expect("sub"));
        let plan = |p: &str, text: &str| {
            vec![(
                p.to_string(),
                snap(p),
                NewState::File {
                    bytes: text.as_bytes().to_vec().into(),
                    mode: 0o644,
                },
            )]
        };
        let id = store
            .save(&plan("a.txt", "new\n"), serde_json::json!({"ok": true}))
            .expect("kept");
        let stale = store
            .save(&plan("b.txt", "B\n"), serde_json::Value::Null)
            .expect("kept");
        write("b.txt", "changed meanwhile\n");

        let (preview, warnings) = confirm(root.path(), Some(state.clone()), &id).expect("confirms");
        assert_eq!(preview.report["ok"], true);
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(
            fs::read_to_string(root.path().join("a.txt")).expect("read"),
            "new\n"
        );
        let again = confirm(root.path(), Some(state.clone()), &id).expect_err("only once");
        assert_eq!(again.code, ErrorCode::UnknownPreview);

        let e = confirm(root.path(), Some(state.clone()), &stale).expect_err("b.txt changed");
        assert_eq!(e.code, ErrorCode::StaleFile);
        assert_eq!(
            fs::read_to_string(root.path().join("b.txt")).expect("read"),
            "changed meanwhile\n"
        );
    }

    #[test]
    fn a_tampered_content_is_refused() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = PreviewStore::new(dir.path().to_path_buf());
        let id = store.save(&plan(), serde_json::Value::Null).expect("kept");
        fs::write(dir.path().join(&id).join(sha256_hex(b"new\n")), b"evil\n").expect("write");
        assert_eq!(
            store.claim(&id).map(|_| ()).map_err(|e| e.code()),
            Err(ErrorCode::UnknownPreview)
        );
    }
}
