//! The core's one parallel driver, and cooperative interruption of long calls.
//!
//! A long kernel cuts its work into units — a block of draws, a segment, a chunk — and runs
//! them with [`for_each`] (or [`for_each_init`], [`for_each_chunk`], [`map`]). The calling
//! thread works through units itself, alongside `current_num_threads() − 1` helper jobs on the
//! rayon pool; every thread claims the next unit from a shared counter, so each unit runs
//! exactly once and a helper that wakes late simply finds fewer units left. A unit's result
//! may depend only on its index, never on the thread that ran it: results are bit-identical
//! for any number of threads.
//!
//! **Interruption.** The core knows nothing of signals. A caller that wants long calls to stop
//! runs them inside [`watch`] with a `poll` function that says whether to stop (the Python
//! binding's asks the interpreter for a pending Ctrl-C). Before each unit, every thread calls
//! [`checkpoint`]: on the watching thread it calls `poll` at most every [`POLL_EVERY`]; on
//! every thread of the call it reads the call's stop flag, which helpers inherit from the
//! driver that started them (nested drivers included). Once the flag is set, no thread starts
//! another unit, the driver waits for the units under way, and the kernel returns
//! [`Error::Interrupted`], dropping its buffers on the way out. A call that is never stopped
//! does exactly the same work as without a watch.

use crate::{Error, Result};
use std::any::Any;
use std::cell::RefCell;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How often the watching thread asks its `poll` whether to stop. Polling from Python
/// re-acquires the interpreter lock briefly; every 20 ms costs nothing measurable and keeps
/// the reaction to Ctrl-C well under the half second a user notices.
pub const POLL_EVERY: Duration = Duration::from_millis(20);

/// The watching thread's poll and when to call it next.
struct Watcher {
    poll: Box<dyn FnMut() -> bool>,
    next: Instant,
}

thread_local! {
    /// The stop flag of the call this thread is working for (none outside a watched call).
    static STOP: RefCell<Option<Arc<AtomicBool>>> = const { RefCell::new(None) };
    /// The poll of the call started on this thread, if any.
    static WATCHER: RefCell<Option<Watcher>> = const { RefCell::new(None) };
}

/// Run `f` on this thread, stopping it with [`Error::Interrupted`] at the next checkpoint
/// after `poll` returns true. `poll` runs on this thread only, between units of work.
pub fn watch<T>(poll: impl FnMut() -> bool + 'static, f: impl FnOnce() -> Result<T>) -> Result<T> {
    let watcher = Watcher {
        poll: Box::new(poll),
        next: Instant::now() + POLL_EVERY,
    };
    let outer_watcher = WATCHER.with(|w| w.borrow_mut().replace(watcher));
    let outer_stop = STOP.with(|s| s.borrow_mut().replace(Arc::new(AtomicBool::new(false))));
    // Restore the thread's previous state however `f` ends (a panic is caught by the caller).
    struct Restore(Option<Watcher>, Option<Arc<AtomicBool>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            WATCHER.with(|w| *w.borrow_mut() = self.0.take());
            STOP.with(|s| *s.borrow_mut() = self.1.take());
        }
    }
    let _restore = Restore(outer_watcher, outer_stop);
    f()
}

/// Between two units of work: `Err(Interrupted)` once the current call has been asked to stop.
/// Outside a watched call this is two thread-local reads.
pub fn checkpoint() -> Result<()> {
    match STOP.with(|s| s.borrow().as_ref().map(|stop| stop.load(Ordering::Relaxed))) {
        None => return Ok(()),
        Some(true) => return Err(Error::Interrupted),
        Some(false) => {}
    }
    // Take the watcher out while polling: `poll` may run arbitrary code (a Python signal
    // handler) that starts another watched call on this thread.
    let Some(mut watcher) = WATCHER.with(|w| w.borrow_mut().take()) else {
        return Ok(());
    };
    let now = Instant::now();
    let stop = now >= watcher.next && {
        watcher.next = now + POLL_EVERY;
        (watcher.poll)()
    };
    WATCHER.with(|w| *w.borrow_mut() = Some(watcher));
    if stop {
        STOP.with(|s| {
            if let Some(flag) = s.borrow().as_ref() {
                flag.store(true, Ordering::Relaxed);
            }
        });
        return Err(Error::Interrupted);
    }
    Ok(())
}

