//! The CUDA C source of every kernel the CUDA device launches, as one string that NVRTC
//! compiles once per process at run time (no `nvcc` at build time; see `load.rs`). The
//! formulas mirror the CPU device (`device/cpu/*.rs`) term by term so that both agree to
//! rounding; the dropout generator is the same integer hash, so masks agree bit for bit.
//! The activation codes the kernels switch on are declared once, in [`ActCode`]: the launch
//! passes the Rust value and the source reads `#define`s written from the same table. This
//! file holds no other Rust: loading is in `load.rs`, launching in `device.rs`/`ops.rs`.

/// Declares the activation codes once for both languages.
macro_rules! activation_codes {
    ($($variant:ident = $code:literal => $define:literal,)*) => {
        /// An activation as the kernels name it (`kind` in `act1`, `deriv`, `bias_act`).
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        #[repr(i32)]
        pub enum ActCode {
            $($variant = $code,)*
        }

        /// The `#define`s of every code, in the source's words.
        pub const ACT_DEFINES: &str = concat!($("#define ", $define, " ", $code, "\n",)*);

        /// Each code beside the name the source uses for it.
        #[cfg(test)]
        pub const ACT_NAMES: &[(ActCode, &str)] = &[$((ActCode::$variant, $define),)*];
    };
}

activation_codes! {
    Linear = 0 => "ACT_LINEAR",
    Relu = 1 => "ACT_RELU",
    Sigmoid = 2 => "ACT_SIGMOID",
    Tanh = 3 => "ACT_TANH",
    Elu = 4 => "ACT_ELU",
    Selu = 5 => "ACT_SELU",
    Gelu = 6 => "ACT_GELU",
    Swish = 7 => "ACT_SWISH",
    Softplus = 8 => "ACT_SOFTPLUS",
    LeakyRelu = 9 => "ACT_LEAKY_RELU",
}

/// The whole translation unit NVRTC compiles: the activation codes, then the kernels.
pub fn source() -> String {
    format!("{ACT_DEFINES}{SOURCE}")
}

/// All kernels in one translation unit. Indices are 64-bit (`long long`) so tensors past
/// 2^31 elements stay correct; loops are grid-strided so any grid size covers any length.
const SOURCE: &str = r#"
typedef long long i64;
typedef unsigned long long u64;

#define NEG_INF (-__int_as_float(0x7f800000))
#define QNAN (__int_as_float(0x7fffffff))
#define GRID_LOOP(i, n) for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < (n); \
    i += (i64)blockDim.x * gridDim.x)

__device__ __forceinline__ float sigmoid_f(float x) {
    if (x >= 0.0f) { return 1.0f / (1.0f + expf(-x)); }
    float e = expf(x);
    return e / (1.0f + e);
}

__device__ __forceinline__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) { v += __shfl_xor_sync(0xffffffffu, v, o); }
    return v;
}

__device__ __forceinline__ float warp_max(float v) {
    for (int o = 16; o > 0; o >>= 1) { v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o)); }
    return v;
}

#define SELU_ALPHA 1.6732632f
#define SELU_SCALE 1.050701f

/* Activation codes: the ACT_* defines written before this source from `ActCode`; leaky
   relu takes its slope in p. */
__device__ float act1(int kind, float p, float x) {
    switch (kind) {
    case ACT_RELU: return fmaxf(x, 0.0f);
    case ACT_SIGMOID: return sigmoid_f(x);
    case ACT_TANH: return tanhf(x);
    case ACT_ELU: return x > 0.0f ? x : expm1f(x);
    case ACT_SELU: return x > 0.0f ? SELU_SCALE * x : SELU_SCALE * SELU_ALPHA * expm1f(x);
    case ACT_GELU: return 0.5f * x * (1.0f + erff(x * 0.70710678f));
    case ACT_SWISH: return x * sigmoid_f(x);
    case ACT_SOFTPLUS: return fmaxf(x, 0.0f) + log1pf(expf(-fabsf(x)));
    case ACT_LEAKY_RELU: return x >= 0.0f ? x : p * x;
    default: return x;
    }
}

