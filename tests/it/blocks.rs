//! SEARCH/REPLACE blocks through the binary (SPEC §4b; issue 26): detection, paths, the
//! engine's meaning (sequence, uniqueness, already applied, all or nothing), the refusals
//! that lead to the fix, `--check`, `convert`, and the property that blocks and their agent
//! conversion place every hunk identically.

use proptest::prelude::*;

use crate::util::TempTree;

fn block(search: &str, replace: &str) -> String {
    format!("<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE\n")
}

#[test]
fn an_aider_reply_is_detected_and_applied_by_its_path_lines() {
    let t = TempTree::with(&[("src/a.py", "def f():\n    return 1\n"), ("b.txt", "x\n")]);
    let reply = format!(
        "Here are the changes.\n\nsrc/a.py\n```python\n{}```\n\nb.txt\n```\n{}```\n",
        block("    return 1\n", "    return 2\n"),
        block("x\n", "y\n")
    );
    let out = t.run(&["--json", "-"], &reply);
    assert_eq!(out.status, 0, "{}", out.normalized());
    assert_eq!(t.read_str("src/a.py"), "def f():\n    return 2\n");
    assert_eq!(t.read_str("b.txt"), "y\n");
    let files = &out.json()["files"];
    assert_eq!(files[0]["path"], "src/a.py");
    assert_eq!(files[0]["hunks"][0]["line"], 2);
}

#[test]
fn path_given_out_of_band_makes_every_other_line_prose() {
    let t = TempTree::with(&[("a.txt", "one\ntwo\n")]);
    let text = format!("notes.md\n{}", block("two\n", "2\n"));
    let out = t.run(&["--path", "a.txt", "-"], &text);
    assert_eq!(out.status, 0, "{}", out.normalized());
    assert_eq!(t.read_str("a.txt"), "one\n2\n");
    // --path with another format is refused, nothing written.
    let agent = "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+1\n*** End Patch\n";
    let out = t.run(&["--path", "a.txt", "--json", "-"], agent);
    assert_eq!(out.status, 1);
    assert_eq!(out.json()["error"]["code"], "parse_error");
    assert_eq!(t.read_str("a.txt"), "one\n2\n");
}

#[test]
fn a_path_is_never_guessed_from_a_file_name() {
    let t = TempTree::with(&[("src/deep/a.txt", "x\n")]);
    let out = t.run(&["--json", "-"], &format!("a.txt\n{}", block("x\n", "y\n")));
    assert_eq!(out.status, 1, "{}", out.normalized());
    assert_eq!(out.json()["error"]["code"], "file_not_found");
    assert_eq!(t.read_str("src/deep/a.txt"), "x\n");
}

#[test]
fn blocks_apply_in_sequence_each_to_what_the_previous_left() {
    let t = TempTree::with(&[("f", "a\nb\nc\n")]);
    // The second block finds a line the first one wrote.
    let text = format!("{}{}", block("a\n", "A\n"), block("A\nb\n", "A\nB\n"));
    let out = t.run(&["--path", "f", "--json", "-"], &text);
    assert_eq!(out.status, 0, "{}", out.normalized());
    assert_eq!(t.read_str("f"), "A\nB\nc\n");
    let hunks = &out.json()["files"][0]["hunks"];
    assert_eq!(
        (hunks[0]["hunk"].clone(), hunks[1]["hunk"].clone()),
        (1.into(), 2.into())
    );
}

#[test]
fn all_blocks_apply_or_none_does() {
    let t = TempTree::with(&[("f", "a\nb\n")]);
    let text = format!("{}{}", block("a\n", "A\n"), block("zzz\n", "Z\n"));
    let out = t.run(&["--path", "f", "--json", "-"], &text);
    assert_eq!(out.status, 1);
    let error = &out.json()["error"];
    assert_eq!(error["code"], "context_not_found");
    assert_eq!(error["hunk"], 2, "{error}");
    assert_eq!(t.read_str("f"), "a\nb\n");
}

