//! Stage: parse (one patch per input, SPEC §1). Input that holds more than one patch — an
//! agent envelope and a diff (one quoted in prose counts), two envelopes, two heredocs — is
//! refused, naming the line where each begins: one run applies one patch, and a second one
//! must never be dropped silently, nor win over the first. Pure; it looks only at line
//! starts, through detection, never at a patch body.
//!
//! What counts as a second patch, per format of the first (`grammar/README.md` says the same):
//! - an agent envelope ends at its `*** End Patch` line; after it, any line where detection
//!   would start a patch (`*** Begin Patch`, `diff --git `, `--- ` then `+++ `, `{`, also
//!   inside a second heredoc) starts a second patch;
//! - a JSON edit request ends at its closing `}`; the strings inside it may hold any text
//!   (a `"new"` holding `*** Begin Patch` is one patch);
//! - a unified diff is every file patch from its first header to the end of its input (or of
//!   its heredoc): its many `diff --git` sections, with prose between them (an e-mail series),
//!   are one patch. In that prose, and after the last file patch, an agent envelope or a JSON
//!   request starts a second patch, and so does a heredoc opener before the next header.
//!
//! Prose before the first patch (an e-mail, a commit message, an agent's explanation) is
//! skipped as before: detection takes the first patch start.

use super::detect::{describe, detect, heredoc_before};
use super::position::count_newlines;
use super::ParseError;
use crate::model::Format;

/// Where a patch starts: its format and the byte offset of its first line.
pub(crate) type Start = (Format, usize);

/// Refuse `input` when a patch starts anywhere after byte `end`, where the `first` patch
/// ended (a line start, or just after a JSON request's closing `}`).
pub(crate) fn nothing_after(input: &[u8], first: Start, end: usize) -> Result<(), ParseError> {
    let end = end.min(input.len());
    match detect(&input[end..]) {
        Some(second) => Err(two_patches(
            input,
            first,
            (second.format, end + second.start),
        )),
        None => Ok(()),
    }
}

/// Refuse the prose `input[from..to]` that a unified diff skipped between or after its file
/// patches (`to`: the next file header, or the end of the diff) when it starts a patch of
/// another format, or opens a heredoc that holds the file patch at `to`.
pub(crate) fn nothing_in_prose(
    input: &[u8],
    first: Start,
    from: usize,
    to: usize,
) -> Result<(), ParseError> {
    let prose = &input[from.min(to)..to];
    if let Some(second) = detect(prose) {
        return Err(two_patches(
            input,
            first,
            (second.format, from + second.start),
        ));
    }
    if to < input.len() && heredoc_before(prose, prose.len()).is_some() {
        return Err(two_patches(input, first, (Format::Unified, to)));
    }
    Ok(())
}

/// Refuse the prose `input[from..to]` around SEARCH/REPLACE blocks (SPEC §4b: every line
/// outside a block is prose) when an agent envelope or a unified diff starts in it: blocks
/// first and an envelope after them must not apply the blocks and drop the envelope.
pub(crate) fn no_patch_in_block_prose(
    input: &[u8],
    first: Start,
    from: usize,
    to: usize,
) -> Result<(), ParseError> {
    let prose = &input[from.min(to)..to.min(input.len())];
    match super::detect::envelope_or_diff(prose) {
        Some(second) => Err(two_patches(
            input,
            first,
            (second.format, from + second.start),
        )),
        None => Ok(()),
    }
}

