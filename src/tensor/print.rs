//! `repr` and `str` of arrays exactly as numpy 2 prints them with default print options:
//! precision 8, trailing zeros suppressed, columns aligned, lines wrapped at 75
//! characters, arrays over 1000 elements summarized with `...` and 3 edge items, and the
//! `dtype=`/`shape=` suffixes numpy adds when they cannot be inferred from the values.

use super::array::{NdArray, Scalar};
use super::dtype::DType;
use super::format::{exp_str, positional_parts, scalar_str, scientific_parts};
use super::shape_str;

const LINE_WIDTH: usize = 75;
const THRESHOLD: usize = 1000;
const EDGE_ITEMS: usize = 3;
const PRECISION: usize = 8;

/// How every element of one array is written (numpy's per-array format function).
enum ElemFormat {
    Bool,
    Int(usize),
    Float(FloatFormat),
}

struct FloatFormat {
    is_f32: bool,
    exp: bool,
    pad_left: usize,
    pad_right: usize,
    /// Fraction digits every value gets in scientific mode.
    precision: usize,
    exp_size: usize,
}

impl FloatFormat {
    fn new(vals: &[f64], is_f32: bool) -> FloatFormat {
        let finite: Vec<f64> = vals.iter().copied().filter(|v| v.is_finite()).collect();
        let nonzero: Vec<f64> = finite
            .iter()
            .filter(|v| **v != 0.0)
            .map(|v| v.abs())
            .collect();
        let mut exp = false;
        if !nonzero.is_empty() {
            let max = nonzero.iter().copied().fold(f64::MIN, f64::max);
            let min = nonzero.iter().copied().fold(f64::MAX, f64::min);
            exp = max >= 1e8 || min < 1e-4 || max / min > 1e3;
        }
        let mut f = FloatFormat {
            is_f32,
            exp,
            pad_left: 0,
            pad_right: 0,
            precision: 0,
            exp_size: 0,
        };
        if finite.is_empty() {
            // Only nan/inf: numpy pads them as if the values had no digits at all.
        } else if exp {
            let parts: Vec<(String, String, i32)> = finite
                .iter()
                .map(|&v| scientific_parts(v, is_f32, PRECISION))
                .collect();
            f.precision = parts.iter().map(|p| p.1.len()).max().unwrap_or(0);
            f.pad_left = parts.iter().map(|p| p.0.len()).max().unwrap_or(0);
            f.exp_size = parts
                .iter()
                .map(|p| p.2.unsigned_abs().to_string().len().max(2))
                .max()
                .unwrap_or(2);
            f.pad_right = f.exp_size + 2 + f.precision;
        } else {
            let parts: Vec<(String, String)> = finite
                .iter()
                .map(|&v| positional_parts(v, is_f32, PRECISION))
                .collect();
            f.pad_left = parts.iter().map(|p| p.0.len()).max().unwrap_or(0);
            f.pad_right = parts.iter().map(|p| p.1.len()).max().unwrap_or(0);
        }
        if finite.len() != vals.len() {
            let neginf = vals.iter().any(|v| v.is_infinite() && *v < 0.0) as usize;
            let offset = f.pad_right + 1;
            f.pad_left = f
                .pad_left
                .max(3usize.saturating_sub(offset))
                .max((3 + neginf).saturating_sub(offset));
        }
        f
    }

    fn format(&self, x: f64) -> String {
        if !x.is_finite() {
            let s = if x.is_nan() {
                "nan"
            } else if x < 0.0 {
                "-inf"
            } else {
                "inf"
            };
            let width = self.pad_left + self.pad_right + 1;
            return format!("{s:>width$}");
        }
        if self.exp {
            let (i, f, e) = scientific_parts(x, self.is_f32, PRECISION);
            return format!(
                "{i:>pl$}.{f:0<pr$}{}",
                exp_str(e, self.exp_size),
                pl = self.pad_left,
                pr = self.precision
            );
        }
        let (i, f) = positional_parts(x, self.is_f32, PRECISION);
        format!("{i:>pl$}.{f:<pr$}", pl = self.pad_left, pr = self.pad_right)
    }
}

