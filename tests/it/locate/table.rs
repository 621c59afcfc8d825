//! The table-driven tester: every case runs at every level of the ladder. The file is
//! disguised so that it only matches at level L (trailing blanks; a tab before and a blank
//! after; a zero-width space after the tab), and in LF, CRLF and BOM files. Context lines must
//! come back disguised (the file's own text), inserted lines as the patch gives them, re-based
//! to the file's tab at levels 3 and 4.

use apply_patch::locate::{Level, LocateError, LocateOptions};
use apply_patch::Format;

use super::{hunk, run};

enum Expect {
    /// The result's lines; a leading `+` marks a line the patch inserted (re-based after a
    /// level-3/4 match), `*` one a pure insertion wrote (never re-based).
    Ok(&'static str),
    /// A refusal, at every level.
    Err(&'static str),
}

struct Case {
    name: &'static str,
    file: &'static str,
    hunks: &'static [&'static str],
    format: Format,
    expect: Expect,
    /// The rule under test only exists at level 1 (already applied, hint accepted at once).
    exact_only: bool,
}

const fn case(
    name: &'static str,
    file: &'static str,
    hunks: &'static [&'static str],
    expect: Expect,
) -> Case {
    Case {
        name,
        file,
        hunks,
        format: Format::Agent,
        expect,
        exact_only: false,
    }
}

const fn unified(mut c: Case) -> Case {
    c.format = Format::Unified;
    c
}

const fn exact_only(mut c: Case) -> Case {
    c.exact_only = true;
    c
}

const CASES: &[Case] = &[
    case(
        "replace one line",
        "a\nb\nc",
        &[" a\n-b\n+B\n c"],
        Expect::Ok("a\n+B\nc"),
    ),
    case(
        "delete only",
        "a\nb\nc",
        &[" a\n-b\n c"],
        Expect::Ok("a\nc"),
    ),
    case(
        "insert between",
        "a\nb",
        &[" a\n+x\n b"],
        Expect::Ok("a\n+x\nb"),
    ),
    case(
        "no hint: unique in file",
        "x\na\ny\nb",
        &[" y\n-b\n+c"],
        Expect::Ok("x\na\ny\n+c"),
    ),
    case(
        "no hint: never the first from the top",
        "k\nb\nk\nb",
        &["-k\n+K"],
        Expect::Err("ambiguous_match"),
    ),
    case(
        "not found",
        "a\nb\nc",
        &[" a\n-q\n+r"],
        Expect::Err("context_not_found"),
    ),
    case(
        "second hunk: two in the window",
        "s\nk\nf\nk",
        &["-s\n+S", "-k\n+K"],
        Expect::Err("ambiguous_match"),
    ),
    // "The line after the previous hunk" opens no window (SPEC §5 "Trust in line numbers").
    case(
        "second hunk: no window after the first",
        "s\nk\nf\nf\nf\nf\nf\nf\nf\nf\nf\nf\nf\nf\nf\nf\nf\nf\nf\nf\nf\nf\nf\nf\nf\nk",
        &["-s\n+S", "-k\n+K"],
        Expect::Err("ambiguous_match"),
    ),
    case(
        "second hunk: written numbers open a window",
        "s\nk\nf\nf\nf\nf\nf\nf\nf\nf\nf\nf\nf\nf\nf\nf\nf\nf\nf\nf\nf\nf\nf\nf\nf\nk",
        &["-s\n+S", "@@ -3\n-k\n+K"],
        Expect::Ok(
            "+S\n+K\nf\nf\nf\nf\nf\nf\nf\nf\nf\nf\nf\nf\nf\nf\nf\nf\nf\nf\nf\nf\nf\nf\nf\nk",
        ),
    ),
    case(
        "anchor then method",
        "class A\ndef f\nx\nclass B\ndef f\nx",
        &["@@ class B\n@@ def f\n-x\n+y"],
        Expect::Ok("class A\ndef f\nx\nclass B\ndef f\n+y"),
    ),
    case(
        "anchor not found",
        "a\nb",
        &["@@ nope\n-b\n+c"],
        Expect::Err("context_not_found"),
    ),
    case(
        "anchor ambiguous",
        "h\nx\nh\ny",
        &["@@ h\n-y\n+z"],
        Expect::Err("ambiguous_match"),
    ),
    case(
        "insertion after anchor",
        "a\nb\nc",
        &["@@ b\n+x"],
        Expect::Ok("a\nb\n*x\nc"),
    ),
    case(
        "insertion at the end",
        "a\nb",
        &["+x"],
        Expect::Ok("a\nb\n*x"),
    ),
    case(
        "end of file pins",
        "x\ny\nx",
        &["-x\n+z\n*** End of File"],
        Expect::Ok("x\ny\n+z"),
    ),
    case(
        "end of file mismatch",
        "x\ny\nz",
        &["-x\n+w\n*** End of File"],
        Expect::Err("context_not_found"),
    ),
    case(
        "shared context",
        "a\nb\nc\nd\ne",
        &[" a\n-b\n+B\n c\n d", " c\n d\n-e\n+E"],
        Expect::Ok("a\n+B\nc\nd\n+E"),
    ),
    case(
        "shared deleted line",
        "a\nb\nc",
        &[" a\n-b", "-b\n c"],
        Expect::Err("overlapping_hunks"),
    ),
    // (Agent hunks: a unified hunk without context is the diff of an empty file.)
    case(
        "insertions at one point keep order",
        "a\nb",
        &["@@ -1,0\n+1", "@@ -1,0\n+2"],
        Expect::Ok("a\n*1\n*2\nb"),
    ),
    exact_only(unified(case(
        "unified hint and drift",
        "p\nq\nx\nr\np\nq\nx\nr\np\nq\nx\nr",
        &["@@ -6,3\n q\n-x\n+X\n r", "@@ -10,3\n q\n-x\n+Y\n r"],
        Expect::Ok("p\nq\nx\nr\np\nq\n+X\nr\np\nq\n+Y\nr"),
    ))),
    exact_only(unified(case(
        "exact hint accepted at once",
        "x\nx\nx",
        &["@@ -2,2\n-x\n+y\n x"],
        Expect::Ok("x\n+y\nx"),
    ))),
    exact_only(case(
        "already applied",
        "a\nB\nc",
        &[" a\n-b\n+B\n c"],
        Expect::Ok("a\nB\nc"),
    )),
    exact_only(case(
        "pure insertion already there",
        "a\nx\nb",
        &["@@ a\n+x"],
        Expect::Ok("a\nx\nb"),
    )),
];

