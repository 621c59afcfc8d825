"""Apply multi-file patches safely from Python.

The agent patch language (``*** Begin Patch``), git and plain unified diffs and JSON edit
requests are placed where each hunk uniquely belongs or refused, and committed all at once or
not at all. This module is a thin layer over the Rust library (``apply_patch._native``): the
reports are the command line's ``--json`` objects as plain dicts, and every refusal raises
:class:`ApplyPatchError` with the same stable ``code``.

>>> import apply_patch
>>> report = apply_patch.apply("repo", patch_text)            # doctest: +SKIP
>>> [f["path"] for f in report["files"]]                      # doctest: +SKIP
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, Iterable, Mapping, Optional, Sequence, Union

from . import _native

__all__ = ["ApplyPatchError", "apply", "confirm", "read", "undo", "run_cli", "__version__"]

__version__: str = _native.__version__

StrPath = Union[str, "os.PathLike[str]"]
PatchInput = Union[str, bytes, "os.PathLike[str]"]

# SPEC §8: the exit status that goes with an error code (everything else refuses with 1).
_EXIT_STATUS = {"usage": 2, "rollback_failed": 3}


class ApplyPatchError(Exception):
    """A refusal or failure, with the library's stable error code.

    ``code`` is the error code of ``--json`` (``context_not_found``, ``ambiguous_match``,
    ``stale_file``, ``index_mismatch``, ``usage``, ...), ``message`` and ``hint`` its text,
    ``details`` the whole error object (``path``, ``hunk``, ``expected``, ``nearest``, ...),
    and ``report`` the whole report (``files`` that would have been touched, ``warnings``).
    """

    code: str
    message: str
    hint: Optional[str]
    details: Dict[str, Any]
    report: Dict[str, Any]
    exit_status: int

    def __init__(self, report: Dict[str, Any]) -> None:
        error = report.get("error") or {}
        self.code = str(error.get("code", "unknown"))
        self.message = str(error.get("message", ""))
        self.hint = error.get("hint")
        self.details = error
        self.report = report
        self.exit_status = _EXIT_STATUS.get(self.code, 1)
        text = f"{self.code}: {self.message}"
        super().__init__(text if not self.hint else f"{text} (hint: {self.hint})")


def _checked(text: str) -> Dict[str, Any]:
    """Parse a native result; a failure object (``"ok": false``) raises."""
    value: Dict[str, Any] = json.loads(text)
    if value.get("ok") is False:
        raise ApplyPatchError(value)
    return value


def _patch_bytes(patch: PatchInput) -> bytes:
    if isinstance(patch, bytes):
        return patch
    if isinstance(patch, str):
        return patch.encode("utf-8")
    if isinstance(patch, os.PathLike):
        # The command line's reader: a regular file within the size limit, never a FIFO or
        # a device (which Python's open() would block on or read without end).
        data, failure = _native.read_patch_file(os.fspath(patch))
        if failure is not None:
            _checked(failure)
        assert data is not None
        return data
    raise TypeError(f"patch must be str, bytes or a path, not {type(patch).__name__}")


def apply(
    root: StrPath,
    patch: PatchInput,
    *,
    check: bool = False,
    index: bool = False,
    cached: bool = False,
    three_way: bool = False,
    conflict_markers: bool = False,
    diff: bool = False,
    reverse: bool = False,
    strip: Optional[int] = None,
    directory: Optional[str] = None,
    include: Iterable[str] = (),
    exclude: Iterable[str] = (),
    recount: bool = False,
    unidiff_zero: bool = False,
    window: Optional[int] = None,
    fuzz: Optional[int] = None,
    format: Optional[str] = None,
    strict_base: bool = False,
    protect: Iterable[str] = (),
    allow_notebooks: bool = False,
    strict_balance: bool = False,
    rebase: bool = False,
    preview: bool = False,
    post_check: Optional[str] = None,
    rollback_on_fail: bool = False,
    max_risk: Optional[int] = None,
    keep_chips: Optional[bool] = None,
    durability: Optional[str] = None,
    path: Optional[str] = None,
    base: Optional[str] = None,
    formatter: Union[str, Iterable[str], Mapping[str, str]] = (),
    formatter_timeout: Optional[int] = None,
) -> Dict[str, Any]:
    """Apply ``patch`` to the directory ``root`` (with ``check=True``, only plan it).

    ``patch`` is the patch text (``str`` or ``bytes``) or a path to a patch file (a
    ``pathlib.Path``; a ``str`` is always the text). The keywords are the command line's
    flags (``three_way`` is ``--3way``, ``format`` one of ``"agent"``, ``"unified"``,
    ``"json"``, ``"blocks"``; ``path`` is ``--path``, the file every SEARCH/REPLACE block
    edits, ``base`` its ``--base``; ``window`` defaults to the command line's 20, ``fuzz`` — outer context lines
    a hunk found nowhere may lose at each end, the rest unique in the whole file — to its 2,
    ``fuzz=0`` turning it off). Returns the ``--json`` report: ``ok``, ``files`` (``path``,
    ``op``, ``hunks`` with ``line``/``level``/``fuzz``/``offset``, ...), ``warnings``,
    ``diff`` with ``diff=True``. Raises
    :class:`ApplyPatchError` when the patch is refused; nothing in the tree has changed then.

    The agent options, as the command line's:

    - ``rebase=True``: a file changed since the ``*** Base:`` it was read at is merged onto
      (``--rebase``; the base comes from what :func:`read` kept, or git);
    - ``preview=True``: nothing is written; the report's ``preview`` is an id to pass to
      :func:`confirm` (``--preview``), and its ``risk`` and ``diff`` show what would change;
    - ``post_check="CMD"``: run CMD (``sh -c``, in ``root``) after the commit; its outcome is
      the report's ``verification`` (``status`` is ``"passed"``, ``"failed"`` or
      ``"timed_out"``). A failing check leaves the change applied, unless
      ``rollback_on_fail=True`` undoes it and raises ``post_check_failed``;
    - ``formatter``: ``{"*.py": "black -q -"}`` or ``["*.py=black -q -"]`` (``--formatter
      GLOB=CMD``): each written file whose path matches a glob is piped through its command
      (``sh -c``, in ``root``, the planned bytes on stdin, the formatted bytes on stdout)
      before the commit; the formatted bytes are what is written, reported and undone. A
      failing command (or one running over ``formatter_timeout`` seconds, 600 by default)
      raises ``formatter_failed`` with nothing written;
    - ``max_risk=N``: refuse (``risk_exceeded``) a patch whose risk score is above N; the
      report's ``risk`` gives the score;
    - ``keep_chips``: keep a refused patch as a chip (``apply-patch chip ID``); by default
      every run keeps one except a plain ``check=True``;
    - ``durability``: ``"full"`` (the default), ``"fsync"`` or ``"atomic"``; by default the
      ``APPLY_PATCH_DURABILITY`` variable, as for the command line.

    Hints name options as Python spells them (``rebase=True``).
    """
    options = {
        "check": check,
        "index": index,
        "cached": cached,
        "three_way": three_way,
        "conflict_markers": conflict_markers,
        "diff": diff,
        "reverse": reverse,
        "strip": strip,
        "directory": directory,
        "include": list(include),
        "exclude": list(exclude),
        "recount": recount,
        "unidiff_zero": unidiff_zero,
        "window": window,
        "fuzz": fuzz,
        "format": format,
        "strict_base": strict_base,
        "protect": list(protect),
        "allow_notebooks": allow_notebooks,
        "strict_balance": strict_balance,
        "rebase": rebase,
        "preview": preview,
        "post_check": post_check,
        "rollback_on_fail": rollback_on_fail,
        "max_risk": max_risk,
        "keep_chips": keep_chips,
        "durability": durability,
        "path": path,
        "base": base,
        "formatter": _formatters(formatter),
        "formatter_timeout": formatter_timeout,
    }
    # None: the library's default (the command line's), kept in one place.
    given = {k: v for k, v in options.items() if v is not None}
    return _checked(_native.apply(os.fspath(root), _patch_bytes(patch), json.dumps(given)))


def _formatters(formatter: Union[str, Iterable[str], Mapping[str, str]]) -> "list[str]":
    """``formatter=`` as the library's ``GLOB=CMD`` list (one string, a list, or a dict)."""
    if isinstance(formatter, str):
        return [formatter]
    if isinstance(formatter, Mapping):
        return [f"{glob}={command}" for glob, command in formatter.items()]
    return list(formatter)


