//! `strategy.experimental_distribute_dataset`: iterating a dataset with every global batch
//! split over the strategy's replicas as TF's MirroredStrategy splits it (`ceil(b / N)`
//! examples per replica in order, the last ones possibly fewer or none), through
//! `distribute::split_batch`. Each leaf becomes a `PerReplica` value that `strategy.run`
//! unwraps per replica. The pipeline itself runs in `iter.rs`.

use std::any::Any;
use std::cell::RefCell;

use super::dataset::Elem;
use super::iter::{dataset, open, Stream};
use crate::bindings::tf::convert::{tensor_err, tensor_value};
use crate::bindings::tf::values::DistributedValues;
use crate::lang::{Args, Ctx, Object, PyResult, Value};
use crate::tensor::array::NdArray;
use crate::tensor::build::stack;

/// Rows `range` of an array; an empty range keeps the trailing shape, as TF's empty parts.
fn rows(a: &NdArray, range: std::ops::Range<usize>) -> PyResult<NdArray> {
    if range.is_empty() {
        let mut shape = a.shape().to_vec();
        if let Some(first) = shape.first_mut() {
            *first = 0;
        }
        return NdArray::zeros(&shape, a.dtype()).map_err(tensor_err);
    }
    let parts: Vec<NdArray> = range
        .map(|i| a.row(i))
        .collect::<Result<_, _>>()
        .map_err(tensor_err)?;
    stack(&parts, 0).map_err(tensor_err)
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

/// What `strategy.experimental_distribute_dataset(ds)` returns.
pub struct DistDataset {
    pub dataset: Value,
    pub replicas: usize,
}

struct DistIter {
    stream: RefCell<Box<dyn Stream>>,
    replicas: usize,
}

impl Object for DistDataset {
    fn type_name(&self) -> String {
        "DistributedDataset".into()
    }
    fn iter(&self, _this: &Value, _ctx: &mut dyn Ctx) -> PyResult<Value> {
        Ok(Value::native(DistIter {
            stream: RefCell::new(open(&self.dataset)?),
            replicas: self.replicas,
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
    }))
}
