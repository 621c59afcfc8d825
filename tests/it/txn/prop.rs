//! Property: any mix of adds, modifies, deletes and mode changes over a small tree commits to
//! exactly the target tree (emptied folders gone), undo brings back exactly the old tree, and
//! a failure injected at any step leaves exactly the old tree (or, after the commit point,
//! the new one).

use std::path::Path;

use apply_patch::txn::{self, Action, AuditRecord, Change, Failpoint, NewState};
use proptest::prelude::*;

use super::{opts, snap, tree, write};

const POOL: [&str; 6] = [
    "a.txt",
    "b/c.txt",
    "b/d.txt",
    "e/f/g.txt",
    "h/i.txt",
    "h/j/k.txt",
];

/// A path's content: none, or bytes with executable bit or not.
type Slot = Option<(Vec<u8>, bool)>;

fn slot() -> impl Strategy<Value = Slot> {
    proptest::option::of((
        proptest::collection::vec(prop_oneof![Just(b'x'), Just(b'\n'), Just(b'y')], 0..6),
        any::<bool>(),
    ))
}

fn build(root: &Path, slots: &[Slot]) {
    super::git_dir_layout(&root.join(".git"));
    for (path, slot) in POOL.iter().zip(slots) {
        if let Some((bytes, exec)) = slot {
            write(root, path, bytes);
            let mode = if *exec { 0o755 } else { 0o644 };
            crate::util::set_mode(&root.join(path), mode);
        }
    }
}

fn changes(root: &Path, target: &[Slot]) -> Vec<Change> {
    POOL.iter()
        .zip(target)
        .map(|(path, slot)| Change {
            path: path.to_string(),
            before: snap(root, path),
            after: match slot {
                None => NewState::Absent,
                Some((bytes, exec)) => NewState::File {
                    bytes: bytes.clone().into(),
                    mode: if *exec { 0o755 } else { 0o644 },
                    // Both ways in: a hash the caller carries, or one the commit takes.
                },
            },
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn commit_then_undo_round_trips(start in proptest::collection::vec(slot(), 6), target in proptest::collection::vec(slot(), 6), k in 1usize..40) {
        let expected = tempfile::tempdir().expect("temp dir");
        build(expected.path(), &target);
        let new = tree(expected.path());

        let tmp = tempfile::tempdir().expect("temp dir");
        let root = tmp.path().canonicalize().expect("canonical");
        build(&root, &start);
        let old = tree(&root);

        let fp = Failpoint { step: k, action: Action::Fail };
        match txn::commit(&opts(&root, Some(fp)), changes(&root, &target), &AuditRecord::default()) {
            Err(_) => prop_assert_eq!(&tree(&root), &old),
            Ok(done) if done.warnings.is_empty() => prop_assert_eq!(&tree(&root), &new),
            // A failure after the commit point: new content; pruning may not have run.
            Ok(_) => {
                let mut t = tree(&root);
                t.retain(|p, _| !p.ends_with('/'));
                let mut n = new.clone();
                n.retain(|p, _| !p.ends_with('/'));
                prop_assert_eq!(t, n);
                return Ok(());
            }
        }
        txn::commit(&opts(&root, None), changes(&root, &target), &AuditRecord::default()).expect("commit");
        prop_assert_eq!(&tree(&root), &new);
        let undone = apply_patch::transaction::undo(&root).expect("undo");
        if old != new {
            prop_assert!(undone.undone.is_some());
            prop_assert_eq!(&tree(&root), &old);
        }
    }
}
