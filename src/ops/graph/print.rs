//! What a `tf.print` step of a graph prints, and TensorFlow's text for a tensor in it
//! (`string_format` with `summarize`): elements without padding, nested brackets with a
//! blank line between blocks of three or more dimensions, `...` where a dimension holds
//! more than twice `summarize` entries, booleans as 1 and 0, and floats with the fewest
//! of 6 or 9 significant digits (15 or 17 for float64) that read back to the same value.
//! Pure text: where it goes (the cell's stdout or stderr) is the caller's business.

use crate::tensor::{NdArray, Scalar};

/// One piece of a print template: literal text, or the step's `i`-th input tensor.
#[derive(Debug, Clone, PartialEq)]
pub enum PrintPart {
    Text(String),
    Tensor(usize),
}

/// Which stream a `tf.print` writes to (`output_stream=sys.stdout`, or TF's default
/// `sys.stderr`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrintStream {
    Stdout,
    Stderr,
}

/// A `tf.print` call: its template, the `end` text, the stream, and `summarize`.
#[derive(Debug, Clone, PartialEq)]
pub struct PrintSpec {
    pub parts: Vec<PrintPart>,
    pub end: String,
    pub stream: PrintStream,
    /// Entries shown at each end of a long dimension; negative shows every entry.
    pub summarize: i64,
}

impl PrintSpec {
    /// The printed text (with `end`) for the given input values.
    pub fn render(&self, inputs: &[&NdArray]) -> String {
        let mut out = String::new();
        for p in &self.parts {
            match p {
                PrintPart::Text(t) => out.push_str(t),
                PrintPart::Tensor(i) => match inputs.get(*i) {
                    Some(a) => out.push_str(&format_tensor(a, self.summarize)),
                    None => out.push_str("<missing>"),
                },
            }
        }
        out.push_str(&self.end);
        out
    }
}

/// A tensor as `tf.print` shows it.
pub fn format_tensor(a: &NdArray, summarize: i64) -> String {
    let mut out = String::new();
    let shape = a.shape().to_vec();
    if shape.is_empty() {
        if let Some(s) = a.scalar_at(0) {
            out.push_str(&element(s));
        }
        return out;
    }
    if a.size() == 0 {
        return "[]".into();
    }
    let mut strides = vec![1usize; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * shape[d + 1];
    }
    dims(a, &shape, &strides, 0, 0, summarize, &mut out);
    out
}

fn dims(
    a: &NdArray,
    shape: &[usize],
    strides: &[usize],
    dim: usize,
    base: usize,
    summarize: i64,
    out: &mut String,
) {
    let ndim = shape.len();
    if dim == ndim {
        if let Some(s) = a.scalar_at(base) {
            out.push_str(&element(s));
        }
        return;
    }
    out.push('[');
    let n = shape[dim];
    let sep = if dim + 1 == ndim {
        " ".to_string()
    } else {
        format!("{}{}", "\n".repeat(ndim - dim - 1), " ".repeat(dim + 1))
    };
    let cut = summarize >= 0 && n > 2 * summarize as usize;
    let head = if cut { summarize as usize } else { n };
    let item = |i: usize, out: &mut String| {
        dims(
            a,
            shape,
            strides,
            dim + 1,
            base + i * strides[dim],
            summarize,
            out,
        )
    };
    for i in 0..head {
        if i > 0 {
            out.push_str(&sep);
        }
        item(i, out);
    }
    if cut {
        // TF writes the separator before the ellipsis even when nothing precedes it.
        out.push_str(&sep);
        out.push_str("...");
        for i in n - summarize as usize..n {
            out.push_str(&sep);
            item(i, out);
        }
    }
    out.push(']');
}

