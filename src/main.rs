//! The `mirror-kernel` command: a thin CLI over the library (kernel, install, run, exec, bench).
fn main() {}
