//! Unified-diff front end: one snapshot per fixture of tests/fixtures/parse/unified/ (the
//! parsed model, or the rendered refusal), and the real diffs of the benchmark corpus.

use std::fmt::Write as _;

use apply_patch::model::{BinaryKind, Body, LineKind, PatchSet};
use apply_patch::parse::{unified, ParseError, ParseOptions};
use apply_patch::render;

/// Options named on a first line `# options: -p N --recount --unidiff-zero`.
pub fn fixture_options(input: &[u8]) -> ParseOptions {
    let mut opts = ParseOptions::default();
    let first = input.split(|&b| b == b'\n').next().unwrap_or_default();
    let Some(rest) = std::str::from_utf8(first)
        .ok()
        .and_then(|l| l.strip_prefix("# options:"))
    else {
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

/// A parse error as the user sees it: message, the line, a caret, the hint.
pub fn render_error(e: &ParseError) -> String {
    let mut out = format!(
        "error: line {}, column {}: {}\n",
        e.line, e.column, e.message
    );
    let _ = writeln!(out, "  | {}", e.line_text);
    let _ = writeln!(out, "  | {}^", " ".repeat(e.column.saturating_sub(1)));
    if let Some(h) = &e.hint {
        let _ = writeln!(out, "hint: {h}");
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
                    assert!(!name.starts_with("error-"), "{name} must be refused");
                    // Rendering and parsing again gives the same model.
                    let again = render::to_unified(&set);
                    let reopts = ParseOptions { strip: None, ..opts.clone() };
                    let back = unified::parse(&again, 0, &reopts)
                        .unwrap_or_else(|e| panic!("{name}: re-rendered diff fails: {e}\n{}", String::from_utf8_lossy(&again)));
                    assert_eq!(without_lines(back.into_owned()), without_lines(set.clone().into_owned()), "{name}");
                    insta::assert_snapshot!("parse", describe(&set));
                }
                Err(e) => {
                    assert!(name.starts_with("error-"), "{name} must parse: {e}");
                    insta::assert_snapshot!("error", render_error(&e));
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
