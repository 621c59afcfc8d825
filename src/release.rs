//! Large buffers handed back to the system off the critical path. Unmapping tens of
//! megabytes takes milliseconds (every page is returned); a run that has finished with a
//! large file's content need not wait for that.

/// From this many bytes on, [`release`] drops on another thread.
const RELEASE_BYTES: usize = 4 << 20;

/// Drop `value`, which holds `size` bytes: on a short-lived thread when that is large, here
/// otherwise (or when no thread can be started).
pub(crate) fn release<T: Send + 'static>(value: T, size: usize) {
    if size < RELEASE_BYTES {
        return;
    }
    // A spawn that fails drops the closure, and `value` with it, right here.
    let _ = std::thread::Builder::new()
        .name("release".into())
        .spawn(move || drop(value));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_and_large_values_are_dropped() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        use std::sync::Arc;
        struct Counted(Arc<AtomicUsize>);
        impl Drop for Counted {
            fn drop(&mut self) {
                self.0.fetch_add(1, Ordering::SeqCst);
            }
        }
        let drops = Arc::new(AtomicUsize::new(0));
        release(Counted(drops.clone()), 10);
        assert_eq!(drops.load(Ordering::SeqCst), 1);
        release(Counted(drops.clone()), RELEASE_BYTES);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while drops.load(Ordering::SeqCst) < 2 && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        assert_eq!(drops.load(Ordering::SeqCst), 2);
    }
}
