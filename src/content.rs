//! A file's content as the pipeline carries it from plan to commit: one buffer, or — for a
//! large edited file — the recipe [`crate::splice`] made of it: runs of the old content and
//! the bytes between them. A recipe is written to disk and hashed piece by piece; it is
//! joined into one buffer only when someone asks for the bytes in one piece (a diff, a
//! second edit of the same file, a memory tree), once.
//!
//! Cheap to clone (shared), immutable, and it remembers its SHA-256 once taken.

use std::fmt;
use std::io::{self, IoSlice, Write};
use std::ops::Deref;
use std::sync::{Arc, OnceLock};

/// A file's bytes, whole or as a recipe (see the module docs).
#[derive(Clone)]
pub struct Content(Arc<Inner>);

struct Inner {
    data: Data,
    sha256: OnceLock<[u8; 32]>,
}

enum Data {
    Bytes(Vec<u8>),
    Spliced {
        /// The content the runs copy from.
        base: Content,
        runs: Runs,
        /// The bytes in one piece, once someone asked for them.
        joined: OnceLock<Vec<u8>>,
    },
}

/// How to build new bytes from a base: ranges of the base and of bytes of our own, in
/// order. Made by [`Recorder`]; made whole by [`Content::spliced`].
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Runs {
    runs: Vec<Run>,
    /// The bytes that are not a run of the base (inserted lines, endings, short pieces).
    added: Vec<u8>,
    len: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Run {
    Base { start: usize, end: usize },
    Added { start: usize, end: usize },
}

/// A piece of the base shorter than this is copied into the recipe's own bytes: a run costs
/// more to keep and to write than a short copy.
const MIN_BASE_RUN: usize = 256;

/// The SHA-256 of a file's bytes: known, or the one its content takes (or took) when first
/// asked, with the bytes at hand.
#[derive(Clone)]
pub enum ContentHash {
    Known([u8; 32]),
    Of(Content),
}

impl ContentHash {
    /// The hash (taken now, or waited for, when it is not known yet).
    pub fn get(&self) -> [u8; 32] {
        match self {
            ContentHash::Known(hash) => *hash,
            ContentHash::Of(content) => content.sha256(),
        }
    }

    /// The bytes the hash is of, when they are at hand.
    pub fn content(&self) -> Option<&Content> {
        match self {
            ContentHash::Known(_) => None,
            ContentHash::Of(content) => Some(content),
        }
    }
}

impl From<[u8; 32]> for ContentHash {
    fn from(hash: [u8; 32]) -> Self {
        ContentHash::Known(hash)
    }
}

impl PartialEq for ContentHash {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

impl Eq for ContentHash {}

impl fmt::Debug for ContentHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sha256:{}", crate::hash::hex(&self.get()))
    }
}

/// Writes go out this many pieces at a time (the usual `IOV_MAX`).
const WRITE_BATCH: usize = 1024;

/// Records what is put into it as [`Runs`] of `base`: a slice of `base` stays a reference
/// (merged with the run before it when they touch), anything else is copied.
pub struct Recorder<'b> {
    base: &'b [u8],
    runs: Runs,
}

impl<'b> Recorder<'b> {
    pub fn new(base: &'b [u8]) -> Self {
        Recorder {
            base,
            runs: Runs::default(),
        }
    }

    /// Append `bytes`.
    pub fn put(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        let offset = self.offset_of(bytes);
        let runs = &mut self.runs;
        runs.len += bytes.len();
        // Where the last run of the base stops (0 before any run): bytes that continue it
        // there — the ending after a kept line, most often — extend it.
        let next = match runs.runs.last() {
            Some(Run::Base { end, .. }) => Some(*end),
            None => Some(0),
            Some(Run::Added { .. }) => None,
        };
        if let Some(next) = next {
            let continues = offset == Some(next)
                || (offset.is_none()
                    && bytes.len() <= 16
                    && self.base.get(next..next + bytes.len()) == Some(bytes));
            if continues {
                match runs.runs.last_mut() {
                    Some(Run::Base { end, .. }) => *end += bytes.len(),
                    _ => runs.runs.push(Run::Base {
                        start: 0,
                        end: bytes.len(),
                    }),
                }
                return;
            }
        }
        match offset {
            Some(start) if bytes.len() >= MIN_BASE_RUN => runs.runs.push(Run::Base {
                start,
                end: start + bytes.len(),
            }),
            _ => {
                let start = runs.added.len();
                runs.added.extend_from_slice(bytes);
                let end = runs.added.len();
                match runs.runs.last_mut() {
                    Some(Run::Added { end: last, .. }) if *last == start => *last = end,
                    _ => runs.runs.push(Run::Added { start, end }),
                }
            }
        }
    }

