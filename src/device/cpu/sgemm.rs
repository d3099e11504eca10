//! A single-precision matrix product for CPUs with AVX-512, where the GEMM crate stops at
//! AVX2 on a stable compiler: twice the multiply-adds per instruction, which is what the
//! convolutions and dense layers spend their time on. Row-major `c = alpha * op(a) @ op(b)
//! + beta * c`.
//!
//! The microkernel keeps a 12x32 tile of `c` in 24 vector registers and, for every step of
//! the inner dimension, broadcasts 12 values of `op(a)` against two vectors of a row of
//! `op(b)`. Each thread first copies the block of `op(b)` it is about to use into panels of
//! 32 columns laid out step after step, so the microkernel reads one contiguous stream that
//! stays in the first-level cache instead of rows far apart (a transposed `b`, which the
//! products only meet for small weight matrices, is transposed into a scratch buffer
//! first). A transposed `a` (a weight gradient, whose 12 values per step lie side by side
//! in one row of the patches) is copied the same way, 12 values per step; an untransposed
//! `a` is read in place through its row stride. The inner dimension is cut into blocks that
//! stay in cache; within a block each output sums its products in order, and blocks are
//! added in order, so an output's value never depends on how the rows are split over
//! threads, and the copies change no bit.

use std::cell::RefCell;

use super::par::for_ranges;

/// Rows and columns of the register tile.
const MR: usize = 12;
const NR: usize = 32;
/// The most steps of the inner dimension per block: a 12-row panel of `a` (18 KB) stays in
/// the first-level cache and the block of `b` in the second. Blocks are cut evenly, so a
/// 3x3x32 convolution's 288 steps make one block.
const KC: usize = 384;

/// Whether this CPU runs [`gemm`].
pub fn available() -> bool {
    super::simd::level() >= super::simd::Level::Avx512
}

/// A matrix in memory: element `(i, j)` is at `ptr[i * rs + j * cs]`.
#[derive(Clone, Copy)]
struct View {
    ptr: *const f32,
    rs: usize,
    cs: usize,
}

impl View {
    /// The same matrix from column `j` on.
    fn skip_cols(self, j: usize) -> View {
        View {
            ptr: self.ptr.wrapping_add(j * self.cs),
            ..self
        }
    }

    /// The same matrix from row `i` on.
    fn skip_rows(self, i: usize) -> View {
        View {
            ptr: self.ptr.wrapping_add(i * self.rs),
            ..self
        }
    }
}

// SAFETY: a `View` is only read, and the caller keeps the slice it points into borrowed for
// the whole product.
unsafe impl Send for View {}
unsafe impl Sync for View {}

struct Out(*mut f32);
// SAFETY: threads write disjoint row ranges of `c`, which the caller borrows mutably for the
// whole product.
unsafe impl Send for Out {}
unsafe impl Sync for Out {}

impl Out {
    /// The output `offset` values on (a method, so that a closure captures the whole `Out`).
    fn at(&self, offset: usize) -> *mut f32 {
        self.0.wrapping_add(offset)
    }
}

/// What the last block of the inner dimension does to each output before storing it: add
/// a bias per column, then apply ReLU. The same operations, in the same order, as the
/// separate bias-and-activation pass, so fusing them changes no bit.
#[derive(Clone, Copy)]
pub struct Post<'a> {
    pub bias: Option<&'a [f32]>,
    pub relu: bool,
}

impl Post<'_> {
    /// Nothing after the product.
    pub const NONE: Post<'static> = Post {
        bias: None,
        relu: false,
    };
}

/// [`Post`] as the threads see it.
#[derive(Clone, Copy)]
struct Epilogue {
    /// The bias of column 0, or null.
    bias: *const f32,
    relu: bool,
}

// SAFETY: the bias is only read, and the caller keeps it borrowed for the whole product.
unsafe impl Send for Epilogue {}
unsafe impl Sync for Epilogue {}

thread_local! {
    /// The transposed `b` of the products that need one, reused between calls.
    static SCRATCH: RefCell<Vec<f32>> = const { RefCell::new(Vec::new()) };
    /// Each thread's panels of the current block of `op(b)`, then its panel of `op(a)`,
    /// reused between calls (see [`rows_avx512`]).
    static PANELS: RefCell<Vec<f32>> = const { RefCell::new(Vec::new()) };
    /// The parts after the first of a product cut along its inner dimension ([`split_k`]).
    static PARTIALS: RefCell<Vec<f32>> = const { RefCell::new(Vec::new()) };
}

