//! Running a `tf.data` pipeline: one stream per iteration built from the dataset's stages,
//! TF's buffer shuffle (seeded, reshuffled per iteration), the iterator objects a cell sees,
//! `strategy.experimental_distribute_dataset` (each global batch split over the replicas
//! with `distribute::split_batch`), and the arrays `model.fit` trains on. Builds no
//! datasets itself; `dataset.rs` owns their description.

use std::any::Any;
use std::cell::RefCell;
use std::rc::Rc;

use super::dataset::{Dataset, Elem, Op, INFINITE};
use super::distribute::DistDataset;
use crate::bindings::tf::convert::tensor_err;
use crate::bindings::tf::TfError;
use crate::lang::{Args, Ctx, Object, PyResult, Value};
use crate::tensor::array::NdArray;
use crate::tensor::build::{concatenate, stack};

/// One pass over a dataset.
pub trait Stream {
    fn next(&mut self, ctx: &mut dyn Ctx) -> PyResult<Option<Elem>>;
}

pub(crate) fn dataset(v: &Value) -> PyResult<&Dataset> {
    v.downcast::<Dataset>().ok_or_else(|| {
        TfError::Type(format!("expected a tf.data.Dataset, got {}", v.type_name())).into()
    })
}

/// Calls the user's map function on one element; a tuple element is passed unpacked, as TF does.
pub fn apply_map(f: &Value, e: &Elem, ctx: &mut dyn Ctx) -> PyResult<Elem> {
    let v = e.to_value(true);
    let pos = match (&e, &v) {
        (Elem::Tuple(_), Value::Tuple(t)) => t.to_vec(),
        _ => vec![v],
    };
    let out = ctx.call(f, Args::new(pos))?;
    Elem::from_value(&out, ctx)
}

struct Slices(std::vec::IntoIter<Elem>);
struct Map(Box<dyn Stream>, Value);
struct Batch(Box<dyn Stream>, usize, bool);
struct Take(Box<dyn Stream>, i64);
struct Skip(Box<dyn Stream>, i64);
struct Repeat {
    input: Value,
    inner: Box<dyn Stream>,
    left: Option<i64>,
    produced: bool,
}
struct Cache {
    owner: Value,
    inner: Option<Box<dyn Stream>>,
    seen: Vec<Elem>,
    replay: Option<(Rc<Vec<Elem>>, usize)>,
}
struct Shuffle {
    inner: Box<dyn Stream>,
    buffer: Vec<Elem>,
    size: usize,
    rng: u64,
    done: bool,
}

impl Stream for Slices {
    fn next(&mut self, _ctx: &mut dyn Ctx) -> PyResult<Option<Elem>> {
        Ok(self.0.next())
    }
}

impl Stream for Map {
    fn next(&mut self, ctx: &mut dyn Ctx) -> PyResult<Option<Elem>> {
        match self.0.next(ctx)? {
            Some(e) => Ok(Some(apply_map(&self.1, &e, ctx)?)),
            None => Ok(None),
        }
    }
}

/// Stacks elements of the same structure along a new first axis.
pub fn stack_elems(items: &[Elem]) -> PyResult<Elem> {
    let Some(first) = items.first() else {
        return Err(TfError::Value("cannot batch zero elements".into()).into());
    };
    let columns: Vec<Vec<Rc<NdArray>>> = items.iter().map(|e| e.leaves()).collect();
    let mut stacked = Vec::new();
    for i in 0..first.leaves().len() {
        let same: Option<Vec<&NdArray>> = columns.iter().map(|c| c.get(i).map(|a| &**a)).collect();
        if let Some(a) = same.as_deref().and_then(stack_rows) {
            stacked.push(a);
            continue;
        }
        let parts: Vec<NdArray> = columns
            .iter()
            .map(|c| c.get(i).map(|a| (**a).clone()))
            .collect::<Option<_>>()
            .ok_or_else(|| TfError::Value("elements differ in structure".into()))?;
        stacked.push(stack(&parts, 0).map_err(|e| {
            TfError::Value(format!(
                "Cannot batch tensors with different shapes in component {i}: {e}"
            ))
        })?);
    }
    first.with_leaves(&mut stacked.into_iter())
}

