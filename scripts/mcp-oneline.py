#!/usr/bin/env python3
"""Time a one-line edit and its revert through `apply-patch mcp`, as an agent loop pays it.

An agent keeps one MCP server running for a whole session and sends it edit after edit, so
the cost of an edit there is one `tools/call` round trip to a warm process: no process
start, no dynamic loading, no first-call page faults. This client measures exactly that. It
speaks JSON-RPC 2.0 to the server over its stdin and stdout, one message a line (no MCP SDK,
nothing outside the standard library), and for each server:

1. starts `BIN mcp` with the checkout as its working directory (the server's root), the
   durability taken from `APPLY_PATCH_DURABILITY` in the server's environment;
2. does `initialize` and `notifications/initialized`, then calls `read` on the diff's file
   once (the server's default policy refuses a change to a file the session has not read);
3. runs `--warm` untimed pairs, so that the samples are the steady state, not the session's
   first calls;
4. times pairs of `apply_patch` calls, the one-line diff then its reverse (made here from
   the diff, or given with `--reverse`): the wall time from writing the first request to
   reading the second reply (`time.perf_counter_ns`). Server start, `initialize`, `read`
   and warm-up are outside it.

Every reply must be a result (no JSON-RPC error) with `isError` false, `ok` true, no
warning, the file changed by each call (old and new SHA-256 differ and chain: start ->
edited -> start); after each pair, outside the timed span, the file must be byte-identical
to its start. Anything else stops the client with a message on stderr and exit status 1.

Two modes:

* `mcp-oneline.py BIN DIFF [--pairs N]` (in the checkout, or `--root DIR`): one server with
  the durability of this process's environment, N timed pairs, then the best and median
  pair and the server's peak resident memory. For a quick look by hand.

* `mcp-oneline.py BIN DIFF --serve NAME=MODE [--serve NAME=MODE ...]`: the mode
  `scripts/bench-real.sh` uses to run the MCP variants turn about with the command-line
  tools. One server per NAME (MODE: `full`, `fsync` or `atomic`, set as the server's
  `APPLY_PATCH_DURABILITY`), started, initialised, `read` and warmed up once, then the line
  `ready`; then for each line NAME read on stdin, ONE timed pair on that server, answered
  with one line `MICROSECONDS PEAK_KB` (peak = the server's VmHWM so far, 0 where /proc has
  none). EOF on stdin stops the servers.

Why servers kept alive between rounds rather than one started per round with one pair: a
fresh server's first apply pays for code paths and lazily built state that a session pays
once, so pairs=1 per process would time the first edit of a session, not the edits an agent
makes all day, and each sample would carry that first-call noise. Kept alive, each variant's
server sits idle (blocked on its stdin) while the other tools take their turn, so a
machine's changing load still falls on all of them alike, and the bench script checks the
work tree after each pair exactly as it does for the other tools.
"""

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time

PROTOCOL = "2025-06-18"


class Failure(Exception):
    """A reply or a file state that makes the measurement wrong."""


def reverse_diff(text):
    """The reverse of a unified diff of text files: old and new sides swapped.

    Header paths, `index` blob ids and hunk ranges are swapped, `-` and `+` lines trade
    places, and in each run of changed lines the removals are put first, as diff writes
    them. Enough for the one-file, modify-only diffs this client times."""
    out, removed, added = [], [], []

    def flush():
        out.extend(removed)
        out.extend(added)
        removed.clear()
        added.clear()

    lines = text.splitlines(keepends=True)
    for line in lines:
        if line.startswith("--- "):
            flush()
            out.append(line)  # paths stay as they are: a modify names one file twice
        elif line.startswith("+++ "):
            out.append(line)
        elif line.startswith("index "):
            flush()
            ids, _, rest = line[len("index "):].partition(" ")
            old, _, new = ids.strip().partition("..")
            out.append("index %s..%s%s" % (new, old, (" " + rest) if rest else "\n"))
        elif line.startswith("@@ "):
            flush()
            parts = line.split(" ", 3)
            if len(parts) < 3 or not parts[1].startswith("-") or not parts[2].startswith("+"):
                raise Failure("not a unified hunk header: %r" % line)
            tail = (" " + parts[3]) if len(parts) > 3 else ""
            out.append("@@ -%s +%s%s" % (parts[2][1:], parts[1][1:], tail))
        elif line.startswith("-"):
            added.append("+" + line[1:])
        elif line.startswith("+"):
            removed.append("-" + line[1:])
        else:
            flush()
            out.append(line)
    flush()
    return "".join(out)


def diff_path(text):
    """The file the diff edits (its `+++ b/PATH` line)."""
    for line in text.splitlines():
        if line.startswith("+++ "):
            path = line[4:].split("\t")[0].strip()
            return path[2:] if path.startswith("b/") else path
    raise Failure("no `+++` line in the diff")


