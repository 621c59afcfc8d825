//! Unified-diff front end: one snapshot per fixture of tests/fixtures/parse/unified/ (the
//! parsed model, or the rendered refusal), and the real diffs of the benchmark corpus.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use apply_patch::model::{BinaryKind, Body, LineKind, PatchSet};
use apply_patch::parse::{unified, ParseOptions};
use apply_patch::render;

/// Options named on a line `# options: -p N --recount --unidiff-zero` among the first two
/// (after `# covers: …`, see grammar/README.md).
pub fn fixture_options(input: &[u8]) -> ParseOptions {
    let mut opts = ParseOptions::default();
    let line = input
        .split(|&b| b == b'\n')
        .take(2)
        .find_map(|l| std::str::from_utf8(l).ok()?.strip_prefix("# options:"));
    let Some(rest) = line else {
        return opts;
    };
    let mut words = rest.split_whitespace();
    while let Some(w) = words.next() {
        match w {
            "-p" => opts.strip = words.next().and_then(|n| n.parse().ok()),
            "--recount" => opts.recount = true,
            "--unidiff-zero" => opts.unidiff_zero = true,
            other => panic!("unknown fixture option {other}"),
        }
    }
    opts
}

fn bytes(b: &[u8]) -> String {
    format!("\"{}\"", b.escape_ascii())
}

/// A readable, stable text form of a parsed patch set.
pub fn describe(set: &PatchSet<'_>) -> String {
    let mut out = format!("format: {}\n", set.format.as_str());
    for (i, f) in set.files.iter().enumerate() {
        let p = |p: &Option<String>| p.clone().unwrap_or_else(|| "-".into());
        let _ = writeln!(
            out,
            "file {} (line {}): {} {} -> {}",
            i + 1,
            f.patch_line,
            f.op.as_str(),
            p(&f.old_path),
            p(&f.new_path)
        );
        let m =
            |m: Option<apply_patch::model::Mode>| m.map_or("-".into(), |m| format!("{:06o}", m.0));
        if f.old_mode.is_some() || f.new_mode.is_some() {
            let _ = writeln!(out, "  modes: {} -> {}", m(f.old_mode), m(f.new_mode));
        }
        if let Some(ids) = &f.blob_ids {
            let _ = writeln!(out, "  blob ids: {}..{}", ids.old, ids.new);
        }
        match &f.body {
            Body::Hunks(hunks) => {
                for (k, h) in hunks.iter().enumerate() {
                    let n = |v: Option<usize>| v.map_or("?".into(), |v| v.to_string());
                    let mut flags = String::new();
                    for (on, name) in [
                        (h.old_no_newline, " [old: no newline]"),
                        (h.new_no_newline, " [new: no newline]"),
                        (h.end_of_file, " [end of file]"),
                    ] {
                        if on {
                            flags.push_str(name);
                        }
                    }
                    let _ = writeln!(
                        out,
                        "  hunk {} (line {}): -{},{} +{},{}{flags}",
                        k + 1,
                        h.patch_line,
                        n(h.old_start),
                        n(h.old_count),
                        n(h.new_start),
                        n(h.new_count)
                    );
                    for l in &h.lines {
                        let c = match l.kind {
                            LineKind::Context => ' ',
                            LineKind::Delete => '-',
                            LineKind::Insert => '+',
                        };
                        let _ = writeln!(out, "    {c}{}", bytes(&l.text));
                    }
                }
            }
            Body::Binary(b) => {
                for (name, d) in [
                    ("forward", Some(&b.forward)),
                    ("reverse", b.reverse.as_ref()),
                ] {
                    if let Some(d) = d {
                        let kind = if d.kind == BinaryKind::Literal {
                            "literal"
                        } else {
                            "delta"
                        };
                        let _ = writeln!(
                            out,
                            "  binary {name}: {kind} {} bytes {}",
                            d.size,
                            bytes(&d.data[..d.data.len().min(24)])
                        );
                    }
                }
            }
            Body::BinaryWithoutData => out.push_str("  binary without data\n"),
            Body::Edits(_) => out.push_str("  edits\n"),
        }
    }
    out
}

