//! Windowed operations over NHWC tensors on the host: im2col (and its adjoint col2im) for
//! convolutions through GEMM, and max pooling with the argmax its backward pass needs.
//! A patch row is laid out `(kernel row, kernel column, channel)`, which is exactly the
//! row-major order of a Keras Conv2D kernel `(kh, kw, in, out)` viewed as a matrix.

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

/// Input row/column under output position `o`, kernel offset `k`, or `None` in the padding.
fn source(o: usize, k: usize, stride: usize, pad: usize, size: usize) -> Option<usize> {
    (o * stride + k).checked_sub(pad).filter(|v| *v < size)
}

pub fn im2col(x: &[f32], w: &Window, cols: &mut [f32]) -> DResult<()> {
    check("im2col (input)", x.len(), input_len(w))?;
    let patch = w.kernel_h * w.kernel_w * w.channels;
    check(
        "im2col (columns)",
        cols.len(),
        w.batch * w.out_h * w.out_w * patch,
    )?;
    let c = w.channels;
    let mut row = 0;
    for n in 0..w.batch {
        let img = &x[n * w.height * w.width * c..(n + 1) * w.height * w.width * c];
        for oy in 0..w.out_h {
            for ox in 0..w.out_w {
                let dst = &mut cols[row * patch..(row + 1) * patch];
                row += 1;
                for ky in 0..w.kernel_h {
                    let seg = &mut dst[ky * w.kernel_w * c..(ky + 1) * w.kernel_w * c];
                    let Some(iy) = source(oy, ky, w.stride_h, w.pad_top, w.height) else {
                        seg.fill(0.0);
                        continue;
                    };
                    for kx in 0..w.kernel_w {
                        let d = &mut seg[kx * c..(kx + 1) * c];
                        match source(ox, kx, w.stride_w, w.pad_left, w.width) {
                            Some(ix) => {
                                let s = (iy * w.width + ix) * c;
                                d.copy_from_slice(&img[s..s + c]);
                            }
                            None => d.fill(0.0),
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

pub fn col2im(cols: &[f32], w: &Window, dx: &mut [f32]) -> DResult<()> {
    check("col2im (input)", dx.len(), input_len(w))?;
    let patch = w.kernel_h * w.kernel_w * w.channels;
    check(
        "col2im (columns)",
        cols.len(),
        w.batch * w.out_h * w.out_w * patch,
    )?;
    dx.fill(0.0);
    let c = w.channels;
    let mut row = 0;
    for n in 0..w.batch {
        let img = &mut dx[n * w.height * w.width * c..(n + 1) * w.height * w.width * c];
        for oy in 0..w.out_h {
            for ox in 0..w.out_w {
                let src = &cols[row * patch..(row + 1) * patch];
                row += 1;
                for ky in 0..w.kernel_h {
                    let Some(iy) = source(oy, ky, w.stride_h, w.pad_top, w.height) else {
                        continue;
                    };
                    for kx in 0..w.kernel_w {
                        if let Some(ix) = source(ox, kx, w.stride_w, w.pad_left, w.width) {
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
    Ok(())
}

/// Max pooling; padded positions never win (they count as minus infinity, as in
/// TensorFlow). `argmax` holds flat input indices as f32, exact below 2^24 elements.
pub fn maxpool(x: &[f32], w: &Window, y: &mut [f32], argmax: &mut [f32]) -> DResult<()> {
    check("maxpool (input)", x.len(), input_len(w))?;
    let out = w.batch * w.out_h * w.out_w * w.channels;
    check("maxpool (output)", y.len(), out)?;
    check("maxpool (argmax)", argmax.len(), out)?;
    let c = w.channels;
    let mut o = 0;
    for n in 0..w.batch {
        let base = n * w.height * w.width * c;
        for oy in 0..w.out_h {
            for ox in 0..w.out_w {
                for ch in 0..c {
                    let mut best = f32::NEG_INFINITY;
                    let mut at = usize::MAX;
                    for ky in 0..w.kernel_h {
                        let Some(iy) = source(oy, ky, w.stride_h, w.pad_top, w.height) else {
                            continue;
                        };
                        for kx in 0..w.kernel_w {
                            if let Some(ix) = source(ox, kx, w.stride_w, w.pad_left, w.width) {
                                let i = base + (iy * w.width + ix) * c + ch;
                                if at == usize::MAX || x[i] > best {
                                    best = x[i];
                                    at = i;
                                }
                            }
                        }
                    }
                    y[o] = if at == usize::MAX { 0.0 } else { best };
                    argmax[o] = if at == usize::MAX { -1.0 } else { at as f32 };
                    o += 1;
                }
            }
        }
    }
    Ok(())
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
