//! Ops that move elements without computing on them: reshape, transpose, expand_dims,
//! squeeze, broadcast_to, concat, stack (`Pack`), unstack (`Unpack`) and split. Each
//! one's gradient is its inverse: a reshape back, the inverse permutation, a split of a
//! concat's gradient, a sum of a broadcast's. `tile` is composed of reshapes and a
//! broadcast.

use ndarray::IxDyn;

use super::eager::Eager;
use super::error::{dims, OpError, OpResult};
use super::op::{first, inputs, node_inputs, Op};
use super::reduce::sum_to;
use super::tape::Node;
use super::tensor::Tensor;
use crate::device::Device;
use crate::tensor::build::{concatenate, stack as np_stack};
use crate::tensor::{IndexItem, NdArray};

/// How `Split` cuts its axis: into `n` equal parts, or into given sizes (one may be -1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SplitSizes {
    Even(usize),
    Sizes(Vec<i64>),
}

/// The shape ops.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShapeOp {
    /// At most one entry may be -1 (inferred).
    Reshape {
        shape: Vec<i64>,
    },
    Transpose {
        perm: Vec<i64>,
    },
    ExpandDims {
        axis: i64,
    },
    /// Removes the listed axes, which must have length 1; all length-1 axes when empty.
    Squeeze {
        axes: Vec<i64>,
    },
    BroadcastTo {
        shape: Vec<usize>,
    },
    Concat {
        axis: i64,
    },
    Pack {
        axis: i64,
    },
    Unpack {
        axis: i64,
    },
    Split {
        axis: i64,
        sizes: SplitSizes,
    },
}

fn norm(axis: i64, n: usize) -> Option<usize> {
    let k = if axis < 0 { axis + n as i64 } else { axis };
    (0..n as i64).contains(&k).then_some(k as usize)
}

