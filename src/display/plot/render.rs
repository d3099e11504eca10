//! Draws a [`Figure`] with `plotters` and encodes it: PNG through the `png` crate, SVG as
//! text. Axes frames, ticks and labels come from plotters' mesh; series are drawn in pixel
//! space here, so dashes, markers and clipping behave as in matplotlib on any scale. The
//! font (DejaVu Sans, under `assets/fonts/`) is compiled into the binary.

use std::sync::Once;

use plotters::coord::Shift;
use plotters::prelude::*;

use super::dash::{clip, dashes, P};
use super::marks::{draw_legend, draw_marker};
use super::{Axes, Figure, LineStyle, PlotError, Rgb, Series};

static FONT: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans.ttf");
const FAMILY: &str = "sans-serif";
static REGISTER: Once = Once::new();

fn ensure_font() {
    REGISTER.call_once(|| {
        // The font is a fixed, valid file compiled in; should registration ever fail, text
        // is simply not drawn, which the font test would catch.
        let _ = plotters::style::register_font(FAMILY, FontStyle::Normal, FONT);
    });
}

pub(super) fn draw_err<E: std::fmt::Display>(e: E) -> PlotError {
    PlotError::Draw(e.to_string())
}

/// Renders the figure as a PNG at `dpi` (the figure's own when `None`).
pub fn to_png(fig: &Figure, dpi: Option<f64>) -> Result<Vec<u8>, PlotError> {
    let dpi = dpi.unwrap_or(fig.dpi);
    let (w, h) = fig.pixels_at(dpi)?;
    let mut rgb = vec![255u8; w as usize * h as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, (w, h)).into_drawing_area();
        draw_figure(fig, &root, dpi / 72.0)?;
        root.present().map_err(draw_err)?;
    }
    let mut out = vec![];
    {
        let mut enc = png::Encoder::new(&mut out, w, h);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        let mut writer = enc
            .write_header()
            .map_err(|e| PlotError::Encode(e.to_string()))?;
        writer
            .write_image_data(&rgb)
            .map_err(|e| PlotError::Encode(e.to_string()))?;
    }
    Ok(out)
}

/// Renders the figure as an SVG document.
pub fn to_svg(fig: &Figure) -> Result<String, PlotError> {
    let (w, h) = fig.pixels()?;
    let mut s = String::new();
    {
        let root = SVGBackend::with_string(&mut s, (w, h)).into_drawing_area();
        draw_figure(fig, &root, fig.dpi / 72.0)?;
        root.present().map_err(draw_err)?;
    }
    Ok(s)
}

pub(super) fn color(c: Rgb) -> RGBColor {
    RGBColor(c.0, c.1, c.2)
}

pub(super) fn font(px: f64) -> TextStyle<'static> {
    (FAMILY, px.max(1.0)).into_font().color(&BLACK)
}

fn draw_figure<DB: DrawingBackend>(
    fig: &Figure,
    root: &DrawingArea<DB, Shift>,
    scale: f64,
) -> Result<(), PlotError> {
    ensure_font();
    root.fill(&WHITE).map_err(draw_err)?;
    let body = match &fig.suptitle {
        Some(t) => root.titled(t, font(12.0 * scale)).map_err(draw_err)?,
        None => root.clone(),
    };
    let cells = body.split_evenly((fig.nrows.max(1), fig.ncols.max(1)));
    for (ax, area) in fig.axes.iter().zip(cells.iter()) {
        draw_axes(ax, area, scale)?;
    }
    Ok(())
}

