//! The collective across worker processes, from an existing library: Gloo (the CPU collective
//! library PyTorch uses) through a small C++ shim (`gloo_shim.cc`, compiled by build.rs with
//! the `gloo` cargo feature, against Debian's `libgloo-dev`). Gloo does the networking of the
//! all-reduce itself; the kernel owns only the one-shot rendezvous that lets the ranks find
//! each other ([`rendezvous`]: a key-value store the chief serves on its `TF_CONFIG` address).
//! A plain library on the bottom floor: it knows nothing of devices, models or the language.

pub mod rendezvous;

#[cfg(feature = "gloo")]
pub mod gloo;
