//! Text formatting: format specs (`f"{x:>8.3f}"`, `format(x, ",")`), `str.format` and
//! `%` formatting, with CPython's results and CPython's errors for every spec it refuses
//! (`precision too big`, `Too many decimal digits in format string`, `Sign not allowed in
//! string format specifier`, ...). Widths and precisions are whatever a cell writes, up to
//! the memory bound: the text is built through `memory` (a `MemoryError` when it cannot
//! fit), and precisions far beyond what a float holds are exact zeros added after the
//! digits Rust formats, so no width or precision reaches a formatter that would panic on it.

use crate::lang::datamodel::repr::float_repr;
use crate::lang::eval::vm::Vm;
use crate::lang::values::exc::{PyErr, PyResult};
use crate::lang::values::memory;
use crate::lang::values::object::Args;
use crate::lang::values::value::Value;

/// The most fractional digits an `f64`'s exact decimal expansion has (1074, for the
/// smallest subnormal), with margin: digits past it are zeros.
const FIXED_DIGITS: usize = 1100;

/// The most significant digits an `f64`'s exact decimal expansion has (767), with margin.
const SCI_DIGITS: usize = 800;

/// CPython refuses a precision beyond a C `int`.
const MAX_PRECISION: usize = i32::MAX as usize;

/// A parsed format spec: `[[fill]align][sign][z][#][0][width][grouping][.precision][type]`.
#[derive(Default, Clone)]
struct Spec {
    fill: Option<char>,
    align: Option<char>,
    sign: Option<char>,
    /// `z`: negative zero prints as zero.
    no_neg_zero: bool,
    alt: bool,
    zero: bool,
    width: usize,
    group: Option<char>,
    prec: Option<usize>,
    ty: Option<char>,
}

fn too_many_digits() -> PyErr {
    PyErr::value_error("Too many decimal digits in format string")
}

/// Reads the decimal number at `c[*i..]`, if any.
fn number(c: &[char], i: &mut usize) -> PyResult<Option<usize>> {
    let st = *i;
    while *i < c.len() && c[*i].is_ascii_digit() {
        *i += 1;
    }
    if st == *i {
        return Ok(None);
    }
    let text: String = c[st..*i].iter().collect();
    // CPython counts in a signed `Py_ssize_t`.
    match text.parse::<u64>() {
        Ok(n) if n <= i64::MAX as u64 => Ok(Some(n as usize)),
        _ => Err(too_many_digits()),
    }
}

fn parse_spec(s: &str) -> PyResult<Spec> {
    let c: Vec<char> = s.chars().collect();
    let mut i = 0;
    let mut sp = Spec::default();
    let is_align = |x: char| matches!(x, '<' | '>' | '^' | '=');
    if c.len() >= 2 && is_align(c[1]) {
        sp.fill = Some(c[0]);
        sp.align = Some(c[1]);
        i = 2;
    } else if !c.is_empty() && is_align(c[0]) {
        sp.align = Some(c[0]);
        i = 1;
    }
    if i < c.len() && matches!(c[i], '+' | '-' | ' ') {
        sp.sign = Some(c[i]);
        i += 1;
    }
    if i < c.len() && c[i] == 'z' {
        sp.no_neg_zero = true;
        i += 1;
    }
    if i < c.len() && c[i] == '#' {
        sp.alt = true;
        i += 1;
    }
    if i < c.len() && c[i] == '0' {
        sp.zero = true;
        i += 1;
    }
    sp.width = number(&c, &mut i)?.unwrap_or(0);
    if i < c.len() && matches!(c[i], ',' | '_') {
        sp.group = Some(c[i]);
        i += 1;
        if i < c.len() && matches!(c[i], ',' | '_') {
            return Err(PyErr::value_error("Cannot specify both ',' and '_'."));
        }
    }
    if i < c.len() && c[i] == '.' {
        i += 1;
        match number(&c, &mut i)? {
            Some(p) => sp.prec = Some(p),
            None => return Err(PyErr::value_error("Format specifier missing precision")),
        }
    }
    if i + 1 == c.len() {
        sp.ty = Some(c[i]);
    } else if i < c.len() {
        return Err(PyErr::value_error("Invalid format specifier"));
    }
    Ok(sp)
}

