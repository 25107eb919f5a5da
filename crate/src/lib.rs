//! Next-Token Playground engine.
