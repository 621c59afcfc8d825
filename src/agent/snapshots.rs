//! Stage: agent state. The content that `read` served, kept by its SHA-256 so that a later
//! patch whose `*** Base:` names that version can be rebased (three-way merged) instead of
//! refused. Lives in the state place (`StateDir::sub("snapshots")`), never in the work tree.
//!
//! Bounded: the store holds at most `cap` bytes in total (default [`DEFAULT_CAP`]); the
//! least recently kept or used snapshots are pruned first. A file larger than a quarter of
//! the cap is not kept (a rebase of it falls back to git's versions or is refused as stale).
//! Must not: write anywhere but its own folder, or trust a stored file without re-hashing it.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::agent::AgentError;

/// Total bytes the store keeps before pruning the oldest snapshots: 64 MiB.
pub const DEFAULT_CAP: u64 = 64 * 1024 * 1024;

/// A folder of file contents named by their SHA-256.
#[derive(Debug, Clone)]
pub struct SnapshotStore {
    dir: PathBuf,
    cap: u64,
}

impl SnapshotStore {
    /// A store in `dir` (created on first use) with the default cap.
    pub fn new(dir: PathBuf) -> Self {
        SnapshotStore {
            dir,
            cap: DEFAULT_CAP,
        }
    }

    /// A store with a cap of `cap` bytes in total (tests).
    #[cfg(test)]
    pub(crate) fn with_cap(dir: PathBuf, cap: u64) -> Self {
        SnapshotStore { dir, cap }
    }

    /// Keep `bytes` (whose SHA-256 is `sha256`, lowercase hex); keeping the same content again
    /// only marks it as recently used. Returns false when the content is too large to keep.
    pub fn keep(&self, sha256: &str, bytes: &[u8]) -> Result<bool, AgentError> {
        if bytes.len() as u64 > self.cap / 4 {
            return Ok(false);
        }
        let dir = self.dir.display().to_string();
        crate::state::create_dir_all(&self.dir).map_err(AgentError::outside)?;
        let target = self.dir.join(sha256);
        // Not followed: a link or a FIFO in its place is replaced by the rename below.
        if fs::symlink_metadata(&target).is_ok_and(|m| m.is_file()) {
            // Content-addressed: the same name is the same bytes; refresh its age only.
            touch(&target);
        } else {
            let mut tmp = tempfile::NamedTempFile::new_in(&self.dir)
                .map_err(|e| AgentError::io(&dir, "cannot write a snapshot in", e))?;
            tmp.write_all(bytes)
                .map_err(|e| AgentError::io(&dir, "cannot write a snapshot in", e))?;
            tmp.persist(&target)
                .map_err(|e| AgentError::io(&dir, "cannot write a snapshot in", e.error))?;
        }
        self.prune();
        Ok(true)
    }

    /// The kept content whose SHA-256 starts with `prefix` (lowercase hex), when exactly one
    /// snapshot has that prefix and its bytes still hash to its name.
    pub fn find(&self, prefix: &str) -> Option<Vec<u8>> {
        let prefix = prefix.to_ascii_lowercase();
        if prefix.len() < 8 || !prefix.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        let mut found = self
            .entries()
            .into_iter()
            .filter(|e| e.name.starts_with(&prefix));
        let entry = found.next()?;
        if found.next().is_some() {
            return None;
        }
        // Read as every state file is (`txn::place`): never through a symlink, never waiting
        // on a FIFO, at most what the store keeps.
        let (bytes, _) = crate::txn::place::read_file(&entry.path, self.cap / 4).ok()??;
        if super::sha256_hex(&bytes) != entry.name {
            // A damaged snapshot must never become a merge base.
            let _ = fs::remove_file(&entry.path);
            return None;
        }
        touch(&entry.path);
        Some(bytes)
    }

    /// Remove the least recently used snapshots until the total is within the cap. Best
    /// effort: a snapshot that cannot be removed is left (the cap is a bound on growth, not a
    /// guarantee worth failing a read for).
    fn prune(&self) {
        let mut entries = self.entries();
        let mut total: u64 = entries.iter().map(|e| e.len).sum();
        if total <= self.cap {
            return;
        }
        entries.sort_by(|a, b| a.mtime.cmp(&b.mtime).then_with(|| a.name.cmp(&b.name)));
        for e in entries {
            if total <= self.cap {
                break;
            }
            if fs::remove_file(&e.path).is_ok() {
                total = total.saturating_sub(e.len);
            }
        }
    }

