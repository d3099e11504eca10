//! `matplotlib` and `matplotlib.pyplot`, drawn by `display::plot`. pyplot's state (the
//! open figures and which one is current) lives in [`PlotState`] inside the session state,
//! so it survives between cells as in IPython. Like Jupyter's inline backend, figures
//! still open when a cell ends are shown then closed: the interpreter calls
//! [`flush_figures`] after every cell.
//!
//! Sub-files: `convert.rs` (argument reading, format strings), `draw.rs` (the drawing
//! commands shared by pyplot and `Axes`), `objects.rs` (Figure, Axes, axes arrays).

mod axis;
mod convert;
pub mod draw;
pub mod objects;

use std::cell::RefCell;
use std::rc::Rc;

use crate::cell::Output;
use crate::display::plot::Figure;
use crate::lang::{Args, Ctx, NativeFn, NativeModule, PyErr, PyResult, Value};

use convert::{arg, kw, vector};
use objects::{axes_value, figure_bundle, figure_value, AxesArray, FigData, FigHandle, FigureObj};

/// The version of matplotlib whose API this module follows.
pub const MATPLOTLIB_VERSION: &str = "3.9.0";

/// pyplot's figure manager: open figures, oldest first, and the current one.
#[derive(Default)]
pub struct PlotState {
    figures: Vec<FigHandle>,
    current: Option<FigHandle>,
    next_number: usize,
}

impl PlotState {
    fn open(&mut self, fig: Figure) -> FigHandle {
        self.next_number += 1;
        let h = Rc::new(RefCell::new(FigData {
            fig,
            current: 0,
            number: self.next_number,
        }));
        self.figures.push(h.clone());
        self.current = Some(h.clone());
        h
    }

    /// The current figure, made on first use (`plt.gcf()`).
    fn current(&mut self) -> FigHandle {
        match &self.current {
            Some(h) => h.clone(),
            None => self.open(Figure::default()),
        }
    }

    /// The number of figures open.
    pub fn open_figures(&self) -> usize {
        self.figures.len()
    }
}

/// Shows every open figure as `display_data` and closes them all: what Jupyter's inline
/// backend does when a cell finishes, and what `plt.show()` does. Call it after each cell.
pub fn flush_figures(ctx: &mut dyn Ctx) {
    let figures = {
        let st = ctx.state().get::<PlotState>();
        st.current = None;
        std::mem::take(&mut st.figures)
    };
    for h in figures {
        let bundle = figure_bundle(&h.borrow().fig);
        match bundle {
            Ok(data) => ctx.emit(Output::DisplayData {
                data,
                metadata: Default::default(),
                display_id: None,
            }),
            Err(e) => ctx.emit(Output::Stream {
                name: crate::cell::StreamName::Stderr,
                text: format!("could not draw the figure: {e}\n"),
            }),
        }
    }
}

fn size_arg(args: &Args, ctx: &mut dyn Ctx) -> PyResult<((f64, f64), f64)> {
    let size = match kw(args, &["figsize"]) {
        Some(v) => match vector(v, ctx)?.as_slice() {
            [w, h] if *w > 0.0 && *h > 0.0 => (*w, *h),
            _ => {
                return Err(PyErr::value_error(
                    "figsize must be a pair of positive numbers (width, height) in inches",
                ))
            }
        },
        None => (6.4, 4.8),
    };
    let dpi = match kw(args, &["dpi"]) {
        Some(v) => v.as_float()?,
        None => 100.0,
    };
    if dpi.is_nan() || dpi <= 0.0 {
        return Err(PyErr::value_error("dpi must be positive"));
    }
    Figure::new(size, dpi).pixels().map_err(convert::py_err)?;
    Ok((size, dpi))
}

fn figure(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    // `plt.figure(n)` returns figure n when it is open.
    if let Some(Value::Int(n)) = arg(args, 0, &["num"]) {
        let n = *n;
        let st = ctx.state().get::<PlotState>();
        if let Some(h) = st
            .figures
            .iter()
            .find(|h| h.borrow().number as i64 == n)
            .cloned()
        {
            st.current = Some(h.clone());
            return Ok(figure_value(&h));
        }
    }
    let (size, dpi) = size_arg(args, ctx)?;
    let h = ctx.state().get::<PlotState>().open(Figure::new(size, dpi));
    Ok(figure_value(&h))
}

fn subplots(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let nrows = arg(args, 0, &["nrows"])
        .map(Value::as_int)
        .transpose()?
        .unwrap_or(1);
    let ncols = arg(args, 1, &["ncols"])
        .map(Value::as_int)
        .transpose()?
        .unwrap_or(1);
    if !(1..=50).contains(&nrows) || !(1..=50).contains(&ncols) {
        return Err(PyErr::value_error(format!(
            "Number of rows and columns must be between 1 and 50, not {nrows} and {ncols}"
        )));
    }
    let squeeze = kw(args, &["squeeze"])
        .map(Value::as_bool_strict)
        .transpose()?
        .unwrap_or(true);
    let (size, dpi) = size_arg(args, ctx)?;
    let (r, c) = (nrows as usize, ncols as usize);
    let h = ctx
        .state()
        .get::<PlotState>()
        .open(Figure::grid(size, dpi, r, c));
    let items: Vec<Value> = (0..r * c).map(|i| axes_value(&h, i)).collect();
    let axes = match (squeeze, r, c) {
        (true, 1, 1) => items[0].clone(),
        (true, 1, _) | (true, _, 1) => Value::native(AxesArray { items, ncols: None }),
        _ => Value::native(AxesArray {
            items,
            ncols: Some(c),
        }),
    };
    Ok(Value::tuple(vec![figure_value(&h), axes]))
}

