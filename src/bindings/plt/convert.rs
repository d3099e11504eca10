//! Reading plot arguments: numbers and nested sequences (lists, tuples, ranges, numpy
//! arrays through their `tolist()`), matplotlib format strings such as `'r--'` or `'g^'`,
//! colours, and keyword arguments matplotlib accepts but this module ignores.

use crate::display::plot::{color, LineStyle, Marker, PlotError, Rgb};
use crate::lang::{Args, Ctx, PyErr, PyResult, Value};

/// A plotting error as Python sees it: matplotlib raises `ValueError` for bad values.
pub fn py_err(e: PlotError) -> PyErr {
    PyErr::value_error(e.to_string())
}

/// Keyword lookup that, like matplotlib's `**kwargs`, tolerates properties it does not
/// use (`alpha`, `zorder`, ...).
pub fn kw<'a>(args: &'a Args, names: &[&str]) -> Option<&'a Value> {
    args.kw
        .iter()
        .find(|(k, _)| names.contains(&k.as_str()))
        .map(|(_, v)| v)
        .filter(|v| !v.is_none())
}

/// A positional argument or a keyword of the same meaning.
pub fn arg<'a>(args: &'a Args, pos: usize, names: &[&str]) -> Option<&'a Value> {
    args.pos
        .get(pos)
        .filter(|v| !v.is_none())
        .or_else(|| kw(args, names))
}

/// A float from a Python number or a numpy scalar (through its `item()`).
pub fn to_f64(v: &Value, ctx: &mut dyn Ctx) -> PyResult<f64> {
    match v {
        Value::Int(_) | Value::Float(_) | Value::Bool(_) => v.as_float(),
        Value::Native(_) | Value::Obj(_) => {
            let item = ctx.getattr(v, "item").map_err(|_| not_number(v))?;
            ctx.call(&item, Args::default())?.as_float()
        }
        other => Err(not_number(other)),
    }
}

fn not_number(v: &Value) -> PyErr {
    PyErr::type_error(format!(
        "must be real number, not {} (plot data should be numbers, lists or arrays)",
        v.type_name()
    ))
}

/// The items of any sequence: arrays answer `tolist()`, other iterables are iterated.
fn items(v: &Value, ctx: &mut dyn Ctx) -> PyResult<Option<Vec<Value>>> {
    match v {
        Value::List(_) | Value::Tuple(_) => Ok(v.as_seq()),
        Value::Native(_) | Value::Obj(_) => {
            if let Ok(tolist) = ctx.getattr(v, "tolist") {
                let listed = ctx.call(&tolist, Args::default())?;
                return Ok(match listed {
                    Value::List(_) | Value::Tuple(_) => listed.as_seq(),
                    // A 0-d array lists as a scalar.
                    other => Some(vec![other]),
                });
            }
            if ctx.getattr(v, "item").is_ok() {
                return Ok(None);
            }
            Ok(Some(ctx.iterate(v)?))
        }
        _ => Ok(None),
    }
}

/// A 1-D sequence of numbers (a scalar is a sequence of one).
pub fn vector(v: &Value, ctx: &mut dyn Ctx) -> PyResult<Vec<f64>> {
    match items(v, ctx)? {
        Some(list) => list.iter().map(|x| to_f64(x, ctx)).collect(),
        None => Ok(vec![to_f64(v, ctx)?]),
    }
}

