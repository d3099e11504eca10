//! The drawing commands shared by `pyplot` functions and `Axes` methods: `plot`,
//! `scatter`, `bar`, `hist`, `imshow`, titles and labels, `legend`, `grid`, limits, scales
//! and `axis`. Each takes the figure and the index of the axes it draws on; arguments are
//! converted before the figure is borrowed, so a callback into Python never sees it locked.

use crate::display::plot::{Cmap, LineStyle, Marker, Series};
use crate::lang::{Args, Ctx, PyErr, PyResult, Value};

use super::axis;
use super::convert::{arg, color_arg, kw, marker_arg, matrix, parse_format, py_err, vector};
use super::objects::{artist, FigHandle};

/// Runs axes command `name` on axes `index` of `fig`; `None` when there is no such command.
pub fn command(
    fig: &FigHandle,
    index: usize,
    name: &str,
    args: &Args,
    ctx: &mut dyn Ctx,
) -> Option<PyResult<Value>> {
    Some(match name {
        "plot" => plot(fig, index, args, ctx),
        "scatter" => scatter(fig, index, args, ctx),
        "bar" => bar(fig, index, args, ctx),
        "hist" => hist(fig, index, args, ctx),
        "imshow" => imshow(fig, index, args, ctx),
        "set_title" | "title" => text(fig, index, args, |a, s| a.title = s),
        "set_xlabel" | "xlabel" => text(fig, index, args, |a, s| a.xlabel = s),
        "set_ylabel" | "ylabel" => text(fig, index, args, |a, s| a.ylabel = s),
        "legend" => edit(fig, index, |a| a.legend = true),
        "grid" => {
            let on = match arg(args, 0, &["visible", "b"]) {
                Some(v) => v.as_bool_strict(),
                None => Ok(true),
            };
            on.and_then(|on| edit(fig, index, |a| a.grid = on))
        }
        "set_xlim" | "xlim" => axis::limits(fig, index, args, ctx, true),
        "set_ylim" | "ylim" => axis::limits(fig, index, args, ctx, false),
        "set_xscale" | "xscale" => axis::scale(fig, index, args, true),
        "set_yscale" | "yscale" => axis::scale(fig, index, args, false),
        "axis" => axis::axis(fig, index, args),
        "cla" | "clear" => edit(fig, index, |a| *a = Default::default()),
        _ => return None,
    })
}

/// The names `command` answers, for `dir()` and completion.
pub const COMMANDS: &[&str] = &[
    "plot",
    "scatter",
    "bar",
    "hist",
    "imshow",
    "set_title",
    "set_xlabel",
    "set_ylabel",
    "legend",
    "grid",
    "set_xlim",
    "set_ylim",
    "set_xscale",
    "set_yscale",
    "axis",
    "cla",
];

pub(super) fn with_axes<T>(
    fig: &FigHandle,
    index: usize,
    f: impl FnOnce(&mut crate::display::plot::Axes) -> T,
) -> PyResult<T> {
    let mut data = fig.borrow_mut();
    let ax = data
        .fig
        .axes
        .get_mut(index)
        .ok_or_else(|| PyErr::value_error("this Axes is no longer part of its figure"))?;
    Ok(f(ax))
}

pub(super) fn edit(
    fig: &FigHandle,
    index: usize,
    f: impl FnOnce(&mut crate::display::plot::Axes),
) -> PyResult<Value> {
    with_axes(fig, index, f)?;
    Ok(Value::None)
}

fn text(
    fig: &FigHandle,
    index: usize,
    args: &Args,
    set: impl FnOnce(&mut crate::display::plot::Axes, String),
) -> PyResult<Value> {
    let label = match arg(args, 0, &["label", "t", "xlabel", "ylabel"]) {
        Some(Value::Str(s)) => s.to_string(),
        Some(other) => {
            return Err(PyErr::type_error(format!(
                "a label must be a str, not {}",
                other.type_name()
            )))
        }
        None => String::new(),
    };
    let shown = label.clone();
    with_axes(fig, index, |a| set(a, label))?;
    Ok(artist(&format!("Text(0.5, 1.0, '{shown}')")))
}

