//! Fuzz the whole in-memory pipeline (detect, parse, plan, locate, splice): a tree made from
//! the first part of the input, a patch from the rest. Never a panic; a refused patch leaves
//! the tree unchanged; `--check` never changes it.
#![no_main]

use apply_patch::pipeline::{apply_bytes, Mode, Options, Target};
use apply_patch::report::Report;
use apply_patch::tree::MemTree;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // Layout: file content, 0xFF, patch. Without a separator the whole input is the patch
    // against a small fixed file.
    let (content, patch) = match data.iter().position(|&b| b == 0xFF) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (&b"a\nb\nc\n"[..], data),
    };
    let mut tree = MemTree::new();
    for path in ["a.txt", "f", "src/lib.rs"] {
        tree.insert(path, content.to_vec());
    }
    let before = tree.clone();
    let opts = Options::default();
    let checked = Report::from(&apply_bytes(
        Target::Memory(&mut tree),
        patch,
        &opts,
        Mode::Check,
    ));
    assert_eq!(tree, before, "--check changed the tree");
    let report = Report::from(&apply_bytes(
        Target::Memory(&mut tree),
        patch,
        &opts,
        Mode::Write,
    ));
    assert_eq!(report.ok, checked.ok, "--check and the real run disagree");
    if !report.ok {
        assert_eq!(tree, before, "a refused patch changed the tree");
    }
    let _ = serde_json::to_string(&report);
});
