//! What a run learns once per folder and keeps (git's filters with the attributes read per
//! folder, the probes for a nested repository's `.git`) gives each file of a many-file patch
//! the answer of its own folder, whatever order the files come in.

use super::Scratch;

/// One repository object hashes files of folders with different `.gitattributes`, going back
/// and forth between them, each as `git hash-object` does.
#[test]
fn one_repo_hashes_each_folder_with_its_own_attributes() {
    let s = Scratch::new(&[]);
    s.git(&["config", "core.autocrlf", "true"]);
    s.write("raw/.gitattributes", "*.txt -text\n");
    s.write("raw/deep/.gitattributes", "*.txt text\n");
    s.write("keep.txt", "x\n");
    s.commit_all("attrs");
    let repo = s.open();
    let crlf = "one\r\ntwo\r\n";
    let order = [
        "top.txt",
        "raw/a.txt",
        "raw/deep/b.txt",
        "raw/c.txt",
        "other/d.txt",
        "raw/deep/e.txt",
        "top2.txt",
    ];
    for name in order {
        s.write(name, crlf);
    }
    for name in order {
        let ours = repo
            .blob_id_of_worktree_file(name, crlf.as_bytes(), false)
            .unwrap();
        let git = s.git(&["hash-object", name]);
        assert_eq!(ours.to_hex().to_string(), git.trim(), "{name}");
    }
}

/// A patch whose files share folders: a nested repository below a folder already found
/// plain is still refused, and a plain folder after it is not taken for one.
#[test]
fn folders_of_a_many_file_patch_are_probed_for_nested_repositories_each() {
    let s = Scratch::new(&[]);
    for name in ["vendor/a.txt", "vendor/nested/x.txt", "vendor/plain/y.txt"] {
        s.write(name, "old\n");
    }
    s.commit_all("init");
    s.git_in(&s.dir.join("vendor/nested"), &["init", "-q"]);
    let edit = |name: &str| format!("*** Update File: {name}\n@@\n-old\n+new\n");
    let patch = |names: &[&str]| {
        let body: String = names.iter().map(|n| edit(n)).collect();
        format!("*** Begin Patch\n{body}*** End Patch\n")
    };
    let ok = s.apply_patch(
        &["--check"],
        &patch(&["vendor/a.txt", "vendor/plain/y.txt"]),
    );
    assert_eq!(ok.status, 0, "{}{}", ok.stdout, ok.stderr);
    let names = ["vendor/a.txt", "vendor/plain/y.txt", "vendor/nested/x.txt"];
    let run = s.apply_patch(&[], &patch(&names));
    assert_ne!(run.status, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("is inside vendor/nested, a submodule"),
        "{}",
        run.stderr
    );
    assert_eq!(
        std::fs::read_to_string(s.dir.join("vendor/a.txt")).unwrap(),
        "old\n"
    );
}

/// The index is read as git reads it to look at it, without verifying its trailing checksum
/// (git does that only in `git fsck`): an index whose checksum is wrong but whose entries
/// read is used, where git uses it, not reported unreadable. The read under the lock before
/// a write still verifies it.
#[test]
fn the_index_is_read_without_its_checksum_as_git_reads_it() {
    let s = Scratch::new(&[]);
    s.write("a.txt", "one\n");
    s.write("b.txt", "one\n");
    s.commit_all("init");
    let index = s.dir.join(".git/index");
    let mut bytes = std::fs::read(&index).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    std::fs::write(&index, &bytes).unwrap();
    // `git ls-files` reads it (unlike `git status`, it does not write a refreshed index).
    assert_eq!(s.git(&["ls-files"]), "a.txt\nb.txt\n", "git reads it");
    let patch = |name: &str| {
        format!("*** Begin Patch\n*** Update File: {name}\n@@\n-one\n+two\n*** End Patch\n")
    };
    let run = s.apply_patch(&["--json"], &patch("a.txt"));
    assert_eq!(run.status, 0, "{}{}", run.stdout, run.stderr);
    assert!(!run.stdout.contains("index_unreadable"), "{}", run.stdout);
    assert_eq!(
        std::fs::read(&index).unwrap(),
        bytes,
        "a plain apply leaves the index"
    );
    // The read under the lock before writing the index still verifies it.
    let run = s.apply_patch(&["--index", "--json"], &patch("b.txt"));
    assert_ne!(run.status, 0, "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("checksum mismatch"), "{}", run.stdout);
}
