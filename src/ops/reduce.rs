//! Reductions over axes (`Sum`, `Mean`, `Max`, `Min`, `Prod`, `Any`, `All`) with
//! `keepdims`, the arg-reductions (`ArgMax`, `ArgMin`), and [`sum_to`], which sums a
//! broadcast gradient back to an input's shape. Values come from the tensor part's
//! reductions (floats accumulate in float64, rounded once), with TF's dtype rule: the
//! result keeps the input's dtype (an int32 mean stays int32). Gradients follow TF's
//! `math_grad.py`: a sum's gradient is broadcast back, a max's is shared among the
//! maxima.

use super::eager::Eager;
use super::elementwise::{binary, cast, div, mul, Binary};
use super::error::{ErrorClass, OpError, OpResult, NUMBER};
use super::op::{first, inputs, node_inputs, Op};
use super::shape::{broadcast_to, reshape};
use super::tape::Node;
use super::tensor::Tensor;
use crate::device::Device;
use crate::tensor::{DType, NdArray, Reduction};

/// Which reduction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReduceKind {
    Sum,
    Mean,
    Max,
    Min,
    Prod,
    Any,
    All,
}

/// A reduction over `axes` (all axes when `None`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reduce {
    pub kind: ReduceKind,
    pub axes: Option<Vec<i64>>,
    pub keepdims: bool,
}

/// The reduced axes of a tensor of rank `nd`, sorted, with TF's error for a bad one.
fn axes_of(op: &str, dev: &str, axes: Option<&[i64]>, nd: usize) -> OpResult<Vec<usize>> {
    let mut out = match axes {
        None => (0..nd).collect(),
        Some(ax) => {
            let mut v = Vec::with_capacity(ax.len());
            for &a in ax {
                let k = if a < 0 { a + nd as i64 } else { a };
                if k < 0 || k >= nd as i64 {
                    return Err(OpError::kernel(
                        op,
                        dev,
                        &format!(
                            "Invalid reduction dimension ({a} for input with {nd} dimension(s)"
                        ),
                    ));
                }
                v.push(k as usize);
            }
            v
        }
    };
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// The input's shape with the reduced axes kept as length 1.
fn kept_shape(shape: &[usize], axes: &[usize]) -> Vec<i64> {
    shape
        .iter()
        .enumerate()
        .map(|(i, &d)| if axes.contains(&i) { 1 } else { d as i64 })
        .collect()
}

impl Reduce {
    pub fn name(&self) -> &'static str {
        match self.kind {
            ReduceKind::Sum => "Sum",
            ReduceKind::Mean => "Mean",
            ReduceKind::Max => "Max",
            ReduceKind::Min => "Min",
            ReduceKind::Prod => "Prod",
            ReduceKind::Any => "Any",
            ReduceKind::All => "All",
        }
    }

    pub(crate) fn forward(&self, dev: &dyn Device, given: &[&NdArray]) -> OpResult<Vec<NdArray>> {
        let [x] = inputs::<1>(self.name(), given)?;
        let dev = dev.name();
        let dt = x.dtype();
        let logical = matches!(self.kind, ReduceKind::Any | ReduceKind::All);
        if logical && dt != DType::Bool {
            return Err(OpError::input_dtype(self.name(), 0, DType::Bool, dt));
        }
        if !logical && dt == DType::Bool {
            return Err(OpError::attr_dtype(
                self.name(),
                "input:T, reduction_indices:Tidx -> output:T",
                dt,
                NUMBER,
            ));
        }
        let axes = axes_of(self.name(), &dev, self.axes.as_deref(), x.ndim())?;
        let empty = axes.iter().any(|&a| x.shape()[a] == 0);
        if empty && matches!(self.kind, ReduceKind::Max | ReduceKind::Min) {
            // TF reduces an empty lane to the identity of max (lowest) or min (highest).
            let mut shape: Vec<usize> = Vec::new();
            for (i, &d) in x.shape().iter().enumerate() {
                if !axes.contains(&i) {
                    shape.push(d);
                } else if self.keepdims {
                    shape.push(1);
                }
            }
            let v = match (self.kind, dt.is_float()) {
                (ReduceKind::Max, true) => f64::NEG_INFINITY,
                (ReduceKind::Min, true) => f64::INFINITY,
                (ReduceKind::Max, false) => min_of(dt),
                _ => max_of(dt),
            };
            let out = NdArray::full(&shape, v, dt)
                .map_err(|e| OpError::from_tensor(self.name(), &dev, e))?;
            return Ok(vec![out]);
        }
        let r = match self.kind {
            ReduceKind::Sum => Reduction::Sum,
            ReduceKind::Mean => Reduction::Mean,
            ReduceKind::Max => Reduction::Max,
            ReduceKind::Min => Reduction::Min,
            ReduceKind::Prod => Reduction::Prod,
            ReduceKind::Any => Reduction::Any,
            ReduceKind::All => Reduction::All,
        };
        let ax: Vec<i64> = axes.iter().map(|&a| a as i64).collect();
        let out = x
            .reduce(r, Some(&ax), self.keepdims, 0.0)
            .map_err(|e| OpError::from_tensor(self.name(), &dev, e))?;
        Ok(vec![out.astype(dt)])
    }

    pub(crate) fn vjp(
        &self,
        e: &mut Eager,
        node: &Node,
        grads: &[Tensor],
    ) -> OpResult<Vec<Option<Tensor>>> {
        let [x] = node_inputs::<1>(node)?;
        let (y, dy) = first(node, grads)?;
        let axes = axes_of(self.name(), "CPU:0", self.axes.as_deref(), x.ndim())?;
        let kshape = kept_shape(x.shape(), &axes);
        let dy_k = reshape(e, dy, &kshape)?;
        let g = match self.kind {
            ReduceKind::Sum => broadcast_to(e, &dy_k, x.shape())?,
            ReduceKind::Mean => {
                let n: usize = axes.iter().map(|&a| x.shape()[a]).product();
                let b = broadcast_to(e, &dy_k, x.shape())?;
                div(e, &b, &Tensor::scalar(n.max(1) as f64, x.dtype()))?
            }
            ReduceKind::Max | ReduceKind::Min => {
                let y_k = reshape(e, y, &kshape)?;
                let eq = binary(e, Binary::Equal, &y_k, x)?;
                let ind = cast(e, &eq, x.dtype())?;
                let num = reduce(e, &ind, ReduceKind::Sum, Some(axes_i64(&axes)), true)?;
                let share = div(e, &ind, &num)?;
                mul(e, &share, &dy_k)?
            }
            ReduceKind::Prod => {
                let others = e.execute1(
                    Op::ProdGrad(ProdGrad {
                        axes: axes_i64(&axes),
                    }),
                    std::slice::from_ref(x),
                )?;
                let b = broadcast_to(e, &dy_k, x.shape())?;
                mul(e, &b, &others)?
            }
            ReduceKind::Any | ReduceKind::All => return Ok(vec![None]),
        };
        Ok(vec![Some(g)])
    }
}

