//! `strategy.experimental_distribute_dataset`: iterating a dataset with every global batch
//! split over the strategy's replicas as TF's MirroredStrategy splits it (`ceil(b / N)`
//! examples per replica in order, the last ones possibly fewer or none), through
//! `distribute::split_batch`. Each leaf becomes a `PerReplica` value that `strategy.run`
//! unwraps per replica. Also `strategy.distribute_datasets_from_function(fn)`: `fn` gets a
//! `tf.distribute.InputContext` and returns a dataset of per-replica batches, whose
//! consecutive elements go to the replicas in turn. The pipeline itself runs in `iter.rs`.

use std::any::Any;
use std::cell::RefCell;

use super::dataset::Elem;
use super::iter::{dataset, open, Stream};
use crate::bindings::tf::convert::{tensor_err, tensor_value};
use crate::bindings::tf::values::DistributedValues;
use crate::lang::{Args, Ctx, Object, PyResult, Value};
use crate::tensor::array::NdArray;
use crate::tensor::index::IndexItem;

/// Rows `range` of an array; an empty range keeps the trailing shape, as TF's empty parts.
fn rows(a: &NdArray, range: std::ops::Range<usize>) -> PyResult<NdArray> {
    if range.is_empty() {
        let mut shape = a.shape().to_vec();
        if let Some(first) = shape.first_mut() {
            *first = 0;
        }
        return NdArray::zeros(&shape, a.dtype()).map_err(tensor_err);
    }
    // One slice of the batch, copied once (not row by row and stacked).
    let (start, end) = (range.start as i64, range.end as i64);
    a.get(&[IndexItem::Slice(Some(start), Some(end), None)])
        .map_err(tensor_err)
}

/// A global batch as per-replica values, keeping its nesting (a tuple of PerReplica).
fn split_elem(e: &Elem, replicas: usize) -> PyResult<Value> {
    Ok(match e {
        Elem::Leaf(a) => {
            let b = a.shape().first().copied().unwrap_or(0);
            let mut parts = Vec::with_capacity(replicas);
            for r in crate::distribute::split_batch(b, replicas) {
                parts.push(tensor_value(rows(a, r)?));
            }
            DistributedValues::per_replica(parts)
        }
        Elem::Tuple(items) => Value::tuple(
            items
                .iter()
                .map(|x| split_elem(x, replicas))
                .collect::<PyResult<_>>()?,
        ),
        Elem::Dict(pairs) => {
            let mut vals = Vec::with_capacity(pairs.len());
            for (k, x) in pairs {
                vals.push((k.as_str(), split_elem(x, replicas)?));
            }
            Value::dict_from(vals)
        }
    })
}

/// Consecutive elements of a dataset of per-replica batches, one per replica, as one
/// element of per-replica values (each leaf a `PerReplica`).
fn group_elems(elems: &[Elem]) -> PyResult<Value> {
    let Some(first) = elems.first() else {
        return Ok(Value::None);
    };
    Ok(match first {
        Elem::Leaf(_) => DistributedValues::per_replica(
            elems
                .iter()
                .map(|e| match e {
                    Elem::Leaf(a) => Ok(tensor_value((**a).clone())),
                    other => Ok(other.to_value(true)),
                })
                .collect::<PyResult<_>>()?,
        ),
        Elem::Tuple(items) => {
            let mut out = Vec::with_capacity(items.len());
            for i in 0..items.len() {
                let column: Vec<Elem> = elems
                    .iter()
                    .filter_map(|e| match e {
                        Elem::Tuple(t) => t.get(i).cloned(),
                        _ => None,
                    })
                    .collect();
                out.push(group_elems(&column)?);
            }
            Value::tuple(out)
        }
        Elem::Dict(pairs) => {
            let mut vals = Vec::with_capacity(pairs.len());
            for (k, _) in pairs {
                let column: Vec<Elem> = elems
                    .iter()
                    .filter_map(|e| match e {
                        Elem::Dict(d) => d.iter().find(|(dk, _)| dk == k).map(|(_, x)| x.clone()),
                        _ => None,
                    })
                    .collect();
                vals.push((k.as_str(), group_elems(&column)?));
            }
            Value::dict_from(vals)
        }
    })
}

/// What `strategy.experimental_distribute_dataset(ds)` returns.
pub struct DistDataset {
    pub dataset: Value,
    pub replicas: usize,
    /// Whether the dataset holds per-replica batches (`distribute_datasets_from_function`)
    /// rather than global batches to split.
    pub per_replica: bool,
}