/// The patch set without input line numbers (a re-rendered patch has other ones).
pub fn without_lines(mut s: PatchSet<'static>) -> PatchSet<'static> {
    for f in &mut s.files {
        f.patch_line = 0;
        if let Body::Hunks(hs) = &mut f.body {
            for h in hs {
                h.patch_line = 0;
            }
        }
    }
    s
}

#[test]
fn fixtures() {
    insta::with_settings!({
        snapshot_path => "../../snapshots/parse_unified",
        prepend_module_to_snapshot => false,
    }, {
        insta::glob!("../fixtures/parse/unified", "*.diff", |path| {
            let input = std::fs::read(path).expect("fixture is readable");
            let opts = fixture_options(&input);
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            match unified::parse(&input, 0, &opts) {
                Ok(set) => {
                    assert!(name.starts_with("ok_"), "{name} must be refused");
                    // Rendering and parsing again gives the same model.
                    let again = render::to_unified(&set);
                    let reopts = opts.clone().with_strip(None);
                    let back = unified::parse(&again, 0, &reopts)
                        .unwrap_or_else(|e| panic!("{name}: re-rendered diff fails: {e}\n{}", String::from_utf8_lossy(&again)));
                    assert_eq!(without_lines(back.into_owned()), without_lines(set.clone().into_owned()), "{name}");
                    insta::assert_snapshot!("parse", describe(&set));
                }
                Err(e) => {
                    assert!(name.starts_with("err_"), "{name} must parse: {e}");
                    insta::assert_snapshot!("error", e.render());
                }
            }
        });
    });
}

/// The real diffs of the benchmark corpus (env APPLY_PATCH_REAL_BENCH).
#[test]
fn real_diffs_parse() {
    let Some(dir) = std::env::var_os("APPLY_PATCH_REAL_BENCH") else {
        eprintln!("skipping: APPLY_PATCH_REAL_BENCH is not set");
        return;
    };
    let dir = std::path::PathBuf::from(dir);
    let mut checked = 0;
    for name in ["fd-v8.7.1--v9.0.0.diff", "fd-v8.7.1--v9.0.0.M.diff"] {
        let Ok(input) = std::fs::read(dir.join(name)) else {
            eprintln!("skipping {name}: not found in {}", dir.display());
            continue;
        };
        let set = unified::parse(&input, 0, &ParseOptions::default())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let hunks: usize = set.files.iter().map(|f| f.body.hunks().len()).sum();
        assert_eq!((set.files.len(), hunks), (20, 97), "{name}");
        // Rendered again (section text after `@@ … @@` is not kept), it reads the same.
        let again = render::to_unified(&set);
        let back = unified::parse(&again, 0, &ParseOptions::default())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(
            without_lines(back.into_owned()) == without_lines(set.clone().into_owned()),
            "{name}: the re-rendered diff reads differently"
        );
        checked += 1;
    }
    if checked == 0 {
        eprintln!("skipping: no real diffs found");
    }
}

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Production names of grammar/unified.ebnf (`name = …` at the start of a line, outside
/// comments), as grammar/README.md defines them.
fn productions() -> BTreeSet<String> {
    let text = std::fs::read_to_string(repo().join("grammar/unified.ebnf")).expect("grammar");
    let mut out = BTreeSet::new();
    let mut depth = 0usize;
    for line in text.lines() {
        let outside = depth == 0;
        depth += line.matches("(*").count();
        depth = depth.saturating_sub(line.matches("*)").count());
        let Some((name, _)) = line
            .split_once('=')
            .filter(|_| outside && !line.starts_with(' '))
        else {
            continue;
        };
        let name = name.trim();
        if !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        {
            out.insert(name.to_string());
        }
    }
    out
}

/// `/// grammar: NAME` tags of the unified front end's sources.
fn tags() -> Vec<String> {
    let parse = repo().join("src/parse");
    let mut files: Vec<PathBuf> = vec![parse.join("binary.rs"), parse.join("quoted.rs")];
    let mut sub: Vec<PathBuf> = std::fs::read_dir(parse.join("unified"))
        .expect("src/parse/unified")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .collect();
    sub.sort();
    files.extend(sub);
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).expect("source");
        out.extend(
            text.lines()
                .filter_map(|l| l.trim().strip_prefix("/// grammar: "))
                .map(|n| n.trim().to_string()),
        );
    }
    out
}

#[test]
fn every_unified_production_has_one_parser_function_and_a_fixture() {
    let productions = productions();
    assert!(productions.len() > 30, "grammar parsed: {productions:?}");
    crate::util::assert_productions_tagged(&productions, &tags());
    let mut covered = BTreeSet::new();
    for entry in std::fs::read_dir(repo().join("tests/fixtures/parse/unified"))
        .expect("fixtures")
        .flatten()
    {
        let bytes = std::fs::read(entry.path()).expect("fixture");
        let first = bytes.split(|&b| b == b'\n').next().unwrap_or_default();
        let text = String::from_utf8_lossy(first);
        let list = text
            .strip_prefix("# covers:")
            .unwrap_or_else(|| panic!("{}: no '# covers:' line", entry.path().display()));
        for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            assert!(
                productions.contains(name),
                "{}: covers unknown production `{name}`",
                entry.path().display()
            );
            covered.insert(name.to_string());
        }
    }
    let uncovered: Vec<_> = productions.difference(&covered).collect();
    assert!(
        uncovered.is_empty(),
        "productions without a fixture: {uncovered:?}"
    );
}

