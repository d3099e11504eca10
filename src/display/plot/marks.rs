//! Markers (`o`, `s`, `^`, `.`, `x`, `+`) and the legend box, drawn in pixel space inside
//! an axes' plotting area. Called only by the renderer.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::render::{color, draw_err, font, ipt, Mapper};
use super::{Axes, Marker, PlotError, Rgb, Series};

pub(super) fn draw_marker<DB: DrawingBackend>(
    plot: &DrawingArea<DB, Shift>,
    map: &Mapper,
    x: f64,
    y: f64,
    m: Marker,
    size: f64,
    c: Rgb,
) -> Result<(), PlotError> {
    let Some(p) = map.px(x, y) else { return Ok(()) };
    let r = map.rect();
    if p.0 < r.0 || p.0 > r.2 || p.1 < r.1 || p.1 > r.3 {
        return Ok(());
    }
    let (cx, cy) = ipt(p);
    let h = (size / 2.0).max(1.0);
    let hi = h.round() as i32;
    let style = color(c);
    let res = match m {
        Marker::Circle => plot.draw(&Circle::new((cx, cy), hi, style.filled())),
        Marker::Point => plot.draw(&Circle::new(
            (cx, cy),
            (h / 2.0).round().max(1.0) as i32,
            style.filled(),
        )),
        Marker::Square => plot.draw(&Rectangle::new(
            [(cx - hi, cy - hi), (cx + hi, cy + hi)],
            style.filled(),
        )),
        Marker::Triangle => plot.draw(&Polygon::new(
            vec![(cx, cy - hi), (cx - hi, cy + hi), (cx + hi, cy + hi)],
            style.filled(),
        )),
        Marker::X => plot
            .draw(&PathElement::new(
                vec![(cx - hi, cy - hi), (cx + hi, cy + hi)],
                style.stroke_width(1),
            ))
            .and_then(|_| {
                plot.draw(&PathElement::new(
                    vec![(cx - hi, cy + hi), (cx + hi, cy - hi)],
                    style.stroke_width(1),
                ))
            }),
        Marker::Plus => plot
            .draw(&PathElement::new(
                vec![(cx - hi, cy), (cx + hi, cy)],
                style.stroke_width(1),
            ))
            .and_then(|_| {
                plot.draw(&PathElement::new(
                    vec![(cx, cy - hi), (cx, cy + hi)],
                    style.stroke_width(1),
                ))
            }),
    };
    res.map_err(draw_err)
}

pub(super) fn draw_legend<DB: DrawingBackend>(
    ax: &Axes,
    plot: &DrawingArea<DB, Shift>,
    scale: f64,
) -> Result<(), PlotError> {
    let entries: Vec<(&str, Rgb, bool)> = ax
        .series
        .iter()
        .filter_map(|s| match s {
            Series::Line {
                label: Some(l),
                color,
                ..
            } => Some((l.as_str(), *color, true)),
            Series::Scatter {
                label: Some(l),
                color,
                ..
            }
            | Series::Bars {
                label: Some(l),
                color,
                ..
            } => Some((l.as_str(), *color, false)),
            _ => None,
        })
        .collect();
    if entries.is_empty() {
        return Ok(());
    }
    let text = font(10.0 * scale);
    let line_h = (14.0 * scale).round() as i32;
    let sample = (20.0 * scale).round() as i32;
    let pad = (5.0 * scale).round() as i32;
    let mut text_w = 0;
    for (l, _, _) in &entries {
        let (w, _) = plot.estimate_text_size(l, &text).map_err(draw_err)?;
        text_w = text_w.max(w as i32);
    }
    let (pw, _) = plot.dim_in_pixel();
    let box_w = sample + text_w + 3 * pad;
    let box_h = line_h * entries.len() as i32 + pad;
    let x0 = pw as i32 - box_w - pad;
    let y0 = pad;
    plot.draw(&Rectangle::new(
        [(x0, y0), (x0 + box_w, y0 + box_h)],
        WHITE.mix(0.8).filled(),
    ))
    .map_err(draw_err)?;
    plot.draw(&Rectangle::new(
        [(x0, y0), (x0 + box_w, y0 + box_h)],
        RGBColor(0xcc, 0xcc, 0xcc).stroke_width(1),
    ))
    .map_err(draw_err)?;
    for (i, (label, c, is_line)) in entries.iter().enumerate() {
        let cy = y0 + pad + line_h * i as i32 + line_h / 2 - pad / 2;
        if *is_line {
            plot.draw(&PathElement::new(
                vec![(x0 + pad, cy), (x0 + pad + sample, cy)],
                color(*c).stroke_width((2.0 * scale).round().max(1.0) as u32),
            ))
            .map_err(draw_err)?;
        } else {
            let h = (4.0 * scale).round() as i32;
            plot.draw(&Rectangle::new(
                [
                    (x0 + pad + sample / 2 - h, cy - h),
                    (x0 + pad + sample / 2 + h, cy + h),
                ],
                color(*c).filled(),
            ))
            .map_err(draw_err)?;
        }
        let pos = (x0 + 2 * pad + sample, cy - line_h / 2 + pad / 2);
        plot.draw(&Text::new(label.to_string(), pos, text.clone()))
            .map_err(draw_err)?;
    }
    Ok(())
}
