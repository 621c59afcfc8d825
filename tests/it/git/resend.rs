//! A patch sent twice is a no-op (SPEC §5 "Already applied"), and so is its reverse sent
//! twice: random multi-file changes made with the git CLI (adds, deletes, renames, mode
//! changes, lines inserted at the start and the end, final newlines added and removed),
//! each `git diff` applied, applied again, reversed and reversed again. The second run of
//! each must succeed with the `already_applied` warning and change nothing; `git apply`
//! agrees with the first runs.

use super::Scratch;
use std::collections::BTreeMap;

/// A small deterministic generator (xorshift64*), so that a failing case can be rebuilt.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

/// The work tree without `.git`: path → (bytes, executable).
type Tree = BTreeMap<String, (Vec<u8>, bool)>;

fn tree(s: &Scratch) -> Tree {
    let mut out = Tree::new();
    for (path, entry) in crate::util::snapshot_dir(&s.dir) {
        if path == ".git" || path.starts_with(".git/") {
            continue;
        }
        if let crate::util::Entry::File { bytes, mode } = entry {
            out.insert(path, (bytes, mode & 0o111 != 0));
        }
    }
    out
}

/// A file of code-like lines: mostly distinct, with the blank and `}` lines every file has.
fn content(rng: &mut Rng, name: &str, lines: usize) -> String {
    let mut out = String::new();
    for i in 0..lines {
        match rng.below(8) {
            0 => out.push('\n'),
            1 => out.push_str("}\n"),
            _ => out.push_str(&format!("{name} line {i} {}\n", rng.next() % 1000)),
        }
    }
    out
}

/// One random edit of a file's text: insertions at the start, at the end or inside,
/// deletions, replacements, and the final newline added or removed.
fn edit(rng: &mut Rng, text: &str, tag: &str) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut newline = text.is_empty() || text.ends_with('\n');
    for k in 0..1 + rng.below(3) {
        let n = lines.len();
        let added = format!("added {tag}.{k} {}", rng.next() % 10_000);
        match rng.below(7) {
            0 => lines.insert(0, added),
            1 => lines.push(added),
            2 => lines.insert(rng.below(n + 1), added),
            3 if n > 1 => {
                lines.remove(rng.below(n));
            }
            4 if n > 0 => {
                let at = rng.below(n);
                lines[at] = added;
            }
            5 => newline = !newline,
            _ => lines.insert(rng.below(n + 1), added),
        }
    }
    let mut out = lines.join("\n");
    if newline && !lines.is_empty() {
        out.push('\n');
    }
    out
}

/// Build a repository with a random base commit and a random change staged on top; the
/// diff of the change (`git diff --cached -M`), the tree before and the tree after. The
/// work tree is left at the base.
fn case(seed: u64) -> (Scratch, String, Tree, Tree) {
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let s = Scratch::new(&[]);
    let files = 2 + rng.below(4);
    for f in 0..files {
        let lines = rng.below(30);
        let text = content(&mut rng, &format!("f{f}"), lines);
        s.write(&format!("f{f}.txt"), &text);
    }
    s.commit_all("base");
    let before = tree(&s);
    for f in 0..files {
        let path = format!("f{f}.txt");
        let Some((bytes, _)) = before.get(&path) else {
            continue;
        };
        let text = String::from_utf8(bytes.clone()).expect("generated text");
        match rng.below(8) {
            0 => s.git(&["rm", "-q", &path]),
            1 => s.git(&["mv", &path, &format!("moved{f}.txt")]),
            2 => {
                s.git(&["mv", &path, &format!("moved{f}.txt")]);
                s.write(&format!("moved{f}.txt"), &edit(&mut rng, &text, &path));
                String::new()
            }
            3 => {
                crate::util::set_mode(&s.dir.join(&path), 0o755);
                String::new()
            }
            4 => String::new(),
            _ => {
                s.write(&path, &edit(&mut rng, &text, &path));
                String::new()
            }
        };
    }
    if rng.chance(50) {
        let lines = rng.below(6);
        let mut text = content(&mut rng, "new", lines);
        if rng.chance(30) {
            text.pop();
        }
        s.write("new.txt", &text);
    }
    s.git(&["add", "-A"]);
    let diff = s.git(&["diff", "--cached", "-M"]);
    let after = tree(&s);
    s.git(&["commit", "-q", "-m", "change"]);
    s.git(&["reset", "-q", "--hard", "HEAD~1"]);
    s.git(&["clean", "-q", "-f", "-d"]);
    assert_eq!(
        tree(&s),
        before,
        "seed {seed}: the work tree is back at the base"
    );
    (s, diff, before, after)
}

/// Run the binary with `args` and the patch; the exit status and the JSON report.
fn run(s: &Scratch, args: &[&str], diff: &str, label: &str) -> (i32, serde_json::Value) {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let out = s.apply_patch(&all, diff);
    let json: serde_json::Value = serde_json::from_str(&out.stdout)
        .unwrap_or_else(|e| panic!("{label}: not one JSON object ({e}): {}", out.stdout));
    (out.status, json)
}

/// Every operation of the diff (reversed: of its reverse) deletes a file: sent again, it
/// stays `file_not_found` (a mistyped path must not pass silently, SPEC §5).
fn only_deletes(diff: &str, reversed: bool) -> bool {
    let marker = if reversed {
        "new file mode"
    } else {
        "deleted file mode"
    };
    let files = diff.matches("diff --git ").count();
    files > 0 && diff.lines().filter(|l| l.starts_with(marker)).count() == files
}

fn warned_applied(json: &serde_json::Value) -> bool {
    json["warnings"]
        .as_array()
        .is_some_and(|w| w.iter().any(|w| w["code"] == "already_applied"))
}

/// One case: the diff applies, is a no-op the second time, reverses, and the reverse is a
/// no-op the second time; each second run keeps the tree exactly.
fn check(seed: u64) {
    let (s, diff, before, after) = case(seed);
    if diff.trim().is_empty() {
        return;
    }
    assert_eq!(
        s.git_apply(&["--check"], &diff),
        0,
        "seed {seed}: git apply"
    );
    for (args, want, what) in [
        (&[][..], &after, "apply"),
        (&[][..], &after, "apply again"),
        (&["-R"][..], &before, "reverse"),
        (&["-R"][..], &before, "reverse again"),
    ] {
        let label = format!("seed {seed}, {what}");
        let (status, json) = run(&s, args, &diff, &label);
        assert_eq!(tree(&s), *want, "{label}:\n{diff}");
        let again = what.ends_with("again");
        if again && only_deletes(&diff, !args.is_empty()) {
            assert_eq!(json["error"]["code"], "file_not_found", "{label}");
            continue;
        }
        assert_eq!(status, 0, "{label}:\n{}\n{diff}", json["error"]);
        assert_eq!(
            warned_applied(&json),
            again,
            "{label}: {}",
            json["warnings"]
        );
    }
}

/// How many random cases run: `APPLY_PATCH_RESEND_CASES` (the trials were 200), else
/// a number that keeps the suite quick.
fn cases() -> u64 {
    std::env::var("APPLY_PATCH_RESEND_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(24)
}

#[test]
fn a_git_diff_sent_twice_and_reversed_twice_is_a_no_op_the_second_time() {
    for seed in 1..=cases() {
        check(seed);
    }
}
