//! Ops that select elements by their values: `Unique` (`tf.unique` and
//! `tf.unique_with_counts`: the distinct values in order of first appearance, each
//! element's position among them, and their counts) and `TopKV2` (`tf.math.top_k`: the k
//! largest values of each last-axis lane and their positions, ties broken by position).
//! Both compute on the host array, with TF's error texts. `Unique` has no gradient, as in
//! TF; `TopKV2`'s gradient scatters the values' gradient back to the chosen positions (an
//! `UnsortedSegmentSum` of the flattened lanes). Selection by position lives in `index.rs`.

use std::collections::HashMap;

use super::eager::Eager;
use super::error::{OpError, OpResult};
use super::index::IndexOp;
use super::op::{first, inputs, node_inputs, Op};
use super::shape::reshape;
use super::tape::Node;
use super::tensor::Tensor;
use crate::device::Device;
use crate::tensor::{DType, IndexItem, NdArray};

/// The value-selecting ops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SelectOp {
    /// Input `[x]` (1-D); outputs `[y, idx, count]`, `idx` and `count` of `out_idx`.
    /// `counts` says which TF op the caller asked for (`UniqueWithCounts` or `Unique`):
    /// they differ only in their name and error framing.
    Unique { out_idx: DType, counts: bool },
    /// Input `[x]` (rank >= 1); outputs `[values, indices]` (int32) of the `k` largest.
    TopK { k: i64 },
}

/// A value as a hashable key: floats by their bits (with -0.0 as 0.0, which compares
/// equal), integers and bools as themselves.
fn keys_of(x: &NdArray) -> Vec<i64> {
    if x.dtype().is_float() {
        x.to_f64_vec()
            .1
            .into_iter()
            .map(|v| if v == 0.0 { 0 } else { v.to_bits() as i64 })
            .collect()
    } else {
        x.to_i64_vec().1
    }
}

