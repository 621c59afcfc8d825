//! Fuzz target `unified`: the unified-diff front end never panics, and whatever it accepts
//! renders back to a diff that reads the same (line numbers aside) and reverses twice to
//! itself. Crashes become named fixtures under tests/fixtures/parse/unified/.
#![no_main]

use apply_patch::model::{Body, FileOp, PatchSet};
use apply_patch::parse::{unified, ParseOptions};
use apply_patch::{render, transform};
use libfuzzer_sys::fuzz_target;

fn without_lines(mut s: PatchSet<'static>) -> PatchSet<'static> {
    for f in &mut s.files {
        f.patch_line = 0;
        if let Body::Hunks(hs) = &mut f.body {
            for h in hs {
                h.patch_line = 0;
            }
        }
    }
    s
}

fuzz_target!(|data: &[u8]| {
    let (flags, input) = data.split_first().map_or((0, data), |(f, rest)| (*f, rest));
    let opts = ParseOptions::default()
        .with_recount(flags & 1 != 0)
        .with_unidiff_zero(flags & 2 != 0)
        .with_strip((flags & 4 != 0).then_some(usize::from(flags >> 4) % 3));
    let Ok(set) = unified::parse(input, 0, &opts) else {
        return;
    };
    let set = set.into_owned();
    let _ = render::to_agent(&set);
    let absolute = set.files.iter().any(|f| {
        [f.old_path.as_deref(), f.new_path.as_deref()]
            .into_iter()
            .flatten()
            .any(|p| p.starts_with('/'))
    });
    if absolute {
        // No git form (a/ and b/ prefixes make it relative): `render::convert` refuses it.
        return;
    }
    let text = render::to_unified(&set);
    let reopts = opts.with_strip(None);
    let back = unified::parse(&text, 0, &reopts).expect("a rendered diff parses");
    assert_eq!(without_lines(back.into_owned()), without_lines(set.clone()));
    if set.files.iter().all(|f| f.op != FileOp::Copy) {
        if let Ok(rev) = transform::reverse(set.clone()) {
            assert_eq!(transform::reverse(rev).expect("reversible twice"), set);
        }
    }
});
