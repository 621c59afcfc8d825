//! Hashes, in one place for every stage: the SHA-256 of contents (bases, versions, the
//! transaction's checks), its hex form, and git blob ids computed without a repository. No
//! dependency on any other module of the crate, so that the content, report and transaction
//! modules can all use it without depending on one another.

use std::fmt::Write as _;

use sha2::Digest as _;

/// SHA-256 of bytes.
pub fn sha256(bytes: &[u8]) -> [u8; 32] {
    sha2::Sha256::digest(bytes).into()
}

/// Lowercase hex of bytes.
pub fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// Hex of the SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&sha256(bytes))
}

/// The SHA-1 blob id of `bytes` as git computes it (`blob <len>\0` then the bytes), with
/// git's collision detection: None for a known collision attack (no id to compare then).
pub fn git_blob_sha1(bytes: &[u8]) -> Option<String> {
    let mut hasher = sha1dc::Hasher::default();
    hasher.update(format!("blob {}\0", bytes.len()).as_bytes());
    hasher.update(bytes);
    Some(hex(hasher.finalize().ok()?.as_ref()))
}

/// The SHA-256 blob id of `bytes` (a repository with the SHA-256 object format).
pub fn git_blob_sha256(bytes: &[u8]) -> String {
    let mut hasher = sha2::Sha256::new();
    hasher.update(format!("blob {}\0", bytes.len()).as_bytes());
    hasher.update(bytes);
    hex(&hasher.finalize())
}

/// Compare a diff's `index` blob id (maybe abbreviated) with `bytes` hashed as a git blob:
/// SHA-1 for ids of 40 hex digits or fewer, SHA-256 for longer ones. None when the id does
/// not name content (all zeros) or is not hex; else whether it matches, and the full id.
pub fn blob_matches(id: &str, bytes: &[u8]) -> Option<(bool, String)> {
    if id.is_empty() || !id.bytes().all(|b| b.is_ascii_hexdigit()) || id.bytes().all(|b| b == b'0')
    {
        return None;
    }
    let full = if id.len() <= 40 {
        git_blob_sha1(bytes)?
    } else {
        git_blob_sha256(bytes)
    };
    Some((full.starts_with(&id.to_ascii_lowercase()), full))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_hex_of_a_known_text() {
        assert_eq!(
            sha256_hex(b"hello\n"),
            "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"
        );
        assert_eq!(hex(&[0, 0xab, 0xff]), "00abff");
    }

    #[test]
    fn blob_ids_hash_as_git_does() {
        // `git hash-object` of "hello\n".
        let (ok, full) = blob_matches("ce01362", b"hello\n").expect("hex id");
        assert!(ok);
        assert_eq!(full, "ce013625030ba8dba906f756967f9e9ca394464a");
        assert_eq!(blob_matches("0000000", b"x"), None);
        assert_eq!(blob_matches("ce01362", b"other").map(|r| r.0), Some(false));
    }

    /// The core's own blob ids agree with gix's (the git integration's) in both formats.
    #[cfg(feature = "git")]
    #[test]
    fn blob_ids_agree_with_gix() {
        for bytes in [&b""[..], b"hello\n", b"\0binary\xff", &[b'x'; 70_000][..]] {
            for (kind, long) in [(gix::hash::Kind::Sha1, false), (gix::hash::Kind::Sha256, true)] {
                let want = gix::objs::compute_hash(kind, gix::objs::Kind::Blob, bytes)
                    .expect("hashes")
                    .to_hex()
                    .to_string();
                let got = if long {
                    git_blob_sha256(bytes)
                } else {
                    git_blob_sha1(bytes).expect("no collision")
                };
                assert_eq!(got, want);
            }
        }
    }
}
