//! Integration tests of the agent and JSON front ends and of format detection: fixture
//! snapshots (one file per construct, leniency and refusal), the grammar ↔ parser ↔ fixture
//! cross-check, the Codex conformance suite, and never-panic property tests.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use apply_patch::model::{Body, Edit, Hunk, LineKind, PatchSet};
use apply_patch::parse::{self, ParseOptions};
use proptest::prelude::*;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A readable, stable rendering of the model for snapshots.
fn view(set: &PatchSet<'_>) -> String {
    let mut out = format!("format: {}\n", set.format.as_str());
    if let Some(cd) = &set.cd {
        out.push_str(&format!("cd: {cd:?}\n"));
    }
    for (n, file) in set.files.iter().enumerate() {
        out.push_str(&format!(
            "file {} (patch line {}): {} {:?} -> {:?}\n",
            n + 1,
            file.patch_line,
            file.op.as_str(),
            file.old_path,
            file.new_path
        ));
        if let Some(base) = &file.base {
            out.push_str(&format!("  base: {base}\n"));
        }
        match &file.body {
            Body::Hunks(hunks) => {
                for (h, hunk) in hunks.iter().enumerate() {
                    view_hunk(&mut out, h + 1, hunk);
                }
            }
            Body::Edits(edits) => {
                for (e, edit) in edits.iter().enumerate() {
                    out.push_str(&format!("  edit {}: {}\n", e + 1, view_edit(edit)));
                }
            }
            other => out.push_str(&format!("  body: {other:?}\n")),
        }
    }
    out
}

fn view_hunk(out: &mut String, n: usize, hunk: &Hunk<'_>) {
    let anchors: Vec<String> = hunk
        .anchors
        .iter()
        .map(|a| format!("{:?}", String::from_utf8_lossy(a)))
        .collect();
    out.push_str(&format!("  hunk {n} (patch line {})", hunk.patch_line));
    if !anchors.is_empty() {
        out.push_str(&format!(" anchors [{}]", anchors.join(", ")));
    }
    if hunk.old_start.is_some() || hunk.new_start.is_some() {
        let num = |n: Option<usize>| n.map_or("_".to_string(), |n| n.to_string());
        out.push_str(&format!(
            " hint -{},{} +{},{}",
            num(hunk.old_start),
            num(hunk.old_count),
            num(hunk.new_start),
            num(hunk.new_count)
        ));
    }
    if hunk.end_of_file {
        out.push_str(" end-of-file");
    }
    if hunk.new_no_newline {
        out.push_str(" no-final-newline");
    }
    out.push('\n');
    for line in &hunk.lines {
        let mark = match line.kind {
            LineKind::Context => ' ',
            LineKind::Delete => '-',
            LineKind::Insert => '+',
        };
        out.push_str(&format!(
            "    {mark} {:?}\n",
            String::from_utf8_lossy(&line.text)
        ));
    }
}

fn view_edit(edit: &Edit<'_>) -> String {
    match edit {
        Edit::Replace { old, new, all } => format!("replace all={all} old={old:?} new={new:?}"),
        Edit::LineRange {
            start,
            end,
            expected,
            new_content,
        } => format!("line_range {start}..={end} expected={expected:?} new={new_content:?}"),
        Edit::Insert { after, content } => format!("insert after={after} content={content:?}"),
        Edit::Append { content } => format!("append content={content:?}"),
    }
}

/// The productions a fixture declares on its first line (after an optional BOM):
/// `# covers: name, name, ...`.
fn covers(bytes: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes));
    let first = text.lines().next().unwrap_or("");
    match first.strip_prefix("# covers:") {
        Some(list) => list
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect(),
        None => Vec::new(),
    }
}

/// Parse a fixture, check that its name (`ok_…` / `err_…`) agrees with the outcome, and
/// return the snapshot text: the model, or the rendered error.
fn run_fixture(path: &Path) -> String {
    let bytes = std::fs::read(path).expect("fixture is readable");
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    assert!(
        !covers(&bytes).is_empty(),
        "{name}: the first line must be `# covers: production, ...`"
    );
    match parse::parse(&bytes, &ParseOptions::default()) {
        Ok(set) => {
            assert!(name.starts_with("ok_"), "{name} parsed but should fail");
            view(&set)
        }
        Err(err) => {
            assert!(name.starts_with("err_"), "{name} failed: {}", err.render());
            let converted: apply_patch::Error = err.clone().into();
            assert_eq!(converted.code.as_str(), "parse_error");
            err.render()
        }
    }
}

