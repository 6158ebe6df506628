//! Work spread over threads: how many to use, and running one worker function on each.
//!
//! Both users of more than one core go through here: the stream (one worker per thread,
//! each taking chunks until none are left, on threads of its own) and the batch calls (a
//! batch cut into contiguous parts of about equal bytes, which the calling thread and kept
//! helper threads take in turn). On an Intel Xeon virtual machine a scoped thread cost the
//! caller 16 microseconds to start and 50 to start, run and join (medians; about 15 in all
//! on a Zen 5 one), while a kept thread parked on a condition variable woke and ran within
//! 0.4 microseconds of being asked, even after 30 ms idle; so batches use helpers started
//! once per process, and are cut only when every thread's share is worth it
//! ([`MIN_BYTES_PER_THREAD`]).
//!
//! ```
//! use combsiv::parallel;
//!
//! // Square every number, on as many threads as pay for the work.
//! let mut numbers: Vec<u64> = (0..100_000).collect();
//! parallel::for_each_part(&mut numbers, |_| 8, 0, |part| {
//!     for n in part.iter_mut() {
//!         *n *= *n;
//!     }
//! });
//! assert_eq!(numbers[300], 90_000);
//! ```

#![deny(missing_docs)]

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Mutex;
#[cfg(not(unix))]
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;

use rayon_core::{ThreadPool, ThreadPoolBuilder};

#[cfg(unix)]
mod fork;
#[cfg(test)]
#[path = "../../combsiv/tests/common/xorshift.rs"]
mod xorshift;

/// The most threads any call uses.
pub const MAX_THREADS: usize = 256;

/// The least work, in bytes, that a batch gives each thread when the thread count is
/// automatic: below it, fewer threads (down to one) run the batch. Two threads broke even
/// with one at 170 KiB per thread (Zen 5, `seal_batch` of the Internet mix; the runs:
/// docs/measurements/2026-11-27-zen5-files.md).
pub const MIN_BYTES_PER_THREAD: usize = 256 * 1024;

/// Parts per thread of a batch cut by [`for_each_part`]. Each thread takes the next part
/// not yet taken, so a thread that wakes late does less: with one part per thread, a late
/// thread made the Internet mix on two threads 0.57-0.83 TSC cycles per byte, with 8 parts
/// 0.49-0.55 (Intel Xeon; docs/measurements/2026-11-29-intel-xeon-avx512.md).
const PARTS_PER_THREAD: usize = 8;

/// The number of available cores (one if the system cannot tell), at most [`MAX_THREADS`];
/// asked once per process (on Linux the question reads the cgroup's CPU quota, some 20
/// microseconds). Kept in an atomic, not a `OnceLock`: a `fork()` while another thread is
/// asking would leave the child waiting forever on an initialization no thread of it runs
/// (two threads that ask at once both ask, and agree).
pub fn available_cores() -> usize {
    static CORES: AtomicUsize = AtomicUsize::new(0);
    match CORES.load(Ordering::Relaxed) {
        0 => {
            let cores = thread::available_parallelism()
                .map_or(1, |n| n.get())
                .min(MAX_THREADS);
            CORES.store(cores, Ordering::Relaxed);
            cores
        }
        cores => cores,
    }
}

/// The helper threads of batches, one fewer than the cores (the caller is one more),
/// started by the first batch that is cut and kept for the process; `None` where the OS
/// refused to start them, and under Miri, which reports threads still running at exit: there
/// batches take scoped threads. A child of `fork()` starts its own ([`fork`]).
fn helpers() -> Option<&'static ThreadPool> {
    if cfg!(miri) {
        return None;
    }
    #[cfg(unix)]
    {
        use fork::Helpers;
        let mut helpers = fork::helpers()?;
        if let Helpers::NotStarted = *helpers {
            *helpers = start_helpers().map_or(Helpers::Refused, Helpers::Running);
        }
        match *helpers {
            Helpers::Running(pool) => Some(pool),
            Helpers::NotStarted | Helpers::Refused => None,
        }
    }
    #[cfg(not(unix))]
    {
        static HELPERS: OnceLock<Option<&'static ThreadPool>> = OnceLock::new();
        *HELPERS.get_or_init(start_helpers)
    }
}

/// Starts the helpers, and returns once every one of them has started. A child of `fork()`
/// inherits every lazily initialized static as it was at the fork: one that a helper was
/// initializing then stays "being initialized" in the child, whose own helpers wait on it
/// forever. The collector of the work-stealing queues is such a static (the first steal
/// initializes it): it is initialized here first, and the pool is returned (and the lock
/// that `fork()` waits for, held by the caller on Unix, released) only once every helper has
/// run a first job.
fn start_helpers() -> Option<&'static ThreadPool> {
    drop(crossbeam_epoch::pin());
    let pool = ThreadPoolBuilder::new()
        .num_threads(available_cores().saturating_sub(1).max(1))
        .thread_name(|i| format!("combsiv-batch-{i}"))
        .build()
        .ok()?;
    pool.broadcast(|_| ());
    Some(&*Box::leak(Box::new(pool)))
}

