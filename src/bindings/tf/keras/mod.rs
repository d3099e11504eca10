//! `tf.keras` (also `from tensorflow import keras`): the namespace and its submodules. Each
//! submodule converts language values to the engine's Keras types and back; the numerics
//! live in the keras and distribute parts.

pub mod bridge;
pub mod callbacks;
pub mod checkpoint;
pub mod datasets;
pub mod fit;
pub mod layers;
pub mod live;
pub mod loss_functions;
pub mod model;
pub mod models;
pub mod nan;
pub mod optimizers;
pub mod saving;
pub mod schedules;
pub mod summary;
pub mod utils;
pub mod weights;

use crate::lang::{NativeModule, Value};

/// The `keras` module as `tf.keras` shows it.
pub fn module() -> Value {
    let m = NativeModule::new("keras", "Keras, on the mirror-kernel engine.")
        .with("__version__", Value::str("3.3.3"))
        .with("callbacks", callbacks::module())
        .with("layers", layers::module())
        .with("saving", saving::saving_module())
        .with("datasets", datasets::datasets_module())
        .with(
            "Input",
            super::func(
                "Input",
                "Input(shape, batch_size=None, dtype=None, name=None)",
                layers::input,
            ),
        );
    models::register(&m);
    optimizers::register(&m);
    utils::register(&m);
    m.into_value()
}

#[cfg(test)]
mod tests;
