//! `np.ndarray` as a Python object: attributes and methods, operators (reflected too)
//! with Python scalars, lists and other arrays, comparisons, indexing for reading and
//! assignment, `len`, iteration over the first axis, truth value, repr and str. The
//! array is shared copy-on-write, so passing it around never copies the data.

use std::any::Any;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use crate::bindings::common::ItemIter;
use crate::lang::{Args, BinOp, CmpOp, Ctx, NativeFn, Object, PyErr, PyResult, UnaryOp, Value};
use crate::tensor::linalg::matmul;
use crate::tensor::math::unary;
use crate::tensor::ops::{binary, BinaryOp, Operand};
use crate::tensor::{
    repr_with_options, str_with_options, IndexItem, NdArray, PrintOptions, Reduction, UnaryFn,
};

use super::convert::python_scalar;
use super::convert::{
    array_value, dtype_arg, err, index_items, py_scalar, shape_arg, to_array, tolist, wrap, Opnd,
};
use super::dtype::PyDType;
use super::funcs::{clip_call, cumulative_call, reduce_call, round_call};

/// The body of an array method, given the array it was looked up on.
type MethodBody = Box<dyn Fn(&NdArray, &Args, &mut dyn Ctx) -> PyResult<Value>>;

/// An array object. Basic indexing (integers, slices, `None`, `...`) gives a view, as in
/// numpy: the view shares `store` with its base and remembers the `path` of index
/// expressions from it, so `a[0][1] = 5` and `row = a[0]; row[:] = 0` write through.
pub struct PyArray {
    store: Rc<RefCell<Rc<NdArray>>>,
    path: Vec<Vec<IndexItem>>,
}

fn is_basic(items: &[IndexItem]) -> bool {
    items.iter().all(|i| !matches!(i, IndexItem::Array(_)))
}

impl PyArray {
    pub fn new(a: NdArray) -> PyArray {
        PyArray {
            store: Rc::new(RefCell::new(Rc::new(a))),
            path: vec![],
        }
    }

    /// A view of this array through `items` (which must be basic).
    fn view(&self, items: Vec<IndexItem>) -> PyArray {
        let mut path = self.path.clone();
        path.push(items);
        PyArray {
            store: self.store.clone(),
            path,
        }
    }

    /// Replaces the array's values in place (`np.random.shuffle`, `fill`, `sort`).
    pub fn replace(&self, a: NdArray) -> PyResult<()> {
        let all = [IndexItem::Ellipsis];
        self.assign(&all, &a)
    }

    /// The array, shared (no copy for arrays that are not views).
    pub fn get(&self) -> Rc<NdArray> {
        let mut a = self.store.borrow().clone();
        for items in &self.path {
            match a.get(items) {
                Ok(v) => a = Rc::new(v),
                Err(_) => break,
            }
        }
        a
    }

    /// `self[items] = value`, written through to the base array of a view.
    fn assign(&self, items: &[IndexItem], value: &NdArray) -> PyResult<()> {
        if self.path.is_empty() {
            let mut cell = self.store.borrow_mut();
            return Rc::make_mut(&mut cell).set(items, value).map_err(err);
        }
        let mut levels: Vec<NdArray> = vec![(**self.store.borrow()).clone()];
        for p in &self.path {
            let next = levels[levels.len() - 1].get(p).map_err(err)?;
            levels.push(next);
        }
        let mut child = levels.pop().unwrap_or_else(|| value.clone());
        child.set(items, value).map_err(err)?;
        for (k, mut parent) in levels.into_iter().enumerate().rev() {
            parent.set(&self.path[k], &child).map_err(err)?;
            child = parent;
        }
        *self.store.borrow_mut() = Rc::new(child);
        Ok(())
    }
}

fn bin_of(op: BinOp) -> Option<BinaryOp> {
    Some(match op {
        BinOp::Add => BinaryOp::Add,
        BinOp::Sub => BinaryOp::Sub,
        BinOp::Mul => BinaryOp::Mul,
        BinOp::Div => BinaryOp::Div,
        BinOp::FloorDiv => BinaryOp::FloorDiv,
        BinOp::Mod => BinaryOp::Mod,
        BinOp::Pow => BinaryOp::Pow,
        BinOp::BitAnd => BinaryOp::And,
        BinOp::BitOr => BinaryOp::Or,
        BinOp::BitXor => BinaryOp::Xor,
        _ => return None,
    })
}