/// For kernels whose units are long (one unit of the exact multiclass AUC can take a second):
/// true once the call should stop. The unit may then return at once; the driver discards its
/// output and the call ends with [`Error::Interrupted`].
pub fn stopped() -> bool {
    checkpoint().is_err()
}

/// Whether this thread's call has been asked to stop (no polling).
fn stop_requested() -> bool {
    STOP.with(|s| {
        s.borrow()
            .as_ref()
            .is_some_and(|stop| stop.load(Ordering::Relaxed))
    })
}

/// Run `f` on a helper thread as part of the call whose stop flag is `stop`.
fn as_helper<T>(stop: Option<Arc<AtomicBool>>, f: impl FnOnce() -> T) -> T {
    let outer = STOP.with(|s| std::mem::replace(&mut *s.borrow_mut(), stop));
    struct Restore(Option<Arc<AtomicBool>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            STOP.with(|s| *s.borrow_mut() = self.0.take());
        }
    }
    let _restore = Restore(outer);
    f()
}

/// The calling thread and the helper jobs it offered to the pool.
struct Team {
    state: Mutex<TeamState>,
    left: Condvar,
}

struct TeamState {
    /// The caller has run out of work: a helper that starts now must not touch it.
    closed: bool,
    /// Helpers inside `work`.
    active: usize,
    /// The first panic of a helper, re-raised on the calling thread.
    panic: Option<Box<dyn Any + Send>>,
}

/// Run `work` on this thread and offer it to `helpers` jobs on the rayon pool, returning once
/// every helper that started it has left. Unlike a rayon scope, the caller does not wait for
/// helpers that never started: on a pool busy with another call (another Python thread's),
/// a scope would keep this call waiting — and deaf to Ctrl-C — until that call ended. While
/// helpers finish their last units, a watching caller keeps polling.
fn with_helpers(helpers: usize, work: &(dyn Fn() + Sync)) {
    let team = Arc::new(Team {
        state: Mutex::new(TeamState {
            closed: false,
            active: 0,
            panic: None,
        }),
        left: Condvar::new(),
    });
    // SAFETY: only the lifetime is erased. A helper calls `work` only between joining the team
    // while it is open and leaving it, and this function returns (or unwinds) only once the
    // team is closed and no helper is active, so `work` outlives every use.
    let shared: &'static (dyn Fn() + Sync) = unsafe { std::mem::transmute(work) };
    let stop = STOP.with(|s| s.borrow().clone());
    for _ in 0..helpers {
        let (team, stop) = (team.clone(), stop.clone());
        rayon::spawn(move || {
            {
                let mut state = lock(&team.state);
                if state.closed {
                    return;
                }
                state.active += 1;
            }
            let outcome = catch_unwind(AssertUnwindSafe(|| as_helper(stop, shared)));
            let mut state = lock(&team.state);
            state.active -= 1;
            if let Err(payload) = outcome {
                state.panic.get_or_insert(payload);
            }
            team.left.notify_all();
        });
    }
    let outcome = catch_unwind(AssertUnwindSafe(work));
    let mut state = lock(&team.state);
    state.closed = true;
    while state.active > 0 {
        state = team
            .left
            .wait_timeout(state, POLL_EVERY)
            .unwrap_or_else(|e| e.into_inner())
            .0;
        if state.active > 0 {
            drop(state);
            // Sets the stop flag the helpers read if a poll says so; they stop at their next
            // unit either way, so the result is not needed here.
            let _ = checkpoint();
            state = lock(&team.state);
        }
    }
    let helper_panic = state.panic.take();
    drop(state);
    if let Err(payload) = outcome {
        resume_unwind(payload);
    }
    if let Some(payload) = helper_panic {
        resume_unwind(payload);
    }
}

