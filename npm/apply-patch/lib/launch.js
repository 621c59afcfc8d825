'use strict';
// The `apply-patch` and `apply_patch` commands: run the native executable with this process's
// arguments, standard input, output and error, and end as it ends (its exit status, or the
// signal that killed it). npm installs each command as a small script that starts Node (a
// symbolic link cannot be made on every platform npm runs on), so the name the binary sees
// in argv[0] is passed on explicitly: under the name `apply_patch` the binary is the drop-in
// for Codex's command (the patch text as the only argument, Codex's output), exactly as a
// copy of the binary named so would be.

const { spawn } = require('node:child_process');
const { binaryPath, spawnFailure } = require('./binary.js');

// Signals a terminal or a supervisor sends to stop a command; the binary gets them too.
const FORWARDED = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT', 'SIGBREAK'];

function launch(name) {
  let bin;
  try {
    bin = binaryPath();
  } catch (e) {
    process.stderr.write(`${name}: ${e.message}\n`);
    process.exit(1);
  }
  const child = spawn(bin, process.argv.slice(2), {
    argv0: name,
    stdio: 'inherit',
  });
  const forward = (signal) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  };
  const listening = FORWARDED.filter((signal) => {
    try {
      process.on(signal, forward);
      return true;
    } catch {
      return false; // a signal this platform does not have
    }
  });
  child.on('error', (error) => {
    process.stderr.write(`${spawnFailure(bin, error).message}\n`);
    process.exit(1);
  });
  child.on('exit', (status, signal) => {
    for (const s of listening) process.off(s, forward);
    if (signal) {
      // Die of the same signal, so that a caller (a shell, an agent) sees what happened.
      process.kill(process.pid, signal);
      return;
    }
    process.exit(status === null ? 1 : status);
  });
}

module.exports = { launch };
