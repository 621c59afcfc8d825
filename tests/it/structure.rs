//! Structure signals from the outside: this repository's own files and the real-change
//! bench must balance, generated programs balance until one bracket goes, and the fixture
//! folder's ranges and balance are snapshotted.

use apply_patch::structure::{
    check_balance, range, Balance, FileBalance, Kind, Lang, Problem, ProblemKind,
};
use proptest::prelude::*;
use std::path::{Path, PathBuf};

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            walk(&path, out);
        } else {
            out.push(path);
        }
    }
}

/// Every file of a known language under `dir` that is not balanced, with its problem.
fn unbalanced_under(dir: &Path, keep: impl Fn(&Path) -> bool) -> (usize, Vec<String>) {
    let mut files = Vec::new();
    walk(dir, &mut files);
    let mut checked = 0;
    let mut bad = Vec::new();
    for path in files.into_iter().filter(|p| keep(p)) {
        let lang = Lang::from_path(&path);
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        if lang == Lang::Unknown {
            continue;
        }
        checked += 1;
        if let Balance::Unbalanced { problem } = check_balance(&text, lang) {
            bad.push(format!("{}: {problem}", path.display()));
        }
    }
    (checked, bad)
}

#[test]
fn this_repository_sources_and_examples_balance() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (checked, bad) = unbalanced_under(&root.join("src"), |p| {
        p.extension().is_some_and(|e| e == "rs")
    });
    assert!(checked > 20, "only {checked} source files found");
    assert!(bad.is_empty(), "unbalanced sources:\n{}", bad.join("\n"));
    let (_, bad) = unbalanced_under(&root.join("examples"), |_| true);
    assert!(bad.is_empty(), "unbalanced examples:\n{}", bad.join("\n"));
}

#[test]
fn real_bench_files_balance_before_and_after() {
    let Some(dir) = std::env::var_os("APPLY_PATCH_REAL_BENCH") else {
        println!("skipped: APPLY_PATCH_REAL_BENCH is not set");
        return;
    };
    let dir = PathBuf::from(dir);
    if !dir.is_dir() {
        println!("skipped: {} is not a directory", dir.display());
        return;
    }
    let (checked, bad) = unbalanced_under(&dir, |_| true);
    println!("{checked} real files checked");
    assert!(bad.is_empty(), "unbalanced real files:\n{}", bad.join("\n"));
}

/// A program of a small grammar: nested groups, strings, chars, lifetimes, comments.
#[derive(Debug, Clone)]
enum Node {
    Group(u8, Vec<Node>),
    Str(String),
    LineComment(String),
    BlockComment(String),
    Word(String),
    /// A char literal (`'('`) or a lifetime (`'a`) (Rust), a regular expression (JavaScript).
    Quote(String),
    /// A JavaScript template literal whose `${…}` holds code.
    Template(Vec<Node>),
}

fn noise() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop::sample::select(vec![
            "a", " ", "(", ")", "[", "]", "{", "}", "'", "\"", "/", "#", "//", "x y", "`", "<",
        ]),
        0..8,
    )
    .prop_map(|parts| parts.concat())
}

fn leaf(js: bool) -> BoxedStrategy<Node> {
    let quotes: Vec<&str> = if js {
        vec!["= /[(]\"/g", "= /\\/{/", "= /a]b/i", "'(\\''", "'}'"]
    } else {
        vec!["'('", "'\\''", "'a", "'static", "'}'", "b'['"]
    };
    prop_oneof![
        noise().prop_map(|s| Node::Str(s.replace('\\', "").replace('"', "\\\""))),
        noise().prop_map(Node::LineComment),
        noise().prop_map(|s| Node::BlockComment(s.replace('/', "-"))),
        prop::sample::select(vec!["a", "fn", "x1", "r", "b", "_"])
            .prop_map(|w| Node::Word(w.into())),
        prop::sample::select(quotes).prop_map(|q| Node::Quote(q.into())),
    ]
    .boxed()
}

/// Programs of the grammar; with `js`, JavaScript flavoured (regexes, templates).
fn node(js: bool) -> impl Strategy<Value = Node> {
    leaf(js).prop_recursive(5, 80, 6, move |inner| {
        let group = (
            prop::sample::select(vec![b'(', b'[', b'{']),
            prop::collection::vec(inner.clone(), 0..6),
        )
            .prop_map(|(b, children)| Node::Group(b, children));
        if js {
            prop_oneof![
                3 => group,
                1 => prop::collection::vec(inner, 0..4).prop_map(Node::Template),
            ]
            .boxed()
        } else {
            group.boxed()
        }
    })
}

