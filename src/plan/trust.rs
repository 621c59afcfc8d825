//! Stage: plan (trust). Whether a file's hunk line numbers belong to the file as it is (SPEC
//! §5 "Trust in line numbers"): a unified diff's unless its `index` blob id is known to
//! differ from the file, an agent patch's only under a `*** Base:` that matches it. And the
//! line that makes them trusted when a hunk is sent again, which every selector of an
//! `ambiguous_match` carries (the `*** Base:` line of the file as it is, or the `index` line
//! with the file's current blob id).
//!
//! Pure: the blob ids and hashes come in computed; nothing is read here.

use crate::content::Content;
use crate::locate::{LineNumbers, LocateError, PatchPart};
use crate::model::{FilePatch, Rules, Selector, Trust};

/// How many hex digits of the file's SHA-256 a selector's `*** Base:` line gives: as many as
/// the `read` tool's version.
const BASE_DIGITS: usize = 16;

/// The trust of `fp`'s line numbers; `stale`: the file's current blob id when the diff's
/// `index` id is known to differ from it. A `*** Base:` reaching the planner matched the file
/// (a stale one is refused before any hunk is placed).
pub(super) fn line_numbers(rules: Rules, fp: &FilePatch<'_>, stale: Option<&str>) -> LineNumbers {
    match rules.line_numbers {
        Trust::UnlessStale if stale.is_some() => LineNumbers::Untrusted,
        Trust::UnlessStale => LineNumbers::ByFormat,
        Trust::UnderBase if fp.base.is_some() => LineNumbers::Trusted,
        Trust::UnderBase => LineNumbers::ByFormat,
    }
}

/// The line that makes `fp`'s line numbers trusted when it is sent again, if one is needed:
/// for an agent patch the `*** Base:` line of `current`, for SEARCH/REPLACE blocks the
/// `--base` option with it; for a unified diff whose `index` id differs from the file, its
/// `index` line with the file's blob id as the old id.
pub(super) fn trust_line(
    rules: Rules,
    fp: &FilePatch<'_>,
    current: &Content,
    stale: Option<&str>,
) -> Option<String> {
    let base = || {
        let mut hex = crate::hash::hex(&current.sha256());
        hex.truncate(BASE_DIGITS);
        hex
    };
    match (rules.selector, stale, &fp.blob_ids) {
        (Selector::AgentHeader, ..) => Some(format!("*** Base: {}", base())),
        (Selector::StartLine, ..) => Some(format!("--base {}", base())),
        (Selector::UnifiedHeader, Some(id), Some(ids)) => Some(format!("index {id}..{}", ids.new)),
        _ => None,
    }
}

/// `error` with `line` put before the `@@` line of each hunk or anchor candidate's selector:
/// resent with both, the hunk lands on that candidate.
pub(super) fn with_trust(error: LocateError, line: Option<&str>) -> LocateError {
    let Some(line) = line else {
        return error;
    };
    match error {
        LocateError::AmbiguousMatch {
            unit: PatchPart::Hunk,
            hunk,
            message,
            expected,
            mut candidates,
            hint,
        } => {
            for c in &mut candidates {
                if let Some(serde_json::Value::String(header)) = &mut c.select {
                    *header = format!("{line}\n{header}");
                }
            }
            LocateError::AmbiguousMatch {
                unit: PatchPart::Hunk,
                hunk,
                message,
                expected,
                candidates,
                hint,
            }
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Candidate;
    use crate::model::{BlobIds, Body, FileOp};

    fn fp(base: Option<&str>, ids: Option<(&str, &str)>) -> FilePatch<'static> {
        let mut fp = FilePatch::new(
            FileOp::Modify,
            Some("a".into()),
            Some("a".into()),
            Body::Hunks(Vec::new()),
            1,
        );
        fp.base = base.map(str::to_string);
        fp.blob_ids = ids.map(|(old, new)| BlobIds {
            old: old.into(),
            new: new.into(),
        });
        fp
    }

    #[test]
    fn numbers_are_trusted_under_a_base_or_a_matching_index() {
        use LineNumbers::*;
        let ids = Some(("1111111", "2222222"));
        assert_eq!(line_numbers(Rules::UNIFIED, &fp(None, ids), None), ByFormat);
        assert_eq!(
            line_numbers(Rules::UNIFIED, &fp(None, ids), Some("ab")),
            Untrusted
        );
        assert_eq!(
            line_numbers(Rules::AGENT, &fp(Some("abcdef12"), None), None),
            Trusted
        );
        assert!(!line_numbers(Rules::AGENT, &fp(None, None), None).trusted(Rules::AGENT));
    }

    #[test]
    fn the_trust_line_goes_above_each_hunk_selector() {
        let current = Content::from(b"x\n".to_vec());
        let agent = trust_line(Rules::AGENT, &fp(None, None), &current, None);
        let hex = crate::hash::sha256_hex(b"x\n");
        assert_eq!(agent, Some(format!("*** Base: {}", &hex[..16])));
        let ids = Some(("1111111", "2222222"));
        let stale = trust_line(Rules::UNIFIED, &fp(None, ids), &current, Some("abcd"));
        assert_eq!(stale.as_deref(), Some("index abcd..2222222"));
        assert_eq!(
            trust_line(Rules::UNIFIED, &fp(None, ids), &current, None),
            None
        );
        let err = LocateError::AmbiguousMatch {
            unit: PatchPart::Hunk,
            hunk: 0,
            message: "m".into(),
            expected: Vec::new(),
            candidates: vec![Candidate {
                line: 2,
                context: Vec::new(),
                select: Some("@@ -2 @@".into()),
            }],
            hint: "h".into(),
        };
        let LocateError::AmbiguousMatch { candidates, .. } = with_trust(err, stale.as_deref())
        else {
            panic!("still an ambiguity");
        };
        assert_eq!(
            candidates[0].select,
            Some("index abcd..2222222\n@@ -2 @@".into())
        );
    }
}
