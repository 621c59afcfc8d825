//! Stage: between parse and plan. Whole-patch transforms asked for on the command line:
//! `--reverse`, `--include` / `--exclude`, `--directory`.
//!
//! Pure model-to-model functions; they never look at the file system and never re-parse.

use globset::{Glob, GlobSet, GlobSetBuilder};

mod error;

pub use error::{ConvertError, Irreversible, NoAgentForm};

use crate::model::{Body, FileOp, FilePatch, LineKind, PatchSet};

/// The inverse patch (`--reverse`): sides swapped, Add ↔ Delete, rename from ↔ to, modes,
/// `\ No newline` flags and blob ids swapped, binary forward ↔ reverse data; file order is
/// reversed so that a patch whose operations depend on each other undoes them in reverse.
/// Unified diffs only; a copy, or binary data without a reverse section, cannot be reversed.
///
/// ```
/// use apply_patch::parse::{unified, ParseOptions};
/// use apply_patch::{render, transform};
/// let diff = b"--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+hi\n";
/// let set = unified::parse(diff, 0, &ParseOptions::default()).unwrap();
/// let back = transform::reverse(set).unwrap();
/// assert_eq!(
///     String::from_utf8(render::to_unified(&back)).unwrap(),
///     "diff --git a/new.txt b/new.txt\n--- a/new.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-hi\n"
/// );
/// ```
pub fn reverse(set: PatchSet<'_>) -> Result<PatchSet<'_>, ConvertError> {
    if !set.rules.reversible {
        return Err(ConvertError::ReverseNotUnified { format: set.format });
    }
    let mut files = set
        .files
        .into_iter()
        .map(reverse_file)
        .collect::<Result<Vec<_>, _>>()?;
    files.reverse();
    Ok(PatchSet { files, ..set })
}

fn reverse_file(fp: FilePatch<'_>) -> Result<FilePatch<'_>, ConvertError> {
    let path = fp.path().to_string();
    let refuse = |what: Irreversible| ConvertError::Irreversible {
        path: path.clone(),
        what,
    };
    let op = match fp.op {
        FileOp::Add => FileOp::Delete,
        FileOp::Delete => FileOp::Add,
        FileOp::Copy => return Err(refuse(Irreversible::Copy)),
        other => other,
    };
    let body = match fp.body {
        Body::Hunks(hunks) => Body::Hunks(
            hunks
                .into_iter()
                .map(|mut h| {
                    std::mem::swap(&mut h.old_start, &mut h.new_start);
                    std::mem::swap(&mut h.old_count, &mut h.new_count);
                    std::mem::swap(&mut h.old_no_newline, &mut h.new_no_newline);
                    for l in &mut h.lines {
                        l.kind = match l.kind {
                            LineKind::Delete => LineKind::Insert,
                            LineKind::Insert => LineKind::Delete,
                            LineKind::Context => LineKind::Context,
                        };
                    }
                    h
                })
                .collect(),
        ),
        Body::Binary(mut b) => match b.reverse.take() {
            Some(rev) => {
                b.reverse = Some(std::mem::replace(&mut b.forward, rev));
                Body::Binary(b)
            }
            None => return Err(refuse(Irreversible::BinaryWithoutReverse)),
        },
        other => other,
    };
    Ok(FilePatch {
        op,
        old_path: fp.new_path,
        new_path: fp.old_path,
        old_mode: fp.new_mode,
        new_mode: fp.old_mode,
        base: None,
        blob_ids: fp.blob_ids.map(|b| crate::model::BlobIds {
            old: b.new,
            new: b.old,
        }),
        body,
        patch_line: fp.patch_line,
    })
}

fn glob_set(globs: &[String], flag: &'static str) -> Result<Option<GlobSet>, ConvertError> {
    if globs.is_empty() {
        return Ok(None);
    }
    let mut b = GlobSetBuilder::new();
    for g in globs {
        let glob = Glob::new(g).map_err(|e| ConvertError::BadGlob {
            flag,
            glob: g.clone(),
            cause: e.to_string(),
        })?;
        b.add(glob);
    }
    b.build()
        .map(Some)
        .map_err(|e| ConvertError::BadGlobSet {
            flag,
            cause: e.to_string(),
        })
}

/// Keep the file patches selected by `--include` / `--exclude` globs (`*` also matches `/`;
/// a glob is matched against the new path and the old path). With includes, a file must
/// match one of them; a file matching an exclude is dropped.
///
/// ```
/// use apply_patch::parse::{unified, ParseOptions};
/// use apply_patch::transform;
/// let diff = b"--- a/src/x.rs\n+++ b/src/x.rs\n@@ -1,2 +1,2 @@\n k\n-a\n+b\n--- a/doc.md\n+++ b/doc.md\n@@ -1,2 +1,2 @@\n k\n-a\n+b\n";
/// let set = unified::parse(diff, 0, &ParseOptions::default()).unwrap();
/// let only_src = transform::select(set, &["src/**".to_string()], &[]).unwrap();
/// assert_eq!(only_src.files.len(), 1);
/// assert_eq!(only_src.files[0].path(), "src/x.rs");
/// ```
pub fn select<'a>(
    set: PatchSet<'a>,
    include: &[String],
    exclude: &[String],
) -> Result<PatchSet<'a>, ConvertError> {
    let inc = glob_set(include, "--include")?;
    let exc = glob_set(exclude, "--exclude")?;
    let hits = |g: &GlobSet, fp: &FilePatch<'_>| {
        [fp.new_path.as_deref(), fp.old_path.as_deref()]
            .into_iter()
            .flatten()
            .any(|p| g.is_match(p))
    };
    let files = set
        .files
        .into_iter()
        .filter(|fp| {
            inc.as_ref().is_none_or(|g| hits(g, fp)) && !exc.as_ref().is_some_and(|g| hits(g, fp))
        })
        .collect();
    Ok(PatchSet { files, ..set })
}

/// Prefix every path with `dir` (`--directory DIR`); `./` and trailing `/` of `dir` are
/// dropped, an empty `dir` changes nothing.
///
/// ```
/// use apply_patch::parse::{unified, ParseOptions};
/// use apply_patch::transform;
/// let diff = b"--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n k\n-a\n+b\n";
/// let set = unified::parse(diff, 0, &ParseOptions::default()).unwrap();
/// assert_eq!(transform::prefix(set, "vendor/lib/").files[0].path(), "vendor/lib/x");
/// ```
pub fn prefix<'a>(set: PatchSet<'a>, dir: &str) -> PatchSet<'a> {
    let mut d = dir.trim_end_matches('/');
    while let Some(rest) = d.strip_prefix("./") {
        d = rest.trim_start_matches('/');
    }
    if d.is_empty() || d == "." {
        return set;
    }
    let join = |p: Option<String>| p.map(|p| format!("{d}/{p}"));
    let files = set
        .files
        .into_iter()
        .map(|fp| FilePatch {
            old_path: join(fp.old_path),
            new_path: join(fp.new_path),
            ..fp
        })
        .collect();
    PatchSet { files, ..set }
}

#[cfg(test)]
mod tests;
