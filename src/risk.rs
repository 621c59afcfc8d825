//! Stage: risk. A score for a planned patch, so that a pipeline can let small, ordinary edits
//! through unattended and stop large or sensitive ones (`--max-risk N`, refused as
//! `risk_exceeded` before anything is written). In the core (it is pure), so that a build
//! without the `git` feature has `--max-risk` too.
//!
//! The formula (documented in the README, section "agents"), summed over the files:
//! - 1 point per file touched, +1 more for a rename or copy;
//! - 1 point per started 20 lines changed (inserted + deleted);
//! - 1 point per started 20 lines deleted (deletions count twice), +5 for deleting a file;
//! - a sensitive path adds: secrets (`.env*`, keys and certificates, `id_rsa*`,
//!   `credentials*`, `secrets.*`, `.npmrc`, `.netrc`, `.pypirc`) +20; CI configuration
//!   (`.github/workflows/`, `.gitlab-ci.yml`, `.circleci/`, `Jenkinsfile`, `.travis.yml`,
//!   `azure-pipelines.yml`, `.buildkite/`, `.ci/`) +10; lock files (`Cargo.lock`,
//!   `package-lock.json`, `yarn.lock`, `pnpm-lock.yaml`, `poetry.lock`, `uv.lock`,
//!   `Pipfile.lock`, `Gemfile.lock`, `composer.lock`, `go.sum`) +5.
//!
//! Pure: contents in, a score out. Must not read or write files.

use crate::model::FileOp;

/// One file of a planned patch, as the score sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange<'a> {
    /// Root-relative path (the new path of a rename).
    pub path: &'a str,
    pub op: FileOp,
    /// Lines inserted and deleted (see [`count_lines`] for two contents).
    pub inserted: usize,
    pub deleted: usize,
}

/// One reason a score went up.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub struct Factor {
    pub path: String,
    /// `file`, `rename`, `lines`, `deletions`, `delete_file`, `secret`, `ci_config`,
    /// `lock_file`.
    pub factor: String,
    pub points: u32,
}

/// The risk of a patch: the `risk` object of the report.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub struct Risk {
    pub score: u32,
    pub files: usize,
    pub lines_inserted: usize,
    pub lines_deleted: usize,
    pub factors: Vec<Factor>,
}