/// The threads to use for `bytes` of batch work when `requested` were asked for: `requested`
/// (at most [`MAX_THREADS`]), or for 0 one per core but no more than give each thread
/// [`MIN_BYTES_PER_THREAD`] (at least one).
pub fn threads_for(bytes: usize, requested: usize) -> usize {
    match requested {
        0 => available_cores().min(bytes / MIN_BYTES_PER_THREAD).max(1),
        n => n.min(MAX_THREADS),
    }
}

/// Cuts `items` into contiguous parts of about equal weight, 8 for each of at most `threads`
/// threads (0: as [`threads_for`] decides for their total `weight`), and runs `work` on every
/// part: this thread and the others take the next part not yet taken until none is left, so
/// a thread that starts late or runs slowly takes fewer. The other threads are helpers kept
/// for the process, or scoped threads when more are asked for than there are helpers; a
/// thread the OS refuses to start costs nothing but speed. A panic in `work` is propagated
/// once the other threads have taken and run every part left.
pub fn for_each_part<T: Send>(
    items: &mut [T],
    weight: impl Fn(&T) -> usize,
    threads: usize,
    work: impl Fn(&mut [T]) + Sync,
) {
    // Weighed twice rather than kept: most batches run on one thread, and for them a
    // vector of weights was an allocation for nothing.
    let weight = |item: &T| weight(item).max(1);
    let total: usize = items
        .iter()
        .fold(0usize, |sum, item| sum.saturating_add(weight(item)));
    let threads = threads_for(total, threads).min(items.len()).max(1);
    if threads == 1 {
        work(items);
        return;
    }
    let parts = (threads * PARTS_PER_THREAD).min(items.len());
    // The cuts: each part ends where the running weight reaches its share of the total.
    let count = items.len();
    let mut cuts = Vec::with_capacity(parts);
    let mut rest = items;
    let (mut start, mut end, mut done) = (0, 0, 0usize);
    for part in 0..parts {
        let goal = (total as u128 * (part as u128 + 1) / parts as u128) as usize;
        while end < count && (done < goal || end == start) {
            done = done.saturating_add(weight(&rest[end - start]));
            end += 1;
        }
        if part + 1 == parts {
            end = count;
        }
        let (this, later) = core::mem::take(&mut rest).split_at_mut(end - start);
        rest = later;
        start = end;
        cuts.push(Mutex::new(Some(this)));
    }
    let (next, finished) = (AtomicUsize::new(0), AtomicUsize::new(0));
    let run = &|| {
        while let Some(cut) = cuts.get(next.fetch_add(1, Ordering::Relaxed)) {
            // Counted when the part ends, also by unwinding from a panic in `work`.
            let _finished = Finished(&finished);
            let taken = cut.lock().map_or(None, |mut cut| cut.take());
            if let Some(items) = taken {
                work(items);
            }
        }
    };
    match helpers() {
        // More threads than the helpers and this one: scoped threads, as asked.
        Some(pool) if threads <= pool.current_num_threads() + 1 => pool.in_place_scope(|scope| {
            for _ in 1..threads {
                scope.spawn(|_| run());
            }
            run();
            // Every part is taken. Waiting for the helpers' last parts by spinning rather than
            // sleeping saves being woken: 25 microseconds on the Intel machine above. Bounded
            // ([`SPIN_LIMIT`]), after which the scope's sleeping wait takes over.
            for _ in 0..SPIN_LIMIT {
                if finished.load(Ordering::Acquire) >= next.load(Ordering::Relaxed).min(parts) {
                    break;
                }
                core::hint::spin_loop();
            }
        }),
        _ => thread::scope(|scope| {
            for _ in 1..threads {
                if thread::Builder::new().spawn_scoped(scope, run).is_err() {
                    break;
                }
            }
            run();
        }),
    }
}

/// Spins of a caller waiting for the helpers' last parts before it sleeps: 0.65 ms on the
/// Intel machine above (a PAUSE there takes about 26 cycles; on CPUs where it takes 140, about
/// 3.5 ms). Longer than a part of a batch worth cutting usually takes, short enough that a
/// helper the OS has descheduled costs little CPU.
const SPIN_LIMIT: u32 = 1 << 16;

/// Counts one part of [`for_each_part`] as finished when dropped.
struct Finished<'a>(&'a AtomicUsize);

impl Drop for Finished<'_> {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::Release);
    }
}

/// What stopped a worker of [`run_workers`].
#[derive(Debug)]
pub enum WorkerFailure {
    /// The OS refused to start a thread.
    Spawn(std::io::Error),
    /// A worker panicked; the panic's message.
    Panicked(String),
}

