//! `tf.data`: the `Dataset` pipeline a cell builds (`from_tensor_slices`, `map`, `batch`,
//! `shuffle`, `cache`, `prefetch`, `take`, `skip`, `repeat`; `range`, `from_tensors`, `zip`,
//! `filter` and `unbatch` are in `stages.rs`), its cardinality, element spec
//! and reprs. A dataset is an immutable description; each iteration builds a fresh stream
//! (see `iter.rs`), so `repeat` and per-epoch reshuffling work as in TF. Elements are
//! trees of arrays ([`Elem`]) and become `tf.Tensor` values only when a cell sees them.
//! This file holds no training code; `model.fit` asks `iter::fit_source` for arrays.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::rc::Rc;

pub use super::element::Elem;
use super::iter::{self as data_iter, DatasetIter};
use crate::bindings::tf::convert::{tensor_err, tensor_value};
use crate::bindings::tf::{bound, func, given, TfError};
use crate::lang::{Args, Ctx, NativeClass, NativeModule, Object, PyResult, Value};
use crate::tensor::array::NdArray;

/// TF's cardinality for a dataset that never ends.
pub const INFINITE: i64 = -1;
/// TF's cardinality for a dataset whose length cannot be known without running it.
pub const UNKNOWN: i64 = -2;

/// One stage of a pipeline. Each holds its input dataset, so a stage can restart it.
pub enum Op {
    Slices(Vec<Elem>),
    Map(Value, Value),
    Batch(Value, usize, bool),
    Shuffle {
        input: Value,
        buffer: usize,
        seed: u64,
        reshuffle: bool,
        /// How many iterations have started, mixed into the seed when reshuffling.
        epochs: Cell<u64>,
    },
    Cache(Value, RefCell<Option<Rc<Vec<Elem>>>>),
    Prefetch(Value),
    Take(Value, i64),
    Skip(Value, i64),
    Repeat(Value, Option<i64>),
    /// `Dataset.range`: `n` integers from `start` by `step`, as `dtype`.
    Range {
        start: i64,
        step: i64,
        n: i64,
        dtype: crate::tensor::DType,
    },
    Tensors(Elem),
    Filter(Value, Value),
    Unbatch(Value),
    /// Component datasets, and the dict keys when zipped from a dict.
    Zip(Vec<Value>, Option<Vec<String>>),
}

/// A `tf.data.Dataset`: one stage, its element spec (a sample element's shapes and
/// whether its leading axis is a batch of unknown size) and its cardinality.
pub struct Dataset {
    pub op: Op,
    pub sample: Elem,
    pub batched: bool,
    pub cardinality: i64,
}

impl Dataset {
    fn class_name(&self) -> &'static str {
        match self.op {
            Op::Slices(_) => "_TensorSliceDataset",
            Op::Map(..) => "_MapDataset",
            Op::Batch(..) => "_BatchDataset",
            Op::Shuffle { .. } => "_ShuffleDataset",
            Op::Cache(..) => "CacheDataset",
            Op::Prefetch(_) => "_PrefetchDataset",
            Op::Take(..) => "_TakeDataset",
            Op::Skip(..) => "_SkipDataset",
            Op::Repeat(..) => "_RepeatDataset",
            Op::Range { .. } => "_RangeDataset",
            Op::Tensors(_) => "_TensorDataset",
            Op::Filter(..) => "_FilterDataset",
            Op::Unbatch(_) => "_UnbatchDataset",
            Op::Zip(..) => "_ZipDataset",
        }
    }

    pub fn element_spec(&self) -> String {
        self.sample.spec(self.batched)
    }

    /// Whether any stage matches `pred` (fit asks whether the pipeline shuffles, batches).
    pub fn any_stage(&self, pred: &dyn Fn(&Op) -> bool) -> bool {
        if pred(&self.op) {
            return true;
        }
        match &self.op {
            Op::Slices(_) | Op::Range { .. } | Op::Tensors(_) => false,
            Op::Zip(parts, _) => parts
                .iter()
                .any(|d| d.downcast::<Dataset>().is_some_and(|d| d.any_stage(pred))),
            Op::Shuffle { input: d, .. }
            | Op::Filter(d, _)
            | Op::Unbatch(d)
            | Op::Map(d, _)
            | Op::Batch(d, ..)
            | Op::Cache(d, _)
            | Op::Prefetch(d)
            | Op::Take(d, _)
            | Op::Skip(d, _)
            | Op::Repeat(d, _) => d.downcast::<Dataset>().is_some_and(|d| d.any_stage(pred)),
        }
    }

    fn derive(&self, op: Op, cardinality: i64) -> Value {
        Value::native(Dataset {
            op,
            sample: self.sample.clone(),
            batched: self.batched,
            cardinality,
        })
    }
}

