//! `tf.keras` (also `from tensorflow import keras`): the namespace and its submodules. Each
//! submodule converts language values to the engine's Keras types and back; the numerics
//! live in the keras and distribute parts.

pub mod backup;
pub mod bridge;
pub mod callbacks;
pub mod checkpoint;
pub mod csv_logger;
pub mod datasets;
pub mod fit;
pub mod get_file;
pub mod heads;
pub mod initializers;
pub mod layers;
pub mod loss_functions;
pub mod losses;
pub mod metrics;
pub mod model;
pub mod models;
pub mod monitor;
pub mod nan;
pub mod op_trainer;
pub mod optimizers;
pub mod plateau;
pub mod rate_schedules;
pub mod sample_weights;
pub mod saving;
pub mod schedules;
pub mod state_variable;
pub mod subclass;
pub mod summary;
pub mod tensorboard;
pub mod track;
pub mod utils;
pub mod variable;
pub mod weights;

use crate::lang::{NativeModule, Value};

/// The `keras` module as `tf.keras` shows it.
pub fn module() -> Value {
    let layers = layers::module();
    // `keras.Layer` is `keras.layers.Layer`: one class, whichever name a user subclasses.
    let layer_class = layers
        .downcast::<NativeModule>()
        .and_then(|m| m.attrs.borrow().get("Layer").cloned())
        .unwrap_or(Value::None);
    let m = NativeModule::new("keras", "Keras, on the mirror-kernel engine.")
        .with("__version__", Value::str("3.3.3"))
        .with("callbacks", callbacks::module())
        .with("layers", layers)
        .with("initializers", initializers::module())
        .with("Layer", layer_class)
        .with("saving", saving::saving_module())
        .with("datasets", datasets::datasets_module())
        .with(
            "Input",
            super::func(
                "Input",
                "Input(shape=None, batch_size=None, dtype=None, sparse=None, batch_shape=None, name=None, tensor=None, optional=False)",
                layers::input,
            ),
        );
    models::register(&m);
    optimizers::register(&m);
    metrics::register(&m);
    let l = NativeModule::new("keras.losses", "Keras losses.");
    losses::register(&l);
    m.set("losses", l.into_value());
    utils::register(&m);
    m.into_value()
}

#[cfg(test)]
mod tests;
