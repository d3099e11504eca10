//! Text formatting: format specs (`f"{x:>8.3f}"`, `format(x, ",")`), `%` formatting,
//! `str.format`, and IPython's pretty printer for execute results (containers that do not
//! fit in 79 columns break one item per line).

use super::exc::{PyErr, PyResult};
use super::object::Args;
use super::repr::float_repr;
use super::value::Value;
use super::vm::Vm;

#[derive(Default)]
struct Spec {
    fill: char,
    align: Option<char>,
    sign: Option<char>,
    alt: bool,
    zero: bool,
    width: usize,
    group: Option<char>,
    prec: Option<usize>,
    ty: Option<char>,
}

fn parse_spec(s: &str) -> PyResult<Spec> {
    let c: Vec<char> = s.chars().collect();
    let mut i = 0;
    let mut sp = Spec {
        fill: ' ',
        ..Default::default()
    };
    let is_align = |x: char| matches!(x, '<' | '>' | '^' | '=');
    if c.len() >= 2 && is_align(c[1]) {
        sp.fill = c[0];
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
    if i < c.len() && c[i] == '#' {
        sp.alt = true;
        i += 1;
    }
    if i < c.len() && c[i] == '0' {
        sp.zero = true;
        i += 1;
    }
    let st = i;
    while i < c.len() && c[i].is_ascii_digit() {
        i += 1;
    }
    sp.width = c[st..i].iter().collect::<String>().parse().unwrap_or(0);
    if i < c.len() && matches!(c[i], ',' | '_') {
        sp.group = Some(c[i]);
        i += 1;
    }
    if i < c.len() && c[i] == '.' {
        i += 1;
        let st = i;
        while i < c.len() && c[i].is_ascii_digit() {
            i += 1;
        }
        sp.prec = Some(c[st..i].iter().collect::<String>().parse().unwrap_or(0));
    }
    if i < c.len() {
        sp.ty = Some(c[i]);
        i += 1;
    }
    if i < c.len() {
        return Err(PyErr::value_error("Invalid format specifier"));
    }
    Ok(sp)
}

fn group_digits(int_part: &str, sep: char) -> String {
    let bytes: Vec<char> = int_part.chars().collect();
    let mut out = String::new();
    for (i, ch) in bytes.iter().enumerate() {
        if i > 0 && (bytes.len() - i) % 3 == 0 {
            out.push(sep);
        }
        out.push(*ch);
    }
    out
}

fn pad(body: String, sign: &str, sp: &Spec, default_right: bool) -> String {
    let len = body.chars().count() + sign.chars().count();
    if len >= sp.width {
        return format!("{sign}{body}");
    }
    let n = sp.width - len;
    let (fill, align) = if sp.zero && sp.align.is_none() {
        ('0', '=')
    } else {
        (
            sp.fill,
            sp.align.unwrap_or(if default_right { '>' } else { '<' }),
        )
    };
    let f = |k: usize| fill.to_string().repeat(k);
    match align {
        '<' => format!("{sign}{body}{}", f(n)),
        '^' => format!("{}{sign}{body}{}", f(n / 2), f(n - n / 2)),
        '=' => format!("{sign}{}{body}", f(n)),
        _ => format!("{}{sign}{body}", f(n)),
    }
}

fn fmt_float(x: f64, sp: &Spec) -> String {
    let ty = sp.ty.unwrap_or('g');
    let neg = x.is_sign_negative() && !(x == 0.0 && sp.ty.is_none());
    let a = x.abs();
    let body = if a.is_nan() {
        "nan".to_string()
    } else if a.is_infinite() {
        "inf".to_string()
    } else {
        match ty {
            'f' | 'F' => format!("{:.*}", sp.prec.unwrap_or(6), a),
            'e' | 'E' => exp_form(a, sp.prec.unwrap_or(6), ty == 'E'),
            '%' => format!("{:.*}%", sp.prec.unwrap_or(6), a * 100.0),
            _ => {
                if sp.ty.is_none() && sp.prec.is_none() {
                    float_repr(a)
                } else {
                    general(a, sp.prec.unwrap_or(6).max(1), sp.ty.is_none(), sp.alt)
                }
            }
        }
    };
    let body = match sp.group {
        Some(g) => {
            let (i, rest) = match body.find('.') {
                Some(p) => body.split_at(p),
                None => (body.as_str(), ""),
            };
            format!("{}{}", group_digits(i, g), rest)
        }
        None => body,
    };
    let sign = if neg {
        "-"
    } else {
        match sp.sign {
            Some('+') => "+",
            Some(' ') => " ",
            _ => "",
        }
    };
    pad(body, sign, sp, true)
}

fn exp_form(a: f64, prec: usize, upper: bool) -> String {
    let s = format!("{:.*e}", prec, a);
    let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
    let e: i32 = e.parse().unwrap_or(0);
    let r = format!("{m}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs());
    if upper {
        r.to_uppercase()
    } else {
        r
    }
}

/// The `g` presentation: precision significant digits, trailing zeros dropped.
fn general(a: f64, prec: usize, repr_like: bool, alt: bool) -> String {
    if a == 0.0 {
        return if repr_like { "0.0".into() } else { "0".into() };
    }
    let exp = format!("{:.*e}", prec - 1, a);
    let e: i32 = exp
        .split_once('e')
        .map(|(_, e)| e.parse().unwrap_or(0))
        .unwrap_or(0);
    let mut s = if e < -4 || e >= prec as i32 {
        let s = exp_form(a, prec - 1, false);
        let (m, x) = s.split_once('e').unwrap_or((&s, ""));
        let m = if alt || !m.contains('.') {
            m.to_string()
        } else {
            m.trim_end_matches('0').trim_end_matches('.').to_string()
        };
        format!("{m}e{x}")
    } else {
        let s = format!("{:.*}", (prec as i32 - 1 - e).max(0) as usize, a);
        if alt || !s.contains('.') {
            s
        } else {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        }
    };
    if repr_like && !s.contains('.') && !s.contains('e') && !s.contains("inf") {
        s.push_str(".0");
    }
    s
}

impl Vm<'_> {
    pub fn format_value(&mut self, v: &Value, spec: &str) -> PyResult<String> {
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
            Value::Int(_) | Value::Bool(_)
                if !matches!(sp.ty, Some('f' | 'F' | 'e' | 'E' | 'g' | 'G' | '%')) =>
            {
                let i = v.as_int()?;
                if sp.ty.is_none() && matches!(v, Value::Bool(_)) {
                    let s = self.str_of(v)?;
                    return Ok(pad(s, "", &sp, false));
                }
                let a = i.unsigned_abs();
                let mut body = match sp.ty {
                    Some('x') => format!("{a:x}"),
                    Some('X') => format!("{a:X}"),
                    Some('o') => format!("{a:o}"),
                    Some('b') => format!("{a:b}"),
                    Some('c') => char::from_u32(a as u32)
                        .map(String::from)
                        .unwrap_or_default(),
                    Some('d') | Some('n') | None => a.to_string(),
                    Some(t) => {
                        return Err(PyErr::value_error(format!(
                            "Unknown format code '{t}' for object of type 'int'"
                        )))
                    }
                };
                if let Some(g) = sp.group {
                    body = group_digits(&body, g);
                }
                if sp.alt {
                    body = match sp.ty {
                        Some('x') => format!("0x{body}"),
                        Some('X') => format!("0X{body}"),
                        Some('o') => format!("0o{body}"),
                        Some('b') => format!("0b{body}"),
                        _ => body,
                    };
                }
                let sign = if i < 0 {
                    "-"
                } else {
                    match sp.sign {
                        Some('+') => "+",
                        Some(' ') => " ",
                        _ => "",
                    }
                };
                Ok(pad(body, sign, &sp, true))
            }
            Value::Int(_) | Value::Bool(_) | Value::Float(_) => Ok(fmt_float(v.as_float()?, &sp)),
            Value::Str(s) => {
                if let Some(t) = sp.ty {
                    if t != 's' {
                        return Err(PyErr::value_error(format!(
                            "Unknown format code '{t}' for object of type 'str'"
                        )));
                    }
                }
                let s: String = match sp.prec {
                    Some(p) => s.chars().take(p).collect(),
                    None => s.to_string(),
                };
                Ok(pad(s, "", &sp, false))
            }
            _ => {
                if let Value::Native(_) = v {
                    if sp.ty.is_some() {
                        if let Ok(x) = self.call_method(v, "item", Args::default()) {
                            return self.format_value(&x, spec);
                        }
                    }
                }
                let s = self.str_of(v)?;
                Ok(pad(s, "", &sp, false))
            }
        }
    }

    /// `"..." % args`.
    pub fn percent_format(&mut self, fmt: &str, args: &Value) -> PyResult<String> {
        let items: Vec<Value> = match args {
            Value::Tuple(t) => t.to_vec(),
            other => vec![other.clone()],
        };
        let mut it = items.into_iter();
        let mut out = String::new();
        let chars: Vec<char> = fmt.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if c != '%' {
                out.push(c);
                i += 1;
                continue;
            }
            i += 1;
            if i < chars.len() && chars[i] == '%' {
                out.push('%');
                i += 1;
                continue;
            }
            let mut key: Option<String> = None;
            if i < chars.len() && chars[i] == '(' {
                let end = chars[i..]
                    .iter()
                    .position(|&c| c == ')')
                    .map(|p| p + i)
                    .unwrap_or(chars.len());
                key = Some(chars[i + 1..end].iter().collect());
                i = end + 1;
            }
            let st = i;
            while i < chars.len() && "-+ #0123456789.".contains(chars[i]) {
                i += 1;
            }
            let flags: String = chars[st..i].iter().collect();
            let Some(&ty) = chars.get(i) else {
                return Err(PyErr::value_error("incomplete format"));
            };
            i += 1;
            let v = match &key {
                Some(k) => self.get_item(args, &Value::str(k))?,
                None => it
                    .next()
                    .ok_or_else(|| PyErr::type_error("not enough arguments for format string"))?,
            };
            let spec = flags.replace('-', "<");
            let s = match ty {
                's' => {
                    let s = self.str_of(&v)?;
                    self.format_value(&Value::from(s), &spec)?
                }
                'r' => {
                    let s = self.repr_of(&v)?;
                    self.format_value(&Value::from(s), &spec)?
                }
                'd' | 'i' | 'u' => {
                    let n = match &v {
                        Value::Float(x) => Value::Int(x.trunc() as i64),
                        other => other.clone(),
                    };
                    self.format_value(&n, &format!("{spec}d"))?
                }
                'f' | 'F' | 'e' | 'E' | 'g' | 'G' | 'x' | 'X' | 'o' | 'c' => {
                    self.format_value(&v, &format!("{spec}{ty}"))?
                }
                other => {
                    return Err(PyErr::value_error(format!(
                        "unsupported format character '{other}'"
                    )))
                }
            };
            out.push_str(&s);
        }
        if key_free(fmt) && it.next().is_some() {
            return Err(PyErr::type_error(
                "not all arguments converted during string formatting",
            ));
        }
        Ok(out)
    }

    /// `str.format(*args, **kwargs)`.
    pub fn str_format(&mut self, fmt: &str, args: &Args) -> PyResult<String> {
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
                _ => v,
            };
            let spec = if spec.contains('{') {
                self.str_format(spec, args)?
            } else {
                spec.to_string()
            };
            out.push_str(&self.format_value(&v, &spec)?);
        }
        Ok(out)
    }

    /// IPython's pretty form of an execute result.
    pub fn pretty(&mut self, v: &Value) -> PyResult<String> {
        self.pretty_at(v, 0)
    }

    fn pretty_at(&mut self, v: &Value, indent: usize) -> PyResult<String> {
        let flat = self.repr_of(v)?;
        if flat.chars().count() + indent <= 79 {
            return Ok(flat);
        }
        let (open, close, items): (&str, &str, Vec<(Option<Value>, Value)>) = match v {
            Value::List(l) => (
                "[",
                "]",
                l.borrow().iter().map(|x| (None, x.clone())).collect(),
            ),
            Value::Tuple(t) if t.len() > 1 => {
                ("(", ")", t.iter().map(|x| (None, x.clone())).collect())
            }
            Value::Dict(d) => (
                "{",
                "}",
                d.borrow()
                    .items()
                    .map(|(k, x)| (Some(k.clone()), x.clone()))
                    .collect(),
            ),
            _ => return Ok(flat),
        };
        let pad = " ".repeat(indent + 1);
        let mut lines = vec![];
        for (k, x) in items {
            let s = match k {
                Some(k) => {
                    let ks = self.repr_of(&k)?;
                    let w = indent + 1 + ks.chars().count() + 2;
                    format!("{ks}: {}", self.pretty_at(&x, w)?)
                }
                None => self.pretty_at(&x, indent + 1)?,
            };
            lines.push(s);
        }
        Ok(format!("{open}{}{close}", lines.join(&format!(",\n{pad}"))))
    }
}

fn key_free(fmt: &str) -> bool {
    !fmt.contains("%(")
}
