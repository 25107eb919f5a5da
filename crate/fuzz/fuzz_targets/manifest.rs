#![no_main]
//! Fuzz target `manifest`: see crate/fuzz/entry.rs.

#[path = "../entry.rs"]
mod entry;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    entry::manifest(data);
});