    fn entries(&self) -> Vec<Entry> {
        let Ok(rd) = fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        rd.filter_map(Result::ok)
            .filter_map(|de| {
                let name = de.file_name().into_string().ok()?;
                if name.len() != 64 || !name.bytes().all(|b| b.is_ascii_hexdigit()) {
                    return None;
                }
                // Not followed: only a regular file is a snapshot.
                let meta = de.metadata().ok().filter(|m| m.is_file())?;
                Some(Entry {
                    path: de.path(),
                    name,
                    len: meta.len(),
                    mtime: meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
                })
            })
            .collect()
    }
}

struct Entry {
    path: PathBuf,
    name: String,
    len: u64,
    mtime: SystemTime,
}

/// Mark a snapshot as just used (its mtime is the age pruning goes by); opened as every
/// state file is (`txn::place`), so a link or a FIFO is left alone.
fn touch(path: &Path) {
    let mut options = fs::File::options();
    options.append(true);
    if let Ok((f, _)) = crate::txn::place::open_file(path, &mut options, "cannot touch") {
        let _ = f.set_modified(SystemTime::now());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::sha256_hex;
    use std::time::Duration;

    fn keep(store: &SnapshotStore, bytes: &[u8]) -> String {
        let sha = sha256_hex(bytes);
        assert!(store.keep(&sha, bytes).expect("the temp dir is writable"));
        sha
    }

    #[test]
    fn kept_content_is_found_by_prefix() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = SnapshotStore::new(dir.path().join("snapshots"));
        let sha = keep(&store, b"fn main() {}\n");
        assert_eq!(
            store.find(&sha[..12]).as_deref(),
            Some(&b"fn main() {}\n"[..])
        );
        assert_eq!(
            store.find(&sha.to_uppercase()[..12]).as_deref(),
            Some(&b"fn main() {}\n"[..])
        );
        assert_eq!(store.find("0123456789ab"), None);
        assert_eq!(
            store.find(&sha[..4]),
            None,
            "too short a prefix is never a version"
        );
    }

    #[test]
    fn damaged_snapshot_is_not_served() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = SnapshotStore::new(dir.path().to_path_buf());
        let sha = keep(&store, b"one\n");
        fs::write(dir.path().join(&sha), b"two\n").expect("overwrite");
        assert_eq!(store.find(&sha), None);
        assert!(!dir.path().join(&sha).exists());
    }

    #[test]
    #[cfg_attr(
        windows,
        ignore = "under Wine 8 the time `find` refreshes is not seen; not yet investigated"
    )]
    fn oldest_snapshots_are_pruned_past_the_cap() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = SnapshotStore::with_cap(dir.path().to_path_buf(), 400);
        let old = keep(&store, &[b'a'; 100]);
        let past = SystemTime::now() - Duration::from_secs(3600);
        let f = fs::File::options()
            .append(true)
            .open(dir.path().join(&old))
            .expect("open");
        f.set_modified(past).expect("set mtime");
        let mid = keep(&store, &[b'b'; 100]);
        f.set_modified(past).expect("set mtime");
        let f2 = fs::File::options()
            .append(true)
            .open(dir.path().join(&mid))
            .expect("open");
        f2.set_modified(past + Duration::from_secs(60))
            .expect("set mtime");
        keep(&store, &[b'c'; 100]);
        keep(&store, &[b'd'; 100]);
        assert!(store.find(&old).is_some(), "4 x 100 bytes fit a cap of 400");
        // `find` refreshed `old`: now `mid` is the oldest and goes first.
        keep(&store, &[b'e'; 100]);
        assert!(store.find(&mid).is_none());
        assert!(store.find(&old).is_some());
        let total: u64 = store.entries().iter().map(|e| e.len).sum();
        assert!(total <= 400);
    }

    #[test]
    fn too_large_content_is_not_kept() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = SnapshotStore::with_cap(dir.path().to_path_buf(), 400);
        let big = [b'x'; 101];
        assert!(!store.keep(&sha256_hex(&big), &big).expect("no error"));
        assert!(store.entries().is_empty());
    }
}