    /// Where `bytes` starts in the base, when it is a slice of it.
    fn offset_of(&self, bytes: &[u8]) -> Option<usize> {
        let base = self.base.as_ptr() as usize;
        let at = bytes.as_ptr() as usize;
        (at >= base && at + bytes.len() <= base + self.base.len()).then(|| at - base)
    }

    pub fn finish(self) -> Runs {
        self.runs
    }
}

impl Runs {
    /// Do the runs stay inside a base of `len` bytes?
    fn fit(&self, len: usize) -> bool {
        self.runs.iter().all(|r| match *r {
            Run::Base { start, end } => start <= end && end <= len,
            Run::Added { start, end } => start <= end && end <= self.added.len(),
        })
    }

    fn pieces<'s>(&'s self, base: &'s [u8]) -> impl Iterator<Item = &'s [u8]> + 's {
        self.runs.iter().map(move |r| match *r {
            Run::Base { start, end } => &base[start..end],
            Run::Added { start, end } => &self.added[start..end],
        })
    }
}

impl Content {
    fn new(data: Data) -> Self {
        Content(Arc::new(Inner {
            data,
            sha256: OnceLock::new(),
        }))
    }

    /// Bytes whose SHA-256 the caller has taken already (checked in debug builds).
    pub fn with_sha256(bytes: Vec<u8>, sha256: [u8; 32]) -> Self {
        let content = Content::from(bytes);
        content.know_sha256(sha256);
        content
    }

    /// The bytes `runs` make of `base` (whose bytes the runs were recorded from).
    ///
    /// # Panics
    /// When a run lies outside `base`: the runs were recorded from other bytes (a bug).
    pub(crate) fn spliced(base: Content, runs: Runs) -> Self {
        assert!(
            runs.fit(base.as_slice().len()),
            "a recipe applied to bytes it was not recorded from"
        );
        Content::new(Data::Spliced {
            base,
            runs,
            joined: OnceLock::new(),
        })
    }

    /// Remember the SHA-256 of these bytes, taken elsewhere (checked in debug builds).
    pub(crate) fn know_sha256(&self, sha256: [u8; 32]) {
        debug_assert_eq!(
            sha256,
            self.hash_pieces(),
            "a content was given the hash of other bytes"
        );
        let _ = self.0.sha256.set(sha256);
    }

