// Shared by the tests of the installed packages (scripts/npm-test.sh copies this folder into
// a fresh project that installed the packed tarballs, and runs the tests there).

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const made = [];
process.on('exit', () => {
  for (const root of made) fs.rmSync(root, { recursive: true, force: true });
});

/** A fresh folder holding `files` (path → text); removed when the test process ends. */
export function tree(files = {}) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'apply-patch-npm-'));
  made.push(root);
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
    fs.writeFileSync(path.join(root, name), text);
  }
  return root;
}

export function readText(root, name) {
  return fs.readFileSync(path.join(root, name), 'utf8');
}

/** An agent patch of one Update hunk. */
export function update(file, lines, base) {
  const head = [`*** Update File: ${file}`, ...(base ? [`*** Base: ${base}`] : []), '@@'];
  return ['*** Begin Patch', ...head, ...lines, '*** End Patch', ''].join('\n');
}

/** The project the packages were installed into (where node_modules is). */
export const project = process.cwd();

/** Set by scripts/npm-test.sh when the binary cannot run `sh` (the Windows one under Wine). */
export const noShell = process.env.APPLY_PATCH_NPM_TEST_NO_SH === '1';
