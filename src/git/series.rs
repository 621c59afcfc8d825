//! `check-patches`: which patch files to check, grouped into series (one per directory) and
//! ordered as they apply: the order of a quilt-style `series` file, else name order
//! (`0001-…`, `0002-…`). Reads the file system only; checking is the caller's.

use super::GitError;
use crate::error::Error;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The patches of one directory, in the order they apply (each on the result of the ones
/// before).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Series {
    pub dir: PathBuf,
    pub patches: Vec<PathBuf>,
    /// True when the order came from a `series` file.
    pub from_series_file: bool,
}

/// Is this a patch file by its name (`*.patch`, `*.diff`)?
pub fn is_patch_name(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("patch" | "diff")
    )
}

/// The series to check for the given `paths`: files as given, directories searched
/// recursively for `*.patch` / `*.diff` (hidden directories skipped). Every series is
/// ordered by its directory's `series` file when there is one (a directory then contributes
/// only the patches it lists, as quilt does), else by file name.
pub fn collect(paths: &[PathBuf]) -> Result<Vec<Series>, GitError> {
    let mut groups: BTreeMap<PathBuf, (Vec<PathBuf>, Vec<PathBuf>)> = BTreeMap::new();
    for path in paths {
        let meta = std::fs::metadata(path)
            .map_err(|e| Error::io(&path.display().to_string(), "cannot read", &e))?;
        if meta.is_dir() {
            walk(path, &mut groups)?;
        } else {
            let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
            groups.entry(dir).or_default().0.push(path.clone());
        }
    }
    let mut out = Vec::new();
    for (dir, (explicit, found)) in groups {
        out.push(order(dir, explicit, found)?);
    }
    Ok(out)
}

/// Add the patch files under `dir` to `groups` (as "found", not "explicit").
fn walk(
    dir: &Path,
    groups: &mut BTreeMap<PathBuf, (Vec<PathBuf>, Vec<PathBuf>)>,
) -> Result<(), GitError> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| Error::io(&dir.display().to_string(), "cannot list", &e))?;
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(&dir.display().to_string(), "cannot list", &e))?;
        let path = entry.path();
        let hidden = entry.file_name().to_string_lossy().starts_with('.');
        let file_type = entry
            .file_type()
            .map_err(|e| Error::io(&path.display().to_string(), "cannot inspect", &e))?;
        if file_type.is_dir() && !hidden {
            walk(&path, groups)?;
        } else if file_type.is_file() && is_patch_name(&path) {
            groups.entry(dir.to_path_buf()).or_default().1.push(path);
        }
    }
    Ok(())
}

/// Order one directory's patches.
fn order(dir: PathBuf, explicit: Vec<PathBuf>, found: Vec<PathBuf>) -> Result<Series, GitError> {
    let series_file = dir.join("series");
    let listed = match std::fs::read_to_string(&series_file) {
        Ok(text) => Some(parse_series(&text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            return Err(Error::io(
                &series_file.display().to_string(),
                "cannot read",
                &e,
            )
            .into())
        }
    };
    let mut all = explicit.clone();
    all.extend(found.iter().cloned());
    let Some(listed) = listed else {
        all.sort_by(|a, b| a.file_name().cmp(&b.file_name()));
        all.dedup();
        return Ok(Series {
            dir,
            patches: all,
            from_series_file: false,
        });
    };
    let mut patches = Vec::new();
    for name in &listed {
        let path = dir.join(name);
        let wanted = explicit.iter().any(|p| same_file(p, &path)) || !found.is_empty();
        if !wanted {
            continue;
        }
        if !path.is_file() {
            return Err(GitError::SeriesMissing {
                series: series_file.clone(),
                name: name.to_string(),
            });
        }
        patches.push(path);
    }
    // Files named on the command line that the series does not list come last, by name.
    let mut extra: Vec<PathBuf> = explicit
        .into_iter()
        .filter(|p| !patches.iter().any(|q| same_file(p, q)))
        .collect();
    extra.sort_by(|a, b| a.file_name().cmp(&b.file_name()));
    extra.dedup();
    patches.extend(extra);
    Ok(Series {
        dir,
        patches,
        from_series_file: true,
    })
}

/// The patch names of a quilt `series` file: the first word of each line; blank lines and
/// `#` comments skipped (options such as `-p1` after the name are ignored).
pub fn parse_series(text: &str) -> Vec<String> {
    text.lines()
        .map(|line| line.split('#').next().unwrap_or("").trim())
        .filter_map(|line| line.split_whitespace().next())
        .map(str::to_string)
        .collect()
}

fn same_file(a: &Path, b: &Path) -> bool {
    a == b
        || matches!(
            (std::fs::canonicalize(a), std::fs::canonicalize(b)),
            (Ok(x), Ok(y)) if x == y
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_files_list_first_words_without_comments() {
        let text = "# quilt series\n0002-b.patch -p1\n\n0001-a.patch # first\n";
        assert_eq!(parse_series(text), vec!["0002-b.patch", "0001-a.patch"]);
    }

    #[test]
    fn directories_order_by_name_or_by_series_file() {
        let tmp = tempfile::tempdir().expect("a temp dir can be made");
        let dir = tmp.path().join("patches");
        std::fs::create_dir(&dir).expect("mkdir");
        for name in ["0002-b.patch", "0001-a.patch", "0010-c.diff", "notes.txt"] {
            std::fs::write(dir.join(name), "x").expect("write");
        }
        let series = collect(std::slice::from_ref(&dir)).expect("collect");
        let names: Vec<_> = series[0]
            .patches
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, vec!["0001-a.patch", "0002-b.patch", "0010-c.diff"]);

        std::fs::write(dir.join("series"), "0002-b.patch\n0001-a.patch\n").expect("write");
        let series = collect(std::slice::from_ref(&dir)).expect("collect");
        assert!(series[0].from_series_file);
        let names: Vec<_> = series[0]
            .patches
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, vec!["0002-b.patch", "0001-a.patch"]);
    }

    #[test]
    fn a_series_naming_a_missing_patch_is_refused() {
        let tmp = tempfile::tempdir().expect("a temp dir can be made");
        std::fs::write(tmp.path().join("a.patch"), "x").expect("write");
        std::fs::write(tmp.path().join("series"), "gone.patch\n").expect("write");
        let err = collect(&[tmp.path().to_path_buf()]).unwrap_err();
        assert_eq!(err.code(), crate::ErrorCode::FileNotFound);
        assert!(matches!(&err, GitError::SeriesMissing { name, .. } if name == "gone.patch"));
    }
}