__device__ float deriv(int kind, float p, float x, float y) {
    switch (kind) {
    case ACT_RELU: return x > 0.0f ? 1.0f : 0.0f;
    case ACT_SIGMOID: return y * (1.0f - y);
    case ACT_TANH: return 1.0f - y * y;
    case ACT_ELU: return x > 0.0f ? 1.0f : y + 1.0f;
    case ACT_SELU: return x > 0.0f ? SELU_SCALE : y + SELU_SCALE * SELU_ALPHA;
    case ACT_GELU: {
        float cdf = 0.5f * (1.0f + erff(x * 0.70710678f));
        float pdf = expf(-0.5f * x * x) * 0.3989423f;
        return cdf + x * pdf;
    }
    case ACT_SWISH: { float s = sigmoid_f(x); return s + x * s * (1.0f - s); }
    case ACT_SOFTPLUS: return sigmoid_f(x);
    case ACT_LEAKY_RELU: return x >= 0.0f ? 1.0f : p;
    default: return 1.0f;
    }
}

extern "C" __global__ void act_fwd(int kind, float p, const float* x, float* y, i64 n) {
    GRID_LOOP(i, n) { y[i] = act1(kind, p, x[i]); }
}

extern "C" __global__ void act_bwd(int kind, float p, const float* x, const float* y,
                                   const float* dy, float* dx, i64 n) {
    GRID_LOOP(i, n) {
        dx[i] = kind == 1 ? (x[i] > 0.0f ? dy[i] : 0.0f)
                          : dy[i] * deriv(kind, p, x[i], y[i]);
    }
}

extern "C" __global__ void add_bias(float* x, const float* b, i64 n, i64 cols) {
    GRID_LOOP(i, n) { x[i] += b[i % cols]; }
}

/* A layer's bias and activation in one pass, in place; no bias when cols is 0. */
extern "C" __global__ void bias_act(int kind, float p, float* x, const float* b, i64 n,
                                    i64 cols) {
    GRID_LOOP(i, n) { x[i] = act1(kind, p, cols > 0 ? x[i] + b[i % cols] : x[i]); }
}

/* One thread per column, rows in order, so the sum is deterministic. */
extern "C" __global__ void sum_rows(const float* x, float* out, i64 rows, i64 cols, float beta) {
    GRID_LOOP(j, cols) {
        float s = 0.0f;
        for (i64 r = 0; r < rows; ++r) { s += x[r * cols + j]; }
        out[j] = beta == 0.0f ? s : beta * out[j] + s;
    }
}

extern "C" __global__ void axpby(float a, const float* x, float b, float* y, i64 n) {
    GRID_LOOP(i, n) { y[i] = b == 0.0f ? a * x[i] : a * x[i] + b * y[i]; }
}

extern "C" __global__ void mul(const float* a, const float* b, float* out, i64 n) {
    GRID_LOOP(i, n) { out[i] = a[i] * b[i]; }
}

/* Per-block partial sums in double; the host adds the partials in block order. */
extern "C" __global__ void sum_partial(const float* x, i64 n, double* partial) {
    __shared__ double acc[256];
    double s = 0.0;
    GRID_LOOP(i, n) { s += (double)x[i]; }
    acc[threadIdx.x] = s;
    __syncthreads();
    for (unsigned w = blockDim.x / 2; w > 0; w >>= 1) {
        if (threadIdx.x < w) { acc[threadIdx.x] += acc[threadIdx.x + w]; }
        __syncthreads();
    }
    if (threadIdx.x == 0) { partial[blockIdx.x] = acc[0]; }
}