/// Runs `worker` on `threads` threads, this one included. A panic in a worker is caught
/// and handed to `failed`; so is a thread the OS refuses to start (and no further threads
/// are started). `failed` must make the other workers stop, or they run to the end.
pub fn run_workers(
    threads: usize,
    worker: impl Fn() + Sync,
    failed: impl Fn(WorkerFailure) + Sync,
) {
    let guarded = || {
        if let Err(payload) = catch_unwind(AssertUnwindSafe(&worker)) {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| String::from(*s))
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| String::from("a panic"));
            failed(WorkerFailure::Panicked(what));
        }
    };
    thread::scope(|scope| {
        for _ in 1..threads.max(1) {
            if let Err(e) = thread::Builder::new().spawn_scoped(scope, guarded) {
                failed(WorkerFailure::Spawn(e));
                return;
            }
        }
        guarded();
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every item is worked on exactly once, in parts that keep their order, whatever the
    /// weights and thread counts (more threads than items included).
    #[test]
    fn every_item_runs_once_in_contiguous_parts() {
        let mut next = xorshift::xorshift();
        for count in [0, 1, 2, 7, 16, 17, 100, 1000] {
            for threads in [1, 2, 3, 8, 300] {
                let weights: Vec<usize> = (0..count).map(|_| (next() % 5000) as usize).collect();
                let mut items: Vec<(usize, u32)> =
                    weights.iter().copied().zip(core::iter::repeat(0)).collect();
                let parts = Mutex::new(Vec::new());
                for_each_part(
                    &mut items,
                    |&(w, _)| w,
                    threads,
                    |part| {
                        for item in part.iter_mut() {
                            item.1 += 1;
                        }
                        let first = part.as_ptr() as usize;
                        parts.lock().unwrap().push((first, part.len()));
                    },
                );
                assert!(
                    items.iter().all(|&(_, runs)| runs == 1),
                    "{count} items, {threads} threads"
                );
                let mut parts = parts.into_inner().unwrap();
                let expected_parts = match threads.min(count) {
                    0 | 1 => 1,
                    used => (used * PARTS_PER_THREAD).min(count),
                };
                assert_eq!(
                    parts.len(),
                    expected_parts,
                    "{count} items, {threads} threads"
                );
                parts.sort();
                let size = size_of::<(usize, u32)>();
                let mut expected = items.as_ptr() as usize;
                for (first, len) in parts {
                    assert_eq!(first, expected, "parts follow each other");
                    expected += len * size;
                }
            }
        }
    }

    /// A child of `fork()` has none of its parent's helper threads, whatever its process
    /// id: after the child's fork handler (run here in this process, whose id stays the
    /// same, as a descendant's can come back) the next batch starts a pool of its own,
    /// while a fork seen from the parent's side keeps the pool. (`fork::tests` forks for
    /// real.)
    #[test]
    #[cfg(unix)]
    fn after_a_fork_the_child_starts_its_own_pool() {
        let batch = || {
            let mut items: Vec<u32> = (0..64).collect();
            for_each_part(
                &mut items,
                |_| MIN_BYTES_PER_THREAD,
                2,
                |part| part.iter_mut().for_each(|item| *item += 1),
            );
            assert!(
                items
                    .iter()
                    .enumerate()
                    .all(|(i, &item)| item == i as u32 + 1)
            );
            helpers().map(|pool| pool as *const ThreadPool)
        };
        let first = batch();
        assert!(first.is_some());
        fork::tests::as_in_the_parent();
        assert_eq!(batch(), first);
        fork::tests::as_in_a_child();
        let second = batch();
        assert!(second.is_some() && second != first);
    }

    /// A panic in one part reaches the caller after every other part ran, on the kept
    /// helpers and on scoped threads alike, and the helpers serve the next call.
    #[test]
    fn a_panic_in_a_part_reaches_the_caller_and_the_helpers_stay_usable() {
        for threads in [2, 3, MAX_THREADS] {
            let mut items: Vec<u32> = (0..64).collect();
            let caught = catch_unwind(AssertUnwindSafe(|| {
                for_each_part(
                    &mut items,
                    |_| 1,
                    threads,
                    |part| {
                        for item in part.iter_mut() {
                            *item += 1000;
                        }
                        assert!(!part.contains(&1005), "a bug in one part");
                    },
                );
            }));
            assert!(caught.is_err(), "{threads} threads");
            assert!(items.iter().all(|&item| item >= 1000), "every part ran");
            let mut again: Vec<u32> = (0..64).collect();
            for_each_part(
                &mut again,
                |_| 1,
                threads,
                |part| {
                    for item in part.iter_mut() {
                        *item *= 2;
                    }
                },
            );
            assert!(
                again
                    .iter()
                    .enumerate()
                    .all(|(i, &item)| item == 2 * i as u32)
            );
        }
    }
}