#[test]
fn a_refusal_names_the_blocks_that_would_apply_in_sequence() {
    let t = TempTree::with(&[("f", "a\nb\n")]);
    t.git_dir();
    // Block 2 needs what block 1 writes; block 3 matches nothing.
    let text = format!(
        "{}{}{}",
        block("a\n", "A\n"),
        block("A\n", "AA\n"),
        block("zz\n", "y\n")
    );
    let out = t.run(&["--path", "f", "--json", "-"], &text);
    assert_eq!(out.status, 1, "{}", out.normalized());
    let details = &out.json()["error"]["details"];
    let hunks = |key: &str| -> Vec<u64> {
        details[key]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|h| h["hunk"].as_u64())
            .collect()
    };
    assert_eq!(
        (hunks("applicable"), hunks("failed")),
        (vec![1, 2], vec![3]),
        "{details}"
    );
}

#[test]
fn two_places_are_ambiguous_and_the_selector_with_the_base_picks_one() {
    let t = TempTree::with(&[("f", "x\nmid\nx\n")]);
    let out = t.run(&["--path", "f", "--json", "-"], &block("x\n", "y\n"));
    assert_eq!(out.status, 1);
    let error = out.json()["error"].clone();
    assert_eq!(error["code"], "ambiguous_match");
    let select = error["candidates"][1]["select"]
        .as_str()
        .expect("a selector")
        .to_string();
    let (base_line, start_line) = select.split_once('\n').expect("base, then :start_line:");
    assert_eq!(start_line, ":start_line:3");
    let base = base_line.strip_prefix("--base ").expect("the Base option");
    assert_eq!(t.read_str("f"), "x\nmid\nx\n");
    // Without the Base the hint counts for nothing: still ambiguous.
    let hinted = "<<<<<<< SEARCH\n:start_line:3\n-------\nx\n=======\ny\n>>>>>>> REPLACE\n";
    let out = t.run(&["--path", "f", "--json", "-"], hinted);
    assert_eq!(out.json()["error"]["code"], "ambiguous_match");
    let out = t.run(&["--path", "f", "--base", base, "--json", "-"], hinted);
    assert_eq!(out.status, 0, "{}", out.normalized());
    assert_eq!(t.read_str("f"), "x\nmid\ny\n");
}

#[test]
fn context_not_found_shows_the_nearest_text() {
    let t = TempTree::with(&[("f", "let total = 1;\n")]);
    let out = t.run(
        &["--path", "f", "--json", "-"],
        &block("let totl = 1;\n", "let total = 2;\n"),
    );
    assert_eq!(out.status, 1);
    let error = &out.json()["error"];
    assert_eq!(error["code"], "context_not_found");
    assert!(error["nearest"].is_object(), "{error}");
}

#[test]
fn an_empty_search_creates_fills_or_refuses_naming_both_readings() {
    let t = TempTree::with(&[("empty", ""), ("full", "text\n")]);
    let create = block("", "new\n");
    let out = t.run(&["--path", "new.txt", "-"], &create);
    assert_eq!(out.status, 0, "{}", out.normalized());
    assert_eq!(t.read_str("new.txt"), "new\n");
    let out = t.run(&["--path", "new.txt", "-"], &create);
    assert_eq!(out.status, 0, "already applied: {}", out.normalized());
    let out = t.run(&["--path", "empty", "-"], &create);
    assert_eq!(out.status, 0, "{}", out.normalized());
    assert_eq!(t.read_str("empty"), "new\n");
    let out = t.run(&["--path", "full", "--json", "-"], &create);
    assert_eq!(out.status, 1);
    let error = &out.json()["error"];
    assert_eq!(error["code"], "file_exists");
    let hint = error["hint"].as_str().expect("a hint");
    assert!(
        hint.contains("replace the whole") && hint.contains("append"),
        "{hint}"
    );
    assert_eq!(t.read_str("full"), "text\n");
}

