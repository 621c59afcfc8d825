// The JavaScript API of the installed package, on temporary trees: apply, check, refusals with
// their code and hint, options as flags, read with a version, rebase, preview and confirm,
// post-checks, undo, and the errors for bad arguments and a missing platform package.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

import {
  applyPatch,
  read,
  undo,
  confirm,
  binaryPath,
  ApplyPatchError,
} from '@apply-patch/apply-patch';
import { tree, readText, update, project, noShell } from './helpers.mjs';

const require = createRequire(import.meta.url);
const APP = 'def total(xs):\n    s = 0\n    for x in xs:\n        s += x\n    return s\n';
const CHANGE = update('app.py', ['     for x in xs:', '-        s += x', '+        s += 2 * x']);

test('CommonJS and ESM load the same API', () => {
  const cjs = require('@apply-patch/apply-patch');
  assert.equal(cjs.applyPatch, applyPatch);
  assert.equal(cjs.ApplyPatchError, ApplyPatchError);
  assert.equal(require('@apply-patch/apply-patch/package.json').name, '@apply-patch/apply-patch');
});

test('applyPatch writes the change and reports where each hunk went', async () => {
  const root = tree({ 'app.py': APP });
  const report = await applyPatch(root, CHANGE);
  assert.equal(report.ok, true);
  assert.equal(report.error, null);
  assert.equal(report.files.length, 1);
  const [file] = report.files;
  assert.equal(file.path, 'app.py');
  assert.equal(file.op, 'modify');
  assert.deepEqual(
    file.hunks.map((h) => [h.hunk, h.line, h.level]),
    [[1, 3, 'exact']],
  );
  assert.ok(file.snippet.lines.includes('        s += 2 * x'), JSON.stringify(file.snippet));
  assert.equal(readText(root, 'app.py'), APP.replace('s += x', 's += 2 * x'));
});

test('check plans without writing; bytes, a file: URL root and JSON edits are accepted', async () => {
  const root = tree({ 'app.py': APP });
  const checked = await applyPatch(root, CHANGE, { check: true, diff: true });
  assert.equal(checked.ok, true);
  assert.match(checked.diff, /^\+ {8}s \+= 2 \* x$/m);
  assert.equal(readText(root, 'app.py'), APP, 'check wrote nothing');

  await applyPatch(pathToFileURL(root), new TextEncoder().encode(CHANGE));
  assert.match(readText(root, 'app.py'), /s \+= 2 \* x/);

  const edited = await applyPatch(root, {
    edits: [{ op: 'replace', path: 'app.py', old: 's = 0', new: 's = 10' }],
  });
  assert.equal(edited.files[0].path, 'app.py');
  assert.match(readText(root, 'app.py'), /s = 10/);
});

test('a refusal rejects with ApplyPatchError: code, message, hint, details, report', async () => {
  const root = tree({ 'app.py': APP });
  const wrong = update('app.py', ['     for y in ys:', '-        s += y', '+        s += 2 * y']);
  await assert.rejects(applyPatch(root, wrong), (e) => {
    assert.ok(e instanceof ApplyPatchError && e instanceof Error);
    assert.equal(e.name, 'ApplyPatchError');
    assert.equal(e.code, 'context_not_found');
    assert.match(e.message, /hunk 1 of app\.py: context not found/);
    assert.equal(typeof e.hint, 'string');
    assert.match(e.hint, /nearest text/);
    assert.equal(e.details.path, 'app.py');
    assert.equal(e.details.hunk, 1);
    assert.deepEqual(e.details.expected, ['    for y in ys:', '        s += y']);
    assert.equal(e.details.nearest.lines[0].line, 3);
    assert.equal(e.report.ok, false);
    assert.equal(e.report.error, e.details);
    assert.equal(e.exitStatus, 1);
    return true;
  });
  assert.equal(readText(root, 'app.py'), APP, 'nothing written');
});

test('a usage error has the code usage and exit status 2', async () => {
  const root = tree({ 'app.py': APP });
  await assert.rejects(applyPatch(root, CHANGE, { reverse: true }), (e) => {
    assert.equal(e.code, 'usage');
    assert.equal(e.exitStatus, 2);
    assert.match(e.message, /--reverse works on unified diffs only/);
    return true;
  });
});

