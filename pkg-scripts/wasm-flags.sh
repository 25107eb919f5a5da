# The wasm engine's compiler settings, sourced by pkg-scripts/build and
# pkg-scripts/test-wasm-kernels (which must build with the same ones, or
# every dependency would compile again).
#
# The engine is built with shared memory so that helper workers can run on
# its memory (threads in the browser, crate/src/threads/wasm_pool.rs):
# +atomics and +bulk-memory need a standard library built for them
# (-Z build-std, from the rust-src component; `test` is in its list because
# `cargo test` adds it, and the same list gives the same standard library,
# so the kernels test reuses every dependency the build compiled: 1 min
# instead of 6.5 from a fresh target folder), and RUSTC_BOOTSTRAP lets the
# stable toolchain take that flag and the pool's memory.atomic.wait32. The
# memory is imported (the worker creates it and hands it to each helper) and
# may grow to 4 GiB, wasm32's whole address space: a shared memory must
# declare its maximum, and the browser reserves it up front.
# The same module runs with one thread where the page is not cross-origin
# isolated (a shared memory still works there; it cannot reach a worker).
# rustc warns that `atomics` is an unstable target feature: expected, as the
# browsers' wasm threads themselves are stable.
WASM_RUSTFLAGS="-C target-feature=+simd128,+atomics,+bulk-memory,+mutable-globals \
-C link-arg=--shared-memory -C link-arg=--import-memory -C link-arg=--max-memory=4294967296 \
-C link-arg=--export=__wasm_init_tls -C link-arg=--export=__tls_size \
-C link-arg=--export=__tls_align -C link-arg=--export=__tls_base"
# The second build, for browsers with relaxed SIMD (Chromium since 114):
# the same engine whose nibble formats' kernels take relaxed-simd's byte
# dot product (crate/src/quant/kernels/wasm_simd/relaxed.rs). A module
# with an instruction the browser lacks fails to compile as a whole, so it
# is a module of its own; the worker picks one (www/worker/engine-wasm.js).
# The feature is given to the engine's crate alone (a profile's rustflags,
# so that `cargo test` of the kernels gets it too), the dependencies built
# as for the other module: macerator 0.5 (under burn) does not compile
# with relaxed-simd on.
WASM_RELAXED_CARGO_FLAGS=(-Z profile-rustflags
    --config 'profile.release.package.nexttoken.rustflags = ["-C", "target-feature=+relaxed-simd"]')
WASM_CARGO_FLAGS=(-Z build-std=std,panic_abort,test)
export RUSTC_BOOTSTRAP=1
# The wasm builds' own target folder (the sourcing script sets ROOT). A
# build for another target puts its proc macros and build scripts, compiled
# for this machine, in the folder's release/, beside the native release
# CLI's; proc-macro2's build script probes for nightly features and reruns
# when RUSTC_BOOTSTRAP changes, so in one shared folder every switch between
# this build and `cargo build --release` compiled every dependency again
# (about 8 minutes on 2 cores). The folder it sits in is kept apart, so
# sourcing this twice in one shell still gives the same folder.
export NTP_NATIVE_TARGET_DIR="${NTP_NATIVE_TARGET_DIR:-${CARGO_TARGET_DIR:-$ROOT/target}}"
export CARGO_TARGET_DIR="$NTP_NATIVE_TARGET_DIR/wasm"
# Its own folder for the relaxed-simd build: in the same folder each switch
# between the two builds compiled the engine's crate again.
export WASM_RELAXED_TARGET_DIR="$NTP_NATIVE_TARGET_DIR/wasm-relaxed"
