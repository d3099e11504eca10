//! The Python objects of the plotting module: `Figure`, `Axes`, the array of axes that
//! `subplots` returns (indexable as `axes[0]` or `axes[0, 1]`, iterable, with `.flat`),
//! and the small artist values that `plot` and friends return. A figure is shared between
//! these objects and the session's [`PlotState`](super::PlotState).

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::rc::Rc;

use crate::display::plot::{render, Figure};
use crate::display::MimeBundle;
use crate::lang::{Args, Ctx, NativeFn, Object, PyErr, PyResult, Value};

use super::convert::{arg, py_err, vector};
use super::draw;

/// A figure and which of its axes is current.
pub struct FigData {
    pub fig: Figure,
    pub current: usize,
    /// pyplot's figure number (`plt.figure(1)`).
    pub number: usize,
}

pub type FigHandle = Rc<RefCell<FigData>>;

/// The bundle Jupyter's inline backend shows: a PNG and `<Figure size WxH with N Axes>`.
/// A figure with no axes shows as text only, as matplotlib's does.
pub fn figure_bundle(fig: &Figure) -> PyResult<MimeBundle> {
    use base64::Engine;
    let mut b = crate::display::plain(fig.describe());
    if !fig.axes.is_empty() {
        let png = render::to_png(fig, None).map_err(py_err)?;
        let encoded = base64::engine::general_purpose::STANDARD.encode(png);
        b.insert("image/png".into(), serde_json::Value::String(encoded));
    }
    Ok(b)
}

/// `plt.savefig` / `fig.savefig`: PNG or SVG by the file's extension (or `format=`).
pub fn save(fig: &Figure, args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let Some(path) = arg(args, 0, &["fname"]) else {
        return Err(PyErr::type_error(
            "savefig() missing 1 required positional argument: 'fname'",
        ));
    };
    let path = ctx.str(path)?;
    let format = match super::convert::kw(args, &["format"]) {
        Some(v) => v.as_str()?.to_ascii_lowercase(),
        None => std::path::Path::new(&path)
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_else(|| "png".into()),
    };
    let dpi = match super::convert::kw(args, &["dpi"]) {
        Some(Value::Str(_)) | None => None,
        Some(v) => Some(v.as_float()?),
    };
    let bytes = match format.as_str() {
        "png" => render::to_png(fig, dpi).map_err(py_err)?,
        "svg" => {
            let mut f = fig.clone();
            if let Some(d) = dpi {
                f.dpi = d;
            }
            render::to_svg(&f).map_err(py_err)?.into_bytes()
        }
        other => {
            return Err(PyErr::value_error(format!(
                "Format '{other}' is not supported (supported formats: png, svg)"
            )))
        }
    };
    std::fs::write(&path, bytes)
        .map_err(|e| PyErr::new("FileNotFoundError", format!("{e}: '{path}'")))?;
    Ok(Value::None)
}

/// A value whose only job is its repr (`Line2D`, `Text`, ...).
pub struct Artist {
    repr: String,
}

pub fn artist(repr: &str) -> Value {
    Value::native(Artist {
        repr: repr.to_string(),
    })
}

