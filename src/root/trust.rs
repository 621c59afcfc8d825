//! Whose repository is this? The ownership rule of SPEC §6, git's own: the repository that
//! discovery finds for a root — its git dir, its work tree and the `.git` file that named
//! the git dir, if one did — is used (for the state place and for git's features) only
//! when the current user owns all of them, or when git's `safe.directory` setting, read
//! from the protected configuration only (system, global, and the command line's
//! `GIT_CONFIG_PARAMETERS` / `GIT_CONFIG_COUNT`; never the repository's own), lists it. As
//! root, a repository of root's is owned, and so is one of the user `sudo` ran for
//! (`SUDO_UID`), as git allows. Otherwise the run is refused (`usage`) with git's advice,
//! before anything in the repository is read by us. Unix only: on Windows every repository
//! is used (README "Platforms"). Must not read or write anything but the metadata of those
//! paths and git's configuration files.

#[cfg(unix)]
use std::path::Path;
use std::path::PathBuf;

use crate::error::{Error, ErrorCode};

/// A repository that belongs to someone else and that no `safe.directory` names.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TrustError {
    /// `path` (the work tree, the git dir, or the `.git` file) belongs to uid `owner`.
    #[error(
        "detected dubious ownership in the git repository at {}: {} belongs to another user \
         (uid {owner}); apply-patch, as git, uses a repository only when you own it, and read \
         nothing in it",
        repo.display(),
        path.display()
    )]
    NotOwned {
        repo: PathBuf,
        path: PathBuf,
        owner: u32,
    },
}

impl From<TrustError> for Error {
    fn from(err: TrustError) -> Error {
        let source = err.clone();
        boundary(err).caused_by(source)
    }
}

/// The boundary error of `err` (its message, path, hint and details, written once); the
/// conversion adds `err` itself as its source.
fn boundary(err: TrustError) -> crate::Error {
    let message = err.to_string();
    let TrustError::NotOwned { repo, path, owner } = err;
    let shown = repo.display().to_string();
    Error::new(ErrorCode::Usage, message)
        .with_path(shown.clone())
        .with_hint(format!(
            "if you trust this repository, add an exception as git asks: git config \
             --global --add safe.directory {shown}"
        ))
        .with_details(serde_json::json!({
            "repository": shown,
            "owned_by": owner,
            "not_owned": path.display().to_string(),
            "safe_directory": shown,
        }))
}

/// Refuses (`usage`) the repository `repo` when the current user owns neither it nor an
/// exception for it (see the module docs).
#[cfg(unix)]
pub(crate) fn check_repository(repo: &gix::Repository) -> Result<(), TrustError> {
    let workdir = repo.workdir();
    let git_dir = repo.git_dir();
    // git's three paths: the git dir (named first when it is not ours: the state would go
    // there), the `.git` file that named it, the work tree.
    let gitfile = workdir
        .map(|w| w.join(".git"))
        .filter(|f| std::fs::symlink_metadata(f).is_ok_and(|m| m.is_file()));
    let foreign = [git_dir]
        .into_iter()
        .chain(gitfile.as_deref())
        .chain(workdir)
        .find_map(|path| {
            owner_of(path)
                .filter(|&uid| !super::is_ours(uid))
                .map(|uid| (path.to_path_buf(), uid))
        });
    let Some((path, owner)) = foreign else {
        return Ok(());
    };
    let repo_path = super::canonical_or_same(workdir.unwrap_or(git_dir));
    if listed_safe(&repo_path, &safe_directories()) {
        return Ok(());
    }
    Err(TrustError::NotOwned {
        repo: repo_path,
        path,
        owner,
    })
}

/// Windows: every repository is used (its owners are not Unix uids; README "Platforms").
#[cfg(not(unix))]
pub(crate) fn check_repository(_repo: &gix::Repository) -> Result<(), TrustError> {
    Ok(())
}

/// The owner of `path` itself (a symlink is not followed); `None` when it cannot be looked at
/// (git then takes it as not owned too, but a path gix just opened can always be: a race).
#[cfg(unix)]
fn owner_of(path: &Path) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(path).ok().map(|m| m.uid())
}

