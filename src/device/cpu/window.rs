//! Windowed operations over NHWC tensors on the host: im2col (and its adjoint col2im) for
//! convolutions through GEMM, and max and average pooling forward and backward.
//! A patch row is laid out `(kernel row, kernel column, channel)`, which is exactly the
//! row-major order of a Keras Conv2D kernel `(kh, kw, in, out)` viewed as a matrix.
//!
//! Every loop runs over whole channel vectors (NHWC keeps a pixel's channels together), is
//! compiled for the widest vectors the CPU has ([`vectorized`]), and is split over the
//! device's threads by output rows or by images, never inside a sum, so the bits do not
//! depend on the thread count. Nothing here allocates except max pooling's backward pass,
//! which keeps one channel row of scratch per thread.

use super::par::{for_chunks, MIN_PARALLEL_ELEMS};
use super::simd::vectorized;
use crate::device::{DResult, DeviceError, Window};

fn check(op: &'static str, got: usize, want: usize) -> DResult<()> {
    if got == want {
        Ok(())
    } else {
        Err(DeviceError::Shape {
            op,
            detail: format!("{got} elements where the window needs {want}"),
        })
    }
}

fn input_len(w: &Window) -> usize {
    w.batch * w.height * w.width * w.channels
}

fn output_len(w: &Window) -> usize {
    w.batch * w.out_h * w.out_w * w.channels
}

/// Input row/column under output position `o`, kernel offset `k`, or `None` in the padding.
#[inline(always)]
fn source(o: usize, k: usize, stride: usize, pad: usize, size: usize) -> Option<usize> {
    (o * stride + k).checked_sub(pad).filter(|v| *v < size)
}

/// The fewest rows of `unit` elements worth handing to another thread.
fn min_rows(unit: usize) -> usize {
    (MIN_PARALLEL_ELEMS / unit.max(1)).max(1)
}

