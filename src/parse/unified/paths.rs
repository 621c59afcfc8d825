//! Stage: parse (unified diffs). From raw header path bytes to the model's paths: UTF-8
//! check, `-p N` stripping with SPEC §3 defaults, `./` removal, and splitting the two
//! unquoted names of a `diff --git` line.
//!
//! Pure; no file-system lookups (git's "does this file exist" guesses are not made here).

use crate::parse::position::shown;
use crate::parse::quoted::{quoted_path, PResult};

/// Why a path could not be made a model path.
pub type PathError = String;

/// Decode `raw` as UTF-8, strip `strip` leading components, drop leading `./`.
pub fn finish(raw: &[u8], strip: usize) -> Result<String, PathError> {
    let text = std::str::from_utf8(raw).map_err(|_| {
        format!(
            "path '{}' is not valid UTF-8 (after decoding its escapes)",
            shown(raw)
        )
    })?;
    if text.contains('\0') {
        return Err(format!("path '{}' holds a NUL byte", shown(text.as_bytes())));
    }
    let stripped = strip_components(text, strip).ok_or_else(|| {
        let have = text.split('/').filter(|c| !c.is_empty()).count();
        format!(
            "cannot strip {strip} leading component{} from path '{}': it has {have}, and a file name must remain",
            if strip == 1 { "" } else { "s" },
            shown(text.as_bytes())
        )
    })?;
    let mut path = stripped;
    while let Some(rest) = path.strip_prefix("./") {
        path = rest.trim_start_matches('/');
    }
    if path.is_empty() || path == "." {
        return Err(format!(
            "path '{}' names no file once stripped",
            shown(text.as_bytes())
        ));
    }
    Ok(path.to_string())
}

/// `path` without its first `n` components (runs of `/` count as one separator, as in git and
/// GNU patch). None when fewer than `n + 1` components are there.
fn strip_components(path: &str, n: usize) -> Option<&str> {
    let mut rest = path;
    for _ in 0..n {
        let slash = rest.find('/')?;
        rest = rest[slash..].trim_start_matches('/');
        if rest.is_empty() {
            return None;
        }
    }
    Some(rest)
}

/// The default `-p` of a plain (non-git) diff: 1 when the names present are `a/…` (old) and
/// `b/…` (new) — a `/dev/null` side does not count — else 0.
pub fn default_plain_strip(old: Option<&[u8]>, new: Option<&[u8]>) -> usize {
    let old_ok = old.is_none_or(|p| p.starts_with(b"a/"));
    let new_ok = new.is_none_or(|p| p.starts_with(b"b/"));
    usize::from(old_ok && new_ok && (old.is_some() || new.is_some()))
}

/// The two names of a `diff --git` line. Quoted names split cleanly; for unquoted names with
/// spaces, the split is the one whose two halves name the same file once `strip` components
/// are removed (git writes such a header only for a file whose name did not change).
pub fn split_git_names(names: &[u8], strip: usize) -> Option<(Vec<u8>, Vec<u8>)> {
    if names.starts_with(b"\"") {
        let (rest, old) = quoted_ok(quoted_path(names))?;
        let rest = rest.strip_prefix(b" ")?;
        return Some((old, second_name(rest)?));
    }
    let mut found = None;
    let spaces: Vec<usize> = names
        .iter()
        .enumerate()
        .filter(|(_, &b)| b == b' ')
        .map(|(i, _)| i)
        .collect();
    // Each candidate costs a pass over the line: past a sane number of spaces only the middle
    // one (equal-length prefixes, as git writes them) is tried.
    let candidates = if spaces.len() > 256 {
        spaces
            .into_iter()
            .filter(|&i| i * 2 + 1 == names.len())
            .collect()
    } else {
        spaces
    };
    for i in candidates {
        let (old, rest) = (&names[..i], &names[i + 1..]);
        let Some(new) = second_name(rest) else {
            continue;
        };
        let same = match (
            std::str::from_utf8(old)
                .ok()
                .and_then(|o| strip_components(o, strip)),
            std::str::from_utf8(&new)
                .ok()
                .and_then(|n| strip_components(n, strip)),
        ) {
            (Some(a), Some(b)) => a == b,
            _ => false,
        };
        if same {
            if found.is_some() {
                return None;
            }
            found = Some((old.to_vec(), new));
        }
    }
    found
}

fn second_name(rest: &[u8]) -> Option<Vec<u8>> {
    if rest.starts_with(b"\"") {
        let (after, p) = quoted_ok(quoted_path(rest))?;
        return after.is_empty().then_some(p);
    }
    (!rest.is_empty()).then(|| rest.to_vec())
}

fn quoted_ok(r: PResult<'_, Vec<u8>>) -> Option<(&[u8], Vec<u8>)> {
    r.ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_components() {
        assert_eq!(finish(b"a/src/x.rs", 1).as_deref(), Ok("src/x.rs"));
        assert_eq!(finish(b"a//src/x.rs", 1).as_deref(), Ok("src/x.rs"));
        assert_eq!(finish(b"./src/x.rs", 0).as_deref(), Ok("src/x.rs"));
        assert_eq!(finish(b"x/y/z", 2).as_deref(), Ok("z"));
        let err = finish(b"x/y", 2).expect_err("too few components");
        assert!(err.contains("cannot strip 2 leading components"), "{err}");
        assert!(err.contains("it has 2"), "{err}");
        assert!(finish(b"file", 1).is_err());
    }

    #[test]
    fn refuses_nul_bytes() {
        assert!(finish(b"a/x\0y", 1).expect_err("nul").contains("NUL"));
    }

    #[test]
    fn refuses_non_utf8_paths() {
        let err = finish(b"a/caf\xe9", 1).expect_err("latin-1 byte");
        assert!(err.contains("not valid UTF-8"), "{err}");
    }

    #[test]
    fn plain_default_strip() {
        assert_eq!(default_plain_strip(Some(b"a/x"), Some(b"b/x")), 1);
        assert_eq!(default_plain_strip(None, Some(b"b/x")), 1);
        assert_eq!(default_plain_strip(Some(b"a/x"), None), 1);
        assert_eq!(default_plain_strip(Some(b"x.orig"), Some(b"x")), 0);
        assert_eq!(default_plain_strip(Some(b"a/x"), Some(b"x")), 0);
    }

    #[test]
    fn splits_git_names() {
        let s = |n: &str| split_git_names(n.as_bytes(), 1);
        assert_eq!(s("a/x b/x"), Some((b"a/x".to_vec(), b"b/x".to_vec())));
        assert_eq!(
            s("a/sp ace b/sp ace"),
            Some((b"a/sp ace".to_vec(), b"b/sp ace".to_vec()))
        );
        assert_eq!(
            s("\"a/t\\tx\" \"b/t\\tx\""),
            Some((b"a/t\tx".to_vec(), b"b/t\tx".to_vec()))
        );
        assert_eq!(s("a/x b/y"), None);
        let long = format!("a/{0} b/{0}", " ".repeat(300));
        assert!(
            split_git_names(long.as_bytes(), 1).is_some(),
            "the middle split is found"
        );
    }
}
