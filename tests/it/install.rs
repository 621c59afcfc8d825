//! Installing the command (issue 15 item 9): the manual pages the main page names exist and
//! document the formats and error codes, completion covers the `apply_patch` name, the
//! pre-commit hook that uses an installed binary runs as the pre-commit framework runs it, and
//! (issue 27) the Linux executable is position-independent.

use std::path::{Path, PathBuf};
use std::process::Command;

use apply_patch::ErrorCode;

use crate::util::TempTree;

fn run(args: &[&str]) -> String {
    let t = TempTree::new();
    let out = t.run(args, "");
    assert_eq!(out.status, 0, "{args:?}: {}", out.normalized());
    out.stdout
}

#[test]
fn every_page_the_manual_names_exists() {
    let main = run(&["man"]);
    let named: Vec<String> = main
        .split("apply\\-patch\\-")
        .skip(1)
        .filter_map(|rest| rest.split_once("(1)").map(|(n, _)| n.replace("\\-", "-")))
        .collect();
    assert!(named.iter().any(|n| n == "undo"), "{named:?}");
    for name in &named {
        let page = run(&["man", name]);
        assert!(
            page.contains(&format!(".TH apply-patch-{name} 1")),
            "{name}: {page}"
        );
    }
    let t = TempTree::new();
    assert_eq!(t.run(&["man", "nope"], "").status, 2);
}

#[test]
fn the_manual_shows_value_names_formats_and_error_codes() {
    let main = run(&["man"]);
    assert!(main.contains("\\fB\\-\\-root\\fR \\fIDIR\\fR"), "{main}");
    assert!(main.contains("\\fB\\-p\\fR \\fIN\\fR"));
    assert!(main.contains(".SH FORMATS") && main.contains(".SH \"EXIT STATUS\""));
    for code in ErrorCode::ALL {
        assert!(
            main.contains(&format!("\\fB{}\\fR", code.as_str().replace('-', "\\-"))),
            "{} missing from the manual",
            code.as_str()
        );
    }
}

#[test]
fn completion_covers_the_codex_name() {
    let bash = run(&["completions", "bash"]);
    assert!(bash.contains("apply-patch\n") || bash.contains(" apply-patch"));
    assert!(bash.contains("-o default apply_patch"), "{bash}");
    let zsh = run(&["completions", "zsh"]);
    assert!(zsh.contains("#compdef apply_patch"), "{zsh}");
}

/// The hooks file's entries: (id, field → value), read line by line (the file is a flat
/// list of maps; folded `>-` descriptions are skipped).
fn hooks() -> Vec<(String, Vec<(String, String)>)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(".pre-commit-hooks.yaml");
    let text = std::fs::read_to_string(path).expect("the hooks file exists");
    let mut hooks: Vec<(String, Vec<(String, String)>)> = Vec::new();
    for line in text.lines() {
        if let Some(id) = line.strip_prefix("- id: ") {
            hooks.push((id.trim().to_string(), Vec::new()));
        } else if let (Some((key, value)), Some(last)) = (
            line.strip_prefix("  ").and_then(|l| l.split_once(':')),
            hooks.last_mut(),
        ) {
            if !key.starts_with(' ') {
                last.1.push((key.to_string(), value.trim().to_string()));
            }
        }
    }
    hooks
}

fn field<'a>(hook: &'a [(String, String)], key: &str) -> &'a str {
    hook.iter()
        .find(|(k, _)| k == key)
        .map_or("", |(_, v)| v.as_str())
}

