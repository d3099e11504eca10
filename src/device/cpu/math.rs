//! Element-wise and row-wise maths for the CPU device: activations and their derivatives
//! (also fused with a layer's bias, in place), softmax, and the counter-based dropout
//! generator. Plain slices in, plain slices out; shape checks happen in the caller. Each
//! loop is compiled for the widest vectors the CPU has and split over the device's threads
//! by elements or rows, never inside a sum. The scalar formulas are `device::formulas`,
//! shared with the op library's float64 path.

use super::par::{for_chunks, for_elems, MIN_PARALLEL_ELEMS};
use super::simd::vectorized;
use crate::device::formulas as f;
use crate::device::Activation;

#[inline(always)]
fn act1(act: Activation, x: f32) -> f32 {
    match act {
        Activation::Linear => x,
        Activation::Relu => f::relu(x),
        Activation::Sigmoid => f::sigmoid(x),
        Activation::Tanh => x.tanh(),
        Activation::Elu => f::elu(x),
        Activation::Selu => f::selu(x),
        Activation::Gelu => f::gelu(x),
        Activation::Swish => f::swish(x),
        Activation::Softplus => f::softplus(x),
        Activation::LeakyRelu(slope) => f::leaky_relu(x, slope),
    }
}

/// The derivative `act'(x)`, given `y = act(x)` where that is cheaper.
#[inline(always)]
fn deriv(act: Activation, x: f32, y: f32) -> f32 {
    match act {
        Activation::Linear => 1.0,
        Activation::Relu => f::relu_deriv(x),
        Activation::Sigmoid => f::sigmoid_deriv(y),
        Activation::Tanh => f::tanh_deriv(y),
        Activation::Elu => f::elu_deriv(x, y),
        Activation::Selu => f::selu_deriv(x, y),
        Activation::Gelu => f::gelu_deriv(x),
        Activation::Swish => f::swish_deriv(x),
        Activation::Softplus => f::sigmoid(x),
        Activation::LeakyRelu(slope) => f::leaky_relu_deriv(x, slope),
    }
}

/// Whether `act'(x)` can be computed from `y = act(x)` alone, so that a layer may apply the
/// activation in place and keep only its output for the backward pass. Leaky ReLU needs a
/// positive slope for the sign of `y` to give the sign of `x`.
pub fn grad_from_output(act: Activation) -> bool {
    match act {
        Activation::Linear
        | Activation::Relu
        | Activation::Sigmoid
        | Activation::Tanh
        | Activation::Elu
        | Activation::Selu => true,
        Activation::LeakyRelu(slope) => slope > 0.0,
        Activation::Gelu | Activation::Swish | Activation::Softplus => false,
    }
}

/// `y = act(x)`, split over `threads`.
pub fn activate(act: Activation, x: &[f32], y: &mut [f32], threads: usize) {
    for_elems(threads, y, |at, y| {
        let x = &x[at..at + y.len()];
        vectorized(
            #[inline(always)]
            || match act {
                // The hot cases get their own loops so that they vectorise.
                Activation::Linear => y.copy_from_slice(x),
                Activation::Relu => y
                    .iter_mut()
                    .zip(x)
                    .for_each(|(y, x)| *y = if *x > 0.0 { *x } else { 0.0 }),
                _ => y.iter_mut().zip(x).for_each(|(y, x)| *y = act1(act, *x)),
            },
        )
    });
}

/// `x[r, :] = act(x[r, :] + bias)` in place (no bias when `bias` is empty): a layer's bias
/// and activation in one pass over its output.
pub fn bias_activate(act: Activation, x: &mut [f32], bias: &[f32], threads: usize) {
    let cols = bias.len();
    let unit = cols.max(1);
    let min = (MIN_PARALLEL_ELEMS / unit).max(1);
    for_chunks(threads, x, unit, min, |_, part| {
        vectorized(
            #[inline(always)]
            || {
                if cols == 0 {
                    apply_in_place(act, part);
                    return;
                }
                for row in part.chunks_exact_mut(cols) {
                    match act {
                        Activation::Linear => row.iter_mut().zip(bias).for_each(|(v, b)| *v += *b),
                        Activation::Relu => row.iter_mut().zip(bias).for_each(|(v, b)| {
                            let s = *v + *b;
                            *v = if s > 0.0 { s } else { 0.0 };
                        }),
                        _ => row
                            .iter_mut()
                            .zip(bias)
                            .for_each(|(v, b)| *v = act1(act, *v + *b)),
                    }
                }
            },
        )
    });
}

