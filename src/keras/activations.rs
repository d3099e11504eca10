//! Activations as Keras names them: the parsing of `activation="relu"` strings and the
//! names written back into configs. The arithmetic is the device's (`Device::activate`,
//! `softmax_rows`); this file only maps names to operations.

use super::error::{KResult, KerasError};
use crate::device::Activation;

/// An activation as a layer applies it: element-wise, or row-wise softmax/log-softmax.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Act {
    Elem(Activation),
    Softmax,
    LogSoftmax,
}

const ACT_NAMES: &[&str] = &[
    "linear",
    "relu",
    "sigmoid",
    "tanh",
    "softmax",
    "elu",
    "selu",
    "gelu",
    "swish",
    "silu",
    "softplus",
    "leaky_relu",
    "log_softmax",
];

impl Act {
    /// Parses a Keras activation name; `None`/`""` is linear, as Keras treats it.
    pub fn parse(name: &str) -> KResult<Act> {
        Ok(match name {
            "" | "linear" | "None" => Act::Elem(Activation::Linear),
            "relu" => Act::Elem(Activation::Relu),
            "sigmoid" => Act::Elem(Activation::Sigmoid),
            "tanh" => Act::Elem(Activation::Tanh),
            "elu" => Act::Elem(Activation::Elu),
            "selu" => Act::Elem(Activation::Selu),
            "gelu" => Act::Elem(Activation::Gelu),
            "swish" | "silu" => Act::Elem(Activation::Swish),
            "softplus" => Act::Elem(Activation::Softplus),
            // keras.activations.leaky_relu defaults to negative_slope = 0.2.
            "leaky_relu" => Act::Elem(Activation::LeakyRelu(0.2)),
            "softmax" => Act::Softmax,
            "log_softmax" => Act::LogSoftmax,
            other => return Err(KerasError::unknown("activation function", other, ACT_NAMES)),
        })
    }

    /// The name Keras writes in a config.
    pub fn keras_name(&self) -> &'static str {
        match self {
            Act::Softmax => "softmax",
            Act::LogSoftmax => "log_softmax",
            Act::Elem(a) => match a {
                Activation::Linear => "linear",
                Activation::Relu => "relu",
                Activation::Sigmoid => "sigmoid",
                Activation::Tanh => "tanh",
                Activation::Elu => "elu",
                Activation::Selu => "selu",
                Activation::Gelu => "gelu",
                Activation::Swish => "silu",
                Activation::Softplus => "softplus",
                Activation::LeakyRelu(_) => "leaky_relu",
            },
        }
    }

    pub fn is_linear(&self) -> bool {
        *self == Act::Elem(Activation::Linear)
    }
}
