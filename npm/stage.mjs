#!/usr/bin/env node
// Stages the npm packages into folders that `npm pack` / `npm publish` take as they are:
//
//   node npm/stage.mjs main OUT                  the main package (npm/apply-patch/ + licences)
//   node npm/stage.mjs platform KEY BINARY OUT   the platform package KEY (`linux-x64`, …, as
//                                                in npm/apply-patch/platforms.json) holding
//                                                BINARY, the executable built for it
//
// Nothing here builds the binary (cargo does) or publishes anything. Before it writes, it
// checks what would make a broken release: the main package's version against Cargo.toml's,
// its optionalDependencies against platforms.json, and the binary's file format and CPU
// against the platform it is packaged for (an x86-64 ELF file in the arm64 package would
// install fine and fail on every run).

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.dirname(here);
const mainSource = path.join(here, 'apply-patch');
const LICENCES = ['LICENSE-MIT', 'LICENSE-APACHE'];

function fail(message) {
  process.stderr.write(`stage: ${message}\n`);
  process.exit(1);
}

function readJson(file) {
  return JSON.parse(fs.readFileSync(file, 'utf8'));
}

/** The crate's version: the `version` of Cargo.toml's [package] table. */
function crateVersion() {
  const toml = fs.readFileSync(path.join(repo, 'Cargo.toml'), 'utf8');
  const table = toml.split(/^\[package\]$/m)[1]?.split(/^\[/m)[0] ?? '';
  const version = /^version\s*=\s*"([^"]+)"/m.exec(table);
  if (!version) fail('no version in the [package] table of Cargo.toml');
  return version[1];
}

const platforms = readJson(path.join(mainSource, 'platforms.json')).platforms;
const main = readJson(path.join(mainSource, 'package.json'));

/** The main package must name the crate's version and every platform package at it. */
function checkMain() {
  const version = crateVersion();
  if (main.version !== version) {
    fail(`npm/apply-patch/package.json has version ${main.version}, Cargo.toml ${version}: ` +
      'release both at one version');
  }
  const wanted = Object.fromEntries(platforms.map((p) => [p.package, version]));
  const listed = main.optionalDependencies ?? {};
  const same = Object.keys(wanted).length === Object.keys(listed).length &&
    Object.entries(wanted).every(([name, v]) => listed[name] === v);
  if (!same) {
    fail('the optionalDependencies of npm/apply-patch/package.json must be exactly the ' +
      `packages of platforms.json at ${version}: ${JSON.stringify(wanted)}`);
  }
}

function fresh(out) {
  fs.rmSync(out, { recursive: true, force: true });
  fs.mkdirSync(out, { recursive: true });
}

function copyLicences(out) {
  for (const name of LICENCES) fs.copyFileSync(path.join(repo, name), path.join(out, name));
}

function stageMain(out) {
  checkMain();
  fresh(out);
  for (const entry of ['package.json', 'README.md', 'platforms.json', 'bin', 'lib']) {
    fs.cpSync(path.join(mainSource, entry), path.join(out, entry), { recursive: true });
  }
  copyLicences(out);
}

/** The executable format and CPU of a binary: `elf-x64`, `pe-arm64`, `macho-x64`, … */
function binaryKind(file) {
  const head = Buffer.alloc(512);
  const fd = fs.openSync(file, 'r');
  const size = fs.readSync(fd, head, 0, head.length, 0);
  fs.closeSync(fd);
  const cpu = { 62: 'x64', 183: 'arm64', 0x8664: 'x64', 0xaa64: 'arm64' };
  if (size >= 20 && head.readUInt32BE(0) === 0x7f454c46) {
    return `elf-${cpu[head.readUInt16LE(18)] ?? 'other'}`;
  }
  if (size >= 64 && head.toString('latin1', 0, 2) === 'MZ') {
    const pe = head.readUInt32LE(60);
    if (pe + 6 <= size && head.readUInt32BE(pe) === 0x50450000) {
      return `pe-${cpu[head.readUInt16LE(pe + 4)] ?? 'other'}`;
    }
  }
  if (size >= 8 && head.readUInt32LE(0) === 0xfeedfacf) {
    const macho = { 0x01000007: 'x64', 0x0100000c: 'arm64' };
    return `macho-${macho[head.readUInt32LE(4)] ?? 'other'}`;
  }
  return 'unknown';
}

const FORMAT = { linux: 'elf', win32: 'pe', darwin: 'macho' };

function platformReadme(entry, version) {
  const template = fs.readFileSync(path.join(here, 'platform', 'README.md'), 'utf8');
  const values = {
    package: entry.package,
    platform: `${entry.os}-${entry.cpu}${entry.libc ? ` (${entry.libc})` : ''}`,
    rustTarget: entry.rustTarget,
    version,
  };
  return template.replace(/\{\{(\w+)\}\}/g, (_, key) => values[key]);
}

function stagePlatform(key, binary, out) {
  checkMain();
  const entry = platforms.find((p) => `${p.os}-${p.cpu}` === key);
  if (!entry) fail(`no platform ${key} in platforms.json`);
  const kind = binaryKind(binary);
  if (kind !== `${FORMAT[entry.os]}-${entry.cpu}`) {
    fail(`${binary} is ${kind}, not an executable for ${key} (${FORMAT[entry.os]}-${entry.cpu})`);
  }
  fresh(out);
  const manifest = {
    name: entry.package,
    version: main.version,
    description: `The ${key} executable of @apply-patch/apply-patch (built for ${entry.rustTarget}).`,
    license: main.license,
    os: [entry.os],
    cpu: [entry.cpu],
    ...(entry.libc ? { libc: [entry.libc] } : {}),
    files: ['bin/', ...LICENCES],
    // Yarn's Plug'n'Play keeps an executable in its zip archive unless told otherwise.
    preferUnplugged: true,
  };
  fs.writeFileSync(path.join(out, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  fs.writeFileSync(path.join(out, 'README.md'), platformReadme(entry, main.version));
  copyLicences(out);
  fs.mkdirSync(path.join(out, 'bin'));
  const target = path.join(out, 'bin', entry.binary);
  fs.copyFileSync(binary, target);
  fs.chmodSync(target, 0o755);
}

const [command, ...args] = process.argv.slice(2);
if (command === 'main' && args.length === 1) {
  stageMain(path.resolve(args[0]));
} else if (command === 'platform' && args.length === 3) {
  stagePlatform(args[0], path.resolve(args[1]), path.resolve(args[2]));
} else {
  fail('usage: node npm/stage.mjs main OUT | platform KEY BINARY OUT');
}
