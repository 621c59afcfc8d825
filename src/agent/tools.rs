//! Stage: agent MCP. The descriptions of the MCP tools: what a model reads before it calls
//! them. They teach the format, the error codes and what to do on each, so they are written
//! for a model, tested to mention every code a tool can return, and quoted in the README.
//!
//! Pure data (the output schemas too); no logic.

/// The instructions' opening (sent once at initialisation); the rest is chosen by
/// [`crate::agent::catalog::instructions`] from the tools offered.
pub const INSTRUCTIONS_INTRO: &str = "\
apply-patch works on the files of one project root: every change lands exactly where it \
uniquely belongs, or nothing is written and the error says what to fix.";

/// The instructions of a server that offers no writing tool.
pub const READ_ONLY_MODE: &str = "\
This server is read-only: `read` a file with numbered lines and its `base` (version); it \
changes nothing.";

/// The instructions' workflow, followed by the writing tools offered.
pub const READ_BEFORE_EDIT: &str = "\
Workflow: call `read` on a file before changing it (the server refuses edits of files this \
session has not read: `not_read`), then change it with";

/// How the instructions name `apply_patch`.
pub const USE_APPLY_PATCH: &str = "`apply_patch` (the agent patch language, best for most edits)";

/// How the instructions name `edit`.
pub const USE_EDIT: &str = "`edit` (JSON edits)";

/// The instructions on `base`.
pub const PASS_BASE: &str = "\
Pass the `base` that `read` returned as `*** Base: HEX` (or `base` in `edit`) so a \
concurrent change is detected.";

/// The instructions on `preview`.
pub const USE_PREVIEW: &str = "\
`preview` shows a change as a diff without writing it; `confirm` writes it.";

/// The instructions on `undo`.
pub const USE_UNDO: &str = "`undo` reverts the last change written.";

/// The instructions on `range`.
pub const USE_RANGE: &str = "`range` finds the function or block around a line.";

/// The instructions on `check_balance`.
pub const USE_CHECK_BALANCE: &str = "`check_balance` checks a file's brackets and quotes.";

/// The instructions' last words: the one result and error shape.
pub const ON_RESULT: &str = "\
Every result is JSON (`structuredContent`, and the same as text); every error is one JSON \
report: `ok: false`, `error` {code, message, path, hunk, expected, nearest, hint} (`usage` \
for invalid arguments). Read `error.hint` and act on it; fix only what the error names.";

/// `read`.
pub const READ: &str = "\
Read a text file of the project with numbered lines. Returns the lines as \
`{number:>6}<TAB>{line}` (the number and the tab are not part of the file; tabs in the file \
are kept as tabs) under a header `PATH  lines A-B of N  *** Base: HEX`, and the same as JSON \
(`structuredContent`: path, base, total_lines, start_line, end_line, lines, line_ending, \
final_newline). Give `start_line`/`end_line` (1-based, inclusive) to read part of a large \
file; without `end_line` at most 2000 lines are served and a last note says where to read \
on. Or give `around: N` to read just the function (else block, else element) enclosing line N, found from the text alone (the JSON adds `around`: line, start_line, end_line, opening_line, kind, lang, fallback); `context_not_found` when no function or block holds the line. Keep `base`: put `*** Base: HEX` right after `*** Update File: PATH` in a patch (or \
`\"base\": {PATH: HEX}` in `edit`) so the change is checked against what you read. \
Errors: `file_not_found` (check the path, relative to the root), `is_directory`, \
`path_escape` (outside the root or in .git/), `binary_file` / `invalid_utf8` (not shown; \
replace or delete the file whole), `usage` (invalid arguments: a line number below 1, \
start_line after end_line or past the end of the file, around with a line range).";