#[inline(always)]
fn apply_in_place(act: Activation, x: &mut [f32]) {
    match act {
        Activation::Linear => {}
        Activation::Relu => x
            .iter_mut()
            .for_each(|v| *v = if *v > 0.0 { *v } else { 0.0 }),
        _ => x.iter_mut().for_each(|v| *v = act1(act, *v)),
    }
}

/// `dx = dy * act'(x)`, split over `threads`. Where [`grad_from_output`] holds, `x` may be
/// the output `y` itself.
pub fn activate_grad(
    act: Activation,
    x: &[f32],
    y: &[f32],
    dy: &[f32],
    dx: &mut [f32],
    threads: usize,
) {
    for_elems(threads, dx, |at, dx| {
        let n = dx.len();
        let (x, y, dy) = (&x[at..at + n], &y[at..at + n], &dy[at..at + n]);
        vectorized(
            #[inline(always)]
            || match act {
                Activation::Linear => dx.copy_from_slice(dy),
                Activation::Relu => dx
                    .iter_mut()
                    .zip(x.iter().zip(dy))
                    .for_each(|(d, (x, g))| *d = if *x > 0.0 { *g } else { 0.0 }),
                Activation::Sigmoid => dx
                    .iter_mut()
                    .zip(y.iter().zip(dy))
                    .for_each(|(d, (y, g))| *d = *g * (*y * (1.0 - *y))),
                Activation::Tanh => dx
                    .iter_mut()
                    .zip(y.iter().zip(dy))
                    .for_each(|(d, (y, g))| *d = *g * (1.0 - *y * *y)),
                _ => {
                    for i in 0..n {
                        dx[i] = dy[i] * deriv(act, x[i], y[i]);
                    }
                }
            },
        )
    });
}

/// Row-wise softmax, or log-softmax when `log`: shifted by the row maximum for stability.
pub fn softmax_rows(x: &[f32], y: &mut [f32], cols: usize, log: bool, threads: usize) {
    if cols == 0 {
        return;
    }
    let min = (MIN_PARALLEL_ELEMS / cols / 8).max(1);
    for_chunks(threads, y, cols, min, |first, y| {
        let x = &x[first * cols..first * cols + y.len()];
        vectorized(
            #[inline(always)]
            || {
                for (xr, yr) in x.chunks_exact(cols).zip(y.chunks_exact_mut(cols)) {
                    let max = xr.iter().fold(f32::NEG_INFINITY, |m, v| m.max(*v));
                    let mut sum = 0.0f32;
                    for (y, x) in yr.iter_mut().zip(xr) {
                        *y = (*x - max).exp();
                        sum += *y;
                    }
                    if log {
                        let lse = sum.ln();
                        yr.iter_mut().zip(xr).for_each(|(y, x)| *y = *x - max - lse);
                    } else {
                        yr.iter_mut().for_each(|y| *y /= sum);
                    }
                }
            },
        )
    });
}

/// Backward of `softmax_rows`: `dx = y * (dy - <dy, y>)` for softmax and
/// `dx = dy - exp(y) * sum(dy)` for log-softmax.
pub fn softmax_rows_grad(
    y: &[f32],
    dy: &[f32],
    dx: &mut [f32],
    cols: usize,
    log: bool,
    threads: usize,
) {
    if cols == 0 {
        return;
    }
    let min = (MIN_PARALLEL_ELEMS / cols / 8).max(1);
    for_chunks(threads, dx, cols, min, |first, dx| {
        let span = first * cols..first * cols + dx.len();
        let (y, dy) = (&y[span.clone()], &dy[span]);
        vectorized(
            #[inline(always)]
            || {
                let rows = y.chunks_exact(cols).zip(dy.chunks_exact(cols));
                for ((yr, gr), dr) in rows.zip(dx.chunks_exact_mut(cols)) {
                    if log {
                        let s: f32 = gr.iter().sum();
                        for i in 0..cols {
                            dr[i] = gr[i] - yr[i].exp() * s;
                        }
                    } else {
                        let dot: f32 = yr.iter().zip(gr).map(|(a, b)| a * b).sum();
                        for i in 0..cols {
                            dr[i] = yr[i] * (gr[i] - dot);
                        }
                    }
                }
            },
        )
    });
}

