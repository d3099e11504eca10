//! Keras models, layers, activations, losses, optimizers, metrics, callbacks and saving,
//! as a plain Rust library. Backend-agnostic: it computes through the [`Device`] trait and
//! never imports the language, the bindings or the protocol.
//!
//! [`Device`]: crate::device::Device
