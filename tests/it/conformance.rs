//! Peer conformance: the Codex `apply_patch` scenario suite (env `APPLY_PATCH_CODEX_SUITE`)
//! and the real fd release diffs (env `APPLY_PATCH_REAL_BENCH`). Both skip with a message
//! when their variable is unset.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::util::{copy_dir, snapshot_dir, Entry, TempTree, TreeSnapshot};

/// One `[section]` of an expectations file (tests/expectations/): key → string value.
pub type Expectations = BTreeMap<String, BTreeMap<String, String>>;

fn expectations() -> Expectations {
    tiny_toml(include_str!("../expectations/codex.toml"))
}

/// The expectations files use a tiny TOML subset (sections and `key = "string"` lines).
pub fn tiny_toml(text: &str) -> Expectations {
    let mut out = Expectations::new();
    let mut section = None;
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            section = Some(name.to_string());
            out.entry(name.to_string()).or_default();
            continue;
        }
        let (key, value) = line.split_once('=').expect("key = value line");
        let value = value.trim().trim_matches('"').to_string();
        let name = section.clone().expect("a key inside a section");
        out.entry(name)
            .or_default()
            .insert(key.trim().to_string(), value);
    }
    out
}

fn env_dir(var: &str) -> Option<PathBuf> {
    let dir = PathBuf::from(std::env::var_os(var)?);
    dir.is_dir().then_some(dir)
}

#[test]
fn codex_scenarios() {
    let Some(suite) = env_dir("APPLY_PATCH_CODEX_SUITE") else {
        eprintln!("skipped: set APPLY_PATCH_CODEX_SUITE to the Codex scenario folder to run it");
        return;
    };
    let expect = expectations();
    let mut names: Vec<PathBuf> = std::fs::read_dir(&suite)
        .expect("read the suite folder")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("patch.txt").is_file())
        .collect();
    names.sort();
    assert!(
        names.len() >= 20,
        "expected the whole suite in {}",
        suite.display()
    );
    let mut failures = Vec::new();
    for dir in &names {
        let name = dir
            .file_name()
            .expect("folder name")
            .to_string_lossy()
            .into_owned();
        for codex in [false, true] {
            if let Err(why) = scenario(dir, expect.get(&name), codex) {
                let how = if codex {
                    "as apply_patch"
                } else {
                    "as apply-patch --json"
                };
                failures.push(format!("{name} ({how}): {why}"));
            }
        }
    }
    for name in expect.keys() {
        assert!(
            names.iter().any(|d| d.ends_with(name)),
            "{name} listed but absent from the suite"
        );
    }
    assert!(
        failures.is_empty(),
        "failing scenarios:\n{}",
        failures.join("\n")
    );
}

/// Run one scenario, either as `apply-patch --json PATCHFILE` or as the Codex drop-in
/// `apply_patch "<patch text>"` (which has no JSON report: only the tree and status count).
fn scenario(
    dir: &Path,
    divergence: Option<&BTreeMap<String, String>>,
    codex: bool,
) -> Result<(), String> {
    let tree = TempTree::new();
    copy_dir(&dir.join("input"), &tree.root());
    let input = tree.snapshot();
    let patch = dir.join("patch.txt");
    let out = if codex {
        let text = std::fs::read_to_string(&patch).map_err(|e| e.to_string())?;
        tree.run_as_codex(&[std::ffi::OsStr::new(&text)], "")
    } else {
        tree.run(&["--json", &patch.to_string_lossy()], "")
    };
    let after = tree.snapshot();
    let report = if codex {
        serde_json::json!({"error": {"code": divergence.and_then(|d| d.get("code"))}})
    } else {
        out.json()
    };
    match divergence {
        None => {
            let expected = snapshot_dir(&dir.join("expected"));
            if !same_tree(&after, &expected) {
                return Err(format!("tree differs from expected/ ({})", out.stdout));
            }
        }
        Some(d) if d.get("outcome").map(String::as_str) == Some("refused") => {
            let code = d.get("code").map(String::as_str).unwrap_or("");
            if out.status != 1 || report["error"]["code"] != code {
                return Err(format!("expected refusal {code}, got {}", out.stdout));
            }
            if after != input {
                return Err("the refusal changed the tree".into());
            }
        }
        Some(d) => {
            if d.get("tree").map(String::as_str) != Some("expected_keeping_final_newline") {
                return Err(format!("unknown expectation {d:?}"));
            }
            let expected = keep_final_newline(&input, snapshot_dir(&dir.join("expected")));
            if out.status != 0 || !same_tree(&after, &expected) {
                return Err(format!(
                    "tree differs from the computed expectation ({})",
                    out.stdout
                ));
            }
        }
    }
    Ok(())
}

