'use strict';
// The JavaScript API: each call runs the native `apply-patch` executable once with `--json`
// and hands back the one JSON object it prints (the report). A report with `ok: false`
// rejects the promise with ApplyPatchError; nothing in the tree has changed then. The patch
// is written to the executable's standard input, never put on its command line: an argument
// has a size limit, and the command line takes an argument for a file name when one of that
// name exists. This layer adds no behaviour of its own: the options are the command line's
// flags, spelled in JavaScript.

const { spawn } = require('node:child_process');
const { fileURLToPath } = require('node:url');
const { binaryPath, spawnFailure } = require('./binary.js');

/** A refusal or failure, with the stable error code of the report (README "The report"). */
class ApplyPatchError extends Error {
  constructor(report, exitStatus) {
    const error = (report && report.error) || {};
    super(typeof error.message === 'string' ? error.message : 'apply-patch refused the call');
    this.name = 'ApplyPatchError';
    this.code = typeof error.code === 'string' ? error.code : 'unknown';
    this.hint = typeof error.hint === 'string' ? error.hint : null;
    this.details = error;
    this.report = report;
    this.exitStatus = exitStatus;
  }
}

// Each option of applyPatch: its command-line flag and the kind of value it takes.
const APPLY_OPTIONS = {
  check: ['--check', 'flag'],
  diff: ['--diff', 'flag'],
  reverse: ['--reverse', 'flag'],
  strip: ['-p', 'count'],
  format: ['--format', 'text'],
  recount: ['--recount', 'flag'],
  unidiffZero: ['--unidiff-zero', 'flag'],
  path: ['--path', 'text'],
  base: ['--base', 'text'],
  directory: ['--directory', 'text'],
  include: ['--include', 'texts'],
  exclude: ['--exclude', 'texts'],
  window: ['--window', 'count'],
  fuzz: ['--fuzz', 'count'],
  strictBase: ['--strict-base', 'flag'],
  protect: ['--protect', 'texts'],
  allowNotebooks: ['--allow-notebooks', 'flag'],
  strictBalance: ['--strict-balance', 'flag'],
  index: ['--index', 'flag'],
  cached: ['--cached', 'flag'],
  threeWay: ['--3way', 'flag'],
  conflictMarkers: ['--conflict-markers', 'flag'],
  rebase: ['--rebase', 'flag'],
  preview: ['--preview', 'flag'],
  postCheck: ['--post-check', 'text'],
  rollbackOnFail: ['--rollback-on-fail', 'flag'],
  formatter: ['--formatter', 'texts'],
  formatterTimeout: ['--formatter-timeout', 'count'],
  maxRisk: ['--max-risk', 'count'],
  durability: ['--durability', 'text'],
};

const READ_OPTIONS = { lines: null, around: null };

function checkedOptions(options, known, call) {
  if (options === undefined || options === null) return {};
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`${call}: options must be an object`);
  }
  for (const key of Object.keys(options)) {
    // A misspelt option (`threeway`, `dry_run`) must not pass silently.
    if (!Object.prototype.hasOwnProperty.call(known, key)) {
      throw new TypeError(
        `${call}: unknown option \`${key}\` (known: ${Object.keys(known).join(', ')})`,
      );
    }
  }
  return options;
}

// `what` names the value in the message: "option `strip`", "read's path".
function count(value, what) {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new TypeError(`${what} must be a whole number >= 0, not ${String(value)}`);
  }
  return String(value);
}

function text(value, what) {
  if (typeof value !== 'string') {
    throw new TypeError(`${what} must be a string, not ${typeof value}`);
  }
  return value;
}

/** The command-line arguments of applyPatch's options; `null`/`undefined`/`false` omit one. */
function applyArgs(options) {
  const args = [];
  for (const [name, value] of Object.entries(options)) {
    if (value === undefined || value === null || value === false) continue;
    const [flag, kind] = APPLY_OPTIONS[name];
    const what = `option \`${name}\``;
    if (kind === 'flag') {
      if (value !== true) throw new TypeError(`${what} must be true or false, not ${String(value)}`);
      args.push(flag);
    } else if (kind === 'count') {
      args.push(`${flag}=${count(value, what)}`);
    } else if (kind === 'text') {
      // `--flag=VALUE` keeps a value that starts with `-` a value.
      args.push(`${flag}=${text(value, what)}`);
    } else {
      for (const item of Array.isArray(value) ? value : [value]) {
        args.push(`${flag}=${text(item, what)}`);
      }
    }
  }
  return args;
}