test('options are the command line flags: directory, strip, include, exclude, protect', async () => {
  const root = tree({ 'pkg/a.txt': 'one\ntwo\n', 'pkg/b.txt': 'one\ntwo\n' });
  const diff = (name) =>
    `--- x/y/${name}\n+++ x/y/${name}\n@@ -1,2 +1,2 @@\n one\n-two\n+2\n`;
  const both = diff('a.txt') + diff('b.txt');
  const report = await applyPatch(root, both, {
    strip: 2,
    directory: 'pkg',
    include: ['a.txt'], // matched against the patch's paths, before `directory`
    window: 5,
    durability: 'atomic',
  });
  assert.deepEqual(report.files.map((f) => f.path), ['pkg/a.txt']);
  assert.equal(readText(root, 'pkg/a.txt'), 'one\n2\n');
  assert.equal(readText(root, 'pkg/b.txt'), 'one\ntwo\n');

  await applyPatch(root, both, { strip: 2, directory: 'pkg', exclude: 'a.txt' });
  assert.equal(readText(root, 'pkg/b.txt'), 'one\n2\n');

  await assert.rejects(
    applyPatch(root, diff('a.txt').replaceAll('two', 'zwei'), {
      strip: 2,
      directory: 'pkg',
      protect: ['*.txt'],
    }),
    (e) => e.code === 'protected_file',
  );
});

test('option fuzz is --fuzz: 0 refuses drifted outer context, the default places it', async () => {
  const root = tree({ 'f.txt': 'x\na\nb\nc\nd\ny\n' });
  // `zero` and `four` are not in the file: found only once they are ignored (fuzz).
  const patch = update('f.txt', [' zero', ' a', '-b', '+B', ' c', ' four']);
  await assert.rejects(applyPatch(root, patch, { fuzz: 0 }), (e) => e.code === 'context_not_found');
  await assert.rejects(applyPatch(root, patch, { fuzz: -1 }), /option `fuzz` must be a whole number/);
  const report = await applyPatch(root, patch);
  assert.deepEqual(
    report.files[0].hunks.map((h) => [h.line, h.fuzz]),
    [[2, 2]],
  );
  assert.deepEqual(report.warnings.map((w) => w.code), ['fuzz']);
  assert.equal(readText(root, 'f.txt'), 'x\na\nB\nc\nd\ny\n');
});

test('read serves numbered lines and the version; a stale Base is refused, rebase merges', async () => {
  const root = tree({ 'app.py': APP });
  const view = await read(root, 'app.py', { lines: '2:3' });
  assert.equal(view.ok, true);
  assert.deepEqual([view.start_line, view.end_line, view.total_lines], [2, 3, 5]);
  assert.deepEqual(view.lines, ['    s = 0', '    for x in xs:']);
  assert.match(view.base, /^[0-9a-f]{16}$/);
  assert.deepEqual((await read(root, 'app.py', { lines: [2, 3] })).lines, view.lines);
  const around = await read(root, 'app.py', { around: 4 });
  assert.equal(around.around.kind, 'function');
  assert.deepEqual([around.start_line, around.end_line], [1, 5]);

  // Someone else edits the file after the read; the patch names the version it was made on.
  fs.writeFileSync(path.join(root, 'app.py'), `# header\n${APP}`);
  const patch = update('app.py', ['     for x in xs:', '-        s += x', '+        s += 2 * x'], view.base);
  await assert.rejects(applyPatch(root, patch), (e) => {
    assert.equal(e.code, 'stale_file');
    assert.equal(typeof e.hint, 'string');
    return true;
  });
  const rebased = await applyPatch(root, patch, { rebase: true });
  assert.ok(rebased.warnings.some((w) => w.code === 'rebased'), JSON.stringify(rebased));
  assert.equal(readText(root, 'app.py'), `# header\n${APP.replace('s += x', 's += 2 * x')}`);

  await assert.rejects(read(root, 'missing.py'), (e) => e.code === 'file_not_found');
});

test('undo reverts the last patch, then has nothing to undo', async () => {
  const root = tree({ 'app.py': APP });
  await applyPatch(root, CHANGE);
  const undone = await undo(root);
  assert.equal(undone.ok, true);
  assert.equal(typeof undone.undone, 'string');
  assert.deepEqual(undone.files, ['app.py']);
  assert.equal(readText(root, 'app.py'), APP);
  assert.equal((await undo(root)).undone, null);
});

