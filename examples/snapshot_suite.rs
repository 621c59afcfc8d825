//! A snapshot-tested regression suite, as a tool that produces patches would keep one: each
//! case is a small tree built from `(path, text)` pairs and a patch; the case's snapshot is
//! the tree after the apply (`MemTree`'s `Display`) and the report (it serializes), so a
//! change of behaviour shows up as a reviewable diff of the snapshot.
//!
//! `cargo run --example snapshot_suite` prints every case; `cargo test --example
//! snapshot_suite` checks them against `snapshots/examples/` with insta.

use apply_patch::pipeline::{apply_bytes, Mode, Options, Target};
use apply_patch::report::Report;
use apply_patch::tree::MemTree;

/// One regression case.
struct Case {
    name: &'static str,
    files: &'static [(&'static str, &'static str)],
    patch: &'static str,
}

const CASES: &[Case] = &[
    Case {
        name: "agent_update",
        files: &[("src/greet.py", "def greet():\n    print('hi')\n")],
        patch: "*** Begin Patch\n*** Update File: src/greet.py\n@@ def greet():\n-    print('hi')\n+    print('hello')\n*** End Patch\n",
    },
    Case {
        name: "unified_add_and_delete",
        files: &[("old.txt", "gone\n"), ("keep.txt", "kept")],
        patch: "--- a/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-gone\n--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+fresh\n+file\n",
    },
    Case {
        name: "refused_leaves_the_tree",
        files: &[("a.txt", "one\ntwo\n")],
        patch: "*** Begin Patch\n*** Update File: a.txt\n@@\n-three\n+four\n*** End Patch\n",
    },
];

/// The case's snapshot: the tree after the apply, then the report as JSON.
fn run(case: &Case) -> String {
    let mut tree = MemTree::from_pairs(case.files.iter().copied());
    let report = Report::from(&apply_bytes(
        Target::Memory(&mut tree),
        case.patch.as_bytes(),
        &Options::default(),
        Mode::Write,
    ));
    let json = serde_json::to_string_pretty(&report).expect("a report always serializes");
    format!("{tree}--- report\n{json}\n")
}

fn main() {
    for case in CASES {
        println!("### {}\n{}", case.name, run(case));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_case_matches_its_snapshot() {
        for case in CASES {
            insta::with_settings!({
                snapshot_path => "../snapshots/examples",
                prepend_module_to_snapshot => false,
            }, {
                insta::assert_snapshot!(case.name, run(case));
            });
        }
    }
}