impl ShapeOp {
    pub fn name(&self) -> &'static str {
        match self {
            ShapeOp::Reshape { .. } => "Reshape",
            ShapeOp::Transpose { .. } => "Transpose",
            ShapeOp::ExpandDims { .. } => "ExpandDims",
            ShapeOp::Squeeze { .. } => "Squeeze",
            ShapeOp::BroadcastTo { .. } => "BroadcastTo",
            ShapeOp::Concat { .. } => "ConcatV2",
            ShapeOp::Pack { .. } => "Pack",
            ShapeOp::Unpack { .. } => "Unpack",
            ShapeOp::Split {
                sizes: SplitSizes::Even(_),
                ..
            } => "Split",
            ShapeOp::Split { .. } => "SplitV",
        }
    }

    pub(crate) fn forward(&self, dev: &dyn Device, given: &[&NdArray]) -> OpResult<Vec<NdArray>> {
        let dev = dev.name();
        let op = self.name();
        let kernel = |m: &str| OpError::kernel(op, &dev, m);
        let tensor = |e| OpError::from_tensor(op, &dev, e);
        Ok(match self {
            ShapeOp::Reshape { shape } => {
                let [x] = inputs::<1>(op, given)?;
                vec![reshape_checked(x, shape, &dev)?]
            }
            ShapeOp::Transpose { perm } => {
                let [x] = inputs::<1>(op, given)?;
                let n = x.ndim();
                if perm.len() != n {
                    return Err(OpError::framed(
                        op,
                        op,
                        &dev,
                        &format!(
                            "transpose expects a vector of size {n}. But input(1) is a vector of size {}",
                            perm.len()
                        ),
                        None,
                    ));
                }
                for d in 0..n as i64 {
                    if !perm.iter().any(|&p| p == d || p + n as i64 == d) {
                        let listed: Vec<String> = perm.iter().map(|p| p.to_string()).collect();
                        return Err(OpError::framed(
                            op,
                            op,
                            &dev,
                            &format!("{d} is missing from {{{}}}.", listed.join(",")),
                            None,
                        ));
                    }
                }
                vec![x.transpose(Some(perm)).map_err(tensor)?]
            }
            ShapeOp::ExpandDims { axis } => {
                let [x] = inputs::<1>(op, given)?;
                let n = x.ndim() as i64;
                if *axis < -n - 1 || *axis > n {
                    return Err(kernel(&format!(
                        "Tried to expand dim index {axis} for tensor with {n} dimensions."
                    )));
                }
                vec![x.expand_dims(*axis).map_err(tensor)?]
            }
            ShapeOp::Squeeze { axes } => {
                let [x] = inputs::<1>(op, given)?;
                let n = x.ndim();
                let mut drop = Vec::new();
                for &a in axes {
                    let Some(k) = norm(a, n) else {
                        return Err(kernel(&format!(
                            "Tried to squeeze dim index {a} for tensor with {n} dimensions."
                        )));
                    };
                    if x.shape()[k] != 1 {
                        return Err(kernel(&format!(
                            "Can not squeeze dim[{k}], expected a dimension of 1, got {}",
                            x.shape()[k]
                        )));
                    }
                    drop.push(k);
                }
                let new: Vec<i64> = x
                    .shape()
                    .iter()
                    .enumerate()
                    .filter(|(i, &d)| {
                        if axes.is_empty() {
                            d != 1
                        } else {
                            !drop.contains(i)
                        }
                    })
                    .map(|(_, &d)| d as i64)
                    .collect();
                vec![x.reshape(&new).map_err(tensor)?]
            }
            ShapeOp::BroadcastTo { shape } => {
                let [x] = inputs::<1>(op, given)?;
                crate::tensor::check_alloc(shape, x.dtype()).map_err(tensor)?;
                vec![broadcast_array(x, shape).ok_or_else(|| {
                    kernel(&format!(
                        "Incompatible shapes: {} vs. {}",
                        dims(x.shape()),
                        dims(shape)
                    ))
                })?]
            }
            ShapeOp::Concat { axis } => {
                let n = given.len();
                let frame = format!("ConcatV2_N_{n}");
                let fail = |m: String| OpError::framed(&frame, op, &dev, &m, Some("concat"));
                let Some(head) = given.first() else {
                    return Err(fail("ConcatOp : Expected at least one input".into()));
                };
                let rank = head.ndim();
                let Some(k) = norm(*axis, rank) else {
                    return Err(fail(format!(
                        "ConcatOp : Expected concatenating dimensions in the range [{}, {}), but got {axis}",
                        -(rank as i64),
                        rank
                    )));
                };
                for (i, t) in given.iter().enumerate().skip(1) {
                    if t.dtype() != head.dtype() {
                        return Err(OpError::input_dtype(op, i, head.dtype(), t.dtype()));
                    }
                    if t.ndim() != rank {
                        return Err(fail(format!(
                            "ConcatOp : Ranks of all input tensors should match: shape[0] = {} vs. shape[{i}] = {}",
                            dims(head.shape()),
                            dims(t.shape())
                        )));
                    }
                    for d in 0..rank {
                        if d != k && t.shape()[d] != head.shape()[d] {
                            return Err(fail(format!(
                                "ConcatOp : Dimension {d} in both shapes must be equal: shape[0] = {} vs. shape[{i}] = {}",
                                dims(head.shape()),
                                dims(t.shape())
                            )));
                        }
                    }
                }
                let owned: Vec<NdArray> = given.iter().map(|&t| t.clone()).collect();
                vec![concatenate(&owned, k as i64).map_err(tensor)?]
            }
            ShapeOp::Pack { axis } => {
                let n = given.len();
                let frame = format!("Pack_N_{n}");
                let fail = |m: String| OpError::framed(&frame, op, &dev, &m, Some("stack"));
                let Some(head) = given.first() else {
                    return Err(fail("Pack expects at least one input".into()));
                };
                let Some(k) = norm(*axis, head.ndim() + 1) else {
                    return Err(fail(format!(
                        "axis = {axis} not in [{}, {})",
                        -(head.ndim() as i64) - 1,
                        head.ndim() + 1
                    )));
                };
                for (i, t) in given.iter().enumerate().skip(1) {
                    if t.dtype() != head.dtype() {
                        return Err(OpError::input_dtype(op, i, head.dtype(), t.dtype()));
                    }
                    if t.shape() != head.shape() {
                        return Err(fail(format!(
                            "Shapes of all inputs must match: values[0].shape = {} != values[{i}].shape = {}",
                            dims(head.shape()),
                            dims(t.shape())
                        )));
                    }
                }
                let owned: Vec<NdArray> = given.iter().map(|&t| t.clone()).collect();
                vec![np_stack(&owned, k as i64).map_err(tensor)?]
            }
            ShapeOp::Unpack { axis } => {
                let [x] = inputs::<1>(op, given)?;
                let Some(k) = norm(*axis, x.ndim()) else {
                    return Err(kernel(&format!(
                        "axis = {axis} not in [{}, {})",
                        -(x.ndim() as i64),
                        x.ndim()
                    )));
                };
                let mut out = Vec::with_capacity(x.shape()[k]);
                for i in 0..x.shape()[k] {
                    let mut items = vec![IndexItem::Slice(None, None, None); k];
                    items.push(IndexItem::Int(i as i64));
                    out.push(x.get(&items).map_err(tensor)?);
                }
                out
            }
            ShapeOp::Split { axis, sizes } => {
                let [x] = inputs::<1>(op, given)?;
                let n = x.ndim();
                let Some(k) = norm(*axis, n) else {
                    return Err(kernel(&format!(
                        "-{n} <= split_dim < {n} is required, but got {axis}"
                    )));
                };
                let len = x.shape()[k];
                let pieces = split_sizes(sizes, len, k).map_err(|m| match sizes {
                    SplitSizes::Even(p) => OpError::framed(
                        &format!("Split_num_split_{p}"),
                        op,
                        &dev,
                        &m,
                        Some("split"),
                    ),
                    SplitSizes::Sizes(_) => OpError::framed(op, op, &dev, &m, Some("split")),
                })?;
                let mut out = Vec::with_capacity(pieces.len());
                let mut start = 0usize;
                for p in pieces {
                    let mut items = vec![IndexItem::Slice(None, None, None); k];
                    items.push(IndexItem::Slice(
                        Some(start as i64),
                        Some((start + p) as i64),
                        None,
                    ));
                    out.push(x.get(&items).map_err(tensor)?);
                    start += p;
                }
                out
            }
        })
    }

    pub(crate) fn vjp(
        &self,
        e: &mut Eager,
        node: &Node,
        grads: &[Tensor],
    ) -> OpResult<Vec<Option<Tensor>>> {
        Ok(match self {
            ShapeOp::Reshape { .. } | ShapeOp::ExpandDims { .. } | ShapeOp::Squeeze { .. } => {
                let [x] = node_inputs::<1>(node)?;
                let (_, dy) = first(node, grads)?;
                let shape: Vec<i64> = x.shape().iter().map(|&d| d as i64).collect();
                vec![Some(reshape(e, dy, &shape)?)]
            }
            ShapeOp::Transpose { perm } => {
                let (_, dy) = first(node, grads)?;
                let n = perm.len() as i64;
                let mut inv = vec![0i64; perm.len()];
                for (i, &p) in perm.iter().enumerate() {
                    let p = if p < 0 { p + n } else { p };
                    if let Some(slot) = inv.get_mut(p as usize) {
                        *slot = i as i64;
                    }
                }
                vec![Some(transpose(e, dy, &inv)?)]
            }
            ShapeOp::BroadcastTo { .. } => {
                let [x] = node_inputs::<1>(node)?;
                let (_, dy) = first(node, grads)?;
                vec![Some(sum_to(e, dy.clone(), x.shape())?)]
            }
            ShapeOp::Concat { axis } => {
                let (_, dy) = first(node, grads)?;
                let k = norm(*axis, dy.ndim()).unwrap_or(0);
                let sizes: Vec<i64> = node
                    .inputs
                    .iter()
                    .map(|t| t.shape().get(k).copied().unwrap_or(0) as i64)
                    .collect();
                split(e, dy, k as i64, SplitSizes::Sizes(sizes))?
                    .into_iter()
                    .map(Some)
                    .collect()
            }
            ShapeOp::Pack { axis } => {
                let (_, dy) = first(node, grads)?;
                unstack(e, dy, *axis)?.into_iter().map(Some).collect()
            }
            ShapeOp::Unpack { axis } => vec![Some(stack(e, grads, *axis)?)],
            ShapeOp::Split { axis, .. } => vec![Some(concat(e, grads, *axis)?)],
        })
    }
}