impl ElemFormat {
    fn new(shown: &[Scalar], dtype: DType) -> ElemFormat {
        match dtype {
            DType::Bool => ElemFormat::Bool,
            DType::F32 | DType::F64 => {
                let v: Vec<f64> = shown.iter().map(|s| s.as_f64()).collect();
                ElemFormat::Float(FloatFormat::new(&v, dtype == DType::F32))
            }
            _ => ElemFormat::Int(
                shown
                    .iter()
                    .map(|s| scalar_str(*s).len())
                    .max()
                    .unwrap_or(0),
            ),
        }
    }

    fn format(&self, s: Scalar, zero_d: bool) -> String {
        match self {
            ElemFormat::Bool => match (s.as_i64() != 0, zero_d) {
                (true, true) => "True".into(),
                (true, false) => " True".into(),
                (false, _) => "False".into(),
            },
            ElemFormat::Int(w) => format!("{:>w$}", scalar_str(s), w = *w),
            ElemFormat::Float(f) => f.format(s.as_f64()),
        }
    }
}

/// The flat positions numpy shows: all of them, or the edge items of every axis when the
/// array is summarized.
fn shown_positions(shape: &[usize], summarize: bool) -> Vec<usize> {
    fn rec(shape: &[usize], axis: usize, base: usize, summarize: bool, out: &mut Vec<usize>) {
        if axis == shape.len() {
            out.push(base);
            return;
        }
        let n = shape[axis];
        let stride: usize = shape[axis + 1..].iter().product();
        let idx: Vec<usize> = if summarize && n > 2 * EDGE_ITEMS {
            (0..EDGE_ITEMS).chain(n - EDGE_ITEMS..n).collect()
        } else {
            (0..n).collect()
        };
        for i in idx {
            rec(shape, axis + 1, base + i * stride, summarize, out);
        }
    }
    let mut out = Vec::new();
    rec(shape, 0, 0, summarize, &mut out);
    out
}

struct Layout<'a> {
    shape: &'a [usize],
    words: &'a dyn Fn(usize) -> String,
    sep: &'a str,
    summarize: bool,
}

fn extend_line(s: &mut String, line: &mut String, word: &str, width: usize, prefix: &str) {
    let mut wrap = line.len() + word.len() > width;
    if line.len() <= prefix.len() {
        wrap = false;
    }
    if wrap {
        s.push_str(line.trim_end());
        s.push('\n');
        *line = prefix.to_string();
    }
    line.push_str(word);
}

impl Layout<'_> {
    fn rec(&self, axis: usize, base: usize, hanging: &str, width: usize) -> String {
        if axis == self.shape.len() {
            return (self.words)(base);
        }
        let next_hanging = format!("{hanging} ");
        let next_width = width.saturating_sub(1);
        let n = self.shape[axis];
        let stride: usize = self.shape[axis + 1..].iter().product();
        let summary = self.summarize && 2 * EDGE_ITEMS < n;
        let (lead, trail) = if summary {
            (EDGE_ITEMS, EDGE_ITEMS)
        } else {
            (0, n)
        };
        let left = self.shape.len() - axis;
        let mut s = String::new();
        if left == 1 {
            let sep_trim = self.sep.trim_end();
            let elem_width = width.saturating_sub(sep_trim.len().max(1));
            let mut line = hanging.to_string();
            for i in 0..lead {
                let w = self.rec(axis + 1, base + i * stride, &next_hanging, next_width);
                extend_line(&mut s, &mut line, &w, elem_width, hanging);
                line.push_str(self.sep);
            }
            if summary {
                extend_line(&mut s, &mut line, "...", elem_width, hanging);
                line.push_str(self.sep);
            }
            for i in (2..=trail).rev() {
                let w = self.rec(axis + 1, base + (n - i) * stride, &next_hanging, next_width);
                extend_line(&mut s, &mut line, &w, elem_width, hanging);
                line.push_str(self.sep);
            }
            if n > 0 {
                let w = self.rec(axis + 1, base + (n - 1) * stride, &next_hanging, next_width);
                extend_line(&mut s, &mut line, &w, elem_width, hanging);
            }
            s.push_str(&line);
        } else {
            let line_sep = format!("{}{}", self.sep.trim_end(), "\n".repeat(left - 1));
            for i in 0..lead {
                let nested = self.rec(axis + 1, base + i * stride, &next_hanging, next_width);
                s.push_str(&format!("{hanging}{nested}{line_sep}"));
            }
            if summary {
                s.push_str(&format!("{hanging}...{line_sep}"));
            }
            for i in (2..=trail).rev() {
                let nested = self.rec(axis + 1, base + (n - i) * stride, &next_hanging, next_width);
                s.push_str(&format!("{hanging}{nested}{line_sep}"));
            }
            if n > 0 {
                let nested = self.rec(axis + 1, base + (n - 1) * stride, &next_hanging, next_width);
                s.push_str(&format!("{hanging}{nested}"));
            }
        }
        format!("[{}]", &s[hanging.len().min(s.len())..])
    }
}

