//! Stage: command line (output). "Did you mean": a `file_not_found` refusal names files of
//! the same name elsewhere under the root, found by a bounded walk that skips `.git` and the
//! usual build and dependency folders. Reads the tree, never writes it.

use std::path::Path;

use super::*;

/// At most this many directory entries are looked at: a huge tree must not slow a refusal.
const MAX_ENTRIES: usize = 20_000;
/// At most this many suggestions are named.
const MAX_FOUND: usize = 3;
/// Folders never searched: version control, and build or dependency output.
const SKIPPED: &[&str] = &[
    ".git",
    "target",
    "node_modules",
    ".venv",
    "venv",
    "__pycache__",
];

/// Names the files of that name found elsewhere under `root` in a `file_not_found` error
/// (its shown hint then starts with "did you mean …"); the hint itself is left as written.
pub(crate) fn suggest(error: &mut Error, root: &Path) {
    if error.code != ErrorCode::FileNotFound {
        return;
    }
    let Some(path) = error.path.clone() else {
        return;
    };
    let Some(name) = Path::new(&path).file_name() else {
        return;
    };
    let found = same_name(root, name, &path);
    error.set_elsewhere(found);
}

/// Root-relative paths of files named `name` (other than `missing`), breadth first, so the
/// nearest come first; sorted within a level for stable output.
fn same_name(root: &Path, name: &std::ffi::OsStr, missing: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut queue = std::collections::VecDeque::from([root.to_path_buf()]);
    let mut seen = 0;
    while let Some(dir) = queue.pop_front() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut entries: Vec<_> = entries.flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            seen += 1;
            if seen > MAX_ENTRIES || found.len() >= MAX_FOUND {
                return found;
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let file_name = entry.file_name();
            if kind.is_dir() && !SKIPPED.iter().any(|s| file_name == *s) {
                queue.push_back(entry.path());
            } else if kind.is_file() && file_name == name {
                let rel = entry.path();
                let rel = rel.strip_prefix(root).unwrap_or(&rel).to_string_lossy();
                if rel != missing {
                    found.push(rel.into_owned());
                }
            }
        }
    }
    found
}