/// One `x, y, fmt` group of `plot`'s positional arguments.
type Group = (Option<Vec<f64>>, Vec<f64>, Option<String>);

fn plot(fig: &FigHandle, index: usize, args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    // Positional arguments come in groups: y | x, y | x, y, fmt | y, fmt.
    let mut groups: Vec<Group> = vec![];
    let pos = &args.pos;
    let mut i = 0;
    while i < pos.len() {
        let first = vector(&pos[i], ctx)?;
        let second = pos.get(i + 1).filter(|v| !matches!(v, Value::Str(_)));
        let (x, y, used) = match second {
            Some(s) => (Some(first), vector(s, ctx)?, 2),
            None => (None, first, 1),
        };
        i += used;
        let fmt = match pos.get(i) {
            Some(Value::Str(s)) => {
                i += 1;
                Some(s.to_string())
            }
            _ => None,
        };
        groups.push((x, y, fmt));
    }
    if groups.is_empty() {
        return Ok(Value::list(vec![]));
    }
    let label = match kw(args, &["label"]) {
        Some(v) => Some(ctx.str(v)?),
        None => None,
    };
    let color = kw(args, &["color", "c"])
        .map(|v| color_arg(v, ctx))
        .transpose()?;
    let width = kw(args, &["linewidth", "lw"])
        .map(Value::as_float)
        .transpose()?;
    let marker_kw = kw(args, &["marker"]).map(marker_arg).transpose()?.flatten();
    let style_kw = match kw(args, &["linestyle", "ls"]) {
        Some(v) => Some(LineStyle::parse(v.as_str()?).ok_or_else(|| {
            PyErr::value_error(format!("{:?} is not a valid value for linestyle", v))
        })?),
        None => None,
    };
    let mut lines = vec![];
    for (x, y, fmt) in groups {
        let f = parse_format(fmt.as_deref().unwrap_or("")).map_err(py_err)?;
        let x = x.unwrap_or_else(|| (0..y.len()).map(|v| v as f64).collect());
        if x.len() != y.len() {
            return Err(py_err(crate::display::plot::PlotError::LengthMismatch(
                x.len(),
                y.len(),
            )));
        }
        let marker = marker_kw.or(f.marker);
        let style = style_kw.or(f.style).unwrap_or(LineStyle::Solid);
        with_axes(fig, index, |a| {
            let c = color.or(f.color).unwrap_or_else(|| a.cycle_color());
            a.series.push(Series::Line {
                x,
                y,
                color: c,
                style,
                marker,
                width: width.unwrap_or(1.5),
                label: label.clone(),
            });
        })?;
        lines.push(artist("<matplotlib.lines.Line2D object>"));
    }
    Ok(Value::list(lines))
}

