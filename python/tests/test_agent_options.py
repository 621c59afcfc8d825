"""The agent options of `apply_patch.apply` (issue 27 item 2), the one place that decides the
option rules (issue 25 item 3), hints in Python's words, and `read` recovering first."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest

import apply_patch
from apply_patch import ApplyPatchError
from conftest import REPO, VENV_BIN, agent_patch

APP = "def total(xs):\n    s = 0\n    for x in xs:\n        s += x\n    return s\n"


def based_patch(base: str) -> str:
    return (
        "*** Begin Patch\n*** Update File: app.py\n"
        f"*** Base: {base}\n@@\n     for x in xs:\n-        s += x\n+        s += 2 * x\n"
        "*** End Patch\n"
    )


def test_rebase_merges_and_the_stale_hint_says_rebase_true(tree: Path) -> None:
    (tree / "app.py").write_text(APP)
    base = apply_patch.read(tree, "app.py")["base"]
    (tree / "app.py").write_text("# header\n" + APP)
    with pytest.raises(ApplyPatchError) as caught:
        apply_patch.apply(tree, based_patch(base))
    e = caught.value
    assert e.code == "stale_file"
    assert e.hint and "run again with rebase=True" in e.hint, e.hint
    assert "--rebase" not in e.hint
    report = apply_patch.apply(tree, based_patch(base), rebase=True)
    assert any(w["code"] == "rebased" for w in report["warnings"]), report
    assert (tree / "app.py").read_text() == "# header\n" + APP.replace("s += x", "s += 2 * x")


def test_preview_writes_nothing_and_confirm_applies_it(tree: Path) -> None:
    patch = agent_patch("a.txt", "two", "TWO")
    report = apply_patch.apply(tree, patch, preview=True)
    assert isinstance(report["preview"], str) and "+TWO" in report["diff"]
    assert isinstance(report["risk"]["score"], int)
    assert (tree / "a.txt").read_text() == "one\ntwo\nthree\n"
    done = apply_patch.confirm(tree, report["preview"])
    assert done["ok"] is True and done["preview"] == report["preview"]
    assert [f["path"] for f in done["files"]] == ["a.txt"]
    assert (tree / "a.txt").read_text() == "one\nTWO\nthree\n"
    with pytest.raises(ApplyPatchError) as caught:
        apply_patch.confirm(tree, report["preview"])
    assert caught.value.code == "unknown_preview"
    assert caught.value.hint and "preview=True" in caught.value.hint
    with pytest.raises(ApplyPatchError) as caught:
        apply_patch.apply(tree, patch, preview=True, check=True)
    assert caught.value.code == "usage"
    assert caught.value.message == "a preview and a check do not go together"
    assert caught.value.hint == "leave out preview or check"


def test_post_check_and_rollback_on_fail(tree: Path) -> None:
    report = apply_patch.apply(tree, agent_patch("a.txt", "one", "1"), post_check="true")
    assert report["verification"]["status"] == "passed"
    # A failing check without rollback: applied, and the report says the check failed.
    report = apply_patch.apply(tree, agent_patch("a.txt", "two", "2"), post_check="exit 3")
    assert report["ok"] is True
    assert (report["verification"]["status"], report["verification"]["exit_code"]) == ("failed", 3)
    assert (tree / "a.txt").read_text() == "1\n2\nthree\n"
    # With rollback: undone, and refused as post_check_failed.
    with pytest.raises(ApplyPatchError) as caught:
        apply_patch.apply(
            tree, agent_patch("a.txt", "three", "3"), post_check="false", rollback_on_fail=True
        )
    assert caught.value.code == "post_check_failed"
    assert (tree / "a.txt").read_text() == "1\n2\nthree\n"
    with pytest.raises(ApplyPatchError) as caught:
        apply_patch.apply(tree, agent_patch("a.txt", "three", "3"), rollback_on_fail=True)
    assert caught.value.code == "usage"
    assert caught.value.hint == "name a command with post_check, or leave out rollback_on_fail"
    with pytest.raises(ApplyPatchError) as caught:
        apply_patch.apply(tree, agent_patch("a.txt", "three", "3"), post_check="true", check=True)
    assert caught.value.message == "a post-check runs after a write, and a check writes nothing"


def test_max_risk_refuses_with_the_score_and_a_python_hint(tree: Path) -> None:
    delete = "*** Begin Patch\n*** Delete File: a.txt\n*** End Patch\n"
    with pytest.raises(ApplyPatchError) as caught:
        apply_patch.apply(tree, delete, max_risk=0)
    e = caught.value
    assert e.code == "risk_exceeded" and e.details["details"]["risk"]["score"] > 0
    assert e.hint and e.hint.endswith("ask for a higher max_risk"), e.hint
    assert (tree / "a.txt").exists()
    report = apply_patch.apply(tree, delete, max_risk=1000)
    assert report["risk"]["score"] > 0 and not (tree / "a.txt").exists()


def test_keep_chips_decides_whether_a_refusal_is_kept(tree: Path) -> None:
    missing = agent_patch("a.txt", "four", "4")
    with pytest.raises(ApplyPatchError) as kept:
        apply_patch.apply(tree, missing)
    assert "chip" in kept.value.details.get("details", {}), kept.value.details
    with pytest.raises(ApplyPatchError) as not_kept:
        apply_patch.apply(tree, missing, keep_chips=False)
    assert "chip" not in (not_kept.value.details.get("details") or {})
    # A plain check keeps none, unless asked.
    with pytest.raises(ApplyPatchError) as checked:
        apply_patch.apply(tree, missing, check=True)
    assert "chip" not in (checked.value.details.get("details") or {})
    with pytest.raises(ApplyPatchError) as asked:
        apply_patch.apply(tree, missing, check=True, keep_chips=True)
    assert "chip" in asked.value.details.get("details", {})


def test_durability_and_its_variable(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    apply_patch.apply(tree, agent_patch("a.txt", "one", "1"), durability="atomic")
    assert (tree / "a.txt").read_text() == "1\ntwo\nthree\n"
    with pytest.raises(ApplyPatchError) as caught:
        apply_patch.apply(tree, agent_patch("a.txt", "two", "2"), durability="relaxed")
    assert caught.value.code == "usage"
    assert caught.value.message.startswith('"relaxed" is not a durability mode')
    assert caught.value.hint == "give durability one of them, or leave it out for full"
    # The variable is read where the command line reads it: a typo there is refused too.
    monkeypatch.setenv("APPLY_PATCH_DURABILITY", "relaxed")
    with pytest.raises(ApplyPatchError) as caught:
        apply_patch.apply(tree, agent_patch("a.txt", "two", "2"))
    assert caught.value.message.startswith('APPLY_PATCH_DURABILITY="relaxed"')
    monkeypatch.setenv("APPLY_PATCH_DURABILITY", "atomic")
    apply_patch.apply(tree, agent_patch("a.txt", "two", "2"))
    assert (tree / "a.txt").read_text() == "1\n2\nthree\n"


class Mcp:
    """A bare MCP client of the installed `apply-patch mcp` (JSON-RPC lines on stdio)."""

    def __init__(self, root: Path) -> None:
        self.proc = subprocess.Popen(
            [str(VENV_BIN / "apply-patch"), "mcp", "--root", str(root)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )
        self.next_id = 0
        self.request("initialize", {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "pytest", "version": "1"},
        })
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message: Dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: Dict[str, Any]) -> Dict[str, Any]:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline()
            assert line, "the server answered"
            message = json.loads(line)
            if message.get("id") == self.next_id:
                return message["result"]

    def tool(self, name: str, arguments: Dict[str, Any]) -> Dict[str, Any]:
        return self.request("tools/call", {"name": name, "arguments": arguments})

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def test_the_same_bad_option_through_the_cli_mcp_and_python(tree: Path) -> None:
    """One place decides every rule: `window` 0 is refused with the same code and message
    by all three (MCP took it before); each hint spells the option its own way."""
    patch = agent_patch("a.txt", "two", "2")
    cli = subprocess.run(
        [str(VENV_BIN / "apply-patch"), "--json", "--root", str(tree), "--window", "0", "-"],
        input=patch, capture_output=True, text=True,
    )
    assert cli.returncode == 2, cli.stderr
    cli_error = json.loads(cli.stdout)["error"]
    mcp = Mcp(tree)
    try:
        mcp.tool("read", {"path": "a.txt"})
        result = mcp.tool("apply_patch", {"patch": patch, "window": 0})
    finally:
        mcp.close()
    assert result.get("isError") is True, result
    mcp_error = result["structuredContent"]["error"]
    with pytest.raises(ApplyPatchError) as caught:
        apply_patch.apply(tree, patch, window=0)
    py = caught.value
    assert (py.code, py.message) == (cli_error["code"], cli_error["message"])
    assert (mcp_error["code"], mcp_error["message"]) == (py.code, py.message)
    assert py.message == "the window must be at least 1 line"
    assert cli_error["hint"].startswith("give --window N ")
    assert mcp_error["hint"].startswith("give window: N ")
    assert py.hint and py.hint.startswith("give window=N ")
    assert (tree / "a.txt").read_text() == "one\ntwo\nthree\n"


def test_hints_name_options_as_python_spells_them(tree: Path) -> None:
    diff = (
        "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n three\n"
    )
    with pytest.raises(ApplyPatchError) as caught:
        apply_patch.apply(tree, diff)
    assert caught.value.code == "parse_error"
    assert caught.value.hint and "recount=True" in caught.value.hint, caught.value.hint
    assert "--recount" not in caught.value.hint
    (tree / "nb.ipynb").write_text("{}\n")
    with pytest.raises(ApplyPatchError) as caught:
        apply_patch.apply(tree, agent_patch("nb.ipynb", "{}", "{ }"))
    assert caught.value.hint and caught.value.hint.endswith("or pass allow_notebooks=True")


def debug_binary() -> Optional[Path]:
    """The repository's test build (`cargo test` builds it with the crash failpoints)."""
    found = REPO / "target" / "debug" / "apply-patch"
    return found if found.exists() else None


