//! Stage: commit. Fault injection for tests of the all-or-nothing promise: every step of a
//! commit (journal write, each directory created, each staged file, each backup, each
//! rename, the directory sync, each verification, the commit mark, and the clean-up steps
//! after it) calls [`Failpoints::step`]; `APPLY_PATCH_FAILPOINT=commit:<k>:<action>` makes
//! step `k` (1-based) fail with an I/O error, abort the process, or pause 30 s. The
//! environment is read only with the `failpoints` cargo feature (the crash tests turn it on):
//! a normal build never reads it. Must not do anything else.

use std::io;

/// What a failpoint does when its step is reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// The step fails with an I/O error (the transaction rolls back).
    Fail,
    /// `std::process::abort()`: a crash, for recovery tests.
    Abort,
    /// Sleep 30 s, so a test can SIGKILL the process mid-commit.
    Pause,
}

/// One failpoint: `step` counts from 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Failpoint {
    pub step: usize,
    pub action: Action,
}

/// The environment variable that sets a failpoint.
pub const ENV: &str = "APPLY_PATCH_FAILPOINT";

/// Overrides the 30 s of `pause` (milliseconds), for tests that let the commit go on.
pub const PAUSE_ENV: &str = "APPLY_PATCH_FAILPOINT_PAUSE_MS";

impl Failpoint {
    /// Parses `commit:<k>:<fail|abort|pause>`.
    pub fn parse(text: &str) -> Option<Failpoint> {
        let mut parts = text.trim().split(':');
        if parts.next()? != "commit" {
            return None;
        }
        let step: usize = parts.next()?.parse().ok()?;
        let action = match parts.next()? {
            "fail" => Action::Fail,
            "abort" => Action::Abort,
            "pause" => Action::Pause,
            _ => return None,
        };
        if parts.next().is_some() || step == 0 {
            return None;
        }
        Some(Failpoint { step, action })
    }

    /// The failpoint of the environment, if any (an invalid value is ignored); always None
    /// without the `failpoints` feature.
    pub fn from_env() -> Option<Failpoint> {
        if !cfg!(feature = "failpoints") {
            return None;
        }
        std::env::var(ENV)
            .ok()
            .as_deref()
            .and_then(Failpoint::parse)
    }
}

/// The step counter of one commit.
#[derive(Debug)]
pub struct Failpoints {
    point: Option<Failpoint>,
    count: usize,
}

impl Failpoints {
    pub fn new(point: Option<Failpoint>) -> Failpoints {
        Failpoints { point, count: 0 }
    }

    /// Steps counted so far.
    #[cfg(test)]
    pub fn count(&self) -> usize {
        self.count
    }

    /// Counts one step named `what`, and fires the failpoint if it is this one.
    pub fn step(&mut self, what: &str) -> io::Result<()> {
        self.count += 1;
        let Some(point) = self.point.filter(|p| p.step == self.count) else {
            return Ok(());
        };
        match point.action {
            Action::Fail => Err(io::Error::other(format!(
                "failpoint commit:{}:fail at {what}",
                self.count
            ))),
            Action::Abort => {
                eprintln!(
                    "apply-patch: failpoint commit:{}:abort at {what}",
                    self.count
                );
                std::process::abort()
            }
            Action::Pause => {
                eprintln!(
                    "apply-patch: failpoint commit:{}:pause at {what}",
                    self.count
                );
                let ms = std::env::var(PAUSE_ENV)
                    .ok()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(30_000);
                std::thread::sleep(std::time::Duration::from_millis(ms));
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_three_actions_and_refuses_the_rest() {
        assert_eq!(
            Failpoint::parse("commit:3:fail"),
            Some(Failpoint {
                step: 3,
                action: Action::Fail
            })
        );
        assert_eq!(
            Failpoint::parse("commit:1:abort").map(|p| p.action),
            Some(Action::Abort)
        );
        assert_eq!(Failpoint::parse("commit:9:pause").map(|p| p.step), Some(9));
        for bad in [
            "",
            "commit",
            "commit:0:fail",
            "commit:x:fail",
            "stage:1:fail",
            "commit:1:boom",
            "commit:1:fail:2",
        ] {
            assert_eq!(Failpoint::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn fail_fires_at_its_step_only() {
        let mut fp = Failpoints::new(Failpoint::parse("commit:2:fail"));
        assert!(fp.step("one").is_ok());
        let err = fp.step("two").expect_err("step 2 fails");
        assert!(err.to_string().contains("commit:2:fail at two"));
        assert!(fp.step("three").is_ok());
        assert_eq!(fp.count(), 3);
    }
}
