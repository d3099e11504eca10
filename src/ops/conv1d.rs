//! The one-dimensional convolution as Keras's `Conv1D` computes it on TensorFlow: the
//! input gets an axis of size 1 and runs through `Conv2D`, `causal` padding is zeros before
//! the first step, and a dilation rate spreads the kernel's taps apart with zeros between
//! them (the taps a dilated convolution skips multiply zeros, so the values are those of
//! TF's dilated kernel). It is a composition of the padding, shape, slice and window ops,
//! so its gradient is those ops' vector-Jacobian products. Nothing here knows about layers.

use super::eager::Eager;
use super::error::OpResult;
use super::index::slice;
use super::resize::pad_axis;
use super::shape::{expand_dims, reshape, squeeze};
use super::tensor::Tensor;
use super::window::{conv2d_op, Conv, Padding};

/// Keras's padding schemes of a one-dimensional convolution.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Conv1dPadding {
    Valid,
    Same,
    /// Zeros before the sequence, so step `t` sees only steps up to `t`.
    Causal,
}

impl Conv1dPadding {
    /// `'valid'`, `'same'` or `'causal'`, in any case, as Keras accepts them.
    pub fn parse(s: &str) -> Option<Conv1dPadding> {
        match s.to_ascii_lowercase().as_str() {
            "valid" => Some(Conv1dPadding::Valid),
            "same" => Some(Conv1dPadding::Same),
            "causal" => Some(Conv1dPadding::Causal),
            _ => None,
        }
    }

    pub fn keras_name(self) -> &'static str {
        match self {
            Conv1dPadding::Valid => "valid",
            Conv1dPadding::Same => "same",
            Conv1dPadding::Causal => "causal",
        }
    }

    /// Output steps for `steps` input steps under a kernel of `k` taps `dilation` apart,
    /// every `stride` steps; `None` when none remain.
    pub fn out_steps(
        self,
        steps: usize,
        k: usize,
        stride: usize,
        dilation: usize,
    ) -> Option<usize> {
        let stride = stride.max(1);
        let span = span(k, dilation);
        match self {
            Conv1dPadding::Valid => (steps >= span).then(|| (steps - span) / stride + 1),
            Conv1dPadding::Same | Conv1dPadding::Causal => {
                Some(steps.div_ceil(stride)).filter(|o| *o > 0)
            }
        }
    }
}

/// The steps a kernel of `k` taps `dilation` apart covers.
fn span(k: usize, dilation: usize) -> usize {
    k.saturating_sub(1)
        .saturating_mul(dilation.max(1))
        .saturating_add(1)
}

/// `kernel` (`(k, in, out)`) with `dilation - 1` rows of zeros between its taps.
fn dilate(e: &mut Eager, kernel: &Tensor, dilation: usize) -> OpResult<Tensor> {
    let &[k, cin, cout] = kernel.shape() else {
        return Ok(kernel.clone());
    };
    if dilation <= 1 {
        return Ok(kernel.clone());
    }
    let tall = expand_dims(e, kernel, 1)?;
    let spread = pad_axis(e, &tall, 1, (0, dilation - 1))?;
    let flat = reshape(
        e,
        &spread,
        &[(k * dilation) as i64, cin as i64, cout as i64],
    )?;
    slice(e, &flat, &[0, 0, 0], &[span(k, dilation) as i64, -1, -1])
}

/// `Conv1D`'s convolution of `x` (`(batch, steps, in)`) with `kernel` (`(k, in, out)`),
/// every `stride` steps, taps `dilation` apart.
pub fn conv1d(
    e: &mut Eager,
    x: &Tensor,
    kernel: &Tensor,
    stride: usize,
    padding: Conv1dPadding,
    dilation: usize,
) -> OpResult<Tensor> {
    let k = kernel.shape().first().copied().unwrap_or(1);
    let x = match padding {
        Conv1dPadding::Causal => pad_axis(e, x, 1, (span(k, dilation) - 1, 0))?,
        _ => x.clone(),
    };
    let wide = expand_dims(e, &x, 1)?;
    let taps = dilate(e, kernel, dilation)?;
    let filter = expand_dims(e, &taps, 0)?;
    let conv = Conv {
        strides: (1, stride),
        padding: match padding {
            Conv1dPadding::Same => Padding::Same,
            _ => Padding::Valid,
        },
    };
    let y = conv2d_op(e, &wide, &filter, conv)?;
    squeeze(e, &y, &[1])
}