fn unknown_code(t: char, of: &str) -> PyErr {
    PyErr::value_error(format!(
        "Unknown format code '{t}' for object of type '{of}'"
    ))
}

/// `digits` with a separator every `every` digits from the right.
fn group_digits(digits: &str, sep: char, every: usize) -> PyResult<String> {
    let n = digits.chars().count();
    let mut out = memory::string_with_capacity(digits.len() + n / every.max(1))?;
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (n - i).is_multiple_of(every) {
            out.push(sep);
        }
        out.push(ch);
    }
    Ok(out)
}

/// Lays out `sign` and `body` in the spec's width. Numbers align right by default and pad
/// after the sign for `=` (or the `0` flag); strings align left.
fn pad(body: &str, sign: &str, sp: &Spec, number: bool) -> PyResult<String> {
    let len = body.chars().count() + sign.chars().count();
    if len >= sp.width {
        return memory::concat(&[sign, body]);
    }
    let n = sp.width - len;
    let (fill, align) = match (sp.zero, sp.fill, sp.align) {
        (true, None, None) if number => ('0', '='),
        (true, None, align) => ('0', align.unwrap_or(if number { '>' } else { '<' })),
        (_, fill, align) => (
            fill.unwrap_or(' '),
            align.unwrap_or(if number { '>' } else { '<' }),
        ),
    };
    match align {
        '<' => memory::pad(&memory::concat(&[sign, body])?, fill, 0, n),
        '^' => memory::pad(&memory::concat(&[sign, body])?, fill, n / 2, n - n / 2),
        '=' => {
            let mut out = memory::pad(sign, fill, 0, n)?;
            memory::reserve_str(&mut out, body.len())?;
            out.push_str(body);
            Ok(out)
        }
        _ => memory::pad(&memory::concat(&[sign, body])?, fill, n, 0),
    }
}

/// The sign a number prints with.
fn sign_of(negative: bool, sp: &Spec) -> &'static str {
    if negative {
        "-"
    } else {
        match sp.sign {
            Some('+') => "+",
            Some(' ') => " ",
            _ => "",
        }
    }
}

/// `a` (not negative) with `prec` digits after the point, exactly.
fn fixed(a: f64, prec: usize) -> PyResult<String> {
    if prec <= FIXED_DIGITS {
        return Ok(format!("{a:.prec$}"));
    }
    let mut s = format!("{a:.FIXED_DIGITS$}");
    memory::push_fill(&mut s, '0', prec - FIXED_DIGITS)?;
    Ok(s)
}

/// `a` (not negative) in exponent form with `prec` digits after the point, as CPython
/// writes it (`1.5e+00`: a sign and at least two exponent digits).
fn sci(a: f64, prec: usize, upper: bool) -> PyResult<String> {
    let digits = prec.min(SCI_DIGITS);
    let s = format!("{a:.digits$e}");
    let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
    let e: i32 = e.parse().unwrap_or(0);
    let exp = format!(
        "{}{}{:02}",
        if upper { 'E' } else { 'e' },
        if e < 0 { '-' } else { '+' },
        e.abs()
    );
    let mut out = memory::string_with_capacity(m.len() + (prec - digits) + exp.len())?;
    out.push_str(m);
    out.extend(std::iter::repeat_n('0', prec - digits));
    out.push_str(&exp);
    Ok(out)
}