/// What every writing tool says about its result and its errors (a macro so that `concat!`
/// can append it to each description).
macro_rules! on_error {
    () => {
        "\
The result is one JSON report: {ok, files: [{path, op, hunks: [{hunk, line, level, fuzz, \
offset}], snippet}], warnings, risk, error}. On error NOTHING was written; `error` has code, message, \
path, hunk (1-based), expected, nearest (the closest lines of the file, numbered), hint. \
What to do per error code: \
context_not_found: the context or removed lines are not in the file; compare with \
`error.nearest`, read the file again and copy the lines exactly. \
ambiguous_match: the lines occur in several places (`error.candidates`, numbered); each \
candidate's `select` selects it: send the change again with its `*** Base:` line right after \
`*** Update File: PATH` and its `@@` line as the hunk's header (or, for `edit`, that \
line_range edit in place of the replace), or add context lines. A candidate without `select` \
was found with fuzz: make the hunk again with more context. \
`window` (default 20): how many lines from a hunk's line number a match counts as near \
(line numbers choose only under the file's `*** Base:`). `fuzz` (default 2, 0 = off): when a \
hunk is found nowhere, up to that many outer context lines at each end may be ignored, and \
the rest must be unique in the whole file; the report's `fuzz` and a `fuzz` warning say \
which lines were ignored. \
stale_file: the file changed since you read it; read it again and redo the change, or send \
it again with rebase: true to merge it onto the new content. \
merge_conflict: (rebase) your change and the other change touch the same lines \
(`error.details`); read the file again and redo the change. \
not_read: read the file first (`read`), then send the change again. \
already_applied: part of the change is already in the file; read it and send only what is \
missing. \
overlapping_hunks: two hunks change the same lines; merge them into one hunk. \
expected_mismatch: the `expected` lines are not at those line numbers; read again. \
file_exists / file_not_found / is_directory: check the path (Update an existing file, Add a \
new one). \
parse_error: the patch is malformed at `error.details.line`; fix that line. \
path_escape / protected_file / binary_file / invalid_utf8 / unsupported_file: this file \
cannot be changed this way; do not retry it. \
risk_exceeded: the change is larger or more sensitive than allowed; split it or ask the user. \
usage: the arguments are invalid (a missing or mistyped field, a number out of range); \
`error.message` names it; send the call again corrected. \
busy: another change is being written; try again. \
When `error.details.chip` is present, the other hunks would have applied: fix only the hunks \
in `error.details.failed` and send the whole patch again."
    };
}

#[cfg(test)]
const ON_ERROR: &str = on_error!();

/// `apply_patch`.
pub const APPLY_PATCH: &str = concat!(
    "\
Apply a patch to files of the project, all files or none. Best format, the agent patch \
language:\n\
*** Begin Patch\n\
*** Update File: src/app.py\n\
*** Base: 3f2a9c1b0d4e5f60\n\
@@ def greet():\n\
\x20    name = input()\n\
-    print(\"hi\", name)\n\
+    print(\"hello\", name)\n\
\x20    return name\n\
*** Add File: src/new.py\n\
+print(\"new\")\n\
*** Delete File: src/old.py\n\
*** End Patch\n\
In a hunk, context lines start with a space, removed lines with '-', added lines with '+'; \
give about 3 unchanged lines before and after each change, copied exactly from `read` \
(without the line number and its tab). `@@ TEXT` names a line above the change (a def, a \
class) to say where it goes; several `@@` lines narrow step by step. `*** Base: HEX` (from \
`read`) makes sure the file is what you read. `*** Move to: NEW` after Update File renames. \
Git / unified diffs, JSON edit requests and SEARCH/REPLACE blocks are accepted too; for \
blocks (<<<<<<< SEARCH, the file's lines, =======, their replacement, >>>>>>> REPLACE) give \
`path` (the file every block edits) and, to have `:start_line:N` trusted, `base` from \
`read`; each block must match one place in the whole file. Options: rebase (merge onto a \
file that changed since your read), dry_run (check only), max_risk, strict_balance, \
window, fuzz.\n",
    on_error!()
);

/// `edit`.
pub const EDIT: &str = concat!(
    "\
Change files with JSON edits, all or nothing. `edits` is a list of objects: \
{\"op\": \"replace\", \"path\": P, \"old\": S, \"new\": S, \"replace_all\": false} (old must occur \
exactly once in the file unless replace_all); \
{\"op\": \"line_range\", \"path\": P, \"start_line\": N, \"end_line\": N, \"expected\": S, \
\"new_content\": S} (replace lines N..M, 1-based inclusive, numbered as `read` showed them; \
`expected` repeats at least 3 of the current lines); \
{\"op\": \"insert\", \"path\": P, \"after_line\": N, \"content\": S} (0: at the top); \
{\"op\": \"append\", \"path\": P, \"content\": S}; {\"op\": \"create\", \"path\": P, \"content\": S}; \
{\"op\": \"delete\", \"path\": P}. All edits of a file refer to it as you read it (line \
numbers too). `base` maps a path to the `base` that `read` returned. Line-number edits \
(line_range, insert) need a `read` of the file whose line count still matches.\n",
    on_error!()
);