fn closer(open: u8) -> u8 {
    match open {
        b'(' => b')',
        b'[' => b']',
        _ => b'}',
    }
}

/// Render nodes as text, recording the offsets of each bracket pair that may be deleted.
/// `in_template`: the nodes sit right inside `${…}` (or inside `{` groups that do), where
/// deleting a `{` would let its partner end the `${` — a different program that may well
/// balance — so those pairs are not recorded.
fn render(nodes: &[Node], out: &mut String, pairs: &mut Vec<(usize, usize)>, in_template: bool) {
    for node in nodes {
        match node {
            Node::Group(b, children) => {
                let open = out.len();
                out.push(char::from(*b));
                // Under `${`, a chain of `{` groups shifts as a whole when one goes.
                let chain = in_template && *b == b'{';
                render(children, out, pairs, chain);
                if !chain {
                    pairs.push((open, out.len()));
                }
                out.push(char::from(closer(*b)));
            }
            Node::Str(s) => out.push_str(&format!("\"{s}\"")),
            Node::LineComment(s) => out.push_str(&format!("//{s}\n")),
            Node::BlockComment(s) => out.push_str(&format!("/*{s}*/")),
            Node::Word(w) => out.push_str(w),
            Node::Quote(q) => out.push_str(q),
            Node::Template(children) => {
                // The `${…}` braces delimit the template's code: not brackets to delete.
                out.push_str("`a ( ${ ");
                render(children, out, pairs, true);
                out.push_str("} ' `");
            }
        }
        out.push(' ');
    }
}

/// Byte offset of a problem's position (the text is ASCII).
fn offset(text: &str, line: usize, column: usize) -> usize {
    let start: usize = text.split('\n').take(line - 1).map(|l| l.len() + 1).sum();
    start + column - 1
}

fn problem_of(text: &str, lang: Lang) -> Problem {
    match check_balance(text, lang) {
        Balance::Unbalanced { problem } => problem,
        other => panic!("expected a problem in {text:?}, got {other:?}"),
    }
}

