// Types of @apply-patch/apply-patch (lib/index.js). Written by hand: the package has no build
// step. The report types are the `--json` objects of the command line (README "The report").

/** A patch format the command line detects, or `format` forces. */
export type Format = 'agent' | 'unified' | 'json' | 'blocks';

/** How durable a commit is (README "Durability"). */
export type Durability = 'full' | 'fsync' | 'atomic';

/** The options of {@link applyPatch}: the command line's flags, spelled in JavaScript. */
export interface ApplyOptions {
  /** `--check`: plan only, write nothing. */
  check?: boolean;
  /** `--diff`: the report carries the resulting unified diff as `diff`. */
  diff?: boolean;
  /** `--reverse`: apply the inverse of a unified diff. */
  reverse?: boolean;
  /** `-p N`: strip N leading path components of a unified diff's paths. */
  strip?: number;
  /** `--format`: skip detection. */
  format?: Format;
  /** `--recount`: ignore the hunk line counts of unified diffs. */
  recount?: boolean;
  /** `--unidiff-zero`: accept zero-context hunks, placed at their line numbers. */
  unidiffZero?: boolean;
  /**
   * `--path FILE`: the file every SEARCH/REPLACE block edits (its lines outside the blocks are
   * then prose); SEARCH/REPLACE blocks only.
   */
  path?: string;
  /** `--base HEX`: the Base of the `path` file; the blocks' line hints are then trusted. */
  base?: string;
  /** `--directory DIR`: prefix every path of the patch with DIR. */
  directory?: string;
  /** `--include GLOB`: only apply the files that match (one glob or several). */
  include?: string | readonly string[];
  /** `--exclude GLOB`: skip the files that match. */
  exclude?: string | readonly string[];
  /** `--window N`: how many lines from its hint a match still counts as near (default 20). */
  window?: number;
  /**
   * `--fuzz N`: when a hunk is found nowhere, ignore up to N outer context lines at each end,
   * taking the rest only where it is unique in the whole file (default 2; 0 turns it off).
   */
  fuzz?: number;
  /** `--strict-base`: a diff's `index` blob id that does not match the file is `stale_file`. */
  strictBase?: boolean;
  /** `--protect GLOB`: refuse (`protected_file`) to touch the files that match. */
  protect?: string | readonly string[];
  /** `--allow-notebooks`: allow patching `.ipynb` files. */
  allowNotebooks?: boolean;
  /** `--strict-balance`: refuse (`unbalanced_edit`) an edit that unbalances a balanced file. */
  strictBalance?: boolean;
  /** `--index`: apply to the work tree and the git index together. */
  index?: boolean;
  /** `--cached`: apply to the git index only. */
  cached?: boolean;
  /** `--3way`: merge from the diff's base blob when a hunk does not apply. */
  threeWay?: boolean;
  /** `--conflict-markers` (with `threeWay`): write conflicts with markers instead of refusing. */
  conflictMarkers?: boolean;
  /** `--rebase`: merge a patch whose `*** Base:` is stale onto the file as it is now. */
  rebase?: boolean;
  /** `--preview`: plan, keep the plan for {@link confirm} (`report.preview`), write nothing. */
  preview?: boolean;
  /** `--post-check CMD`: run `sh -c CMD` in the root after writing (`report.verification`). */
  postCheck?: string;
  /** `--rollback-on-fail` (with `postCheck`): revert the change when the check fails. */
  rollbackOnFail?: boolean;
  /** `--formatter GLOB=CMD` (repeatable): pipe each written file matching GLOB through `sh -c CMD` in the root before the commit; a failure refuses (`formatter_failed`). */
  formatter?: string | string[];
  /** `--formatter-timeout SECS`: how long one formatter run may take (default 600). */
  formatterTimeout?: number;
  /** `--max-risk N`: refuse (`risk_exceeded`) a patch whose risk score is above N. */
  maxRisk?: number;
  /** `--durability`: `full` (default, or `APPLY_PATCH_DURABILITY`), `fsync` or `atomic`. */
  durability?: Durability;
}

/** The options of {@link read}: a range of lines, or the function around one line. */
export interface ReadOptions {
  /** `"A:B"`, `"A:"`, `":B"`, `"A"` (1-based, inclusive), or `[A, B]`. */
  lines?: string | readonly [number, number];
  /** The function (else block, else element) enclosing this 1-based line. */
  around?: number;
}