/// `preview`.
pub const PREVIEW: &str = "\
Plan a patch (any format `apply_patch` takes) without writing anything: returns the report \
with the resulting diff and a preview `id`. Show the diff to the user; call `confirm` with \
the id to write exactly that change. The preview expires after one hour and can be \
confirmed once. Errors are those of `apply_patch`.";

/// `confirm`.
pub const CONFIRM: &str = "\
Write a previewed change (`id` from `preview`), exactly as previewed, once. Errors: \
unknown_preview (unknown, already confirmed or expired id: preview again), stale_file (a file \
changed since the preview: read it and preview again), busy (retry), usage (no id).";

/// `range`.
pub const RANGE: &str = "\
Find the function (or block, or markup element) enclosing a line of a file, without reading \
all of it: returns `path:start-end: kind (lang): opening line` and the same as JSON \
(start_line, end_line, kind, lang, opening_line). Then `read` with start_line/end_line to see \
it, or aim a patch's `@@ ANCHOR` at its opening line. `kind`: function (default: the \
innermost function, else block), block or tag. A heuristic, not a parser: check \
`warning`/`fallback` in the result. Errors: context_not_found (the line is in no such range), \
usage (line outside the file, or a kind the language lacks), unsupported_file (binary or too \
large), file_not_found, invalid_utf8, path_escape.";

/// `check_balance`.
pub const CHECK_BALANCE: &str = "\
Check that a file's brackets, markup tags and quotes balance (strings and comments are \
skipped as its language writes them): `balanced`, or the first problem with its line and \
column and what was opened where. Use it after an edit that touched braces or indentation; \
fix the problem it names with another patch. Errors: file_not_found, invalid_utf8, \
path_escape, usage (no path).";

/// `undo`.
pub const UNDO: &str = "\
Undo the last change written in the project (one transaction). When there is nothing to \
undo it succeeds with `undone: null`. Refused when a file changed since that change \
(stale_file: read the file and fix it by hand). Errors: stale_file, busy (retry), usage.";

/// `structuredContent` of `read`: [`crate::agent::read::ReadOutput`], plus `around` when
/// asked for.
pub fn read_output_schema() -> serde_json::Value {
    serde_json::json!({
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "base": {"type": "string", "description": "The version to send back as `*** Base:`."},
            "sha256": {"type": "string"},
            "total_lines": {"type": "integer", "minimum": 0},
            "start_line": {"type": "integer", "minimum": 0},
            "end_line": {"type": "integer", "minimum": 0},
            "lines": {"type": "array", "items": {"type": "string"}},
            "line_ending": {"type": "string", "enum": ["lf", "crlf", "mixed", "none"]},
            "final_newline": {"type": "boolean"},
            "bom": {"type": "boolean"},
            "around": {"type": "object", "properties": {
                "line": {"type": "integer", "minimum": 1},
                "start_line": {"type": "integer", "minimum": 1},
                "end_line": {"type": "integer", "minimum": 1},
                "opening_line": {"type": "string"},
                "kind": {"type": "string"},
                "lang": {"type": "string"},
                "fallback": {"type": "boolean"}
            }}
        },
        "required": ["path", "base", "sha256", "total_lines", "start_line", "end_line", "lines",
                     "line_ending", "final_newline", "bom"]
    })
}

/// `structuredContent` of `range`: [`crate::structure::RangeReport`].
pub fn range_output_schema() -> serde_json::Value {
    serde_json::json!({
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "start_line": {"type": "integer", "minimum": 1},
            "end_line": {"type": "integer", "minimum": 1},
            "opening_line": {"type": "string"},
            "kind": {"type": "string", "enum": ["function", "block", "tag"]},
            "lang": {"type": "string"},
            "fallback": {"type": "boolean"},
            "warning": {"type": "string"}
        },
        "required": ["path", "start_line", "end_line", "opening_line", "kind", "lang", "fallback"]
    })
}

/// `structuredContent` of `check_balance`: [`crate::structure::FileBalance`].
pub fn balance_output_schema() -> serde_json::Value {
    serde_json::json!({
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "lang": {"type": "string"},
            "status": {"type": "string", "enum": ["balanced", "unbalanced", "not_checked"]},
            "problem": {"type": "object"},
            "reason": {"type": "string"}
        },
        "required": ["path", "lang", "status"]
    })
}

