//! A small matplotlib-like figure model: a figure of a given size in inches and dots per
//! inch holds a grid of axes; each axes holds line, scatter, bar and image series with
//! titles, labels, legend, grid, limits and log scales. [`render`] draws it with
//! `plotters` to PNG or SVG using a font embedded in the binary, so plots come out the
//! same on a machine with no fonts installed. No Python here: `bindings::plt` builds these.

pub mod color;
mod dash;
mod marks;
pub mod render;

pub use color::{Cmap, Rgb, TAB10};

/// What can go wrong building or drawing a figure; the binding turns these into
/// `ValueError`s.
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    #[error("'{0}' is not a valid color value")]
    BadColor(String),
    #[error("'{0}' is not a known colormap name (try 'gray' or 'viridis')")]
    BadCmap(String),
    #[error("unrecognized format string character '{0}'")]
    BadFormat(String),
    #[error("figure size {0}x{1} pixels is too large (at most {2} pixels a side)")]
    TooLarge(u32, u32, u32),
    #[error("x and y must have the same first dimension, but have shapes ({0},) and ({1},)")]
    LengthMismatch(usize, usize),
    #[error("drawing failed: {0}")]
    Draw(String),
    #[error("could not encode the image: {0}")]
    Encode(String),
}

/// Line dash patterns matplotlib names with `-`, `--`, `:` and `-.`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineStyle {
    Solid,
    Dashed,
    Dotted,
    DashDot,
    None,
}

impl LineStyle {
    pub fn parse(s: &str) -> Option<LineStyle> {
        Some(match s {
            "-" | "solid" => LineStyle::Solid,
            "--" | "dashed" => LineStyle::Dashed,
            ":" | "dotted" => LineStyle::Dotted,
            "-." | "dashdot" => LineStyle::DashDot,
            "" | " " | "None" | "none" => LineStyle::None,
            _ => return None,
        })
    }
}

/// Marker shapes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    Circle,
    Square,
    Triangle,
    Point,
    X,
    Plus,
}

impl Marker {
    pub fn from_char(c: char) -> Option<Marker> {
        Some(match c {
            'o' => Marker::Circle,
            's' => Marker::Square,
            '^' => Marker::Triangle,
            '.' => Marker::Point,
            'x' => Marker::X,
            '+' => Marker::Plus,
            _ => return None,
        })
    }
}

/// One thing drawn in an axes.
#[derive(Debug, Clone, PartialEq)]
pub enum Series {
    Line {
        x: Vec<f64>,
        y: Vec<f64>,
        color: Rgb,
        style: LineStyle,
        marker: Option<Marker>,
        /// In points, as matplotlib counts line widths.
        width: f64,
        label: Option<String>,
    },
    Scatter {
        x: Vec<f64>,
        y: Vec<f64>,
        color: Rgb,
        marker: Marker,
        /// Marker area in points squared (`s=`), as matplotlib takes it.
        size: f64,
        label: Option<String>,
    },
    Bars {
        /// Centres of the bars.
        x: Vec<f64>,
        heights: Vec<f64>,
        width: f64,
        color: Rgb,
        label: Option<String>,
    },
    Image {
        rows: usize,
        cols: usize,
        /// Row-major values; colour-mapped between `vmin` and `vmax`.
        data: Vec<f64>,
        cmap: Cmap,
        vmin: f64,
        vmax: f64,
    },
}

/// One subplot.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Axes {
    pub title: String,
    pub xlabel: String,
    pub ylabel: String,
    pub series: Vec<Series>,
    pub legend: bool,
    pub grid: bool,
    pub xlim: Option<(f64, f64)>,
    pub ylim: Option<(f64, f64)>,
    pub xlog: bool,
    pub ylog: bool,
    /// Whether axis ticks are drawn (`plt.axis('off')` clears it).
    pub hide_axis: bool,
    /// Position in the default colour cycle for the next series.
    pub next_color: usize,
}

impl Axes {
    /// The next colour of matplotlib's default cycle.
    pub fn cycle_color(&mut self) -> Rgb {
        let c = TAB10[self.next_color % TAB10.len()];
        self.next_color += 1;
        c
    }

    /// Whether anything is drawn in this axes.
    pub fn is_empty(&self) -> bool {
        self.series.is_empty()
    }
}

/// A figure: size, resolution and a grid of axes (row-major).
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    /// Width and height in inches.
    pub size: (f64, f64),
    pub dpi: f64,
    pub nrows: usize,
    pub ncols: usize,
    pub axes: Vec<Axes>,
    pub suptitle: Option<String>,
}

/// The largest side a figure may have in pixels; larger requests are refused rather than
/// allocating gigabytes for a typo in `figsize`.
pub const MAX_SIDE: u32 = 8000;

impl Default for Figure {
    fn default() -> Figure {
        Figure::new((6.4, 4.8), 100.0)
    }
}

impl Figure {
    /// An empty figure with no axes yet (they appear on first use, as in pyplot).
    pub fn new(size: (f64, f64), dpi: f64) -> Figure {
        Figure {
            size,
            dpi,
            nrows: 1,
            ncols: 1,
            axes: vec![],
            suptitle: None,
        }
    }

    /// A figure with an `nrows` x `ncols` grid of empty axes.
    pub fn grid(size: (f64, f64), dpi: f64, nrows: usize, ncols: usize) -> Figure {
        let (nrows, ncols) = (nrows.max(1), ncols.max(1));
        Figure {
            nrows,
            ncols,
            axes: vec![Axes::default(); nrows * ncols],
            ..Figure::new(size, dpi)
        }
    }

    /// Size in pixels at `dpi`, as matplotlib rounds it.
    pub fn pixels_at(&self, dpi: f64) -> Result<(u32, u32), PlotError> {
        let w = (self.size.0 * dpi).round();
        let h = (self.size.1 * dpi).round();
        let max = MAX_SIDE as f64;
        if !(w >= 1.0 && h >= 1.0 && w <= max && h <= max) {
            let clamp = |v: f64| {
                if v.is_finite() {
                    v.max(0.0).min(u32::MAX as f64) as u32
                } else {
                    u32::MAX
                }
            };
            return Err(PlotError::TooLarge(clamp(w), clamp(h), MAX_SIDE));
        }
        Ok((w as u32, h as u32))
    }

    pub fn pixels(&self) -> Result<(u32, u32), PlotError> {
        self.pixels_at(self.dpi)
    }

    /// The axes pyplot draws on next (`gca()`), made on first use.
    pub fn current_axes(&mut self) -> &mut Axes {
        if self.axes.is_empty() {
            self.axes.push(Axes::default());
        }
        let last = self.axes.len() - 1;
        &mut self.axes[last]
    }

    /// What pyplot's repr says: `<Figure size 640x480 with 1 Axes>`.
    pub fn describe(&self) -> String {
        let (w, h) = self.pixels().unwrap_or((0, 0));
        format!("<Figure size {w}x{h} with {} Axes>", self.axes.len())
    }
}