/// The value range of one axis: data bounds with matplotlib's 5% margins, or the limits
/// set by the user, in transformed (log10 when `log`) units.
fn axis_range(
    values: &[f64],
    limit: Option<(f64, f64)>,
    log: bool,
    sticky_zero: bool,
) -> (f64, f64) {
    let tf = |v: f64| {
        if log {
            if v > 0.0 {
                v.log10()
            } else {
                f64::NAN
            }
        } else {
            v
        }
    };
    if let Some((a, b)) = limit {
        let (a, b) = (tf(a), tf(b));
        if a.is_finite() && b.is_finite() && a != b {
            return (a, b);
        }
    }
    let finite: Vec<f64> = values
        .iter()
        .map(|v| tf(*v))
        .filter(|v| v.is_finite())
        .collect();
    let (mut lo, mut hi) = finite
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| {
            (l.min(*v), h.max(*v))
        });
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    if lo == hi {
        let d = if lo == 0.0 { 0.5 } else { lo.abs() * 0.05 };
        return (lo - d, hi + d);
    }
    let pad = (hi - lo) * 0.05;
    if !(sticky_zero && lo == 0.0) {
        lo -= pad;
    }
    if !(sticky_zero && hi == 0.0) {
        hi += pad;
    }
    (lo, hi)
}

/// The x and y values an axes spans, whether it holds bars (whose baseline is zero), and
/// the size of its image, if any.
type Bounds = (Vec<f64>, Vec<f64>, bool, Option<(usize, usize)>);

fn series_bounds(ax: &Axes) -> Bounds {
    let (mut xs, mut ys, mut bars, mut image) = (vec![], vec![], false, None);
    for s in &ax.series {
        match s {
            Series::Line { x, y, .. } | Series::Scatter { x, y, .. } => {
                xs.extend_from_slice(x);
                ys.extend_from_slice(y);
            }
            Series::Bars {
                x, heights, width, ..
            } => {
                bars = true;
                for (c, h) in x.iter().zip(heights) {
                    xs.push(c - width / 2.0);
                    xs.push(c + width / 2.0);
                    ys.push(*h);
                }
                ys.push(0.0);
            }
            Series::Image { rows, cols, .. } => image = Some((*rows, *cols)),
        }
    }
    (xs, ys, bars, image)
}

/// Tick labels without trailing zeros, the way matplotlib's default formatter reads.
fn tick_label(v: f64, log: bool) -> String {
    if log {
        // Decades read as powers of ten; ticks between them with three significant digits.
        if (v - v.round()).abs() < 1e-9 {
            let k = v.round() as i32;
            return if (-3..=4).contains(&k) {
                tick_label(10f64.powi(k), false)
            } else {
                format!("1e{k}")
            };
        }
        let x = 10f64.powf(v);
        let digits = (2 - x.log10().floor() as i32).max(0) as usize;
        return format!("{x:.digits$}");
    }
    if v == 0.0 || (v.abs() >= 1e-4 && v.abs() < 1e6) {
        let s = format!("{v:.6}");
        let s = s.trim_end_matches('0').trim_end_matches('.');
        if s == "-0" {
            "0".into()
        } else {
            s.to_string()
        }
    } else {
        format!("{v:.1e}")
    }
}