/// `a op other` (or `other op a` when `reflected`).
pub fn array_binop(
    a: &Rc<NdArray>,
    op: BinOp,
    other: &Value,
    reflected: bool,
    ctx: &mut dyn Ctx,
) -> PyResult<Option<Value>> {
    let Some(o) = Opnd::of(other, ctx)? else {
        return Ok(None);
    };
    if op == BinOp::MatMul {
        let b = match &o {
            Opnd::Arr(b) => b.clone(),
            Opnd::Weak(_) => {
                return Err(PyErr::value_error(
                    "matmul: Input operand 1 does not have enough dimensions (has 0, gufunc \
                     core with signature (n?,k),(k,m?)->(n?,m?) requires 1)",
                ))
            }
        };
        let r = if reflected {
            matmul(&b, a)
        } else {
            matmul(a, &b)
        };
        return r.map(|v| Some(wrap(v))).map_err(err);
    }
    let Some(bop) = bin_of(op) else {
        return Ok(None);
    };
    let mine = Operand::Arr(a);
    let r = if reflected {
        binary(o.operand(), mine, bop)
    } else {
        binary(mine, o.operand(), bop)
    };
    r.map(|v| Some(wrap(v))).map_err(err)
}

pub fn array_compare(
    a: &Rc<NdArray>,
    op: CmpOp,
    other: &Value,
    ctx: &mut dyn Ctx,
) -> PyResult<Option<Value>> {
    let Some(o) = Opnd::of(other, ctx)? else {
        return Ok(None);
    };
    let bop = match op {
        CmpOp::Eq => BinaryOp::Eq,
        CmpOp::Ne => BinaryOp::Ne,
        CmpOp::Lt => BinaryOp::Lt,
        CmpOp::Le => BinaryOp::Le,
        CmpOp::Gt => BinaryOp::Gt,
        CmpOp::Ge => BinaryOp::Ge,
    };
    binary(Operand::Arr(a), o.operand(), bop)
        .map(|v| Some(wrap(v)))
        .map_err(err)
}

pub fn array_unary(a: &Rc<NdArray>, op: UnaryOp) -> PyResult<Value> {
    let r = match op {
        UnaryOp::Neg => unary(a, UnaryFn::Neg),
        UnaryOp::Pos => Ok((**a).clone()),
        UnaryOp::Invert => unary(a, UnaryFn::Invert),
    };
    r.map(wrap).map_err(err)
}