fn scatter(fig: &FigHandle, index: usize, args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let (Some(xv), Some(yv)) = (arg(args, 0, &["x"]), arg(args, 1, &["y"])) else {
        return Err(PyErr::type_error(
            "scatter() missing required arguments: 'x' and 'y'",
        ));
    };
    let (x, y) = (vector(xv, ctx)?, vector(yv, ctx)?);
    if x.len() != y.len() {
        return Err(PyErr::value_error("x and y must be the same size"));
    }
    let size = match arg(args, 2, &["s"]) {
        Some(v) => vector(v, ctx)?.first().copied().unwrap_or(36.0),
        None => 36.0,
    };
    let color = match arg(args, 3, &["c", "color"]) {
        Some(v @ Value::Str(_)) => Some(color_arg(v, ctx)?),
        Some(v) => match vector(v, ctx) {
            Ok(parts) if (parts.len() == 3 || parts.len() == 4) && parts.len() != x.len() => {
                Some(color_arg(v, ctx)?)
            }
            // One value per point is colour-mapped; a single colour is used for all.
            _ => None,
        },
        None => None,
    };
    let values = match arg(args, 3, &["c"]) {
        Some(v) if color.is_none() => vector(v, ctx).ok(),
        _ => None,
    };
    let marker = kw(args, &["marker"]).map(marker_arg).transpose()?.flatten();
    let label = kw(args, &["label"]).map(|v| ctx.str(v)).transpose()?;
    with_axes(fig, index, |a| {
        let base = color.unwrap_or_else(|| a.cycle_color());
        let marker = marker.unwrap_or(Marker::Circle);
        match values.filter(|v| v.len() == x.len()) {
            Some(vals) => {
                let lo = vals.iter().copied().fold(f64::INFINITY, f64::min);
                let hi = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let span = if hi > lo { hi - lo } else { 1.0 };
                // One series per point keeps the model simple; scatter plots are small.
                for ((px, py), v) in x.iter().zip(&y).zip(&vals) {
                    a.series.push(Series::Scatter {
                        x: vec![*px],
                        y: vec![*py],
                        color: Cmap::Viridis.at((v - lo) / span),
                        marker,
                        size,
                        label: None,
                    });
                }
            }
            None => a.series.push(Series::Scatter {
                x,
                y,
                color: base,
                marker,
                size,
                label,
            }),
        }
    })?;
    Ok(artist("<matplotlib.collections.PathCollection object>"))
}

fn bar(fig: &FigHandle, index: usize, args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let (Some(xv), Some(hv)) = (arg(args, 0, &["x"]), arg(args, 1, &["height"])) else {
        return Err(PyErr::type_error(
            "bar() missing required arguments: 'x' and 'height'",
        ));
    };
    let heights = vector(hv, ctx)?;
    // Category names stand at 0, 1, 2, ... as matplotlib places them.
    let x = match xv.as_seq() {
        Some(items) if items.iter().all(|v| matches!(v, Value::Str(_))) => {
            (0..items.len()).map(|i| i as f64).collect()
        }
        _ => vector(xv, ctx)?,
    };
    let width = match arg(args, 2, &["width"]) {
        Some(v) => v.as_float()?,
        None => 0.8,
    };
    let (x, heights) = match (x.len(), heights.len()) {
        (a, b) if a == b => (x, heights),
        (1, n) => (vec![x[0]; n], heights),
        (n, 1) => (x, vec![heights[0]; n]),
        (a, b) => {
            return Err(PyErr::value_error(format!(
                "shape mismatch: objects cannot be broadcast to a single shape ({a} and {b})"
            )))
        }
    };
    let color = kw(args, &["color"])
        .map(|v| color_arg(v, ctx))
        .transpose()?;
    let label = kw(args, &["label"]).map(|v| ctx.str(v)).transpose()?;
    with_axes(fig, index, |a| {
        let c = color.unwrap_or_else(|| a.cycle_color());
        a.series.push(Series::Bars {
            x,
            heights,
            width,
            color: c,
            label,
        });
    })?;
    Ok(artist("<BarContainer object of artists>"))
}

/// numpy.histogram's bins: `bins` equal bins over the data range (or `range`), the last
/// bin closed on the right.
pub fn histogram(data: &[f64], bins: usize, range: Option<(f64, f64)>) -> (Vec<f64>, Vec<f64>) {
    let finite: Vec<f64> = data.iter().copied().filter(|v| v.is_finite()).collect();
    let (mut lo, mut hi) = range.unwrap_or_else(|| {
        finite
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| {
                (l.min(*v), h.max(*v))
            })
    });
    if !lo.is_finite() || !hi.is_finite() {
        (lo, hi) = (0.0, 1.0);
    }
    if lo == hi {
        (lo, hi) = (lo - 0.5, hi + 0.5);
    }
    let bins = bins.max(1);
    let edges: Vec<f64> = (0..=bins)
        .map(|i| lo + (hi - lo) * i as f64 / bins as f64)
        .collect();
    let mut counts = vec![0.0; bins];
    for v in finite {
        if v < lo || v > hi {
            continue;
        }
        let mut b = ((v - lo) / (hi - lo) * bins as f64) as usize;
        if b >= bins {
            b = bins - 1;
        }
        counts[b] += 1.0;
    }
    (counts, edges)
}

