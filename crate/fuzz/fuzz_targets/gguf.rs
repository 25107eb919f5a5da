#![no_main]
//! Fuzz target `gguf`: see crate/fuzz/entry.rs.

#[path = "../entry.rs"]
mod entry;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    entry::gguf_model(data);
});
