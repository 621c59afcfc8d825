//! The command line: clap's raw arguments ([`RawArgs`]) are validated into [`Options`], then
//! run against the library's public API. Nothing here places hunks or writes files; this
//! module only reads the patch input and turns reports into text.
//!
//! Every run yields an [`Outcome`] (stdout bytes, stderr text, exit status) that `main`
//! prints, so the whole command is testable without a process.

use std::ffi::OsString;
use std::path::PathBuf;

use apply_patch::model::Format;
use apply_patch::parse::ParseOptions;
use apply_patch::pipeline::{self, FrontEnd, Mode, RawOptions, Target};
use apply_patch::report::{error_text, Report, Style};
use apply_patch::structure;
use apply_patch::transaction as txn;
use apply_patch::{Error, ErrorCode};
use clap::{CommandFactory as _, Parser, Subcommand, ValueEnum};

mod agent;
mod applied;
mod args;
mod check;
mod elsewhere;
mod input;
mod manual;
mod options;
mod output;
mod run;
mod stat;

pub(crate) use applied::apply_outcome;
pub use args::*;
pub(crate) use input::{codex_input, input_of, read_input};
pub use options::*;
pub use output::*;
pub use run::*;

#[cfg(test)]
mod tests;
