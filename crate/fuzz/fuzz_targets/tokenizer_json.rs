#![no_main]
//! Fuzz target `tokenizer_json`: see crate/fuzz/entry.rs.

#[path = "../entry.rs"]
mod entry;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    entry::tokenizer_json(data);
});
