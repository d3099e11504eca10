//! The scalar formulas of the activations and their derivatives, written once and generic
//! over the float type: the CPU device's vectorized kernels run them on f32, and the op
//! library runs them on f64 host arrays (`tf.nn.relu` of a float64 tensor), so a constant
//! or a stable form (softplus, sigmoid of a negative input) cannot drift between the two.
//! The formulas follow Keras 3: selu's constants, gelu in its erf form (and TF's tanh
//! approximation), softplus as `max(x, 0) + log1p(exp(-|x|))`. CUDA's kernels are C
//! source compiled at run time and keep their own copy, checked against these by the GPU
//! tests.

use std::ops::{Add, Div, Mul, Neg, Sub};

/// The float operations the formulas need; implemented by `f32` and `f64`.
pub trait Real:
    Copy
    + PartialOrd
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
{
    /// A constant, rounded to this type.
    fn c(x: f64) -> Self;
    fn exp(self) -> Self;
    fn exp_m1(self) -> Self;
    fn ln_1p(self) -> Self;
    fn tanh(self) -> Self;
    fn abs(self) -> Self;
    fn max(self, other: Self) -> Self;
    fn erf(self) -> Self;
}

impl Real for f32 {
    #[inline(always)]
    fn c(x: f64) -> f32 {
        x as f32
    }
    #[inline(always)]
    fn exp(self) -> f32 {
        f32::exp(self)
    }
    #[inline(always)]
    fn exp_m1(self) -> f32 {
        f32::exp_m1(self)
    }
    #[inline(always)]
    fn ln_1p(self) -> f32 {
        f32::ln_1p(self)
    }
    #[inline(always)]
    fn tanh(self) -> f32 {
        f32::tanh(self)
    }
    #[inline(always)]
    fn abs(self) -> f32 {
        f32::abs(self)
    }
    #[inline(always)]
    fn max(self, other: f32) -> f32 {
        f32::max(self, other)
    }
    #[inline(always)]
    fn erf(self) -> f32 {
        erf_f32(self)
    }
}

impl Real for f64 {
    #[inline(always)]
    fn c(x: f64) -> f64 {
        x
    }
    #[inline(always)]
    fn exp(self) -> f64 {
        f64::exp(self)
    }
    #[inline(always)]
    fn exp_m1(self) -> f64 {
        f64::exp_m1(self)
    }
    #[inline(always)]
    fn ln_1p(self) -> f64 {
        f64::ln_1p(self)
    }
    #[inline(always)]
    fn tanh(self) -> f64 {
        f64::tanh(self)
    }
    #[inline(always)]
    fn abs(self) -> f64 {
        f64::abs(self)
    }
    #[inline(always)]
    fn max(self, other: f64) -> f64 {
        f64::max(self, other)
    }
    #[inline(always)]
    fn erf(self) -> f64 {
        libm::erf(self)
    }
}

pub const SELU_ALPHA: f64 = 1.673_263_242_354_377_3;
pub const SELU_SCALE: f64 = 1.050_700_987_355_480_5;
/// sqrt(2 / pi), the tanh form of gelu's constant.
pub const GELU_C: f64 = 0.797_884_560_802_865_4;
pub const GELU_A: f64 = 0.044_715;
/// 1 / sqrt(2 pi), the standard normal density at 0.
pub const INV_SQRT_2PI: f64 = 0.398_942_280_401_432_7;

/// The error function in f32, to about 1e-7 absolute: the Numerical Recipes erfc
/// Chebyshev fit evaluated in f64 (relative error below 1.2e-7 everywhere), cheaper than
/// a full-precision erf that f32 cannot use.
pub fn erf_f32(x: f32) -> f32 {
    let z = f64::from(x).abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let erfc = t * poly.exp();
    let r = 1.0 - erfc;
    (if x >= 0.0 { r } else { -r }) as f32
}

#[inline(always)]
fn zero<T: Real>() -> T {
    T::c(0.0)
}

#[inline(always)]
fn one<T: Real>() -> T {
    T::c(1.0)
}

#[inline(always)]
pub fn relu<T: Real>(x: T) -> T {
    x.max(zero())
}

#[inline(always)]
pub fn relu_deriv<T: Real>(x: T) -> T {
    if x > zero() {
        one()
    } else {
        zero()
    }
}

/// The logistic function, without overflow for inputs of either sign.
#[inline(always)]
pub fn sigmoid<T: Real>(x: T) -> T {
    if x >= zero() {
        one::<T>() / (one::<T>() + (-x).exp())
    } else {
        let e = x.exp();
        e / (one::<T>() + e)
    }
}

/// From the output `y = sigmoid(x)`.
#[inline(always)]
pub fn sigmoid_deriv<T: Real>(y: T) -> T {
    y * (one::<T>() - y)
}

/// From the output `y = tanh(x)`.
#[inline(always)]
pub fn tanh_deriv<T: Real>(y: T) -> T {
    one::<T>() - y * y
}

#[inline(always)]
pub fn softplus<T: Real>(x: T) -> T {
    x.max(zero()) + (-x.abs()).exp().ln_1p()
}

#[inline(always)]
pub fn elu<T: Real>(x: T) -> T {
    if x > zero() {
        x
    } else {
        x.exp_m1()
    }
}

/// From `x` and `y = elu(x)`.
#[inline(always)]
pub fn elu_deriv<T: Real>(x: T, y: T) -> T {
    if x > zero() {
        one()
    } else {
        y + one()
    }
}