/// The `safe.directory` values of git's protected configuration, in the order git reads
/// them: the system and global files (with their includes), then the command line's
/// (`GIT_CONFIG_COUNT`, `GIT_CONFIG_PARAMETERS`). A file that cannot be read adds nothing.
#[cfg(unix)]
fn safe_directories() -> Vec<Option<Vec<u8>>> {
    use gix::config::File;
    let mut values: Vec<Option<Vec<u8>>> = Vec::new();
    let mut files = File::from_globals().unwrap_or_default();
    if let Ok(env) = File::from_environment_overrides() {
        let _ = files.append(env);
    }
    for value in files.strings("safe.directory").unwrap_or_default() {
        values.push(Some(value.to_vec()));
    }
    if let Some(text) = std::env::var_os("GIT_CONFIG_PARAMETERS") {
        let text = text.to_string_lossy();
        for (key, value) in config_parameters(&text) {
            if key.eq_ignore_ascii_case("safe.directory") {
                values.push(value.map(String::into_bytes));
            }
        }
    }
    values
}

/// Does git's `safe.directory` list (`None`: a key given without a value) admit the
/// repository at `repo` (canonical)? `*` admits every one; an empty value (or none) empties
/// the list so far; `~/` and `%(prefix)/` are expanded; a relative path is ignored; `DIR/*`
/// admits every repository below DIR; any other path admits that one repository. Paths are
/// compared as given and with their symlinks resolved (as git 2.46 and later do).
#[cfg(unix)]
pub(crate) fn listed_safe(repo: &Path, values: &[Option<Vec<u8>>]) -> bool {
    let mut safe = false;
    for value in values {
        match value.as_deref() {
            None | Some(b"") => safe = false,
            Some(b"*") => safe = true,
            Some(value) => safe = safe || admits(repo, value),
        }
    }
    safe
}

/// One `safe.directory` path (not `*`, not empty) against the repository at `repo`.
#[cfg(unix)]
fn admits(repo: &Path, value: &[u8]) -> bool {
    use gix::bstr::ByteSlice;
    use std::os::unix::ffi::OsStrExt;
    let home = gix::path::env::home_dir();
    let context = gix::config::path::interpolate::Context {
        git_install_dir: gix::path::env::installation_config_prefix(),
        home_dir: home.as_deref(),
        home_for_user: None,
    };
    let Ok(allowed) = gix::config::Path::from(value.as_bstr()).interpolate(context) else {
        return false;
    };
    if !allowed.is_absolute() {
        return false;
    }
    let canonical = |p: &Path| std::fs::canonicalize(p).ok();
    match allowed.as_os_str().as_bytes().strip_suffix(b"/*") {
        Some(dir) => {
            let dir = Path::new(std::ffi::OsStr::from_bytes(dir));
            let dir = if dir.as_os_str().is_empty() {
                Path::new("/")
            } else {
                dir
            };
            // Below DIR, as git's prefix `DIR/` admits: not DIR itself.
            let below = |d: &Path| repo != d && repo.starts_with(d);
            below(dir) || canonical(dir).is_some_and(|d| below(&d))
        }
        None => repo == allowed || canonical(&allowed).is_some_and(|a| repo == a),
    }
}

/// The `key=value` pairs of `GIT_CONFIG_PARAMETERS` as git writes them (`git -c`): each
/// single-quoted (`'key'='value'`, or the older `'key=value'`), a quote inside written
/// `'\''`; a key without `=` has no value. Stops at the first entry that does not parse.
#[cfg_attr(not(unix), allow(dead_code))]
pub(crate) fn config_parameters(text: &str) -> Vec<(String, Option<String>)> {
    let mut out = Vec::new();
    let mut rest = text.trim_start();
    while !rest.is_empty() {
        let Some((first, after)) = dequote(rest) else {
            break;
        };
        rest = match after.strip_prefix('=') {
            Some(value_part) => match dequote(value_part) {
                Some((value, after)) => {
                    out.push((first, Some(value)));
                    after
                }
                None => {
                    out.push((first, Some(String::new())));
                    value_part
                }
            },
            None => {
                match first.split_once('=') {
                    Some((k, v)) => out.push((k.to_string(), Some(v.to_string()))),
                    None => out.push((first, None)),
                }
                after
            }
        };
        rest = rest.trim_start();
    }
    out
}