/// Upstream's expected tree with each file's final-newline state taken from the input.
fn keep_final_newline(input: &TreeSnapshot, mut expected: TreeSnapshot) -> TreeSnapshot {
    for (path, entry) in expected.iter_mut() {
        let (Some(Entry::File { bytes: old, .. }), Entry::File { bytes, .. }) =
            (input.get(path), entry)
        else {
            continue;
        };
        if !old.is_empty() && !old.ends_with(b"\n") && bytes.ends_with(b"\n") {
            bytes.pop();
        }
    }
    expected
}

#[test]
fn codex_expectations_have_reasons() {
    for (name, d) in expectations() {
        assert!(
            d.get("reason").is_some_and(|r| !r.is_empty()),
            "{name} needs a reason"
        );
        assert!(
            matches!(
                d.get("outcome").map(String::as_str),
                Some("refused" | "applied")
            ),
            "{name}"
        );
    }
}

#[test]
fn real_fd_release_diffs() {
    let Some(bench) = env_dir("APPLY_PATCH_REAL_BENCH") else {
        eprintln!("skipped: set APPLY_PATCH_REAL_BENCH to the real-diff bench folder to run it");
        return;
    };
    let case = bench.join("fd-v8.7.1--v9.0.0");
    let after = snapshot_dir(&case.join("after"));
    for diff in ["fd-v8.7.1--v9.0.0.diff", "fd-v8.7.1--v9.0.0.M.diff"] {
        let tree = TempTree::new();
        copy_dir(&case.join("before"), &tree.root());
        let out = tree.run(&["--json", &bench.join(diff).to_string_lossy()], "");
        assert_eq!(out.status, 0, "{diff}: {}", out.stdout);
        let got = tree.snapshot();
        let missing: Vec<_> = after.keys().filter(|k| !got.contains_key(*k)).collect();
        let extra: Vec<_> = got.keys().filter(|k| !after.contains_key(*k)).collect();
        let differ: Vec<_> = after
            .iter()
            .filter(|(k, v)| got.get(*k).is_some_and(|g| !same(g, v)))
            .map(|(k, _)| k)
            .collect();
        assert!(
            missing.is_empty() && extra.is_empty() && differ.is_empty(),
            "{diff}: missing {missing:?}, extra {extra:?}, different {differ:?}"
        );
    }
}

/// The same paths, each with the same bytes and executable bits (the suite's files are
/// read-only copies, so other permission bits say nothing).
fn same_tree(a: &TreeSnapshot, b: &TreeSnapshot) -> bool {
    a.len() == b.len() && a.iter().all(|(k, v)| b.get(k).is_some_and(|w| same(v, w)))
}

/// Same bytes and the same executable bits (other permission bits depend on the umask).
fn same(a: &Entry, b: &Entry) -> bool {
    match (a, b) {
        (Entry::File { bytes: x, mode: m }, Entry::File { bytes: y, mode: n }) => {
            x == y && (m & 0o111 != 0) == (n & 0o111 != 0)
        }
        _ => a == b,
    }
}