/// `c (m x n) = alpha * op(a) @ op(b) + beta * c`, with `op(a)` `m x k` and `op(b)` `k x n`
/// stored row-major as given (`trans_a`: `a` is `k x m`; `trans_b`: `b` is `n x k`).
/// The caller has checked every length; [`available`] must be true.
#[allow(clippy::too_many_arguments)]
pub fn gemm(
    m: usize,
    n: usize,
    k: usize,
    a: &[f32],
    trans_a: bool,
    b: &[f32],
    trans_b: bool,
    c: &mut [f32],
    alpha: f32,
    beta: f32,
    post: Post<'_>,
    threads: usize,
) {
    if m == 0 || n == 0 || a.len() < m * k || b.len() < k * n || c.len() < m * n {
        return;
    }
    let post = Epilogue {
        bias: match post.bias {
            Some(b) if b.len() >= n => b.as_ptr(),
            _ => std::ptr::null(),
        },
        relu: post.relu,
    };
    let av = if trans_a {
        View {
            ptr: a.as_ptr(),
            rs: 1,
            cs: m,
        }
    } else {
        View {
            ptr: a.as_ptr(),
            rs: k,
            cs: 1,
        }
    };
    if trans_b {
        SCRATCH.with(|s| {
            let mut bt = s.borrow_mut();
            bt.clear();
            bt.resize(k * n, 0.0);
            for (j, col) in b.chunks_exact(k.max(1)).take(n).enumerate() {
                for (p, v) in col.iter().enumerate() {
                    bt[p * n + j] = *v;
                }
            }
            run(m, n, k, av, &bt, c, alpha, beta, post, threads);
        });
    } else {
        run(m, n, k, av, b, c, alpha, beta, post, threads);
    }
}

#[allow(clippy::too_many_arguments)]
fn run(
    m: usize,
    n: usize,
    k: usize,
    a: View,
    b: &[f32],
    c: &mut [f32],
    alpha: f32,
    beta: f32,
    post: Epilogue,
    threads: usize,
) {
    let blocks = m.div_ceil(MR);
    let bp = View {
        ptr: b.as_ptr(),
        rs: n,
        cs: 1,
    };
    let parts = k / K_PART;
    if blocks == 1 && parts >= 2 && post.bias.is_null() && !post.relu {
        split_k(m, n, k, a, bp, c, alpha, beta, parts, threads);
        return;
    }
    // Hand a thread at least a quarter million multiply-adds.
    let min_blocks = ((1 << 18) / (MR * n * k.max(1)).max(1)).max(1);
    let out = Out(c.as_mut_ptr());
    let out = &out;
    for_ranges(threads, blocks, min_blocks, |range| {
        let rows = range.start * MR..(range.end * MR).min(m);
        // SAFETY: the row range is this thread's own, and the operands are the caller's.
        unsafe { rows_with_panels(rows, n, k, a, bp, out.at(0), alpha, beta, post) };
    });
}

/// Steps of the inner dimension per part of a product cut along it ([`split_k`]).
const K_PART: usize = 8192;

