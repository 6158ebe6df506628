//! Work spread over threads: how many to use, and running one worker function on each.
//!
//! Both users of more than one core go through here: the stream (one worker per thread,
//! each taking chunks until none are left) and the batch calls (a batch cut into contiguous
//! parts of about equal bytes, one per thread). A thread costs about 15 microseconds to
//! start and join, so a batch is cut only when every part is worth several times that
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

use alloc::string::String;
use alloc::vec::Vec;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Mutex, OnceLock};
use std::thread;

/// The most threads any call uses.
pub const MAX_THREADS: usize = 256;

/// The least work, in bytes, that a batch gives each thread when the thread count is
/// automatic: below it, fewer threads (down to one) run the batch. Measured on Zen 5 (2
/// cores, `seal_batch` of the Internet mix, about 3 GB/s per core): two threads break even
/// with one at 170 KiB per thread and win by 1.25x at 340 KiB, 1.8x at 2.7 MiB; from Python
/// (`encrypt_many`) the same, 1.13x at 172 KiB per thread and 1.3x at 660 KiB.
pub const MIN_BYTES_PER_THREAD: usize = 256 * 1024;

/// The number of available cores (one if the system cannot tell), at most [`MAX_THREADS`];
/// asked once per process (on Linux the question reads the cgroup's CPU quota, some 20
/// microseconds).
pub fn available_cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| {
        thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(MAX_THREADS)
    })
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

/// Cuts `items` into at most `threads` contiguous parts (0: as [`threads_for`] decides for
/// their total `weight`) of about equal weight and runs `work` on each part, each on its own
/// thread (the first on this one). A thread the OS refuses to start costs nothing but speed:
/// its part runs on this thread. A panic in `work` is propagated once every part is done.
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
    let parts = threads_for(total, threads).min(items.len()).max(1);
    if parts == 1 {
        work(items);
        return;
    }
    // The cuts: each part ends where the running weight reaches its share of the total.
    let count = items.len();
    let mut ends = Vec::with_capacity(parts);
    let (mut end, mut done) = (0, 0usize);
    for part in 0..parts {
        let goal = (total as u128 * (part as u128 + 1) / parts as u128) as usize;
        let start = end;
        while end < count && (done < goal || end == start) {
            done = done.saturating_add(weight(&items[end]));
            end += 1;
        }
        if part + 1 == parts {
            end = count;
        }
        ends.push(end);
    }
    let mut cuts = Vec::with_capacity(parts);
    let mut rest = items;
    let mut start = 0;
    for end in ends {
        let (this, later) = core::mem::take(&mut rest).split_at_mut(end - start);
        rest = later;
        start = end;
        cuts.push(Mutex::new(Some(this)));
    }
    let run = &|part: usize| {
        let taken = cuts[part].lock().map_or(None, |mut cut| cut.take());
        if let Some(items) = taken {
            work(items);
        }
    };
    thread::scope(|scope| {
        let refused: Vec<usize> = (1..parts)
            .filter(|&part| {
                thread::Builder::new()
                    .spawn_scoped(scope, move || run(part))
                    .is_err()
            })
            .collect();
        run(0);
        refused.into_iter().for_each(run);
    });
}

/// What stopped a worker of [`run_workers`].
pub(crate) enum WorkerFailure {
    /// The OS refused to start a thread.
    Spawn(std::io::Error),
    /// A worker panicked; the panic's message.
    Panicked(String),
}

/// Runs `worker` on `threads` threads, this one included. A panic in a worker is caught
/// and handed to `failed`; so is a thread the OS refuses to start (and no further threads
/// are started). `failed` must make the other workers stop, or they run to the end.
pub(crate) fn run_workers(
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
