//! Stage: the library's front door. Parse-and-apply conveniences over [`crate::pipeline`]
//! (where the one apply sequence lives), taking its [`Options`] and [`Mode`]: a directory
//! ([`apply_to_dir`]), a memory tree ([`apply_to_memory`]), or a plan only ([`plan`]). They
//! return the pipeline's `Result<Applied, Box<Refused>>`; [`Report::from`] is its JSON view.
//! Nothing here plans or writes by itself, and there is no second list of options.
//!
//! ```
//! use apply_patch::apply::apply_to_memory;
//! use apply_patch::pipeline::{Mode, Options};
//! use apply_patch::report::Report;
//! use apply_patch::tree::MemTree;
//!
//! let mut tree = MemTree::new();
//! tree.insert("hello.txt", b"hello\nworld\n".to_vec());
//! let patch = b"*** Begin Patch\n*** Update File: hello.txt\n@@\n hello\n-world\n+there\n*** End Patch\n";
//! let result = apply_to_memory(&mut tree, patch, &Options::default(), Mode::Write);
//! let applied = result.as_ref().expect("applies");
//! assert_eq!(tree.get("hello.txt"), Some(&b"hello\nthere\n"[..]));
//! assert_eq!(applied.files[0].path, "hello.txt");
//! // The JSON object of `apply-patch --json`:
//! assert!(Report::from(&result).to_json().contains("\"ok\": true"));
//! ```

use std::path::Path;

use crate::error::Error;
use crate::pipeline::{self, Applied, Mode, Options, Refused, Target};
use crate::plan::{Plan, Refusal};
#[cfg(doc)]
use crate::report::Report;
use crate::tree::{MemTree, Tree};

/// Parse and plan against any tree, writing nothing.
pub fn plan(tree: &dyn Tree, input: &[u8], opts: &Options) -> Result<Plan, Box<Refusal>> {
    let refusal = |error: Error| Refusal {
        error,
        files: Vec::new(),
        warnings: Vec::new(),
    };
    let patch = pipeline::parse(input, opts).map_err(refusal)?;
    crate::plan::plan(
        tree,
        &patch,
        &opts.plan_options(Mode::Check).map_err(refusal)?,
    )
}

/// Parse `input` and apply it (or in [`Mode::Check`], only plan it) to the directory `root`.
pub fn apply_to_dir(
    root: &Path,
    input: &[u8],
    opts: &Options,
    mode: Mode,
) -> Result<Applied, Box<Refused>> {
    pipeline::apply_bytes(Target::Dir(root), input, opts, mode)
}

/// Parse `input` and apply it (or in [`Mode::Check`], only plan it) to a memory tree.
pub fn apply_to_memory(
    tree: &mut MemTree,
    input: &[u8],
    opts: &Options,
    mode: Mode,
) -> Result<Applied, Box<Refused>> {
    pipeline::apply_bytes(Target::Memory(tree), input, opts, mode)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    #[test]
    fn reverse_of_agent_patch_is_a_usage_error() {
        let mut tree = MemTree::new();
        let opts = Options::builder().reverse(true).build();
        let patch = b"*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\n";
        let refused = apply_to_memory(&mut tree, patch, &opts, Mode::Write).expect_err("refused");
        assert_eq!(refused.error.code, ErrorCode::Usage);
    }
}
