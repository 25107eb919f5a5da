#![no_main]
//! Fuzz target `safetensors`: see crate/fuzz/entry.rs.

#[path = "../entry.rs"]
mod entry;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    entry::safetensors(data);
});