/// The grammar's programs balance; without one bracket outside strings and comments they do
/// not, and the problem points at that bracket's partner (or at a same-kind bracket further
/// out, or the end of the file).
fn check_program(
    nodes: &[Node],
    lang: Lang,
    pick: prop::sample::Index,
    delete_open: bool,
) -> Result<(), TestCaseError> {
    let mut text = String::new();
    let mut pairs = Vec::new();
    render(nodes, &mut text, &mut pairs, false);
    prop_assert_eq!(check_balance(&text, lang), Balance::Balanced, "{}", text);
    if pairs.is_empty() {
        return Ok(());
    }
    let (open, close) = pairs[pick.index(pairs.len())];
    let bytes = text.as_bytes();
    let (open_char, close_char) = (char::from(bytes[open]), char::from(bytes[close]));
    let mut broken = text.clone();
    if delete_open {
        broken.remove(open);
        let p = problem_of(&broken, lang);
        let at = offset(&broken, p.line, p.column);
        prop_assert!(
            p.kind != ProblemKind::Unclosed || at == broken.len(),
            "{:?} in {}",
            p,
            broken
        );
        if p.kind != ProblemKind::Unclosed {
            prop_assert_eq!(&p.found, &close_char.to_string(), "{}", broken);
            prop_assert!(
                at >= close - 1,
                "{:?} before the partner at {} in {}",
                p,
                close - 1,
                broken
            );
        }
    } else {
        broken.remove(close);
        let p = problem_of(&broken, lang);
        let at = offset(&broken, p.line, p.column);
        let opened = p
            .open
            .as_ref()
            .map(|o| (o.text.clone(), offset(&broken, o.line, o.column)));
        let eof = p.kind == ProblemKind::Unclosed && at == broken.len();
        let partner = opened
            .as_ref()
            .is_some_and(|(t, o)| *t == open_char.to_string() && *o <= open);
        prop_assert!(eof || partner, "{:?} in {}", p, broken);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn generated_programs_balance_and_break_where_a_bracket_goes(
        nodes in prop::collection::vec(node(false), 1..6),
        pick in any::<prop::sample::Index>(),
        delete_open in any::<bool>(),
    ) {
        check_program(&nodes, Lang::Rust, pick, delete_open)?;
    }

    #[test]
    fn generated_javascript_balances_and_breaks_where_a_bracket_goes(
        nodes in prop::collection::vec(node(true), 1..6),
        pick in any::<prop::sample::Index>(),
        delete_open in any::<bool>(),
    ) {
        check_program(&nodes, Lang::JavaScript, pick, delete_open)?;
    }
}

/// The balance and, for every line, the enclosing range of a fixture file.
fn describe(path: &Path) -> String {
    let text = std::fs::read_to_string(path).expect("fixtures are UTF-8 text");
    let lang = Lang::from_path(path);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut out = FileBalance::new(name, lang, check_balance(&text, lang)).render();
    let kinds: &[Option<Kind>] = match lang {
        Lang::Html | Lang::Xml | Lang::Vue | Lang::Jsx | Lang::Tsx => &[None, Some(Kind::Tag)],
        _ => &[None],
    };
    for (i, line) in text.lines().enumerate() {
        let cells: Vec<String> = kinds
            .iter()
            .map(|&kind| match range(&text, i + 1, kind, lang) {
                Ok(r) => format!("{}-{} {}", r.start_line, r.end_line, r.kind),
                Err(_) => "-".to_string(),
            })
            .collect();
        out.push_str(&format!(
            "{:>3} {:<24} | {}\n",
            i + 1,
            cells.join("  "),
            line
        ));
    }
    out
}

#[test]
fn fixture_ranges_and_balance() {
    insta::with_settings!({
        snapshot_path => "../../snapshots/structure",
        prepend_module_to_snapshot => false,
    }, {
        insta::glob!("../fixtures/structure", "*.*", |path| {
            insta::assert_snapshot!("structure", describe(path));
        });
    });
}

fn any_lang() -> impl Strategy<Value = Lang> {
    prop::sample::select(
        Lang::names()
            .into_iter()
            .filter_map(Lang::from_name)
            .chain([Lang::Unknown])
            .collect::<Vec<_>>(),
    )
}

/// Text made of the pieces lexers care about, in any order.
fn soup() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop::sample::select(vec![
            "(", ")", "[", "]", "{", "}", "<", ">", "</", "/>", "\"", "'", "`", "${", "/", "*",
            "#", "\\", "\n", " ", "    ", "-", ":", "|", "a", "fn", "def", "<div>", "</div>",
            "<!--", "-->", "r#\"", "\"\"\"", "<<EOF", "EOF", "case", "esac", "@", "$", "é", "\r",
        ]),
        0..60,
    )
    .prop_map(|parts| parts.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    /// No input makes the lexers, the matcher or the range finder panic.
    #[test]
    fn any_text_in_any_language_is_handled(text in soup(), lang in any_lang(), line in 1usize..30) {
        let _ = check_balance(&text, lang);
        for kind in [None, Some(Kind::Function), Some(Kind::Block), Some(Kind::Tag)] {
            if let Ok(r) = range(&text, line, kind, lang) {
                prop_assert!(r.start_line <= line && line <= r.end_line, "{:?}", r);
            }
        }
        let _ = apply_patch::structure::edit_balance("a.rs", b"", text.as_bytes());
    }
}

/// Assert a snapshot under `snapshots/structure/`.
fn snapshot(name: &str, text: String) {
    insta::with_settings!({
        snapshot_path => "../../snapshots/structure",
        prepend_module_to_snapshot => false,
    }, {
        insta::assert_snapshot!(name, text);
    });
}

mod cli {
    use super::snapshot;
    use crate::util::TempTree;

    const LIB: &str = "fn parse(input: &str) -> Result<u32, Error> {\n    let n = input\n        .trim()\n        .parse()?;\n    Ok(n)\n}\n";
    const BROKEN: &str = "fn parse(input: &str) -> Result<u32, Error> {\n    let n = input\n        .trim()\n        .parse()?;\n    Ok(n\n}\n";

    fn tree() -> TempTree {
        TempTree::with(&[
            ("src/lib.rs", LIB),
            ("src/broken.rs", BROKEN),
            ("notes.txt", "{\n"),
            ("page.html", "<ul>\n  <li>one\n  <li>two\n</ul>\n"),
        ])
    }