struct DistIter {
    stream: RefCell<Box<dyn Stream>>,
    replicas: usize,
    per_replica: bool,
}

impl Object for DistDataset {
    fn type_name(&self) -> String {
        "DistributedDataset".into()
    }
    fn iter(&self, _this: &Value, _ctx: &mut dyn Ctx) -> PyResult<Value> {
        Ok(Value::native(DistIter {
            stream: RefCell::new(open(&self.dataset)?),
            replicas: self.replicas,
            per_replica: self.per_replica,
        }))
    }
    fn getattr(&self, _this: &Value, name: &str, ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        match name {
            "element_spec" => Ok(Some(ctx.getattr(&self.dataset, name)?)),
            _ => Ok(None),
        }
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl Object for DistIter {
    fn type_name(&self) -> String {
        "DistributedIterator".into()
    }
    fn iter(&self, this: &Value, _ctx: &mut dyn Ctx) -> PyResult<Value> {
        Ok(this.clone())
    }
    fn next(&self, ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        ctx.check_interrupt()?;
        if self.per_replica && self.replicas > 1 {
            // Every replica takes the next element; a step that not every replica can
            // fill ends the iteration.
            let mut elems = Vec::with_capacity(self.replicas);
            for _ in 0..self.replicas {
                match self.stream.borrow_mut().next(ctx)? {
                    Some(e) => elems.push(e),
                    None => return Ok(None),
                }
            }
            return group_elems(&elems).map(Some);
        }
        let next = self.stream.borrow_mut().next(ctx)?;
        match next {
            // One replica sees plain tensors, as TF gives no PerReplica wrapper then.
            Some(e) if self.replicas <= 1 => Ok(Some(e.to_value(true))),
            Some(e) => split_elem(&e, self.replicas).map(Some),
            None => Ok(None),
        }
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// `strategy.experimental_distribute_dataset(dataset, options=None)`.
pub fn distribute(replicas: usize, args: &Args) -> PyResult<Value> {
    let s = args.bind(
        "experimental_distribute_dataset",
        &["dataset", "options"],
        1,
    )?;
    let ds = s[0].clone().unwrap_or(Value::None);
    dataset(&ds)?;
    Ok(Value::native(DistDataset {
        dataset: ds,
        replicas,
        per_replica: false,
    }))
}

/// `strategy.distribute_datasets_from_function(dataset_fn, options=None)`: one input
/// pipeline (this kernel runs one worker), whose dataset yields per-replica batches.
pub fn from_function(replicas: usize, args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind(
        "distribute_datasets_from_function",
        &["dataset_fn", "options"],
        1,
    )?;
    let f = s[0].clone().unwrap_or(Value::None);
    let input = Value::native(InputContext { replicas });
    let ds = ctx.call(&f, Args::new(vec![input]))?;
    dataset(&ds)?;
    Ok(Value::native(DistDataset {
        dataset: ds,
        replicas,
        per_replica: true,
    }))
}

/// `tf.distribute.InputContext`: what a dataset function learns about the input pipeline
/// it builds (here always the one pipeline of the one worker).
pub struct InputContext {
    pub replicas: usize,
}

impl Object for InputContext {
    fn type_name(&self) -> String {
        "InputContext".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok("tf.distribute.InputContext(input pipeline id 0, total: 1)".into())
    }
    fn getattr(&self, this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        Ok(match name {
            "num_input_pipelines" => Some(Value::Int(1)),
            "input_pipeline_id" => Some(Value::Int(0)),
            "num_replicas_in_sync" => Some(Value::Int(self.replicas as i64)),
            "get_per_replica_batch_size" => Some(crate::bindings::tf::bound::<InputContext>(
                this,
                name,
                |c, _, args, _| {
                    let s = args.bind("get_per_replica_batch_size", &["global_batch_size"], 1)?;
                    let global = s[0].as_ref().map_or(Ok(0), Value::as_int)?;
                    let n = c.replicas.max(1) as i64;
                    if global % n != 0 {
                        return Err(crate::lang::PyErr::value_error(format!(
                            "The `global_batch_size` {global} is not divisible by `num_replicas_in_sync` {n} "
                        )));
                    }
                    Ok(Value::Int(global / n))
                },
            )),
            _ => None,
        })
    }
    fn dir(&self) -> Vec<String> {
        [
            "num_input_pipelines",
            "input_pipeline_id",
            "num_replicas_in_sync",
            "get_per_replica_batch_size",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}
