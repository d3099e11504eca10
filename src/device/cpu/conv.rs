//! Convolutions through im2col and the matrix product, a few images at a time: the
//! unfolded patches of a batch are several times the size of the second-level cache, so
//! unfolding the whole batch and then multiplying reads every patch back from memory.
//! Here each slice of images is unfolded (or, for the input gradient, produced by the
//! product) and consumed at once, while it is still in cache. Every output row of a product
//! is computed exactly as in one product over the whole batch (the same inner-dimension
//! blocks, in the same order), and im2col and col2im treat images independently, so the
//! slicing changes no bit. The whole `cols` buffer is still filled, because the kernel
//! gradient reads it. Whole slices are shared out over the device's threads, so that each
//! core unfolds and multiplies its own images in its own cache and the threads meet once
//! per convolution, not twice per slice (which, on a loaded machine, is twice per slice a
//! wait for the slowest thread to be scheduled). Shapes are checked by the caller
//! (`cpu.rs`); nothing here allocates but the list of slices and the input gradient's
//! transposed kernel.

use std::sync::Mutex;

use super::par::for_chunks;
use super::sgemm::{self, Post};
use super::window;
use crate::device::{DResult, DeviceError, Window};

/// Bytes of patches per slice: half of a core's second-level cache (1 MiB on the CPUs this
/// was tuned on), leaving room for the product's panels and the output; one core works on
/// a slice.
const SLICE_BYTES: usize = 1 << 19;

/// Images per slice for `rows` patch rows of `patch` values per image.
fn images_per_slice(rows: usize, patch: usize) -> usize {
    (SLICE_BYTES / (4 * rows * patch).max(1)).max(1)
}

/// Slices per thread at the least, where the batch allows, so that uneven slices (the last
/// one is short) still leave the threads evenly loaded.
const SLICES_PER_THREAD: usize = 4;

/// One slice of images: its window, and where its images lie in each buffer of the whole
/// batch. The forward pass and the input gradient walk the same slices, so the sizes of
/// an image in the input, the patch columns and the output are said here once.
struct Slice {
    /// The window of the slice's images alone.
    sub: Window,
    /// The slice's images, as indices into the batch.
    images: std::ops::Range<usize>,
}

impl Slice {
    /// Rows of the slice's product: one per output position of each of its images.
    fn rows(&self) -> usize {
        self.sub.batch * self.sub.out_pixels()
    }

    /// The part of a buffer of `per_image` values per image that holds the slice.
    fn range(&self, per_image: usize) -> std::ops::Range<usize> {
        self.images.start * per_image..self.images.end * per_image
    }

    /// The slice's images in the batch input (or its gradient).
    fn input(&self) -> std::ops::Range<usize> {
        self.range(self.sub.image_len())
    }

    /// The slice's output rows of `n` filters.
    fn output(&self, n: usize) -> std::ops::Range<usize> {
        self.range(self.sub.out_pixels() * n)
    }
}

/// Runs `f` on each slice of the batch with its part of `cols` and of `out` (`out_per`
/// values per image) and the threads it may use. With at least as many slices as threads,
/// each thread takes a run of whole slices and `f` gets one thread; otherwise the slices
/// run in turn, each over every thread.
#[allow(clippy::type_complexity)]
fn for_slices(
    w: &Window,
    threads: usize,
    cols: &mut [f32],
    out: &mut [f32],
    out_per: usize,
    f: impl Fn(&Slice, &mut [f32], &mut [f32], usize) -> DResult<()> + Sync,
) -> DResult<()> {
    let threads = threads.max(1);
    let per = images_per_slice(w.out_pixels(), w.patch_len())
        .min(w.batch.div_ceil(SLICES_PER_THREAD * threads))
        .max(1);
    let (col_len, out_len) = (w.out_pixels() * w.patch_len(), out_per);
    let mut slices: Vec<(Slice, &mut [f32], &mut [f32])> = Vec::new();
    let (mut cols, mut out) = (cols, out);
    let mut first = 0;
    while first < w.batch {
        let batch = per.min(w.batch - first);
        let (c, rest_c) = std::mem::take(&mut cols).split_at_mut(batch * col_len);
        let (o, rest_o) = std::mem::take(&mut out).split_at_mut(batch * out_len);
        cols = rest_c;
        out = rest_o;
        let slice = Slice {
            sub: Window { batch, ..*w },
            images: first..first + batch,
        };
        slices.push((slice, c, o));
        first += batch;
    }
    if slices.len() < threads {
        for (s, c, o) in &mut slices {
            f(s, c, o, threads)?;
        }
        return Ok(());
    }
    let failed: Mutex<Option<DeviceError>> = Mutex::new(None);
    for_chunks(threads, &mut slices, 1, 1, |_, part| {
        for (s, c, o) in part {
            if let Err(e) = f(s, c, o, 1) {
                if let Ok(mut slot) = failed.lock() {
                    slot.get_or_insert(e);
                }
                return;
            }
        }
    });
    match failed.into_inner() {
        Ok(Some(e)) => Err(e),
        _ => Ok(()),
    }
}