// Hints name options as JavaScript spells them (`rebase: true`, `maxRisk`), not as flags.
const FRONT_END = '--front-end=javascript';

function rootArg(root, call) {
  if (root instanceof URL) return `--root=${fileURLToPath(root)}`;
  if (typeof root !== 'string' || root === '') {
    throw new TypeError(`${call}: root must be a folder path (a non-empty string or a file: URL)`);
  }
  return `--root=${root}`;
}

/** The bytes to send: text as UTF-8, bytes as they are, a JSON edit request serialised. */
function patchInput(patch) {
  if (typeof patch === 'string') return Buffer.from(patch, 'utf8');
  if (patch instanceof Uint8Array) return Buffer.from(patch.buffer, patch.byteOffset, patch.length);
  if (patch !== null && typeof patch === 'object' && !Array.isArray(patch)) {
    return Buffer.from(JSON.stringify(patch), 'utf8');
  }
  throw new TypeError(
    'applyPatch: patch must be the patch text (a string), its bytes (a Uint8Array) or a JSON ' +
      'edit request ({ edits: [...] })',
  );
}

/**
 * Run the executable with `args`, `input` on its standard input; resolve with its report,
 * reject with ApplyPatchError when the report says `ok: false`.
 */
function run(args, input) {
  return new Promise((resolve, reject) => {
    const bin = binaryPath();
    const child = spawn(bin, args, { stdio: ['pipe', 'pipe', 'pipe'], windowsHide: true });
    const stdout = [];
    const stderr = [];
    child.stdout.on('data', (chunk) => stdout.push(chunk));
    child.stderr.on('data', (chunk) => stderr.push(chunk));
    // The executable may answer (a usage error) before it has read all of its input.
    child.stdin.on('error', () => {});
    child.on('error', (error) => reject(spawnFailure(bin, error)));
    child.on('close', (status, signal) => {
      const out = Buffer.concat(stdout).toString('utf8');
      let report;
      try {
        report = JSON.parse(out);
      } catch {
        const how = signal ? `was killed by ${signal}` : `exited with status ${status}`;
        const err = Buffer.concat(stderr).toString('utf8').trim();
        reject(new Error(`apply-patch ${how} without a JSON report${err ? `: ${err}` : ''}`));
        return;
      }
      if (report.ok === false) reject(new ApplyPatchError(report, status));
      else resolve(report);
    });
    child.stdin.end(input);
  });
}

/**
 * Run one call: `build` gives the arguments and the input; an argument error it throws
 * becomes a rejection, as the executable's refusals are.
 */
function call(build) {
  try {
    const [args, input] = build();
    return run(args, input);
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * Apply `patch` (agent patch, unified diff, or JSON edit request) to the folder `root`.
 * Resolves with the report; with `check: true` nothing is written.
 */
function applyPatch(root, patch, options) {
  return call(() => {
    const opts = checkedOptions(options, APPLY_OPTIONS, 'applyPatch');
    const args = ['--json', FRONT_END, rootArg(root, 'applyPatch'), ...applyArgs(opts), '-'];
    return [args, patchInput(patch)];
  });
}

/** Read a file with numbered lines and its version (`base`, for `*** Base:`). */
function read(root, path, options) {
  return call(() => {
    const opts = checkedOptions(options, READ_OPTIONS, 'read');
    const args = ['read', '--json', FRONT_END, rootArg(root, 'read')];
    if (opts.lines !== undefined && opts.lines !== null) {
      const { lines } = opts;
      const range = Array.isArray(lines)
        ? `${count(lines[0], 'option `lines`')}:${count(lines[1], 'option `lines`')}`
        : text(lines, 'option `lines`');
      args.push(`--lines=${range}`);
    }
    if (opts.around !== undefined && opts.around !== null) {
      args.push(`--around=${count(opts.around, 'option `around`')}`);
    }
    // `--` keeps a path that starts with `-` a path.
    args.push('--', text(path, "read's path"));
    return [args, undefined];
  });
}

/** Revert the last patch applied under `root`. */
function undo(root) {
  return call(() => [['undo', '--json', FRONT_END, rootArg(root, 'undo')], undefined]);
}

/** Write the change that `applyPatch(…, { preview: true })` kept under `id`, exactly once. */
function confirm(root, id) {
  return call(() => {
    const args = ['confirm', '--json', FRONT_END, rootArg(root, 'confirm'), '--', text(id, "confirm's id")];
    return [args, undefined];
  });
}

module.exports = { applyPatch, read, undo, confirm, binaryPath, ApplyPatchError };