fn from_tensor_slices(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind("from_tensor_slices", &["tensors", "name"], 1)?;
    let whole = Elem::from_value(s[0].as_ref().unwrap_or(&Value::None), ctx)?;
    let leaves = whole.leaves();
    let n = match leaves.first().map(|a| a.shape().first().copied()) {
        Some(Some(n)) => n,
        _ => {
            return Err(TfError::Value(
                "Unbatching a tensor is only supported for rank >= 1".into(),
            )
            .into())
        }
    };
    if leaves.iter().any(|a| a.shape().first() != Some(&n)) {
        let dims: Vec<String> = leaves
            .iter()
            .map(|a| a.shape().first().map_or("?".into(), |d| d.to_string()))
            .collect();
        return Err(TfError::Value(format!(
            "Dimensions {} in both shapes must be equal: every component needs the same number of rows ({})",
            dims.join(" and "),
            dims.join(", ")
        ))
        .into());
    }
    let mut rows = Vec::with_capacity(n);
    for i in 0..n {
        rows.push(whole.map_leaves(&mut |a| a.row(i).map_err(tensor_err))?);
    }
    // The spec comes from row 0's shapes; an empty dataset keeps the shapes minus axis 0.
    let sample = match rows.first() {
        Some(r) => r.clone(),
        None => whole.map_leaves(&mut |a| {
            let shape: Vec<usize> = a.shape().iter().skip(1).copied().collect();
            NdArray::zeros(&shape, a.dtype()).map_err(tensor_err)
        })?,
    };
    Ok(Value::native(Dataset {
        op: Op::Slices(rows),
        sample,
        batched: false,
        cardinality: n as i64,
    }))
}

pub(crate) fn int_arg(v: Option<&Value>, default: i64) -> PyResult<i64> {
    match v {
        None => Ok(default),
        Some(v) => match crate::bindings::tf::convert::held_array(v) {
            Some(a) if a.ndim() == 0 => Ok(a.to_i64_vec().1.first().copied().unwrap_or(default)),
            _ => v.as_int(),
        },
    }
}

fn batch(d: &Dataset, this: &Value, args: &Args) -> PyResult<Value> {
    let s = args.bind(
        "batch",
        &[
            "batch_size",
            "drop_remainder",
            "num_parallel_calls",
            "deterministic",
            "name",
        ],
        1,
    )?;
    let n = int_arg(given(&s[0]), 1)?;
    if n <= 0 {
        return Err(TfError::Value(format!("batch_size must be positive, got {n}")).into());
    }
    let drop = given(&s[1]).map_or(Ok(false), |v| v.as_bool_strict())?;
    let card = match d.cardinality {
        c if c < 0 => c,
        c if drop => c / n,
        c => (c + n - 1) / n,
    };
    let n = n as usize;
    let sample = d.sample.map_leaves(&mut |a| {
        crate::tensor::build::stack(std::slice::from_ref(a), 0).map_err(tensor_err)
    })?;
    Ok(Value::native(Dataset {
        op: Op::Batch(this.clone(), n, drop),
        sample,
        // With drop_remainder every batch has n rows, so TF knows the leading axis.
        batched: !drop,
        cardinality: card,
    }))
    .map(|v| if drop { fix_leading(&v, n) } else { v })
}