/// The `g` presentation: `prec` significant digits, exponent form outside 1e-4..10**prec,
/// trailing zeros dropped unless `alt`.
fn general(a: f64, prec: usize, alt: bool, upper: bool) -> PyResult<String> {
    let prec = prec.max(1);
    if a == 0.0 {
        return Ok(if alt {
            fixed(0.0, prec - 1)?
        } else {
            "0".into()
        });
    }
    // The exponent after rounding to `prec` significant digits.
    let probe = format!("{:.*e}", (prec - 1).min(SCI_DIGITS), a);
    let e: i64 = probe
        .split_once('e')
        .map(|(_, e)| e.parse().unwrap_or(0))
        .unwrap_or(0);
    let trim = |s: String| -> String {
        if alt || !s.contains('.') {
            s
        } else {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        }
    };
    if e < -4 || e >= prec as i64 {
        let s = sci(a, prec - 1, upper)?;
        let cut = s.rfind(['e', 'E']).unwrap_or(s.len());
        let (m, x) = s.split_at(cut);
        let m = trim(m.to_string());
        let m = if alt && !m.contains('.') { m + "." } else { m };
        return Ok(m + x);
    }
    let s = trim(fixed(a, (prec as i64 - 1 - e).max(0) as usize)?);
    Ok(if alt && !s.contains('.') { s + "." } else { s })
}

/// A float (or an int given a float presentation) under `sp`.
fn format_float(x: f64, sp: &Spec) -> PyResult<String> {
    let ty = sp.ty;
    if let Some(t) = ty {
        if !matches!(t, 'e' | 'E' | 'f' | 'F' | 'g' | 'G' | 'n' | '%') {
            return Err(unknown_code(t, "float"));
        }
    }
    if sp.prec.is_some_and(|p| p > MAX_PRECISION) {
        return Err(PyErr::value_error("precision too big"));
    }
    let negative = x.is_sign_negative() && !x.is_nan() && !(sp.no_neg_zero && x == 0.0);
    let a = x.abs();
    let upper = matches!(ty, Some('E' | 'F' | 'G'));
    let mut body = if a.is_nan() {
        "nan".to_string()
    } else if a.is_infinite() {
        "inf".to_string()
    } else {
        match ty {
            Some('f' | 'F') => fixed(a, sp.prec.unwrap_or(6))?,
            Some('e' | 'E') => sci(a, sp.prec.unwrap_or(6), upper)?,
            Some('%') => {
                let mut s = fixed(a * 100.0, sp.prec.unwrap_or(6))?;
                if sp.alt && !s.contains('.') {
                    s.push('.');
                }
                s + "%"
            }
            Some('g' | 'G' | 'n') => general(a, sp.prec.unwrap_or(6), sp.alt, upper)?,
            _ => match sp.prec {
                // No type: repr, or `g` with at least one digit after the point.
                None => float_repr(a),
                Some(p) => {
                    let s = general(a, p, sp.alt, false)?;
                    if s.contains(['.', 'e', 'n']) {
                        s
                    } else {
                        s + ".0"
                    }
                }
            },
        }
    };
    if sp.alt && matches!(ty, Some('f' | 'F' | 'e' | 'E')) && !body.contains('.') {
        body = match body.find(['e', 'E']) {
            Some(at) => format!("{}.{}", &body[..at], &body[at..]),
            None => body + ".",
        };
    }
    if upper {
        body = body.to_uppercase();
    }
    if let Some(g) = sp.group {
        let (int, rest) = match body.find(|c: char| !c.is_ascii_digit()) {
            Some(p) => body.split_at(p),
            None => (body.as_str(), ""),
        };
        body = group_digits(int, g, 3)? + rest;
    }
    pad(&body, sign_of(negative, sp), sp, true)
}

