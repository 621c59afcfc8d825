//! Fuzz the agent-language front end (and detection): any bytes must give a patch set or a
//! parse error with a sane position — never a panic.
#![no_main]

use apply_patch::parse::{self, ParseOptions};
use apply_patch::Format;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let forced = ParseOptions::default().with_format(Some(Format::Agent));
    for opts in [forced, ParseOptions::default()] {
        match parse::parse(data, &opts) {
            Ok(set) => {
                for file in &set.files {
                    assert!(!file.path().is_empty(), "a file patch without a path");
                    assert!(file.patch_line >= 1);
                }
                let _ = set.into_owned();
            }
            Err(err) => {
                assert!(err.line >= 1 && err.column >= 1, "positions are 1-based");
                let _ = err.render();
            }
        }
    }
});
