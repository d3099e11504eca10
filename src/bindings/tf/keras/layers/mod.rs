//! `tf.keras.layers`: the built-in layers (Dense, Conv1D, Conv2D, MaxPooling1D/2D, Flatten, Dropout,
//! Activation, Softmax, Reshape, BatchNormalization, LayerNormalization, the global and
//! average poolings, ReLU, LeakyReLU, ELU, Rescaling, RepeatVector, Permute, UpSampling2D,
//! ZeroPadding2D, Masking, Embedding, SimpleRNN, LSTM, GRU, Bidirectional, InputLayer) and
//! `Lambda` (`lambda.rs`: a Python function as a layer) as
//! native classes, so `isinstance(l,
//! layers.Dense)` works, the `Layer` base class a user's layers derive from, and
//! `Input(shape=...)`.
//!
//! A layer owns its variables: it makes them when it is built (`build.rs`), at its first
//! call on data or when a model builds it, and keeps them in its core (`layer.rs`); a model
//! holding the layer uses those same variables, so one layer in two models shares its
//! weights. `layer(x)` (`call.rs`) computes through the op library (`eager.rs`) on data,
//! or records the functional graph on symbolic tensors (`symbolic.rs`); the Keras mask a
//! call reads and the one its output carries are `mask.rs`'s. `handle.rs` treats
//! built-in layers, user subclasses and models alike; `base.rs` is the subclassable
//! `Layer`; `args.rs` holds the constructors.

pub mod args;
pub mod base;
pub mod build;
pub mod call;
pub mod eager;
pub mod graph;
pub mod handle;
pub mod lambda;
pub mod layer;
pub mod mask;
pub mod merge;
pub mod symbolic;

pub use args::{activation_arg, shape_arg, shape_arg_dims};
pub use layer::{Builtin, LayerCore, LayerObj};
pub use symbolic::{KerasTensor, Source};

use super::super::given;
use crate::keras::{KerasError, LayerKind};
use crate::lang::{Args, Ctx, NativeClass, NativeModule, PyResult, Value};

/// A Keras error as the Python exception Keras raises, with the engine's hint.
pub fn kerr(e: KerasError) -> crate::lang::PyErr {
    let hint = e.hint();
    let msg = if hint.is_empty() {
        e.to_string()
    } else {
        format!("{e}\nHint: {hint}")
    };
    crate::lang::PyErr::new(e.py_exception(), msg)
}

/// `tf.keras.Input(shape=None, batch_size=None, dtype=None, ..., name=None)`.
pub fn input(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind(
        "Input",
        &[
            "shape",
            "batch_size",
            "dtype",
            "sparse",
            "batch_shape",
            "name",
            "tensor",
            "optional",
        ],
        0,
    )?;
    // A size may be `None` (a sequence of any length); such an input's layer has no fixed
    // shape, so a model on it is built by its first call, with that call's sizes.
    let given_dims: Vec<Option<usize>> = match given(&s[0]) {
        Some(v) if v.as_seq().is_some_and(|d| d.iter().any(Value::is_none)) => v
            .as_seq()
            .unwrap_or_default()
            .iter()
            .map(|d| match d {
                Value::None => Ok(None),
                d => shape_arg(d).map(|s| s.first().copied()),
            })
            .collect::<PyResult<_>>()?,
        Some(v) => shape_arg(v)?.into_iter().map(Some).collect(),
        None => vec![],
    };
    let shape: Option<Vec<usize>> = given_dims.iter().copied().collect();
    let batch = given(&s[1]).map(|v| v.as_int()).transpose()?;
    let mut dims = vec![batch.map(|b| b.max(0) as usize)];
    dims.extend(given_dims.iter().copied());
    // Keras makes an `InputLayer` for the tensor; a given name names both.
    let (layer_name, name) = match given(&s[5]) {
        Some(v) => (v.as_str()?.to_string(), v.as_str()?.to_string()),
        None => (
            base::unique_name(ctx, "input_layer"),
            base::unique_name(ctx, "keras_tensor"),
        ),
    };
    let layer = LayerObj::new(Builtin::Input, shape, layer_name);
    layer.core.built.set(true);
    *layer.core.output_shape.borrow_mut() = Some(dims.clone());
    Ok(Value::native(KerasTensor {
        shape: dims,
        name,
        source: symbolic::Source::Input(Value::native(layer)),
    }))
}