/// One single-quoted word at the start of `text` (with git's `'\X'` escapes between quoted
/// parts) and the text after it.
#[cfg_attr(not(unix), allow(dead_code))]
fn dequote(text: &str) -> Option<(String, &str)> {
    let mut rest = text.strip_prefix('\'')?;
    let mut out = String::new();
    loop {
        let end = rest.find('\'')?;
        out.push_str(&rest[..end]);
        rest = &rest[end + 1..];
        // `'\''` (or `'\!'`): an escaped character, and the quote goes on.
        let mut chars = rest.chars();
        match (chars.next(), chars.next(), chars.next()) {
            (Some('\\'), Some(c), Some('\'')) => {
                out.push(c);
                rest = &rest[1 + c.len_utf8() + 1..];
            }
            _ => return Some((out, rest)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_config_parameters_are_read_as_git_writes_them() {
        let text = "'safe.directory'='/a b' 'core.x=y' 'user.name'='it'\\''s' 'flag'";
        assert_eq!(
            config_parameters(text),
            vec![
                ("safe.directory".to_string(), Some("/a b".to_string())),
                ("core.x".to_string(), Some("y".to_string())),
                ("user.name".to_string(), Some("it's".to_string())),
                ("flag".to_string(), None),
            ]
        );
        assert_eq!(config_parameters("'a'= 'b'='c'").len(), 2);
        assert!(config_parameters("unquoted").is_empty());
    }

    #[cfg(unix)]
    #[test]
    fn safe_directory_values_follow_gits_rules() {
        let tmp = tempfile::tempdir().expect("temp dir");
        let base = tmp.path().canonicalize().expect("canonical");
        let repo = base.join("shared/repo");
        std::fs::create_dir_all(&repo).expect("mkdir");
        std::os::unix::fs::symlink(base.join("shared"), base.join("link")).expect("symlink");
        let v = |s: &str| Some(s.as_bytes().to_vec());
        let path = |p: &Path| v(&p.display().to_string());
        let with_slash = format!("{}/", repo.display());
        let below = format!("{}/*", base.join("shared").display());
        let via_link = format!("{}/*", base.join("link").display());
        let cases: Vec<(Vec<Option<Vec<u8>>>, bool)> = vec![
            (vec![], false),
            (vec![v("*")], true),
            (vec![path(&repo)], true),
            (vec![v(&with_slash)], true),
            (vec![v(&below)], true),
            (vec![v(&via_link)], true),
            (vec![path(&base.join("link/repo"))], true),
            (vec![v(&format!("{}/*", repo.display()))], false),
            (vec![path(&base.join("shared"))], false),
            (vec![v("repo")], false),
            (vec![v("*"), v("")], false),
            (vec![v("*"), None], false),
            (vec![v(""), path(&repo)], true),
            (vec![path(&repo), v(""), path(&base)], false),
        ];
        for (values, expected) in cases {
            assert_eq!(listed_safe(&repo, &values), expected, "{values:?}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn the_refusal_names_the_repository_and_gits_advice() {
        let e: Error = TrustError::NotOwned {
            repo: PathBuf::from("/srv/r"),
            path: PathBuf::from("/srv/r/.git"),
            owner: 1234,
        }
        .into();
        assert_eq!(e.code, ErrorCode::Usage);
        assert!(e
            .message
            .contains("/srv/r/.git belongs to another user (uid 1234)"));
        assert_eq!(
            e.hint.as_deref(),
            Some(
                "if you trust this repository, add an exception as git asks: git config \
                 --global --add safe.directory /srv/r"
            )
        );
        // SAFETY: geteuid has no failure mode.
        assert!(super::super::is_ours(unsafe { libc::geteuid() }));
    }
}