fn axes_i64(axes: &[usize]) -> Vec<i64> {
    axes.iter().map(|&a| a as i64).collect()
}

fn min_of(dt: DType) -> f64 {
    match dt {
        DType::U8 => 0.0,
        DType::I32 => i32::MIN as f64,
        _ => i64::MIN as f64,
    }
}

fn max_of(dt: DType) -> f64 {
    match dt {
        DType::U8 => 255.0,
        DType::I32 => i32::MAX as f64,
        _ => i64::MAX as f64,
    }
}

/// The gradient of a product: for every element, the product of the other elements of
/// its reduced lane (computed from prefix and suffix products, so zeros are exact). TF
/// computes this inside `Prod`'s gradient with ops of its own and registers no gradient
/// for it; neither does this library, so a second derivative through `reduce_prod` raises
/// TF's `LookupError`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProdGrad {
    pub axes: Vec<i64>,
}

impl ProdGrad {
    pub fn name(&self) -> &'static str {
        "ProdGrad"
    }

    pub(crate) fn forward(&self, dev: &dyn Device, given: &[&NdArray]) -> OpResult<Vec<NdArray>> {
        let [x] = inputs::<1>(self.name(), given)?;
        let dev = dev.name();
        let nd = x.ndim();
        let axes = axes_of(self.name(), &dev, Some(&self.axes), nd)?;
        // Move the reduced axes last, so each lane is contiguous.
        let keep: Vec<usize> = (0..nd).filter(|a| !axes.contains(a)).collect();
        let mut perm: Vec<i64> = keep.iter().map(|&a| a as i64).collect();
        perm.extend(axes.iter().map(|&a| a as i64));
        let moved = x
            .transpose(Some(&perm))
            .map_err(|e| OpError::from_tensor(self.name(), &dev, e))?;
        let lane: usize = axes.iter().map(|&a| x.shape()[a]).product();
        let v: Vec<f64> = moved.to_f64_array().iter().copied().collect();
        let mut out = vec![0.0; v.len()];
        if lane > 0 {
            for (src, dst) in v.chunks_exact(lane).zip(out.chunks_exact_mut(lane)) {
                let mut left = 1.0;
                for i in 0..lane {
                    dst[i] = left;
                    left *= src[i];
                }
                let mut right = 1.0;
                for i in (0..lane).rev() {
                    dst[i] *= right;
                    right *= src[i];
                }
            }
        }
        let moved_out = NdArray::from_f64(moved.shape(), out)
            .map_err(|e| OpError::from_tensor(self.name(), &dev, e))?;
        let mut back = vec![0i64; nd];
        for (pos, &a) in perm.iter().enumerate() {
            back[a as usize] = pos as i64;
        }
        let res = moved_out
            .transpose(Some(&back))
            .map_err(|e| OpError::from_tensor(self.name(), &dev, e))?;
        Ok(vec![res.astype(x.dtype())])
    }
}