/// A product of one row block (at most [`MR`] rows) over a long inner dimension, such as a
/// first convolution's kernel gradient (9 rows, 32 columns, a step per output pixel of the
/// batch), which row blocks cannot share between threads: the inner dimension is cut into
/// `parts` parts of [`K_PART`] steps (the last one takes the rest), computed in parallel and
/// added in order. The cut depends on the shape alone, so the bits do not depend on the
/// thread count. The first part goes straight into `c` (with `beta`); each other part into
/// a scratch matrix that is then added.
#[allow(clippy::too_many_arguments)]
fn split_k(
    m: usize,
    n: usize,
    k: usize,
    a: View,
    b: View,
    c: &mut [f32],
    alpha: f32,
    beta: f32,
    parts: usize,
    threads: usize,
) {
    PARTIALS.with(|s| {
        let mut partials = s.borrow_mut();
        let size = m * n;
        partials.clear();
        partials.resize(size * (parts - 1), 0.0);
        let (c_out, p_out) = (Out(c.as_mut_ptr()), Out(partials.as_mut_ptr()));
        let (c_out, p_out) = (&c_out, &p_out);
        for_ranges(threads, parts, 1, |range| {
            for p in range {
                let k0 = p * K_PART;
                let len = if p + 1 == parts { k - k0 } else { K_PART };
                let (ap, bp) = (a.skip_cols(k0), b.skip_rows(k0));
                let (out, beta) = match p {
                    0 => (c_out.at(0), beta),
                    _ => (p_out.at((p - 1) * size), 0.0),
                };
                let none = Epilogue {
                    bias: std::ptr::null(),
                    relu: false,
                };
                // SAFETY: each part writes its own matrix (`c` or its scratch), and its
                // steps lie inside the operands the caller checked.
                unsafe { rows_with_panels(0..m, n, len, ap, bp, out, alpha, beta, none) };
            }
        });
        super::simd::vectorized(
            #[inline(always)]
            || {
                for part in partials.chunks_exact(size.max(1)) {
                    c[..size].iter_mut().zip(part).for_each(|(c, v)| *c += *v);
                }
            },
        );
    });
}

/// [`rows_avx512`] with this thread's panels.
///
/// # Safety
/// [`available`] must be true; `rows` of `c` (row stride `n`) must be the caller's alone,
/// and `a` and `b` must hold `k` steps of them.
#[allow(clippy::too_many_arguments)]
unsafe fn rows_with_panels(
    rows: std::ops::Range<usize>,
    n: usize,
    k: usize,
    a: View,
    b: View,
    c: *mut f32,
    alpha: f32,
    beta: f32,
    post: Epilogue,
) {
    PANELS.with(|p| {
        let mut panels = p.borrow_mut();
        let per_block = k.div_ceil(k.div_ceil(KC).max(1)).max(1);
        let need = per_block * (n.div_ceil(NR) * NR + MR);
        if panels.len() < need {
            panels.resize(need, 0.0);
        }
        // SAFETY: as the caller promised; `panels` holds a block of `op(b)` in panels plus
        // one panel of `op(a)`.
        unsafe { rows_avx512(rows, n, k, a, b, c, alpha, beta, post, &mut panels) };
    });
}

#[cfg(target_arch = "x86_64")]
#[allow(clippy::too_many_arguments)]
#[target_feature(enable = "avx512f")]
unsafe fn rows_avx512(
    rows: std::ops::Range<usize>,
    n: usize,
    k: usize,
    a: View,
    b: View,
    c: *mut f32,
    alpha: f32,
    beta: f32,
    post: Epilogue,
    panels: &mut [f32],
) {
    let per_block = k.div_ceil(k.div_ceil(KC).max(1)).max(1);
    let n_panels = n.div_ceil(NR);
    let (b_panels, a_panel) = panels.split_at_mut(per_block * n_panels * NR);
    let mut k0 = 0;
    loop {
        let kc = per_block.min(k - k0);
        let first = k0 == 0;
        let last = k0 + kc >= k;
        pack_b(b, k0, kc, n, b_panels);
        let mut i = rows.start;
        while i < rows.end {
            let mr = MR.min(rows.end - i);
            // A transposed `a` has its 12 values per step side by side: copy them into one
            // contiguous panel (the rows past `mr` are never read).
            let (ap, a_rs, a_ks) = if a.rs == 1 {
                use std::arch::x86_64::{__mmask16, _mm512_mask_storeu_ps, _mm512_maskz_loadu_ps};
                let dst = a_panel.as_mut_ptr();
                // One masked move per step, also for a short last block (a copy of `mr`
                // values would call `memcpy` once per step: a first convolution's kernel
                // gradient has nine rows and a hundred thousand steps). Masked lanes are
                // neither read nor written.
                let mask = ((1u32 << mr) - 1) as __mmask16;
                for p in 0..kc {
                    let src = a.ptr.add(i + (k0 + p) * a.cs);
                    let v = _mm512_maskz_loadu_ps(mask, src);
                    _mm512_mask_storeu_ps(dst.add(p * MR), mask, v);
                }
                (a_panel.as_ptr(), 1, MR)
            } else {
                (a.ptr.wrapping_add(i * a.rs + k0 * a.cs), a.rs, a.cs)
            };
            let mut j = 0;
            while j < n {
                let nr = NR.min(n - j);
                let bp = b_panels.as_ptr().wrapping_add((j / NR) * kc * NR);
                let cp = c.wrapping_add(i * n + j);
                let t = Tile {
                    a: ap,
                    a_rs,
                    a_ks,
                    b: bp,
                    b_ks: NR,
                    c: cp,
                    ldc: n,
                    kc,
                    nr,
                    alpha,
                    beta: if first { beta } else { 1.0 },
                    scale_c: first,
                    bias: if last && !post.bias.is_null() {
                        post.bias.wrapping_add(j)
                    } else {
                        std::ptr::null()
                    },
                    relu: last && post.relu,
                };
                match mr {
                    12 => tile::<12>(&t),
                    11 => tile::<11>(&t),
                    10 => tile::<10>(&t),
                    9 => tile::<9>(&t),
                    8 => tile::<8>(&t),
                    7 => tile::<7>(&t),
                    6 => tile::<6>(&t),
                    5 => tile::<5>(&t),
                    4 => tile::<4>(&t),
                    3 => tile::<3>(&t),
                    2 => tile::<2>(&t),
                    _ => tile::<1>(&t),
                }
                j += NR;
            }
            i += MR;
        }
        k0 += kc;
        if k0 >= k {
            break;
        }
    }
}