/// Run `task(state, i)` for every `i` in `0..n`, in parallel; each thread gets its own
/// `state` from `init` (scratch buffers). Stops early on the first error or an interruption
/// and returns the error of the lowest failing unit — the same whatever the thread count,
/// since every unit below a failing one was claimed before it and runs to the end.
pub fn for_each_init<S>(
    n: usize,
    init: impl Fn() -> S + Sync,
    task: impl Fn(&mut S, usize) -> Result<()> + Sync,
) -> Result<()> {
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let first_error: Mutex<Option<(usize, Error)>> = Mutex::new(None);
    let work = || {
        let mut state = None;
        loop {
            if failed.load(Ordering::Relaxed) {
                break;
            }
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= n {
                break;
            }
            let outcome = checkpoint().and_then(|()| task(state.get_or_insert_with(&init), i));
            if let Err(error) = outcome {
                failed.store(true, Ordering::Relaxed);
                let mut first = lock(&first_error);
                if first.as_ref().is_none_or(|(j, _)| i < *j) {
                    *first = Some((i, error));
                }
                break;
            }
        }
    };
    let helpers = rayon::current_num_threads()
        .saturating_sub(1)
        .min(n.saturating_sub(1));
    if helpers == 0 {
        work();
    } else {
        with_helpers(helpers, &work);
    }
    // A stopped call ends as interrupted, whichever thread saw it and whatever units left
    // behind (a long unit may have returned early through `stopped`).
    if stop_requested() {
        return Err(Error::Interrupted);
    }
    match first_error.into_inner().unwrap_or_else(|e| e.into_inner()) {
        None => Ok(()),
        Some((_, error)) => Err(error),
    }
}

/// Run `task(i)` for every `i` in `0..n`, in parallel (see [`for_each_init`]).
pub fn for_each(n: usize, task: impl Fn(usize) -> Result<()> + Sync) -> Result<()> {
    for_each_init(n, || (), |(), i| task(i))
}

/// Run `task(i, chunk)` on the consecutive `len`-long chunks of `out` (the last may be
/// shorter), in parallel (see [`for_each_init`]).
pub fn for_each_chunk(
    out: &mut [f64],
    len: usize,
    task: impl Fn(usize, &mut [f64]) -> Result<()> + Sync,
) -> Result<()> {
    for_each_chunk_init(out, len, || (), |(), i, chunk| task(i, chunk))
}

/// [`for_each_chunk`] with per-thread state from `init` (see [`for_each_init`]).
pub fn for_each_chunk_init<S>(
    out: &mut [f64],
    len: usize,
    init: impl Fn() -> S + Sync,
    task: impl Fn(&mut S, usize, &mut [f64]) -> Result<()> + Sync,
) -> Result<()> {
    let chunks: Vec<Mutex<&mut [f64]>> = out.chunks_mut(len.max(1)).map(Mutex::new).collect();
    for_each_init(chunks.len(), init, |state, i| {
        task(state, i, &mut lock(&chunks[i]))
    })
}

/// `[f(0), …, f(n − 1)]`, computed in parallel (see [`for_each_init`]).
pub fn map<T: Send>(n: usize, f: impl Fn(usize) -> Result<T> + Sync) -> Result<Vec<T>> {
    let slots: Vec<Mutex<Option<T>>> = (0..n).map(|_| Mutex::new(None)).collect();
    for_each(n, |i| {
        *lock(&slots[i]) = Some(f(i)?);
        Ok(())
    })?;
    Ok(slots
        .into_iter()
        .map(|slot| {
            slot.into_inner()
                .unwrap_or_else(|e| e.into_inner())
                .expect("every unit ran")
        })
        .collect())
}