/// Score a set of file changes.
pub fn score(changes: &[FileChange<'_>]) -> Risk {
    let mut risk = Risk::default();
    for c in changes {
        let (ins, del) = (c.inserted, c.deleted);
        risk.files += 1;
        risk.lines_inserted += ins;
        risk.lines_deleted += del;
        let mut add = |factor: &str, points: u32| {
            if points > 0 {
                risk.score += points;
                risk.factors.push(Factor {
                    path: c.path.to_string(),
                    factor: factor.to_string(),
                    points,
                });
            }
        };
        add("file", 1);
        if matches!(c.op, FileOp::Rename | FileOp::Copy) {
            add("rename", 1);
        }
        add("lines", per_started(ins + del, 20));
        add("deletions", per_started(del, 20));
        if c.op == FileOp::Delete {
            add("delete_file", 5);
        }
        if let Some((factor, points)) = sensitive(c.path) {
            add(factor, points);
        }
    }
    risk
}

fn per_started(n: usize, per: usize) -> u32 {
    u32::try_from(n.div_ceil(per)).unwrap_or(u32::MAX)
}

/// Lines inserted and deleted between two contents (a line diff).
#[cfg(test)]
pub fn count_lines(old: Option<&[u8]>, new: Option<&[u8]>) -> (usize, usize) {
    let (old, new) = (split_lines(old), split_lines(new));
    let ops = similar::capture_diff_slices(similar::Algorithm::Myers, &old, &new);
    let (mut ins, mut del) = (0, 0);
    for op in ops {
        match op {
            similar::DiffOp::Insert { new_len, .. } => ins += new_len,
            similar::DiffOp::Delete { old_len, .. } => del += old_len,
            similar::DiffOp::Replace {
                old_len, new_len, ..
            } => {
                ins += new_len;
                del += old_len;
            }
            similar::DiffOp::Equal { .. } => {}
        }
    }
    (ins, del)
}

#[cfg(test)]
fn split_lines(b: Option<&[u8]>) -> Vec<&[u8]> {
    match b {
        Some(b) => b.split_inclusive(|&c| c == b'\n').collect(),
        None => Vec::new(),
    }
}

/// The sensitive-path class of `path` and its points, if any.
pub fn sensitive(path: &str) -> Option<(&'static str, u32)> {
    let lower = path.to_ascii_lowercase();
    let name = lower.rsplit('/').next().unwrap_or(&lower);
    let in_dir = |dir: &str| lower.starts_with(dir) || lower.contains(&format!("/{dir}"));
    const KEY_EXT: [&str; 8] = [
        ".pem",
        ".key",
        ".p12",
        ".pfx",
        ".jks",
        ".keystore",
        ".crt",
        ".asc",
    ];
    let secret = name == ".env"
        || name.starts_with(".env.")
        || name.ends_with(".env")
        || KEY_EXT.iter().any(|e| name.ends_with(e))
        || name.starts_with("id_rsa")
        || name.starts_with("id_ed25519")
        || name.starts_with("id_ecdsa")
        || name.starts_with("credentials")
        || name.starts_with("secrets.")
        || matches!(name, ".npmrc" | ".netrc" | ".pypirc" | ".htpasswd");
    if secret {
        return Some(("secret", 20));
    }
    let ci = in_dir(".github/workflows/")
        || in_dir(".circleci/")
        || in_dir(".buildkite/")
        || lower.starts_with(".ci/")
        || matches!(
            name,
            ".gitlab-ci.yml" | "jenkinsfile" | ".travis.yml" | "azure-pipelines.yml"
        );
    if ci {
        return Some(("ci_config", 10));
    }
    let lock = matches!(
        name,
        "cargo.lock"
            | "package-lock.json"
            | "npm-shrinkwrap.json"
            | "yarn.lock"
            | "pnpm-lock.yaml"
            | "poetry.lock"
            | "uv.lock"
            | "pipfile.lock"
            | "gemfile.lock"
            | "composer.lock"
            | "go.sum"
    );
    lock.then_some(("lock_file", 5))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change<'a>(
        path: &'a str,
        op: FileOp,
        old: Option<&'a [u8]>,
        new: Option<&'a [u8]>,
    ) -> FileChange<'a> {
        let (inserted, deleted) = count_lines(old, new);
        FileChange {
            path,
            op,
            inserted,
            deleted,
        }
    }

    #[test]
    fn a_one_line_edit_scores_low() {
        let r = score(&[change(
            "src/a.rs",
            FileOp::Modify,
            Some(b"a\nb\nc\n"),
            Some(b"a\nB\nc\n"),
        )]);
        assert_eq!((r.lines_inserted, r.lines_deleted), (1, 1));
        // file 1 + lines ceil(2/20)=1 + deletions ceil(1/20)=1
        assert_eq!(r.score, 3);
    }

    #[test]
    fn deleting_a_large_file_scores_high() {
        let old = "x\n".repeat(100);
        let r = score(&[change(
            "src/old.rs",
            FileOp::Delete,
            Some(old.as_bytes()),
            None,
        )]);
        // file 1 + lines 5 + deletions 5 + delete_file 5
        assert_eq!(r.score, 16);
        assert_eq!(r.lines_deleted, 100);
    }

    #[test]
    fn sensitive_paths_add_points() {
        assert_eq!(sensitive(".env"), Some(("secret", 20)));
        assert_eq!(sensitive("config/.env.production"), Some(("secret", 20)));
        assert_eq!(sensitive("deploy/server.key"), Some(("secret", 20)));
        assert_eq!(
            sensitive(".github/workflows/ci.yml"),
            Some(("ci_config", 10))
        );
        assert_eq!(sensitive("sub/.gitlab-ci.yml"), Some(("ci_config", 10)));
        assert_eq!(sensitive("Cargo.lock"), Some(("lock_file", 5)));
        assert_eq!(sensitive("web/package-lock.json"), Some(("lock_file", 5)));
        assert_eq!(sensitive("src/environment.rs"), None);
        assert_eq!(sensitive("src/keyboard.rs"), None);
        let r = score(&[change(".env", FileOp::Add, None, Some(b"TOKEN=1\n"))]);
        assert_eq!(r.score, 1 + 1 + 20);
        assert!(r
            .factors
            .iter()
            .any(|f| f.factor == "secret" && f.path == ".env"));
    }

    #[test]
    fn renames_count_once_more() {
        let r = score(&[change("b.rs", FileOp::Rename, Some(b"x\n"), Some(b"x\n"))]);
        assert_eq!(r.score, 2);
    }
}
