//! The `tf.data.Dataset` stages beyond slicing, mapping and batching: the constructors
//! `Dataset.range`, `Dataset.from_tensors` and `Dataset.zip`, and the methods `filter` and
//! `unbatch`, each with TF's element spec, cardinality and error messages, plus the streams
//! that run them. `dataset.rs` owns the [`Op`] list and dispatch; `iter.rs` opens streams.

use std::rc::Rc;

use super::dataset::{Dataset, Elem, Op, INFINITE, UNKNOWN};
use super::iter::{apply_map, open, Stream};
use crate::bindings::tf::convert::{dtype_arg, tensor_err};
use crate::bindings::tf::TfError;
use crate::lang::{Args, Ctx, PyErr, PyResult, Value};
use crate::tensor::array::NdArray;
use crate::tensor::DType;

/// `Dataset.range(stop)`, `range(start, stop[, step])`, `output_type=tf.int64`.
pub fn range(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let mut ints = Vec::new();
    for v in &args.pos {
        ints.push(super::dataset::int_arg(Some(v), 0)?);
    }
    let (start, stop, step) = match ints.as_slice() {
        [stop] => (0, *stop, 1),
        [start, stop] => (*start, *stop, 1),
        [start, stop, step] => (*start, *stop, *step),
        _ => {
            return Err(PyErr::type_error(format!(
                "range() takes 1 to 3 positional arguments but {} were given",
                ints.len()
            )))
        }
    };
    if step == 0 {
        return Err(PyErr::new(
            "InvalidArgumentError",
            "step must be a non-zero integer.",
        ));
    }
    let mut dtype = DType::I64;
    for (k, v) in &args.kw {
        match k.as_str() {
            "output_type" => dtype = dtype_arg(Some(v), ctx)?.unwrap_or(DType::I64),
            "name" => {}
            other => {
                return Err(PyErr::type_error(format!(
                    "range() got an unexpected keyword argument '{other}'"
                )))
            }
        }
    }
    let span = if step > 0 { stop - start } else { start - stop };
    let n = if span <= 0 {
        0
    } else {
        (span + step.abs() - 1) / step.abs()
    };
    Ok(Value::native(Dataset {
        op: Op::Range {
            start,
            step,
            n,
            dtype,
        },
        sample: Elem::Leaf(Rc::new(scalar(start, dtype)?)),
        batched: false,
        cardinality: n,
    }))
}

fn scalar(v: i64, dtype: DType) -> PyResult<NdArray> {
    Ok(NdArray::from_i64(&[], vec![v])
        .map_err(tensor_err)?
        .astype(dtype))
}

/// `Dataset.from_tensors(tensors)`: the whole structure as one element.
pub fn from_tensors(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind("from_tensors", &["tensors", "name"], 1)?;
    let e = Elem::from_value(s[0].as_ref().unwrap_or(&Value::None), ctx)?;
    Ok(Value::native(Dataset {
        op: Op::Tensors(e.clone()),
        sample: e,
        batched: false,
        cardinality: 1,
    }))
}

/// `Dataset.zip(*datasets)` or `Dataset.zip((a, b))` / `zip({'x': a, 'y': b})`.
pub fn zip(args: &Args, _ctx: &mut dyn Ctx) -> PyResult<Value> {
    let bad = |v: &Value| -> PyErr {
        TfError::Type(format!(
            "Invalid input to `zip`. Inputs are expected to be (nested) structures of \
             `tf.data.Dataset` objects but encountered object of type <class '{}'>.",
            v.type_name()
        ))
        .into()
    };
    let given_ds = args
        .kw
        .iter()
        .find(|(k, _)| k == "datasets")
        .map(|(_, v)| v.clone());
    let structure = match (args.pos.as_slice(), given_ds) {
        ([], Some(v)) => v,
        ([one], None) => one.clone(),
        (many, None) if many.len() > 1 => Value::tuple(many.to_vec()),
        _ => {
            return Err(PyErr::type_error(
                "Both `*args` and `datasets` cannot be set, and one of them must be.",
            ))
        }
    };
    let (keys, parts): (Option<Vec<String>>, Vec<Value>) = match &structure {
        Value::Tuple(t) => (None, t.to_vec()),
        Value::Dict(d) => {
            let mut keys = vec![];
            let mut vals = vec![];
            for (k, v) in d.borrow().items() {
                keys.push(k.as_str()?.to_string());
                vals.push(v.clone());
            }
            (Some(keys), vals)
        }
        v if v.downcast::<Dataset>().is_some() => return Ok(v.clone()),
        v => return Err(bad(v)),
    };
    let mut samples = vec![];
    let mut batched = false;
    let mut cards = vec![];
    for p in &parts {
        let d = p.downcast::<Dataset>().ok_or_else(|| bad(p))?;
        samples.push(d.sample.clone());
        batched |= d.batched;
        cards.push(d.cardinality);
    }
    let finite: Vec<i64> = cards.iter().copied().filter(|c| *c >= 0).collect();
    let cardinality = match finite.iter().min() {
        Some(m) => *m,
        None if cards.contains(&UNKNOWN) => UNKNOWN,
        None => INFINITE,
    };
    let sample = match &keys {
        None => Elem::Tuple(samples),
        Some(k) => Elem::Dict(k.iter().cloned().zip(samples).collect()),
    };
    Ok(Value::native(Dataset {
        op: Op::Zip(parts, keys),
        sample,
        batched,
        cardinality,
    }))
}

