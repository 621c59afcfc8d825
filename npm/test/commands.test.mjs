// The commands the package puts on PATH (node_modules/.bin, as npm scripts and npx see them):
// `apply-patch` with the binary's exit statuses, `apply_patch` as Codex's drop-in, and the
// launcher passing a signal on and dying of it.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { createRequire } from 'node:module';

import { tree, readText, update, project, noShell } from './helpers.mjs';

const require = createRequire(import.meta.url);
const { version } = require('@apply-patch/apply-patch/package.json');
const bin = path.join(project, 'node_modules', '.bin');
const env = { ...process.env, PATH: `${bin}${path.delimiter}${process.env.PATH}` };

function run(command, args, options = {}) {
  return spawnSync(command, args, { encoding: 'utf8', env, ...options });
}

test('npx apply-patch --version prints the package version', () => {
  const out = run('npx', ['apply-patch', '--version'], { cwd: project });
  assert.equal(out.status, 0, out.stderr);
  assert.equal(out.stdout.trim(), `apply-patch ${version}`);
});

test('npx given the package itself runs its apply-patch command (`npx -y @apply-patch/apply-patch mcp`)', { skip: !process.env.APPLY_PATCH_NPM_MAIN_TGZ && 'no tarball named' }, () => {
  // npx installs the package into its cache and must choose one of its two commands: the one
  // named as the package without its scope. The cache has no platform package (they are not
  // on the registry before a release): the executable is named by APPLY_PATCH_BINARY.
  const { binaryPath } = require('@apply-patch/apply-patch');
  const spec = `file:${process.env.APPLY_PATCH_NPM_MAIN_TGZ}`;
  const out = run('npx', ['-y', spec, '--version'], {
    cwd: tree(),
    env: { ...env, APPLY_PATCH_BINARY: process.env.APPLY_PATCH_BINARY || binaryPath() },
  });
  assert.equal(out.status, 0, out.stderr);
  assert.equal(out.stdout.trim(), `apply-patch ${version}`);
});

test('apply-patch reads a patch on standard input and keeps the exit statuses', () => {
  const root = tree({ 'a.txt': 'one\ntwo\n' });
  const patch = update('a.txt', [' one', '-two', '+2']);
  const applied = run('apply-patch', ['--json', '--root', root], { input: patch });
  assert.equal(applied.status, 0, applied.stderr);
  assert.equal(JSON.parse(applied.stdout).ok, true);
  assert.equal(readText(root, 'a.txt'), 'one\n2\n');

  const refused = run('apply-patch', ['--root', root], { input: update('a.txt', [' one', '-zwei', '+3']) });
  assert.equal(refused.status, 1);
  assert.match(refused.stderr, /context_not_found/);
  assert.equal(run('apply-patch', ['--no-such-flag']).status, 2);
});

test('apply_patch is the Codex drop-in: the patch as its argument, Codex output', () => {
  const root = tree({ 'a.txt': 'one\ntwo\n', 'old.txt': 'bye\n' });
  const patch = [
    '*** Begin Patch',
    '*** Update File: a.txt',
    '@@',
    ' one',
    '-two',
    '+2',
    '*** Add File: new.txt',
    '+hello',
    '*** Delete File: old.txt',
    '*** End Patch',
  ].join('\n');
  const out = run('apply_patch', [patch], { cwd: root });
  assert.equal(out.status, 0, out.stderr);
  assert.equal(out.stdout, 'Success. Updated the following files:\nM a.txt\nA new.txt\nD old.txt\n');
  assert.equal(readText(root, 'a.txt'), 'one\n2\n');
  assert.equal(readText(root, 'new.txt'), 'hello\n');

  const refused = run('apply_patch', [update('a.txt', [' one', '-zwei', '+3'])], { cwd: root });
  assert.equal(refused.status, 1);
  assert.equal(refused.stdout, '');
  assert.match(refused.stderr, /context/);
  assert.equal(readText(root, 'a.txt'), 'one\n2\n');
});

test('a signal to the command reaches the binary, and the command dies of it', { skip: (process.platform === 'win32' || noShell) && 'no POSIX signals' }, async () => {
  const root = tree();
  // `mcp` serves until its standard input ends, which this test never closes: only the
  // signal can end it.
  const child = spawn('apply-patch', ['mcp', '--root', root], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  const exited = new Promise((resolve) => child.on('exit', (...a) => resolve(a)));
  // The binary's standard output closes when every process holding it has ended, the binary
  // included (a launcher that died alone would leave it open).
  const closed = new Promise((resolve) => child.stdout.on('close', resolve));
  await new Promise((resolve) => setTimeout(resolve, 1500));
  child.kill('SIGTERM');
  assert.deepEqual(await exited, [null, 'SIGTERM']);
  const timeout = new Promise((resolve) => setTimeout(resolve, 10000, 'open').unref());
  const outcome = await Promise.race([closed.then(() => 'closed'), timeout]);
  child.stdin.destroy();
  assert.equal(outcome, 'closed', 'the binary outlived the command');
});