pub fn im2col(x: &[f32], w: &Window, cols: &mut [f32], threads: usize) -> DResult<()> {
    check("im2col (input)", x.len(), input_len(w))?;
    let patch = w.patch_len();
    check(
        "im2col (columns)",
        cols.len(),
        w.batch * w.out_h * w.out_w * patch,
    )?;
    let (c, kw) = (w.channels, w.kernel_w);
    let img_len = w.height * w.width * c;
    let unit = w.out_w * patch;
    if unit == 0 {
        return Ok(());
    }
    for_chunks(threads, cols, unit, min_rows(unit), |first, part| {
        vectorized(
            #[inline(always)]
            || {
                for (r, dst_row) in part.chunks_exact_mut(unit).enumerate() {
                    let (n, oy) = ((first + r) / w.out_h, (first + r) % w.out_h);
                    let img = &x[n * img_len..(n + 1) * img_len];
                    if c == 1 {
                        single_channel_row(img, w, oy, dst_row);
                        continue;
                    }
                    for (ox, dst) in dst_row.chunks_exact_mut(patch).enumerate() {
                        for ky in 0..w.kernel_h {
                            let seg = &mut dst[ky * kw * c..(ky + 1) * kw * c];
                            let Some(iy) = source(oy, ky, w.stride_h, w.pad_top, w.height) else {
                                seg.fill(0.0);
                                continue;
                            };
                            let row = &img[iy * w.width * c..(iy + 1) * w.width * c];
                            // The whole kernel row inside the image: one contiguous copy.
                            let x0 = (ox * w.stride_w).checked_sub(w.pad_left);
                            match x0.filter(|x0| x0 + kw <= w.width) {
                                Some(x0) => seg.copy_from_slice(&row[x0 * c..(x0 + kw) * c]),
                                None => {
                                    for kx in 0..kw {
                                        let d = &mut seg[kx * c..(kx + 1) * c];
                                        match source(ox, kx, w.stride_w, w.pad_left, w.width) {
                                            Some(ix) => {
                                                d.copy_from_slice(&row[ix * c..(ix + 1) * c])
                                            }
                                            None => d.fill(0.0),
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            },
        )
    });
    Ok(())
}

/// One output row's patches of a single-channel image (a first layer on grey images), tap
/// by tap: a kernel row there is a few values, and copying each as a slice costs a call to
/// `memcpy` per patch and kernel row, far more than the copy itself.
#[inline(always)]
fn single_channel_row(img: &[f32], w: &Window, oy: usize, dst_row: &mut [f32]) {
    let patch = w.kernel_h * w.kernel_w;
    for ky in 0..w.kernel_h {
        let row = source(oy, ky, w.stride_h, w.pad_top, w.height)
            .map(|iy| &img[iy * w.width..(iy + 1) * w.width]);
        for kx in 0..w.kernel_w {
            let taps = dst_row.iter_mut().skip(ky * w.kernel_w + kx).step_by(patch);
            match row {
                Some(row) => {
                    for (ox, d) in taps.enumerate() {
                        *d = source(ox, kx, w.stride_w, w.pad_left, w.width)
                            .map_or(0.0, |ix| row[ix]);
                    }
                }
                None => taps.for_each(|d| *d = 0.0),
            }
        }
    }
}

pub fn col2im(cols: &[f32], w: &Window, dx: &mut [f32], threads: usize) -> DResult<()> {
    check("col2im (input)", dx.len(), input_len(w))?;
    let patch = w.patch_len();
    check(
        "col2im (columns)",
        cols.len(),
        w.batch * w.out_h * w.out_w * patch,
    )?;
    let c = w.channels;
    let img_len = w.height * w.width * c;
    let img_cols = w.out_h * w.out_w * patch;
    // Images are independent: each accumulates its own patches in a fixed order.
    for_chunks(threads, dx, img_len, min_rows(img_len), |first, part| {
        vectorized(
            #[inline(always)]
            || {
                part.fill(0.0);
                for (i, img) in part.chunks_exact_mut(img_len.max(1)).enumerate() {
                    let n = first + i;
                    let src_img = &cols[n * img_cols..(n + 1) * img_cols];
                    for oy in 0..w.out_h {
                        for ox in 0..w.out_w {
                            let src = &src_img[(oy * w.out_w + ox) * patch..][..patch];
                            for ky in 0..w.kernel_h {
                                let Some(iy) = source(oy, ky, w.stride_h, w.pad_top, w.height)
                                else {
                                    continue;
                                };
                                for kx in 0..w.kernel_w {
                                    if let Some(ix) =
                                        source(ox, kx, w.stride_w, w.pad_left, w.width)
                                    {
                                        let s = (iy * w.width + ix) * c;
                                        let o = (ky * w.kernel_w + kx) * c;
                                        img[s..s + c]
                                            .iter_mut()
                                            .zip(&src[o..o + c])
                                            .for_each(|(a, b)| *a += *b);
                                    }
                                }
                            }
                        }
                    }
                }
            },
        )
    });
    Ok(())
}

/// Runs `$body` with `$t` (the tap's offset in a patch row), `$iy` and `$ix` bound for every
/// kernel tap of output `($oy, $ox)` that lies inside the image, in patch order. A macro
/// rather than a function taking a closure, so that the body is always compiled inside the
/// caller (and with its vector width).
macro_rules! for_taps {
    ($w:expr, $oy:expr, $ox:expr, |$t:pat_param, $iy:ident, $ix:ident| $body:block) => {
        for ky in 0..$w.kernel_h {
            let Some($iy) = source($oy, ky, $w.stride_h, $w.pad_top, $w.height) else {
                continue;
            };
            for kx in 0..$w.kernel_w {
                if let Some($ix) = source($ox, kx, $w.stride_w, $w.pad_left, $w.width) {
                    let $t = (ky * $w.kernel_w + kx) * $w.channels;
                    $body
                }
            }
        }
    };
}

/// Max pooling; padded positions never win (they count as minus infinity, as in
/// TensorFlow), and the first of equal values wins. `argmax`, unless empty, gets per output
/// element the flat input index it came from, as f32 (exact below 2^24 elements).
pub fn maxpool(
    x: &[f32],
    w: &Window,
    y: &mut [f32],
    argmax: &mut [f32],
    threads: usize,
) -> DResult<()> {
    check("maxpool (input)", x.len(), input_len(w))?;
    let out = output_len(w);
    check("maxpool (output)", y.len(), out)?;
    if !argmax.is_empty() {
        check("maxpool (argmax)", argmax.len(), out)?;
        maxpool_argmax(x, w, y, argmax);
        return Ok(());
    }
    let c = w.channels;
    let img_len = w.height * w.width * c;
    let unit = w.out_w * c;
    if unit == 0 {
        return Ok(());
    }
    for_chunks(threads, y, unit, min_rows(unit), |first, part| {
        vectorized(
            #[inline(always)]
            || {
                for (r, row) in part.chunks_exact_mut(unit).enumerate() {
                    let (n, oy) = ((first + r) / w.out_h, (first + r) % w.out_h);
                    let img = &x[n * img_len..(n + 1) * img_len];
                    for (ox, o) in row.chunks_exact_mut(c).enumerate() {
                        let mut seen = false;
                        for_taps!(w, oy, ox, |_, iy, ix| {
                            let px = &img[(iy * w.width + ix) * c..][..c];
                            if seen {
                                o.iter_mut()
                                    .zip(px)
                                    .for_each(|(o, v)| *o = if *v > *o { *v } else { *o });
                            } else {
                                o.copy_from_slice(px);
                                seen = true;
                            }
                        });
                        if !seen {
                            o.fill(0.0);
                        }
                    }
                }
            },
        )
    });
    Ok(())
}

/// The argmax-recording form of [`maxpool`], for callers that keep the indices.
fn maxpool_argmax(x: &[f32], w: &Window, y: &mut [f32], argmax: &mut [f32]) {
    let c = w.channels;
    let mut o = 0;
    for n in 0..w.batch {
        let base = n * w.height * w.width * c;
        for oy in 0..w.out_h {
            for ox in 0..w.out_w {
                for ch in 0..c {
                    let mut best = f32::NEG_INFINITY;
                    let mut at = usize::MAX;
                    for_taps!(w, oy, ox, |_, iy, ix| {
                        let i = base + (iy * w.width + ix) * c + ch;
                        if at == usize::MAX || x[i] > best {
                            best = x[i];
                            at = i;
                        }
                    });
                    y[o] = if at == usize::MAX { 0.0 } else { best };
                    argmax[o] = if at == usize::MAX { -1.0 } else { at as f32 };
                    o += 1;
                }
            }
        }
    }
}

pub fn maxpool_grad(dy: &[f32], argmax: &[f32], dx: &mut [f32]) -> DResult<()> {
    check("maxpool_grad", argmax.len(), dy.len())?;
    dx.fill(0.0);
    for (g, a) in dy.iter().zip(argmax) {
        if *a >= 0.0 {
            match dx.get_mut(*a as usize) {
                Some(d) => *d += *g,
                None => {
                    return Err(DeviceError::Shape {
                        op: "maxpool_grad",
                        detail: format!("argmax {a} is outside the input"),
                    })
                }
            }
        }
    }
    Ok(())
}

/// The backward pass of max pooling from the forward input, as TensorFlow's `MaxPoolGrad`:
/// each output's gradient goes to the first input of its window that holds the maximum
/// (the one [`maxpool`] picked). With `relu`, `x` is a ReLU's output and `dx` gets that
/// ReLU's gradient too (zero wherever `x` is not positive), the bits a separate
/// [`activate_grad`](super::math::activate_grad) pass would give, without another pass
/// over the largest tensor of a small CNN. Images are independent and run in parallel.
///
/// Where windows do not overlap (a stride at least the pool size, the usual case), every
/// input is written once: the gradient of its window's winner or zero. Otherwise the
/// gradients of the windows an input lies in are summed in window order.
pub fn maxpool_backward(
    x: &[f32],
    w: &Window,
    dy: &[f32],
    dx: &mut [f32],
    relu: bool,
    threads: usize,
) -> DResult<()> {
    check("maxpool_backward (input)", x.len(), input_len(w))?;
    check("maxpool_backward (input gradient)", dx.len(), input_len(w))?;
    check(
        "maxpool_backward (output gradient)",
        dy.len(),
        output_len(w),
    )?;
    let c = w.channels;
    let img_len = w.height * w.width * c;
    let img_out = w.out_h * w.out_w * c;
    let disjoint = w.stride_h >= w.kernel_h && w.stride_w >= w.kernel_w;
    // Whether the windows leave no input uncovered, so that nothing needs zeroing first.
    let tiled = disjoint
        && w.stride_h == w.kernel_h
        && w.stride_w == w.kernel_w
        && w.pad_top == 0
        && w.pad_left == 0
        && w.out_h * w.stride_h == w.height
        && w.out_w * w.stride_w == w.width;
    for_chunks(threads, dx, img_len, min_rows(img_len), |first, part| {
        // Per channel: the best value so far and the tap it came from (scratch per part).
        let (mut best, mut at) = (vec![0.0f32; c], vec![0u32; c]);
        vectorized(
            #[inline(always)]
            || {
                if !tiled {
                    part.fill(0.0);
                }
                for (i, dimg) in part.chunks_exact_mut(img_len.max(1)).enumerate() {
                    let n = first + i;
                    let img = &x[n * img_len..(n + 1) * img_len];
                    let g = &dy[n * img_out..(n + 1) * img_out];
                    for oy in 0..w.out_h {
                        for ox in 0..w.out_w {
                            let go = &g[(oy * w.out_w + ox) * c..][..c];
                            max_taps(w, img, oy, ox, &mut best, &mut at);
                            let mut k = 0u32;
                            for_taps!(w, oy, ox, |_, iy, ix| {
                                let at_px = (iy * w.width + ix) * c;
                                let d = &mut dimg[at_px..][..c];
                                let px = &img[at_px..][..c];
                                // `0.0 + g`, not `g`: the sum the overlapping case forms,
                                // which turns a gradient of -0.0 into +0.0.
                                let it = d.iter_mut().zip(&at).zip(go).zip(px);
                                match (disjoint, relu) {
                                    (true, false) => it.for_each(|(((d, a), g), _)| {
                                        *d = if *a == k { 0.0 + *g } else { 0.0 }
                                    }),
                                    (true, true) => it.for_each(|(((d, a), g), v)| {
                                        *d = if *a == k && *v > 0.0 { 0.0 + *g } else { 0.0 }
                                    }),
                                    (false, _) => it.for_each(|(((d, a), g), _)| {
                                        *d += if *a == k { *g } else { 0.0 }
                                    }),
                                }
                                k += 1;
                            });
                        }
                    }
                    if relu && !disjoint {
                        dimg.iter_mut()
                            .zip(img)
                            .for_each(|(d, v)| *d = if *v > 0.0 { *d } else { 0.0 });
                    }
                }
            },
        )
    });
    Ok(())
}

/// Each channel's winning tap of output `(oy, ox)` (the first maximum, as [`maxpool`]
/// picks it) into `at`, and its value into `best`.
#[inline(always)]
fn max_taps(w: &Window, img: &[f32], oy: usize, ox: usize, best: &mut [f32], at: &mut [u32]) {
    let c = w.channels;
    let mut k = 0u32;
    for_taps!(w, oy, ox, |_, iy, ix| {
        let px = &img[(iy * w.width + ix) * c..][..c];
        if k == 0 {
            best.copy_from_slice(px);
            at.fill(0);
        } else {
            for ((b, a), v) in best.iter_mut().zip(at.iter_mut()).zip(px) {
                let take = *v > *b;
                *b = if take { *v } else { *b };
                *a = if take { k } else { *a };
            }
        }
        k += 1;
    });
}

/// How many taps of output `(oy, ox)`'s window lie inside the image: the divisor of average
/// pooling, which (as in TensorFlow) leaves the padding out.
fn inside(w: &Window, oy: usize, ox: usize) -> usize {
    let mut n = 0;
    for_taps!(w, oy, ox, |_, _iy, _ix| {
        n += 1;
    });
    n
}

/// Average pooling over the taps inside the image.
pub fn avgpool(x: &[f32], w: &Window, y: &mut [f32], threads: usize) -> DResult<()> {
    check("avgpool (input)", x.len(), input_len(w))?;
    check("avgpool (output)", y.len(), output_len(w))?;
    let c = w.channels;
    let img_len = w.height * w.width * c;
    let unit = w.out_w * c;
    if unit == 0 {
        return Ok(());
    }
    for_chunks(threads, y, unit, min_rows(unit), |first, part| {
        vectorized(
            #[inline(always)]
            || {
                for (r, row) in part.chunks_exact_mut(unit).enumerate() {
                    let (n, oy) = ((first + r) / w.out_h, (first + r) % w.out_h);
                    let img = &x[n * img_len..(n + 1) * img_len];
                    for (ox, o) in row.chunks_exact_mut(c).enumerate() {
                        o.fill(0.0);
                        for_taps!(w, oy, ox, |_, iy, ix| {
                            let px = &img[(iy * w.width + ix) * c..][..c];
                            o.iter_mut().zip(px).for_each(|(o, v)| *o += *v);
                        });
                        let count = inside(w, oy, ox);
                        if count > 0 {
                            let inv = 1.0 / count as f32;
                            o.iter_mut().for_each(|o| *o *= inv);
                        }
                    }
                }
            },
        )
    });
    Ok(())
}

/// The backward pass of [`avgpool`]: each output's gradient, divided by its count, goes to
/// every tap of its window inside the image.
pub fn avgpool_backward(w: &Window, dy: &[f32], dx: &mut [f32], threads: usize) -> DResult<()> {
    check("avgpool_backward (input gradient)", dx.len(), input_len(w))?;
    check(
        "avgpool_backward (output gradient)",
        dy.len(),
        output_len(w),
    )?;
    let c = w.channels;
    let img_len = w.height * w.width * c;
    let img_out = w.out_h * w.out_w * c;
    for_chunks(threads, dx, img_len, min_rows(img_len), |first, part| {
        vectorized(
            #[inline(always)]
            || {
                part.fill(0.0);
                for (i, dimg) in part.chunks_exact_mut(img_len.max(1)).enumerate() {
                    let n = first + i;
                    let g = &dy[n * img_out..(n + 1) * img_out];
                    for oy in 0..w.out_h {
                        for ox in 0..w.out_w {
                            let go = &g[(oy * w.out_w + ox) * c..][..c];
                            let count = inside(w, oy, ox);
                            if count == 0 {
                                continue;
                            }
                            let inv = 1.0 / count as f32;
                            for_taps!(w, oy, ox, |_, iy, ix| {
                                let d = &mut dimg[(iy * w.width + ix) * c..][..c];
                                d.iter_mut().zip(go).for_each(|(d, g)| *d += *g * inv);
                            });
                        }
                    }
                }
            },
        )
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(
        batch: usize,
        h: usize,
        w: usize,
        c: usize,
        k: usize,
        s: usize,
        pad: usize,
    ) -> Window {
        let out = |n: usize| (n + 2 * pad - k) / s + 1;
        Window {
            batch,
            height: h,
            width: w,
            channels: c,
            kernel_h: k,
            kernel_w: k,
            stride_h: s,
            stride_w: s,
            pad_top: pad,
            pad_left: pad,
            out_h: out(h),
            out_w: out(w),
        }
    }

    /// Deterministic values with ties and negatives, so max pooling meets equal maxima.
    fn values(n: usize, seed: u32) -> Vec<f32> {
        (0..n)
            .map(|i| {
                ((i as u32).wrapping_mul(2_654_435_761).wrapping_add(seed) >> 27) as f32 - 12.0
            })
            .collect()
    }

    /// Bit patterns, so that a comparison tells -0.0 from +0.0.
    fn bits(v: &[f32]) -> Vec<u32> {
        v.iter().map(|v| v.to_bits()).collect()
    }

    fn dot(a: &[f32], b: &[f32]) -> f64 {
        a.iter()
            .zip(b)
            .map(|(a, b)| f64::from(*a) * f64::from(*b))
            .sum()
    }

    /// Overlapping windows, windows that tile the image, and disjoint windows that leave
    /// inputs uncovered (an odd size, padding).
    const WINDOWS: [(usize, usize, usize, usize, usize, usize, usize); 8] = [
        (3, 9, 7, 5, 3, 1, 0),
        (2, 8, 8, 17, 2, 2, 0),
        (2, 7, 9, 3, 3, 2, 1),
        (1, 6, 6, 32, 3, 1, 1),
        (4, 28, 28, 1, 3, 1, 0),
        (2, 7, 9, 1, 3, 2, 1),
        (2, 11, 11, 20, 2, 2, 0),
        (1, 7, 7, 3, 2, 2, 1),
    ];

    #[test]
    fn col2im_is_the_adjoint_of_im2col_on_any_thread_count() {
        for (b, h, wd, c, k, s, p) in WINDOWS {
            let w = window(b, h, wd, c, k, s, p);
            let x = values(input_len(&w), 1);
            let ncols = b * w.out_h * w.out_w * w.patch_len();
            let g = values(ncols, 2);
            let (mut cols, mut dx) = (vec![0.0; ncols], vec![0.0; x.len()]);
            im2col(&x, &w, &mut cols, 1).unwrap();
            col2im(&g, &w, &mut dx, 1).unwrap();
            assert!((dot(&cols, &g) - dot(&x, &dx)).abs() < 1e-6 * dot(&cols, &cols).max(1.0));
            let (mut cols3, mut dx3) = (vec![0.0; ncols], vec![0.0; x.len()]);
            im2col(&x, &w, &mut cols3, 3).unwrap();
            col2im(&g, &w, &mut dx3, 3).unwrap();
            assert_eq!(cols, cols3);
            assert_eq!(dx, dx3);
        }
    }

    #[test]
    fn max_pooling_backward_from_the_input_matches_the_argmax_route() {
        for (b, h, wd, c, k, s, p) in WINDOWS {
            let w = window(b, h, wd, c, k, s, p);
            let x = values(input_len(&w), 6);
            let out = output_len(&w);
            let (mut y, mut arg) = (vec![0.0; out], vec![0.0; out]);
            maxpool(&x, &w, &mut y, &mut arg, 1).unwrap();
            // A gradient of -0.0 comes out as +0.0, as the argmax route's sum makes it.
            let mut dy = values(out, 7);
            dy[0] = -0.0;
            let mut want = vec![0.0; x.len()];
            maxpool_grad(&dy, &arg, &mut want).unwrap();
            // The ReLU's gradient after the pooling's, as two passes.
            let mut want_relu = vec![0.0; x.len()];
            super::super::math::activate_grad(
                crate::device::Activation::Relu,
                &x,
                &x,
                &want,
                &mut want_relu,
                1,
            );
            for threads in [1, 2, 4] {
                let mut fast = vec![0.0; out];
                maxpool(&x, &w, &mut fast, &mut [], threads).unwrap();
                assert_eq!(fast, y);
                let mut got = vec![1.0; x.len()];
                maxpool_backward(&x, &w, &dy, &mut got, false, threads).unwrap();
                assert_eq!(bits(&got), bits(&want));
                let mut got = vec![1.0; x.len()];
                maxpool_backward(&x, &w, &dy, &mut got, true, threads).unwrap();
                assert_eq!(bits(&got), bits(&want_relu));
            }
        }
    }

    #[test]
    fn average_pooling_matches_a_direct_sum_and_its_adjoint() {
        for (b, h, wd, c, k, s, p) in WINDOWS {
            let w = window(b, h, wd, c, k, s, p);
            let x = values(input_len(&w), 8);
            let out = output_len(&w);
            let mut y = vec![0.0; out];
            avgpool(&x, &w, &mut y, 2).unwrap();
            // The reference: mean over the taps inside the image, one output at a time.
            let mut o = 0;
            for n in 0..b {
                for oy in 0..w.out_h {
                    for ox in 0..w.out_w {
                        for ch in 0..c {
                            let (mut sum, mut count) = (0.0f64, 0);
                            for ky in 0..k {
                                for kx in 0..k {
                                    let iy = (oy * s + ky).checked_sub(p).filter(|v| *v < h);
                                    let ix = (ox * s + kx).checked_sub(p).filter(|v| *v < wd);
                                    if let (Some(iy), Some(ix)) = (iy, ix) {
                                        sum += f64::from(x[((n * h + iy) * wd + ix) * c + ch]);
                                        count += 1;
                                    }
                                }
                            }
                            let want = (sum / f64::from(count)) as f32;
                            assert!((y[o] - want).abs() <= 1e-5 * (1.0 + want.abs()));
                            o += 1;
                        }
                    }
                }
            }
            let dy = values(out, 9);
            let mut dx = vec![0.0; x.len()];
            avgpool_backward(&w, &dy, &mut dx, 2).unwrap();
            assert!((dot(&y, &dy) - dot(&x, &dx)).abs() < 1e-4 * (1.0 + dot(&y, &dy).abs()));
            let mut dx1 = vec![0.0; x.len()];
            avgpool_backward(&w, &dy, &mut dx1, 1).unwrap();
            assert_eq!(dx, dx1);
        }
    }

    #[test]
    fn wrong_lengths_are_errors_not_panics() {
        let w = window(2, 5, 5, 3, 3, 1, 0);
        let x = vec![0.0; input_len(&w) - 1];
        assert!(maxpool(&x, &w, &mut [0.0; 18 * 3], &mut [], 2).is_err());
        assert!(avgpool(&x, &w, &mut [0.0; 18 * 3], 2).is_err());
        assert!(maxpool_backward(&x, &w, &[0.0; 54], &mut [0.0; 150], false, 2).is_err());
    }
}