/// `ds.filter(predicate)`: TF traces the predicate once and wants a scalar `tf.bool`.
pub fn filter(d: &Dataset, this: &Value, args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind("filter", &["predicate", "name"], 1)?;
    let f = s[0].clone().unwrap_or(Value::None);
    let traced = apply_map(&f, &d.sample, ctx)?;
    match &traced {
        Elem::Leaf(a) if a.ndim() == 0 && a.dtype() == DType::Bool => {}
        other => {
            return Err(TfError::Value(format!(
                "Invalid `predicate`. `predicate` must return a `tf.bool` scalar tensor, but \
                 its return type is {}.",
                other.spec(false)
            ))
            .into())
        }
    }
    Ok(Value::native(Dataset {
        op: Op::Filter(this.clone(), f),
        sample: d.sample.clone(),
        batched: d.batched,
        cardinality: UNKNOWN,
    }))
}

/// `ds.unbatch()`: every component split along its first axis.
pub fn unbatch(d: &Dataset, this: &Value, args: &Args) -> PyResult<Value> {
    args.bind("unbatch", &["name"], 0)?;
    if d.sample.leaves().iter().any(|a| a.ndim() == 0) {
        return Err(
            TfError::Value("Cannot unbatch an input with scalar components.".into()).into(),
        );
    }
    let sample = d.sample.map_leaves(&mut |a| {
        let shape: Vec<usize> = a.shape().iter().skip(1).copied().collect();
        match a.shape().first() {
            Some(n) if *n > 0 => a.row(0).map_err(tensor_err),
            _ => NdArray::zeros(&shape, a.dtype()).map_err(tensor_err),
        }
    })?;
    let known = d.cardinality >= 0 && !d.batched;
    let rows = d
        .sample
        .leaves()
        .first()
        .and_then(|a| a.shape().first().copied());
    Ok(Value::native(Dataset {
        op: Op::Unbatch(this.clone()),
        sample,
        batched: false,
        // TF knows the length only when every element has a static number of rows.
        cardinality: match (known, rows) {
            (true, Some(r)) => d.cardinality * r as i64,
            _ if d.cardinality == INFINITE => INFINITE,
            _ => UNKNOWN,
        },
    }))
}

struct Range {
    next: i64,
    step: i64,
    left: i64,
    dtype: DType,
}

impl Stream for Range {
    fn next(&mut self, _ctx: &mut dyn Ctx) -> PyResult<Option<Elem>> {
        if self.left <= 0 {
            return Ok(None);
        }
        let v = self.next;
        self.next += self.step;
        self.left -= 1;
        Ok(Some(Elem::Leaf(Rc::new(scalar(v, self.dtype)?))))
    }
}

struct Filter(Box<dyn Stream>, Value);

impl Stream for Filter {
    fn next(&mut self, ctx: &mut dyn Ctx) -> PyResult<Option<Elem>> {
        while let Some(e) = self.0.next(ctx)? {
            let keep = match apply_map(&self.1, &e, ctx)? {
                Elem::Leaf(a) if a.ndim() == 0 => a.item().map_err(tensor_err)?.as_f64() != 0.0,
                other => {
                    return Err(TfError::Value(format!(
                        "Invalid `predicate`: it returned {} for one element.",
                        other.spec(false)
                    ))
                    .into())
                }
            };
            if keep {
                return Ok(Some(e));
            }
        }
        Ok(None)
    }
}

struct Unbatch {
    input: Box<dyn Stream>,
    rows: std::vec::IntoIter<Elem>,
}

impl Stream for Unbatch {
    fn next(&mut self, ctx: &mut dyn Ctx) -> PyResult<Option<Elem>> {
        loop {
            if let Some(e) = self.rows.next() {
                return Ok(Some(e));
            }
            let Some(batch) = self.input.next(ctx)? else {
                return Ok(None);
            };
            let n = batch
                .leaves()
                .first()
                .and_then(|a| a.shape().first().copied())
                .unwrap_or(0);
            let mut rows = Vec::with_capacity(n);
            for i in 0..n {
                rows.push(batch.map_leaves(&mut |a| a.row(i).map_err(tensor_err))?);
            }
            self.rows = rows.into_iter();
        }
    }
}

struct Zip(Vec<Box<dyn Stream>>, Option<Vec<String>>);

impl Stream for Zip {
    fn next(&mut self, ctx: &mut dyn Ctx) -> PyResult<Option<Elem>> {
        let mut parts = Vec::with_capacity(self.0.len());
        for s in &mut self.0 {
            match s.next(ctx)? {
                Some(e) => parts.push(e),
                None => return Ok(None),
            }
        }
        Ok(Some(match &self.1 {
            None => Elem::Tuple(parts),
            Some(keys) => Elem::Dict(keys.iter().cloned().zip(parts).collect()),
        }))
    }
}

/// The stream of one of this file's stages (`iter::open` runs the others).
pub fn open_op(op: &Op) -> PyResult<Box<dyn Stream>> {
    Ok(match op {
        Op::Range {
            start,
            step,
            n,
            dtype,
        } => Box::new(Range {
            next: *start,
            step: *step,
            left: *n,
            dtype: *dtype,
        }),
        Op::Tensors(e) => Box::new(One(Some(e.clone()))),
        Op::Filter(input, f) => Box::new(Filter(open(input)?, f.clone())),
        Op::Unbatch(input) => Box::new(Unbatch {
            input: open(input)?,
            rows: Vec::new().into_iter(),
        }),
        Op::Zip(parts, keys) => Box::new(Zip(
            parts.iter().map(open).collect::<PyResult<_>>()?,
            keys.clone(),
        )),
        _ => {
            return Err(TfError::Runtime(
                "this dataset stage is opened by the pipeline runner".into(),
            )
            .into())
        }
    })
}

/// A stream of exactly one element (`from_tensors`).
struct One(Option<Elem>);

impl Stream for One {
    fn next(&mut self, _ctx: &mut dyn Ctx) -> PyResult<Option<Elem>> {
        Ok(self.0.take())
    }
}