    #[test]
    fn range_prints_the_enclosing_function() {
        let t = tree();
        let out = t.run(&["range", "src/lib.rs", "--line", "3"], "");
        assert_eq!(out.status, 0, "{}", out.stderr);
        snapshot("cli_range", out.normalized());
        let out = t.run(&["range", "page.html", "--line", "3", "--json"], "");
        assert_eq!(out.status, 0, "{}", out.stderr);
        snapshot("cli_range_json", out.normalized());
        let out = t.run(
            &["range", "notes.txt", "--line", "1", "--kind", "block"],
            "",
        );
        assert_eq!(out.status, 1, "no block encloses line 1: {}", out.stdout);
        snapshot("cli_range_not_found", out.normalized());
    }

    #[test]
    fn range_usage_errors_exit_2() {
        let t = tree();
        for args in [
            &["range", "src/lib.rs", "--line", "0"][..],
            &["range", "src/lib.rs", "--line", "99"],
            &["range", "src/lib.rs", "--line", "2", "--lang", "klingon"],
            &["range", "src/lib.rs", "--line", "2", "--kind", "class"],
            &["range", "src/lib.rs"],
            &["range", "missing.rs", "--line", "1"],
        ] {
            let out = t.run(args, "");
            assert_eq!(out.status, 2, "{args:?}: {}", out.normalized());
        }
        let out = t.run(&["range", "src/lib.rs", "--line", "99", "--json"], "");
        let v: serde_json::Value = serde_json::from_str(&out.stdout).expect("one JSON object");
        assert_eq!(v["error"]["code"], "usage");
        assert_eq!(v["ok"], false);
    }

    #[test]
    fn check_balance_exit_status_and_output() {
        let t = tree();
        let out = t.run(&["check-balance", "src/lib.rs", "page.html"], "");
        assert_eq!(out.status, 0, "{}", out.normalized());
        let out = t.run(
            &["check-balance", "src/lib.rs", "src/broken.rs", "notes.txt"],
            "",
        );
        assert_eq!(out.status, 1);
        snapshot("cli_check_balance", out.normalized());
        let out = t.run(&["check-balance", "--json", "src/broken.rs"], "");
        assert_eq!(out.status, 1);
        snapshot("cli_check_balance_json", out.normalized());
        let out = t.run(&["check-balance", "--lang", "rust", "notes.txt"], "");
        assert_eq!(
            out.status, 1,
            "forced to Rust, `{{` is unclosed: {}",
            out.stdout
        );
        for args in [
            &["check-balance"][..],
            &["check-balance", "missing.rs"],
            &["check-balance", "--lang", "x", "a.rs"],
        ] {
            assert_eq!(t.run(args, "").status, 2, "{args:?}");
        }
    }
}

/// The balance check around every apply (Issue 7): the `unbalanced_edit` warning, the
/// `--strict-balance` refusal, and a file that was unbalanced before is not blamed — in the
/// plain, git, agent and in-memory flows.
mod apply_balance {
    use super::snapshot;
    use crate::util::TempTree;
    use apply_patch::pipeline::{apply_bytes, Mode, Options, Target};
    use apply_patch::report::Report;
    use apply_patch::tree::MemTree;

    const TWO: &str = "fn one() -> u32 {\n    1\n}\n\nfn two() -> u32 {\n    2\n}\n";
    /// Hunk 1 keeps the file balanced, hunk 2 opens a `(` it never closes.
    const BREAKS: &str = "*** Begin Patch\n*** Update File: src/two.rs\n@@\n fn one() -> u32 {\n-    1\n+    1 + 0\n }\n@@\n fn two() -> u32 {\n-    2\n+    (2\n }\n*** End Patch\n";
    const BROKEN: &str = "fn f() {\n    g(1;\n}\n\nfn h() -> u32 {\n    2\n}\n";
    /// Edits an already unbalanced Rust file and a text file the check does not know.
    const EDITS_BROKEN: &str = "*** Begin Patch\n*** Update File: src/broken.rs\n@@\n fn h() -> u32 {\n-    2\n+    3\n }\n*** Update File: notes.txt\n@@\n-(\n+((\n*** End Patch\n";

    fn tree() -> TempTree {
        TempTree::with(&[
            ("src/two.rs", TWO),
            ("src/broken.rs", BROKEN),
            ("notes.txt", "(\n"),
        ])
    }