/// A git repository with a staged file and a `patches/` folder holding one patch that
/// applies (and, with `broken`, one that does not).
fn repo_with_patches(broken: bool) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let git = |args: &[&str]| {
        let ok = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args)
            .current_dir(dir.path())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q"]);
    std::fs::write(dir.path().join("a.txt"), "one\ntwo\n").expect("write");
    std::fs::create_dir(dir.path().join("patches")).expect("mkdir");
    std::fs::write(
        dir.path().join("patches/0001-fix.patch"),
        "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+2\n",
    )
    .expect("write");
    if broken {
        std::fs::write(
            dir.path().join("patches/0002-bad.patch"),
            "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-three\n+3\n",
        )
        .expect("write");
    }
    git(&["add", "."]);
    git(&["commit", "-qm", "init"]);
    dir
}

/// PATH with the built binary's folder first (as an installed binary would be).
fn path_with_binary() -> std::ffi::OsString {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_apply-patch"));
    let dir = bin.parent().expect("the binary has a folder").to_path_buf();
    let mut paths = vec![dir];
    paths.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(paths).expect("a joinable PATH")
}

#[test]
fn system_hook_runs_the_installed_binary_as_pre_commit_does() {
    if Command::new("git").arg("--version").output().is_err() {
        eprintln!("git is not installed: hook test skipped");
        return;
    }
    let hooks = hooks();
    let rust = hooks
        .iter()
        .find(|(id, _)| id == "apply-patch-check-patches");
    let system = hooks
        .iter()
        .find(|(id, _)| id == "apply-patch-check-patches-system");
    let (Some((_, rust)), Some((_, system))) = (rust, system) else {
        panic!("both hooks are defined: {hooks:?}");
    };
    assert_eq!(field(rust, "language"), "rust");
    assert_eq!(field(system, "language"), "system");
    assert_eq!(field(system, "entry"), field(rust, "entry"));
    assert_eq!(field(system, "pass_filenames"), "false");
    // pre-commit splits the entry into words, appends the configured args, and runs it in
    // the repository's top folder.
    for (broken, status) in [(false, 0), (true, 1)] {
        let repo = repo_with_patches(broken);
        let mut words = field(system, "entry").split_whitespace();
        let out = Command::new(words.next().expect("an entry"))
            .args(words)
            .arg("patches/")
            .current_dir(repo.path())
            .env("PATH", path_with_binary())
            .output()
            .expect("the entry runs from PATH");
        assert_eq!(
            out.status.code(),
            Some(status),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
}

/// The pre-commit framework itself, installed into a temporary venv; skipped with a message
/// when Python or PyPI is not reachable.
#[test]
fn pre_commit_framework_runs_the_system_hook() {
    let venv = tempfile::tempdir().expect("temp dir");
    let made = Command::new("python3")
        .args(["-m", "venv"])
        .arg(venv.path())
        .status()
        .is_ok_and(|s| s.success());
    let pip = venv.path().join("bin/pip");
    let installed = made
        && Command::new(&pip)
            .args(["install", "-q", "--timeout", "20", "pre-commit"])
            .status()
            .is_ok_and(|s| s.success());
    if !installed {
        eprintln!(
            "pre-commit could not be installed (no python3 venv or PyPI unreachable): skipped"
        );
        return;
    }
    let pre_commit = venv.path().join("bin/pre-commit");
    for (broken, ok) in [(false, true), (true, false)] {
        let repo = repo_with_patches(broken);
        let out = Command::new(&pre_commit)
            // This repository's own hooks file, as a user's config would name it; with no
            // args, check-patches searches the whole root for patches.
            .arg("try-repo")
            .arg(env!("CARGO_MANIFEST_DIR"))
            .args(["apply-patch-check-patches-system", "--all-files"])
            .current_dir(repo.path())
            .env("PATH", path_with_binary())
            .env("PRE_COMMIT_HOME", venv.path().join("cache"))
            .output()
            .expect("pre-commit runs");
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.success(), ok, "{text}");
        assert!(text.contains("installed apply-patch"), "{text}");
    }
}

/// The executable is position-independent (issue 27 item 3): its own image is
/// address-randomised like the stack, the heap and the libraries, as Debian, Fedora and Ubuntu
/// require. build.rs links it at a fixed address only when asked (`APPLY_PATCH_NO_PIE=1` at
/// build time, README "Performance"); the debug build the tests run is built like the release
/// one, so this reads the binary the tests use.
#[test]
#[cfg(target_os = "linux")]
fn the_binary_is_position_independent_on_linux() {
    if option_env!("APPLY_PATCH_NO_PIE") == Some("1") {
        eprintln!("skipped: built with APPLY_PATCH_NO_PIE=1 (the fixed-address opt-in)");
        return;
    }
    let bytes = std::fs::read(env!("CARGO_BIN_EXE_apply-patch")).expect("the binary reads");
    assert_eq!(&bytes[..4], b"\x7fELF");
    // e_type, little-endian at offset 16: 2 is ET_EXEC (fixed address), 3 ET_DYN (PIE).
    let e_type = u16::from_le_bytes([bytes[16], bytes[17]]);
    assert_eq!(
        e_type, 3,
        "the executable is linked at a fixed address (ELF type {e_type}), not as a PIE"
    );
}

/// The npm package (npm/apply-patch, issue 27) mirrors the command line: every flag of an
/// apply has a JavaScript option (lib/index.js maps the option to the flag), every option is
/// typed in the hand-written lib/index.d.ts, and the package's version is the crate's. A flag
/// added to the command line without its option fails here, not in a user's agent loop.
#[test]
fn the_npm_api_has_an_option_for_every_apply_flag() {
    let npm = Path::new(env!("CARGO_MANIFEST_DIR")).join("npm/apply-patch");
    let read = |name: &str| std::fs::read_to_string(npm.join(name)).expect("the npm file reads");
    let (index, types) = (read("lib/index.js"), read("lib/index.d.ts"));
    // Flags the API sets itself (`--root`, `--json`, the patch on standard input) or that only
    // shape the human output, which the API never shows.
    const NOT_OPTIONS: [&str; 11] = [
        "root", "json", "input", "help", "version", "stat", "numstat", "summary", "apply",
        "verbose", "forward",
    ];
    let help = run(&["--help"]);
    let flags: Vec<&str> = help
        .lines()
        .filter_map(|line| {
            line.trim_start()
                .split_once("--")
                .filter(|(pre, _)| pre.is_empty() || pre.ends_with(", "))
        })
        .filter_map(|(_, rest)| {
            rest.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                .next()
        })
        .filter(|flag| !NOT_OPTIONS.contains(flag))
        .collect();
    assert!(
        flags.contains(&"rebase") && flags.contains(&"3way"),
        "{flags:?}"
    );
    // The table of lib/index.js: `const APPLY_OPTIONS = {`, then `  name: ['--flag', 'kind'],`.
    let table = index
        .split_once("const APPLY_OPTIONS = {")
        .and_then(|(_, rest)| rest.split_once("};"))
        .expect("lib/index.js has its table of options")
        .0;
    let table: Vec<(&str, &str)> = table
        .lines()
        .filter_map(|line| line.trim().split_once(": ['"))
        .filter_map(|(name, rest)| Some((name, rest.split_once('\'')?.0)))
        .collect();
    for flag in &flags {
        assert!(
            table.iter().any(|(_, f)| *f == format!("--{flag}")),
            "--{flag} has no option in npm/apply-patch/lib/index.js"
        );
    }
    for (name, flag) in &table {
        let long = flag.trim_start_matches('-');
        assert!(
            flags.contains(&long) || *flag == "-p",
            "the option {name} maps to {flag}, which `apply-patch --help` does not list"
        );
        assert!(
            types.contains(&format!("  {name}?: ")),
            "{name} is not typed in lib/index.d.ts"
        );
    }
    let package = read("package.json");
    let version = format!("\"version\": \"{}\"", env!("CARGO_PKG_VERSION"));
    assert!(
        package.contains(&version),
        "npm/apply-patch/package.json is not at {version}"
    );
}