/// numpy's `array2string` for a non-empty array.
fn array2string(a: &NdArray, width: usize, sep: &str, prefix: &str) -> String {
    let vals = a.scalars();
    let summarize = a.size() > THRESHOLD;
    let shown: Vec<Scalar> = shown_positions(a.shape(), summarize)
        .into_iter()
        .filter_map(|p| vals.get(p).copied())
        .collect();
    let fmt = ElemFormat::new(&shown, a.dtype());
    let zero_d = a.ndim() == 0;
    let words = |p: usize| -> String {
        vals.get(p)
            .map(|s| fmt.format(*s, zero_d))
            .unwrap_or_default()
    };
    let layout = Layout {
        shape: a.shape(),
        words: &words,
        sep,
        summarize,
    };
    let hanging = format!(" {}", " ".repeat(prefix.len()));
    layout.rec(0, 0, &hanging, width)
}

fn dtype_implied(dt: DType) -> bool {
    matches!(dt, DType::F64 | DType::I64 | DType::Bool)
}

/// `repr(a)`: `array([1., 2.], dtype=float32)`.
pub fn repr_array(a: &NdArray) -> String {
    repr_with_prefix(a, "array")
}

/// `repr(a)` with another class name in place of `array` (numpy subclasses do this).
pub fn repr_with_prefix(a: &NdArray, class_name: &str) -> String {
    let prefix = format!("{class_name}(");
    let lst = if a.size() == 0 {
        "[]".to_string()
    } else {
        array2string(a, LINE_WIDTH - 1, ", ", &prefix)
    };
    let mut extras = Vec::new();
    if (a.size() == 0 && a.shape() != [0]) || a.size() > THRESHOLD {
        extras.push(format!("shape={}", shape_str(a.shape())));
    }
    if !dtype_implied(a.dtype()) || a.size() == 0 {
        extras.push(format!("dtype={}", a.dtype().name()));
    }
    if extras.is_empty() {
        return format!("{prefix}{lst})");
    }
    let arr_str = format!("{prefix}{lst},");
    let extra = format!("{})", extras.join(", "));
    let last_line = arr_str.len() - arr_str.rfind('\n').map_or(0, |i| i + 1);
    let spacer = if last_line + extra.len() + 1 > LINE_WIDTH {
        format!("\n{}", " ".repeat(prefix.len()))
    } else {
        " ".to_string()
    };
    format!("{arr_str}{spacer}{extra}")
}

/// `str(a)`: `[[1. 2.]\n [3. 4.]]`; a 0-d array prints as its scalar.
pub fn str_array(a: &NdArray) -> String {
    if a.ndim() == 0 {
        return a.scalar_at(0).map(scalar_str).unwrap_or_default();
    }
    if a.size() == 0 {
        return "[]".into();
    }
    array2string(a, LINE_WIDTH, " ", "")
}