/// A dropped-remainder batch spec shows its static size: the sample gets `n` rows.
fn fix_leading(v: &Value, n: usize) -> Value {
    let Some(d) = v.downcast::<Dataset>() else {
        return v.clone();
    };
    let grown = d.sample.map_leaves(&mut |a| {
        let rows: Vec<NdArray> = (0..n)
            .map(|_| a.row(0))
            .collect::<Result<_, _>>()
            .map_err(tensor_err)?;
        crate::tensor::build::stack(&rows, 0).map_err(tensor_err)
    });
    match (grown, &d.op) {
        (Ok(sample), Op::Batch(inner, n, drop)) => Value::native(Dataset {
            op: Op::Batch(inner.clone(), *n, *drop),
            sample,
            batched: false,
            cardinality: d.cardinality,
        }),
        _ => v.clone(),
    }
}

fn map(d: &Dataset, this: &Value, args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind(
        "map",
        &["map_func", "num_parallel_calls", "deterministic", "name"],
        1,
    )?;
    let f = s[0].clone().unwrap_or(Value::None);
    // TF traces the function once when the stage is built; the traced output gives the spec.
    let sample = data_iter::apply_map(&f, &d.sample, ctx)?;
    Ok(Value::native(Dataset {
        op: Op::Map(this.clone(), f),
        sample,
        batched: d.batched,
        cardinality: d.cardinality,
    }))
}

fn shuffle(d: &Dataset, this: &Value, args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind(
        "shuffle",
        &["buffer_size", "seed", "reshuffle_each_iteration", "name"],
        1,
    )?;
    let buffer = int_arg(given(&s[0]), 1)?;
    if buffer <= 0 && buffer != INFINITE {
        return Err(TfError::Value("buffer_size must be greater than zero.".into()).into());
    }
    let seed = match given(&s[1]) {
        Some(v) => v.as_int()? as u64,
        // Without a seed each dataset gets its own stream, different across sessions' cells.
        None => ctx.execution_count().wrapping_mul(0x9E37_79B9) ^ (d as *const Dataset as u64),
    };
    let reshuffle = given(&s[2]).map_or(Ok(true), |v| v.as_bool_strict())?;
    Ok(d.derive(
        Op::Shuffle {
            input: this.clone(),
            buffer: if buffer < 0 {
                usize::MAX
            } else {
                buffer as usize
            },
            seed,
            reshuffle,
            epochs: Cell::new(0),
        },
        d.cardinality,
    ))
}

fn take_skip(d: &Dataset, this: &Value, args: &Args, take: bool) -> PyResult<Value> {
    let name = if take { "take" } else { "skip" };
    let s = args.bind(name, &["count", "name"], 1)?;
    let n = int_arg(given(&s[0]), -1)?;
    let c = d.cardinality;
    let card = if take {
        match (n, c) {
            (n, _) if n < 0 => c,
            (n, INFINITE) => n,
            (_, UNKNOWN) => UNKNOWN,
            (n, c) => n.min(c),
        }
    } else {
        match (n, c) {
            (n, c) if n < 0 => {
                if c == INFINITE {
                    INFINITE
                } else {
                    0
                }
            }
            (_, c) if c < 0 => c,
            (n, c) => (c - n).max(0),
        }
    };
    let op = if take {
        Op::Take(this.clone(), n)
    } else {
        Op::Skip(this.clone(), n)
    };
    Ok(d.derive(op, card))
}

fn repeat(d: &Dataset, this: &Value, args: &Args) -> PyResult<Value> {
    let s = args.bind("repeat", &["count", "name"], 0)?;
    let count = match given(&s[0]) {
        None => None,
        Some(v) => Some(int_arg(Some(v), -1)?).filter(|n| *n >= 0),
    };
    let c = d.cardinality;
    let card = match (count, c) {
        (_, 0) | (Some(0), _) => 0,
        (None, _) => INFINITE,
        (Some(_), c) if c < 0 => c,
        (Some(k), c) => k * c,
    };
    Ok(d.derive(Op::Repeat(this.clone(), count), card))
}