#[inline(always)]
pub fn selu<T: Real>(x: T) -> T {
    if x > zero() {
        T::c(SELU_SCALE) * x
    } else {
        T::c(SELU_SCALE) * T::c(SELU_ALPHA) * x.exp_m1()
    }
}

/// From `x` and `y = selu(x)`.
#[inline(always)]
pub fn selu_deriv<T: Real>(x: T, y: T) -> T {
    if x > zero() {
        T::c(SELU_SCALE)
    } else {
        y + T::c(SELU_SCALE) * T::c(SELU_ALPHA)
    }
}

/// Keras's default gelu: `x * Phi(x)` with the normal CDF through erf.
#[inline(always)]
pub fn gelu<T: Real>(x: T) -> T {
    T::c(0.5) * x * (one::<T>() + (x * T::c(std::f64::consts::FRAC_1_SQRT_2)).erf())
}

#[inline(always)]
pub fn gelu_deriv<T: Real>(x: T) -> T {
    let cdf = T::c(0.5) * (one::<T>() + (x * T::c(std::f64::consts::FRAC_1_SQRT_2)).erf());
    cdf + x * T::c(INV_SQRT_2PI) * (T::c(-0.5) * x * x).exp()
}

/// gelu's tanh approximation (`approximate=True`).
#[inline(always)]
pub fn gelu_tanh<T: Real>(x: T) -> T {
    T::c(0.5) * x * (one::<T>() + (T::c(GELU_C) * (x + T::c(GELU_A) * x * x * x)).tanh())
}

#[inline(always)]
pub fn gelu_tanh_deriv<T: Real>(x: T) -> T {
    let t = (T::c(GELU_C) * (x + T::c(GELU_A) * x * x * x)).tanh();
    let du = T::c(GELU_C) * (one::<T>() + T::c(3.0 * GELU_A) * x * x);
    T::c(0.5) * (one::<T>() + t) + T::c(0.5) * x * (one::<T>() - t * t) * du
}

/// `x * sigmoid(x)` (Keras's swish, TF's silu).
#[inline(always)]
pub fn swish<T: Real>(x: T) -> T {
    x * sigmoid(x)
}

#[inline(always)]
pub fn swish_deriv<T: Real>(x: T) -> T {
    let s = sigmoid(x);
    s + x * s * (one::<T>() - s)
}

#[inline(always)]
pub fn leaky_relu<T: Real>(x: T, slope: T) -> T {
    if x >= zero() {
        x
    } else {
        slope * x
    }
}

#[inline(always)]
pub fn leaky_relu_deriv<T: Real>(x: T, slope: T) -> T {
    if x >= zero() {
        one()
    } else {
        slope
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erf_f32_matches_known_values() {
        // Values of erf from standard tables.
        for (x, want) in [
            (0.0, 0.0),
            (0.5, 0.520_499_9),
            (1.0, 0.842_700_8),
            (2.0, 0.995_322_3),
        ] {
            assert!((erf_f32(x) - want).abs() < 2e-7, "erf({x})");
            assert!((erf_f32(-x) + want).abs() < 2e-7, "erf(-{x})");
        }
    }

    #[test]
    fn f32_and_f64_give_the_same_values_to_f32_precision() {
        type Pair = (fn(f32) -> f32, fn(f64) -> f64);
        let pairs: [(&str, Pair); 13] = [
            ("sigmoid", (sigmoid, sigmoid)),
            ("softplus", (softplus, softplus)),
            ("elu", (elu, elu)),
            ("selu", (selu, selu)),
            ("gelu", (gelu, gelu)),
            ("gelu'", (gelu_deriv, gelu_deriv)),
            ("gelu_tanh", (gelu_tanh, gelu_tanh)),
            ("gelu_tanh'", (gelu_tanh_deriv, gelu_tanh_deriv)),
            ("swish", (swish, swish)),
            ("swish'", (swish_deriv, swish_deriv)),
            ("relu", (relu, relu)),
            ("leaky", (|x| leaky_relu(x, 0.2), |x| leaky_relu(x, 0.2))),
            (
                "leaky'",
                (|x| leaky_relu_deriv(x, 0.2), |x| leaky_relu_deriv(x, 0.2)),
            ),
        ];
        for (name, (f32_form, f64_form)) in pairs {
            for i in -80..=80 {
                let x = i as f32 * 0.125;
                let (a, b) = (f64::from(f32_form(x)), f64_form(f64::from(x)));
                assert!(
                    (a - b).abs() <= 1e-6 * (1.0 + b.abs()),
                    "{name}({x}): {a} vs {b}"
                );
            }
        }
    }

    #[test]
    fn derivatives_match_finite_differences() {
        let h = 1e-6;
        let check = |name: &str, f: fn(f64) -> f64, d: &dyn Fn(f64) -> f64| {
            for i in -40..=40 {
                let x = i as f64 * 0.25 + 0.01;
                let fd = (f(x + h) - f(x - h)) / (2.0 * h);
                assert!((fd - d(x)).abs() < 1e-6, "{name}'({x}): {fd} vs {}", d(x));
            }
        };
        check("sigmoid", sigmoid, &|x| sigmoid_deriv(sigmoid(x)));
        check("tanh", f64::tanh, &|x| tanh_deriv(x.tanh()));
        check("softplus", softplus, &|x| sigmoid(x));
        check("elu", elu, &|x| elu_deriv(x, elu(x)));
        check("selu", selu, &|x| selu_deriv(x, selu(x)));
        check("gelu", gelu, &gelu_deriv);
        check("gelu_tanh", gelu_tanh, &gelu_tanh_deriv);
        check("swish", swish, &swish_deriv);
        check("relu", relu, &relu_deriv);
    }
}