test('preview keeps the plan, confirm writes it once', async () => {
  const root = tree({ 'app.py': APP });
  const previewed = await applyPatch(root, CHANGE, { preview: true, maxRisk: 10 });
  assert.equal(typeof previewed.preview, 'string');
  assert.equal(typeof previewed.risk.score, 'number');
  assert.equal(readText(root, 'app.py'), APP, 'a preview writes nothing');
  const confirmed = await confirm(root, previewed.preview);
  assert.equal(confirmed.preview, previewed.preview);
  assert.match(readText(root, 'app.py'), /s \+= 2 \* x/);
  await assert.rejects(confirm(root, previewed.preview), (e) => e.code === 'unknown_preview');
});

test('maxRisk refuses a patch scored above it', async () => {
  const root = tree({ 'app.py': APP });
  await assert.rejects(applyPatch(root, CHANGE, { maxRisk: 0 }), (e) => {
    assert.equal(e.code, 'risk_exceeded');
    return true;
  });
  assert.equal(readText(root, 'app.py'), APP);
});

test('postCheck: a failure resolves with verification, rollbackOnFail rejects and reverts', { skip: noShell && 'the binary runs no sh here' }, async () => {
  const root = tree({ 'app.py': APP });
  const kept = await applyPatch(root, CHANGE, { postCheck: 'exit 3' });
  assert.equal(kept.ok, true);
  assert.equal(kept.verification.status, 'failed');
  assert.equal(kept.verification.exit_code, 3);
  assert.match(readText(root, 'app.py'), /s \+= 2 \* x/, 'written: exit status 4');
  await undo(root);

  await assert.rejects(applyPatch(root, CHANGE, { postCheck: 'exit 3', rollbackOnFail: true }), (e) => {
    assert.equal(e.code, 'post_check_failed');
    assert.equal(e.report.verification.rolled_back, true);
    return true;
  });
  assert.equal(readText(root, 'app.py'), APP);
});

test('bad arguments reject with a TypeError before anything runs', async () => {
  const root = tree({ 'app.py': APP });
  const bad = [
    [root, CHANGE, { threeway: true }, /unknown option `threeway`/],
    [root, CHANGE, { strip: -1 }, /`strip` must be a whole number/],
    [root, CHANGE, { check: 'yes' }, /`check` must be true or false/],
    [root, CHANGE, { include: [1] }, /`include` must be a string/],
    [root, 42, {}, /patch must be/],
    ['', CHANGE, {}, /root must be/],
  ];
  for (const [r, patch, options, message] of bad) {
    await assert.rejects(applyPatch(r, patch, options), (e) => {
      assert.ok(e instanceof TypeError, String(e));
      assert.match(e.message, message);
      return true;
    });
  }
  await assert.rejects(read(root, 'app.py', { line: 3 }), TypeError);
  assert.equal(readText(root, 'app.py'), APP);
});

test('binaryPath is the executable of the installed platform package', { skip: Boolean(process.env.APPLY_PATCH_BINARY) && 'APPLY_PATCH_BINARY names the binary' }, () => {
  const bin = binaryPath();
  const key = `${process.platform}-${process.arch}`;
  assert.ok(bin.includes(path.join('node_modules', '@apply-patch', key, 'bin')), bin);
  const version = require('@apply-patch/apply-patch/package.json').version;
  assert.equal(execFileSync(bin, ['--version'], { encoding: 'utf8' }).trim(), `apply-patch ${version}`);
});

test('a missing or mismatched platform package is explained', () => {
  // The main package alone, copied into a project of its own.
  const alone = tree();
  const scope = path.join(alone, 'node_modules', '@apply-patch');
  fs.cpSync(path.join(project, 'node_modules', '@apply-patch', 'apply-patch'), path.join(scope, 'apply-patch'), {
    recursive: true,
  });
  const probe = () => {
    try {
      execFileSync(process.execPath, ['-e', "require('@apply-patch/apply-patch').binaryPath()"], {
        cwd: alone,
        env: { ...process.env, APPLY_PATCH_BINARY: '' },
        stdio: 'pipe',
      });
      return '';
    } catch (e) {
      return e.stderr.toString();
    }
  };
  const key = `${process.platform}-${process.arch}`;
  assert.match(probe(), new RegExp(`the package @apply-patch/${key}, which holds the apply-patch binary for ${key}.* is not installed.*--omit=optional`, 's'));
  fs.mkdirSync(path.join(scope, key));
  fs.writeFileSync(path.join(scope, key, 'package.json'), JSON.stringify({ name: `@apply-patch/${key}`, version: '0.0.1' }));
  assert.match(probe(), new RegExp(`@apply-patch/${key} 0\\.0\\.1 is installed, but @apply-patch/apply-patch .* needs the same version`));
});
