"""``python -m apply_patch`` and the ``apply-patch`` console command: the command line,
run in this process by the library (the same code as the Rust binary)."""

from __future__ import annotations

import signal
import sys

try:
    import resource
except ImportError:  # Windows: no per-process limit on handles
    resource = None

from . import run_cli


def main() -> None:
    # Python turns Ctrl-C into an exception that only Python code notices; the Rust code
    # never checks for it, so the default comes back: Ctrl-C ends the command (e.g. `mcp`)
    # as it ends the binary. (SIGPIPE is ignored by both, so a closed pipe is alike too.)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    _raise_open_file_limit()
    argv = ["apply-patch", *sys.argv[1:]]
    sys.exit(run_cli(argv))


def _raise_open_file_limit() -> None:
    # As the Rust binary's main does: a patch touching thousands of folders holds a handle
    # per folder while it commits. This process exists only to run the command, so it may
    # raise its own limit; `run_cli` itself, a library call, never changes its host's.
    if resource is None:
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft == hard:
        return
    # An unlimited hard limit is refused above the kernel's own (2**20 by default).
    for want in (hard, min(1 << 20, hard) if hard != resource.RLIM_INFINITY else 1 << 20):
        if want == resource.RLIM_INFINITY or want <= soft:
            continue
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
            return
        except (ValueError, OSError):
            pass

if __name__ == "__main__":
    main()
