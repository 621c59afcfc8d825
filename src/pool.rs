//! A bounded pool for work on many independent items (staging many files): the items are
//! shared out among at most [`MAX_THREADS`] scoped threads, as many as the machine has cores,
//! each taking the next item when done with one, never a thread per item. A few items are
//! done on the calling thread: a thread costs more than they do.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// The most threads a pool runs at once (the calling thread included).
pub const MAX_THREADS: usize = 8;

/// Items per thread below which a pool does not start one more.
pub const MIN_ITEMS_PER_THREAD: usize = 16;

/// How many threads (the calling one included) a pool uses for `items` items.
pub fn threads_for(items: usize) -> usize {
    let wanted = (items / MIN_ITEMS_PER_THREAD).min(MAX_THREADS);
    if wanted <= 1 {
        // Asking the system for its CPU count is not free (on Linux std reads the cgroup's
        // files and the affinity mask: about a dozen system calls); a one-file patch, the
        // everyday case, never needs the answer.
        return 1;
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    cores.min(wanted)
}

/// `work` of every item, in the items' order; the calling thread works too. A panic in
/// `work` is passed on to the caller.
pub fn map<T: Sync, R: Send>(items: &[T], work: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = threads_for(items.len());
    if threads <= 1 {
        return items.iter().map(work).collect();
    }
    let next = AtomicUsize::new(0);
    let done: Vec<Mutex<Option<R>>> = items.iter().map(|_| Mutex::new(None)).collect();
    let run = || loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        let Some(item) = items.get(i) else { break };
        let result = work(item);
        *done[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(result);
    };
    std::thread::scope(|scope| {
        // A thread the system refuses to start is no error: the threads that did start, and
        // this one, take its share of the items.
        let helpers: Vec<_> = (1..threads)
            .filter_map(|_| std::thread::Builder::new().spawn_scoped(scope, run).ok())
            .collect();
        run();
        for helper in helpers {
            helper
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        }
    });
    done.into_iter()
        .map(|slot| {
            slot.into_inner()
                .unwrap_or_else(|e| e.into_inner())
                .expect("every item was taken by a thread that finished, because all joined")
        })
        .collect()
}

/// Work started beside the calling thread by [`beside`]: on a thread of its own or, when the
/// system would not start one, kept to run on the calling thread when it is joined.
pub enum Beside<'scope, T, F> {
    Thread(std::thread::ScopedJoinHandle<'scope, T>),
    Later(F),
}

impl<T, F: FnOnce() -> T> Beside<'_, T, F> {
    /// The work's result; a panic in it is passed on as [`std::thread::JoinHandle::join`]
    /// passes it.
    pub fn join(self) -> std::thread::Result<T> {
        match self {
            Beside::Thread(handle) => handle.join(),
            Beside::Later(work) => std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)),
        }
    }
}

/// Runs `work` on a scoped thread beside the calling one; when the system refuses a thread
/// (resource limits), the work runs on the calling thread when it is joined instead, so that
/// a busy machine slows a run down rather than failing it. Work that waits for the calling
/// thread (a channel's receiver) is fine: by the join, the calling thread is done with it.
pub fn beside<'scope, 'env, T, F>(
    scope: &'scope std::thread::Scope<'scope, 'env>,
    work: F,
) -> Beside<'scope, T, F>
where
    T: Send + 'scope,
    F: FnOnce() -> T + Send + 'scope,
{
    // A refused spawn drops its closure: the work stays in this slot, to be taken back.
    let slot = std::sync::Arc::new(Mutex::new(Some(work)));
    let theirs = std::sync::Arc::clone(&slot);
    let spawned = std::thread::Builder::new().spawn_scoped(scope, move || {
        let work = theirs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .expect("the work is taken once, by the thread that was started");
        work()
    });
    match spawned {
        Ok(handle) => Beside::Thread(handle),
        Err(_) => Beside::Later(
            slot.lock()
                .unwrap_or_else(|e| e.into_inner())
                .take()
                .expect("no thread started, so the work is still in its slot"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_beside_returns_its_result_and_passes_a_panic_on() {
        let here = std::thread::current().id();
        let (value, elsewhere) = std::thread::scope(|scope| {
            let job = beside(scope, || (6 * 7, std::thread::current().id() != here));
            job.join().expect("no panic")
        });
        assert_eq!(value, 42);
        assert!(elsewhere, "a thread was started on this machine");
        let panicked = std::thread::scope(|scope| beside(scope, || panic!("boom")).join());
        assert!(panicked.is_err());
    }

    #[test]
    fn work_kept_for_later_runs_at_the_join_even_when_it_waits_for_the_caller() {
        // What `beside` returns when the system refuses a thread: the work runs at the join,
        // after the calling thread has sent everything and hung up.
        let (send, received) = std::sync::mpsc::channel::<u32>();
        let later: Beside<'_, u32, _> = Beside::Later(move || received.iter().sum::<u32>());
        for n in 1..=4 {
            send.send(n).expect("the receiver is alive");
        }
        drop(send);
        assert_eq!(later.join().expect("no panic"), 10);
        let panicking: Beside<'_, (), _> = Beside::Later(|| panic!("boom"));
        assert!(panicking.join().is_err());
    }

    #[test]
    fn results_keep_the_items_order_and_few_items_stay_on_this_thread() {
        let items: Vec<usize> = (0..1000).collect();
        let doubled = map(&items, |i| i * 2);
        assert_eq!(doubled, items.iter().map(|i| i * 2).collect::<Vec<_>>());
        let here = std::thread::current().id();
        let few: Vec<usize> = (0..MIN_ITEMS_PER_THREAD - 1).collect();
        assert!(map(&few, |_| std::thread::current().id() == here)
            .into_iter()
            .all(|same| same));
        assert_eq!(threads_for(0), 1);
        assert_eq!(threads_for(2 * MIN_ITEMS_PER_THREAD - 1), 1);
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        assert_eq!(threads_for(2 * MIN_ITEMS_PER_THREAD), cores.min(2));
        assert!(threads_for(1 << 20) <= MAX_THREADS);
    }

    #[test]
    fn a_pool_uses_more_than_one_thread_for_many_items_on_a_multi_core_machine() {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let items: Vec<usize> = (0..MIN_ITEMS_PER_THREAD * 8).collect();
        let ids = map(&items, |_| {
            // Long enough that one thread cannot take every item before the others start.
            std::thread::sleep(std::time::Duration::from_millis(2));
            std::thread::current().id()
        });
        let distinct: std::collections::HashSet<_> = ids.into_iter().collect();
        assert_eq!(distinct.len() > 1, cores > 1);
    }
}