/// Lock a mutex whose data stays valid even if a holder panicked (each unit owns its slot).
pub fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    fn pool(threads: usize) -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
    }

    #[test]
    fn every_unit_runs_once_for_any_thread_count() {
        for threads in [1, 2, 7] {
            let squares = pool(threads).install(|| map(1000, |i| Ok(i * i)).unwrap());
            assert_eq!(squares, (0..1000).map(|i| i * i).collect::<Vec<_>>());
            let mut out = vec![0.0; 1001];
            pool(threads).install(|| {
                for_each_chunk(&mut out, 10, |c, chunk| {
                    chunk.iter_mut().for_each(|v| *v += c as f64);
                    Ok(())
                })
                .unwrap()
            });
            assert!(out.iter().enumerate().all(|(i, v)| *v == (i / 10) as f64));
        }
        assert!(map(0, |_| Ok(0)).unwrap().is_empty());
    }

    #[test]
    fn the_lowest_failing_unit_is_reported_whatever_the_thread_count() {
        for threads in [1, 2, 4] {
            let error = pool(threads)
                .install(|| {
                    for_each(10_000, |i| match i % 997 {
                        500 => Err(Error::invalid(format!("unit {i}"))),
                        _ => Ok(()),
                    })
                })
                .unwrap_err();
            assert_eq!(error, Error::invalid("unit 500"));
        }
    }

    #[test]
    fn a_watched_call_stops_at_the_first_checkpoint_after_poll_says_so() {
        // The poll fires at its first chance; every thread, nested drivers included, stops.
        let polls = Arc::new(AtomicU64::new(0));
        let ran = AtomicUsize::new(0);
        let counted = polls.clone();
        let result = pool(3).install(|| {
            watch(
                move || {
                    counted.fetch_add(1, Ordering::Relaxed);
                    true
                },
                || {
                    for_each(1_000_000, |_| {
                        for_each(4, |_| {
                            ran.fetch_add(1, Ordering::Relaxed);
                            std::thread::sleep(Duration::from_micros(200));
                            Ok(())
                        })
                    })
                },
            )
        });
        assert_eq!(result, Err(Error::Interrupted));
        assert_eq!(polls.load(Ordering::Relaxed), 1);
        // Far fewer than the 4,000,000 units: 20 ms until the first poll, then no new unit starts.
        assert!(ran.load(Ordering::Relaxed) < 100_000, "{ran:?}");
        // The thread's state is restored: outside the watch nothing stops.
        assert_eq!(checkpoint(), Ok(()));
        assert_eq!(for_each(3, |_| Ok(())), Ok(()));
    }

    #[test]
    fn a_call_does_not_wait_for_a_pool_busy_with_another_call() {
        // `long` keeps every pool thread busy for a second; a short call from another thread,
        // with nested drivers that offer helpers to the pool, still ends long before it.
        let long_done = Arc::new(AtomicBool::new(false));
        let flag = long_done.clone();
        let long = std::thread::spawn(move || {
            for_each(4 * rayon::current_num_threads() * 250, |_| {
                std::thread::sleep(Duration::from_millis(1));
                Ok(())
            })
            .unwrap();
            flag.store(true, Ordering::SeqCst);
        });
        std::thread::sleep(Duration::from_millis(50));
        for_each(10, |_| for_each(4, |_| Ok(()))).unwrap();
        assert!(!long_done.load(Ordering::SeqCst));
        long.join().unwrap();
    }

    #[test]
    fn a_panic_in_any_unit_reaches_the_caller() {
        for threads in [1, 2, 4] {
            let outcome = std::panic::catch_unwind(|| {
                pool(threads).install(|| {
                    for_each(200, |i| {
                        assert_ne!(i, 150, "unit 150 fails");
                        std::thread::sleep(Duration::from_micros(100));
                        Ok(())
                    })
                })
            });
            assert!(outcome.is_err());
        }
    }

    #[test]
    fn a_watch_that_never_fires_changes_nothing() {
        let plain = pool(2).install(|| map(5000, |i| Ok((i as f64).sqrt())).unwrap());
        let watched = pool(2)
            .install(|| watch(|| false, || map(5000, |i| Ok((i as f64).sqrt()))))
            .unwrap();
        assert_eq!(plain, watched);
    }

    #[test]
    fn a_poll_may_start_another_watched_call() {
        let result = watch(
            || watch(|| false, || for_each(10, |_| Ok(()))).is_ok(),
            || {
                std::thread::sleep(POLL_EVERY);
                checkpoint()
            },
        );
        assert_eq!(result, Err(Error::Interrupted));
    }
}
