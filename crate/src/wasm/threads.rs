//! The engine's threads, as the worker sees them. A build with shared memory
//! (the `atomics` target feature, `pkg-scripts/build`) runs helper workers on
//! the engine's memory; in any other build every product runs on one thread
//! and these say so.

use wasm_bindgen::prelude::*;

/// Whether this build can run helpers: its memory is shared between workers.
#[wasm_bindgen]
pub fn threads_supported() -> bool {
    cfg!(target_feature = "atomics")
}

/// The most threads (the engine's own and its helpers) a page may ask for.
#[wasm_bindgen]
pub fn max_threads() -> u32 {
    #[cfg(target_feature = "atomics")]
    return crate::threads::wasm_pool::MAX_THREADS;
    #[cfg(not(target_feature = "atomics"))]
    1
}

/// Use `n` threads for the products from now on; returns the number in
/// force: at most the helpers started plus one (1 in a build without threads).
#[wasm_bindgen]
pub fn set_threads(n: u32) -> u32 {
    #[cfg(target_feature = "atomics")]
    return crate::threads::wasm_pool::set_threads(n);
    #[cfg(not(target_feature = "atomics"))]
    {
        let _ = n;
        1
    }
}

/// Helpers that have started (`thread_helper` entered).
#[wasm_bindgen]
pub fn thread_helpers() -> u32 {
    #[cfg(target_feature = "atomics")]
    return crate::threads::wasm_pool::helpers();
    #[cfg(not(target_feature = "atomics"))]
    0
}

/// Product bands helper threads have computed since the engine started.
#[wasm_bindgen]
pub fn thread_helper_tasks() -> u32 {
    #[cfg(target_feature = "atomics")]
    return crate::threads::wasm_pool::helper_tasks();
    #[cfg(not(target_feature = "atomics"))]
    0
}

/// The byte address, in the engine's shared memory, of the word the page's
/// thread sets while it answers an input or paints (helpers take no task then: see
/// `wasm_pool`'s `PAGE_ANSWERS`); 0 in a build without threads.
#[wasm_bindgen]
pub fn thread_pause_word() -> u32 {
    #[cfg(target_feature = "atomics")]
    return crate::threads::wasm_pool::pause_word() as u32;
    #[cfg(not(target_feature = "atomics"))]
    0
}

/// A helper worker's body, called once the worker instantiated the engine
/// on the shared memory: it takes part in every split from then on and
/// never returns. `id` counts from 1.
#[wasm_bindgen]
pub fn thread_helper(id: u32) -> Result<(), JsValue> {
    #[cfg(target_feature = "atomics")]
    crate::threads::wasm_pool::helper_loop(id);
    #[cfg(not(target_feature = "atomics"))]
    {
        let _ = id;
        Err(js_sys::Error::new("this engine build has no threads (built without shared memory)").into())
    }
}

/// A helper worker's `thread_helper` threw (a panic in one of its bands):
/// the engine's thread, waiting for that band, panics in turn instead of
/// waiting forever, and the page restarts the engine.
#[wasm_bindgen]
pub fn thread_helper_stopped(id: u32) {
    #[cfg(target_feature = "atomics")]
    crate::threads::wasm_pool::helper_stopped(id);
    #[cfg(not(target_feature = "atomics"))]
    let _ = id;
}

/// For tests: the next band a helper thread claims panics, as a bug in a
/// kernel would (tests/e2e/threads.test.mjs).
#[wasm_bindgen]
pub fn thread_fault_next_helper_task() {
    #[cfg(target_feature = "atomics")]
    crate::threads::wasm_pool::fault_next_helper_task();
}