/// `out[j] = beta * out[j] + sum_r x[r, j]`, rows added in order. Threads take columns,
/// never rows, so every column is summed in the same order whatever the thread count.
pub fn sum_rows(x: &[f32], out: &mut [f32], beta: f32, threads: usize) {
    let cols = out.len();
    if cols == 0 {
        return;
    }
    // Each thread's columns should fill whole cache lines of every row.
    let min_cols = if x.len() >= MIN_PARALLEL_ELEMS {
        16
    } else {
        cols
    };
    for_chunks(threads, out, 1, min_cols, |first, o| {
        vectorized(
            #[inline(always)]
            || {
                if beta == 0.0 {
                    o.fill(0.0);
                } else {
                    o.iter_mut().for_each(|v| *v *= beta);
                }
                let span = first..first + o.len();
                for row in x.chunks_exact(cols) {
                    o.iter_mut()
                        .zip(&row[span.clone()])
                        .for_each(|(o, v)| *o += *v);
                }
            },
        )
    });
}

/// `y = alpha * x + beta * y`.
pub fn axpby(alpha: f32, x: &[f32], beta: f32, y: &mut [f32], threads: usize) {
    for_elems(threads, y, |at, y| {
        let x = &x[at..at + y.len()];
        vectorized(
            #[inline(always)]
            || {
                if beta == 0.0 {
                    y.iter_mut().zip(x).for_each(|(y, x)| *y = alpha * *x);
                } else {
                    y.iter_mut()
                        .zip(x)
                        .for_each(|(y, x)| *y = alpha * *x + beta * *y);
                }
            },
        )
    });
}

/// `out = a * b` element-wise.
pub fn mul(a: &[f32], b: &[f32], out: &mut [f32], threads: usize) {
    for_elems(threads, out, |at, o| {
        let span = at..at + o.len();
        let (a, b) = (&a[span.clone()], &b[span]);
        vectorized(
            #[inline(always)]
            || {
                o.iter_mut()
                    .zip(a.iter().zip(b))
                    .for_each(|(o, (a, b))| *o = *a * *b)
            },
        )
    });
}

/// SplitMix64's finaliser: a strong 64-bit mixer, cheap enough to run once per element.
#[inline(always)]
fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The uniform number in `[0, 1)` that dropout draws for element `index` under `seed`:
/// `mix64(mix64(seed) + index * 0x9E3779B97F4A7C15)`, top 24 bits over 2^24. Every device
/// must compute exactly this, so that replicas (and CPU against CUDA) drop the same units.
#[inline(always)]
pub fn dropout_uniform(seed: u64, index: u64) -> f32 {
    let h = mix64(mix64(seed).wrapping_add(index.wrapping_mul(0x9E37_79B9_7F4A_7C15)));
    (h >> 40) as f32 / 16_777_216.0
}

/// Fills `mask` with `0` (probability `rate`) or `1 / (1 - rate)`, split over `threads`.
pub fn dropout_mask(seed: u64, rate: f32, mask: &mut [f32], threads: usize) {
    let keep = if rate < 1.0 { 1.0 / (1.0 - rate) } else { 0.0 };
    for_elems(threads, mask, |at, mask| {
        vectorized(
            #[inline(always)]
            || {
                for (i, m) in mask.iter_mut().enumerate() {
                    *m = if dropout_uniform(seed, (at + i) as u64) >= rate {
                        keep
                    } else {
                        0.0
                    };
                }
            },
        )
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dropout_is_reproducible_and_has_the_right_rate() {
        let mut a = vec![0.0; 10_000];
        let mut b = vec![0.0; 10_000];
        dropout_mask(7, 0.3, &mut a, 1);
        dropout_mask(7, 0.3, &mut b, 2);
        assert_eq!(a, b);
        let dropped = a.iter().filter(|v| **v == 0.0).count() as f32 / 10_000.0;
        assert!((dropped - 0.3).abs() < 0.02, "dropped {dropped}");
        let kept = a.iter().find(|v| **v != 0.0).copied().unwrap_or(0.0);
        assert!((kept - 1.0 / 0.7).abs() < 1e-6);
    }
}