/// Diffs made by git itself (when `git` is installed): every construct parses to what was
/// done, and the rendered diff is one git accepts.
// Unix only: builds its diff with the git CLI (absent under Wine) and a Unix symlink.
#[test]
#[cfg(unix)]
fn real_git_diffs_parse_and_render_for_git() {
    let Ok(dir) = tempfile::tempdir() else {
        return;
    };
    let root = dir.path();
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "-c",
                "core.quotePath=true",
            ])
            .args(args)
            .current_dir(root)
            .output()
    };
    if !git(&["init", "-q"]).is_ok_and(|o| o.status.success()) {
        eprintln!("skipping: git is not available");
        return;
    }
    let write = |p: &str, b: &[u8]| {
        let path = root.join(p);
        std::fs::create_dir_all(path.parent().expect("has a parent")).expect("mkdir");
        std::fs::write(path, b).expect("write");
    };
    let body: String = (1..=30).map(|i| format!("line {i}\n")).collect();
    write("keep.txt", body.as_bytes());
    write("old name.txt", body.as_bytes());
    write("gone.txt", b"bye\n");
    write("caf\u{e9}.txt", b"x\n");
    write("run.sh", b"#!/bin/sh\n");
    write("img.bin", &[0, 1, 2, 3, 4, 5]);
    git(&["add", "-A"]).expect("add");
    git(&["commit", "-qm", "a"]).expect("commit");
    write(
        "keep.txt",
        body.replace("line 3\n", "LINE 3\n")
            .replace("line 28\n", "")
            .as_bytes(),
    );
    std::fs::rename(root.join("old name.txt"), root.join("new name.txt")).expect("rename");
    std::fs::remove_file(root.join("gone.txt")).expect("rm");
    write("caf\u{e9}.txt", b"x\ny");
    write("new/dir/added.txt", b"fresh\n");
    write("img.bin", &[0, 1, 2, 9, 4, 5, 6]);
    std::os::unix::fs::symlink("keep.txt", root.join("link")).expect("symlink");
    git(&["add", "-A"]).expect("add");
    git(&["update-index", "--chmod=+x", "run.sh"]).expect("chmod");
    let out = git(&["diff", "--cached", "-M", "--binary"]).expect("diff");
    let set = unified::parse(&out.stdout, 0, &ParseOptions::default())
        .unwrap_or_else(|e| panic!("{}\n{}", e.render(), String::from_utf8_lossy(&out.stdout)));
    let mut ops: Vec<String> = set
        .files
        .iter()
        .map(|f| format!("{} {}", f.op.as_str(), f.path()))
        .collect();
    ops.sort();
    assert_eq!(
        ops,
        vec![
            "add link",
            "add new/dir/added.txt",
            "delete gone.txt",
            "mode run.sh",
            "modify café.txt",
            "modify img.bin",
            "modify keep.txt",
            "rename new name.txt",
        ]
    );
    let link = set.files.iter().find(|f| f.path() == "link").expect("link");
    assert_eq!(link.new_mode, Some(apply_patch::model::Mode::SYMLINK));
    // git takes our rendering of its diff back (reversed: the index holds the new side).
    let rendered = render::to_unified(&set);
    std::fs::write(root.join("rendered.diff"), &rendered).expect("write");
    let check = git(&["apply", "--cached", "--check", "-R", "rendered.diff"]).expect("git apply");
    assert!(
        check.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&check.stderr),
        String::from_utf8_lossy(&rendered)
    );
}

/// `render::file_diff` output is a diff `git apply` turns the old content into the new with.
#[test]
fn file_diff_applies_with_git() {
    let cases: [(&[u8], &[u8]); 5] = [
        (b"a\nb\nc\n", b"a\nB\nc\n"),
        (b"a\nb", b"a\nb\n"),
        (b"one\r\ntwo\r\n", b"one\r\n2\r\nthree\r\n"),
        (b"", b"new\n"),
        (
            b"x\n1\n2\n3\n4\n5\n6\n7\n8\n9\ny\n",
            b"X\n1\n2\n3\n4\n5\n6\n7\n8\n9\nY",
        ),
    ];
    for (k, (old, new)) in cases.iter().enumerate() {
        let Ok(dir) = tempfile::tempdir() else {
            return;
        };
        std::fs::write(dir.path().join("f.txt"), old).expect("write");
        let diff = render::file_diff(Some("f.txt"), Some("f.txt"), old, new);
        std::fs::write(dir.path().join("d.diff"), &diff).expect("write");
        let Ok(out) = std::process::Command::new("git")
            .args(["apply", "d.diff"])
            .current_dir(dir.path())
            .output()
        else {
            eprintln!("skipping: git is not available");
            return;
        };
        assert!(
            out.status.success(),
            "case {k}: {}\n{diff}",
            String::from_utf8_lossy(&out.stderr)
        );
        let got = std::fs::read(dir.path().join("f.txt")).expect("read");
        assert_eq!(&got, new, "case {k}\n{diff}");
    }
}