/// `z = post(cols @ kernel)` with `cols = im2col(x)`, slice by slice. `kernel` is `patch x
/// n`; `z` is `batch * out_h * out_w x n`. [`sgemm::available`] must be true.
#[allow(clippy::too_many_arguments)]
pub fn forward(
    x: &[f32],
    w: &Window,
    kernel: &[f32],
    n: usize,
    cols: &mut [f32],
    z: &mut [f32],
    post: Post<'_>,
    threads: usize,
) -> DResult<()> {
    for_slices(
        w,
        threads,
        cols,
        z,
        w.out_pixels() * n,
        |s, c, z, threads| {
            window::im2col(&x[s.input()], &s.sub, c, threads)?;
            let (m, patch) = (s.rows(), w.patch_len());
            sgemm::gemm(
                m, n, patch, c, false, kernel, false, z, 1.0, 0.0, post, threads,
            );
            Ok(())
        },
    )
}

/// `dx = col2im(dz @ kernel^T)`, slice by slice, through the scratch `dcols`. `kernel` is
/// `patch x n` and `dz` `batch * out_h * out_w x n`. [`sgemm::available`] must be true.
#[allow(clippy::too_many_arguments)]
pub fn input_grad(
    dz: &[f32],
    kernel: &[f32],
    n: usize,
    w: &Window,
    dcols: &mut [f32],
    dx: &mut [f32],
    threads: usize,
) -> DResult<()> {
    // The kernel transposed once for every slice (the product would transpose it again for
    // each): the same values in the same places, so the same bits.
    let patch = w.patch_len();
    let mut kernel_t = vec![0.0; patch * n];
    for (p, row) in kernel.chunks_exact(n.max(1)).take(patch).enumerate() {
        for (j, v) in row.iter().enumerate() {
            kernel_t[j * patch + p] = *v;
        }
    }
    let kernel_t = &kernel_t;
    for_slices(w, threads, dcols, dx, w.image_len(), |s, c, dx, threads| {
        sgemm::gemm(
            s.rows(),
            patch,
            n,
            &dz[s.output(n)],
            false,
            kernel_t,
            false,
            c,
            1.0,
            0.0,
            Post::NONE,
            threads,
        );
        window::col2im(c, &s.sub, dx, threads)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 13x13x32 images under 64 3x3 filters (the second convolution of a small CNN): ten of
    /// them make two slices, the second one short.
    fn setup() -> (Window, Vec<f32>, Vec<f32>, usize) {
        let w = Window {
            batch: 10,
            height: 13,
            width: 13,
            channels: 32,
            kernel_h: 3,
            kernel_w: 3,
            stride_h: 1,
            stride_w: 1,
            pad_top: 0,
            pad_left: 0,
            out_h: 11,
            out_w: 11,
        };
        let n = 64;
        let x = (0..10 * 13 * 13 * 32)
            .map(|i| (i as f32 * 0.37).sin())
            .collect();
        let k = (0..3 * 3 * 32 * n)
            .map(|i| (i as f32 * 0.11).cos())
            .collect();
        (w, x, k, n)
    }

    #[test]
    fn slices_give_the_bits_of_one_product_over_the_batch() {
        if !sgemm::available() {
            eprintln!("skipped: this CPU has no AVX-512");
            return;
        }
        let (w, x, k, n) = setup();
        let (rows, patch) = (w.batch * w.out_h * w.out_w, 3 * 3 * 32);
        assert!(images_per_slice(w.out_h * w.out_w, patch) < w.batch);
        let bias: Vec<f32> = (0..n).map(|j| j as f32 * 0.1 - 3.0).collect();
        let post = Post {
            bias: Some(&bias),
            relu: true,
        };
        for threads in [1, 2] {
            let (mut cols, mut z) = (vec![0.0; rows * patch], vec![0.0; rows * n]);
            forward(&x, &w, &k, n, &mut cols, &mut z, post, threads).unwrap();
            let (mut want_cols, mut want_z) = (vec![0.0; rows * patch], vec![0.0; rows * n]);
            window::im2col(&x, &w, &mut want_cols, 1).unwrap();
            sgemm::gemm(
                rows,
                n,
                patch,
                &want_cols,
                false,
                &k,
                false,
                &mut want_z,
                1.0,
                0.0,
                post,
                1,
            );
            assert_eq!(cols, want_cols);
            assert_eq!(z, want_z);

            let dz: Vec<f32> = (0..rows * n).map(|i| (i as f32 * 0.23).sin()).collect();
            let (mut dcols, mut dx) = (vec![0.0; rows * patch], vec![1.0; x.len()]);
            input_grad(&dz, &k, n, &w, &mut dcols, &mut dx, threads).unwrap();
            let (mut want_dcols, mut want_dx) = (vec![0.0; rows * patch], vec![0.0; x.len()]);
            sgemm::gemm(
                rows,
                patch,
                n,
                &dz,
                false,
                &k,
                true,
                &mut want_dcols,
                1.0,
                0.0,
                Post::NONE,
                1,
            );
            window::col2im(&want_dcols, &w, &mut want_dx, 1).unwrap();
            assert_eq!(dx, want_dx);
        }
    }
}