#[test]
fn a_cut_off_block_or_a_second_separator_is_a_parse_error() {
    let t = TempTree::with(&[("f", "a\n")]);
    let out = t.run(
        &["--path", "f", "--json", "-"],
        "<<<<<<< SEARCH\na\n=======\nb\n",
    );
    assert_eq!(out.json()["error"]["code"], "parse_error");
    let two = "<<<<<<< SEARCH\na\n=======\nb\n=======\nc\n>>>>>>> REPLACE\n";
    let out = t.run(&["--path", "f", "--json", "-"], two);
    let error = &out.json()["error"];
    assert_eq!(error["code"], "parse_error");
    assert!(
        error["hint"].as_str().unwrap_or("").contains('\\'),
        "{error}"
    );
    assert_eq!(t.read_str("f"), "a\n");
}

#[test]
fn check_and_diff_write_nothing_and_a_resent_block_is_already_applied() {
    let t = TempTree::with(&[("f", "a\n")]);
    let out = t.run(
        &["--path", "f", "--check", "--diff", "--json", "-"],
        &block("a\n", "b\n"),
    );
    assert_eq!(out.status, 0, "{}", out.normalized());
    assert!(out.json()["diff"].as_str().unwrap_or("").contains("+b"));
    assert_eq!(t.read_str("f"), "a\n");
    assert_eq!(t.run(&["--path", "f", "-"], &block("a\n", "b\n")).status, 0);
    let again = t.run(&["--path", "f", "--json", "-"], &block("a\n", "b\n"));
    assert_eq!(again.status, 0);
    assert_eq!(again.json()["warnings"][0]["code"], "already_applied");
    assert_eq!(t.read_str("f"), "b\n");
}

#[test]
fn the_tool_call_forms_carry_their_path() {
    let t = TempTree::with(&[("f", "a\n")]);
    let call = serde_json::json!({"path": "f", "diff": block("a\n", "b\n")}).to_string();
    let out = t.run(&["-"], &call);
    assert_eq!(out.status, 0, "{}", out.normalized());
    let xml = format!(
        "<apply_diff>\n<path>f</path>\n<diff>\n{}</diff>\n</apply_diff>\n",
        block("b\n", "c\n")
    );
    let out = t.run(&["-"], &xml);
    assert_eq!(out.status, 0, "{}", out.normalized());
    assert_eq!(t.read_str("f"), "c\n");
}

#[test]
fn convert_to_agent_writes_one_section_per_block() {
    let t = TempTree::with(&[("f", "a\nb\n")]);
    let text = format!("{}{}", block("a\n", "A\n"), block("A\n", "B\n"));
    let out = t.run(&["convert", "--to", "agent", "--path", "f", "-"], &text);
    assert_eq!(out.status, 0, "{}", out.normalized());
    assert_eq!(
        out.stdout.matches("*** Update File: f\n").count(),
        2,
        "{}",
        out.stdout
    );
    let applied = t.run(&["-"], &out.stdout);
    assert_eq!(applied.status, 0, "{}", applied.normalized());
    assert_eq!(t.read_str("f"), "B\nb\n");
}

#[test]
fn convert_to_unified_is_the_diff_the_blocks_make_with_real_line_numbers() {
    let t = TempTree::with(&[("f", "a\nb\nc\nd\n")]);
    let out = t.run(
        &["convert", "--to", "unified", "--path", "f", "-"],
        &block("c\n", "C\n"),
    );
    assert_eq!(out.status, 0, "{}", out.normalized());
    assert!(out.stdout.contains("@@ -1,4 +1,4 @@"), "{}", out.stdout);
    assert!(out.stdout.contains("-c\n+C\n"), "{}", out.stdout);
    assert_eq!(t.read_str("f"), "a\nb\nc\nd\n", "convert writes nothing");
    let applied = t.run(&["-"], &out.stdout);
    assert_eq!(applied.status, 0, "{}", applied.normalized());
    assert_eq!(t.read_str("f"), "a\nb\nC\nd\n");
}