/// An int under `sp` (float presentations go through [`format_float`]).
fn format_int(i: i64, sp: &Spec) -> PyResult<String> {
    if matches!(sp.ty, Some('e' | 'E' | 'f' | 'F' | 'g' | 'G' | '%')) {
        return format_float(i as f64, sp);
    }
    if sp.prec.is_some() {
        return Err(PyErr::value_error(
            "Precision not allowed in integer format specifier",
        ));
    }
    let t = sp.ty.unwrap_or('d');
    if let (Some(g), 'x' | 'X' | 'o' | 'b' | 'c' | 'n') = (sp.group, t) {
        if g == ',' || matches!(t, 'c' | 'n') {
            return Err(PyErr::value_error(format!(
                "Cannot specify '{g}' with '{t}'."
            )));
        }
    }
    if t == 'c' {
        if sp.sign.is_some() {
            return Err(PyErr::value_error(
                "Sign not allowed with integer format specifier 'c'",
            ));
        }
        if sp.alt {
            return Err(PyErr::value_error(
                "Alternate form (#) not allowed with integer format specifier 'c'",
            ));
        }
        let c = u32::try_from(i)
            .ok()
            .and_then(char::from_u32)
            .ok_or_else(|| PyErr::new("OverflowError", "%c arg not in range(0x110000)"))?;
        return pad(c.encode_utf8(&mut [0; 4]), "", sp, true);
    }
    let a = i.unsigned_abs();
    let (digits, prefix) = match t {
        'x' => (format!("{a:x}"), "0x"),
        'X' => (format!("{a:X}"), "0X"),
        'o' => (format!("{a:o}"), "0o"),
        'b' => (format!("{a:b}"), "0b"),
        'd' | 'n' => (a.to_string(), ""),
        other => return Err(unknown_code(other, "int")),
    };
    let digits = match sp.group {
        Some(g) => group_digits(&digits, g, if prefix.is_empty() { 3 } else { 4 })?,
        None => digits,
    };
    let body = if sp.alt {
        format!("{prefix}{digits}")
    } else {
        digits
    };
    if sp.zero && sp.fill.is_none() && sp.align.is_none() && sp.alt && !prefix.is_empty() {
        // `#0` pads between the prefix and the digits, as CPython does.
        let sign = format!("{}{prefix}", sign_of(i < 0, sp));
        return pad(&body[prefix.len()..], &sign, sp, true);
    }
    pad(&body, sign_of(i < 0, sp), sp, true)
}

/// A string under `sp`.
fn format_str(s: &str, sp: &Spec) -> PyResult<String> {
    if let Some(t) = sp.ty {
        if t != 's' {
            return Err(unknown_code(t, "str"));
        }
    }
    if sp.sign.is_some() {
        return Err(PyErr::value_error(
            "Sign not allowed in string format specifier",
        ));
    }
    if sp.alt {
        return Err(PyErr::value_error(
            "Alternate form (#) not allowed in string format specifier",
        ));
    }
    if sp.align == Some('=') {
        return Err(PyErr::value_error(
            "'=' alignment not allowed in string format specifier",
        ));
    }
    if let Some(g) = sp.group {
        return Err(PyErr::value_error(format!(
            "Cannot specify '{g}' with 's'."
        )));
    }
    match sp.prec {
        Some(p) => {
            let end = s.char_indices().nth(p).map_or(s.len(), |(at, _)| at);
            pad(&s[..end], "", sp, false)
        }
        None => pad(s, "", sp, false),
    }
}