/// Arg-max or arg-min along one axis, as `output` (int64 by default).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgReduce {
    pub max: bool,
    pub axis: i64,
    pub output: DType,
}

impl ArgReduce {
    pub fn name(&self) -> &'static str {
        if self.max {
            "ArgMax"
        } else {
            "ArgMin"
        }
    }

    pub(crate) fn forward(&self, dev: &dyn Device, given: &[&NdArray]) -> OpResult<Vec<NdArray>> {
        let [x] = inputs::<1>(self.name(), given)?;
        let dev = dev.name();
        let nd = x.ndim() as i64;
        if self.axis < -nd.max(1) || self.axis >= nd.max(1) {
            return Err(OpError::kernel(
                self.name(),
                &dev,
                &format!(
                    "Expected dimension in the range [{}, {}), but got {}",
                    -nd, nd, self.axis
                ),
            ));
        }
        if x.dtype() == DType::Bool {
            return Err(OpError::attr_dtype(
                self.name(),
                "input:T, dimension:Tidx -> output:output_type",
                x.dtype(),
                NUMBER,
            ));
        }
        let r = if self.max {
            Reduction::ArgMax
        } else {
            Reduction::ArgMin
        };
        let axis = if nd == 0 { None } else { Some(vec![self.axis]) };
        let out = x
            .reduce(r, axis.as_deref(), false, 0.0)
            .map_err(|e| OpError::from_tensor(self.name(), &dev, e))?;
        Ok(vec![out.astype(self.output)])
    }
}

/// Runs a reduction through the context.
pub fn reduce(
    e: &mut Eager,
    x: &Tensor,
    kind: ReduceKind,
    axes: Option<Vec<i64>>,
    keepdims: bool,
) -> OpResult<Tensor> {
    e.execute1(
        Op::Reduce(Reduce {
            kind,
            axes,
            keepdims,
        }),
        std::slice::from_ref(x),
    )
}

pub fn reduce_sum(
    e: &mut Eager,
    x: &Tensor,
    axes: Option<Vec<i64>>,
    keepdims: bool,
) -> OpResult<Tensor> {
    reduce(e, x, ReduceKind::Sum, axes, keepdims)
}

pub fn reduce_mean(
    e: &mut Eager,
    x: &Tensor,
    axes: Option<Vec<i64>>,
    keepdims: bool,
) -> OpResult<Tensor> {
    reduce(e, x, ReduceKind::Mean, axes, keepdims)
}

/// Sums `g` over the axes broadcasting added to reach it from `shape`, then gives it that
/// shape: how a broadcast operand receives its gradient.
pub fn sum_to(e: &mut Eager, g: Tensor, shape: &[usize]) -> OpResult<Tensor> {
    if g.shape() == shape {
        return Ok(g);
    }
    let gs = g.shape().to_vec();
    if gs.len() < shape.len() {
        return Err(OpError::new(
            ErrorClass::InvalidArgument,
            format!(
                "Incompatible shapes: gradient {} cannot be summed to {}",
                super::error::dims(&gs),
                super::error::dims(shape)
            ),
        ));
    }
    let lead = gs.len() - shape.len();
    let mut axes: Vec<i64> = (0..lead as i64).collect();
    for (i, &d) in shape.iter().enumerate() {
        if d == 1 && gs[lead + i] != 1 {
            axes.push((lead + i) as i64);
        }
    }
    let s = if axes.is_empty() {
        g
    } else {
        reduce_sum(e, &g, Some(axes), false)?
    };
    let target: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
    reshape(e, &s, &target)
}
