//! The SEARCH/REPLACE front end (`parse::blocks`, not yet reached by detection): one snapshot
//! per fixture of tests/fixtures/parse/blocks/ (the syntax tree and its hunks, or the
//! rendered refusal), the grammar ↔ parser ↔ fixture cross-check of grammar/blocks.ebnf, and
//! never-panic property tests.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use apply_patch::model::LineKind;
use apply_patch::parse::blocks::{self, Blocks, Change, Form, PathFrom};
use proptest::prelude::*;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn bytes(b: &[u8]) -> String {
    format!("\"{}\"", b.escape_ascii())
}

/// A readable, stable text form of parsed blocks and of the hunks they become.
pub fn describe(parsed: &Blocks<'_>) -> String {
    let form = match parsed.form {
        Form::Text => "text".to_string(),
        Form::JsonCall => "json tool call".to_string(),
        Form::XmlCall(tool) => format!("<{tool}> tool call"),
    };
    let mut out = format!("form: {form}\n");
    for (n, b) in parsed.blocks.iter().enumerate() {
        let from = match b.path_from {
            PathFrom::Given => "given".to_string(),
            PathFrom::ToolCall => "the tool call".to_string(),
            PathFrom::Line(line) => format!("path line {line}"),
            PathFrom::Previous(block) => format!("block {block}"),
        };
        let _ = write!(
            out,
            "block {} (line {}): {:?} from {from}",
            n + 1,
            b.patch_line,
            b.path
        );
        if let Some(hint) = b.hint {
            let _ = write!(out, ", hint {} ({:?})", hint.line, hint.source);
        }
        if let Some(end) = b.end_line {
            let _ = write!(out, ", end_line {end}");
        }
        out.push('\n');
        for (name, lines) in [("search", &b.search), ("replace", &b.replace)] {
            let _ = writeln!(out, "  {name}: {} line(s)", lines.len());
            for l in lines.iter() {
                let _ = writeln!(out, "    {}", bytes(l));
            }
        }
    }
    out.push_str("as hunks:\n");
    for file in blocks::into_files(parsed.clone()) {
        let _ = writeln!(out, "file {:?} (line {})", file.path, file.patch_line);
        for change in &file.changes {
            let (kind, h) = match change {
                Change::Hunk(h) => ("hunk", h),
                Change::EmptySearch(h) => ("empty SEARCH", h),
            };
            let start = h.old_start.map_or("-".into(), |n| n.to_string());
            let _ = writeln!(out, "  {kind} (line {}), old_start {start}", h.patch_line);
            for l in &h.lines {
                let mark = match l.kind {
                    LineKind::Context => ' ',
                    LineKind::Delete => '-',
                    LineKind::Insert => '+',
                };
                let _ = writeln!(out, "    {mark}{}", bytes(&l.text));
            }
        }
    }
    out
}

/// The out-of-band path a fixture names on a line `# options: --path FILE` among its first
/// two lines (after `# covers: …`).
fn fixture_path(input: &[u8]) -> Option<String> {
    input
        .split(|&b| b == b'\n')
        .take(2)
        .find_map(|l| std::str::from_utf8(l).ok()?.strip_prefix("# options:"))
        .map(|rest| {
            let mut words = rest.split_whitespace();
            match (words.next(), words.next(), words.next()) {
                (Some("--path"), Some(p), None) => p.to_string(),
                other => panic!("unknown fixture options {other:?}"),
            }
        })
}