fn close(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let target = arg(args, 0, &["fig"]).cloned();
    let st = ctx.state().get::<PlotState>();
    match target {
        None => {
            if let Some(cur) = st.current.take() {
                st.figures.retain(|h| !Rc::ptr_eq(h, &cur));
            }
        }
        Some(Value::Str(s)) if &*s == "all" => {
            st.figures.clear();
            st.current = None;
        }
        Some(Value::Int(n)) => st.figures.retain(|h| h.borrow().number as i64 != n),
        Some(v) => {
            if let Some(f) = v.downcast::<FigureObj>() {
                st.figures.retain(|h| !Rc::ptr_eq(h, &f.handle));
                if st
                    .current
                    .as_ref()
                    .is_some_and(|c| Rc::ptr_eq(c, &f.handle))
                {
                    st.current = None;
                }
            }
        }
    }
    if st.current.is_none() {
        st.current = st.figures.last().cloned();
    }
    Ok(Value::None)
}

fn gca(ctx: &mut dyn Ctx) -> (FigHandle, usize) {
    let h = ctx.state().get::<PlotState>().current();
    let mut d = h.borrow_mut();
    d.fig.current_axes();
    let i = d.current.min(d.fig.axes.len().saturating_sub(1));
    drop(d);
    (h, i)
}

fn noop(name: &str) -> Value {
    NativeFn::value(name, "", |_, _| Ok(Value::None))
}

fn pyplot() -> NativeModule {
    let m = NativeModule::new(
        "matplotlib.pyplot",
        "Plotting in the style of MATLAB, drawn by the kernel.",
    );
    m.set(
        "figure",
        NativeFn::value("figure", "figure(num=None, figsize=None, dpi=None)", figure),
    );
    m.set(
        "subplots",
        NativeFn::value(
            "subplots",
            "subplots(nrows=1, ncols=1, figsize=None, dpi=None)",
            subplots,
        ),
    );
    m.set(
        "subplot",
        NativeFn::value("subplot", "subplot(nrows, ncols, index)", |a, c| {
            let h = c.state().get::<PlotState>().current();
            objects::add_subplot(&h, a)
        }),
    );
    m.set(
        "gcf",
        NativeFn::value("gcf", "gcf()", |_, c| {
            let h = c.state().get::<PlotState>().current();
            Ok(figure_value(&h))
        }),
    );
    m.set(
        "gca",
        NativeFn::value("gca", "gca()", |_, c| {
            let (h, i) = gca(c);
            Ok(axes_value(&h, i))
        }),
    );
    for name in [
        "plot", "scatter", "bar", "hist", "imshow", "title", "xlabel", "ylabel", "legend", "grid",
        "xlim", "ylim", "xscale", "yscale", "axis", "cla",
    ] {
        let n = name.to_string();
        m.set(
            name,
            NativeFn::value(name, "", move |args, ctx| {
                let (h, i) = gca(ctx);
                draw::command(&h, i, &n, args, ctx)
                    .unwrap_or_else(|| Err(PyErr::attribute_error(n.clone())))
            }),
        );
    }
    m.set(
        "suptitle",
        NativeFn::value("suptitle", "suptitle(t)", |a, c| {
            let t = arg(a, 0, &["t"]).map(|v| c.str(v)).transpose()?;
            let h = c.state().get::<PlotState>().current();
            h.borrow_mut().fig.suptitle = t;
            Ok(Value::None)
        }),
    );
    m.set(
        "savefig",
        NativeFn::value(
            "savefig",
            "savefig(fname, dpi=None, format=None)",
            |a, c| {
                let h = c.state().get::<PlotState>().current();
                let fig = h.borrow().fig.clone();
                objects::save(&fig, a, c)
            },
        ),
    );
    m.set(
        "show",
        NativeFn::value("show", "show()", |_, c| {
            flush_figures(c);
            Ok(Value::None)
        }),
    );
    m.set("close", NativeFn::value("close", "close(fig=None)", close));
    m.set(
        "clf",
        NativeFn::value("clf", "clf()", |_, c| {
            let h = c.state().get::<PlotState>().current();
            let mut d = h.borrow_mut();
            let (size, dpi) = (d.fig.size, d.fig.dpi);
            d.fig = Figure::new(size, dpi);
            d.current = 0;
            Ok(Value::None)
        }),
    );
    for name in [
        "tight_layout",
        "colorbar",
        "subplots_adjust",
        "ion",
        "ioff",
        "pause",
        "draw",
    ] {
        m.set(name, noop(name));
    }
    m.set(
        "style",
        NativeModule::new("matplotlib.pyplot.style", "Styles (accepted, not applied).")
            .with("use", noop("use"))
            .into_value(),
    );
    m.set("rcParams", Value::dict_from(vec![]));
    m
}

/// The module object for `matplotlib` or `matplotlib.pyplot`.
pub fn module(name: &str, _ctx: &mut dyn Ctx) -> PyResult<Value> {
    let plt = pyplot().into_value();
    if name == "matplotlib.pyplot" {
        return Ok(plt);
    }
    Ok(
        NativeModule::new("matplotlib", "Plotting, drawn by the kernel.")
            .with("pyplot", plt)
            .with("__version__", Value::str(MATPLOTLIB_VERSION))
            .with("use", noop("use"))
            .with("rcParams", Value::dict_from(vec![]))
            .into_value(),
    )
}