/** One edit of a JSON edit request (README "JSON edit requests"). */
export type Edit =
  | { op: 'replace'; path: string; old: string; new: string; replace_all?: boolean }
  | {
      op: 'line_range';
      path: string;
      start_line: number;
      end_line: number;
      expected: string;
      new_content: string;
    }
  | { op: 'insert'; path: string; after_line: number; content: string }
  | { op: 'append'; path: string; content: string }
  | { op: 'create'; path: string; content: string }
  | { op: 'delete'; path: string };

/** A JSON edit request; `base` maps a path to its version (`read`'s `base`). */
export interface EditRequest {
  edits: readonly Edit[];
  base?: Readonly<Record<string, string>>;
}

/** What {@link applyPatch} takes: patch text, its bytes, or a JSON edit request. */
export type PatchInput = string | Uint8Array | EditRequest;

export type FileOp = 'add' | 'delete' | 'modify' | 'rename' | 'copy' | 'mode';

/** The ladder level a hunk was placed at, strictest first. */
export type Level = 'exact' | 'trailing_whitespace' | 'whitespace' | 'unicode';

export type ErrorCode =
  | 'parse_error'
  | 'usage'
  | 'path_escape'
  | 'is_directory'
  | 'file_not_found'
  | 'file_exists'
  | 'binary_file'
  | 'invalid_utf8'
  | 'unsupported_file'
  | 'protected_file'
  | 'stale_file'
  | 'context_not_found'
  | 'ambiguous_match'
  | 'overlapping_hunks'
  | 'already_applied'
  | 'expected_mismatch'
  | 'index_mismatch'
  | 'merge_conflict'
  | 'unbalanced_edit'
  | 'risk_exceeded'
  | 'not_read'
  | 'unknown_preview'
  | 'post_check_failed'
  | 'formatter_failed'
  | 'busy'
  | 'permission_denied'
  | 'io_error'
  | 'rollback_failed';

export type WarningCode =
  | 'fuzzy_match'
  | 'fuzz'
  | 'offset'
  | 'already_applied'
  | 'base_mismatch'
  | 'unbalanced_edit'
  | 'recovered'
  | 'cleanup'
  | 'merged'
  | 'rebased'
  | 'changed_since_read'
  | 'later_edit'
  | 'index_unreadable';

/** Where one hunk went. */
export interface HunkReport {
  /** 1-based hunk number within the file. */
  hunk: number;
  /** 1-based first line of the hunk's old side in the original file (an insertion: the line it went after). */
  line: number;
  level: Level;
  /** Outer context lines ignored to place the hunk (fuzz), both ends together; 0 when none. */
  fuzz: number;
  /** Distance from the hunk's drift-adjusted line-number hint; `null` without a hint. */
  offset: number | null;
}

/** The edited region of a modified file, ±3 lines, numbered as in the new file. */
export interface Snippet {
  start_line: number;
  lines: string[];
}

export interface FileReport {
  path: string;
  old_path?: string;
  op: FileOp;
  old_sha256?: string;
  new_sha256?: string;
  hunks: HunkReport[];
  snippet?: Snippet;
  /** With `strictBalance`: what the balance check vouched for. */
  balance?: { status: string; problem?: Record<string, unknown>; reason?: string };
}

export interface Warning {
  code: WarningCode;
  message: string;
  path?: string;
  hunk?: number;
}

export interface NumberedLine {
  line: number;
  text: string;
}

/** The file's text nearest to a hunk that was not found. */
export interface Nearest {
  start_line: number;
  lines: NumberedLine[];
  /** The first difference, in words. */
  difference?: string | null;
  /** 0 to 1. */
  similarity: number;
}

/** One place an ambiguous hunk matched, and what selects it when sent again. */
export interface Candidate {
  line: number;
  context: NumberedLine[];
  /** An `@@` line (agent or unified hunk), or a `line_range` edit (JSON `replace`). */
  select?: string | Record<string, unknown>;
}

/** The `error` object of a report. */
export interface ReportError {
  code: ErrorCode;
  message: string;
  path?: string;
  hunk?: number;
  expected?: string[];
  nearest?: Nearest;
  candidates?: Candidate[];
  /** The next step to take. */
  hint?: string;
  /** Per code: `stale_file` `expected`/`actual`, a kept `chip`, `parse_error` `line`/`column`, … */
  details?: Record<string, unknown>;
}