class Server:
    """One `apply-patch mcp` process and its JSON-RPC session."""

    def __init__(self, binary, root, durability):
        env = dict(os.environ)
        if durability is not None:
            env["APPLY_PATCH_DURABILITY"] = durability
        self.name = "mcp (%s)" % (durability or env.get("APPLY_PATCH_DURABILITY", "full"))
        self.proc = subprocess.Popen(
            [binary, "mcp"], cwd=root, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        self.next_id = 0

    def send(self, message):
        try:
            self.proc.stdin.write(json.dumps(message).encode() + b"\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            raise Failure("%s exited (status %s)" % (self.name, self.proc.wait())) from None

    def request(self, method, params):
        """The result of one request; a JSON-RPC error or a dead server is a Failure."""
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise Failure("%s exited (status %s) during %s" % (self.name, self.proc.wait(), method))
            reply = json.loads(line)
            if reply.get("id") != self.next_id or "method" in reply:
                continue  # a notification or a request of the server's: not our answer
            if "error" in reply:
                raise Failure("%s: %s failed: %s" % (self.name, method, reply["error"]))
            return reply["result"]

    def tool(self, name, arguments):
        """The structured report of a tool call that succeeded with no warning."""
        result = self.request("tools/call", {"name": name, "arguments": arguments})
        report = result.get("structuredContent") or {}
        if result.get("isError") or report.get("ok") is False:
            raise Failure("%s: %s returned an error: %s" % (self.name, name, json.dumps(report)))
        if report.get("warnings"):
            raise Failure("%s: %s warned: %s" % (self.name, name, json.dumps(report["warnings"])))
        return report

    def open_session(self, path):
        self.request("initialize", {
            "protocolVersion": PROTOCOL,
            "capabilities": {},
            "clientInfo": {"name": "mcp-oneline", "version": "1"},
        })
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.tool("read", {"path": path})

    def peak_kb(self):
        """The server's peak resident set size so far (VmHWM), 0 where /proc has none."""
        try:
            with open("/proc/%d/status" % self.proc.pid) as status:
                for line in status:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1])
        except OSError:
            pass
        return 0

    def close(self):
        self.proc.stdin.close()
        status = self.proc.wait(timeout=30)
        if status != 0:
            raise Failure("%s exited with status %d" % (self.name, status))


class Edit:
    """The one-line diff, its reverse and the file they edit, with its starting bytes."""

    def __init__(self, root, diff_file, reverse_file):
        with open(diff_file) as f:
            self.forward = f.read()
        if reverse_file:
            with open(reverse_file) as f:
                self.reverse = f.read()
        else:
            self.reverse = reverse_diff(self.forward)
        self.path = diff_path(self.forward)
        self.file = os.path.join(root, self.path)
        with open(self.file, "rb") as f:
            self.start = f.read()
        self.start_sha = hashlib.sha256(self.start).hexdigest()

    def changed(self, server, report, old_sha):
        """The new SHA-256 of the one file the report says it changed from `old_sha`."""
        files = report.get("files") or []
        if len(files) != 1 or files[0].get("path") != self.path:
            raise Failure("%s: the report does not name %s alone: %s" % (server.name, self.path, json.dumps(files)))
        old, new = files[0].get("old_sha256"), files[0].get("new_sha256")
        if old != old_sha or new == old:
            raise Failure("%s: %s went %s -> %s, expected a change from %s" % (server.name, self.path, old, new, old_sha))
        return new

    def pair(self, server):
        """One timed apply + revert on `server`, in nanoseconds, checked."""
        begin = time.perf_counter_ns()
        forward = server.tool("apply_patch", {"patch": self.forward})
        reverse = server.tool("apply_patch", {"patch": self.reverse})
        elapsed = time.perf_counter_ns() - begin
        edited = self.changed(server, forward, self.start_sha)
        if self.changed(server, reverse, edited) != self.start_sha:
            raise Failure("%s: the revert did not bring %s back" % (server.name, self.path))
        with open(self.file, "rb") as f:
            if f.read() != self.start:
                raise Failure("%s: %s is not byte-identical to its start after the pair" % (server.name, self.path))
        return elapsed


def started(args, edit, durability):
    server = Server(args.bin, args.root, durability)
    server.open_session(edit.path)
    for _ in range(args.warm):
        edit.pair(server)
    return server


def serve(args, edit):
    """Turn-about mode: one timed pair per line NAME on stdin."""
    servers = {}
    for spec in args.serve:
        name, sep, mode = spec.partition("=")
        if not sep or not name or not mode:
            raise Failure("--serve takes NAME=MODE, not %r" % spec)
        servers[name] = started(args, edit, mode)
    print("ready", flush=True)
    for line in sys.stdin:
        name = line.strip()
        if name not in servers:
            raise Failure("no server named %r (have: %s)" % (name, ", ".join(servers)))
        nanos = edit.pair(servers[name])
        print("%d %d" % (nanos // 1000, servers[name].peak_kb()), flush=True)
    for server in servers.values():
        server.close()


def by_hand(args, edit):
    """One server, `--pairs` timed pairs, a summary line."""
    server = started(args, edit, None)
    millis = [edit.pair(server) / 1e6 for _ in range(args.pairs)]
    print("%s: %d pairs, best %.2f ms, median %.2f ms, peak %.1f MB" % (
        server.name, len(millis), min(millis), statistics.median(millis), server.peak_kb() / 1024))
    server.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("bin", help="the apply-patch binary")
    parser.add_argument("diff", help="a one-file unified diff that applies to the root")
    parser.add_argument("--root", default=".", help="the checkout (default: the current directory)")
    parser.add_argument("--reverse", help="the reverse diff (default: made from DIFF)")
    parser.add_argument("--pairs", type=int, default=41, help="timed pairs by hand (default 41)")
    parser.add_argument("--warm", type=int, default=3, help="untimed pairs per server first (default 3)")
    parser.add_argument("--serve", action="append", metavar="NAME=MODE",
                        help="turn-about mode: a server per NAME with APPLY_PATCH_DURABILITY=MODE")
    args = parser.parse_args()
    if args.pairs < 1 or args.warm < 0:
        parser.error("--pairs must be at least 1 and --warm at least 0")
    try:
        edit = Edit(args.root, args.diff, args.reverse)
        if args.serve:
            serve(args, edit)
        else:
            by_hand(args, edit)
    except (Failure, OSError, ValueError, subprocess.TimeoutExpired) as err:
        print("mcp-oneline: %s" % err, file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