    #[test]
    fn an_edit_that_unbalances_a_file_warns_and_names_the_hunk() {
        let t = tree();
        let out = t.run(&["-"], BREAKS);
        assert_eq!(out.status, 0, "{}", out.normalized());
        snapshot("apply_unbalanced_edit_warning", out.normalized());
        assert!(t.read_str("src/two.rs").contains("    (2\n"));
        let t = tree();
        let out = t.run(&["--json", "-"], BREAKS);
        let v = out.json();
        assert_eq!(v["ok"], true);
        let w = &v["warnings"][0];
        assert_eq!(
            (&w["code"], &w["path"], &w["hunk"]),
            (&"unbalanced_edit".into(), &"src/two.rs".into(), &2.into())
        );
        assert!(
            v["files"][0].get("balance").is_none(),
            "no note without --strict-balance: {v}"
        );
    }

    #[test]
    fn strict_balance_refuses_and_writes_nothing() {
        let t = tree();
        let before = t.snapshot();
        let out = t.run(&["--strict-balance", "-"], BREAKS);
        assert_eq!(out.status, 1, "{}", out.normalized());
        snapshot("apply_strict_balance_refused", out.normalized());
        assert_eq!(t.snapshot(), before, "a refused patch changes nothing");
        let out = t.run(&["--strict-balance", "--json", "-"], BREAKS);
        let v = out.json();
        assert_eq!(v["error"]["code"], "unbalanced_edit");
        assert_eq!(v["error"]["path"], "src/two.rs");
        assert_eq!(v["error"]["hunk"], 2);
        assert_eq!(v["files"][0]["balance"]["status"], "newly_unbalanced");
        assert_eq!(t.snapshot(), before);
    }

    #[test]
    fn an_already_unbalanced_file_is_not_blamed() {
        let t = tree();
        let out = t.run(&["-"], EDITS_BROKEN);
        assert_eq!(out.status, 0, "{}", out.normalized());
        assert_eq!(out.stderr, "", "no warning for a file broken before");
        let t = tree();
        let out = t.run(&["--strict-balance", "--json", "-"], EDITS_BROKEN);
        let v = out.json();
        assert_eq!(v["ok"], true, "{v}");
        assert!(v["warnings"].as_array().is_some_and(Vec::is_empty), "{v}");
        let broken = &v["files"][0]["balance"];
        assert_eq!(broken["status"], "already_unbalanced");
        assert_eq!(broken["problem"]["line"], 3);
        let notes = &v["files"][1]["balance"];
        assert_eq!(notes["status"], "not_checked");
        assert_eq!(notes["reason"], "unknown language (give one with --lang)");
        assert_eq!(
            t.read_str("src/broken.rs"),
            BROKEN.replace("    2\n", "    3\n")
        );
    }

    #[test]
    fn the_agent_layer_and_git_flow_check_balance_too() {
        // Agent options route through the agent layer.
        let t = tree();
        let before = t.snapshot();
        let out = t.run(
            &["--strict-balance", "--max-risk", "100", "--json", "-"],
            BREAKS,
        );
        assert_eq!(
            out.json()["error"]["code"],
            "unbalanced_edit",
            "{}",
            out.stdout
        );
        assert_eq!(t.snapshot(), before);
        // Inside a git work tree, the git flow plans (a file in a subdirectory: the guard's
        // probe for a nested repository, `src/.git`, must not read as a write into .git).
        let t = tree();
        let git = |args: &[&str]| {
            std::process::Command::new("git")
                .args(args)
                .current_dir(t.root())
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .output()
                .is_ok_and(|o| o.status.success())
        };
        if !git(&["init", "-q"]) || !git(&["add", "-A"]) {
            println!("skipped the git flow: git is not available");
            return;
        }
        let before = t.snapshot();
        let out = t.run(&["--index", "--strict-balance", "--json", "-"], BREAKS);
        assert_eq!(
            out.json()["error"]["code"],
            "unbalanced_edit",
            "{}",
            out.stdout
        );
        assert_eq!(t.snapshot(), before);
        let out = t.run(&["--index", "--json", "-"], BREAKS);
        let v = out.json();
        assert_eq!(v["ok"], true, "{v}");
        assert_eq!(v["warnings"][0]["code"], "unbalanced_edit");
    }