fn hist(fig: &FigHandle, index: usize, args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let Some(xv) = arg(args, 0, &["x"]) else {
        return Err(PyErr::type_error(
            "hist() missing 1 required positional argument: 'x'",
        ));
    };
    let data = vector(xv, ctx)?;
    let bins = match arg(args, 1, &["bins"]) {
        Some(v) => usize::try_from(v.as_int()?)
            .map_err(|_| PyErr::value_error("`bins` must be positive"))?,
        None => 10,
    };
    let range = match kw(args, &["range"]) {
        Some(v) => match vector(v, ctx)?.as_slice() {
            [a, b] => Some((*a, *b)),
            _ => return Err(PyErr::value_error("range must be a pair (min, max)")),
        },
        None => None,
    };
    let (mut counts, edges) = histogram(&data, bins, range);
    if let Some(true) = kw(args, &["density"])
        .map(Value::as_bool_strict)
        .transpose()?
    {
        let total: f64 = counts.iter().sum();
        let width = edges
            .get(1)
            .zip(edges.first())
            .map(|(b, a)| b - a)
            .unwrap_or(1.0);
        if total > 0.0 {
            counts.iter_mut().for_each(|c| *c /= total * width);
        }
    }
    let color = kw(args, &["color"])
        .map(|v| color_arg(v, ctx))
        .transpose()?;
    let label = kw(args, &["label"]).map(|v| ctx.str(v)).transpose()?;
    let centres: Vec<f64> = edges.windows(2).map(|w| (w[0] + w[1]) / 2.0).collect();
    let width = edges
        .get(1)
        .zip(edges.first())
        .map(|(b, a)| b - a)
        .unwrap_or(1.0);
    with_axes(fig, index, |a| {
        let c = color.unwrap_or_else(|| a.cycle_color());
        a.series.push(Series::Bars {
            x: centres,
            heights: counts.clone(),
            width,
            color: c,
            label,
        });
    })?;
    let floats = |v: &[f64]| Value::list(v.iter().map(|x| Value::Float(*x)).collect());
    Ok(Value::tuple(vec![
        floats(&counts),
        floats(&edges),
        artist("<BarContainer object of artists>"),
    ]))
}

fn imshow(fig: &FigHandle, index: usize, args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let Some(xv) = arg(args, 0, &["X"]) else {
        return Err(PyErr::type_error(
            "imshow() missing 1 required positional argument: 'X'",
        ));
    };
    let (rows, cols, data) = matrix(xv, ctx)?;
    let cmap = match arg(args, 1, &["cmap"]) {
        Some(Value::Str(s)) => Cmap::parse(s).map_err(py_err)?,
        Some(other) => {
            return Err(PyErr::value_error(format!(
                "cmap must be a colormap name, not {}",
                other.type_name()
            )))
        }
        None => Cmap::Viridis,
    };
    let finite = data.iter().copied().filter(|v| v.is_finite());
    let lo = finite.clone().fold(f64::INFINITY, f64::min);
    let hi = finite.fold(f64::NEG_INFINITY, f64::max);
    let vmin = kw(args, &["vmin"])
        .map(Value::as_float)
        .transpose()?
        .unwrap_or(lo);
    let vmax = kw(args, &["vmax"])
        .map(Value::as_float)
        .transpose()?
        .unwrap_or(hi);
    with_axes(fig, index, |a| {
        a.series.push(Series::Image {
            rows,
            cols,
            data,
            cmap,
            vmin,
            vmax,
        });
    })?;
    Ok(artist("<matplotlib.image.AxesImage object>"))
}