impl Vm<'_> {
    pub fn format_value(&mut self, v: &Value, spec: &str) -> PyResult<String> {
        if let Value::Native(o) = v {
            // numpy's scalar types all derive from `numpy.generic`.
            let numpy_scalar = o.class_chain().iter().any(|c| c == "generic");
            if let Some(s) = self.format_array_like(v, &o.type_name(), numpy_scalar, spec)? {
                return Ok(s);
            }
        }
        if spec.is_empty() {
            return self.str_of(v);
        }
        if let Value::Obj(_) = v {
            if let Some(m) = self.try_attr(v, "__format__")? {
                let r = self.call_value(&m, Args::new(vec![Value::str(spec)]))?;
                return self.str_of(&r);
            }
        }
        let sp = parse_spec(spec)?;
        match v {
            Value::Int(_) | Value::Bool(_) => format_int(v.as_int()?, &sp),
            Value::Float(x) => format_float(*x, &sp),
            Value::Str(s) => format_str(s, &sp),
            Value::Native(_) => {
                let s = self.str_of(v)?;
                format_str(&s, &sp)
            }
            _ => Err(PyErr::type_error(format!(
                "unsupported format string passed to {}.__format__",
                v.type_name()
            ))),
        }
    }

    /// `format()` of the array-likes whose `__format__` is not `str`: a tensor formats its
    /// numpy value (`EagerTensor.__format__`); a numpy scalar or 0-d array formats its
    /// Python value (so `f"{np.float32(x)}"` shows the double, as numpy does); an array of
    /// more dimensions is its `str` under an empty spec and numpy's `TypeError` under any
    /// other. `None` for every other native.
    fn format_array_like(
        &mut self,
        v: &Value,
        ty: &str,
        numpy_scalar: bool,
        spec: &str,
    ) -> PyResult<Option<String>> {
        if ty == "EagerTensor" {
            let n = self.call_method(v, "numpy", Args::default())?;
            return self.format_value(&n, spec).map(Some);
        }
        let is_array = ty == "ndarray";
        if is_array {
            let ndim = self.get_attr(v, "ndim")?;
            if ndim.as_int()? != 0 {
                if spec.is_empty() {
                    return self.str_of(v).map(Some);
                }
                return Err(PyErr::type_error(
                    "unsupported format string passed to numpy.ndarray.__format__",
                ));
            }
        }
        if !(is_array || numpy_scalar) {
            return Ok(None);
        }
        let item = self.call_method(v, "item", Args::default())?;
        if matches!(item, Value::Native(_)) {
            return Ok(None);
        }
        self.format_value(&item, spec).map(Some)
    }

    /// `"..." % args`.
    pub fn percent_format(&mut self, fmt: &str, args: &Value) -> PyResult<String> {
        let items: Vec<Value> = match args {
            Value::Tuple(t) => t.to_vec(),
            other => vec![other.clone()],
        };
        let mapping = matches!(args, Value::Dict(_) | Value::Native(_) | Value::Obj(_));
        let mut it = items.into_iter();
        let mut used_key = false;
        let mut out = String::new();
        let chars: Vec<char> = fmt.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if c != '%' {
                memory::reserve_str(&mut out, c.len_utf8())?;
                out.push(c);
                i += 1;
                continue;
            }
            i += 1;
            let mut key: Option<String> = None;
            if i < chars.len() && chars[i] == '(' {
                let end = chars[i..]
                    .iter()
                    .position(|&c| c == ')')
                    .map(|p| p + i)
                    .ok_or_else(|| PyErr::value_error("incomplete format key"))?;
                key = Some(chars[i + 1..end].iter().collect());
                i = end + 1;
            }
            let mut sp = Spec::default();
            while i < chars.len() && matches!(chars[i], '-' | '+' | ' ' | '#' | '0') {
                match chars[i] {
                    '-' => sp.align = Some('<'),
                    '+' => sp.sign = Some('+'),
                    ' ' if sp.sign.is_none() => sp.sign = Some(' '),
                    '#' => sp.alt = true,
                    '0' => sp.zero = true,
                    _ => {}
                }
                i += 1;
            }
            let next_arg = |it: &mut std::vec::IntoIter<Value>| {
                it.next()
                    .ok_or_else(|| PyErr::type_error("not enough arguments for format string"))
            };
            if chars.get(i) == Some(&'*') {
                i += 1;
                let w = next_arg(&mut it)?.as_int()?;
                if w < 0 {
                    sp.align = Some('<');
                }
                sp.width = usize::try_from(w.unsigned_abs()).unwrap_or(usize::MAX);
            } else {
                sp.width = number(&chars, &mut i)
                    .map_err(|_| PyErr::value_error("width too big"))?
                    .unwrap_or(0);
            }
            if chars.get(i) == Some(&'.') {
                i += 1;
                if chars.get(i) == Some(&'*') {
                    i += 1;
                    sp.prec = Some(next_arg(&mut it)?.as_int()?.max(0) as usize);
                } else {
                    let p = number(&chars, &mut i)
                        .map_err(|_| PyErr::value_error("precision too big"))?
                        .unwrap_or(0);
                    sp.prec = Some(p);
                }
                if sp.prec.is_some_and(|p| p > MAX_PRECISION) {
                    return Err(PyErr::value_error("precision too big"));
                }
            }
            // Length modifiers are accepted and ignored, as in CPython.
            while i < chars.len() && matches!(chars[i], 'h' | 'l' | 'L') {
                i += 1;
            }
            let Some(&ty) = chars.get(i) else {
                return Err(PyErr::value_error("incomplete format"));
            };
            i += 1;
            if ty == '%' {
                out.push('%');
                continue;
            }
            let v = match &key {
                Some(k) => {
                    if !mapping {
                        return Err(PyErr::type_error("format requires a mapping"));
                    }
                    used_key = true;
                    self.get_item(args, &Value::str(k))?
                }
                None => next_arg(&mut it)?,
            };
            let s = match ty {
                's' | 'r' | 'a' => {
                    let s = if ty == 's' {
                        self.str_of(&v)?
                    } else {
                        self.repr_of(&v)?
                    };
                    let s = if ty == 'a' { ascii_escape(&s) } else { s };
                    let sp = Spec {
                        sign: None,
                        alt: false,
                        zero: false,
                        align: sp.align.or(Some('>')),
                        ..sp
                    };
                    format_str(&s, &sp)?
                }
                'd' | 'i' | 'u' => {
                    let n = match &v {
                        Value::Int(_) | Value::Bool(_) => v.as_int()?,
                        Value::Float(x) if x.is_finite() => x.trunc() as i64,
                        Value::Float(x) => return Err(PyErr::float_to_int(*x)),
                        other => {
                            return Err(PyErr::type_error(format!(
                                "%{ty} format: a real number is required, not {}",
                                other.type_name()
                            )))
                        }
                    };
                    let prec = sp.prec.take();
                    let mut s = format_int(
                        n,
                        &Spec {
                            ty: Some('d'),
                            ..sp.clone()
                        },
                    )?;
                    if let Some(p) = prec {
                        s = zero_extend(&s, p)?;
                    }
                    s
                }
                'x' | 'X' | 'o' => {
                    let n = match &v {
                        Value::Int(_) | Value::Bool(_) => v.as_int()?,
                        other => {
                            return Err(PyErr::type_error(format!(
                                "%{ty} format: an integer is required, not {}",
                                other.type_name()
                            )))
                        }
                    };
                    sp.prec = None;
                    format_int(n, &Spec { ty: Some(ty), ..sp })?
                }
                'e' | 'E' | 'f' | 'F' | 'g' | 'G' => {
                    let x = match &v {
                        Value::Int(_) | Value::Bool(_) | Value::Float(_) => v.as_float()?,
                        Value::Native(_) => {
                            let s =
                                self.format_value(&v, &format!(".{}{ty}", sp.prec.unwrap_or(6)))?;
                            out.push_str(&s);
                            continue;
                        }
                        other => {
                            return Err(PyErr::type_error(format!(
                                "must be real number, not {}",
                                other.type_name()
                            )))
                        }
                    };
                    let sp = Spec {
                        prec: Some(sp.prec.unwrap_or(6)),
                        ty: Some(ty),
                        ..sp
                    };
                    format_float(x, &sp)?
                }
                'c' => {
                    let c = match &v {
                        Value::Int(_) | Value::Bool(_) => {
                            let n = v.as_int()?;
                            u32::try_from(n)
                                .ok()
                                .and_then(char::from_u32)
                                .ok_or_else(|| {
                                    PyErr::new("OverflowError", "%c arg not in range(0x110000)")
                                })?
                        }
                        Value::Str(s) if s.chars().count() == 1 => s.chars().next().unwrap_or(' '),
                        _ => return Err(PyErr::type_error("%c requires int or char")),
                    };
                    let sp = Spec {
                        align: sp.align.or(Some('>')),
                        prec: None,
                        sign: None,
                        alt: false,
                        zero: false,
                        ..sp
                    };
                    format_str(c.encode_utf8(&mut [0; 4]), &sp)?
                }
                other => {
                    return Err(PyErr::value_error(format!(
                        "unsupported format character '{other}' (0x{:x}) at index {}",
                        other as u32,
                        i - 1
                    )));
                }
            };
            memory::reserve_str(&mut out, s.len())?;
            out.push_str(&s);
        }
        // A dict may hold more than the format names, as in CPython.
        if !used_key && !matches!(args, Value::Dict(_)) && it.next().is_some() {
            return Err(PyErr::type_error(
                "not all arguments converted during string formatting",
            ));
        }
        Ok(out)
    }
}