/// Copies steps `k0..k0 + kc` of `b` (`k x n`, row-major with row stride `b.rs`) into
/// panels of [`NR`] columns, each `kc` rows of `NR` values one after the other; the columns
/// past `n` in the last panel are zero (the tiles never store them).
///
/// # Safety
/// `b` must hold rows `k0..k0 + kc` of `n` values, and `panels` `kc * ceil(n / NR) * NR`.
unsafe fn pack_b(b: View, k0: usize, kc: usize, n: usize, panels: &mut [f32]) {
    if kc == 0 {
        return;
    }
    for (jp, panel) in panels
        .chunks_exact_mut(kc * NR)
        .take(n.div_ceil(NR))
        .enumerate()
    {
        let j = jp * NR;
        let width = NR.min(n - j);
        for (p, dst) in panel.chunks_exact_mut(NR).enumerate() {
            let src = b.ptr.add((k0 + p) * b.rs + j);
            // A copy of constant length compiles to a few moves, not a call.
            if width == NR {
                std::ptr::copy_nonoverlapping(src, dst.as_mut_ptr(), NR);
            } else {
                dst[..width].copy_from_slice(std::slice::from_raw_parts(src, width));
                dst[width..].fill(0.0);
            }
        }
    }
}

#[cfg(not(target_arch = "x86_64"))]
#[allow(clippy::too_many_arguments)]
unsafe fn rows_avx512(
    _: std::ops::Range<usize>,
    _: usize,
    _: usize,
    _: View,
    _: View,
    _: *mut f32,
    _: f32,
    _: f32,
    _: Epilogue,
    _: &mut [f32],
) {
}

/// One register tile's operands.
struct Tile {
    a: *const f32,
    /// Step between rows of `op(a)`, and between steps of the inner dimension.
    a_rs: usize,
    a_ks: usize,
    b: *const f32,
    b_ks: usize,
    c: *mut f32,
    ldc: usize,
    kc: usize,
    /// Columns of the tile that exist (1 to 32).
    nr: usize,
    alpha: f32,
    /// What the existing `c` is multiplied by: the caller's `beta` on the first block of the
    /// inner dimension, 1 on the following ones (they add to it).
    beta: f32,
    /// Whether this is the first block (then `beta == 0` means `c` is not read).
    scale_c: bool,
    /// The bias of the tile's first column, added on the last block; null for none.
    bias: *const f32,
    /// ReLU after the bias, on the last block.
    relu: bool,
}