/// `tf.reshape`'s checks and TF's messages (which it prints without an op name).
fn reshape_checked(x: &NdArray, shape: &[i64], dev: &str) -> OpResult<NdArray> {
    let op = "Reshape";
    let fail = |m: String| OpError::framed(op, op, dev, &m, None);
    let unknown: Vec<usize> = shape
        .iter()
        .enumerate()
        .filter(|(_, &d)| d == -1)
        .map(|(i, _)| i)
        .collect();
    if unknown.len() > 1 {
        return Err(fail(format!(
            "Only one input size may be -1, not both {} and {}",
            unknown[0], unknown[1]
        )));
    }
    if let Some(bad) = shape.iter().find(|&&d| d < -1) {
        return Err(fail(format!("Size {bad} must be non-negative, not {bad}")));
    }
    // Saturating: a product too large for i64 is a mismatch, not an overflow.
    let known: i64 = shape
        .iter()
        .filter(|&&d| d >= 0)
        .fold(1i64, |a, &d| a.saturating_mul(d));
    let size = x.size() as i64;
    if unknown.is_empty() && known != size {
        return Err(fail(format!(
            "Input to reshape is a tensor with {size} values, but the requested shape has {known}"
        )));
    }
    if !unknown.is_empty() && (known == 0 || size % known != 0) {
        return Err(fail(format!(
            "Input to reshape is a tensor with {size} values, but the requested shape requires a multiple of {known}"
        )));
    }
    x.reshape(shape)
        .map_err(|e| OpError::from_tensor(op, dev, e))
}