/// `%.5d`: the digits of a formatted int zero-extended to `p`, keeping sign and padding.
fn zero_extend(s: &str, p: usize) -> PyResult<String> {
    let start = s.find(|c: char| c.is_ascii_digit()).unwrap_or(s.len());
    let end = s[start..]
        .find(|c: char| !c.is_ascii_digit())
        .map_or(s.len(), |e| start + e);
    let digits = end - start;
    if digits >= p {
        return Ok(s.to_string());
    }
    let mut out = memory::string_with_capacity(s.len() + p - digits)?;
    out.push_str(&s[..start]);
    out.extend(std::iter::repeat_n('0', p - digits));
    out.push_str(&s[start..]);
    Ok(out)
}

/// `ascii(x)`: the repr with every non-ASCII character escaped.
pub fn ascii_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c as u32 {
            0..=0x7f => out.push(c),
            n @ 0x80..=0xff => out.push_str(&format!("\\x{n:02x}")),
            n @ 0x100..=0xffff => out.push_str(&format!("\\u{n:04x}")),
            n => out.push_str(&format!("\\U{n:08x}")),
        }
    }
    out
}

impl Vm<'_> {
    /// `str.format(*args, **kwargs)`.
    pub fn str_format(&mut self, fmt: &str, args: &Args) -> PyResult<String> {
        self.str_format_nested(fmt, args, 2)
    }

    /// A format string whose fields may nest `levels` more levels (`{:{width}}` nests
    /// one), as CPython allows two.
    fn str_format_nested(&mut self, fmt: &str, args: &Args, levels: u32) -> PyResult<String> {
        if levels == 0 {
            return Err(PyErr::value_error("Max string recursion exceeded"));
        }
        let chars: Vec<char> = fmt.chars().collect();
        let mut out = String::new();
        let mut auto = 0usize;
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if c == '{' && chars.get(i + 1) == Some(&'{') {
                out.push('{');
                i += 2;
                continue;
            }
            if c == '}' && chars.get(i + 1) == Some(&'}') {
                out.push('}');
                i += 2;
                continue;
            }
            if c != '{' {
                out.push(c);
                i += 1;
                continue;
            }
            let mut depth = 1;
            let mut j = i + 1;
            while j < chars.len() && depth > 0 {
                match chars[j] {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    _ => {}
                }
                j += 1;
            }
            if depth != 0 {
                return Err(PyErr::value_error(
                    "Single '{' encountered in format string",
                ));
            }
            let field: String = chars[i + 1..j - 1].iter().collect();
            i = j;
            let (head, spec) = match field.find(':') {
                Some(p) => (&field[..p], &field[p + 1..]),
                None => (field.as_str(), ""),
            };
            let (head, conv) = match head.find('!') {
                Some(p) => (&head[..p], head[p + 1..].chars().next()),
                None => (head, None),
            };
            let split = head.find(['.', '[']).unwrap_or(head.len());
            let (name, rest) = head.split_at(split);
            let mut v = if name.is_empty() {
                let v = args.pos.get(auto).cloned().ok_or_else(|| {
                    PyErr::index_error(format!(
                        "Replacement index {auto} out of range for positional args tuple"
                    ))
                })?;
                auto += 1;
                v
            } else if let Ok(n) = name.parse::<usize>() {
                args.pos.get(n).cloned().ok_or_else(|| {
                    PyErr::index_error(format!(
                        "Replacement index {n} out of range for positional args tuple"
                    ))
                })?
            } else {
                args.kw
                    .iter()
                    .find(|(k, _)| k == name)
                    .map(|(_, v)| v.clone())
                    .ok_or_else(|| PyErr::key_error(format!("'{name}'")))?
            };
            let mut r = rest;
            while !r.is_empty() {
                if let Some(x) = r.strip_prefix('.') {
                    let e = x.find(['.', '[']).unwrap_or(x.len());
                    v = self.get_attr(&v, &x[..e])?;
                    r = &x[e..];
                } else if let Some(x) = r.strip_prefix('[') {
                    let e = x.find(']').unwrap_or(x.len());
                    let k = &x[..e];
                    let key = k
                        .parse::<i64>()
                        .map(Value::Int)
                        .unwrap_or_else(|_| Value::str(k));
                    v = self.get_item(&v, &key)?;
                    r = x.get(e + 1..).unwrap_or("");
                } else {
                    break;
                }
            }
            let v = match conv {
                Some('r') => Value::from(self.repr_of(&v)?),
                Some('s') => Value::from(self.str_of(&v)?),
                Some('a') => Value::from(crate::lang::builtins::format::ascii_escape(
                    &self.repr_of(&v)?,
                )),
                Some(c) => {
                    return Err(PyErr::value_error(format!(
                        "Unknown conversion specifier {c}"
                    )))
                }
                None => v,
            };
            let spec = if spec.contains('{') {
                self.str_format_nested(spec, args, levels - 1)?
            } else {
                spec.to_string()
            };
            let piece = self.format_value(&v, &spec)?;
            memory::reserve_str(&mut out, piece.len())?;
            out.push_str(&piece);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(x: f64, spec: &str) -> String {
        format_float(x, &parse_spec(spec).unwrap()).unwrap()
    }

    #[test]
    fn precisions_beyond_rusts_formatter_are_exact() {
        let s = f(1.5, ".65536f");
        assert_eq!(s.len(), 65538);
        assert!(s.starts_with("1.5000") && s.ends_with("000"));
        let s = f(0.1, ".100000f");
        assert_eq!(s.len(), 100_002);
        assert!(s.starts_with("0.1000000000000000055511151231257827"));
        let s = f(1.5, ".100000e");
        assert!(s.starts_with("1.5000") && s.ends_with("0e+00"));
        assert_eq!(s.len(), 100_006);
        assert_eq!(f(1.5, ".100000g"), "1.5");
        assert_eq!(f(2.675, ".2f"), "2.67");
    }

    #[test]
    fn cpython_refuses_what_it_refuses() {
        let err = |x: f64, spec: &str| {
            let e = parse_spec(spec)
                .and_then(|sp| format_float(x, &sp))
                .unwrap_err();
            format!("{}: {}", e.type_name(), e.message())
        };
        assert_eq!(err(1.5, ".2147483648f"), "ValueError: precision too big");
        assert_eq!(
            err(1.5, ".99999999999999999999f"),
            "ValueError: Too many decimal digits in format string"
        );
        assert_eq!(
            err(1.5, "9223372036854775808"),
            "ValueError: Too many decimal digits in format string"
        );
        assert_eq!(
            err(1.5, ".f"),
            "ValueError: Format specifier missing precision"
        );
        assert_eq!(
            err(1.5, "c"),
            "ValueError: Unknown format code 'c' for object of type 'float'"
        );
        assert_eq!(
            err(1.5, ",_f"),
            "ValueError: Cannot specify both ',' and '_'."
        );
        let e = format_float(1.5, &parse_spec("9223372036854775807").unwrap()).unwrap_err();
        assert_eq!(e.type_name(), "MemoryError");
    }
}
