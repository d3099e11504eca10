//! Data parallelism: replicas (one per device, each on its own thread with its own copy of
//! every variable), global-batch splitting, and all-reduce algorithms behind one trait.
//! A plain Rust library: it never imports the language, the bindings or the protocol.

pub mod allreduce;

pub use allreduce::AllReduce;
