//! The kept helper pool across `fork()`. A child process inherits the pool's memory but none
//! of its threads: a batch handed to that pool would wait forever. So the pool lives behind a
//! lock that handlers registered with `pthread_atfork` hold while the process forks (no thread
//! is then midway through starting the pool), and the child's handler forgets the pool: the
//! child's first batch that is cut starts a pool of its own. Python's multiprocessing and
//! Dask's worker processes fork after the parent may have sealed a batch.

#![allow(unsafe_code, reason = "pthread_atfork is a foreign function")]

use core::cell::Cell;
use core::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use rayon_core::ThreadPool;

/// The helper pool of this process.
#[derive(Clone, Copy, Debug)]
pub(super) enum Helpers {
    /// No batch has been cut yet in this process (or the child of a fork has not cut one).
    NotStarted,
    /// The OS refused to start the threads.
    Refused,
    /// Started, and kept for the process.
    Running(&'static ThreadPool),
}

static HELPERS: Mutex<Helpers> = Mutex::new(Helpers::NotStarted);

/// Whether the fork handlers are registered: [`UNREGISTERED`], [`REGISTERING`] (by some
/// thread, now) or [`REGISTERED`]; [`REFUSED`] if registering failed.
static REGISTRATION: AtomicU8 = AtomicU8::new(UNREGISTERED);
const UNREGISTERED: u8 = 0;
const REGISTERING: u8 = 1;
const REGISTERED: u8 = 2;
const REFUSED: u8 = 3;

/// The helper pool, locked; `None` while the fork handlers are not registered (being
/// registered by another thread, in a child forked meanwhile, or refused by the system):
/// then batches take scoped threads, which no fork can strand.
pub(super) fn helpers() -> Option<MutexGuard<'static, Helpers>> {
    match REGISTRATION.compare_exchange(
        UNREGISTERED,
        REGISTERING,
        Ordering::Acquire,
        Ordering::Acquire,
    ) {
        Ok(_) => {
            // SAFETY: the handlers are `extern "C"` functions of this crate, which live as
            // long as its code (glibc drops a library's handlers when it is unloaded); none
            // unwinds past its end (each locks or unlocks `HELPERS`, which the forking thread
            // never holds, and touches a thread-local with `try_with`; a panic would abort). The prepare and parent handlers may
            // take locks (they run before and after the fork, in the parent); the child's
            // only unlocks the lock its own thread took and overwrites a value that owns no
            // memory, which is safe in a child of a multithreaded process.
            let status = unsafe { libc::pthread_atfork(Some(prepare), Some(parent), Some(child)) };
            let registered = status == 0;
            let state = if registered { REGISTERED } else { REFUSED };
            REGISTRATION.store(state, Ordering::Release);
            if !registered {
                return None;
            }
        }
        Err(REGISTERED) => {}
        Err(_) => return None,
    }
    Some(lock())
}

fn lock() -> MutexGuard<'static, Helpers> {
    HELPERS.lock().unwrap_or_else(PoisonError::into_inner)
}

std::thread_local! {
    /// The lock on the pool, held by the forking thread from the prepare handler to the
    /// parent's or the child's.
    static HELD: Cell<Option<MutexGuard<'static, Helpers>>> = const { Cell::new(None) };
}

/// Before the fork, in the forking thread: waits for a pool that is starting, and holds the
/// lock across the fork.
extern "C" fn prepare() {
    let guard = lock();
    let _ = HELD.try_with(|held| held.set(Some(guard)));
}

/// After the fork, in the parent: the pool is as it was.
extern "C" fn parent() {
    let _ = HELD.try_with(|held| drop(held.take()));
}

/// After the fork, in the child, which has none of the pool's threads: forgets the pool (its
/// memory stays allocated: freeing it would wait on threads that do not exist here).
extern "C" fn child() {
    let _ = HELD.try_with(|held| {
        if let Some(mut guard) = held.take() {
            *guard = Helpers::NotStarted;
        }
    });
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// What `fork()` runs in a child: the prepare handler, then the child's.
    pub(crate) fn as_in_a_child() {
        prepare();
        child();
    }

    /// What `fork()` runs in the parent.
    pub(crate) fn as_in_the_parent() {
        prepare();
        parent();
    }

    /// Forks while another thread holds the pool's lock, as a thread starting the pool does:
    /// the fork waits for it, and the child's first batch of two threads completes (a child
    /// that hangs is killed after a minute, and fails the test). Then forks again from a
    /// child, whose pool its parent started: the grandchild's batch completes too. On x86-64
    /// only: CI runs the other architectures under qemu-user, whose 7.2 asserts or hangs in
    /// a child that starts threads after a multithreaded process forked (the handlers' logic
    /// is the same everywhere, and `after_a_fork_the_child_starts_its_own_pool` runs it).
    #[test]
    #[cfg_attr(miri, ignore = "Miri cannot fork")]
    #[cfg_attr(
        not(target_arch = "x86_64"),
        ignore = "qemu-user fails children that start threads after a multithreaded fork"
    )]
    fn a_child_of_fork_runs_batches_whenever_it_was_forked() {
        let batch = || {
            let mut items = vec![1u64; 1 << 20];
            super::super::for_each_part(
                &mut items,
                |_| 4096,
                2,
                |part| part.iter_mut().for_each(|x| *x += 1),
            );
            items.iter().all(|&x| x == 2)
        };
        // Run in a child of this test, whose pool none of the other tests touch.
        let in_child = |body: &dyn Fn() -> bool| {
            // SAFETY: the child only runs the body (batches and allocation, which glibc's own
            // fork handlers keep usable) and leaves with _exit, never returning into the test
            // harness, whose other threads it does not have.
            match unsafe { libc::fork() } {
                0 => {
                    // A panic must not unwind into this copy of the test harness.
                    let passed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(body));
                    let passed = passed.unwrap_or(false);
                    // SAFETY: _exit leaves without running the harness's exit.
                    unsafe { libc::_exit(if passed { 0 } else { 1 }) }
                }
                -1 => panic!("fork failed"),
                pid => {
                    let started = std::time::Instant::now();
                    let mut status = 0;
                    loop {
                        // SAFETY: waits for (or kills) the child just forked, into a local.
                        let waited = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
                        if waited == pid {
                            break libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
                        }
                        if waited != 0 || started.elapsed().as_secs() >= 60 {
                            // SAFETY: as above.
                            unsafe {
                                libc::kill(pid, libc::SIGKILL);
                                libc::waitpid(pid, &mut status, 0);
                            }
                            break false;
                        }
                        std::thread::sleep(std::time::Duration::from_millis(10));
                    }
                }
            }
        };
        let forked_while_starting = in_child(&|| {
            let starting = helpers().expect("registered");
            let forked = std::thread::scope(|scope| {
                let forking = scope.spawn(|| in_child(&|| batch() && batch()));
                std::thread::sleep(std::time::Duration::from_millis(100));
                drop(starting);
                forking.join().unwrap_or(false)
            });
            forked && batch()
        });
        assert!(
            forked_while_starting,
            "a child forked while the pool was starting"
        );
        let grandchild = in_child(&|| batch() && in_child(&|| batch() && batch()));
        assert!(grandchild, "a grandchild whose parent had a pool");
    }
}