/// `x` broadcast to `shape` (numpy's rules), or `None` when it does not broadcast.
fn broadcast_array(x: &NdArray, shape: &[usize]) -> Option<NdArray> {
    use crate::tensor::Data;
    let sh = IxDyn(shape);
    Some(NdArray::new(match &x.data {
        Data::Bool(a) => Data::Bool(a.broadcast(sh)?.to_owned()),
        Data::U8(a) => Data::U8(a.broadcast(sh)?.to_owned()),
        Data::I32(a) => Data::I32(a.broadcast(sh)?.to_owned()),
        Data::I64(a) => Data::I64(a.broadcast(sh)?.to_owned()),
        Data::F32(a) => Data::F32(a.broadcast(sh)?.to_owned()),
        Data::F64(a) => Data::F64(a.broadcast(sh)?.to_owned()),
    }))
}

/// The lengths of the pieces `Split` cuts an axis of length `len` into.
fn split_sizes(sizes: &SplitSizes, len: usize, axis: usize) -> Result<Vec<usize>, String> {
    match sizes {
        SplitSizes::Even(0) => Err("Number of ways to split should be > 0, but got 0".into()),
        SplitSizes::Even(n) => {
            if !len.is_multiple_of(*n) {
                return Err(format!(
                    "Number of ways to split should evenly divide the split dimension, but got \
                     split_dim {axis} (size = {len}) and num_split {n}"
                ));
            }
            Ok(vec![len / n; *n])
        }
        SplitSizes::Sizes(s) => {
            let known: i64 = s.iter().filter(|&&d| d >= 0).sum();
            let unknown = s.iter().filter(|&&d| d < 0).count();
            let fill = len as i64 - known;
            if unknown > 1 || (unknown == 0 && fill != 0) || fill < 0 {
                return Err(format!(
                    "Determined shape must either match input shape along split_dim exactly if \
                     fully specified, or be less than the size of the input along split_dim if \
                     not fully specified.  Got: {known}"
                ));
            }
            Ok(s.iter()
                .map(|&d| if d < 0 { fill as usize } else { d as usize })
                .collect())
        }
    }
}