fn draw_axes<DB: DrawingBackend>(
    ax: &Axes,
    area: &DrawingArea<DB, Shift>,
    scale: f64,
) -> Result<(), PlotError> {
    let (xs, ys, bars, image) = series_bounds(ax);
    let (mut xr, mut yr) = (
        axis_range(&xs, ax.xlim, ax.xlog, false),
        axis_range(&ys, ax.ylim, ax.ylog, bars),
    );
    if let Some((rows, cols)) = image {
        if ax.xlim.is_none() {
            xr = (-0.5, cols as f64 - 0.5);
        }
        if ax.ylim.is_none() {
            // Images put row 0 at the top, as imshow's default origin does.
            yr = (rows as f64 - 0.5, -0.5);
        }
    }
    let margin = (8.0 * scale) as u32;
    let (xl, yl) = if ax.hide_axis {
        (0, 0)
    } else {
        (
            ((if ax.xlabel.is_empty() { 20.0 } else { 34.0 }) * scale) as u32,
            ((if ax.ylabel.is_empty() { 38.0 } else { 52.0 }) * scale) as u32,
        )
    };
    let caption = if ax.title.is_empty() {
        0.0
    } else {
        18.0 * scale
    };
    // imshow keeps pixels square: shrink the area around the plot to the image's aspect.
    let area = match image {
        Some((rows, cols)) if rows > 0 && cols > 0 => {
            let (aw, ah) = area.dim_in_pixel();
            let pw = aw as f64 - yl as f64 - 2.0 * margin as f64;
            let ph = ah as f64 - xl as f64 - 2.0 * margin as f64 - caption;
            let want = (xr.1 - xr.0).abs() / (yr.1 - yr.0).abs();
            if pw > 1.0 && ph > 1.0 {
                if pw / ph > want {
                    let cut = ((pw - ph * want) / 2.0) as u32;
                    area.margin(0, 0, cut, cut)
                } else {
                    let cut = ((ph - pw / want) / 2.0) as u32;
                    area.margin(cut, cut, 0, 0)
                }
            } else {
                area.clone()
            }
        }
        _ => area.clone(),
    };
    let mut builder = ChartBuilder::on(&area);
    builder
        .margin(margin)
        .x_label_area_size(xl)
        .y_label_area_size(yl);
    if !ax.title.is_empty() {
        builder.caption(&ax.title, font(12.0 * scale));
    }
    let mut chart = builder
        .build_cartesian_2d(xr.0..xr.1, yr.0..yr.1)
        .map_err(draw_err)?;
    if !ax.hide_axis {
        let fx = |v: &f64| tick_label(*v, ax.xlog);
        let fy = |v: &f64| tick_label(*v, ax.ylog);
        let grid = RGBColor(0xb0, 0xb0, 0xb0);
        let mut mesh = chart.configure_mesh();
        mesh.x_labels(7)
            .y_labels(7)
            .x_label_formatter(&fx)
            .y_label_formatter(&fy)
            .label_style(font(10.0 * scale))
            .axis_desc_style(font(10.0 * scale))
            .light_line_style(TRANSPARENT)
            .bold_line_style(grid.stroke_width(1));
        if !ax.grid {
            mesh.disable_mesh();
        }
        if !ax.xlabel.is_empty() {
            mesh.x_desc(ax.xlabel.as_str());
        }
        if !ax.ylabel.is_empty() {
            mesh.y_desc(ax.ylabel.as_str());
        }
        mesh.draw().map_err(draw_err)?;
    }
    let plot = chart.plotting_area().strip_coord_spec();
    let (pw, ph) = plot.dim_in_pixel();
    let map = Mapper {
        xr,
        yr,
        w: pw.saturating_sub(1).max(1) as f64,
        h: ph.saturating_sub(1).max(1) as f64,
        xlog: ax.xlog,
        ylog: ax.ylog,
    };
    for s in &ax.series {
        draw_series(s, &plot, &map, scale)?;
    }
    if !ax.hide_axis {
        plot.draw(&Rectangle::new(
            [(0, 0), (pw as i32 - 1, ph as i32 - 1)],
            BLACK.stroke_width(1),
        ))
        .map_err(draw_err)?;
    }
    if ax.legend {
        draw_legend(ax, &plot, scale)?;
    }
    Ok(())
}

/// Data to pixel coordinates inside the plotting area.
pub(super) struct Mapper {
    xr: (f64, f64),
    yr: (f64, f64),
    w: f64,
    h: f64,
    xlog: bool,
    ylog: bool,
}

impl Mapper {
    pub(super) fn px(&self, x: f64, y: f64) -> Option<P> {
        let x = if self.xlog {
            if x > 0.0 {
                x.log10()
            } else {
                return None;
            }
        } else {
            x
        };
        let y = if self.ylog {
            if y > 0.0 {
                y.log10()
            } else {
                return None;
            }
        } else {
            y
        };
        let p = (
            (x - self.xr.0) / (self.xr.1 - self.xr.0) * self.w,
            (1.0 - (y - self.yr.0) / (self.yr.1 - self.yr.0)) * self.h,
        );
        (p.0.is_finite() && p.1.is_finite()).then_some(p)
    }
    pub(super) fn rect(&self) -> (f64, f64, f64, f64) {
        (0.0, 0.0, self.w, self.h)
    }
}

