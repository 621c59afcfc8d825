//! Stage: agent MCP. The descriptions of the MCP tools: what a model reads before it calls
//! them. They teach the format, the error codes and what to do on each, so they are written
//! for a model, tested to mention every code a tool can return, and quoted in the README.
//!
//! Pure data; no logic.

/// The server's instructions (sent once at initialisation).
pub const INSTRUCTIONS: &str = "\
apply-patch edits files in one project root safely: every change lands exactly where it \
uniquely belongs, or nothing is written and the error says what to fix. \
Workflow: call `read` on a file before changing it (the server refuses edits of files this \
session has not read: `not_read`), then change it with `apply_patch` (the agent patch \
language, best for most edits) or `edit` (JSON edits). Pass the `base` that `read` returned \
as `*** Base: HEX` (or `base` in `edit`) so a concurrent change is detected. Every result is \
one JSON report: `ok`, `files`, `warnings`, `error` {code, message, path, hunk, expected, \
nearest, hint}. Read `error.hint` and act on it; fix only what the error names.";

/// `read`.
pub const READ: &str = "\
Read a text file of the project with numbered lines. Returns the lines as \
`{number:>6}<TAB>{line}` (the number and the tab are not part of the file; tabs in the file \
are kept as tabs) under a header `PATH  lines A-B of N  *** Base: HEX`, and the same as JSON \
(`structuredContent`: path, base, total_lines, start_line, end_line, lines, line_ending, \
final_newline). Give `start_line`/`end_line` (1-based, inclusive) to read part of a large \
file. Keep `base`: put `*** Base: HEX` right after `*** Update File: PATH` in a patch (or \
`\"base\": {PATH: HEX}` in `edit`) so the change is checked against what you read. \
Errors: `file_not_found` (check the path, relative to the root), `is_directory`, \
`path_escape` (outside the root or in .git/), `binary_file` / `invalid_utf8` (not shown; \
replace or delete the file whole), `usage` (start_line past the end of the file).";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_description_names_its_error_codes() {
        for code in [
            "file_not_found",
            "is_directory",
            "path_escape",
            "binary_file",
            "invalid_utf8",
            "usage",
        ] {
            assert!(READ.contains(code), "READ does not mention {code}");
        }
    }
}