/// Arrays of one shape and dtype stacked along a new first axis in a single copy (the
/// general `stack` copies every part three times, which a training loop pays per batch);
/// `None` when they differ, for `stack` to report.
pub fn stack_rows(parts: &[&NdArray]) -> Option<NdArray> {
    use crate::tensor::Data;
    use ndarray::Axis;
    let first = parts.first()?;
    if parts.iter().any(|p| p.shape() != first.shape()) {
        return None;
    }
    macro_rules! stacked {
        ($($kind:ident),*) => {
            match &first.data {
                $(Data::$kind(_) => {
                    let views = parts
                        .iter()
                        .map(|p| match &p.data {
                            Data::$kind(a) => Some(a.view()),
                            _ => None,
                        })
                        .collect::<Option<Vec<_>>>()?;
                    Data::$kind(ndarray::stack(Axis(0), &views).ok()?)
                })*
            }
        };
    }
    Some(NdArray::new(stacked!(Bool, U8, I32, I64, F32, F64)))
}

impl Stream for Batch {
    fn next(&mut self, ctx: &mut dyn Ctx) -> PyResult<Option<Elem>> {
        let mut items = Vec::with_capacity(self.1);
        while items.len() < self.1 {
            match self.0.next(ctx)? {
                Some(e) => items.push(e),
                None => break,
            }
        }
        if items.is_empty() || (self.2 && items.len() < self.1) {
            return Ok(None);
        }
        stack_elems(&items).map(Some)
    }
}

impl Stream for Take {
    fn next(&mut self, ctx: &mut dyn Ctx) -> PyResult<Option<Elem>> {
        if self.1 == 0 {
            return Ok(None);
        }
        self.1 -= 1;
        self.0.next(ctx)
    }
}

impl Stream for Skip {
    fn next(&mut self, ctx: &mut dyn Ctx) -> PyResult<Option<Elem>> {
        while self.1 != 0 {
            // A negative count skips everything, as TF's skip(-1) does.
            self.1 = if self.1 > 0 { self.1 - 1 } else { -1 };
            if self.0.next(ctx)?.is_none() {
                self.1 = 0;
                return Ok(None);
            }
        }
        self.0.next(ctx)
    }
}

impl Stream for Repeat {
    fn next(&mut self, ctx: &mut dyn Ctx) -> PyResult<Option<Elem>> {
        loop {
            if let Some(e) = self.inner.next(ctx)? {
                self.produced = true;
                return Ok(Some(e));
            }
            // An empty pass would repeat forever without yielding; TF ends there too.
            if !self.produced {
                return Ok(None);
            }
            if let Some(n) = self.left.as_mut() {
                *n -= 1;
                if *n <= 0 {
                    return Ok(None);
                }
            }
            ctx.check_interrupt()?;
            self.produced = false;
            self.inner = open(&self.input)?;
        }
    }
}

impl Stream for Cache {
    fn next(&mut self, ctx: &mut dyn Ctx) -> PyResult<Option<Elem>> {
        if let Some((items, i)) = self.replay.as_mut() {
            let e = items.get(*i).cloned();
            *i += 1;
            return Ok(e);
        }
        let Some(inner) = self.inner.as_mut() else {
            return Ok(None);
        };
        match inner.next(ctx)? {
            Some(e) => {
                self.seen.push(e.clone());
                Ok(Some(e))
            }
            None => {
                // Only a complete pass fills the cache, as TF's in-memory cache.
                if let Some(Op::Cache(_, slot)) = self.owner.downcast::<Dataset>().map(|d| &d.op) {
                    *slot.borrow_mut() = Some(Rc::new(std::mem::take(&mut self.seen)));
                }
                self.inner = None;
                Ok(None)
            }
        }
    }
}

