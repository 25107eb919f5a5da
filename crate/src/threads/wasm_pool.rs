//! The browser's pool: helper workers that share the engine's wasm memory.
//!
//! The engine's worker (the "leader") runs the model; each helper is a web
//! worker that instantiated the same module on the same shared memory and
//! then sits in `helper_loop`. A split publishes one job (a task count and
//! the task function) under a new generation; the leader and the helpers
//! claim its tasks one at a time until none is left, and the leader returns
//! once every task is done. Whoever claims a task computes it the same way,
//! so a helper that is slow to wake only means the leader does more.
//!
//! Helpers spin for a while after a job (a decode step's products follow
//! each other within microseconds) and then sleep in `memory.atomic.wait32`,
//! so an idle page costs nothing. The leader never runs on the page's own
//! thread (a wait there would trap): the page thread's engine has no helpers
//! and so never publishes a job.

use core::arch::wasm32::{memory_atomic_notify, memory_atomic_wait32};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering::SeqCst};

/// Most threads a page may ask for (the leader and its helpers).
pub const MAX_THREADS: u32 = 16;

/// Helpers that have entered `helper_loop`.
static HELPERS: AtomicU32 = AtomicU32::new(0);
/// Threads a split uses now, the leader included (1..=HELPERS + 1).
static THREADS: AtomicU32 = AtomicU32::new(1);
/// The job: generation (high 32 bits), task count (16) and the next task to
/// claim (low 16), in one word so that a claim names the job it is for.
static JOB: AtomicU64 = AtomicU64::new(0);
/// The job's generation alone, for helpers to sleep on (wait32 takes 32 bits).
static GENERATION: AtomicU32 = AtomicU32::new(0);
/// The address of the job's task function (a `&dyn Fn(usize)` on the leader's stack).
static TASK: AtomicUsize = AtomicUsize::new(0);
/// Tasks of the current job finished, by anyone.
static FINISHED: AtomicU32 = AtomicU32::new(0);
/// A job is in progress: a split from inside a task, or from a second
/// thread, runs on its own thread instead of publishing.
static BUSY: AtomicBool = AtomicBool::new(false);
/// Tasks helpers have run since the engine started: the pool's own evidence
/// that it shares the work (the worker's `threads` reply carries it).
static HELPER_TASKS: AtomicU32 = AtomicU32::new(0);
/// A helper whose thread stopped (its id), or 0. A panic traps only the
/// thread it happens on: the band that helper claimed never finishes, and
/// the leader, told here, panics too instead of waiting for it forever.
static STOPPED_HELPER: AtomicU32 = AtomicU32::new(0);
/// For tests: the next band a helper claims panics, as a bug in a kernel would.
static FAULT_NEXT_HELPER_TASK: AtomicBool = AtomicBool::new(false);
/// Non-zero while the page's thread answers an input (a slider moved, a key
/// pressed) or paints its panels, until that frame is painted, where the
/// pool has taken every core: helpers claim no task then and sleep on this
/// word, so the page's thread, its compositor and raster threads have a
/// core. The leader takes the tasks the helpers leave; the values are the
/// same (a band is computed the same way by whichever thread claims it).
/// The page's thread writes it through the shared memory (`pause_word`) and
/// wakes the sleepers when it clears it. Each holder of a pause sets a bit of
/// its own, so that one's release does not end another's pause.
static PAGE_ANSWERS: AtomicU32 = AtomicU32::new(0);
/// Helpers asleep on GENERATION, and whether the leader sleeps on FINISHED.
static SLEEPING_HELPERS: AtomicU32 = AtomicU32::new(0);
static LEADER_SLEEPS: AtomicBool = AtomicBool::new(false);

/// Loads of the job word a helper makes before it sleeps: a few hundred
/// microseconds, longer than the gap between a step's products.
const HELPER_SPINS: u32 = 200_000;
/// Loads the leader makes waiting for the last task before it sleeps.
const LEADER_SPINS: u32 = 1_000_000;

/// Threads a split uses now.
pub fn threads() -> usize {
    THREADS.load(SeqCst) as usize
}

/// Ask for `n` threads (the leader and `n - 1` helpers); returns the number
/// in force, which is at most the helpers that have started plus one.
pub fn set_threads(n: u32) -> u32 {
    let n = n.clamp(1, (HELPERS.load(SeqCst) + 1).min(MAX_THREADS));
    THREADS.store(n, SeqCst);
    n
}

/// Helpers that have started.
pub fn helpers() -> u32 {
    HELPERS.load(SeqCst)
}

/// Tasks helpers have run so far.
pub fn helper_tasks() -> u32 {
    HELPER_TASKS.load(SeqCst)
}

/// A helper's thread stopped (its JS caught the trap): wake the leader so
/// that it stops waiting for the band the helper had claimed.
pub fn helper_stopped(id: u32) {
    STOPPED_HELPER.store(id.max(1), SeqCst);
    unsafe { memory_atomic_notify(FINISHED.as_ptr() as *mut i32, 1) };
}

/// For tests: make the next band a helper claims panic.
pub fn fault_next_helper_task() {
    FAULT_NEXT_HELPER_TASK.store(true, SeqCst);
}

/// The byte address of `PAGE_ANSWERS` in the engine's memory, for the page.
pub fn pause_word() -> usize {
    PAGE_ANSWERS.as_ptr() as usize
}