/// The array's attributes and methods, shared by arrays and numpy scalars.
pub fn array_attr(
    this: &Value,
    a: Rc<NdArray>,
    name: &str,
    _ctx: &mut dyn Ctx,
) -> PyResult<Option<Value>> {
    // ATTRS is the table of what arrays offer: a name outside it is no attribute, so
    // `dir()`, `hasattr` and completion always agree with what works.
    if !ATTRS.contains(&name) && !name.starts_with("__") {
        return Ok(None);
    }
    let shape_tuple = |s: &[usize]| Value::tuple(s.iter().map(|&d| Value::Int(d as i64)).collect());
    let prop = match name {
        "shape" => Some(shape_tuple(a.shape())),
        "ndim" => Some(Value::Int(a.ndim() as i64)),
        "size" => Some(Value::Int(a.size() as i64)),
        "dtype" => Some(Value::native(PyDType {
            dt: a.dtype(),
            is_class: false,
        })),
        "itemsize" => Some(Value::Int(a.dtype().itemsize() as i64)),
        "nbytes" => Some(Value::Int((a.dtype().itemsize() * a.size()) as i64)),
        "T" => Some(a.transpose(None).map(array_value).map_err(err)?),
        _ => None,
    };
    if prop.is_some() {
        return Ok(prop);
    }
    let this = this.clone();
    let m = |f: MethodBody| {
        let a = a.clone();
        Some(NativeFn::value(name, "", move |args, ctx| f(&a, args, ctx)))
    };
    let red = |r: Reduction| -> MethodBody { Box::new(move |a, args, _| reduce_call(r, a, args)) };
    Ok(match name {
        "reshape" => m(Box::new(|a, args, _| {
            let dims = if args.pos.len() == 1 {
                shape_arg(&args.pos[0])?
            } else {
                args.pos
                    .iter()
                    .map(super::convert::int_of)
                    .collect::<PyResult<_>>()?
            };
            a.reshape(&dims).map(array_value).map_err(err)
        })),
        "astype" => m(Box::new(|a, args, ctx| {
            let s = args.bind("astype", &["dtype", "order", "casting", "subok", "copy"], 1)?;
            let dt = s[0]
                .as_ref()
                .map(|v| dtype_arg(v, ctx))
                .transpose()?
                .flatten();
            let dt = dt.ok_or_else(|| PyErr::type_error("astype() needs a dtype"))?;
            Ok(array_value(a.astype(dt)))
        })),
        "ravel" | "flatten" => m(Box::new(|a, _, _| Ok(array_value(a.ravel())))),
        "copy" => m(Box::new(|a, _, _| Ok(array_value(a.clone())))),
        "transpose" => m(Box::new(|a, args, _| {
            let axes: Option<Vec<i64>> = match args.pos.len() {
                0 => None,
                1 if args.pos[0].is_none() => None,
                1 => Some(shape_arg(&args.pos[0])?),
                _ => Some(
                    args.pos
                        .iter()
                        .map(super::convert::int_of)
                        .collect::<PyResult<_>>()?,
                ),
            };
            a.transpose(axes.as_deref()).map(array_value).map_err(err)
        })),
        "squeeze" => m(Box::new(|a, args, _| {
            let s = args.bind("squeeze", &["axis"], 0)?;
            let ax = super::convert::axis_arg(s[0].as_ref())?;
            a.squeeze(ax.and_then(|v| v.first().copied()))
                .map(array_value)
                .map_err(err)
        })),
        "sum" => m(red(Reduction::Sum)),
        "prod" => m(red(Reduction::Prod)),
        "mean" => m(red(Reduction::Mean)),
        "std" => m(red(Reduction::Std)),
        "var" => m(red(Reduction::Var)),
        "max" => m(red(Reduction::Max)),
        "min" => m(red(Reduction::Min)),
        "argmax" => m(red(Reduction::ArgMax)),
        "argmin" => m(red(Reduction::ArgMin)),
        "any" => m(red(Reduction::Any)),
        "all" => m(red(Reduction::All)),
        "cumsum" => m(Box::new(|a, args, _| cumulative_call(false, a, args))),
        "cumprod" => m(Box::new(|a, args, _| cumulative_call(true, a, args))),
        "round" => m(Box::new(|a, args, _| round_call(a, args))),
        "clip" => m(Box::new(|a, args, ctx| clip_call(a, args, ctx))),
        "tolist" => m(Box::new(|a, _, _| Ok(tolist(a)))),
        "argsort" => m(Box::new(|a, args, _| {
            let s = args.bind("argsort", &["axis", "kind", "order"], 0)?;
            let axis = s[0].as_ref().map(super::convert::int_of).transpose()?;
            crate::tensor::build::sort(a, axis.unwrap_or(-1), true)
                .map(array_value)
                .map_err(err)
        })),
        "item" => m(Box::new(|a, args, _| {
            if args.pos.is_empty() {
                return a.item().map(py_scalar).map_err(err);
            }
            // `a.item(i)` counts in the flattened array, `a.item(i, j)` per axis.
            let one = args.pos.len() == 1;
            let dims: Vec<usize> = if one {
                vec![a.size()]
            } else {
                a.shape().to_vec()
            };
            if dims.len() != args.pos.len() {
                return Err(PyErr::value_error("incorrect number of indices for array"));
            }
            let mut flat = 0usize;
            for (axis, (v, &n)) in args.pos.iter().zip(&dims).enumerate() {
                let k = super::convert::int_of(v)?;
                let at = if k < 0 { k + n as i64 } else { k };
                if !(0..n as i64).contains(&at) {
                    return Err(PyErr::index_error(format!(
                        "index {k} is out of bounds for axis {axis} with size {n}"
                    )));
                }
                flat = flat * n + at as usize;
            }
            a.standard()
                .scalar_at(flat)
                .map(py_scalar)
                .ok_or_else(|| PyErr::index_error("index out of bounds"))
        })),
        // `abs(x)` of an array or numpy scalar is `np.abs(x)`, keeping the dtype.
        "__abs__" => m(Box::new(|a, _, _| {
            unary(a, UnaryFn::Abs).map(wrap).map_err(err)
        })),
        "__float__" => m(Box::new(|a, _, _| python_scalar(a, "__float__"))),
        "__int__" => m(Box::new(|a, _, _| python_scalar(a, "__int__"))),
        "__index__" => m(Box::new(|a, _, _| python_scalar(a, "__index__"))),
        "dot" => m(Box::new(|a, args, ctx| {
            let s = args.bind("dot", &["b"], 1)?;
            let b = to_array(s[0].as_ref().unwrap_or(&Value::None), None, ctx)?;
            super::funcs::dot(a, &b)
        })),
        "sort" => {
            let target = this.clone();
            Some(NativeFn::value("sort", "", move |args, _ctx| {
                let s = args.bind("sort", &["axis", "kind", "order"], 0)?;
                let axis = s[0].as_ref().map(super::convert::int_of).transpose()?;
                if let Some(p) = target.downcast::<PyArray>() {
                    let sorted = crate::tensor::build::sort(&p.get(), axis.unwrap_or(-1), false)
                        .map_err(err)?;
                    p.replace(sorted)?;
                }
                Ok(Value::None)
            }))
        }
        "fill" => {
            let target = this.clone();
            Some(NativeFn::value("fill", "", move |args, _ctx| {
                let s = args.bind("fill", &["value"], 1)?;
                let v = super::convert::float_of(s[0].as_ref().unwrap_or(&Value::None))?;
                if let Some(p) = target.downcast::<PyArray>() {
                    let cur = p.get();
                    let filled = NdArray::full(cur.shape(), v, cur.dtype()).map_err(err)?;
                    p.replace(filled)?;
                }
                Ok(Value::None)
            }))
        }
        _ => None,
    })
}