pub(super) fn ipt(p: P) -> (i32, i32) {
    (p.0.round() as i32, p.1.round() as i32)
}

fn draw_series<DB: DrawingBackend>(
    s: &Series,
    plot: &DrawingArea<DB, Shift>,
    map: &Mapper,
    scale: f64,
) -> Result<(), PlotError> {
    match s {
        Series::Line {
            x,
            y,
            color: c,
            style,
            marker,
            width,
            ..
        } => {
            let stroke = ((width * scale).round() as u32).max(1);
            let pattern: Vec<f64> = match style {
                LineStyle::Solid | LineStyle::None => vec![],
                LineStyle::Dashed => vec![3.7, 1.6],
                LineStyle::Dotted => vec![1.0, 1.65],
                LineStyle::DashDot => vec![6.4, 1.6, 1.0, 1.6],
            }
            .into_iter()
            .map(|l| l * width * scale)
            .collect();
            if *style != LineStyle::None {
                // Missing or unmappable points break the line, as NaN does in matplotlib.
                let mut runs: Vec<Vec<P>> = vec![vec![]];
                for (a, b) in x.iter().zip(y) {
                    match map.px(*a, *b) {
                        Some(p) => runs.last_mut().map(|r| r.push(p)).unwrap_or(()),
                        None => runs.push(vec![]),
                    }
                }
                for run in runs.iter().filter(|r| r.len() > 1) {
                    for piece in dashes(run, &pattern) {
                        for seg in piece.windows(2) {
                            if let Some((a, b)) = clip(seg[0], seg[1], map.rect()) {
                                plot.draw(&PathElement::new(
                                    vec![ipt(a), ipt(b)],
                                    color(*c).stroke_width(stroke),
                                ))
                                .map_err(draw_err)?;
                            }
                        }
                    }
                }
            }
            if let Some(m) = marker {
                for (a, b) in x.iter().zip(y) {
                    draw_marker(plot, map, *a, *b, *m, 6.0 * scale, *c)?;
                }
            }
        }
        Series::Scatter {
            x,
            y,
            color: c,
            marker,
            size,
            ..
        } => {
            let diameter = size.max(0.0).sqrt() * scale;
            for (a, b) in x.iter().zip(y) {
                draw_marker(plot, map, *a, *b, *marker, diameter, *c)?;
            }
        }
        Series::Bars {
            x,
            heights,
            width,
            color: c,
            ..
        } => {
            for (cx, h) in x.iter().zip(heights) {
                let (Some(p0), Some(p1)) = (
                    map.px(cx - width / 2.0, if map.ylog { h.min(1.0) } else { 0.0 }),
                    map.px(cx + width / 2.0, *h),
                ) else {
                    continue;
                };
                let r = map.rect();
                let cl = |p: P| (p.0.clamp(r.0, r.2), p.1.clamp(r.1, r.3));
                plot.draw(&Rectangle::new(
                    [ipt(cl(p0)), ipt(cl(p1))],
                    color(*c).filled(),
                ))
                .map_err(draw_err)?;
            }
        }
        Series::Image {
            rows,
            cols,
            data,
            cmap,
            vmin,
            vmax,
        } => {
            let span = if vmax > vmin { vmax - vmin } else { 1.0 };
            for r in 0..*rows {
                for col in 0..*cols {
                    let v = data.get(r * cols + col).copied().unwrap_or(f64::NAN);
                    let rgb = cmap.at((v - vmin) / span);
                    let (Some(a), Some(b)) = (
                        map.px(col as f64 - 0.5, r as f64 - 0.5),
                        map.px(col as f64 + 0.5, r as f64 + 0.5),
                    ) else {
                        continue;
                    };
                    plot.draw(&Rectangle::new([ipt(a), ipt(b)], color(rgb).filled()))
                        .map_err(draw_err)?;
                }
            }
        }
    }
    Ok(())
}
