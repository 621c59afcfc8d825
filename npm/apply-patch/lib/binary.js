'use strict';
// Finds the native `apply-patch` executable. It is not in this package: npm installs the one
// platform package whose `os`, `cpu` (and `libc`) fields match the machine, out of this
// package's optionalDependencies (platforms.json lists them), and skips the others. This file
// only looks it up; it never downloads or builds anything.

const fs = require('node:fs');
const path = require('node:path');

const { platforms } = require('../platforms.json');
const { version } = require('../package.json');

/** The C library of this Linux machine: `glibc`, `musl`, or `undefined` elsewhere. */
function linuxLibc() {
  if (process.platform !== 'linux') return undefined;
  // Node's own diagnostic report names the glibc it runs on; a musl build of Node has none.
  // (About 20 ms: asked only when two packages share an os and cpu, or to explain a failure.)
  if ('excludeNetwork' in process.report) process.report.excludeNetwork = true;
  const header = process.report.getReport().header;
  return header.glibcVersionRuntime ? 'glibc' : 'musl';
}

/** The platforms.json entry for this machine, or `undefined` when none is published. */
function platformEntry(platform = process.platform, arch = process.arch) {
  const matching = platforms.filter((p) => p.os === platform && p.cpu === arch);
  if (matching.length <= 1) return matching[0];
  const libc = linuxLibc();
  return matching.find((p) => p.libc === undefined || p.libc === libc);
}

function describeMachine() {
  const libc = linuxLibc();
  return `${process.platform}-${process.arch}${libc ? ` (${libc})` : ''}`;
}

/** Why the platform package can be missing, and what to do. */
function notInstalled(entry) {
  const libc = entry.libc && linuxLibc();
  if (libc && libc !== entry.libc) {
    return (
      `apply-patch's prebuilt binary for ${entry.os}-${entry.cpu} (${entry.package}) needs ` +
      `${entry.libc}, and this machine uses ${libc}. Build it with \`cargo install ` +
      'apply-patch` and set APPLY_PATCH_BINARY to the path of the executable.'
    );
  }
  return (
    `the package ${entry.package}, which holds the apply-patch binary for ` +
    `${describeMachine()}, is not installed. npm installs it as an optional dependency: it is ` +
    'left out by `--omit=optional` / `--no-optional`, and missing when node_modules was ' +
    'copied from another platform. Reinstall without those options (or `npm install ' +
    `${entry.package}@${version}\`).`
  );
}

/**
 * What to say when the executable was found but could not be started (`error` from
 * `child_process.spawn`).
 */
function spawnFailure(bin, error) {
  let why = `apply-patch: cannot run ${bin}: ${error.message}`;
  if (error.code === 'EACCES') {
    why += ' (the file lost its executable bit: reinstall the package, or chmod +x it)';
  } else if (error.code === 'ENOENT' && linuxLibc() === 'musl') {
    // The file is there; what is missing is the glibc dynamic loader it names.
    why += ' (the prebuilt Linux binary needs glibc, and this machine uses musl: build it ' +
      'with `cargo install apply-patch` and set APPLY_PATCH_BINARY)';
  }
  return new Error(why, { cause: error });
}

/**
 * The path of the executable: `APPLY_PATCH_BINARY` when set (a build of your own, or a
 * platform without a package), else the installed platform package's. Throws an Error that
 * says what is missing and how to fix it.
 */
function binaryPath() {
  const own = process.env.APPLY_PATCH_BINARY;
  if (own) {
    if (!fs.existsSync(own)) {
      throw new Error(`APPLY_PATCH_BINARY names ${own}, which does not exist`);
    }
    return own;
  }
  const entry = platformEntry();
  if (!entry) {
    const offered = platforms.map((p) => `${p.os}-${p.cpu}${p.libc ? ` (${p.libc})` : ''}`);
    throw new Error(
      `apply-patch has no prebuilt binary for ${describeMachine()} (there are: ` +
        `${offered.join(', ')}). Build it with \`cargo install apply-patch\` and set ` +
        'APPLY_PATCH_BINARY to the path of the executable.',
    );
  }
  let manifest;
  try {
    manifest = require.resolve(`${entry.package}/package.json`);
  } catch {
    throw new Error(notInstalled(entry));
  }
  const installed = JSON.parse(fs.readFileSync(manifest, 'utf8')).version;
  if (installed !== version) {
    // The JavaScript API reads the binary's reports: the two must come from one release.
    throw new Error(
      `${entry.package} ${installed} is installed, but @apply-patch/apply-patch ${version} ` +
        `needs the same version: \`npm install ${entry.package}@${version}\``,
    );
  }
  return path.join(path.dirname(manifest), 'bin', entry.binary);
}

module.exports = { binaryPath, platformEntry, spawnFailure };