export interface RiskFactor {
  path: string;
  factor: string;
  points: number;
}

/** The risk score of a change (README "Risk score"). */
export interface Risk {
  score: number;
  files: number;
  lines_inserted: number;
  lines_deleted: number;
  factors: RiskFactor[];
}

/** The outcome of `postCheck`. */
export interface Verification {
  command: string;
  status: 'passed' | 'failed' | 'timed_out';
  exit_code: number | null;
  stdout_tail: string;
  stderr_tail: string;
  rolled_back: boolean;
}

/** The report of {@link applyPatch} (`apply-patch --json`). */
export interface Report {
  ok: boolean;
  files: FileReport[];
  warnings: Warning[];
  /** With `diff: true` (and `preview: true`). */
  diff?: string;
  error: ReportError | null;
  /** With `maxRisk` and `preview`. */
  risk?: Risk;
  /** With `postCheck`. A failed check without `rollbackOnFail` still resolves (the change is written): look here. */
  verification?: Verification;
  /** With `preview: true`: the id to {@link confirm}. */
  preview?: string;
}

/** What {@link read} resolves with (`apply-patch read --json`). */
export interface ReadReport {
  ok: true;
  path: string;
  /** The version to send back as `*** Base:` (or a JSON request's `base`). */
  base: string;
  sha256: string;
  total_lines: number;
  start_line: number;
  end_line: number;
  lines: string[];
  line_ending: 'lf' | 'crlf' | 'mixed' | 'none';
  final_newline: boolean;
  bom: boolean;
  error: null;
  /** With `around`: what was found around the line. */
  around?: {
    line: number;
    start_line: number;
    end_line: number;
    opening_line: string;
    kind: string;
    lang: string;
    fallback: boolean;
  };
}

/** A note of the transaction layer (recovery, a clean-up step that failed). */
export interface TransactionWarning {
  code: string;
  message: string;
  path?: string;
}

/** What {@link undo} resolves with (`apply-patch undo --json`). */
export interface UndoReport {
  ok: true;
  /** The transaction reverted; `null` when there was none. */
  undone: string | null;
  files: string[];
  recovered: TransactionWarning[];
  warnings: TransactionWarning[];
  error: null;
}

/** What {@link confirm} resolves with (`apply-patch confirm ID --json`). */
export interface ConfirmReport {
  ok: true;
  preview: string;
  files: FileReport[];
  warnings: Warning[];
  error: null;
}

/**
 * A refusal or failure. Nothing in the tree has changed (except as `exitStatus` 3 says).
 * `message` is the report's message, `code` its stable code.
 */
export declare class ApplyPatchError extends Error {
  readonly name: 'ApplyPatchError';
  /** The stable error code (`context_not_found`, `stale_file`, `usage`, …). */
  readonly code: ErrorCode;
  /** The next step to take, or `null`. */
  readonly hint: string | null;
  /** The whole `error` object (`path`, `hunk`, `expected`, `nearest`, `candidates`, `details`). */
  readonly details: ReportError;
  /** The whole report (`files` that would have been touched, `warnings`). */
  readonly report: Report;
  /** The command's exit status: 1 refused, 2 usage error, 3 rollback failed. */
  readonly exitStatus: number;
}

/**
 * Apply `patch` to the folder `root` (all files or none). Resolves with the report; rejects
 * with {@link ApplyPatchError} on a refusal (nothing written), with a `TypeError` on a bad
 * argument or unknown option.
 */
export declare function applyPatch(
  root: string | URL,
  patch: PatchInput,
  options?: ApplyOptions,
): Promise<Report>;

/** Read `path` (relative to `root`) with its version, for `*** Base:`. */
export declare function read(
  root: string | URL,
  path: string,
  options?: ReadOptions,
): Promise<ReadReport>;

/** Revert the last patch applied under `root`. */
export declare function undo(root: string | URL): Promise<UndoReport>;

/** Write the change a `preview: true` call kept under `id`, once (`unknown_preview` after). */
export declare function confirm(root: string | URL, id: string): Promise<ConfirmReport>;

/**
 * The path of the native executable this package runs: `APPLY_PATCH_BINARY` when set, else
 * the installed platform package's. Throws when neither is there, saying why.
 */
export declare function binaryPath(): string;