/// A file of distinct-ish lines and blocks made from its lines: each block takes a run of
/// the file as it is after the blocks before it, and replaces its middle.
/// One block's recipe: where it starts (modulo the file's length), how many lines SEARCH
/// takes, and REPLACE's lines.
type Edit = (usize, usize, Vec<String>);

fn case() -> impl Strategy<Value = (Vec<String>, Vec<Edit>)> {
    let file = proptest::collection::vec("[a-c]{1,2}", 3..14);
    let edits = proptest::collection::vec(
        (
            0usize..20,
            1usize..4,
            proptest::collection::vec("[a-d]{1,2}", 0..3),
        ),
        1..4,
    );
    (file, edits)
}

fn blocks_of(file: &[String], edits: &[Edit]) -> String {
    let mut current = file.to_vec();
    let mut out = String::new();
    for (at, len, new) in edits {
        if current.is_empty() {
            break;
        }
        let start = at % current.len();
        let end = (start + len).min(current.len());
        let search: String = current[start..end]
            .iter()
            .map(|l| format!("{l}\n"))
            .collect();
        let replace: String = new.iter().map(|l| format!("{l}\n")).collect();
        out.push_str(&block(&search, &replace));
        current.splice(start..end, new.iter().cloned());
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Blocks and their conversion to the agent form end the same way: the same refusal
    /// code and an untouched file, or the same placement of every hunk and the same file.
    #[test]
    fn blocks_and_their_agent_form_place_every_hunk_identically((file, edits) in case()) {
        use apply_patch::pipeline::{apply_bytes, Mode, Options, Target};
        use apply_patch::report::Report;
        use apply_patch::tree::MemTree;
        let text: String = file.iter().map(|l| format!("{l}\n")).collect();
        let blocks = blocks_of(&file, &edits);
        let opts = Options::builder().path("f".to_string()).build();
        let parse = apply_patch::parse::ParseOptions::default().with_path(Some("f".into()));
        let agent = apply_patch::render::convert(blocks.as_bytes(), &parse, apply_patch::Format::Agent)
            .expect("blocks convert to the agent form");
        let run = |input: &[u8], opts: &Options| {
            let mut tree = MemTree::from_pairs([("f", text.clone())]);
            let report = Report::from(&apply_bytes(Target::Memory(&mut tree), input, opts, Mode::Write));
            (report, tree)
        };
        let (by_blocks, tree_b) = run(blocks.as_bytes(), &opts);
        let (by_agent, tree_a) = run(&agent, &Options::default());
        prop_assert_eq!(
            by_blocks.error.as_ref().map(|e| e.code),
            by_agent.error.as_ref().map(|e| e.code),
            "{}\n{}", blocks, String::from_utf8_lossy(&agent)
        );
        prop_assert_eq!(tree_b, tree_a);
        let places = |r: &Report| -> Vec<(usize, String)> {
            r.files.iter().flat_map(|f| f.hunks.iter().map(|h| (h.line, h.level.as_str().to_string()))).collect()
        };
        // A refusal lists what was planned before it: the agent form's earlier sections, where
        // the blocks of one file are one file patch. The placements compare on success.
        if by_blocks.ok {
            prop_assert_eq!(places(&by_blocks), places(&by_agent));
        }
    }
}

/// `--base` without `--path` is refused by the one option rule every front end shares
/// (RawOptions::resolve): the same code and message as Python's `base=` without `path=`.
#[test]
fn a_base_without_a_path_is_the_shared_usage_error() {
    let t = TempTree::with(&[("a.txt", "one\n")]);
    let out = t.run(
        &["--json", "--base", "abcdef12", "-"],
        &block("one\n", "1\n"),
    );
    assert_eq!(out.status, 2, "{}", out.normalized());
    let json = out.json();
    assert_eq!(json["error"]["code"], "usage");
    assert_eq!(
        json["error"]["message"],
        "a Base belongs to one file: a base needs the path of the file the blocks edit"
    );
    assert_eq!(
        json["error"]["hint"],
        "name the file with --path, or leave out --base"
    );
    assert_eq!(t.read_str("a.txt"), "one\n");
}