def crashed_tree(base: Path, k: int) -> Optional[Path]:
    """A tree in which the test build crashed a two-file commit at step `k` (None when the
    run went through: a build without failpoints)."""
    binary = debug_binary()
    assert binary is not None
    root = base / f"crash{k}"
    root.mkdir()
    (root / "a.txt").write_text("one\n")
    (root / "b.txt").write_text("bee\n")
    patch = (
        "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n"
        "*** Update File: b.txt\n@@\n-bee\n+BEE\n*** End Patch\n"
    )
    env = {**os.environ, "APPLY_PATCH_FAILPOINT": f"commit:{k}:abort"}
    env.pop("APPLY_PATCH_DURABILITY", None)
    done = subprocess.run(
        [str(binary), "--root", str(root), "-"], input=patch, text=True, env=env,
        capture_output=True,
    )
    return None if done.returncode == 0 else root


def test_read_recovers_a_crashed_transaction_first(tmp_path: Path) -> None:
    if debug_binary() is None:
        pytest.skip("no test build at target/debug/apply-patch (run `cargo test` first)")
    recovered: List[int] = []
    for k in range(1, 30):
        root = crashed_tree(tmp_path, k)
        if root is None:
            if k == 1:
                pytest.skip("target/debug/apply-patch was built without its failpoints")
            break
        view = apply_patch.read(root, "a.txt")
        warnings = view.get("warnings", [])
        if any(w["code"] == "recovered" for w in warnings):
            recovered.append(k)
        a, b = (root / "a.txt").read_text(), (root / "b.txt").read_text()
        assert (a, b) in {("one\n", "bee\n"), ("ONE\n", "BEE\n")}, (k, a, b)
        assert view["lines"] == [a.rstrip("\n")]
        shutil.rmtree(root)
    assert recovered, "some crash left a journal that read recovered"