fn class(name: &str, body: fn(&Args, &mut dyn Ctx) -> PyResult<Value>) -> Value {
    NativeClass::new(name, "keras.src.layers", "")
        .base("Layer")
        .base("Operation")
        .constructor(body)
        .into_value()
}

/// `tf.keras.layers`.
pub fn module() -> Value {
    let m = NativeModule::new("keras.layers", "Keras layers.");
    merge::register(m)
        .with("Dense", class("Dense", args::dense))
        .with("Conv2D", class("Conv2D", args::conv2d))
        .with("MaxPooling2D", class("MaxPooling2D", args::max_pool))
        .with("MaxPool2D", class("MaxPooling2D", args::max_pool))
        .with(
            "Flatten",
            class("Flatten", |a, c| {
                args::simple(a, c, "Flatten", LayerKind::Flatten)
            }),
        )
        .with(
            "Softmax",
            class("Softmax", |a, c| {
                args::simple(a, c, "Softmax", LayerKind::Softmax)
            }),
        )
        .with("Dropout", class("Dropout", args::dropout))
        .with("Activation", class("Activation", args::activation_layer))
        .with("Reshape", class("Reshape", args::reshape))
        .with("InputLayer", class("InputLayer", args::input_layer))
        .with(
            "BatchNormalization",
            class("BatchNormalization", args::batch_normalization),
        )
        .with(
            "LayerNormalization",
            class("LayerNormalization", args::layer_normalization),
        )
        .with(
            "GlobalAveragePooling1D",
            class("GlobalAveragePooling1D", |a, c| {
                args::global_pool(a, c, false, 1)
            }),
        )
        .with(
            "GlobalAveragePooling2D",
            class("GlobalAveragePooling2D", |a, c| {
                args::global_pool(a, c, false, 2)
            }),
        )
        .with(
            "GlobalMaxPooling1D",
            class("GlobalMaxPooling1D", |a, c| args::global_pool(a, c, true, 1)),
        )
        .with(
            "GlobalMaxPooling2D",
            class("GlobalMaxPooling2D", |a, c| args::global_pool(a, c, true, 2)),
        )
        .with(
            "MaxPooling1D",
            class("MaxPooling1D", |a, c| args::window_pool(a, c, true, 1)),
        )
        .with(
            "MaxPool1D",
            class("MaxPooling1D", |a, c| args::window_pool(a, c, true, 1)),
        )
        .with("Conv1D", class("Conv1D", args::conv1d))
        .with("Convolution1D", class("Conv1D", args::conv1d))
        .with(
            "AveragePooling1D",
            class("AveragePooling1D", |a, c| args::window_pool(a, c, false, 1)),
        )
        .with(
            "AvgPool1D",
            class("AveragePooling1D", |a, c| args::window_pool(a, c, false, 1)),
        )
        .with(
            "AveragePooling2D",
            class("AveragePooling2D", |a, c| args::window_pool(a, c, false, 2)),
        )
        .with(
            "AvgPool2D",
            class("AveragePooling2D", |a, c| args::window_pool(a, c, false, 2)),
        )
        .with("ReLU", class("ReLU", args::relu))
        .with("LeakyReLU", class("LeakyReLU", args::leaky_relu))
        .with("ELU", class("ELU", args::elu))
        .with("Rescaling", class("Rescaling", args::rescaling))
        .with("Masking", class("Masking", args::masking))
        .with("RepeatVector", class("RepeatVector", args::repeat_vector))
        .with("Embedding", class("Embedding", args::embedding))
        .with("SimpleRNN", class("SimpleRNN", args::simple_rnn))
        .with("LSTM", class("LSTM", args::lstm))
        .with("GRU", class("GRU", args::gru))
        .with("Bidirectional", class("Bidirectional", args::bidirectional))
        .with("Permute", class("Permute", args::permute))
        .with("Lambda", class("Lambda", lambda::lambda))
        .with("UpSampling2D", class("UpSampling2D", args::up_sampling2d))
        .with("ZeroPadding2D", class("ZeroPadding2D", args::zero_padding2d))
        .with(
            "Input",
            super::super::func(
                "Input",
                "Input(shape=None, batch_size=None, dtype=None, sparse=None, batch_shape=None, name=None, tensor=None, optional=False)",
                input,
            ),
        )
        .with("Layer", base::layer_class())
        .into_value()
}
