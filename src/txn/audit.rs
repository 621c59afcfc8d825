//! Stage: after commit / rollback / undo / recovery. The audit log: one JSON line per
//! transaction appended to `audit.jsonl` in the state place — time, root, operation and
//! outcome, and per path the operation, old and new SHA-256 and the lines added and removed
//! (from the planner's [`AuditRecord`]). Must not touch the work tree.

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use super::journal::{Entry, Journal, State};
use super::TxnError;

/// What the planner knows about one path of a transaction, for the audit log.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct AuditFile {
    /// The path written (for a rename, the new path).
    pub path: String,
    /// For a rename or copy, the source path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_path: Option<String>,
    /// `add`, `delete`, `modify`, `rename`, `copy`, `mode` (SPEC §8 `op`).
    pub op: String,
    pub lines_added: usize,
    pub lines_removed: usize,
}

/// What the planner knows about a transaction, for the audit log. `files` may be empty: the
/// log then lists the changed paths with operations derived from their old and new states.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct AuditRecord {
    pub files: Vec<AuditFile>,
}

/// Outcome words of the audit line.
pub const COMMITTED: &str = "committed";
pub const ROLLED_BACK: &str = "rolled_back";
pub const ROLLBACK_FAILED: &str = "rollback_failed";
pub const RECOVERED_ROLLED_BACK: &str = "recovered_rolled_back";
pub const RECOVERED_COMPLETED: &str = "recovered_completed";

/// Builds the audit line of `journal` with `outcome`.
pub fn line(journal: &Journal, outcome: &str) -> serde_json::Value {
    let sha = |s: &State| match s {
        State::File { sha256, .. } => Some(sha256.clone()),
        _ => None,
    };
    // By path, once: a linear search per file made a 100,000-file commit take minutes.
    let by_path: HashMap<&str, &Entry> = journal
        .entries
        .iter()
        .map(|e| (e.path.as_str(), e))
        .collect();
    let find = |p: &str| by_path.get(p).copied();
    let files: Vec<serde_json::Value> = if journal.audit.files.is_empty() {
        journal
            .entries
            .iter()
            .map(|e| {
                serde_json::json!({
                    "path": e.path, "op": derived_op(&e.before, &e.after),
                    "old_sha256": sha(&e.before), "new_sha256": sha(&e.after),
                })
            })
            .collect()
    } else {
        journal
            .audit
            .files
            .iter()
            .map(|f| {
                let old =
                    find(f.old_path.as_deref().unwrap_or(&f.path)).and_then(|e| sha(&e.before));
                let new = find(&f.path).and_then(|e| sha(&e.after));
                serde_json::json!({
                    "path": f.path, "old_path": f.old_path, "op": f.op,
                    "old_sha256": old, "new_sha256": new,
                    "lines_added": f.lines_added, "lines_removed": f.lines_removed,
                })
            })
            .collect()
    };
    let mut line = serde_json::json!({
        "time": rfc3339(SystemTime::now()),
        "id": journal.id,
        "root": journal.root.display().to_string(),
        "operation": journal.operation,
        "outcome": outcome,
        "files": files,
    });
    if let Some(undone) = &journal.undoes {
        line["undoes"] = serde_json::Value::String(undone.clone());
    }
    line
}

fn derived_op(before: &State, after: &State) -> &'static str {
    match (before, after) {
        (State::Missing, _) => "add",
        (_, State::Missing) => "delete",
        (State::File { sha256: a, .. }, State::File { sha256: b, .. }) if a == b => "mode",
        _ => "modify",
    }
}

/// Appends one line to the audit log at `path` (one `write` of the whole line, `O_APPEND`).
/// The log is opened as every state file is ([`super::place`]), made 0600 (it names the
/// paths and hashes of a private tree), and an older one others could read is made so.
pub fn append(path: &Path, line: &serde_json::Value) -> Result<(), TxnError> {
    let shown = path.display().to_string();
    let mut text = line.to_string();
    text.push('\n');
    let (mut file, st) = super::place::open_file(
        path,
        std::fs::OpenOptions::new().create(true).append(true),
        "cannot open the audit log",
    )?;
    if cfg!(unix) && st.mode & 0o077 != 0 {
        super::dirfd::fchmod(&file, st.mode & 0o7700)
            .map_err(|e| TxnError::io_of(&shown, "cannot make private the audit log", &e))?;
    }
    file.write_all(text.as_bytes())
        .map_err(|e| TxnError::io_of(&shown, "cannot append to the audit log", &e))
}

/// `YYYY-MM-DDTHH:MM:SSZ` in UTC.
pub fn rfc3339(time: SystemTime) -> String {
    let secs = time
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days as i64);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Days since 1970-01-01 → (year, month, day) in the proleptic Gregorian calendar
/// (Howard Hinnant's `civil_from_days`).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn formats_utc_times() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        let t = UNIX_EPOCH + Duration::from_secs(951_782_400 + 3_723); // 2000-02-29
        assert_eq!(rfc3339(t), "2000-02-29T01:02:03Z");
        let t = UNIX_EPOCH + Duration::from_secs(1_796_000_000);
        assert_eq!(rfc3339(t), "2026-11-30T00:53:20Z");
    }
}
