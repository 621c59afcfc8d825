//! Peer conformance of the SEARCH/REPLACE front end, parse level: the cases converted from
//! Aider's, Cline's and Roo Code's own tests (env `APPLY_PATCH_SEARCHREPLACE_SUITE`, the
//! folder `../shared/conformance/searchreplace`; skipped with a message when unset). Every
//! `response.txt` must parse into the blocks the case means — the file each block names, and
//! SEARCH and REPLACE texts that the peer's input and result bear out — or, when the peer's
//! own parser refuses it, be refused. The parser-only tests the suite keeps in skipped.json
//! (Aider's parsed blocks, Roo's marker checks) are held to the same. Every case where we
//! differ on purpose is listed, with its reason, in tests/expectations/searchreplace.toml.
//! The applying half runs each case through the engine (a memory tree holding `input/`, the
//! response with its out-of-band path): every case ends as the peer's (the tree of
//! `expected/`, or a refusal) or is listed with `apply = …` and its reason.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use apply_patch::parse::blocks::{self, Block, Blocks};

use crate::conformance::{tiny_toml, Expectations};

/// Cases the peer refuses in its parser (a malformed or missing marker), as opposed to
/// refusals for want of a match, which must parse here.
const PEER_PARSE_REFUSALS: [&str; 8] = [
    "cline_002_malformed_search_mixed_symbols",
    "cline_003_malformed_search_insufficient_dashes",
    "cline_004_malformed_search_missing_space",
    "cline_013_malformed_diff_missing_separator",
    "cline_014_malformed_diff_trailing_space_on_separator",
    "cline_015_malformed_diff_double_replace_markers",
    "cline_016_malformed_diff_malformed_separator_with_dashes",
    "roo_013_return_false_if_diff_format_is_invalid",
];

fn suite() -> Option<PathBuf> {
    let Some(dir) = std::env::var_os("APPLY_PATCH_SEARCHREPLACE_SUITE") else {
        eprintln!("skipped: set APPLY_PATCH_SEARCHREPLACE_SUITE to the SEARCH/REPLACE case folder");
        return None;
    };
    let dir = PathBuf::from(dir);
    if !dir.is_dir() {
        eprintln!(
            "skipped: APPLY_PATCH_SEARCHREPLACE_SUITE={} is not a folder",
            dir.display()
        );
        return None;
    }
    Some(dir)
}

fn expectations() -> Expectations {
    let expect = tiny_toml(include_str!("../expectations/searchreplace.toml"));
    for (name, keys) in &expect {
        assert!(
            keys.get("reason").is_some_and(|r| !r.is_empty()),
            "{name}: every listed difference gives its reason"
        );
        for key in keys.keys() {
            assert!(
                [
                    "parse",
                    "search",
                    "replace",
                    "apply",
                    "reason",
                    "apply_reason"
                ]
                .contains(&key.as_str()),
                "{name}: unknown key `{key}`"
            );
        }
    }
    expect
}

/// The files of a case folder: relative path → bytes.
fn files(root: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for entry in std::fs::read_dir(dir).expect("readable folder").flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let rel = path.strip_prefix(root).expect("inside the root");
                let bytes = std::fs::read(&path).expect("readable file");
                out.insert(rel.to_string_lossy().replace('\\', "/"), bytes);
            }
        }
    }
    let mut out = BTreeMap::new();
    if root.is_dir() {
        walk(root, root, &mut out);
    }
    out
}

