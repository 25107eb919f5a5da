//! The fuzz targets' regression corpus (tests/fixtures/fuzz-regressions/<target>/)
//! through the same entry points the fuzzer drives (crate/fuzz/entry.rs): a
//! file named `accept-*` must load; any other must come back as Ok or Err,
//! never as a panic.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;

#[path = "../fuzz/entry.rs"]
mod entry;

#[test]
fn every_regression_input_is_refused_or_accepted_without_a_panic() {
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/fuzz-regressions"));
    // The panic hook would print every caught panic; the failures list says it once.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let mut failures = Vec::new();
    for target in entry::TARGETS {
        let dir = root.join(target);
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        let accepts = files.iter().filter(|f| f.file_name().unwrap().to_string_lossy().starts_with("accept-")).count();
        assert!(accepts >= 1 && files.len() > accepts, "{target}: needs valid and hostile inputs, has {files:?}");
        for file in files {
            let bytes = std::fs::read(&file).unwrap();
            let name = file.file_name().unwrap().to_string_lossy().into_owned();
            match catch_unwind(AssertUnwindSafe(|| entry::run(target, &bytes))) {
                Err(panic) => {
                    let why = panic.downcast_ref::<String>().cloned().or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()));
                    failures.push(format!("{target}/{name} panicked: {}", why.unwrap_or_default()));
                }
                Ok(loaded) if name.starts_with("accept-") && !loaded => failures.push(format!("{target}/{name} was refused")),
                Ok(_) => {}
            }
        }
    }
    std::panic::set_hook(hook);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
