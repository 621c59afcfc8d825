//! Stage: plan only. [`plan`] parses a patch with the pipeline's [`Options`] and plans it
//! against any [`Tree`], writing nothing: the [`Plan`]'s changes are what a commit would
//! write. Applying is [`pipeline::apply_bytes`] (or [`pipeline::apply`] for a parsed patch),
//! the one door for a directory and a memory tree alike; the `apply_to_dir` and
//! `apply_to_memory` wrappers that repeated it are gone.
//!
//! ```
//! use apply_patch::apply::plan;
//! use apply_patch::pipeline::Options;
//! use apply_patch::tree::MemTree;
//!
//! let tree = MemTree::from_pairs([("hello.txt", "hello\nworld\n")]);
//! let patch = b"*** Begin Patch\n*** Update File: hello.txt\n@@\n hello\n-world\n+there\n*** End Patch\n";
//! let planned = plan(&tree, patch, &Options::default()).expect("plans");
//! assert_eq!(planned.changes[0].path, "hello.txt");
//! assert_eq!(tree.get("hello.txt"), Some(&b"hello\nworld\n"[..])); // nothing written
//! ```

use crate::error::Error;
use crate::pipeline::{self, Mode, Options};
use crate::plan::{Plan, Refusal};
use crate::tree::Tree;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;
    use crate::pipeline::{apply_bytes, Target};
    use crate::tree::MemTree;

    #[test]
    fn reverse_of_agent_patch_is_a_usage_error() {
        let mut tree = MemTree::new();
        let opts = Options::builder().reverse(true).build();
        let patch = b"*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\n";
        let refused =
            apply_bytes(Target::Memory(&mut tree), patch, &opts, Mode::Write).expect_err("refused");
        assert_eq!(refused.error.code, ErrorCode::Usage);
    }
}