/* Row-wise softmax / log-softmax, one warp per row. */
extern "C" __global__ void softmax_rows(const float* x, float* y, i64 rows, i64 cols, int lg) {
    i64 row = ((i64)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x % 32;
    if (row >= rows) { return; }
    const float* xr = x + row * cols;
    float* yr = y + row * cols;
    float m = NEG_INF;
    for (i64 j = lane; j < cols; j += 32) { m = fmaxf(m, xr[j]); }
    m = warp_max(m);
    float s = 0.0f;
    for (i64 j = lane; j < cols; j += 32) { s += expf(xr[j] - m); }
    s = warp_sum(s);
    float lse = logf(s);
    for (i64 j = lane; j < cols; j += 32) {
        yr[j] = lg ? xr[j] - m - lse : expf(xr[j] - m) / s;
    }
}

extern "C" __global__ void softmax_rows_grad(const float* y, const float* dy, float* dx,
                                             i64 rows, i64 cols, int lg) {
    i64 row = ((i64)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x % 32;
    if (row >= rows) { return; }
    const float* yr = y + row * cols;
    const float* gr = dy + row * cols;
    float* dr = dx + row * cols;
    float s = 0.0f;
    for (i64 j = lane; j < cols; j += 32) { s += lg ? gr[j] : yr[j] * gr[j]; }
    s = warp_sum(s);
    for (i64 j = lane; j < cols; j += 32) {
        dr[j] = lg ? gr[j] - expf(yr[j]) * s : yr[j] * (gr[j] - s);
    }
}

__device__ __forceinline__ float clip_p(float p, float* pass) {
    const float eps = 1e-7f;
    if (p < eps) { *pass = 0.0f; return eps; }
    if (p > 1.0f - eps) { *pass = 0.0f; return 1.0f - eps; }
    *pass = 1.0f;
    return p;
}

__device__ __forceinline__ float sign_f(float e) {
    return e > 0.0f ? 1.0f : (e < 0.0f ? -1.0f : 0.0f);
}

/* Loss codes: 0 mse, 1 mae, 2 huber (delta), 3 bce probs, 4 bce logits, 5 cce probs,
   6 cce logits, 7 sparse cce probs, 8 sparse cce logits. One warp per row. A sparse label
   outside [0, cols) sets *bad and gives NaN, the host turns that into an error. */
extern "C" __global__ void loss_rows(int kind, float delta, const float* pred,
                                     const float* target, float* per_ex, float* grad,
                                     i64 rows, i64 cols, float scale, int* bad) {
    i64 row = ((i64)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x % 32;
    if (row >= rows) { return; }
    const float* p = pred + row * cols;
    float* g = grad + row * cols;
    float inv_k = 1.0f / (float)cols;
    float s = 0.0f;
    if (kind <= 4) {
        const float* t = target + row * cols;
        for (i64 j = lane; j < cols; j += 32) {
            float x = p[j], z = t[j], e = x - z;
            if (kind == 0) {
                s += e * e; g[j] = 2.0f * e * inv_k * scale;
            } else if (kind == 1) {
                s += fabsf(e); g[j] = sign_f(e) * inv_k * scale;
            } else if (kind == 2) {
                if (fabsf(e) <= delta) { s += 0.5f * e * e; g[j] = e * inv_k * scale; }
                else {
                    s += delta * fabsf(e) - 0.5f * delta * delta;
                    g[j] = delta * sign_f(e) * inv_k * scale;
                }
            } else if (kind == 3) {
                float pass; float q = clip_p(x, &pass);
                s += -(z * logf(q) + (1.0f - z) * logf(1.0f - q));
                g[j] = pass * (-z / q + (1.0f - z) / (1.0f - q)) * inv_k * scale;
            } else {
                s += fmaxf(x, 0.0f) - x * z + log1pf(expf(-fabsf(x)));
                g[j] = (1.0f / (1.0f + expf(-x)) - z) * inv_k * scale;
            }
        }
        s = warp_sum(s);
        if (lane == 0) { per_ex[row] = s * inv_k; }
        return;
    }
    if (kind == 5) {
        const float* t = target + row * cols;
        float total = 0.0f;
        for (i64 j = lane; j < cols; j += 32) { total += p[j]; }
        total = warp_sum(total);
        float tpass = 0.0f;
        for (i64 j = lane; j < cols; j += 32) {
            float pass; float q = clip_p(p[j] / total, &pass);
            s -= t[j] * logf(q);
            tpass += t[j] * pass;
            g[j] = pass * t[j] / q;
        }
        s = warp_sum(s);
        tpass = warp_sum(tpass);
        for (i64 j = lane; j < cols; j += 32) { g[j] = (tpass - g[j]) / total * scale; }
        if (lane == 0) { per_ex[row] = s; }
        return;
    }
    float m = NEG_INF;
    for (i64 j = lane; j < cols; j += 32) { m = fmaxf(m, p[j]); }
    m = warp_max(m);
    if (kind == 6) {
        const float* t = target + row * cols;
        float se = 0.0f;
        for (i64 j = lane; j < cols; j += 32) { se += expf(p[j] - m); }
        float lse = logf(warp_sum(se));
        // TensorFlow's kernel: softmax - labels, whatever the labels sum to.
        for (i64 j = lane; j < cols; j += 32) {
            float logp = p[j] - m - lse;
            s -= t[j] * logp;
            g[j] = (expf(logp) - t[j]) * scale;
        }
        s = warp_sum(s);
        if (lane == 0) { per_ex[row] = s; }
        return;
    }
    float label = target[row];
    i64 l = (i64)label;
    if (!(label >= 0.0f && floorf(label) == label && l < cols)) {
        for (i64 j = lane; j < cols; j += 32) { g[j] = 0.0f; }
        if (lane == 0) { per_ex[row] = QNAN; atomicExch(bad, 1); }
        return;
    }
    if (kind == 8) {
        float se = 0.0f;
        for (i64 j = lane; j < cols; j += 32) { se += expf(p[j] - m); }
        float lse = logf(warp_sum(se));
        for (i64 j = lane; j < cols; j += 32) {
            g[j] = (expf(p[j] - m - lse) - (j == l ? 1.0f : 0.0f)) * scale;
        }
        if (lane == 0) { per_ex[row] = -(p[l] - m - lse); }
        return;
    }
    float total = 0.0f;
    for (i64 j = lane; j < cols; j += 32) { float pass; total += clip_p(p[j], &pass); }
    total = warp_sum(total);
    float pass_l; float ql = clip_p(p[l], &pass_l);
    for (i64 j = lane; j < cols; j += 32) {
        float pass; float q = clip_p(p[j], &pass);
        float d = j == l ? 1.0f / q : 0.0f;
        g[j] = pass * (1.0f / total - d) * scale;
    }
    if (lane == 0) { per_ex[row] = logf(total) - logf(ql); }
}

/* SplitMix64's finaliser; the dropout draw for element i is
   mix64(mix64(seed) + i * 0x9E3779B97F4A7C15), top 24 bits over 2^24, as on the CPU. */
__device__ __forceinline__ u64 mix64(u64 z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

extern "C" __global__ void dropout_mask(u64 seed, float rate, float keep, float* mask, i64 n) {
    u64 base = mix64(seed);
    GRID_LOOP(i, n) {
        u64 h = mix64(base + (u64)i * 0x9E3779B97F4A7C15ull);
        float u = (float)(h >> 40) / 16777216.0f;
        mask[i] = u >= rate ? keep : 0.0f;
    }
}

struct Win { int b, h, w, c, kh, kw, sh, sw, pt, pl, oh, ow; };

extern "C" __global__ void im2col(const float* x, float* cols, Win g) {
    i64 patch = (i64)g.kh * g.kw * g.c;
    i64 n = (i64)g.b * g.oh * g.ow * patch;
    GRID_LOOP(i, n) {
        i64 row = i / patch, k = i % patch;
        int ch = (int)(k % g.c); i64 kk = k / g.c;
        int kx = (int)(kk % g.kw), ky = (int)(kk / g.kw);
        int ox = (int)(row % g.ow); i64 r2 = row / g.ow;
        int oy = (int)(r2 % g.oh); i64 nb = r2 / g.oh;
        int iy = oy * g.sh + ky - g.pt, ix = ox * g.sw + kx - g.pl;
        cols[i] = (iy >= 0 && iy < g.h && ix >= 0 && ix < g.w)
            ? x[((nb * g.h + iy) * g.w + ix) * g.c + ch] : 0.0f;
    }
}

/* The adjoint of im2col as a gather: each input element sums the patch entries that read
   it, so no atomics are needed and the result is deterministic. */
extern "C" __global__ void col2im(const float* cols, float* dx, Win g) {
    i64 patch = (i64)g.kh * g.kw * g.c;
    i64 n = (i64)g.b * g.h * g.w * g.c;
    GRID_LOOP(i, n) {
        int ch = (int)(i % g.c); i64 r = i / g.c;
        int ix = (int)(r % g.w); r /= g.w;
        int iy = (int)(r % g.h); i64 nb = r / g.h;
        float s = 0.0f;
        for (int ky = 0; ky < g.kh; ++ky) {
            int ty = iy + g.pt - ky;
            if (ty < 0 || ty % g.sh != 0) { continue; }
            int oy = ty / g.sh;
            if (oy >= g.oh) { continue; }
            for (int kx = 0; kx < g.kw; ++kx) {
                int tx = ix + g.pl - kx;
                if (tx < 0 || tx % g.sw != 0) { continue; }
                int ox = tx / g.sw;
                if (ox >= g.ow) { continue; }
                i64 row = (nb * g.oh + oy) * g.ow + ox;
                s += cols[row * patch + ((i64)ky * g.kw + kx) * g.c + ch];
            }
        }
        dx[i] = s;
    }
}

/* Padded positions never win; the first maximum in scan order does, as on the CPU. */
extern "C" __global__ void maxpool(const float* x, float* y, float* argmax, Win g) {
    i64 n = (i64)g.b * g.oh * g.ow * g.c;
    GRID_LOOP(o, n) {
        int ch = (int)(o % g.c); i64 r = o / g.c;
        int ox = (int)(r % g.ow); r /= g.ow;
        int oy = (int)(r % g.oh); i64 nb = r / g.oh;
        float best = NEG_INF; i64 at = -1;
        for (int ky = 0; ky < g.kh; ++ky) {
            int iy = oy * g.sh + ky - g.pt;
            if (iy < 0 || iy >= g.h) { continue; }
            for (int kx = 0; kx < g.kw; ++kx) {
                int ix = ox * g.sw + kx - g.pl;
                if (ix < 0 || ix >= g.w) { continue; }
                i64 idx = ((nb * g.h + iy) * g.w + ix) * g.c + ch;
                if (at < 0 || x[idx] > best) { best = x[idx]; at = idx; }
            }
        }
        y[o] = at < 0 ? 0.0f : best;
        if (argmax != 0) { argmax[o] = at < 0 ? -1.0f : (float)at; }
    }
}

/* The first maximum of output (nb, oy, ox, ch)'s window, as maxpool picks it; -1 if none. */
__device__ i64 window_argmax(const float* x, Win g, i64 nb, int oy, int ox, int ch) {
    float best = NEG_INF; i64 at = -1;
    for (int ky = 0; ky < g.kh; ++ky) {
        int iy = oy * g.sh + ky - g.pt;
        if (iy < 0 || iy >= g.h) { continue; }
        for (int kx = 0; kx < g.kw; ++kx) {
            int ix = ox * g.sw + kx - g.pl;
            if (ix < 0 || ix >= g.w) { continue; }
            i64 idx = ((nb * g.h + iy) * g.w + ix) * g.c + ch;
            if (at < 0 || x[idx] > best) { best = x[idx]; at = idx; }
        }
    }
    return at;
}

/* Calls BODY(oy, ox) for every output whose window covers input (iy, ix), in increasing
   (oy, ox) order, so gathers add in the same order as the CPU's scatter. */
#define COVERING(g, iy, ix, BODY) \
    for (int ky = g.kh - 1; ky >= 0; --ky) { \
        int ty = iy + g.pt - ky; \
        if (ty < 0 || ty % g.sh != 0 || ty / g.sh >= g.oh) { continue; } \
        for (int kx = g.kw - 1; kx >= 0; --kx) { \
            int tx = ix + g.pl - kx; \
            if (tx < 0 || tx % g.sw != 0 || tx / g.sw >= g.ow) { continue; } \
            int oy = ty / g.sh, ox = tx / g.sw; \
            BODY \
        } \
    }

/* Max pooling's backward pass from the forward input, as a gather: each input sums the
   gradients of the outputs that picked it, so no atomics and a deterministic result. With
   relu, x is a ReLU's output and dx also gets that ReLU's gradient (zero where x is not
   positive), as the separate activation-gradient kernel would give it. */
extern "C" __global__ void maxpool_bwd(const float* x, const float* dy, float* dx, int relu,
                                       Win g) {
    i64 n = (i64)g.b * g.h * g.w * g.c;
    GRID_LOOP(i, n) {
        int ch = (int)(i % g.c); i64 r = i / g.c;
        int ix = (int)(r % g.w); r /= g.w;
        int iy = (int)(r % g.h); i64 nb = r / g.h;
        float s = 0.0f;
        COVERING(g, iy, ix, {
            if (window_argmax(x, g, nb, oy, ox, ch) == i) {
                s += dy[((nb * g.oh + oy) * g.ow + ox) * g.c + ch];
            }
        })
        dx[i] = (relu && !(x[i] > 0.0f)) ? 0.0f : s;
    }
}

/* How many taps of output (oy, ox)'s window lie inside the input. */
__device__ __forceinline__ int inside(Win g, int oy, int ox) {
    int y0 = oy * g.sh - g.pt, x0 = ox * g.sw - g.pl;
    int h = min(y0 + g.kh, g.h) - max(y0, 0), w = min(x0 + g.kw, g.w) - max(x0, 0);
    return h > 0 && w > 0 ? h * w : 0;
}

/* Average pooling over the taps inside the input (padding not counted, as TensorFlow). */
extern "C" __global__ void avgpool(const float* x, float* y, Win g) {
    i64 n = (i64)g.b * g.oh * g.ow * g.c;
    GRID_LOOP(o, n) {
        int ch = (int)(o % g.c); i64 r = o / g.c;
        int ox = (int)(r % g.ow); r /= g.ow;
        int oy = (int)(r % g.oh); i64 nb = r / g.oh;
        float s = 0.0f;
        for (int ky = 0; ky < g.kh; ++ky) {
            int iy = oy * g.sh + ky - g.pt;
            if (iy < 0 || iy >= g.h) { continue; }
            for (int kx = 0; kx < g.kw; ++kx) {
                int ix = ox * g.sw + kx - g.pl;
                if (ix < 0 || ix >= g.w) { continue; }
                s += x[((nb * g.h + iy) * g.w + ix) * g.c + ch];
            }
        }
        int count = inside(g, oy, ox);
        y[o] = count > 0 ? s * (1.0f / (float)count) : 0.0f;
    }
}

extern "C" __global__ void avgpool_bwd(const float* dy, float* dx, Win g) {
    i64 n = (i64)g.b * g.h * g.w * g.c;
    GRID_LOOP(i, n) {
        int ch = (int)(i % g.c); i64 r = i / g.c;
        int ix = (int)(r % g.w); r /= g.w;
        int iy = (int)(r % g.h); i64 nb = r / g.h;
        float s = 0.0f;
        COVERING(g, iy, ix, {
            s += dy[((nb * g.oh + oy) * g.ow + ox) * g.c + ch] * (1.0f / (float)inside(g, oy, ox));
        })
        dx[i] = s;
    }
}

/* dx must be zeroed first; overlapping windows make several outputs hit one input. */
extern "C" __global__ void maxpool_grad(const float* dy, const float* argmax, float* dx,
                                        i64 n_out, i64 n_in, int* bad) {
    GRID_LOOP(o, n_out) {
        float a = argmax[o];
        if (a >= 0.0f) {
            i64 at = (i64)a;
            if (at < n_in) { atomicAdd(dx + at, dy[o]); } else { atomicExch(bad, 1); }
        }
    }
}

extern "C" __global__ void opt_sgd(float* p, const float* g, float* m, i64 n, float lr,
                                   float momentum, int nesterov) {
    GRID_LOOP(i, n) {
        if (m == 0) { p[i] -= lr * g[i]; continue; }
        float mi = momentum * m[i] - lr * g[i];
        m[i] = mi;
        p[i] += nesterov ? momentum * mi - lr * g[i] : mi;
    }
}

/* Adam with Keras's folded bias correction (lr_t computed on the host); decay > 0 applies
   AdamW's decoupled weight decay p -= p * decay first. */
extern "C" __global__ void opt_adam(float* p, const float* g, float* m, float* v, i64 n,
                                    float lr_t, float c1, float c2, float eps, float decay) {
    GRID_LOOP(i, n) {
        float pi = p[i];
        if (decay != 0.0f) { pi -= pi * decay; }
        float gi = g[i];
        float mi = m[i] + (gi - m[i]) * c1;
        float vi = v[i] + (gi * gi - v[i]) * c2;
        m[i] = mi; v[i] = vi;
        p[i] = pi - lr_t * mi / (sqrtf(vi) + eps);
    }
}

extern "C" __global__ void opt_rmsprop(float* p, const float* g, float* vel, float* mom,
                                       float* avg, i64 n, float lr, float rho, float crho,
                                       float momentum, float eps) {
    GRID_LOOP(i, n) {
        float gi = g[i];
        float vi = rho * vel[i] + crho * (gi * gi);
        vel[i] = vi;
        float denom;
        if (avg != 0) {
            float ai = rho * avg[i] + crho * gi;
            avg[i] = ai;
            denom = vi - ai * ai + eps;
        } else {
            denom = vi + eps;
        }
        float inc = lr * gi / sqrtf(denom);
        if (mom != 0) { float mi = momentum * mom[i] + inc; mom[i] = mi; p[i] -= mi; }
        else { p[i] -= inc; }
    }
}

extern "C" __global__ void opt_adagrad(float* p, const float* g, float* acc, i64 n, float lr,
                                       float eps) {
    GRID_LOOP(i, n) {
        float ai = acc[i] + g[i] * g[i];
        acc[i] = ai;
        p[i] -= lr * g[i] / sqrtf(ai + eps);
    }
}

/* Several replicas on one GPU: every buffer receives the sum over all of them, added in
   rank order so each replica holds bit-identical values. */
struct PtrTable { float* p[32]; };

extern "C" __global__ void local_reduce(PtrTable t, int count, i64 n) {
    GRID_LOOP(i, n) {
        float s = 0.0f;
        for (int r = 0; r < count; ++r) { s += t.p[r][i]; }
        for (int r = 0; r < count; ++r) { t.p[r][i] = s; }
    }
}
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_activation_code_is_defined_and_switched_on_in_both_functions() {
        let src = source();
        for (code, name) in ACT_NAMES {
            assert!(src.contains(&format!("#define {name} {}\n", *code as i32)));
            if *code != ActCode::Linear {
                // act1 and deriv each have a case; linear is their default.
                assert_eq!(src.matches(&format!("case {name}:")).count(), 2, "{name}");
            }
        }
        assert!(
            !src.contains("case 1:"),
            "a magic activation number is back"
        );
    }
}