impl Object for Artist {
    fn type_name(&self) -> String {
        self.repr
            .split_whitespace()
            .next()
            .unwrap_or("Artist")
            .trim_start_matches('<')
            .to_string()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(self.repr.clone())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// `matplotlib.figure.Figure`.
pub struct FigureObj {
    pub handle: FigHandle,
}

pub fn figure_value(handle: &FigHandle) -> Value {
    Value::native(FigureObj {
        handle: handle.clone(),
    })
}

pub fn axes_value(handle: &FigHandle, index: usize) -> Value {
    Value::native(AxesObj {
        handle: handle.clone(),
        index,
    })
}

fn method(
    name: &str,
    handle: &FigHandle,
    body: impl Fn(&FigHandle, &Args, &mut dyn Ctx) -> PyResult<Value> + 'static,
) -> Value {
    let h = handle.clone();
    NativeFn::value(name, "", move |args, ctx| body(&h, args, ctx))
}

/// `fig.add_subplot(nrows, ncols, index)` or `add_subplot(221)`; also `plt.subplot`.
pub fn add_subplot(h: &FigHandle, args: &Args) -> PyResult<Value> {
    let (rows, cols, idx) = match args.pos.as_slice() {
        [] => (1, 1, 1),
        [code] => {
            let c = code.as_int()?;
            (c / 100, (c / 10) % 10, c % 10)
        }
        [r, c, i] => (r.as_int()?, c.as_int()?, i.as_int()?),
        _ => {
            return Err(PyErr::type_error(
                "add_subplot() takes 1 or 3 positional arguments",
            ))
        }
    };
    if rows < 1 || cols < 1 || idx < 1 || idx > rows * cols {
        return Err(PyErr::value_error(format!(
            "num must be an integer with 1 <= num <= {}, not {idx}",
            (rows * cols).max(1)
        )));
    }
    let mut data = h.borrow_mut();
    let (rows, cols, idx) = (rows as usize, cols as usize, idx as usize - 1);
    if data.fig.nrows != rows || data.fig.ncols != cols || data.fig.axes.len() != rows * cols {
        let mut grid = Figure::grid(data.fig.size, data.fig.dpi, rows, cols);
        grid.suptitle = data.fig.suptitle.take();
        // Axes already drawn on keep their place when the grid matches their position.
        for (i, ax) in std::mem::take(&mut data.fig.axes).into_iter().enumerate() {
            if let Some(slot) = grid.axes.get_mut(i) {
                *slot = ax;
            }
        }
        data.fig = grid;
    }
    data.current = idx;
    drop(data);
    Ok(axes_value(h, idx))
}

impl Object for FigureObj {
    fn type_name(&self) -> String {
        "Figure".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(self.handle.borrow().fig.describe())
    }
    fn rich(&self, _ctx: &mut dyn Ctx) -> PyResult<Option<MimeBundle>> {
        figure_bundle(&self.handle.borrow().fig).map(Some)
    }
    fn getattr(&self, _this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        let h = &self.handle;
        Ok(Some(match name {
            "savefig" => method(name, h, |h, a, c| {
                let fig = h.borrow().fig.clone();
                save(&fig, a, c)
            }),
            "add_subplot" => method(name, h, |h, a, _| add_subplot(h, a)),
            "gca" => method(name, h, |h, _, _| {
                if h.borrow().fig.axes.is_empty() {
                    h.borrow_mut().fig.current_axes();
                }
                let i = h.borrow().current;
                Ok(axes_value(h, i))
            }),
            "suptitle" => method(name, h, |h, a, c| {
                let t = arg(a, 0, &["t"]).map(|v| c.str(v)).transpose()?;
                h.borrow_mut().fig.suptitle = t;
                Ok(Value::None)
            }),
            "set_size_inches" => method(name, h, |h, a, c| {
                let v = match (a.pos.first(), a.pos.get(1)) {
                    (Some(w), Some(hh)) => vec![w.as_float()?, hh.as_float()?],
                    (Some(pair), None) => vector(pair, c)?,
                    _ => vec![],
                };
                if let [w, hh] = v.as_slice() {
                    h.borrow_mut().fig.size = (*w, *hh);
                }
                Ok(Value::None)
            }),
            "tight_layout" | "subplots_adjust" | "show" | "colorbar" => {
                NativeFn::value(name, "", |_, _| Ok(Value::None))
            }
            "axes" => {
                let n = h.borrow().fig.axes.len();
                Value::list((0..n).map(|i| axes_value(h, i)).collect())
            }
            "number" => Value::Int(h.borrow().number as i64),
            "dpi" => Value::Float(h.borrow().fig.dpi),
            _ => return Ok(None),
        }))
    }
    fn dir(&self) -> Vec<String> {
        [
            "savefig",
            "add_subplot",
            "gca",
            "suptitle",
            "set_size_inches",
            "tight_layout",
            "axes",
            "number",
            "dpi",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    }
    fn hash(&self) -> Option<u64> {
        Some(Rc::as_ptr(&self.handle) as usize as u64)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// `matplotlib.axes.Axes`: one subplot of a figure.
pub struct AxesObj {
    pub handle: FigHandle,
    pub index: usize,
}

impl Object for AxesObj {
    fn type_name(&self) -> String {
        "Axes".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok("<Axes: >".into())
    }
    fn getattr(&self, _this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        if name == "figure" {
            return Ok(Some(figure_value(&self.handle)));
        }
        if draw::COMMANDS.contains(&name) || name == "clear" {
            let (h, i, n) = (self.handle.clone(), self.index, name.to_string());
            return Ok(Some(NativeFn::value(name, "", move |args, ctx| {
                draw::command(&h, i, &n, args, ctx)
                    .unwrap_or_else(|| Err(PyErr::attribute_error(n.clone())))
            })));
        }
        Ok(None)
    }
    fn dir(&self) -> Vec<String> {
        draw::COMMANDS.iter().map(|s| s.to_string()).collect()
    }
    fn hash(&self) -> Option<u64> {
        Some((Rc::as_ptr(&self.handle) as usize as u64).wrapping_add(self.index as u64))
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// The numpy-like array of axes from `plt.subplots(nrows, ncols)`: 1-D when either side
/// is 1, else 2-D, as matplotlib squeezes it.
pub struct AxesArray {
    pub items: Vec<Value>,
    /// `None` for 1-D, `Some(ncols)` for 2-D (rows of `ncols`).
    pub ncols: Option<usize>,
}

fn index(i: i64, len: usize) -> PyResult<usize> {
    let j = if i < 0 { i + len as i64 } else { i };
    if j < 0 || j >= len as i64 {
        return Err(PyErr::index_error(format!(
            "index {i} is out of bounds for axis 0 with size {len}"
        )));
    }
    Ok(j as usize)
}

impl AxesArray {
    fn rows(&self) -> usize {
        match self.ncols {
            Some(c) if c > 0 => self.items.len() / c,
            _ => self.items.len(),
        }
    }
    fn row(&self, r: usize) -> Value {
        match self.ncols {
            Some(c) => Value::native(AxesArray {
                items: self.items[r * c..(r + 1) * c].to_vec(),
                ncols: None,
            }),
            None => self.items[r].clone(),
        }
    }
}

impl Object for AxesArray {
    fn type_name(&self) -> String {
        "ndarray".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        let row = |n: usize| vec!["<Axes: >"; n].join(", ");
        Ok(match self.ncols {
            None => format!("array([{}], dtype=object)", row(self.items.len())),
            Some(c) => {
                let rows: Vec<String> = (0..self.rows()).map(|_| format!("[{}]", row(c))).collect();
                format!("array([{}], dtype=object)", rows.join(",\n       "))
            }
        })
    }
    fn len(&self, _ctx: &mut dyn Ctx) -> PyResult<Option<usize>> {
        Ok(Some(self.rows()))
    }
    fn getitem(&self, key: &Value, _ctx: &mut dyn Ctx) -> PyResult<Value> {
        match (key, self.ncols) {
            (Value::Tuple(t), Some(c)) if t.len() == 2 => {
                let r = index(t[0].as_int()?, self.rows())?;
                let k = index(t[1].as_int()?, c)?;
                Ok(self.items[r * c + k].clone())
            }
            (Value::Tuple(_), _) => Err(PyErr::index_error("too many indices for array")),
            (k, _) => Ok(self.row(index(k.as_int()?, self.rows())?)),
        }
    }
    fn getattr(&self, _this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        let flat = Value::native(AxesArray {
            items: self.items.clone(),
            ncols: None,
        });
        Ok(match name {
            "flat" => Some(flat),
            "ravel" | "flatten" => Some(NativeFn::value(name, "", move |_, _| Ok(flat.clone()))),
            "shape" => Some(match self.ncols {
                Some(c) => Value::tuple(vec![Value::from(self.rows()), Value::from(c)]),
                None => Value::tuple(vec![Value::from(self.items.len())]),
            }),
            _ => None,
        })
    }
    fn iter(&self, _this: &Value, _ctx: &mut dyn Ctx) -> PyResult<Value> {
        let items = (0..self.rows()).map(|r| self.row(r)).collect();
        Ok(Value::native(SeqIter {
            items,
            pos: Cell::new(0),
        }))
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// An iterator over a fixed list of values.
pub struct SeqIter {
    items: Vec<Value>,
    pos: Cell<usize>,
}

impl Object for SeqIter {
    fn type_name(&self) -> String {
        "iterator".into()
    }
    fn iter(&self, this: &Value, _ctx: &mut dyn Ctx) -> PyResult<Value> {
        Ok(this.clone())
    }
    fn next(&self, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        let i = self.pos.get();
        self.pos.set(i + 1);
        Ok(self.items.get(i).cloned())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}