/// Sleep while the page's thread answers an input or paints. The timeout bounds a
/// pause the page failed to end (its tab hidden mid-frame, say): the page
/// clears the word itself within a frame or two.
fn wait_while_page_answers() {
    let mut naps = 0;
    loop {
        let holders = PAGE_ANSWERS.load(SeqCst);
        if holders == 0 || naps >= MAX_PAUSE_NAPS {
            return;
        }
        // Waits only while the word still holds what was read: a holder that
        // comes or goes meanwhile ends this nap early.
        unsafe { memory_atomic_wait32(PAGE_ANSWERS.as_ptr() as *mut i32, holders as i32, PAUSE_NAP_NS) };
        naps += 1;
    }
}

/// A paused helper naps this long at a time, at most `MAX_PAUSE_NAPS` times
/// in a row (200 ms in all) before it takes tasks again regardless.
const PAUSE_NAP_NS: i64 = 10_000_000;
const MAX_PAUSE_NAPS: u32 = 20;

fn pack(generation: u32, tasks: u32, next: u32) -> u64 {
    ((generation as u64) << 32) | ((tasks as u64) << 16) | next as u64
}

/// Claim a task of the job of `generation`: its index and the job's task
/// count, or None when the job has none left or is no longer the current one.
fn claim(generation: u32) -> Option<(usize, u32)> {
    let mut word = JOB.load(SeqCst);
    loop {
        let (g, tasks, next) = ((word >> 32) as u32, ((word >> 16) & 0xffff) as u32, (word & 0xffff) as u32);
        if g != generation || next >= tasks {
            return None;
        }
        match JOB.compare_exchange_weak(word, pack(g, tasks, next + 1), SeqCst, SeqCst) {
            Ok(_) => return Some((next as usize, tasks)),
            Err(now) => word = now,
        }
    }
}

/// Run the claimed task `i` of the current job and count it done.
fn run_claimed(i: usize, tasks: u32) {
    // SAFETY: TASK points at the leader's `&dyn Fn`, which lives until every
    // task of the job is finished, and this task is not finished yet.
    let task = unsafe { *(TASK.load(SeqCst) as *const &(dyn Fn(usize) + Sync)) };
    task(i);
    if FINISHED.fetch_add(1, SeqCst) + 1 == tasks && LEADER_SLEEPS.load(SeqCst) {
        unsafe { memory_atomic_notify(FINISHED.as_ptr() as *mut i32, 1) };
    }
}

/// Run `task(i)` for every `i < tasks` on the pool (the caller takes part).
pub fn run(tasks: usize, task: &(dyn Fn(usize) + Sync)) {
    if tasks <= 1 || THREADS.load(SeqCst) <= 1 || tasks > 0xffff || BUSY.swap(true, SeqCst) {
        return (0..tasks).for_each(task);
    }
    let tasks = tasks as u32;
    TASK.store(&task as *const &(dyn Fn(usize) + Sync) as usize, SeqCst);
    FINISHED.store(0, SeqCst);
    let generation = GENERATION.load(SeqCst).wrapping_add(1);
    JOB.store(pack(generation, tasks, 0), SeqCst);
    GENERATION.store(generation, SeqCst);
    if SLEEPING_HELPERS.load(SeqCst) != 0 {
        // All of them: a helper beyond the threads in force may be first in line.
        unsafe { memory_atomic_notify(GENERATION.as_ptr() as *mut i32, u32::MAX) };
    }
    while let Some((i, _)) = claim(generation) {
        run_claimed(i, tasks);
    }
    // The tasks helpers claimed may still be running: `task` must outlive them.
    let mut spins = 0;
    loop {
        let finished = FINISHED.load(SeqCst);
        if finished == tasks {
            break;
        }
        let stopped = STOPPED_HELPER.load(SeqCst);
        if stopped != 0 {
            panic!("engine helper thread {stopped} stopped in the middle of a matrix product");
        }
        if spins < LEADER_SPINS {
            spins += 1;
            core::hint::spin_loop();
            continue;
        }
        LEADER_SLEEPS.store(true, SeqCst);
        if FINISHED.load(SeqCst) == finished {
            unsafe { memory_atomic_wait32(FINISHED.as_ptr() as *mut i32, finished as i32, 1_000_000) };
        }
        LEADER_SLEEPS.store(false, SeqCst);
    }
    BUSY.store(false, SeqCst);
}

/// A helper's life: claim tasks of each new job; never returns. `id` counts
/// from 1; a helper beyond the threads in force sleeps until it is needed.
pub fn helper_loop(id: u32) -> ! {
    HELPERS.fetch_add(1, SeqCst);
    let mut seen = GENERATION.load(SeqCst);
    loop {
        let mut spins = 0;
        let generation = loop {
            let now = GENERATION.load(SeqCst);
            if now != seen && id < THREADS.load(SeqCst) {
                break now;
            }
            if PAGE_ANSWERS.load(SeqCst) != 0 {
                // Spinning would hold the core the page needs.
                wait_while_page_answers();
                continue;
            }
            if spins < HELPER_SPINS && id < THREADS.load(SeqCst) {
                spins += 1;
                core::hint::spin_loop();
                continue;
            }
            SLEEPING_HELPERS.fetch_add(1, SeqCst);
            // Woken by a new job (every job wakes every sleeper); the timeout
            // only guards against a missed wake-up.
            unsafe { memory_atomic_wait32(GENERATION.as_ptr() as *mut i32, now as i32, 100_000_000) };
            SLEEPING_HELPERS.fetch_sub(1, SeqCst);
            seen = now;
            // Spin only after work: an idle pool stays asleep.
            spins = HELPER_SPINS;
        };
        seen = generation;
        wait_while_page_answers();
        while let Some((i, tasks)) = claim(generation) {
            if FAULT_NEXT_HELPER_TASK.swap(false, SeqCst) {
                panic!("a fault injected into helper {id}'s band {i} (a test)");
            }
            run_claimed(i, tasks);
            HELPER_TASKS.fetch_add(1, SeqCst);
        }
    }
}
