use super::*;
use crate::model::Body;
use crate::parse::{unified, ParseOptions};

fn delta(bytes: Vec<u8>) -> BinaryData {
    BinaryData {
        kind: BinaryKind::Delta,
        size: bytes.len() as u64,
        data: bytes,
    }
}

#[test]
fn delta_copies_and_inserts() {
    // base "hello world" (11), target "world, hello!" (13)
    let d = vec![
        11, 13, // sizes
        0x91, 6, 5, // copy offset 6 size 5: "world"
        2, b',', b' ', // insert ", "
        0x90, 5, // copy offset 0 size 5: "hello"
        1, b'!',
    ];
    assert_eq!(
        apply(b"hello world", &delta(d)).as_deref(),
        Ok(&b"world, hello!"[..])
    );
}

#[test]
fn delta_copy_size_zero_means_64k() {
    let base = vec![7u8; 0x10000];
    let d = vec![0x80, 0x80, 0x04, 0x80, 0x80, 0x04, 0x80];
    assert_eq!(apply(&base, &delta(d)).map(|v| v.len()), Ok(0x10000));
}

#[test]
fn delta_bounds_are_checked() {
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (vec![3, 3, 0x91, 2, 5], "past the end"),
        (vec![3, 3, 5, b'a'], "inside an insert"),
        (vec![3, 3, 0], "reserved opcode"),
        (vec![4, 3, 1, b'a'], "4-byte base"),
        (vec![3, 2, 3, b'a', b'b', b'c'], "more than its target"),
        (vec![3, 4, 1, b'a'], "gives 1 bytes"),
        (vec![3], "inside its header"),
        (vec![3, 3, 0x91], "inside a copy"),
        (vec![0xff; 12], "too large"),
    ];
    for (d, want) in cases {
        let err = apply(b"abc", &delta(d.clone())).expect_err("bad delta");
        assert!(err.contains(want), "{d:?}: {err}");
    }
}

#[test]
fn literal_is_the_data() {
    let lit = BinaryData {
        kind: BinaryKind::Literal,
        size: 2,
        data: vec![0, 1],
    };
    assert_eq!(apply(b"anything", &lit), Ok(vec![0, 1]));
}

fn parse_binary(text: &[u8]) -> Result<BinaryPatch, ParseError> {
    let mut cur = Cursor::new(text, 0);
    git_binary_patch(&mut cur)
}

#[test]
fn encode_then_parse_round_trips() {
    let data: Vec<u8> = (0..300u32).map(|i| (i * 7 % 256) as u8).collect();
    let patch = BinaryPatch {
        forward: BinaryData {
            kind: BinaryKind::Literal,
            size: data.len() as u64,
            data,
        },
        reverse: Some(BinaryData {
            kind: BinaryKind::Literal,
            size: 0,
            data: vec![],
        }),
    };
    let text = encode(&patch);
    assert_eq!(parse_binary(text.as_bytes()), Ok(patch));
}

#[test]
fn refuses_bad_base85_and_sizes() {
    let err = parse_binary(b"GIT binary patch\nliteral 5\nB~~~~~\n\n").expect_err("range");
    assert!(err.message.contains("out of range"), "{}", err.message);
    let err = parse_binary(b"GIT binary patch\nliteral 5\nA00\n\n").expect_err("length");
    assert!(err.message.contains("length letter"), "{}", err.message);
    let err = parse_binary(b"GIT binary patch\nliteral 5\nA0000\"\n\n").expect_err("char");
    assert!(err.message.contains("not a base85"), "{}", err.message);
    let err = parse_binary(b"GIT binary patch\nliteral 99999999999\n").expect_err("size");
    assert!(err.message.contains("size"), "{}", err.message);
    let err = parse_binary(b"GIT binary patch\nliteral 3\nA00000\n\n").expect_err("zlib");
    assert!(err.message.contains("inflate"), "{}", err.message);
    let err = parse_binary(b"GIT binary patch\nnope\n").expect_err("no section");
    assert!(err.message.contains("literal SIZE"), "{}", err.message);
}

/// Real `git diff --binary` output, made in a temporary repository when git is installed.
#[test]
fn real_git_binary_diffs_apply() {
    let Ok(dir) = tempfile::tempdir() else {
        return;
    };
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "-c",
                "init.defaultBranch=main",
            ])
            .args(args)
            .current_dir(dir.path())
            .output()
    };
    if !git(&["init", "-q"]).is_ok_and(|o| o.status.success()) {
        eprintln!("skipping: git is not available");
        return;
    }
    let old: Vec<u8> = (0..4000u32).map(|i| (i % 251) as u8).collect();
    let mut new = old.clone();
    new[100] = 0;
    new.extend_from_slice(b"\0tail");
    let small_new = b"\x00\x01new".to_vec();
    std::fs::write(dir.path().join("big.bin"), &old).expect("write");
    std::fs::write(dir.path().join("small.bin"), b"\x00\x01old").expect("write");
    git(&["add", "."]).expect("git add");
    git(&["commit", "-q", "-m", "base"]).expect("git commit");
    std::fs::write(dir.path().join("big.bin"), &new).expect("write");
    std::fs::write(dir.path().join("small.bin"), &small_new).expect("write");
    let out = git(&["diff", "--binary"]).expect("git diff");
    let set = unified::parse(&out.stdout, 0, &ParseOptions::default()).expect("git's diff parses");
    assert_eq!(set.files.len(), 2);
    let mut kinds = Vec::new();
    for (fp, (before, after)) in set
        .files
        .iter()
        .zip([(&old, &new), (&b"\x00\x01old".to_vec(), &small_new)])
    {
        let Body::Binary(b) = &fp.body else {
            panic!("expected binary data for {}", fp.path());
        };
        kinds.push(b.forward.kind);
        assert_eq!(
            apply(before, &b.forward).as_ref(),
            Ok(after),
            "{}",
            fp.path()
        );
        let rev = b.reverse.as_ref().expect("git writes reverse data");
        assert_eq!(apply(after, rev).as_ref(), Ok(before), "{}", fp.path());
    }
    assert!(
        kinds.contains(&BinaryKind::Delta),
        "git used a delta for the big file"
    );
}
