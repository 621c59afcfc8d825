//! Fuzz target `blocks`: the SEARCH/REPLACE front end never panics, with or without an
//! out-of-band path; whatever it accepts names a file for every block, and each block's hunk
//! has SEARCH as its old side and REPLACE as its new side, exactly. Crashes become named
//! fixtures under tests/fixtures/parse/blocks/.
#![no_main]

use apply_patch::parse::blocks;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for given in [None, Some("FILE.txt")] {
        match blocks::parse(data, given) {
            Ok(parsed) => {
                assert!(!parsed.blocks.is_empty(), "a parse without blocks");
                for block in parsed.clone().into_owned().blocks {
                    assert!(!block.path.is_empty() && block.patch_line >= 1);
                    let (search, replace) = (block.search.clone(), block.replace.clone());
                    let hunk = blocks::block_hunk(block);
                    assert!(hunk.old_lines().eq(search.iter().map(|l| l.as_ref())));
                    assert!(hunk.new_lines().eq(replace.iter().map(|l| l.as_ref())));
                }
                let files = blocks::into_files(parsed.clone());
                let hunks: usize = files.iter().map(|f| f.changes.len()).sum();
                assert_eq!(hunks, parsed.blocks.len(), "every block becomes one hunk");
            }
            Err(err) => {
                assert!(err.line >= 1 && err.column >= 1, "positions are 1-based");
                assert!(!err.message.starts_with("unexpected input"), "nom leaked");
                let _ = err.render();
            }
        }
    }
});