#[test]
fn agent_fixtures() {
    insta::with_settings!({snapshot_path => "../../snapshots/parse", prepend_module_to_snapshot => false}, {
        insta::glob!("../fixtures/parse/agent", "*.patch", |path| {
            insta::assert_snapshot!(run_fixture(path));
        });
    });
}

#[test]
fn json_fixtures() {
    insta::with_settings!({snapshot_path => "../../snapshots/parse", prepend_module_to_snapshot => false}, {
        insta::glob!("../fixtures/parse/json", "*.json", |path| {
            insta::assert_snapshot!(run_fixture(path));
        });
    });
}

/// Production names defined in the grammar file (`name = ...` at the start of a line,
/// outside comments).
fn grammar_productions() -> BTreeSet<String> {
    let text = std::fs::read_to_string(repo().join("grammar/agent.ebnf")).expect("grammar");
    let mut out = BTreeSet::new();
    let mut depth = 0usize;
    for line in text.lines() {
        let starts_outside = depth == 0;
        depth += line.matches("(*").count();
        depth = depth.saturating_sub(line.matches("*)").count());
        if !starts_outside {
            continue;
        }
        if let Some((name, _)) = line.split_once('=') {
            let name = name.trim();
            let is_ident = !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
                && !line.starts_with(' ');
            if is_ident {
                out.insert(name.to_string());
            }
        }
    }
    out
}

/// `/// grammar: NAME` tags of the agent parser's sources (the agent front end and the
/// detection it shares; other front ends may tag their own grammars).
fn grammar_tags() -> Vec<String> {
    let parse = repo().join("src/parse");
    let mut files = vec![
        parse.join("agent.rs"),
        parse.join("detect.rs"),
        parse.join("nom_lex.rs"),
    ];
    let mut sub: Vec<PathBuf> = std::fs::read_dir(parse.join("agent"))
        .expect("src/parse/agent")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .collect();
    sub.sort();
    files.extend(sub);
    let mut tags = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("source");
        for line in text.lines() {
            if let Some(name) = line.trim().strip_prefix("/// grammar: ") {
                tags.push(name.trim().to_string());
            }
        }
    }
    tags
}

#[test]
fn every_production_has_one_parser_function_and_a_fixture() {
    let productions = grammar_productions();
    assert!(productions.len() > 30, "grammar parsed: {productions:?}");
    crate::util::assert_productions_tagged(&productions, &grammar_tags());

    let mut covered = BTreeSet::new();
    let dir = repo().join("tests/fixtures/parse/agent");
    for entry in std::fs::read_dir(dir).expect("fixtures").flatten() {
        let bytes = std::fs::read(entry.path()).expect("fixture");
        for name in covers(&bytes) {
            assert!(
                productions.contains(&name),
                "{}: covers unknown production `{name}`",
                entry.path().display()
            );
            covered.insert(name);
        }
    }
    let uncovered: Vec<_> = productions.difference(&covered).collect();
    assert!(
        uncovered.is_empty(),
        "productions without a fixture: {uncovered:?}"
    );
}

/// Upstream's scenarios that must be refused at parse time.
const CODEX_REFUSED: [&str; 3] = [
    "005_rejects_empty_patch",
    "008_rejects_empty_update_hunk",
    "013_rejects_invalid_hunk_header",
];

