"""``python -m apply_patch`` and the ``apply-patch`` console command: the command line,
run in this process by the library (the same code as the Rust binary)."""

from __future__ import annotations

import signal
import sys

from . import run_cli


def main() -> None:
    # Python turns Ctrl-C into an exception that only Python code notices; the Rust code
    # never checks for it, so the default comes back: Ctrl-C ends the command (e.g. `mcp`)
    # as it ends the binary. (SIGPIPE is ignored by both, so a closed pipe is alike too.)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    argv = ["apply-patch", *sys.argv[1:]]
    sys.exit(run_cli(argv))


if __name__ == "__main__":
    main()