    #[test]
    fn in_memory_trees_are_checked() {
        let mut tree = MemTree::new();
        tree.insert("src/two.rs", TWO.as_bytes().to_vec());
        let strict = Options::builder().strict_balance(true).build();
        let report = Report::from(&apply_bytes(
            Target::Memory(&mut tree),
            BREAKS.as_bytes(),
            &strict,
            Mode::Write,
        ));
        assert_eq!(
            report.error.map(|e| e.code),
            Some(apply_patch::ErrorCode::UnbalancedEdit)
        );
        assert_eq!(tree.get("src/two.rs"), Some(TWO.as_bytes()));
        let report = Report::from(&apply_bytes(
            Target::Memory(&mut tree),
            BREAKS.as_bytes(),
            &Options::default(),
            Mode::Write,
        ));
        assert!(report.ok, "{:?}", report.error);
        let codes: Vec<_> = report
            .warnings
            .iter()
            .map(|w| (w.code.as_str(), w.hunk))
            .collect();
        assert_eq!(codes, [("unbalanced_edit", Some(2))]);
    }

    #[test]
    fn a_moved_file_is_checked_under_its_new_name() {
        let mut tree = MemTree::new();
        tree.insert("a.rs", b"fn f() {\n    g(1);\n}\n".to_vec());
        let moved = "*** Begin Patch\n*** Update File: a.rs\n*** Move to: b.rs\n@@\n-    g(1);\n+    g(1;\n*** End Patch\n";
        let report = Report::from(&apply_bytes(
            Target::Memory(&mut tree),
            moved.as_bytes(),
            &Options::default(),
            Mode::Write,
        ));
        assert!(report.ok, "{:?}", report.error);
        let w: Vec<_> = report
            .warnings
            .iter()
            .map(|w| (w.code.as_str(), w.path.as_deref(), w.hunk))
            .collect();
        assert_eq!(w, [("unbalanced_edit", Some("b.rs"), Some(1))]);
    }
}

/// `apply-patch read PATH --around N` (Issue 7): the enclosing function with `read`'s header.
mod read_around {
    use super::snapshot;
    use crate::util::TempTree;

    const LIB: &str = "use std::fmt;\n\nfn parse(input: &str) -> u32 {\n    let n = input\n        .trim();\n    n.len() as u32\n}\n\nfn other() {}\n";

    #[test]
    fn prints_the_enclosing_function_numbered_with_the_version() {
        let t = TempTree::with(&[("src/lib.rs", LIB)]);
        let out = t.run(&["read", "src/lib.rs", "--around", "5"], "");
        assert_eq!(out.status, 0, "{}", out.normalized());
        snapshot("read_around", out.normalized());
        let full = t.run(&["read", "src/lib.rs", "--json"], "").json();
        let v = t
            .run(&["read", "src/lib.rs", "--around", "5", "--json"], "")
            .json();
        assert_eq!(v["ok"], true);
        assert_eq!(v["base"], full["base"], "the same version as read");
        assert_eq!((&v["start_line"], &v["end_line"]), (&3.into(), &7.into()));
        assert_eq!(v["lines"][0], "fn parse(input: &str) -> u32 {");
        assert_eq!(v["around"]["line"], 5);
        assert_eq!(v["around"]["kind"], "function");
        assert_eq!(v["around"]["lang"], "rust");
    }

    #[test]
    fn refusals_and_usage_errors() {
        let t = TempTree::with(&[("src/lib.rs", LIB)]);
        let out = t.run(&["read", "src/lib.rs", "--around", "1"], "");
        assert_eq!(out.status, 1, "line 1 is in no function: {}", out.stdout);
        assert!(
            out.stderr
                .starts_with("error[context_not_found]: src/lib.rs: line 1"),
            "{}",
            out.stderr
        );
        let v = t
            .run(&["read", "src/lib.rs", "--around", "1", "--json"], "")
            .json();
        assert_eq!(v["error"]["code"], "context_not_found");
        for args in [
            &["read", "src/lib.rs", "--around", "0"][..],
            &["read", "src/lib.rs", "--around", "99"],
            &["read", "src/lib.rs", "--around", "3", "--lines", "1:2"],
        ] {
            assert_eq!(t.run(args, "").status, 2, "{args:?}");
        }
        assert_eq!(t.run(&["read", "gone.rs", "--around", "1"], "").status, 1);
    }
}