/// The productions a fixture declares on its first line (after an optional BOM).
fn covers(bytes: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes));
    let first = text.lines().next().unwrap_or("");
    first
        .strip_prefix("# covers:")
        .map(|list| {
            list.split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn fixtures() {
    insta::with_settings!({
        snapshot_path => "../../snapshots/parse_blocks",
        prepend_module_to_snapshot => false,
    }, {
        insta::glob!("../fixtures/parse/blocks", "*.txt", |path| {
            let input = std::fs::read(path).expect("fixture is readable");
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            assert!(!covers(&input).is_empty(), "{name}: the first line must be `# covers: …`");
            let given = fixture_path(&input);
            match blocks::parse(&input, given.as_deref()) {
                Ok(parsed) => {
                    assert!(name.starts_with("ok_"), "{name} must be refused");
                    // Detached from the input, it reads the same.
                    assert_eq!(parsed.clone().into_owned(), parsed, "{name}");
                    insta::assert_snapshot!("parse", describe(&parsed));
                }
                Err(e) => {
                    assert!(name.starts_with("err_"), "{name} must parse: {}", e.render());
                    let converted: apply_patch::Error = e.clone().into();
                    assert_eq!(converted.code.as_str(), "parse_error");
                    insta::assert_snapshot!("error", e.render());
                }
            }
        });
    });
}

/// Production names of grammar/blocks.ebnf (`name = …` at the start of a line, outside
/// comments), as grammar/README.md defines them.
fn productions() -> BTreeSet<String> {
    let text = std::fs::read_to_string(repo().join("grammar/blocks.ebnf")).expect("grammar");
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

/// `/// grammar: NAME` tags of the blocks front end's sources.
fn tags() -> Vec<String> {
    let parse = repo().join("src/parse");
    let mut files: Vec<PathBuf> = vec![parse.join("blocks.rs"), parse.join("nom_lex.rs")];
    let mut sub: Vec<PathBuf> = std::fs::read_dir(parse.join("blocks"))
        .expect("src/parse/blocks")
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
fn every_blocks_production_has_one_parser_function_and_a_fixture() {
    let productions = productions();
    assert!(productions.len() > 30, "grammar parsed: {productions:?}");
    crate::util::assert_productions_tagged(&productions, &tags());
    let mut covered = BTreeSet::new();
    for entry in std::fs::read_dir(repo().join("tests/fixtures/parse/blocks"))
        .expect("fixtures")
        .flatten()
    {
        let bytes = std::fs::read(entry.path()).expect("fixture");
        let list = covers(&bytes);
        assert!(
            !list.is_empty(),
            "{}: no '# covers:' line",
            entry.path().display()
        );
        for name in list {
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

/// Valid inputs of every form to mutate.
const SEEDS: [&str; 5] = [
    "Here:\n\nsrc/a.py\n```python\n<<<<<<< SEARCH\nold\n\\=======\n=======\nnew\n>>>>>>> REPLACE\n```\n\n<<<<<<< SEARCH\n=======\nx\n>>>>>>> REPLACE\n",
    "------- SEARCH\n1 | a\n2 | b\n=======\n1 | c\n+++++++ REPLACE\n",
    "<<<<<<< SEARCH\r\n:start_line:4\r\n:end_line:5\r\n-------\r\nx\r\n=======\r\ny\r\n>>>>>>> REPLACE\r\n",
    "<replace_in_file>\n<path>a.ts</path>\n<diff>\n------- SEARCH\nx\n=======\ny\n+++++++ REPLACE\n</diff>\n<task_progress>- [x]</task_progress>\n</replace_in_file>\n",
    "{\"path\": \"a\", \"diff\": \"<<<<<<< SEARCH\\nx\\n=======\\ny\\n>>>>>>> REPLACE\"}",
];

fn mutate(mut bytes: Vec<u8>, edits: &[(usize, u8, u8)]) -> Vec<u8> {
    for &(at, op, b) in edits {
        let len = bytes.len();
        match op % 4 {
            0 => bytes.insert(at % (len + 1), b),
            1 if len > 0 => {
                bytes.remove(at % len);
            }
            2 if len > 0 => bytes[at % len] = b,
            _ => bytes.truncate(at % (len + 1)),
        }
    }
    bytes
}

fn check_any(bytes: &[u8]) {
    for given in [None, Some("FILE.txt")] {
        match blocks::parse(bytes, given) {
            Ok(parsed) => {
                assert!(!parsed.blocks.is_empty());
                for b in parsed.blocks.iter().cloned() {
                    assert!(!b.path.is_empty() && b.patch_line >= 1);
                    // The hunk's sides are SEARCH and REPLACE, exactly.
                    let (search, replace) = (b.search.clone(), b.replace.clone());
                    let hunk = blocks::block_hunk(b);
                    assert!(hunk.old_lines().eq(search.iter().map(|l| l.as_ref())));
                    assert!(hunk.new_lines().eq(replace.iter().map(|l| l.as_ref())));
                }
                let _ = blocks::into_files(parsed.into_owned());
            }
            Err(e) => {
                // Every refusal says what was expected; nom's internal errors never leak out.
                assert!(!e.message.starts_with("unexpected input"), "{}", e.render());
                assert!(e.line >= 1 && e.column >= 1);
                assert!(e.render().len() < 4000);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        check_any(&bytes);
    }

    #[test]
    fn mutated_inputs_never_panic(
        seed in 0..SEEDS.len(),
        edits in proptest::collection::vec(
            (any::<usize>(), any::<u8>(), prop_oneof![
                any::<u8>(), Just(b'\n'), Just(b'<'), Just(b'='), Just(b'>'), Just(b'\\'),
                Just(b'|'), Just(b'-'), Just(b'+'), Just(b'"'),
            ]),
            1..6,
        ),
    ) {
        check_any(&mutate(SEEDS[seed].as_bytes().to_vec(), &edits));
    }
}
