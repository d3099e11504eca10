//! Formatting of single values the way numpy 2 prints them: the shortest digits that
//! round-trip (for float32 the float32 shortest), cut to a precision, in positional or
//! scientific form; plus the `str`/`repr` of numpy scalars (`np.float32(2.5)`, `2.5`).
//! The array layout (alignment, wrapping, summarization) is in `print.rs`.

use super::array::Scalar;

/// The shortest round-trip decimal digits of `x` (finite, non-zero or zero) and the
/// decimal exponent of the first digit: `1.5e-5` gives `("15", -5)`.
pub fn shortest_digits(x: f64, is_f32: bool) -> (String, i32) {
    let s = if is_f32 {
        format!("{:e}", (x as f32).abs())
    } else {
        format!("{:e}", x.abs())
    };
    split_sci(&s)
}

fn split_sci(s: &str) -> (String, i32) {
    let (m, e) = s.split_once('e').unwrap_or((s, "0"));
    let digits: String = m.chars().filter(|c| c.is_ascii_digit()).collect();
    (digits, e.parse().unwrap_or(0))
}

/// Digits of `x` rounded to `frac` digits after the first one (scientific rounding).
fn sci_rounded(x: f64, is_f32: bool, frac: usize) -> (String, i32) {
    let s = if is_f32 {
        format!("{:.*e}", frac, (x as f32).abs())
    } else {
        format!("{:.*e}", frac, x.abs())
    };
    let (mut d, e) = split_sci(&s);
    while d.len() > 1 && d.ends_with('0') {
        d.pop();
    }
    (d, e)
}

/// Positional digits: integer part (with sign) and fractional part, at most `precision`
/// fractional digits, trailing zeros trimmed (numpy's `unique=True, trim='.'`).
pub fn positional_parts(x: f64, is_f32: bool, precision: usize) -> (String, String) {
    let sign = if x.is_sign_negative() { "-" } else { "" };
    let (digits, exp) = shortest_digits(x, is_f32);
    let needed = (digits.len() as i32 - 1 - exp).max(0) as usize;
    let (int, frac) = if needed > precision {
        let s = if is_f32 {
            format!("{:.*}", precision, (x as f32).abs())
        } else {
            format!("{:.*}", precision, x.abs())
        };
        let (i, f) = s.split_once('.').unwrap_or((&s, ""));
        (i.to_string(), f.trim_end_matches('0').to_string())
    } else if x == 0.0 {
        ("0".to_string(), String::new())
    } else if exp >= 0 {
        let e = exp as usize;
        if digits.len() > e + 1 {
            (digits[..=e].to_string(), digits[e + 1..].to_string())
        } else {
            (format!("{digits:0<width$}", width = e + 1), String::new())
        }
    } else {
        let zeros = (-exp - 1) as usize;
        ("0".to_string(), format!("{}{}", "0".repeat(zeros), digits))
    };
    (format!("{sign}{int}"), frac)
}

/// Scientific digits: integer digit (with sign), fraction (trimmed, at most
/// `precision` digits) and the exponent.
pub fn scientific_parts(x: f64, is_f32: bool, precision: usize) -> (String, String, i32) {
    let sign = if x.is_sign_negative() { "-" } else { "" };
    let (digits, exp) = if x == 0.0 {
        ("0".to_string(), 0)
    } else {
        let (d, e) = shortest_digits(x, is_f32);
        if d.len() - 1 > precision {
            sci_rounded(x, is_f32, precision)
        } else {
            (d, e)
        }
    };
    (
        format!("{sign}{}", &digits[..1]),
        digits[1..].to_string(),
        exp,
    )
}

/// An exponent as numpy writes it: sign and at least `width` digits (`e-05`).
pub fn exp_str(exp: i32, width: usize) -> String {
    let sign = if exp < 0 { '-' } else { '+' };
    format!("e{sign}{:0>width$}", exp.abs(), width = width.max(2))
}

/// `str()` of a numpy float scalar (and of Python floats): positional between 1e-4 and
/// 1e16 (1e6 for float32), scientific outside, always with a fractional part or an exponent.
pub fn float_scalar_str(x: f64, is_f32: bool) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x < 0.0 { "-inf".into() } else { "inf".into() };
    }
    let ax = if is_f32 {
        (x as f32).abs() as f64
    } else {
        x.abs()
    };
    // numpy switches a float32 to scientific from 1e6 on (`np.float32(1.6777216e+07)`).
    let hi = if is_f32 { 1e6 } else { 1e16 };
    if ax != 0.0 && !(1e-4..hi).contains(&ax) {
        let (i, f, e) = scientific_parts(x, is_f32, 64);
        let dot = if f.is_empty() {
            String::new()
        } else {
            format!(".{f}")
        };
        return format!("{i}{dot}{}", exp_str(e, 2));
    }
    let (i, f) = positional_parts(x, is_f32, 64);
    let f = if f.is_empty() { "0".to_string() } else { f };
    format!("{i}.{f}")
}

/// `str(np_scalar)`.
pub fn scalar_str(s: Scalar) -> String {
    match s {
        Scalar::Bool(b) => if b { "True" } else { "False" }.into(),
        Scalar::U8(v) => v.to_string(),
        Scalar::I32(v) => v.to_string(),
        Scalar::I64(v) => v.to_string(),
        Scalar::F32(v) => float_scalar_str(v as f64, true),
        Scalar::F64(v) => float_scalar_str(v, false),
    }
}

/// `repr(np_scalar)` under numpy 2: `np.float32(2.5)`, `np.int64(3)`, `np.True_`.
pub fn scalar_repr(s: Scalar) -> String {
    match s {
        Scalar::Bool(b) => if b { "np.True_" } else { "np.False_" }.into(),
        other => format!("np.{}({})", other.dtype().name(), scalar_str(other)),
    }
}
