//! Stage: report (feature `git`). The JSON views the command line and the MCP tools print,
//! built once from a result where it is printed or sent: [`AgentReport::of`] (SPEC §8's
//! report of an apply plus `risk`, `verification` and `preview`) and [`ConfirmReport::of`]
//! (`confirm`). The library returns the results; nothing here runs anything.

use super::confirm::Confirmed;
use super::{Applied, Refused};
use crate::agent::postcheck::Verification;
use crate::error::Error;
use crate::report::{Report, Warning};
use crate::risk::Risk;

/// The report of an agent apply: SPEC §8's object plus `risk`, `verification` and `preview`.
#[derive(Debug, Clone, serde::Serialize)]
#[non_exhaustive]
pub struct AgentReport {
    #[serde(flatten)]
    pub report: Report,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub risk: Option<Risk>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verification: Option<Verification>,
    /// The event id of a kept preview (`apply-patch confirm ID`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preview: Option<String>,
    /// The exit status (SPEC §8; 4 when applied but the post-check failed).
    #[serde(skip)]
    pub exit: u8,
}

impl AgentReport {
    /// The view of a pipeline result.
    pub fn of(outcome: &Result<Applied, Box<Refused>>) -> Self {
        let report = Report::from(outcome);
        match outcome {
            Ok(a) => AgentReport {
                report,
                risk: a.risk.clone(),
                verification: a.verification.clone(),
                preview: a.preview.clone(),
                exit: a.exit_status(),
            },
            Err(r) => AgentReport {
                report,
                risk: r.risk.clone(),
                verification: r.verification.clone(),
                preview: None,
                exit: r.exit_status(),
            },
        }
    }

    /// The JSON object, pretty-printed, ending in a newline.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self)
            .expect("a report serialises because every field is plain data");
        s.push('\n');
        s
    }
}

/// The JSON view of `apply-patch confirm ID`'s result, built where it is printed or sent
/// ([`ConfirmReport::of`]).
#[derive(Debug, Clone, serde::Serialize)]
#[non_exhaustive]
pub struct ConfirmReport {
    pub ok: bool,
    pub preview: String,
    /// The `files` of the preview's report (what was written).
    pub files: serde_json::Value,
    pub warnings: Vec<Warning>,
    pub error: Option<Error>,
}

impl ConfirmReport {
    /// The view of [`confirm`](super::confirm::confirm)'s result for preview `id`.
    pub fn of(id: &str, result: &Result<Confirmed, Error>) -> Self {
        match result {
            Ok(c) => ConfirmReport {
                ok: true,
                preview: c.preview.clone(),
                files: c.files.clone(),
                warnings: c.warnings.clone(),
                error: None,
            },
            Err(e) => ConfirmReport {
                ok: false,
                preview: id.to_string(),
                files: serde_json::Value::Array(Vec::new()),
                warnings: Vec::new(),
                error: Some(e.clone()),
            },
        }
    }

    pub fn exit_status(&self) -> u8 {
        self.error.as_ref().map_or(0, Error::exit_status)
    }
}