/// The `R x 32` tile: `c = alpha * sum_p a[:, p] b[p, :] + beta * c`.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn tile<const R: usize>(t: &Tile) {
    use std::arch::x86_64::*;
    let m0: __mmask16 = if t.nr >= 16 {
        0xFFFF
    } else {
        ((1u32 << t.nr) - 1) as __mmask16
    };
    let m1: __mmask16 = if t.nr >= 32 {
        0xFFFF
    } else if t.nr > 16 {
        ((1u32 << (t.nr - 16)) - 1) as __mmask16
    } else {
        0
    };
    let mut acc0 = [_mm512_setzero_ps(); R];
    let mut acc1 = [_mm512_setzero_ps(); R];
    let mut a = t.a;
    let mut b = t.b;
    for _ in 0..t.kc {
        let b0 = _mm512_maskz_loadu_ps(m0, b);
        let b1 = _mm512_maskz_loadu_ps(m1, b.wrapping_add(16));
        for r in 0..R {
            let x = _mm512_set1_ps(*a.add(r * t.a_rs));
            acc0[r] = _mm512_fmadd_ps(x, b0, acc0[r]);
            acc1[r] = _mm512_fmadd_ps(x, b1, acc1[r]);
        }
        // Wrapping: after the last step these point past the operands, unread.
        a = a.wrapping_add(t.a_ks);
        b = b.wrapping_add(t.b_ks);
    }
    let alpha = _mm512_set1_ps(t.alpha);
    let beta = _mm512_set1_ps(t.beta);
    let read_c = !(t.scale_c && t.beta == 0.0);
    for r in 0..R {
        let cp = t.c.add(r * t.ldc);
        let mut v0 = _mm512_mul_ps(alpha, acc0[r]);
        let mut v1 = _mm512_mul_ps(alpha, acc1[r]);
        if read_c {
            let c0 = _mm512_maskz_loadu_ps(m0, cp);
            let c1 = _mm512_maskz_loadu_ps(m1, cp.wrapping_add(16));
            v0 = _mm512_add_ps(v0, _mm512_mul_ps(beta, c0));
            v1 = _mm512_add_ps(v1, _mm512_mul_ps(beta, c1));
        }
        if !t.bias.is_null() {
            v0 = _mm512_add_ps(v0, _mm512_maskz_loadu_ps(m0, t.bias));
            v1 = _mm512_add_ps(v1, _mm512_maskz_loadu_ps(m1, t.bias.wrapping_add(16)));
        }
        if t.relu {
            // `max(v, 0)` gives the second operand for NaN and for -0.0, as `v > 0 ? v : 0`.
            v0 = _mm512_max_ps(v0, _mm512_setzero_ps());
            v1 = _mm512_max_ps(v1, _mm512_setzero_ps());
        }
        _mm512_mask_storeu_ps(cp, m0, v0);
        _mm512_mask_storeu_ps(cp.wrapping_add(16), m1, v1);
    }
}