// Builders.

pub fn reshape(e: &mut Eager, x: &Tensor, shape: &[i64]) -> OpResult<Tensor> {
    if x.shape().len() == shape.len() && x.shape().iter().zip(shape).all(|(&a, &b)| a as i64 == b) {
        return Ok(x.clone());
    }
    e.execute1(
        Op::Shape(ShapeOp::Reshape {
            shape: shape.to_vec(),
        }),
        std::slice::from_ref(x),
    )
}

pub fn transpose(e: &mut Eager, x: &Tensor, perm: &[i64]) -> OpResult<Tensor> {
    e.execute1(
        Op::Shape(ShapeOp::Transpose {
            perm: perm.to_vec(),
        }),
        std::slice::from_ref(x),
    )
}

pub fn expand_dims(e: &mut Eager, x: &Tensor, axis: i64) -> OpResult<Tensor> {
    e.execute1(
        Op::Shape(ShapeOp::ExpandDims { axis }),
        std::slice::from_ref(x),
    )
}

pub fn squeeze(e: &mut Eager, x: &Tensor, axes: &[i64]) -> OpResult<Tensor> {
    e.execute1(
        Op::Shape(ShapeOp::Squeeze {
            axes: axes.to_vec(),
        }),
        std::slice::from_ref(x),
    )
}

pub fn broadcast_to(e: &mut Eager, x: &Tensor, shape: &[usize]) -> OpResult<Tensor> {
    if x.shape() == shape {
        return Ok(x.clone());
    }
    e.execute1(
        Op::Shape(ShapeOp::BroadcastTo {
            shape: shape.to_vec(),
        }),
        std::slice::from_ref(x),
    )
}

pub fn concat(e: &mut Eager, xs: &[Tensor], axis: i64) -> OpResult<Tensor> {
    e.execute1(Op::Shape(ShapeOp::Concat { axis }), xs)
}

pub fn stack(e: &mut Eager, xs: &[Tensor], axis: i64) -> OpResult<Tensor> {
    e.execute1(Op::Shape(ShapeOp::Pack { axis }), xs)
}

pub fn unstack(e: &mut Eager, x: &Tensor, axis: i64) -> OpResult<Vec<Tensor>> {
    e.execute(Op::Shape(ShapeOp::Unpack { axis }), std::slice::from_ref(x))
}

pub fn split(e: &mut Eager, x: &Tensor, axis: i64, sizes: SplitSizes) -> OpResult<Vec<Tensor>> {
    e.execute(
        Op::Shape(ShapeOp::Split { axis, sizes }),
        std::slice::from_ref(x),
    )
}

/// `tf.tile(x, multiples)`, composed of a reshape that puts a length-1 axis before each
/// axis, a broadcast of those axes to the multiples and a reshape that merges each pair:
/// the gradient is the broadcast's (summed over the copies), so no kernel of its own.
pub fn tile(e: &mut Eager, x: &Tensor, multiples: &[i64]) -> OpResult<Tensor> {
    let dev = e.device().name();
    let fail = |m: String| OpError::framed("Tile", "Tile", &dev, &m, None);
    let shape = x.shape().to_vec();
    if multiples.len() != shape.len() {
        return Err(fail(format!(
            "Expected multiples argument to be a vector of length {} but got length {}",
            shape.len(),
            multiples.len()
        )));
    }
    if let Some((i, m)) = multiples.iter().enumerate().find(|(_, &m)| m < 0) {
        return Err(fail(format!("Expected multiples[{i}] >= 0, but got {m}")));
    }
    let mut spread = Vec::with_capacity(2 * shape.len());
    let mut wide = Vec::with_capacity(2 * shape.len());
    let mut merged = Vec::with_capacity(shape.len());
    for (&d, &m) in shape.iter().zip(multiples) {
        spread.extend([1, d as i64]);
        wide.extend([m as usize, d]);
        merged.push(m * d as i64);
    }
    let spread = reshape(e, x, &spread)?;
    let wide = broadcast_to(e, &spread, &wide)?;
    reshape(e, &wide, &merged)
}