def read(
    root: StrPath, path: str, *, lines: Optional[str] = None, around: Optional[int] = None
) -> Dict[str, Any]:
    """Read ``path`` (relative to ``root``) as ``apply-patch read --json`` does.

    ``lines`` is a range such as ``"1:40"``; ``around=N`` (1-based, instead of ``lines``)
    serves the function, else the block, else the element enclosing line N, as ``read
    --around N`` does, with an ``around`` entry naming what was found (``kind``, ``lang``,
    ``start_line``, ``end_line``). Returns ``path``, ``base`` (the version to send back as
    ``*** Base:``), ``sha256``, ``total_lines``, ``start_line``, ``end_line``, ``lines``,
    ``line_ending``, ``final_newline`` and ``bom``. Raises :class:`ApplyPatchError` (e.g.
    ``file_not_found``; ``usage`` for both ``lines`` and ``around``).

    Like every front end's read, it first finishes (or rolls back) a transaction a crash left
    under ``root``; the result's ``warnings`` then say so (``recovered``).
    """
    return _checked(_native.read(os.fspath(root), path, lines, around))


def confirm(root: StrPath, preview_id: str) -> Dict[str, Any]:
    """Apply the change kept by ``apply(..., preview=True)`` (``apply-patch confirm ID``).

    ``preview_id`` is the report's ``preview``. The change is written only if nothing it
    touches has changed since the preview; returns ``ok``, ``preview``, ``files`` (what was
    written) and ``warnings``. Raises :class:`ApplyPatchError` (``unknown_preview``, or
    ``stale_file`` when a file changed meanwhile).
    """
    return _checked(_native.confirm(os.fspath(root), preview_id))


def undo(root: StrPath) -> Dict[str, Any]:
    """Revert the last patch applied under ``root`` (``apply-patch undo --json``).

    Returns ``undone`` (the transaction id, ``None`` when there was nothing to undo),
    ``files``, ``recovered`` and ``warnings``.
    """
    return _checked(_native.undo(os.fspath(root)))


def run_cli(argv: Sequence[str]) -> int:
    """Run the ``apply-patch`` command line in this process (``argv[0]`` first).

    It reads standard input and writes standard output and error itself, as the command
    does; returns the exit status. It leaves the process's limits (the open-file limit) as
    they are: the console command raises its own.
    """
    return int(_native.run_cli([os.fspath(a) for a in argv]))