fn method(this: &Value, name: &str) -> Option<Value> {
    let name_owned = name.to_string();
    Some(match name {
        "batch" | "map" | "shuffle" | "take" | "skip" | "repeat" | "cache" | "prefetch"
        | "cardinality" | "as_numpy_iterator" | "with_options" | "filter" | "unbatch" => {
            bound::<Dataset>(this, name, move |d, this, a, c| match name_owned.as_str() {
                "batch" => batch(d, this, a),
                "map" => map(d, this, a, c),
                "shuffle" => shuffle(d, this, a, c),
                "take" => take_skip(d, this, a, true),
                "skip" => take_skip(d, this, a, false),
                "repeat" => repeat(d, this, a),
                "filter" => super::stages::filter(d, this, a, c),
                "unbatch" => super::stages::unbatch(d, this, a),
                "cache" => Ok(d.derive(Op::Cache(this.clone(), RefCell::new(None)), d.cardinality)),
                "prefetch" => Ok(d.derive(Op::Prefetch(this.clone()), d.cardinality)),
                "cardinality" => Ok(tensor_value(
                    NdArray::from_i64(&[], vec![d.cardinality]).map_err(tensor_err)?,
                )),
                "as_numpy_iterator" => DatasetIter::value(this, false),
                _ => Ok(this.clone()),
            })
        }
        _ => return None,
    })
}

impl Object for Dataset {
    fn type_name(&self) -> String {
        self.class_name().into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(format!(
            "<{} element_spec={}>",
            self.class_name(),
            self.element_spec()
        ))
    }
    fn getattr(&self, this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        if name == "element_spec" {
            return Ok(Some(self.sample.spec_value(self.batched)));
        }
        Ok(method(this, name))
    }
    fn dir(&self) -> Vec<String> {
        [
            "as_numpy_iterator",
            "batch",
            "cache",
            "cardinality",
            "element_spec",
            "filter",
            "map",
            "prefetch",
            "repeat",
            "shuffle",
            "skip",
            "take",
            "unbatch",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    }
    fn len(&self, _ctx: &mut dyn Ctx) -> PyResult<Option<usize>> {
        match self.cardinality {
            INFINITE => Err(TfError::Type("The dataset is infinite.".into()).into()),
            UNKNOWN => Err(TfError::Type("The dataset length is unknown.".into()).into()),
            n => Ok(Some(n.max(0) as usize)),
        }
    }
    fn iter(&self, this: &Value, _ctx: &mut dyn Ctx) -> PyResult<Value> {
        DatasetIter::value(this, true)
    }
    /// Every stage is a `DatasetV2`, TF's class behind `tf.data.Dataset`.
    fn class_chain(&self) -> Vec<String> {
        vec![self.class_name().into(), "DatasetV2".into()]
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// The `tf.data` module.
pub fn module() -> Value {
    // A class (so `isinstance(ds, tf.data.Dataset)` holds for every stage, whose class chain
    // names `DatasetV2`) that also holds TF's static constructors.
    let ds = NativeClass::new(
        "DatasetV2",
        "tensorflow.python.data.ops.dataset_ops",
        "Represents a potentially large set of elements.",
    )
    .static_attr(
        "from_tensor_slices",
        func(
            "from_tensor_slices",
            "Slices the tensors along their first axis.",
            from_tensor_slices,
        ),
    )
    .static_attr(
        "from_tensors",
        func(
            "from_tensors",
            "One element holding the whole structure.",
            super::stages::from_tensors,
        ),
    )
    .static_attr(
        "range",
        func(
            "range",
            "range(start, stop, step, output_type=tf.int64)",
            super::stages::range,
        ),
    )
    .static_attr(
        "zip",
        func(
            "zip",
            "Zips datasets into a dataset of tuples (or dicts).",
            super::stages::zip,
        ),
    );
    NativeModule::new("tensorflow.data", "tf.data input pipelines.")
        .with("Dataset", ds.into_value())
        .with("AUTOTUNE", Value::Int(-1))
        .with("INFINITE_CARDINALITY", Value::Int(INFINITE))
        .with("UNKNOWN_CARDINALITY", Value::Int(UNKNOWN))
        .with(
            "experimental",
            NativeModule::new("tensorflow.data.experimental", "")
                .with("AUTOTUNE", Value::Int(-1))
                .with("INFINITE_CARDINALITY", Value::Int(INFINITE))
                .with("UNKNOWN_CARDINALITY", Value::Int(UNKNOWN))
                .into_value(),
        )
        .into_value()
}