fn element(s: Scalar) -> String {
    match s {
        Scalar::Bool(b) => u8::from(b).to_string(),
        Scalar::U8(v) => v.to_string(),
        Scalar::I32(v) => v.to_string(),
        Scalar::I64(v) => v.to_string(),
        Scalar::F32(v) => shortest_g(f64::from(v), 6, 9, |t| {
            t.parse::<f32>()
                .is_ok_and(|r| r == v || (r.is_nan() && v.is_nan()))
        }),
        Scalar::F64(v) => shortest_g(v, 15, 17, |t| {
            t.parse::<f64>()
                .is_ok_and(|r| r == v || (r.is_nan() && v.is_nan()))
        }),
    }
}

/// TF's float text: `%.{short}g` when it reads back to the same value, else `%.{long}g`.
fn shortest_g(x: f64, short: usize, long: usize, round_trips: impl Fn(&str) -> bool) -> String {
    let s = format_g(x, short);
    if round_trips(&s) {
        s
    } else {
        format_g(x, long)
    }
}

/// C's `%.{precision}g`.
pub fn format_g(x: f64, precision: usize) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.into();
    }
    let p = precision.max(1);
    if x == 0.0 {
        return if x.is_sign_negative() { "-0" } else { "0" }.into();
    }
    let sci = format!("{:.*e}", p - 1, x);
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if exp < -4 || exp >= p as i32 {
        let mant = trim_zeros(mant);
        format!(
            "{mant}e{}{:02}",
            if exp < 0 { '-' } else { '+' },
            exp.unsigned_abs()
        )
    } else {
        let decimals = (p as i32 - 1 - exp).max(0) as usize;
        trim_zeros(&format!("{x:.decimals$}")).to_string()
    }
}

fn trim_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor::DType;

    fn arr(shape: &[usize], v: Vec<i64>) -> NdArray {
        NdArray::from_i64(shape, v).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn long_dimensions_are_summarized_as_tf_does() {
        let a = arr(&[20], (0..20).collect());
        assert_eq!(format_tensor(&a, 3), "[0 1 2 ... 17 18 19]");
        assert_eq!(
            format_tensor(&a, -1),
            "[0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19]"
        );
        let b = arr(&[7], (0..7).collect());
        assert_eq!(format_tensor(&b, 3), "[0 1 2 ... 4 5 6]");
        assert_eq!(format_tensor(&arr(&[10], (0..10).collect()), 0), "[ ...]");
    }

    #[test]
    fn nested_dimensions_break_lines_as_tf_does() {
        let a = arr(&[2, 3, 4], (0..24).collect());
        assert_eq!(
            format_tensor(&a, 3),
            "[[[0 1 2 3]\n  [4 5 6 7]\n  [8 9 10 11]]\n\n [[12 13 14 15]\n  [16 17 18 19]\n  [20 21 22 23]]]"
        );
        let b = arr(&[8, 10], (0..80).collect());
        assert!(format_tensor(&b, 3).starts_with(
            "[[0 1 2 ... 7 8 9]\n [10 11 12 ... 17 18 19]\n [20 21 22 ... 27 28 29]\n ...\n [50"
        ));
    }

    #[test]
    fn floats_take_the_fewest_digits_that_read_back() {
        let f = NdArray::from_f64(
            &[6],
            vec![-1.5, 2.25, 1e-7, 123456789.0, f64::NAN, f64::INFINITY],
        )
        .unwrap_or_else(|e| panic!("{e}"))
        .astype(DType::F32);
        assert_eq!(format_tensor(&f, 3), "[-1.5 2.25 1e-07 123456792 nan inf]");
        let d =
            NdArray::from_f64(&[2], vec![1.0 / 3.0, 2.0 / 3.0]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            format_tensor(&d, 3),
            "[0.33333333333333331 0.66666666666666663]"
        );
        let p = NdArray::from_f64(&[], vec![std::f64::consts::PI])
            .unwrap_or_else(|e| panic!("{e}"))
            .astype(DType::F32);
        assert_eq!(format_tensor(&p, 3), "3.14159274");
        let g = NdArray::from_f64(&[3], vec![0.5, 100.0, 1e6])
            .unwrap_or_else(|e| panic!("{e}"))
            .astype(DType::F32);
        assert_eq!(format_tensor(&g, 3), "[0.5 100 1e+06]");
    }
}