/// Disguise a file line so that it matches its original only from `level` on.
fn disguise(line: &str, level: Level) -> String {
    match level {
        Level::Exact => line.to_string(),
        Level::TrailingWhitespace => format!("{line} \t"),
        Level::Whitespace => format!("\t{line} "),
        Level::Unicode => format!("\t\u{200B}{line} "),
        other => panic!("the table has no variant of {other:?} yet"),
    }
}

/// An inserted line as it must be written after a match at `level`.
fn rebased(line: &str, level: Level) -> String {
    if level >= Level::Whitespace && !line.is_empty() {
        format!("\t{line}")
    } else {
        line.to_string()
    }
}

fn expected_lines(lines: &str, level: Level) -> Vec<String> {
    lines
        .split('\n')
        .map(|l| match (l.strip_prefix('+'), l.strip_prefix('*')) {
            (Some(ins), _) => rebased(ins, level),
            (_, Some(ins)) => ins.to_string(),
            _ => disguise(l, level),
        })
        .collect()
}

fn join(lines: &[String], ending: &str, bom: bool) -> Vec<u8> {
    let mut out = if bom {
        b"\xEF\xBB\xBF".to_vec()
    } else {
        Vec::new()
    };
    for l in lines {
        out.extend_from_slice(l.as_bytes());
        out.extend_from_slice(ending.as_bytes());
    }
    out
}

fn code(err: &LocateError) -> &'static str {
    err.code().as_str()
}

#[test]
fn every_case_at_every_level() {
    let mut failures = Vec::new();
    for c in CASES {
        let levels: &[Level] = if c.exact_only {
            &Level::ALL[..1]
        } else {
            &Level::ALL
        };
        for &level in levels {
            for (ending, bom) in [("\n", false), ("\r\n", false), ("\n", true)] {
                let file: Vec<String> = c.file.split('\n').map(|l| disguise(l, level)).collect();
                let hunks: Vec<_> = c.hunks.iter().map(|s| hunk(s)).collect();
                let got = run(
                    &join(&file, ending, bom),
                    &hunks,
                    c.format,
                    &LocateOptions::default(),
                );
                let label = format!("{} at {} ({ending:?}, bom {bom})", c.name, level.as_str());
                match (&c.expect, got) {
                    (Expect::Ok(want), Ok((bytes, placed))) => {
                        let want = join(&expected_lines(want, level), ending, bom);
                        if bytes != want {
                            failures.push(format!(
                                "{label}: got {:?}, want {:?}",
                                String::from_utf8_lossy(&bytes),
                                String::from_utf8_lossy(&want)
                            ));
                        }
                        let top = placed
                            .iter()
                            .filter(|p| p.old_len > 0)
                            .map(|p| p.level)
                            .max();
                        if top.is_some_and(|t| t != level) {
                            failures.push(format!("{label}: matched at {top:?}"));
                        }
                    }
                    (Expect::Err(want), Err(e)) if code(&e) == *want => {}
                    (Expect::Ok(_), Err(e)) => failures.push(format!("{label}: refused: {e}")),
                    (Expect::Err(want), Ok((bytes, _))) => failures.push(format!(
                        "{label}: want {want}, got {:?}",
                        String::from_utf8_lossy(&bytes)
                    )),
                    (Expect::Err(want), Err(e)) => {
                        failures.push(format!("{label}: want {want}, got {}", code(&e)))
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Every case refused as `ambiguous_match`, at every level it runs at (LF files): a name, the
/// disguised file, the hunks and their format — the fixtures whose candidates `hints` resends.
pub(super) fn ambiguous_cases() -> Vec<(String, Vec<u8>, &'static [&'static str], Format)> {
    let mut out = Vec::new();
    for c in CASES {
        if !matches!(c.expect, Expect::Err("ambiguous_match")) {
            continue;
        }
        let levels = if c.exact_only {
            &Level::ALL[..1]
        } else {
            &Level::ALL[..]
        };
        for &level in levels {
            let file: Vec<String> = c.file.split('\n').map(|l| disguise(l, level)).collect();
            let name = format!("{} at {}", c.name, level.as_str());
            out.push((name, join(&file, "\n", false), c.hunks, c.format));
        }
    }
    out
}