#[cfg(not(target_arch = "x86_64"))]
unsafe fn tile<const R: usize>(_: &Tile) {}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(
        m: usize,
        n: usize,
        k: usize,
        a: &[f32],
        ta: bool,
        b: &[f32],
        tb: bool,
    ) -> Vec<f64> {
        let mut c = vec![0.0f64; m * n];
        for i in 0..m {
            for j in 0..n {
                let mut s = 0.0f64;
                for p in 0..k {
                    let x = if ta { a[p * m + i] } else { a[i * k + p] };
                    let y = if tb { b[j * k + p] } else { b[p * n + j] };
                    s += f64::from(x) * f64::from(y);
                }
                c[i * n + j] = s;
            }
        }
        c
    }

    #[test]
    fn products_match_a_reference_for_every_layout_and_edge() {
        if !available() {
            eprintln!("skipped: this CPU has no AVX-512");
            return;
        }
        for (m, n, k) in [
            (1, 1, 1),
            (13, 33, 7),
            (25, 10, 300),
            (128, 64, 288),
            (5, 70, 513),
        ] {
            let a: Vec<f32> = (0..m * k)
                .map(|i| ((i * 7 % 13) as f32 - 6.0) / 8.0)
                .collect();
            let b: Vec<f32> = (0..k * n)
                .map(|i| ((i * 5 % 11) as f32 - 5.0) / 4.0)
                .collect();
            for (ta, tb) in [(false, false), (true, false), (false, true), (true, true)] {
                let want = reference(m, n, k, &a, ta, &b, tb);
                for threads in [1, 3] {
                    let mut c = vec![1.0f32; m * n];
                    gemm(
                        m,
                        n,
                        k,
                        &a,
                        ta,
                        &b,
                        tb,
                        &mut c,
                        2.0,
                        0.5,
                        Post::NONE,
                        threads,
                    );
                    for (g, w) in c.iter().zip(&want) {
                        let w = 2.0 * w + 0.5;
                        assert!(
                            (f64::from(*g) - w).abs() <= 1e-4 * (1.0 + w.abs()),
                            "{g} vs {w}"
                        );
                    }
                    let mut c0 = vec![f32::NAN; m * n];
                    gemm(
                        m,
                        n,
                        k,
                        &a,
                        ta,
                        &b,
                        tb,
                        &mut c0,
                        1.0,
                        0.0,
                        Post::NONE,
                        threads,
                    );
                    for (g, w) in c0.iter().zip(&want) {
                        assert!((f64::from(*g) - w).abs() <= 1e-4 * (1.0 + w.abs()));
                    }
                }
            }
        }
    }

    #[test]
    fn the_fused_bias_and_relu_give_the_bits_of_the_separate_pass() {
        if !available() {
            eprintln!("skipped: this CPU has no AVX-512");
            return;
        }
        let (m, n, k) = (37, 45, 700);
        let a: Vec<f32> = (0..m * k).map(|i| (i as f32 * 0.37).sin()).collect();
        let b: Vec<f32> = (0..k * n).map(|i| (i as f32 * 0.11).cos()).collect();
        let bias: Vec<f32> = (0..n).map(|j| j as f32 * 0.3 - 6.0).collect();
        let mut fused = vec![0.0; m * n];
        let post = Post {
            bias: Some(&bias),
            relu: true,
        };
        gemm(m, n, k, &a, false, &b, false, &mut fused, 1.0, 0.0, post, 2);
        let mut apart = vec![0.0; m * n];
        gemm(
            m,
            n,
            k,
            &a,
            false,
            &b,
            false,
            &mut apart,
            1.0,
            0.0,
            Post::NONE,
            2,
        );
        crate::device::cpu::math::bias_activate(
            crate::device::Activation::Relu,
            &mut apart,
            &bias,
            1,
        );
        assert_eq!(fused, apart);
        assert!(fused.contains(&0.0) && fused.iter().any(|v| *v > 0.0));
    }

    #[test]
    fn the_thread_count_does_not_change_a_bit() {
        if !available() {
            eprintln!("skipped: this CPU has no AVX-512");
            return;
        }
        let (m, n, k) = (300, 64, 1000);
        let a: Vec<f32> = (0..m * k).map(|i| (i as f32 * 0.37).sin()).collect();
        let b: Vec<f32> = (0..k * n).map(|i| (i as f32 * 0.11).cos()).collect();
        let mut one = vec![0.0; m * n];
        let mut four = vec![0.0; m * n];
        gemm(
            m,
            n,
            k,
            &a,
            true,
            &b,
            false,
            &mut one,
            1.0,
            0.0,
            Post::NONE,
            1,
        );
        gemm(
            m,
            n,
            k,
            &a,
            true,
            &b,
            false,
            &mut four,
            1.0,
            0.0,
            Post::NONE,
            4,
        );
        assert_eq!(one, four);
    }

    #[test]
    fn a_product_cut_along_its_inner_dimension_is_right_on_any_thread_count() {
        if !available() {
            eprintln!("skipped: this CPU has no AVX-512");
            return;
        }
        // A first convolution's kernel gradient: nine rows, 32 columns, many steps.
        let (m, n, k) = (9, 32, 2 * K_PART + 1000);
        assert!(k / K_PART >= 2);
        let a: Vec<f32> = (0..m * k).map(|i| (i as f32 * 0.37).sin()).collect();
        let b: Vec<f32> = (0..k * n).map(|i| (i as f32 * 0.11).cos()).collect();
        let want = reference(m, n, k, &a, true, &b, false);
        let mut first = None;
        for threads in [1, 2, 3] {
            let mut c = vec![1.0; m * n];
            gemm(
                m,
                n,
                k,
                &a,
                true,
                &b,
                false,
                &mut c,
                0.5,
                2.0,
                Post::NONE,
                threads,
            );
            for (g, w) in c.iter().zip(&want) {
                let w = 0.5 * w + 2.0;
                assert!(
                    (f64::from(*g) - w).abs() <= 1e-3 * (1.0 + w.abs()),
                    "{g} vs {w}"
                );
            }
            match &first {
                None => first = Some(c),
                Some(f) => assert_eq!(&c, f),
            }
        }
    }
}
