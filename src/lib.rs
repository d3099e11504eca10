//! mirror-kernel: a Jupyter kernel that runs Keras-style, data-parallel training on its own
//! Rust engine. A cell is parsed as Python, evaluated by the interpreter in [`lang`], whose
//! `tf`/`np`/`plt` modules come from [`bindings`]; models train in [`keras`] on one replica
//! per device ([`distribute`]), on CPU threads or CUDA GPUs ([`device`]).
//!
//! # Layout
//!
//! - [`protocol`]: the Jupyter wire protocol (connection file, frames, HMAC signing, typed
//!   messages, the five sockets). The only module that knows ZeroMQ or message JSON.
//! - [`session`]: the seam between protocol and language. A `Session` runs cells on its own
//!   thread, in arrival order, and reports through an output `Sink`.
//! - [`cell`]: the plain types a cell's run exchanges (request, outputs, `Sink`, reply),
//!   shared by the language, the session, the protocol and the runner.
//! - [`lang`]: the Python subset: parsing, evaluation, values, exceptions, builtins,
//!   completion and inspection. It never touches a socket.
//! - [`bindings`]: the modules a cell can import (`tensorflow`, `numpy`, `matplotlib.pyplot`,
//!   `os`, `pathlib`, `IPython.display`); they convert language values to engine types.
//! - [`keras`]: models, layers, losses, optimizers, metrics, callbacks, saving.
//! - [`ops`]: the op library: each op's checks, forward and gradient defined once;
//!   gradient tapes and the execution context that eager `tf` calls run through.
//! - [`distribute`]: replicas, batch splitting, all-reduce.
//! - [`tensor`]: host n-dimensional arrays with numpy's dtypes and semantics.
//! - [`device`]: the `Device` trait with a CPU implementation and a CUDA one.
//! - [`collective`]: the collective across worker processes (Gloo, with the `gloo` feature)
//!   and the rendezvous that lets the workers find each other.
//! - [`memory`]: the memory bound every allocation a cell sizes is held against, so that a
//!   request too large is `MemoryError` instead of an abort.
//! - [`display`]: MIME bundles, progress bars, summary tables, plots.
//! - [`runner`]: runs notebooks and scripts without Jupyter.
//! - [`bench`]: the `mirror-kernel bench` command's measurements.

pub mod bench;
pub mod bindings;
pub mod cell;
pub mod collective;
pub mod device;
pub mod display;
pub mod distribute;
pub mod keras;
pub mod lang;
pub mod memory;
pub mod ops;
pub mod protocol;
pub mod runner;
pub mod session;
pub mod tensor;