/// The refusal of input holding a second patch: at the line where it starts, naming both.
fn two_patches(input: &[u8], first: Start, second: Start) -> ParseError {
    let line = |at: usize| 1 + count_newlines(&input[..at.min(input.len())]);
    ParseError::at(
        input,
        second.1,
        format!(
            "the input holds more than one patch: {} {} at line {} and {} at line {}; one \
             run applies one patch",
            describe(first.0),
            // "SEARCH/REPLACE blocks start", "an agent patch starts"
            if first.0 == Format::Blocks {
                "start"
            } else {
                "starts"
            },
            line(first.1),
            describe(second.0),
            line(second.1)
        ),
    )
    .with_hint(
        "send each patch in a run of its own; a patch quoted in prose counts too: remove the \
         one that is not meant to be applied",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::{parse, ParseOptions};

    fn refusal(input: &str) -> ParseError {
        parse(input.as_bytes(), &ParseOptions::default()).expect_err("two patches")
    }

    fn parses(input: &str) {
        if let Err(e) = parse(input.as_bytes(), &ParseOptions::default()) {
            panic!("{input:?}: {}", e.render());
        }
    }

    const ENVELOPE: &str = "*** Begin Patch\n*** Delete File: a\n*** End Patch\n";
    const DIFF: &str = "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n";

    #[test]
    fn a_diff_quoted_in_prose_before_an_envelope_is_a_second_patch() {
        let err = refusal(&format!(
            "Here is what I changed:\n{DIFF}\nand the patch:\n{ENVELOPE}"
        ));
        assert_eq!(
            err.message,
            "the input holds more than one patch: a unified diff starts at line 2 and an agent \
             patch at line 10; one run applies one patch"
        );
        assert_eq!((err.line, err.line_text.as_str()), (10, "*** Begin Patch"));
    }

    #[test]
    fn an_envelope_then_a_diff_two_envelopes_and_two_json_requests() {
        let err = refusal(&format!("{ENVELOPE}\nAlso:\n{DIFF}"));
        assert!(err
            .message
            .contains("an agent patch starts at line 1 and a unified diff at line 6"));
        let err = refusal(&format!("{ENVELOPE}{ENVELOPE}"));
        assert!(
            err.message.contains("line 1 and an agent patch at line 4"),
            "{err}"
        );
        let json = r#"{"edits": [{"op": "delete", "path": "a"}]}"#;
        let err = refusal(&format!("{json}\n{json}\n"));
        assert!(
            err.message.contains("a JSON edit request at line 2"),
            "{err}"
        );
    }

    #[test]
    fn two_heredocs_are_two_patches_whatever_their_format() {
        let agent = format!("apply_patch <<'EOF'\n{ENVELOPE}EOF\n");
        let diff = format!("apply_patch <<'EOF'\n{DIFF}EOF\n");
        for (input, second) in [
            (format!("{agent}{agent}"), 7),
            (format!("{diff}{diff}"), 10),
            (format!("{agent}\n{diff}"), 8),
            (format!("{diff}{agent}"), 10),
        ] {
            let err = refusal(&input);
            assert!(
                err.message
                    .starts_with("the input holds more than one patch"),
                "{err}"
            );
            assert_eq!(err.line, second, "{input}");
        }
    }

    #[test]
    fn an_envelope_or_a_diff_in_the_prose_around_blocks_is_a_second_patch() {
        let blocks = "f.txt\n<<<<<<< SEARCH\na\n=======\nA\n>>>>>>> REPLACE\n";
        let envelope = "*** Begin Patch\n*** Update File: f.txt\n@@\n-b\n+B\n*** End Patch\n";
        let diff = "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n";
        let after = refusal(&format!("{blocks}\nand also:\n{envelope}"));
        assert!(
            after
                .message
                .contains("SEARCH/REPLACE blocks start at line 2 and an agent patch at line 9"),
            "{}",
            after.message
        );
        let between = refusal(&format!("{diff}\n{blocks}"));
        assert!(
            between.message.contains("a unified diff"),
            "{}",
            between.message
        );
        let twice = format!("{blocks}{blocks}");
        assert!(
            refusal(&format!("{blocks}{diff}{blocks}"))
                .message
                .contains("line 7"),
            "{}",
            refusal(&format!("{blocks}{diff}{blocks}")).message
        );
        // Prose, code snippets (a `{` line) and fences between blocks stay prose.
        parses(&format!(
            "Sure:\n{blocks}\n```js\n{{ a: 1 }}\n```\n{twice}done\n"
        ));
    }

    #[test]
    fn one_patch_with_many_sections_prose_or_quoted_text_inside_stays_one() {
        // A git diff of several files, with an e-mail between two commits' file patches.
        parses(&format!(
            "{DIFF}-- \n2.40.0\n\nFrom: a\nSubject: [PATCH 2/2]\n\n{DIFF}"
        ));
        // Patch text inside the patch: an added file holding an envelope, a JSON string.
        parses("*** Begin Patch\n*** Add File: doc.md\n+*** Begin Patch\n+diff --git a/x b/x\n+{\n*** End Patch\n");
        parses(r#"{"edits": [{"op": "create", "path": "d", "content": "*** Begin Patch\n"}]}"#);
        // A diff whose lines mention the markers (context and inserted lines).
        parses("--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n *** Begin Patch\n-a\n+{\n");
        // Prose after the patch that starts no patch.
        parses(&format!("{ENVELOPE}\nThat deletes a.\n"));
        parses(&format!("{DIFF}\nThanks,\n-- \nme\n"));
    }
}
