//! Next-Token Playground engine.
//!
//! One concept per module: the model and its KV cache, the decoding rules as
//! a visible pipeline, the seeded RNG, tokenizers, the generation session and
//! its per-step report, and (on wasm32) the browser facade.

// The wasm thread pool sleeps and wakes with `memory.atomic.wait32`, still
// unstable in core::arch (pkg-scripts/build sets RUSTC_BOOTSTRAP for it).
#![cfg_attr(all(target_arch = "wasm32", target_feature = "atomics"), feature(stdarch_wasm_atomic_wait))]

pub mod backend;
pub mod beam;
pub mod builtin;
pub mod chat;
pub mod compare;
pub mod config;
pub mod counters;
pub mod course;
pub mod dialect;
pub mod error;
pub mod f32_exp;
pub mod gguf;
pub mod inside;
pub mod kv_cache;
pub mod kv_check;
pub mod lm;
pub mod loader;
pub mod model;
pub mod models;
pub mod position;
pub mod quant;
pub mod report;
pub mod rng;
pub mod rules;
pub mod schema;
pub mod score;
pub mod session;
pub mod settings;
pub mod threads;
pub mod tokenizer;
pub mod train;
pub mod weights;

#[cfg(feature = "cli")]
pub mod cli;

#[cfg(target_arch = "wasm32")]
pub mod wasm;

/// Helpers the unit tests of several modules share.
#[cfg(test)]
pub(crate) mod test_util {
    /// Whether two slices hold the same numbers bit for bit (NaNs and signed zeros included).
    pub(crate) fn same_bits(a: &[f64], b: &[f64]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
    }

    /// `f` with `threads` threads in force (on one without the `threads` feature).
    pub(crate) fn on_threads<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
        #[cfg(feature = "threads")]
        return rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap().install(f);
        #[cfg(not(feature = "threads"))]
        return {
            let _ = threads;
            f()
        };
    }
}