/// The non-blank lines of a text, trimmed (peers re-indent; the locator's ladder does too).
fn trimmed_lines(bytes: &[u8]) -> BTreeSet<String> {
    String::from_utf8_lossy(bytes)
        .lines()
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

fn texts(lines: &[std::borrow::Cow<'_, [u8]>]) -> Vec<String> {
    lines
        .iter()
        .map(|l| String::from_utf8_lossy(l).trim().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

/// What a case says about the parse.
struct Case {
    name: String,
    dir: PathBuf,
    meta: serde_json::Value,
}

impl Case {
    fn given_path(&self) -> Option<String> {
        match self.meta["file_path_given"].as_bool() {
            Some(false) => self.meta["path_to_use"].as_str().map(str::to_string),
            _ => None,
        }
    }

    fn peer_applies(&self) -> bool {
        self.dir.join("expected").is_dir()
    }
}

/// The blocks against the peer's result: each block names a file the peer changed (and
/// every changed file has a block); each SEARCH line is in the file before (or in an earlier
/// block's REPLACE), each REPLACE line in the file after. Each problem comes with its kind
/// (`path`, `search`, `replace`), the key that lists it in the expectations file.
fn meaning(case: &Case, parsed: &Blocks<'_>) -> Vec<(&'static str, String)> {
    let before = files(&case.dir.join("input"));
    let after = files(&case.dir.join("expected"));
    let mut problems = Vec::new();
    let named: BTreeSet<&str> = parsed.blocks.iter().map(|b| b.path.as_str()).collect();
    let changed: BTreeSet<&str> = after
        .iter()
        .filter(|(p, bytes)| before.get(p.as_str()) != Some(bytes))
        .map(|(p, _)| p.as_str())
        .collect();
    if !changed.is_subset(&named) || named.iter().any(|p| !after.contains_key(*p)) {
        let why = format!("blocks name {named:?}, the peer changed {changed:?}");
        problems.push(("path", why));
    }
    let mut earlier: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    for (n, block) in parsed.blocks.iter().enumerate() {
        let path = block.path.as_str();
        let old = trimmed_lines(before.get(path).map_or(&[][..], Vec::as_slice));
        let new = trimmed_lines(after.get(path).map_or(&[][..], Vec::as_slice));
        let seen = earlier.entry(path).or_default();
        let search: Vec<String> = texts(&block.search)
            .into_iter()
            .filter(|l| !old.contains(l) && !seen.contains(l))
            .collect();
        if !search.is_empty() {
            let why = format!("block {}: SEARCH lines not in the file: {search:?}", n + 1);
            problems.push(("search", why));
        }
        let replace: Vec<String> = texts(&block.replace)
            .into_iter()
            .filter(|l| !new.contains(l))
            .collect();
        if !replace.is_empty() {
            let why = format!(
                "block {}: REPLACE lines not in the result: {replace:?}",
                n + 1
            );
            problems.push(("replace", why));
        }
        seen.extend(texts(&block.replace));
    }
    problems
}

/// How a case ended here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Parsed,
    Refused,
}

/// One case: its outcome when it behaves as the case and the expectations file say.
fn check(case: &Case, listed: Option<&BTreeMap<String, String>>) -> Result<Outcome, String> {
    let response = std::fs::read(case.dir.join("response.txt")).expect("response.txt");
    let given = case.given_path();
    let result = blocks::parse(&response, given.as_deref());
    let peer_parses = !PEER_PARSE_REFUSALS.contains(&case.name.as_str());
    let ours = listed.and_then(|l| l.get("parse")).map(String::as_str);
    let listed = listed.filter(|l| {
        l.keys()
            .any(|k| ["parse", "search", "replace"].contains(&k.as_str()))
    });
    let should_parse = match ours {
        Some("ok") => true,
        Some("refused") => false,
        Some(other) => return Err(format!("unknown `parse = \"{other}\"`")),
        None => peer_parses,
    };
    if ours.is_some() && should_parse == peer_parses {
        return Err("listed as a difference, but the peer does the same".into());
    }
    match (result, should_parse) {
        (Ok(_), false) => Err("parsed, but should be refused".into()),
        (Err(e), true) => Err(format!("refused:\n{}", e.render())),
        (Err(_), false) => Ok(Outcome::Refused),
        (Ok(parsed), true) => {
            let problems = if case.peer_applies() {
                meaning(case, &parsed)
            } else {
                Vec::new()
            };
            let listed_kind = |kind: &str| listed.is_some_and(|l| l.contains_key(kind));
            let mut wrong: Vec<String> = problems
                .iter()
                .filter(|(kind, _)| !listed_kind(kind))
                .map(|(_, why)| why.clone())
                .collect();
            for kind in ["search", "replace"] {
                if listed_kind(kind) && !problems.iter().any(|(k, _)| *k == kind) {
                    wrong.push(format!(
                        "`{kind}` listed, but the blocks match the peer's result"
                    ));
                }
            }
            if wrong.is_empty() {
                Ok(Outcome::Parsed)
            } else {
                Err(wrong.join("\n"))
            }
        }
    }
}

#[test]
fn searchreplace_suite_parses_as_the_peers_mean() {
    let Some(dir) = suite() else {
        return;
    };
    let expect = expectations();
    let mut cases: Vec<Case> = std::fs::read_dir(&dir)
        .expect("the suite folder")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("case.json").is_file())
        .map(|dir| {
            let meta = std::fs::read_to_string(dir.join("case.json")).expect("case.json");
            Case {
                name: dir
                    .file_name()
                    .expect("a name")
                    .to_string_lossy()
                    .into_owned(),
                meta: serde_json::from_str(&meta).expect("case.json is JSON"),
                dir,
            }
        })
        .collect();
    cases.sort_by(|a, b| a.name.cmp(&b.name));
    assert!(
        cases.len() >= 100,
        "expected the whole suite in {}",
        dir.display()
    );
    let mut failures = Vec::new();
    let mut refused = 0;
    for case in &cases {
        match check(case, expect.get(&case.name)) {
            Ok(Outcome::Refused) => refused += 1,
            Ok(Outcome::Parsed) => {}
            Err(why) => failures.push(format!("{}: {why}", case.name)),
        }
    }
    let listed = expect.keys().filter(|n| !n.starts_with("skipped:"));
    for name in listed.clone() {
        assert!(
            cases.iter().any(|c| &c.name == name),
            "{name} listed but absent from the suite"
        );
    }
    println!(
        "searchreplace suite: {} cases, {} refused at parse time, {} listed differences",
        cases.len(),
        refused,
        listed.count()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// A parser-only test of skipped.json: its name, the text, and what the peer's parser did
/// (the blocks it read, or a refusal).
struct ParserOnly {
    name: String,
    text: String,
    given: Option<&'static str>,
    peer: Result<Vec<(String, String, String)>, ()>,
}

/// Aider's reading of a block: SEARCH and REPLACE as text, each line ending in a newline.
fn aider_view(block: &Block<'_>) -> (String, String, String) {
    let text = |lines: &[std::borrow::Cow<'_, [u8]>]| {
        lines
            .iter()
            .map(|l| format!("{}\n", String::from_utf8_lossy(l)))
            .collect::<String>()
    };
    (
        block.path.clone(),
        text(&block.search),
        text(&block.replace),
    )
}

fn parser_only(dir: &Path) -> Vec<ParserOnly> {
    let text = std::fs::read_to_string(dir.join("skipped.json")).expect("skipped.json");
    let entries: Vec<serde_json::Value> = serde_json::from_str(&text).expect("a JSON list");
    let mut out = Vec::new();
    for entry in entries {
        let source = entry["source"].as_str().unwrap_or_default();
        let name = source
            .rsplit([':', '>'])
            .next()
            .unwrap_or(source)
            .trim()
            .to_string();
        if let Some(response) = entry["response"].as_str() {
            let peer = match entry["parsed_blocks"].as_array() {
                Some(list) => Ok(list
                    .iter()
                    .map(|t| {
                        let s = |i: usize| t[i].as_str().unwrap_or_default().to_string();
                        (s(0), s(1), s(2))
                    })
                    .collect()),
                None => Err(()),
            };
            out.push(ParserOnly {
                name: format!("aider {name}"),
                text: response.to_string(),
                given: None,
                peer,
            });
        }
        for call in entry["calls"].as_array().into_iter().flatten() {
            if let Some(diff) = call["diff"].as_str() {
                let ok = call["success"].as_bool() == Some(true);
                out.push(ParserOnly {
                    name: format!("roo {name}"),
                    text: diff.to_string(),
                    given: Some("FILE.txt"),
                    peer: if ok { Ok(Vec::new()) } else { Err(()) },
                });
            }
        }
    }
    out
}

#[test]
fn searchreplace_parser_only_tests_agree() {
    let Some(dir) = suite() else {
        return;
    };
    let expect = expectations();
    let tests = parser_only(&dir);
    assert!(tests.len() >= 50, "parser-only tests read: {}", tests.len());
    let mut failures = Vec::new();
    for t in &tests {
        let listed = expect.get(&format!("skipped: {}", t.name));
        let ours = blocks::parse(t.text.as_bytes(), t.given);
        let want_ok = match listed.and_then(|l| l.get("parse")).map(String::as_str) {
            Some("ok") => true,
            Some("refused") => false,
            _ => t.peer.is_ok(),
        };
        if listed.is_some() && want_ok == t.peer.is_ok() {
            failures.push(format!("{}: listed as a difference, but none", t.name));
        }
        match (&ours, &t.peer) {
            (Ok(parsed), Ok(peer)) if want_ok && !peer.is_empty() => {
                let got: Vec<_> = parsed.blocks.iter().map(aider_view).collect();
                if &got != peer {
                    failures.push(format!("{}: read {got:?}, the peer {peer:?}", t.name));
                }
            }
            (Ok(_), _) if want_ok => {}
            (Err(_), _) if !want_ok => {}
            (Ok(_), _) => failures.push(format!("{}: parsed, the peer refuses", t.name)),
            (Err(e), _) => failures.push(format!("{}: refused\n{}", t.name, e.render())),
        }
    }
    println!("searchreplace parser-only tests: {} checked", tests.len());
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// How the engine ended a case: the files it left (every file of the tree), or a refusal's
/// code.
fn applied(case: &Case) -> Result<BTreeMap<String, Vec<u8>>, String> {
    use apply_patch::pipeline::{apply_bytes, Mode, Options, Target};
    use apply_patch::tree::MemTree;
    let response = std::fs::read(case.dir.join("response.txt")).expect("response.txt");
    let mut tree = MemTree::from_pairs(files(&case.dir.join("input")));
    let mut opts = Options::builder();
    if let Some(path) = case.given_path() {
        opts = opts.path(path);
    }
    let opts = opts.format(apply_patch::Format::Blocks).build();
    match apply_bytes(Target::Memory(&mut tree), &response, &opts, Mode::Write) {
        Ok(_) => Ok(tree
            .entries()
            .filter_map(|(p, _)| Some((p.to_string(), tree.get(p)?.to_vec())))
            .collect()),
        Err(refused) => Err(refused.error.code.as_str().to_string()),
    }
}

/// One case through the engine against the peer's result and the expectations file:
/// `apply = "refused: CODE"` (the peer applies, we refuse with CODE), `apply = "applied"`
/// (the peer refuses, we apply) or `apply = "differs"` (both apply, the results differ).
fn check_applied(case: &Case, listed: Option<&str>) -> Result<(), String> {
    let peer = case
        .peer_applies()
        .then(|| files(&case.dir.join("expected")));
    let ours = applied(case);
    let got = match (&ours, &peer) {
        (Ok(tree), Some(want)) if tree == want => None,
        (Ok(_), Some(_)) => Some("differs".to_string()),
        (Ok(_), None) => Some("applied".to_string()),
        (Err(code), Some(_)) => Some(format!("refused: {code}")),
        (Err(_), None) => None,
    };
    match (got.as_deref(), listed) {
        (None, None) => Ok(()),
        (Some(got), Some(want)) if got == want => Ok(()),
        (None, Some(want)) => Err(format!(
            "listed as `apply = \"{want}\"`, but ends as the peer's"
        )),
        (Some(got), want) => {
            let detail = match (&ours, &peer) {
                (Ok(tree), Some(want)) => {
                    let show = |t: &BTreeMap<String, Vec<u8>>| {
                        t.iter()
                            .map(|(p, b)| format!("=== {p}\n{}", String::from_utf8_lossy(b)))
                            .collect::<String>()
                    };
                    format!("\nours:\n{}\npeer's:\n{}", show(tree), show(want))
                }
                _ => String::new(),
            };
            Err(format!("ends `{got}`, listed {want:?}{detail}"))
        }
    }
}

#[test]
fn searchreplace_suite_applies_as_the_peers_do_or_differs_on_purpose() {
    let Some(dir) = suite() else {
        return;
    };
    let expect = expectations();
    let mut names: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("the suite folder")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("case.json").is_file())
        .collect();
    names.sort();
    let (mut failures, mut same) = (Vec::new(), 0);
    for dir in names {
        let meta = std::fs::read_to_string(dir.join("case.json")).expect("case.json");
        let case = Case {
            name: dir
                .file_name()
                .expect("a name")
                .to_string_lossy()
                .into_owned(),
            meta: serde_json::from_str(&meta).expect("case.json is JSON"),
            dir,
        };
        let listed = expect.get(&case.name).and_then(|l| l.get("apply"));
        match check_applied(&case, listed.map(String::as_str)) {
            Ok(()) if listed.is_none() => same += 1,
            Ok(()) => {}
            Err(why) => failures.push(format!("{}: {why}", case.name)),
        }
    }
    println!("searchreplace suite through the engine: {same} cases end as the peer's");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