#[test]
fn codex_conformance_patches_parse() {
    let Some(dir) = std::env::var_os("APPLY_PATCH_CODEX_SUITE") else {
        println!("skipped: set APPLY_PATCH_CODEX_SUITE to the Codex scenario folder");
        return;
    };
    let dir = PathBuf::from(dir);
    if !dir.is_dir() {
        println!(
            "skipped: APPLY_PATCH_CODEX_SUITE={} is not a folder",
            dir.display()
        );
        return;
    }
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("suite folder")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("patch.txt").is_file())
        .collect();
    cases.sort();
    assert!(!cases.is_empty(), "no */patch.txt under {}", dir.display());
    let mut failures = Vec::new();
    for case in &cases {
        let name = case.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let bytes = std::fs::read(case.join("patch.txt")).expect("patch.txt");
        let result = parse::parse(&bytes, &ParseOptions::default());
        let must_fail = CODEX_REFUSED.contains(&name);
        match (result, must_fail) {
            (Ok(_), false) | (Err(_), true) => {}
            (Ok(_), true) => failures.push(format!("{name}: parsed, expected parse_error")),
            (Err(e), false) => failures.push(format!("{name}: {}", e.render())),
        }
    }
    println!("codex suite: {} patches checked", cases.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn huge_lines_and_binary_junk_do_not_panic() {
    let mut big = b"*** Begin Patch\n*** Update File: a\n@@\n-".to_vec();
    big.extend(std::iter::repeat_n(b'x', 1 << 20));
    big.extend_from_slice(b"\n+y\n*** End Patch\n");
    let set = parse::parse(&big, &ParseOptions::default()).expect("a 1 MB line parses");
    assert_eq!(set.files[0].body.hunks()[0].lines[0].text.len(), 1 << 20);

    let mut junk_line = b"*** Begin Patch\n*** Update File: a\n".to_vec();
    junk_line.extend(std::iter::repeat_n(b'\x07', 1 << 20));
    let err = parse::parse(&junk_line, &ParseOptions::default()).expect_err("junk refused");
    assert!(
        err.render().len() < 2000,
        "the rendered error stays readable"
    );

    let junk: Vec<u8> = (0..=255u8).cycle().take(70_000).collect();
    assert!(parse::parse(&junk, &ParseOptions::default()).is_err());
}

/// A few valid patches to mutate.
const SEEDS: [&str; 4] = [
    "*** Begin Patch\n*** Add File: a.txt\n+one\n+two\n*** Update File: b.txt\n*** Move to: c.txt\n*** Base: 0123abcd\n@@ class A\n@@ -3,2 +3,2 @@\n ctx\n-old\n+new\n*** End of File\n*** Delete File: d\n*** End Patch\n",
    "cd sub && apply_patch <<'EOF'\r\n*** Begin Patch\r\n*** Update File: x\r\n a\r\n\r\n-b\r\n+c\r\nEOF\r\n",
    "{\"edits\": [{\"op\": \"replace\", \"path\": \"a\", \"old\": \"x\", \"new\": \"y\", \"replace_all\": true}, {\"op\": \"line_range\", \"path\": \"a\", \"start_line\": 1, \"end_line\": 2, \"expected\": \"e\", \"new_content\": \"n\"}, {\"op\": \"create\", \"path\": \"b\", \"content\": \"z\\n\"}], \"base\": {\"a\": \"01234567\"}}",
    "\u{feff}prose\n\n*** Begin Patch\n*** Update File: a\n-x\n+y\n",
];

#[derive(Debug, Clone)]
enum Mutation {
    Insert(usize, u8),
    Remove(usize, usize),
    Replace(usize, u8),
    Truncate(usize),
}

fn mutate(mut bytes: Vec<u8>, mutations: &[Mutation]) -> Vec<u8> {
    for m in mutations {
        let len = bytes.len().max(1);
        match *m {
            Mutation::Insert(at, b) => bytes.insert(at % (bytes.len() + 1), b),
            Mutation::Remove(at, n) => {
                let at = at % len;
                let end = (at + n).min(bytes.len());
                if at < end {
                    bytes.drain(at..end);
                }
            }
            Mutation::Replace(at, b) => {
                if !bytes.is_empty() {
                    let at = at % bytes.len();
                    bytes[at] = b;
                }
            }
            Mutation::Truncate(at) => bytes.truncate(at % len),
        }
    }
    bytes
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let byte = prop_oneof![
        any::<u8>(),
        Just(b'\n'),
        Just(b'\r'),
        Just(b'@'),
        Just(b'*'),
        Just(b' '),
        Just(b'+'),
        Just(b'-'),
        Just(b'"'),
        Just(b'{'),
    ];
    prop_oneof![
        (any::<usize>(), byte.clone()).prop_map(|(a, b)| Mutation::Insert(a, b)),
        (any::<usize>(), 0usize..8).prop_map(|(a, n)| Mutation::Remove(a, n)),
        (any::<usize>(), byte).prop_map(|(a, b)| Mutation::Replace(a, b)),
        any::<usize>().prop_map(Mutation::Truncate),
    ]
}

fn parse_every_way(bytes: &[u8]) {
    let _ = parse::parse(bytes, &ParseOptions::default());
    for format in [apply_patch::Format::Agent, apply_patch::Format::Json] {
        let opts = ParseOptions::default().with_format(Some(format));
        if let Err(e) = parse::parse(bytes, &opts) {
            // Every refusal says what was expected; nom's internal errors never leak out.
            assert!(!e.message.starts_with("unexpected input"), "{}", e.render());
            // A position, or none at all when no patch was found (then nothing is quoted).
            if e.located {
                assert!(e.line >= 1 && e.column >= 1);
            } else {
                assert!(e.line == 0 && e.line_text.is_empty(), "{}", e.render());
            }
            let _ = e.render();
        }
    }
}

/// 1024 cases per property, unless `PROPTEST_CASES` asks for another number (for longer
/// local runs).
fn never_panic_config() -> ProptestConfig {
    match std::env::var_os("PROPTEST_CASES") {
        Some(_) => ProptestConfig::default(),
        None => ProptestConfig::with_cases(1024),
    }
}

proptest! {
    #![proptest_config(never_panic_config())]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        parse_every_way(&bytes);
    }

    #[test]
    fn mutated_patches_never_panic(
        seed in 0..SEEDS.len(),
        mutations in proptest::collection::vec(mutation(), 1..6),
    ) {
        let bytes = mutate(SEEDS[seed].as_bytes().to_vec(), &mutations);
        parse_every_way(&bytes);
    }
}