def test_formatter_keyword_formats_what_is_written_and_undo_restores(tree: Path) -> None:
    """Issue 25 item 2: `formatter=` as a dict or a list of GLOB=CMD."""
    report = apply_patch.apply(
        tree, agent_patch("a.txt", "two", "zwei"), formatter={"*.txt": "tr a-z A-Z"}, diff=True
    )
    assert (tree / "a.txt").read_text() == "ONE\nZWEI\nTHREE\n"
    assert "+ZWEI" in report["diff"], report["diff"]
    assert (tree / "src" / "app.py").read_text() == "def main():\n    return 1\n"
    apply_patch.undo(tree)
    assert (tree / "a.txt").read_text() == "one\ntwo\nthree\n"
    apply_patch.apply(tree, agent_patch("a.txt", "two", "zwei"), formatter=["*.py=false"])
    assert (tree / "a.txt").read_text() == "one\nzwei\nthree\n", "the glob does not match"


def test_a_failing_formatter_raises_formatter_failed_and_writes_nothing(tree: Path) -> None:
    with pytest.raises(ApplyPatchError) as caught:
        apply_patch.apply(
            tree, agent_patch("a.txt", "two", "zwei"), formatter="*.txt=echo no >&2; exit 5"
        )
    assert caught.value.code == "formatter_failed"
    assert (tree / "a.txt").read_text() == "one\ntwo\nthree\n"
    with pytest.raises(ApplyPatchError) as caught:
        apply_patch.apply(tree, agent_patch("a.txt", "two", "zwei"), formatter=["*.txt"])
    assert caught.value.code == "usage"
    assert caught.value.hint and 'formatter="GLOB=CMD"' in caught.value.hint, caught.value.hint
