#![no_main]
//! Fuzz target `gguf_vocab`: see crate/fuzz/entry.rs.

#[path = "../entry.rs"]
mod entry;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    entry::gguf_vocab(data);
});
