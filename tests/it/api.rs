//! The library as outside code sees it (issue 25 item 6). This binary is outside the crate,
//! so it names types by their public paths and cannot write `#[non_exhaustive]` structs:
//! each type a public signature carries is spelled here at its public path, and the option
//! types are built through their setters. (The whole surface is snapshots/public-api.txt.)

use apply_patch::agent::{HunkStatus, Verification};
use apply_patch::locate::{Fuzz, LineNumbers, LocateOptions};
use apply_patch::parse::ParseOptions;
use apply_patch::pipeline::{apply_bytes, Applied, Mode, Options, StateDir, Target};
use apply_patch::plan::Globs;
use apply_patch::report::{Report, Risk, RiskFactor};
use apply_patch::structure::{self, Around, FileBalance, Lang, RangeError};
use apply_patch::transaction::{Content, ContentHash, NewState, Snapshot, TxnWarningCode};
use apply_patch::tree::MemTree;
use apply_patch::Format;

const PATCH: &[u8] = b"*** Begin Patch\n*** Update File: .env\n@@\n-KEY=1\n+KEY=2\n*** End Patch\n";

#[test]
fn the_types_in_public_signatures_are_named_at_public_paths() {
    let mut tree = MemTree::from_pairs([(".env", "KEY=1\n")]);
    let opts = Options::builder().report_risk(true).build();
    let result = apply_bytes(Target::Memory(&mut tree), PATCH, &opts, Mode::Check);
    let applied: &Applied = result.as_ref().expect("applies");
    let risk: &Risk = applied.risk.as_ref().expect("asked for");
    let factors: &[RiskFactor] = &risk.factors;
    assert!(
        factors.iter().any(|f| f.path == ".env"),
        "a .env file is a sensitive path: {factors:?}"
    );
    let verification: Option<&Verification> = applied.verification.as_ref();
    assert!(verification.is_none(), "no post-check was asked for");
    assert!(Report::from(&result).ok);

    let around: Result<Around, RangeError> =
        structure::around("fn f() {\n    1\n}\n", 2, Lang::Rust);
    assert!(around.is_ok(), "{around:?}");
    let globs = Globs::new(&["secret/**".to_string()]).expect("a valid glob");
    assert_eq!(globs.matching("secret/a"), Some("secret/**"));
    assert_eq!(TxnWarningCode::Recovered.as_str(), "recovered");

    // The snapshot states a plan carries, with their contents.
    let planned = apply_patch::apply::plan(&tree, PATCH, &Options::default()).expect("plans");
    let change = &planned.changes[0];
    assert!(matches!(change.before, Snapshot::File { .. }), "{change:?}");
    let NewState::File { bytes, .. } = &change.after else {
        panic!("an update writes a file: {change:?}");
    };
    let content: &Content = bytes;
    assert_eq!(content.as_slice(), b"KEY=2\n");
    let _: fn(&ContentHash) -> [u8; 32] = ContentHash::get;

    let dir = tempfile::tempdir().expect("temp dir");
    let state: StateDir =
        StateDir::outside_git(dir.path(), dir.path().join("state")).expect("a state place");
    let _ = Options::builder().state(state).build();
    let _: Option<HunkStatus> = None;
}

#[test]
fn the_non_exhaustive_option_types_are_built_with_setters() {
    let locate = LocateOptions::default()
        .with_window(5)
        .with_fuzz(0)
        .with_unidiff_zero(true)
        .with_bytes_only(true)
        .with_ends_with_newline(Some(false))
        .with_line_numbers(LineNumbers::Trusted);
    assert_eq!(
        (
            locate.window,
            locate.fuzz,
            locate.unidiff_zero,
            locate.bytes_only
        ),
        (5, 0, true, true)
    );
    assert_eq!(
        (locate.ends_with_newline, locate.line_numbers),
        (Some(false), LineNumbers::Trusted)
    );
    let parse = ParseOptions::default()
        .with_format(Some(Format::Blocks))
        .with_strip(Some(1))
        .with_recount(true)
        .with_unidiff_zero(true)
        .with_path(Some("f".into()))
        .with_base(Some("0123abcd".into()));
    assert_eq!(
        (parse.format, parse.strip, parse.recount, parse.unidiff_zero),
        (Some(Format::Blocks), Some(1), true, true)
    );
    assert_eq!(
        (parse.path.as_deref(), parse.base.as_deref()),
        (Some("f"), Some("0123abcd"))
    );
    let fuzz = Fuzz::new(2, 1);
    assert_eq!((fuzz.top, fuzz.bottom, fuzz.lines()), (2, 1, 3));
    let balance = FileBalance::new(
        "a.rs",
        Lang::Rust,
        structure::check_balance("{}", Lang::Rust),
    );
    assert_eq!(balance.render(), "a.rs: balanced (rust)\n");
}