    pub fn len(&self) -> usize {
        match &self.0.data {
            Data::Bytes(b) => b.len(),
            Data::Spliced { runs, .. } => runs.len,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Still a recipe: nobody has asked for the bytes in one piece.
    pub fn is_recipe(&self) -> bool {
        matches!(&self.0.data, Data::Spliced { joined, .. } if joined.get().is_none())
    }

    /// The bytes in one piece (a recipe is joined on the first call).
    pub fn as_slice(&self) -> &[u8] {
        match &self.0.data {
            Data::Bytes(b) => b,
            Data::Spliced { base, runs, joined } => joined.get_or_init(|| {
                let mut out = Vec::with_capacity(runs.len);
                runs.pieces(base.as_slice())
                    .for_each(|p| out.extend_from_slice(p));
                out
            }),
        }
    }

    /// The bytes, in order, in as many pieces as they are kept in (no joining).
    pub fn pieces(&self) -> Box<dyn Iterator<Item = &[u8]> + '_> {
        match &self.0.data {
            Data::Bytes(b) => Box::new(std::iter::once(b.as_slice())),
            Data::Spliced { joined, .. } if joined.get().is_some() => {
                Box::new(std::iter::once(self.as_slice()))
            }
            Data::Spliced { base, runs, .. } => Box::new(runs.pieces(base.as_slice())),
        }
    }

    /// The SHA-256 of the bytes: remembered, or taken now piece by piece and remembered.
    pub fn sha256(&self) -> [u8; 32] {
        *self.0.sha256.get_or_init(|| self.hash_pieces())
    }

    /// The SHA-256 when it is known already.
    pub fn known_sha256(&self) -> Option<[u8; 32]> {
        self.0.sha256.get().copied()
    }

    fn hash_pieces(&self) -> [u8; 32] {
        use sha2::Digest;
        let mut hasher = sha2::Sha256::new();
        self.pieces().for_each(|p| hasher.update(p));
        hasher.finalize().into()
    }

    /// Write the bytes to `out`, a recipe piece by piece (vectored writes, no joining).
    pub fn write_to(&self, out: &mut impl Write) -> io::Result<()> {
        let mut batch: Vec<IoSlice<'_>> = Vec::with_capacity(WRITE_BATCH);
        for piece in self.pieces().filter(|p| !p.is_empty()) {
            batch.push(IoSlice::new(piece));
            if batch.len() == WRITE_BATCH {
                write_all_vectored(out, &mut batch)?;
                batch.clear();
            }
        }
        write_all_vectored(out, &mut batch)
    }

    /// The bytes as a buffer of their own (without a copy when this is their only holder
    /// and they are one buffer already).
    pub fn into_vec(self) -> Vec<u8> {
        match Arc::try_unwrap(self.0) {
            Ok(Inner {
                data: Data::Bytes(bytes),
                ..
            }) => bytes,
            Ok(Inner {
                data: Data::Spliced { joined, base, runs },
                ..
            }) => joined.into_inner().unwrap_or_else(|| {
                let mut out = Vec::with_capacity(runs.len);
                runs.pieces(base.as_slice())
                    .for_each(|p| out.extend_from_slice(p));
                out
            }),
            Err(shared) => Content(shared).as_slice().to_vec(),
        }
    }
}

fn write_all_vectored(out: &mut impl Write, batch: &mut [IoSlice<'_>]) -> io::Result<()> {
    let mut slices = batch;
    while !slices.is_empty() {
        match out.write_vectored(slices) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => IoSlice::advance_slices(&mut slices, n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

impl From<Vec<u8>> for Content {
    fn from(bytes: Vec<u8>) -> Self {
        Content::new(Data::Bytes(bytes))
    }
}

impl From<&[u8]> for Content {
    fn from(bytes: &[u8]) -> Self {
        Content::from(bytes.to_vec())
    }
}

impl Default for Content {
    fn default() -> Self {
        Content::from(Vec::new())
    }
}

/// The bytes in one piece (see [`Content::as_slice`]: a recipe is joined).
impl Deref for Content {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        self.as_slice()
    }
}

/// The bytes in one piece (see [`Content::as_slice`]: a recipe is joined).
impl AsRef<[u8]> for Content {
    fn as_ref(&self) -> &[u8] {
        self.as_slice()
    }
}

/// Byte equality, compared piece by piece (no joining).
impl PartialEq for Content {
    fn eq(&self, other: &Self) -> bool {
        if Arc::ptr_eq(&self.0, &other.0) {
            return true;
        }
        if self.len() != other.len() {
            return false;
        }
        if let (Some(a), Some(b)) = (self.known_sha256(), other.known_sha256()) {
            return a == b;
        }
        same_bytes(self.pieces(), other.pieces())
    }
}

impl Eq for Content {}

impl PartialEq<[u8]> for Content {
    fn eq(&self, other: &[u8]) -> bool {
        self.len() == other.len() && same_bytes(self.pieces(), std::iter::once(other))
    }
}

/// Do two sequences of pieces hold the same bytes?
fn same_bytes<'a, 'b>(
    mut a: impl Iterator<Item = &'a [u8]>,
    mut b: impl Iterator<Item = &'b [u8]>,
) -> bool {
    let (mut x, mut y): (&[u8], &[u8]) = (&[], &[]);
    loop {
        while x.is_empty() {
            match a.next() {
                Some(p) => x = p,
                None => break,
            }
        }
        while y.is_empty() {
            match b.next() {
                Some(p) => y = p,
                None => break,
            }
        }
        if x.is_empty() || y.is_empty() {
            return x.is_empty() && y.is_empty();
        }
        let n = x.len().min(y.len());
        if x[..n] != y[..n] {
            return false;
        }
        (x, y) = (&x[n..], &y[n..]);
    }
}

/// Small contents show their bytes (as a byte string); a large one its length and hash (never megabytes of
/// numbers, and a recipe is not joined for it).
impl fmt::Debug for Content {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.len() <= DEBUG_BYTES {
            return write!(f, "b\"{}\"", self.as_slice().escape_ascii());
        }
        write!(
            f,
            "Content({} bytes, sha256:{})",
            self.len(),
            crate::hash::hex(&self.sha256())
        )
    }
}

/// Up to this many bytes, [`Content`]'s `Debug` shows them.
const DEBUG_BYTES: usize = 256;

#[cfg(test)]
mod tests {
    use super::*;

    /// Record `parts` (each a slice of `base` or of other bytes) into a content.
    fn recorded(base: &Content, parts: &[&[u8]]) -> Content {
        let mut rec = Recorder::new(base.as_slice());
        parts.iter().for_each(|p| rec.put(p));
        Content::spliced(base.clone(), rec.finish())
    }

    #[test]
    fn a_recipe_makes_the_bytes_it_recorded_and_keeps_long_runs_as_references() {
        let long: Vec<u8> = (0..2000u32)
            .flat_map(|i| format!("line {i}\n").into_bytes())
            .collect();
        let base = Content::from(long.clone());
        let b = base.as_slice();
        let parts: Vec<&[u8]> = vec![
            &b[..600],
            b"new\n",
            &b[600..700],
            b"\n",
            &b[700..1400],
            &b[5000..],
        ];
        let content = recorded(&base, &parts);
        let expected: Vec<u8> = parts.concat();
        assert!(content.is_recipe());
        assert_eq!(content.len(), expected.len());
        assert_eq!(content.sha256(), crate::hash::sha256(&expected));
        let mut written = Vec::new();
        content.write_to(&mut written).unwrap();
        assert_eq!(written, expected);
        assert!(content == *expected.as_slice());
        assert!(
            content.is_recipe(),
            "hashing, writing and comparing do not join"
        );
        // 600 bytes of base, then "new\n", then 100 bytes of base copied (short, not where
        // the last run stopped), "\n", 700 bytes of base, the tail of the base.
        let Data::Spliced { runs, .. } = &content.0.data else {
            panic!("not a recipe")
        };
        let bases = runs
            .runs
            .iter()
            .filter(|r| matches!(r, Run::Base { .. }))
            .count();
        assert_eq!(bases, 3, "{:?}", runs.runs);
        assert_eq!(content.as_slice(), expected.as_slice());
        assert!(!content.is_recipe());
        assert_eq!(content.clone().into_vec(), expected);
    }

    #[test]
    fn bytes_that_continue_the_base_extend_its_run() {
        let base = Content::from(b"alpha\nbeta\ngamma\n".to_vec());
        let b = base.as_slice();
        // A kept line's content, then its ending from elsewhere (a static "\n").
        let content = recorded(&base, &[&b[..5], b"\n", &b[6..10], b"\n", b"added\n"]);
        let Data::Spliced { runs, .. } = &content.0.data else {
            panic!("not a recipe")
        };
        assert_eq!(
            runs.runs,
            vec![
                Run::Base { start: 0, end: 11 },
                Run::Added { start: 0, end: 6 }
            ]
        );
        assert_eq!(content.as_slice(), b"alpha\nbeta\nadded\n");
    }

    #[test]
    fn equality_is_by_bytes_whatever_the_pieces() {
        let base = Content::from(vec![b'x'; 1000]);
        let b = base.as_slice();
        let a = recorded(&base, &[&b[..300], b"yy", &b[300..]]);
        let mut joined = vec![b'x'; 300];
        joined.extend_from_slice(b"yy");
        joined.extend_from_slice(&[b'x'; 700]);
        assert_eq!(a, Content::from(joined.clone()));
        joined[999] = b'z';
        assert_ne!(a, Content::from(joined));
        assert_ne!(a, base);
        assert_eq!(Content::default(), Content::from(Vec::new()));
    }

    #[test]
    fn debug_shows_small_bytes_and_a_large_content_by_length_and_hash() {
        assert_eq!(
            format!("{:?}", Content::from(b"a\nb".to_vec())),
            "b\"a\\nb\""
        );
        let large = Content::from(vec![b'x'; DEBUG_BYTES + 1]);
        let shown = format!("{large:?}");
        assert!(shown.starts_with("Content(257 bytes, sha256:"), "{shown}");
        assert!(shown.contains(&crate::hash::hex(&large.sha256())));
    }

    #[test]
    fn a_known_hash_is_kept() {
        let bytes = b"abc".to_vec();
        let c = Content::with_sha256(bytes.clone(), crate::hash::sha256(&bytes));
        assert_eq!(c.known_sha256(), Some(crate::hash::sha256(b"abc")));
        assert_eq!(Content::from(bytes).known_sha256(), None);
    }

    /// A writer that takes at most 7 bytes a call: partial vectored writes go on where they
    /// stopped.
    struct Trickle(Vec<u8>);

    impl Write for Trickle {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            let n = buf.len().min(7);
            self.0.extend_from_slice(&buf[..n]);
            Ok(n)
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn partial_writes_are_resumed() {
        let base = Content::from((0..=255u8).cycle().take(5000).collect::<Vec<u8>>());
        let b = base.as_slice();
        let content = recorded(
            &base,
            &[&b[..1000], b"inserted", &b[2000..4000], &b[4000..]],
        );
        let mut out = Trickle(Vec::new());
        content.write_to(&mut out).unwrap();
        assert_eq!(out.0, content.as_slice());
    }
}
