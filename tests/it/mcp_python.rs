//! The MCP server as a Python host sees it: the official MCP Python SDK's stdio client
//! (`tests/python/mcp_client.py`) starts the real binary on a temp tree, lists the tools
//! (annotations, schemas) and calls them, its own output-schema validation included.
//!
//! Needs `python3` with `venv` and PyPI: the SDK is installed once into a virtual environment
//! cached under `target/tmp/` (`CARGO_TARGET_TMPDIR`). Where any of that is missing the test
//! says why on stderr and passes; set `APPLY_PATCH_REQUIRE_PYTHON=1` to make that a failure.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::util::TempTree;

const APP: &str = "def greet(name):\n    return 'hello ' + name\n";

/// Written once the SDK is installed, so later runs skip pip.
const READY: &str = "apply-patch-mcp-ready";

/// Skip (or fail, when Python is required) with a message saying why.
fn skip(why: &str) {
    let message = format!("mcp_python: skipped: {why}");
    if std::env::var_os("APPLY_PATCH_REQUIRE_PYTHON").is_some() {
        panic!("{message} (APPLY_PATCH_REQUIRE_PYTHON is set)");
    }
    eprintln!("{message}");
}

/// The last lines of a command's output, for a skip message.
fn tail(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(5)..].join("\n")
}

/// The venv's python with the `mcp` SDK installed, or why there is none.
fn sdk_python() -> Result<PathBuf, String> {
    let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mcp-python-venv");
    let python = venv.join("bin").join("python");
    if venv.join(READY).exists() && python.exists() {
        return Ok(python);
    }
    let made = Command::new("python3")
        .args(["-m", "venv", "--clear"])
        .arg(&venv)
        .output()
        .map_err(|e| format!("python3 is not available ({e})"))?;
    if !made.status.success() {
        return Err(format!("python3 -m venv failed:\n{}", tail(&made.stderr)));
    }
    let pip = Command::new(&python)
        .args(["-m", "pip", "install", "--disable-pip-version-check", "-q"])
        .args(["--retries", "1", "--timeout", "20", "mcp"])
        .output()
        .map_err(|e| format!("the venv's python cannot run ({e})"))?;
    if !pip.status.success() {
        return Err(format!(
            "pip install mcp failed (PyPI unreachable?):\n{}",
            tail(&pip.stderr)
        ));
    }
    std::fs::write(venv.join(READY), b"").map_err(|e| format!("cannot mark the venv: {e}"))?;
    Ok(python)
}

#[test]
fn the_python_sdk_client_lists_and_calls_the_tools() {
    let python = match sdk_python() {
        Ok(p) => p,
        Err(why) => return skip(&why),
    };
    let t = TempTree::with(&[("app.py", APP)]);
    let state = t.outside("state");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/mcp_client.py");
    let mut child = Command::new(&python)
        .arg(&script)
        .arg(env!("CARGO_BIN_EXE_apply-patch"))
        .arg(t.root())
        .arg(&state)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the venv's python ran pip, so it runs a script");
    // A hung handshake must fail the test, not hang the suite.
    let deadline = Instant::now() + Duration::from_secs(120);
    while child.try_wait().expect("wait for the client").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the Python client did not finish within 120 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().expect("the client's output");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("mcp python client: ok"),
        "the Python client failed:\n{stdout}\n{stderr}"
    );
    assert!(t.read_str("app.py") == APP, "undo put the file back");
    assert!(!t.root().join("pwned").exists(), "the model's command ran");
}