/// The warnings and error of every report (SPEC §8).
fn report_parts() -> (serde_json::Value, serde_json::Value) {
    let warnings = serde_json::json!({"type": "array", "items": {
        "type": "object",
        "properties": {"code": {"type": "string"}, "message": {"type": "string"},
                       "path": {"type": "string"}, "hunk": {"type": "integer"}},
        "required": ["code", "message"]
    }});
    let error = serde_json::json!({
        "type": ["object", "null"],
        "properties": {"code": {"type": "string"}, "message": {"type": "string"},
                       "path": {"type": "string"}, "hunk": {"type": "integer"},
                       "hint": {"type": "string"}},
        "required": ["code", "message"]
    });
    (warnings, error)
}

/// `structuredContent` of `apply_patch`, `edit`, `preview` and `confirm`: the report of
/// SPEC §8 with `risk`, `verification`, `preview` and `diff` where they apply.
pub fn report_output_schema() -> serde_json::Value {
    let (warnings, error) = report_parts();
    serde_json::json!({
        "type": "object",
        "properties": {
            "ok": {"type": "boolean"},
            "files": {"type": "array", "items": {
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "old_path": {"type": "string"},
                    "op": {"type": "string",
                           "enum": ["add", "delete", "modify", "rename", "copy", "mode"]},
                    "hunks": {"type": "array", "items": {"type": "object"}},
                    "snippet": {"type": "object"}
                },
                "required": ["path", "op"]
            }},
            "warnings": warnings,
            "error": error,
            "diff": {"type": "string"},
            "risk": {"type": "object"},
            "verification": {"type": "object", "properties": {
                "command": {"type": "string"},
                "status": {"type": "string", "enum": ["passed", "failed", "timed_out"]}
            }},
            "preview": {"type": "string"}
        },
        "required": ["ok", "files", "warnings", "error"]
    })
}

/// `structuredContent` of `undo`: what was undone (`undone: null` when nothing was).
pub fn undo_output_schema() -> serde_json::Value {
    let (warnings, error) = report_parts();
    serde_json::json!({
        "type": "object",
        "properties": {
            "ok": {"type": "boolean"},
            "undone": {"type": ["string", "null"]},
            "files": {"type": "array", "items": {"type": "string"}},
            "recovered": {"type": "array"},
            "warnings": warnings,
            "error": error
        },
        "required": ["ok", "undone", "files", "warnings", "error"]
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writing_tools_teach_every_refusal_code() {
        for code in [
            "context_not_found",
            "ambiguous_match",
            "stale_file",
            "merge_conflict",
            "not_read",
            "already_applied",
            "overlapping_hunks",
            "expected_mismatch",
            "file_exists",
            "file_not_found",
            "parse_error",
            "path_escape",
            "protected_file",
            "risk_exceeded",
            "usage",
            "busy",
            "binary_file",
            "invalid_utf8",
            "unsupported_file",
        ] {
            assert!(ON_ERROR.contains(code), "ON_ERROR does not mention {code}");
        }
        assert!(CONFIRM.contains("unknown_preview"));
        // Line continuations strip leading blanks: the example's context lines must keep
        // their leading space.
        assert!(
            APPLY_PATCH.contains("\n     name = input()\n-    print"),
            "{APPLY_PATCH}"
        );
        assert!(
            APPLY_PATCH.contains("\n     return name\n*** Add File"),
            "{APPLY_PATCH}"
        );
    }

    #[test]
    fn every_tool_names_usage_for_bad_arguments() {
        for (name, text) in [
            ("read", READ),
            ("apply_patch", APPLY_PATCH),
            ("edit", EDIT),
            ("confirm", CONFIRM),
            ("range", RANGE),
            ("check_balance", CHECK_BALANCE),
            ("undo", UNDO),
        ] {
            assert!(text.contains("usage"), "{name} does not mention usage");
        }
        // preview's errors are apply_patch's.
        assert!(PREVIEW.contains("those of `apply_patch`"));
        // A post-check is the operator's, and described only when there is one.
        assert!(!APPLY_PATCH.contains("post_check") && !EDIT.contains("post_check"));
    }

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
