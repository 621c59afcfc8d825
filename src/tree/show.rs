//! How a [`MemTree`] shows itself to a snapshot test: a text listing ([`Display`]) and a JSON
//! object ([`serde::Serialize`]), both deterministic (paths in byte order) and both keeping
//! visible what a diff of two snapshots must not hide: a missing final newline, carriage
//! returns, modes other than `0o644`, symlinks, and binary content (summarised by size and
//! hash, never printed).

use std::fmt::{self, Display, Write as _};

use serde::ser::{SerializeMap as _, Serializer};

use super::{MemEntry, MemTree};

/// The mode of a plain file; any other is shown.
const PLAIN_MODE: u32 = 0o644;

/// How many hex digits of the SHA-256 a binary file shows.
const SHOWN_DIGITS: usize = 16;

/// A file's content as text when it can be shown as text: valid UTF-8 without NUL bytes.
fn as_text(bytes: &[u8]) -> Option<&str> {
    std::str::from_utf8(bytes)
        .ok()
        .filter(|text| !text.contains('\0'))
}

/// The summary that stands for binary content: size and the start of its SHA-256.
fn binary_summary(bytes: &[u8]) -> String {
    let mut sha256 = crate::hash::sha256_hex(bytes);
    sha256.truncate(SHOWN_DIGITS);
    format!("binary, {} bytes, sha256 {sha256}", bytes.len())
}

/// The header's notes for a file: its mode when not the plain one, and what its content is
/// when it is not shown line by line.
fn file_notes(bytes: &[u8], mode: u32) -> Vec<String> {
    let mut notes = Vec::new();
    if mode != PLAIN_MODE {
        notes.push(format!("mode {mode:o}"));
    }
    match as_text(bytes) {
        None => notes.push(binary_summary(bytes)),
        Some("") => notes.push("empty".to_string()),
        Some(_) => {}
    }
    notes
}

/// Text lines as they are, with a carriage return before a line feed shown as `␍` (a snapshot
/// would hide it), and git's marker line after a last line without a newline.
fn write_text(out: &mut fmt::Formatter<'_>, text: &str) -> fmt::Result {
    for line in text.split_inclusive('\n') {
        match line.strip_suffix("\r\n") {
            Some(body) => writeln!(out, "{body}␍")?,
            None => out.write_str(line)?,
        }
    }
    if !text.ends_with('\n') {
        out.write_str("\n\\ No newline at end of file\n")?;
    }
    Ok(())
}

/// Every path in order under a header `=== path`, notes in parentheses, then the content:
///
/// ```text
/// === bin/run (mode 755)
/// #!/bin/sh
/// === data.bin (binary, 4 bytes, sha256 …)
/// === empty.txt (empty)
/// === link -> target (symlink)
/// === notes.txt
/// last line
/// \ No newline at end of file
/// ```
impl Display for MemTree {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (path, entry) in self.entries() {
            match entry {
                MemEntry::Symlink { target } => {
                    writeln!(
                        out,
                        "=== {path} -> {} (symlink)",
                        String::from_utf8_lossy(target)
                    )?;
                }
                MemEntry::File { bytes, mode } => {
                    let notes = file_notes(bytes, *mode);
                    let mut header = format!("=== {path}");
                    if !notes.is_empty() {
                        let _ = write!(header, " ({})", notes.join(", "));
                    }
                    writeln!(out, "{header}")?;
                    if let Some(text) = as_text(bytes).filter(|t| !t.is_empty()) {
                        write_text(out, text)?;
                    }
                }
            }
        }
        Ok(())
    }
}

/// One entry in the JSON form.
#[derive(serde::Serialize)]
#[serde(untagged)]
enum Shown<'a> {
    Text { mode: String, text: &'a str },
    Binary { mode: String, binary: String },
    Symlink { symlink: String },
}

/// A JSON object, path → `{"mode": "644", "text": …}` (or `"binary": "<summary>"`), or
/// `{"symlink": target}`, in path order.
impl serde::Serialize for MemTree {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.entries.len()))?;
        for (path, entry) in self.entries() {
            let shown = match entry {
                MemEntry::Symlink { target } => Shown::Symlink {
                    symlink: String::from_utf8_lossy(target).into_owned(),
                },
                MemEntry::File { bytes, mode } => match as_text(bytes) {
                    Some(text) => Shown::Text {
                        mode: format!("{mode:o}"),
                        text,
                    },
                    None => Shown::Binary {
                        mode: format!("{mode:o}"),
                        binary: binary_summary(bytes),
                    },
                },
            };
            map.serialize_entry(path, &shown)?;
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> MemTree {
        let mut tree = MemTree::from_pairs([
            ("notes.txt", &b"first\nlast"[..]),
            ("dos.txt", b"a\r\nb\r\n"),
            ("data.bin", b"\0\x01\x02\xff"),
            ("empty.txt", b""),
        ]);
        tree.insert_entry(
            "bin/run",
            MemEntry::File {
                bytes: b"#!/bin/sh\n".to_vec(),
                mode: 0o755,
            },
        );
        tree.insert_entry(
            "link",
            MemEntry::Symlink {
                target: b"notes.txt".to_vec(),
            },
        );
        tree
    }

    #[test]
    fn display_lists_every_path_in_order_with_what_a_snapshot_would_hide() {
        let sha = &crate::hash::sha256_hex(b"\0\x01\x02\xff")[..SHOWN_DIGITS];
        let want = format!(
            "=== bin/run (mode 755)\n#!/bin/sh\n\
             === data.bin (binary, 4 bytes, sha256 {sha})\n\
             === dos.txt\na␍\nb␍\n\
             === empty.txt (empty)\n\
             === link -> notes.txt (symlink)\n\
             === notes.txt\nfirst\nlast\n\\ No newline at end of file\n"
        );
        assert_eq!(sample().to_string(), want);
    }

    #[test]
    fn json_shows_text_binary_and_links() {
        let json = serde_json::to_value(sample()).expect("serializes");
        assert_eq!(json["notes.txt"]["text"], "first\nlast");
        assert_eq!(json["bin/run"]["mode"], "755");
        assert_eq!(json["link"]["symlink"], "notes.txt");
        let binary = json["data.bin"]["binary"].as_str().expect("summary");
        assert!(binary.starts_with("binary, 4 bytes, sha256 "), "{binary}");
        let text = serde_json::to_string(&sample()).expect("serializes");
        let at = |key: &str| text.find(&format!("\"{key}\":")).expect("key");
        assert!(
            at("bin/run") < at("data.bin") && at("link") < at("notes.txt"),
            "{text}"
        );
    }

    #[test]
    fn pairs_and_collect_build_the_same_tree() {
        let pairs = [("a.txt", "one\n"), ("b/c.txt", "two\n")];
        let collected: MemTree = pairs.iter().copied().collect();
        assert_eq!(collected, MemTree::from_pairs(pairs));
        assert_eq!(collected.get("b/c.txt"), Some(&b"two\n"[..]));
        assert!(collected.is_dir("b"));
    }
}