/// splitmix64: a small, well-mixed generator; the same seed gives the same order.
fn next_rand(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Stream for Shuffle {
    fn next(&mut self, ctx: &mut dyn Ctx) -> PyResult<Option<Elem>> {
        // TF's buffer shuffle: keep `size` elements, hand out a random one, refill its slot.
        while !self.done && self.buffer.len() < self.size {
            match self.inner.next(ctx)? {
                Some(e) => self.buffer.push(e),
                None => self.done = true,
            }
        }
        if self.buffer.is_empty() {
            return Ok(None);
        }
        let i = (next_rand(&mut self.rng) % self.buffer.len() as u64) as usize;
        Ok(Some(self.buffer.swap_remove(i)))
    }
}

/// A fresh stream over the dataset `v`.
pub fn open(v: &Value) -> PyResult<Box<dyn Stream>> {
    let d = dataset(v)?;
    Ok(match &d.op {
        Op::Range { .. } | Op::Tensors(_) | Op::Filter(..) | Op::Unbatch(_) | Op::Zip(..) => {
            super::stages::open_op(&d.op)?
        }
        Op::Slices(rows) => Box::new(Slices(rows.clone().into_iter())),
        Op::Map(input, f) => Box::new(Map(open(input)?, f.clone())),
        Op::Batch(input, n, drop) => Box::new(Batch(open(input)?, *n, *drop)),
        Op::Take(input, n) => Box::new(Take(open(input)?, *n)),
        Op::Skip(input, n) => Box::new(Skip(open(input)?, *n)),
        Op::Prefetch(input) => open(input)?,
        Op::Repeat(input, count) => Box::new(Repeat {
            input: input.clone(),
            inner: open(input)?,
            left: *count,
            produced: false,
        }),
        Op::Cache(input, slot) => {
            let filled = slot.borrow().clone();
            match filled {
                Some(items) => Box::new(Cache {
                    owner: v.clone(),
                    inner: None,
                    seen: vec![],
                    replay: Some((items, 0)),
                }),
                None => Box::new(Cache {
                    owner: v.clone(),
                    inner: Some(open(input)?),
                    seen: vec![],
                    replay: None,
                }),
            }
        }
        Op::Shuffle {
            input,
            buffer,
            seed,
            reshuffle,
            epochs,
        } => {
            let pass = epochs.get();
            epochs.set(pass + 1);
            let mut rng = *seed;
            if *reshuffle {
                rng ^= pass.wrapping_mul(0xA076_1D64_78BD_642F);
            }
            Box::new(Shuffle {
                inner: open(input)?,
                buffer: vec![],
                size: (*buffer).max(1),
                rng,
                done: false,
            })
        }
    })
}

/// The iterator `iter(ds)` / `ds.as_numpy_iterator()` returns.
pub struct DatasetIter {
    stream: RefCell<Box<dyn Stream>>,
    as_tensors: bool,
}

impl DatasetIter {
    pub fn value(ds: &Value, as_tensors: bool) -> PyResult<Value> {
        Ok(Value::native(DatasetIter {
            stream: RefCell::new(open(ds)?),
            as_tensors,
        }))
    }
}

impl Object for DatasetIter {
    fn type_name(&self) -> String {
        if self.as_tensors {
            "OwnedIterator"
        } else {
            "NumpyIterator"
        }
        .into()
    }
    fn iter(&self, this: &Value, _ctx: &mut dyn Ctx) -> PyResult<Value> {
        Ok(this.clone())
    }
    fn next(&self, ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        ctx.check_interrupt()?;
        let next = self.stream.borrow_mut().next(ctx)?;
        Ok(next.map(|e| e.to_value(self.as_tensors)))
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// `ds.element_spec`, shown as TF prints its nest of `TensorSpec`s.
pub struct SpecText(String);

impl SpecText {
    pub fn value(text: String) -> Value {
        Value::native(SpecText(text))
    }
}

impl Object for SpecText {
    fn type_name(&self) -> String {
        "TensorSpec".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(self.0.clone())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// A dataset turned into what `model.fit` trains on: all rows of one pass in order, the
/// dataset's batch size, and whether the pipeline shuffles (then the engine reshuffles
/// rows every epoch).
pub struct FitSource {
    pub x: Value,
    pub y: Option<Value>,
    /// The per-example weights of `(x, y, sample_weight)` elements.
    pub sample_weight: Option<Value>,
    pub batch: usize,
    pub shuffle: bool,
}

/// Batches of one structure joined along their first axis, in the same nesting (a model
/// with several inputs or outputs reads a tuple or dict of arrays).
fn concat_elems(items: &[Elem]) -> PyResult<Value> {
    let Some(first) = items.first() else {
        return Err(TfError::Value("The dataset gave no batches to train on.".into()).into());
    };
    let columns: Vec<Vec<Rc<NdArray>>> = items.iter().map(|e| e.leaves()).collect();
    let mut joined = Vec::new();
    for i in 0..first.leaves().len() {
        let parts: Vec<NdArray> = columns
            .iter()
            .map(|c| c.get(i).map(|a| (**a).clone()))
            .collect::<Option<_>>()
            .ok_or_else(|| TfError::Value("elements differ in structure".into()))?;
        joined.push(concatenate(&parts, 0).map_err(tensor_err)?);
    }
    Ok(first.with_leaves(&mut joined.into_iter())?.to_value(true))
}

/// `Some` when `v` is a dataset (or a distributed one), with at most `steps` batches taken.
pub fn fit_source(
    v: &Value,
    steps: Option<usize>,
    ctx: &mut dyn Ctx,
) -> PyResult<Option<FitSource>> {
    let v = match v.downcast::<DistDataset>() {
        Some(d) => d.dataset.clone(),
        None => v.clone(),
    };
    let Some(d) = v.downcast::<Dataset>() else {
        return Ok(None);
    };
    if d.cardinality == INFINITE && steps.is_none() {
        return Err(TfError::Value(
            "The dataset is infinite: pass steps_per_epoch (or take(n) before fit).".into(),
        )
        .into());
    }
    if !d.any_stage(&|op| matches!(op, Op::Batch(..))) {
        return Err(TfError::Value(
            "Keras expects a batched dataset here: call .batch(batch_size) on it first.".into(),
        )
        .into());
    }
    let mut stream = open(&v)?;
    let (mut xs, mut ys, mut ws) = (vec![], vec![], vec![]);
    while steps.is_none_or(|n| xs.len() < n) {
        let Some(e) = stream.next(ctx)? else { break };
        match e {
            Elem::Tuple(items) if !items.is_empty() => {
                if items.len() > 3 {
                    return Err(TfError::Value(format!(
                        "Data is expected to be in format `x`, `(x,)`, `(x, y)`, or `(x, y, \
                         sample_weight)`, found a tuple of {} elements",
                        items.len()
                    ))
                    .into());
                }
                let mut items = items.into_iter();
                xs.extend(items.next());
                ys.extend(items.next());
                ws.extend(items.next());
            }
            other => xs.push(other),
        }
    }
    let Some(batch) = xs
        .first()
        .and_then(|e| e.leaves().first().and_then(|a| a.shape().first().copied()))
    else {
        return Err(TfError::Value("The dataset gave no batches to train on.".into()).into());
    };
    let x = concat_elems(&xs)?;
    let y = match ys.is_empty() {
        true => None,
        false => Some(concat_elems(&ys)?),
    };
    let sample_weight = match ws.is_empty() {
        true => None,
        false => Some(concat_elems(&ws)?),
    };
    Ok(Some(FitSource {
        x,
        y,
        sample_weight,
        batch: batch.max(1),
        shuffle: d.any_stage(&|op| matches!(op, Op::Shuffle { .. })),
    }))
}

/// Whether `v` is a dataset `model.fit` should read through [`fit_source`].
pub fn is_dataset(v: &Value) -> bool {
    v.downcast::<Dataset>().is_some() || v.downcast::<DistDataset>().is_some()
}

/// `validation_data=` given as a dataset of `(x, y)` or `(x, y, sample_weight)`: its inputs,
/// targets and weights.
pub fn validation_pair(v: &Value, ctx: &mut dyn Ctx) -> PyResult<(Value, Value, Option<Value>)> {
    let d = fit_source(v, None, ctx)?
        .ok_or_else(|| TfError::Type("validation_data must be a dataset here".into()))?;
    let y =
        d.y.ok_or_else(|| TfError::Value("validation_data needs (x, y) elements".into()))?;
    Ok((d.x, y, d.sample_weight))
}

/// [`fit_source`] for a `fit`/`evaluate`/`predict` argument with its optional `steps`.
pub fn dataset_arg(
    x: &Value,
    steps: Option<&Value>,
    ctx: &mut dyn Ctx,
) -> PyResult<Option<FitSource>> {
    let steps = steps.map(|v| v.as_int()).transpose()?;
    fit_source(x, steps.map(|n| n.max(1) as usize), ctx)
}