/// A 2-D table of numbers: a list of equal-length rows. A 1-D input is one row.
pub fn matrix(v: &Value, ctx: &mut dyn Ctx) -> PyResult<(usize, usize, Vec<f64>)> {
    let rows = items(v, ctx)?.ok_or_else(|| {
        PyErr::type_error(format!(
            "Invalid shape () for image data: expected a 2-D array, got {}",
            v.type_name()
        ))
    })?;
    let mut data = vec![];
    let mut cols = None;
    let mut nrows = 0;
    for r in &rows {
        let row = match items(r, ctx)? {
            Some(cells) => {
                let mut out = vec![];
                for c in &cells {
                    match items(c, ctx)? {
                        // An (h, w, 1) image: one channel per pixel.
                        Some(ch) if ch.len() == 1 => out.push(to_f64(&ch[0], ctx)?),
                        Some(ch) => {
                            return Err(PyErr::not_implemented(format!(
                                "imshow of {}-channel colour images is not supported; \
                                 pass a 2-D array of intensities",
                                ch.len()
                            )))
                        }
                        None => out.push(to_f64(c, ctx)?),
                    }
                }
                out
            }
            None => vec![to_f64(r, ctx)?],
        };
        match cols {
            None => cols = Some(row.len()),
            Some(c) if c != row.len() => {
                return Err(PyErr::type_error(
                    "Invalid shape for image data: rows have different lengths",
                ))
            }
            _ => {}
        }
        data.extend(row);
        nrows += 1;
    }
    let cols = cols.unwrap_or(0);
    if nrows == 0 || cols == 0 {
        return Err(PyErr::type_error("Invalid shape (0,) for image data"));
    }
    Ok((nrows, cols, data))
}

/// A colour argument: a name or `#hex` string, or an RGB(A) tuple of floats in [0, 1].
pub fn color_arg(v: &Value, ctx: &mut dyn Ctx) -> PyResult<Rgb> {
    if let Value::Str(s) = v {
        return color::parse(s).map_err(py_err);
    }
    let parts = vector(v, ctx)?;
    if parts.len() == 3 || parts.len() == 4 {
        let c = |x: f64| (x.clamp(0.0, 1.0) * 255.0).round() as u8;
        return Ok(Rgb(c(parts[0]), c(parts[1]), c(parts[2])));
    }
    Err(PyErr::value_error(format!(
        "{} is not a valid color value",
        ctx.repr(v)?
    )))
}

/// What a format string like `'ro--'` asks for.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct Format {
    pub color: Option<Rgb>,
    pub marker: Option<Marker>,
    pub style: Option<LineStyle>,
}

/// Parses a matplotlib format string: an optional colour letter, marker and line style,
/// in any order. A marker without a line style draws markers only, as in matplotlib.
pub fn parse_format(fmt: &str) -> Result<Format, PlotError> {
    let mut f = Format::default();
    let chars: Vec<char> = fmt.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        match (c, next) {
            ('-', Some('-')) => {
                f.style = Some(LineStyle::Dashed);
                i += 2;
                continue;
            }
            ('-', Some('.')) => {
                f.style = Some(LineStyle::DashDot);
                i += 2;
                continue;
            }
            ('-', _) => f.style = Some(LineStyle::Solid),
            (':', _) => f.style = Some(LineStyle::Dotted),
            _ => {
                if let Some(m) = Marker::from_char(c) {
                    f.marker = Some(m);
                } else if let (Some(rgb), None) = (color::from_letter(c), f.color) {
                    f.color = Some(rgb);
                } else if "vd<>D*ph8".contains(c) {
                    // Marker shapes not drawn here fall back to a circle.
                    f.marker = Some(Marker::Circle);
                } else {
                    return Err(PlotError::BadFormat(c.to_string()));
                }
            }
        }
        i += 1;
    }
    if f.style.is_none() && f.marker.is_some() {
        f.style = Some(LineStyle::None);
    }
    Ok(f)
}

/// A marker named in a keyword (`marker='o'`).
pub fn marker_arg(v: &Value) -> PyResult<Option<Marker>> {
    match v {
        Value::None => Ok(None),
        Value::Str(s) if s.is_empty() || &**s == "None" || &**s == "none" => Ok(None),
        Value::Str(s) => {
            let c = s.chars().next().unwrap_or('o');
            Ok(Some(Marker::from_char(c).unwrap_or(Marker::Circle)))
        }
        other => Err(PyErr::value_error(format!(
            "Unrecognized marker style {}",
            other.type_name()
        ))),
    }
}