impl SelectOp {
    pub fn name(&self) -> &'static str {
        match self {
            SelectOp::Unique { counts: true, .. } => "UniqueWithCounts",
            SelectOp::Unique { .. } => "Unique",
            SelectOp::TopK { .. } => "TopKV2",
        }
    }

    pub(crate) fn forward(&self, dev: &dyn Device, given: &[&NdArray]) -> OpResult<Vec<NdArray>> {
        let op = self.name();
        let dn = dev.name();
        let tensor = |e| OpError::from_tensor(op, &dn, e);
        let [x] = inputs::<1>(op, given)?;
        match *self {
            SelectOp::Unique { out_idx, counts } => {
                if x.ndim() != 1 {
                    // TF names the op in its error only for `unique_with_counts`.
                    let name = counts.then_some("");
                    let m = "unique expects a 1D vector.";
                    return Err(OpError::framed(op, op, &dn, m, name));
                }
                let keys = keys_of(x);
                let mut seen: HashMap<i64, usize> = HashMap::new();
                let mut firsts: Vec<usize> = Vec::new();
                let mut counts: Vec<i64> = Vec::new();
                let mut idx: Vec<i64> = Vec::with_capacity(keys.len());
                for (i, k) in keys.iter().enumerate() {
                    let at = *seen.entry(*k).or_insert_with(|| {
                        firsts.push(i);
                        counts.push(0);
                        firsts.len() - 1
                    });
                    if let Some(c) = counts.get_mut(at) {
                        *c += 1;
                    }
                    idx.push(at as i64);
                }
                let firsts: Vec<i64> = firsts.iter().map(|&i| i as i64).collect();
                let firsts = NdArray::from_i64(&[firsts.len()], firsts).map_err(tensor)?;
                let y = x.get(&[IndexItem::Array(firsts)]).map_err(tensor)?;
                let n = idx.len();
                let u = counts.len();
                Ok(vec![
                    y,
                    NdArray::from_i64(&[n], idx)
                        .map_err(tensor)?
                        .astype(out_idx),
                    NdArray::from_i64(&[u], counts)
                        .map_err(tensor)?
                        .astype(out_idx),
                ])
            }
            SelectOp::TopK { k } => {
                let Some(&n) = x.shape().last() else {
                    return Err(OpError::framed(
                        op,
                        op,
                        &dn,
                        "input must be >= 1-D, got shape []",
                        Some(""),
                    ));
                };
                if k < 0 {
                    let m = format!("Need k >= 0, got {k}");
                    return Err(OpError::framed(op, op, &dn, &m, None));
                }
                let k = k as usize;
                if n < k {
                    let m = format!("input must have at least k columns. Had {n}, needed {k}");
                    return Err(OpError::framed(op, op, &dn, &m, None));
                }
                let (_, vals) = x.to_f64_vec();
                let rows = vals.len().checked_div(n).unwrap_or(0);
                let mut order: Vec<i64> = Vec::with_capacity(rows * k);
                for lane in vals.chunks(n.max(1)).take(rows) {
                    let mut pos: Vec<usize> = (0..n).collect();
                    // Stable: equal values keep their order, so the lower position wins.
                    pos.sort_by(|&a, &b| lane[b].total_cmp(&lane[a]));
                    order.extend(pos.iter().take(k).map(|&p| p as i64));
                }
                let flat: Vec<i64> = order
                    .iter()
                    .enumerate()
                    .map(|(i, &p)| (i / k.max(1) * n) as i64 + p)
                    .collect();
                let mut shape = x.shape().to_vec();
                if let Some(last) = shape.last_mut() {
                    *last = k;
                }
                let dims: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
                let flat = NdArray::from_i64(&[flat.len()], flat).map_err(tensor)?;
                let values = x
                    .ravel()
                    .get(&[IndexItem::Array(flat)])
                    .and_then(|v| v.reshape(&dims))
                    .map_err(tensor)?;
                let indices = NdArray::from_i64(&shape, order)
                    .map_err(tensor)?
                    .astype(DType::I32);
                Ok(vec![values, indices])
            }
        }
    }

    pub(crate) fn vjp(
        &self,
        e: &mut Eager,
        node: &Node,
        grads: &[Tensor],
    ) -> OpResult<Vec<Option<Tensor>>> {
        match self {
            SelectOp::Unique { .. } => Err(OpError::no_gradient(self.name())),
            SelectOp::TopK { .. } => {
                let (_, dy) = first(node, grads)?;
                let [x] = node_inputs::<1>(node)?;
                let Some(indices) = node.outputs.get(1) else {
                    return Err(OpError::internal("TopKV2 node has no indices output"));
                };
                let n = x.shape().last().copied().unwrap_or(0);
                let k = indices.shape().last().copied().unwrap_or(0).max(1);
                let (_, idx) = indices.value().to_i64_vec();
                let flat: Vec<i64> = idx
                    .iter()
                    .enumerate()
                    .map(|(i, &p)| (i / k * n) as i64 + p)
                    .collect();
                let flat = NdArray::from_i64(&[flat.len()], flat)
                    .map_err(|err| OpError::from_tensor("TopKV2", "CPU:0", err))?;
                let dy_flat = reshape(e, dy, &[-1])?;
                let dx = e.execute1(
                    Op::Index(IndexOp::GatherGrad {
                        axis: 0,
                        shape: vec![x.value().size()],
                    }),
                    &[dy_flat, Tensor::new(flat)],
                )?;
                let dims: Vec<i64> = x.shape().iter().map(|&d| d as i64).collect();
                Ok(vec![Some(reshape(e, &dx, &dims)?)])
            }
        }
    }
}

/// `tf.unique(x, out_idx)` (or `tf.unique_with_counts` when `counts`): `[y, idx, count]`.
pub fn unique(e: &mut Eager, x: &Tensor, out_idx: DType, counts: bool) -> OpResult<Vec<Tensor>> {
    e.execute(
        Op::Select(SelectOp::Unique { out_idx, counts }),
        std::slice::from_ref(x),
    )
}

/// `tf.math.top_k(x, k)`: `[values, indices]`.
pub fn top_k(e: &mut Eager, x: &Tensor, k: i64) -> OpResult<Vec<Tensor>> {
    e.execute(Op::Select(SelectOp::TopK { k }), std::slice::from_ref(x))
}