/// Everything an array (or numpy scalar) answers besides dunders: `array_attr` refuses
/// any other name, and `dir()` lists exactly these.
const ATTRS: &[&str] = &[
    "shape",
    "ndim",
    "size",
    "dtype",
    "T",
    "itemsize",
    "nbytes",
    "reshape",
    "astype",
    "ravel",
    "flatten",
    "copy",
    "transpose",
    "squeeze",
    "sum",
    "prod",
    "mean",
    "std",
    "var",
    "max",
    "min",
    "argmax",
    "argmin",
    "any",
    "all",
    "cumsum",
    "cumprod",
    "round",
    "clip",
    "tolist",
    "item",
    "dot",
    "sort",
    "argsort",
    "fill",
];

impl Object for PyArray {
    fn type_name(&self) -> String {
        "ndarray".into()
    }
    fn repr(&self, ctx: &mut dyn Ctx) -> PyResult<String> {
        let opts = *ctx.state().get::<PrintOptions>();
        Ok(repr_with_options(&self.get(), "array", &opts))
    }
    fn str(&self, ctx: &mut dyn Ctx) -> PyResult<String> {
        let opts = *ctx.state().get::<PrintOptions>();
        Ok(str_with_options(&self.get(), &opts))
    }
    fn getattr(&self, this: &Value, name: &str, ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        array_attr(this, self.get(), name, ctx)
    }
    fn dir(&self) -> Vec<String> {
        ATTRS.iter().map(|s| s.to_string()).collect()
    }
    fn binop(
        &self,
        op: BinOp,
        other: &Value,
        reflected: bool,
        ctx: &mut dyn Ctx,
    ) -> PyResult<Option<Value>> {
        array_binop(&self.get(), op, other, reflected, ctx)
    }
    fn compare(&self, op: CmpOp, other: &Value, ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        array_compare(&self.get(), op, other, ctx)
    }
    fn unary(&self, op: UnaryOp, _ctx: &mut dyn Ctx) -> PyResult<Value> {
        array_unary(&self.get(), op)
    }
    fn truthy(&self, _ctx: &mut dyn Ctx) -> PyResult<Option<bool>> {
        let a = self.get();
        match a.size() {
            1 => Ok(Some(a.item().map_err(err)?.as_f64() != 0.0)),
            0 => Err(PyErr::value_error(
                "The truth value of an empty array is ambiguous. Use `array.size > 0` to check \
                 that an array is not empty.",
            )),
            _ => Err(PyErr::value_error(
                "The truth value of an array with more than one element is ambiguous. Use \
                 a.any() or a.all()",
            )),
        }
    }
    fn len(&self, _ctx: &mut dyn Ctx) -> PyResult<Option<usize>> {
        match self.get().shape().first() {
            Some(&n) => Ok(Some(n)),
            None => Err(PyErr::type_error("len() of unsized object")),
        }
    }
    fn getitem(&self, key: &Value, ctx: &mut dyn Ctx) -> PyResult<Value> {
        let items = index_items(key, ctx)?;
        let out = self.get().get(&items).map_err(err)?;
        if out.ndim() > 0 && is_basic(&items) {
            return Ok(Value::native(self.view(items)));
        }
        Ok(wrap(out))
    }
    fn setitem(&self, key: &Value, v: Value, ctx: &mut dyn Ctx) -> PyResult<()> {
        let items = index_items(key, ctx)?;
        let value = to_array(&v, None, ctx)?;
        self.assign(&items, &value)
    }
    fn iter(&self, _this: &Value, _ctx: &mut dyn Ctx) -> PyResult<Value> {
        let a = self.get();
        let n = *a
            .shape()
            .first()
            .ok_or_else(|| PyErr::type_error("iteration over a 0-d array"))?;
        let rows = (0..n)
            .map(|i| {
                if a.ndim() > 1 {
                    Ok(Value::native(self.view(vec![IndexItem::Int(i as i64)])))
                } else {
                    a.row(i).map(wrap).map_err(err)
                }
            })
            .collect::<PyResult<VecDeque<_>>>()?;
        Ok(ItemIter::value("iterator", rows))
    }
    fn class_chain(&self) -> Vec<String> {
        vec!["ndarray".into()]
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}