/// One edit of a generated JSON request: (path index, op index, text).
fn json_edit() -> impl Strategy<Value = (usize, usize, String)> {
    (0usize..4, 0usize..4, "[a-z \\n\"\\\\é]{1,12}")
}

fn json_edit_text(path: usize, op: usize, text: &str) -> String {
    let path = format!("dir/file{path}.txt");
    let text = serde_json::to_string(text).expect("a string serialises");
    match op {
        0 => format!(r#"{{"op": "replace", "path": "{path}", "old": {text}, "new": "x"}}"#),
        1 => format!(r#"{{"op": "insert", "path": "{path}", "after_line": 2, "content": {text}}}"#),
        2 => format!(r#"{{"op": "append", "path": "{path}", "content": {text}}}"#),
        _ => format!(
            r#"{{"op": "line_range", "path": "{path}", "start_line": 1, "end_line": 3, "expected": {text}, "new_content": ""}}"#
        ),
    }
}

proptest! {
    #![proptest_config(never_panic_config())]

    /// Edits of one path gather into one file patch, paths in order of first appearance, each
    /// path's edits in request order, with their text decoded.
    #[test]
    fn json_edits_gather_per_path(edits in proptest::collection::vec(json_edit(), 1..12)) {
        let body: Vec<String> = edits.iter().map(|(p, o, t)| json_edit_text(*p, *o, t)).collect();
        let input = format!("{{\"edits\": [\n{}\n]}}", body.join(",\n"));
        let set = parse::parse(input.as_bytes(), &ParseOptions::default())
            .map_err(|e| TestCaseError::fail(e.render()))?;
        let mut order: Vec<usize> = Vec::new();
        for (p, _, _) in &edits {
            if !order.contains(p) {
                order.push(*p);
            }
        }
        prop_assert_eq!(set.files.len(), order.len());
        for (file, p) in set.files.iter().zip(&order) {
            prop_assert_eq!(file.path(), format!("dir/file{p}.txt"));
            let Body::Edits(list) = &file.body else {
                return Err(TestCaseError::fail("edits expected"));
            };
            let texts: Vec<&str> = edits.iter().filter(|e| e.0 == *p).map(|e| e.2.as_str()).collect();
            prop_assert_eq!(list.len(), texts.len());
            for (edit, text) in list.iter().zip(texts) {
                let got = match edit {
                    Edit::Replace { old, .. } => old,
                    Edit::Insert { content, .. } | Edit::Append { content } => content,
                    Edit::LineRange { expected, .. } => expected,
                };
                prop_assert_eq!(got.as_ref(), text);
            }
        }
    }
}

/// A generated hunk: anchors, line-number hint, (kind 0/1/2 = context/delete/insert, text)
/// lines, and `*** End of File`.
type GenHunk = (Vec<String>, Option<usize>, Vec<(u8, String)>, bool);

/// A generated agent file operation: the text to write and what the parser must return.
#[derive(Debug, Clone)]
enum GenOp {
    Add(Vec<String>),
    Delete,
    Update { move_to: bool, hunks: Vec<GenHunk> },
}

fn gen_hunk() -> impl Strategy<Value = GenHunk> {
    (
        proptest::collection::vec("[a-z][a-z ]{0,6}[a-z]", 0..3),
        proptest::option::of(1usize..500),
        proptest::collection::vec((0u8..3, "[a-z ]{0,8}"), 1..6),
        any::<bool>(),
    )
}

fn gen_op() -> impl Strategy<Value = GenOp> {
    prop_oneof![
        proptest::collection::vec("[a-z ]{0,8}", 0..4).prop_map(GenOp::Add),
        Just(GenOp::Delete),
        (any::<bool>(), proptest::collection::vec(gen_hunk(), 1..4))
            .prop_map(|(move_to, hunks)| GenOp::Update { move_to, hunks }),
    ]
}

fn render_gen(ops: &[GenOp], crlf: bool) -> String {
    let mut out = vec!["*** Begin Patch".to_string()];
    for (n, op) in ops.iter().enumerate() {
        match op {
            GenOp::Add(lines) => {
                out.push(format!("*** Add File: f{n}.txt"));
                out.extend(lines.iter().map(|l| format!("+{l}")));
            }
            GenOp::Delete => out.push(format!("*** Delete File: f{n}.txt")),
            GenOp::Update { move_to, hunks } => {
                out.push(format!("*** Update File: f{n}.txt"));
                if *move_to {
                    out.push(format!("*** Move to: g{n}.txt"));
                }
                for (anchors, hint, lines, eof) in hunks {
                    out.extend(anchors.iter().map(|a| format!("@@ {a}")));
                    match hint {
                        Some(h) => out.push(format!("@@ -{h},3 +{h},4 @@")),
                        None if anchors.is_empty() => out.push("@@".to_string()),
                        None => {}
                    }
                    for (kind, text) in lines {
                        let mark = [' ', '-', '+'][usize::from(*kind)];
                        out.push(format!("{mark}{text}"));
                    }
                    if *eof {
                        out.push("*** End of File".to_string());
                    }
                }
            }
        }
    }
    out.push("*** End Patch".to_string());
    let eol = if crlf { "\r\n" } else { "\n" };
    out.join(eol) + eol
}

proptest! {
    #![proptest_config(never_panic_config())]

    /// Generated agent patches parse back into exactly the operations, anchors, hints and
    /// lines they were written from, with LF or CRLF endings.
    #[test]
    fn generated_agent_patches_parse_back(
        ops in proptest::collection::vec(gen_op(), 1..5),
        crlf in any::<bool>(),
    ) {
        let text = render_gen(&ops, crlf);
        let set = parse::parse(text.as_bytes(), &ParseOptions::default())
            .map_err(|e| TestCaseError::fail(e.render()))?;
        prop_assert_eq!(set.files.len(), ops.len());
        for (n, (file, op)) in set.files.iter().zip(&ops).enumerate() {
            match op {
                GenOp::Add(lines) => {
                    prop_assert_eq!(file.op, apply_patch::FileOp::Add);
                    let got: Vec<String> = file.body.hunks().iter()
                        .flat_map(|h| h.lines.iter())
                        .map(|l| String::from_utf8_lossy(&l.text).into_owned())
                        .collect();
                    prop_assert_eq!(&got, lines);
                }
                GenOp::Delete => {
                    prop_assert_eq!(file.op, apply_patch::FileOp::Delete);
                    prop_assert_eq!(file.old_path.clone(), Some(format!("f{n}.txt")));
                }
                GenOp::Update { move_to, hunks } => {
                    let new = if *move_to { format!("g{n}.txt") } else { format!("f{n}.txt") };
                    prop_assert_eq!(file.new_path.clone(), Some(new));
                    let got = file.body.hunks();
                    prop_assert_eq!(got.len(), hunks.len());
                    for (h, (anchors, hint, lines, eof)) in got.iter().zip(hunks) {
                        let a: Vec<String> = h.anchors.iter()
                            .map(|a| String::from_utf8_lossy(a).into_owned()).collect();
                        prop_assert_eq!(&a, anchors);
                        prop_assert_eq!(h.old_start, *hint);
                        prop_assert_eq!(h.end_of_file, *eof);
                        let l: Vec<(u8, String)> = h.lines.iter().map(|l| {
                            let k = match l.kind { LineKind::Context => 0, LineKind::Delete => 1, LineKind::Insert => 2 };
                            (k, String::from_utf8_lossy(&l.text).into_owned())
                        }).collect();
                        prop_assert_eq!(&l, lines);
                    }
                }
            }
        }
    }
}
