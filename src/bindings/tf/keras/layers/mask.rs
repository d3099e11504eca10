//! Keras's masks at a layer call, as Keras 3.15's `Layer.__call__` handles them: the mask
//! a call reads (the `mask=` argument, else the `_keras_mask` of its first input), whether
//! the layer supports masking (`supports_masking`), and the mask its output carries
//! (`compute_mask`): an `Embedding(mask_zero=True)` masks the zero indices, `Masking` the
//! steps whose features all equal its value, a recurrent layer (or `Bidirectional`) passes
//! the mask on only with `return_sequences`, `GlobalAveragePooling1D` consumes it, and the
//! layers that act on each step alike (Dense, Dropout, activations, normalizations) pass
//! it on unchanged. A layer that does not support masking drops it, as Keras does (Keras
//! also warns). The mask's arithmetic is the op library's (`ops::nonzero_mask`,
//! `ops::masking`); how a layer uses the mask it reads is `eager.rs`'s.

use super::super::super::eager::keras_mask_of;
use super::super::super::tensor::Tensor as TfTensor;
use crate::keras::{LayerKind, Stateless};
use crate::lang::Value;
use crate::ops::{self, Eager, OpResult, Tensor};

/// The mask a call reads: `explicit` (the `mask=` argument) when given, else the mask the
/// first input tensor carries.
pub fn previous_mask(inputs: &Value, explicit: Option<Tensor>) -> Option<Tensor> {
    if explicit.is_some() {
        return explicit;
    }
    if inputs.downcast::<TfTensor>().is_some() {
        return keras_mask_of(inputs);
    }
    inputs.as_seq()?.first().and_then(keras_mask_of)
}

/// Keras's `supports_masking` for a built-in layer.
pub fn supports_masking(kind: &LayerKind) -> bool {
    match kind {
        LayerKind::Dense { .. }
        | LayerKind::Dropout { .. }
        | LayerKind::Activation(_)
        | LayerKind::Softmax
        | LayerKind::Norm(_)
        | LayerKind::Merge(_)
        | LayerKind::Recurrent(_)
        | LayerKind::Bidirectional(_) => true,
        LayerKind::Embedding { mask_zero, .. } => *mask_zero,
        LayerKind::Stateless(s) => matches!(
            s,
            Stateless::ReLU { .. }
                | Stateless::LeakyReLU { .. }
                | Stateless::ELU { .. }
                | Stateless::Rescaling { .. }
                | Stateless::Masking { .. }
                | Stateless::GlobalPool {
                    max: false,
                    rank: 1,
                    ..
                }
        ),
        LayerKind::Conv2D { .. }
        | LayerKind::Conv1D(_)
        | LayerKind::MaxPooling2D { .. }
        | LayerKind::Flatten
        | LayerKind::Reshape { .. } => false,
    }
}

/// The mask the layer's (first) output carries: `compute_mask(x, previous)` of a layer
/// that supports masking, nothing otherwise. `x` is the call's input tensor.
pub fn output_mask(
    e: &mut Eager,
    kind: &LayerKind,
    x: &Tensor,
    previous: Option<&Tensor>,
) -> OpResult<Option<Tensor>> {
    if !supports_masking(kind) {
        return Ok(None);
    }
    compute_mask(e, kind, x, previous)
}

/// Keras's `layer.compute_mask(x, previous)`: the base class's (the previous mask) unless
/// the layer defines its own.
pub fn compute_mask(
    e: &mut Eager,
    kind: &LayerKind,
    x: &Tensor,
    previous: Option<&Tensor>,
) -> OpResult<Option<Tensor>> {
    Ok(match kind {
        LayerKind::Embedding { mask_zero, .. } => match mask_zero {
            true => Some(ops::nonzero_mask(e, x)?),
            false => None,
        },
        LayerKind::Stateless(Stateless::Masking { mask_value }) => {
            Some(ops::masking(e, x, *mask_value)?.1)
        }
        LayerKind::Stateless(Stateless::GlobalPool {
            max: false,
            rank: 1,
            ..
        }) => None,
        LayerKind::Recurrent(r) if !r.return_sequences => None,
        LayerKind::Bidirectional(b) if !b.return_sequences() => None,
        // A merge combines its inputs' masks; only the first input's is read here, so a
        // merge passes no mask on rather than a wrong one.
        LayerKind::Merge(_) => None,
        _ => previous.cloned(),
    })
}
