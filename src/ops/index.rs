//! Ops that select elements by position: strided slices (what `tensor[...]` runs, with
//! integers, ranges with steps, `tf.newaxis` and `...`), `tf.slice`, `tf.gather` along an
//! axis, and `tf.one_hot`. Selection reuses the tensor part's indexing. The gradient of
//! a selection scatters the output gradient back into zeros of the input's shape
//! (`StridedSliceGrad`, and for gather a scatter-add, since an index may repeat); the
//! gradient of a scatter is the selection again.

use super::eager::Eager;
use super::error::{ErrorClass, OpError, OpResult};
use super::op::{first, inputs, node_inputs, Op};
use super::tape::Node;
use super::tensor::Tensor;
use crate::device::Device;
use crate::tensor::{DType, IndexItem, NdArray};

/// One item of a slice spec.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SliceItem {
    Index(i64),
    Range(Option<i64>, Option<i64>, Option<i64>),
    NewAxis,
    Ellipsis,
}

/// The selection ops.
#[derive(Debug, Clone, PartialEq)]
pub enum IndexOp {
    StridedSlice {
        spec: Vec<SliceItem>,
    },
    /// Input `[dy]`: `dy` written into zeros of `shape` where `spec` selects.
    StridedSliceGrad {
        shape: Vec<usize>,
        spec: Vec<SliceItem>,
    },
    /// `tf.slice(x, begin, size)`; a size of -1 runs to the end of the axis.
    Slice {
        begin: Vec<i64>,
        size: Vec<i64>,
    },
    /// Inputs `[params, indices]`.
    Gather {
        axis: i64,
    },
    /// Inputs `[dy, indices]`: `dy` summed into zeros of `shape` at the gathered rows.
    GatherGrad {
        axis: i64,
        shape: Vec<usize>,
    },
    /// Input `[condition]`: the coordinates of its true (non-zero) elements, `[n, rank]`
    /// int64 (`tf.where` with one argument).
    Where,
    /// Input `[indices]`.
    OneHot {
        depth: usize,
        on: f64,
        off: f64,
        axis: i64,
        dtype: DType,
    },
}

fn items_of(spec: &[SliceItem]) -> Vec<IndexItem> {
    spec.iter()
        .map(|s| match *s {
            SliceItem::Index(i) => IndexItem::Int(i),
            SliceItem::Range(a, b, c) => IndexItem::Slice(a, b, c),
            SliceItem::NewAxis => IndexItem::NewAxis,
            SliceItem::Ellipsis => IndexItem::Ellipsis,
        })
        .collect()
}

/// TF's checks of a strided slice against the input's shape.
fn check_spec(spec: &[SliceItem], shape: &[usize], dev: &str) -> OpResult<()> {
    let op = "StridedSlice";
    let fail = |m: String| OpError::framed(op, op, dev, &m, Some("strided_slice/"));
    let consumed = spec
        .iter()
        .filter(|s| !matches!(s, SliceItem::NewAxis | SliceItem::Ellipsis))
        .count();
    let n = shape.len();
    if consumed > n {
        return Err(fail(format!(
            "Index out of range using input dim {n}; input has only {n} dims"
        )));
    }
    if spec
        .iter()
        .filter(|s| matches!(s, SliceItem::Ellipsis))
        .count()
        > 1
    {
        return Err(OpError::new(
            ErrorClass::Value,
            "Multiple ellipses in slice spec not allowed",
        ));
    }
    let mut dim = 0usize;
    for (pos, s) in spec.iter().enumerate() {
        match *s {
            SliceItem::Ellipsis => {
                let after = spec[pos + 1..]
                    .iter()
                    .filter(|s| !matches!(s, SliceItem::NewAxis | SliceItem::Ellipsis))
                    .count();
                dim = n - after;
            }
            SliceItem::NewAxis => {}
            SliceItem::Index(i) => {
                let d = shape[dim] as i64;
                if i < -d || i >= d {
                    return Err(fail(format!(
                        "slice index {i} of dimension {dim} out of bounds."
                    )));
                }
                dim += 1;
            }
            SliceItem::Range(_, _, Some(0)) => {
                return Err(fail(format!("strides[{pos}] must be non-zero")));
            }
            SliceItem::Range(..) => dim += 1,
        }
    }
    Ok(())
}

/// The equivalent slice spec of `tf.slice(begin, size)`, after TF's checks.
fn slice_spec(begin: &[i64], size: &[i64], shape: &[usize], dev: &str) -> OpResult<Vec<SliceItem>> {
    let op = "Slice";
    let fail = |m: String| OpError::framed(op, op, dev, &m, None);
    if begin.len() != shape.len() || size.len() != shape.len() {
        return Err(fail(format!(
            "Expected begin and size arguments to be 1-D tensors of size {}, but got shapes [{}] and [{}] instead.",
            shape.len(),
            begin.len(),
            size.len()
        )));
    }
    let mut spec = Vec::with_capacity(shape.len());
    for (i, (&b, &s)) in begin.iter().zip(size).enumerate() {
        let d = shape[i] as i64;
        if b < 0 || b > d {
            return Err(fail(format!(
                "Expected begin[{i}] in [0, {d}], but got {b}"
            )));
        }
        let s = if s == -1 { d - b } else { s };
        if s < 0 || b + s > d {
            return Err(fail(format!(
                "Expected size[{i}] in [0, {}], but got {s}",
                d - b
            )));
        }
        spec.push(SliceItem::Range(Some(b), Some(b + s), None));
    }
    Ok(spec)
}

fn norm_axis(op: &str, dev: &str, axis: i64, n: usize) -> OpResult<usize> {
    let k = if axis < 0 { axis + n as i64 } else { axis };
    if k < 0 || k >= n as i64 {
        return Err(OpError::framed(
            op,
            op,
            dev,
            &format!(
                "Expected axis in the range [{}, {}), but got {axis}",
                -(n as i64),
                n
            ),
            None,
        ));
    }
    Ok(k as usize)
}

/// `indices[i,j] = v is not in [0, n)` for the first bad index, as TF reports it.
fn check_indices(op: &str, dev: &str, idx: &NdArray, n: usize) -> OpResult<Vec<i64>> {
    let (shape, vals) = idx.to_i64_vec();
    for (flat, &v) in vals.iter().enumerate() {
        if v < 0 || v >= n as i64 {
            let mut coords = vec![0usize; shape.len()];
            let mut rem = flat;
            for (c, &d) in coords.iter_mut().zip(&shape).rev() {
                *c = rem % d.max(1);
                rem /= d.max(1);
            }
            let at: Vec<String> = coords.iter().map(|c| c.to_string()).collect();
            return Err(OpError::framed(
                op,
                op,
                dev,
                &format!("indices[{}] = {v} is not in [0, {n})", at.join(",")),
                None,
            ));
        }
    }
    Ok(vals)
}

impl IndexOp {
    pub fn name(&self) -> &'static str {
        match self {
            IndexOp::StridedSlice { .. } => "StridedSlice",
            IndexOp::StridedSliceGrad { .. } => "StridedSliceGrad",
            IndexOp::Slice { .. } => "Slice",
            IndexOp::Gather { .. } => "GatherV2",
            IndexOp::GatherGrad { .. } => "UnsortedSegmentSum",
            IndexOp::Where => "Where",
            IndexOp::OneHot { .. } => "OneHot",
        }
    }

    pub(crate) fn forward(&self, dev: &dyn Device, given: &[&NdArray]) -> OpResult<Vec<NdArray>> {
        let op = self.name();
        let dn = dev.name();
        let tensor = |e| OpError::from_tensor(op, &dn, e);
        Ok(vec![match self {
            IndexOp::StridedSlice { spec } => {
                let [x] = inputs::<1>(op, given)?;
                check_spec(spec, x.shape(), &dn)?;
                x.get(&items_of(spec)).map_err(tensor)?
            }
            IndexOp::Slice { begin, size } => {
                let [x] = inputs::<1>(op, given)?;
                let spec = slice_spec(begin, size, x.shape(), &dn)?;
                x.get(&items_of(&spec)).map_err(tensor)?
            }
            IndexOp::StridedSliceGrad { shape, spec } => {
                let [dy] = inputs::<1>(op, given)?;
                let mut out = NdArray::zeros(shape, dy.dtype()).map_err(tensor)?;
                check_spec(spec, shape, &dn)?;
                out.set(&items_of(spec), dy).map_err(tensor)?;
                out
            }
            IndexOp::Gather { axis } => {
                let [params, idx] = inputs::<2>(op, given)?;
                if !idx.dtype().is_int() {
                    return Err(OpError::attr_dtype(
                        op,
                        "params:Tparams, indices:Tindices, axis:Taxis -> output:Tparams",
                        idx.dtype(),
                        super::error::Allowed(
                            "int16, int32, int64",
                            "DT_INT16, DT_INT32, DT_INT64",
                        ),
                    ));
                }
                let k = norm_axis(op, &dn, *axis, params.ndim())?;
                check_indices(op, &dn, idx, params.shape()[k])?;
                let mut items = vec![IndexItem::Slice(None, None, None); k];
                items.push(IndexItem::Array(idx.astype(DType::I64)));
                params.get(&items).map_err(tensor)?
            }
            IndexOp::GatherGrad { axis, shape } => {
                let [dy, idx] = inputs::<2>(op, given)?;
                let k = norm_axis(op, &dn, *axis, shape.len())?;
                let n = shape[k];
                let ids = check_indices(op, &dn, idx, n)?;
                let outer: usize = shape[..k].iter().product();
                let inner: usize = shape[k + 1..].iter().product();
                let m = ids.len();
                let (_, g) = dy.to_f64_vec();
                if g.len() != outer * m * inner {
                    return Err(OpError::kernel(
                        op,
                        &dn,
                        "gradient does not match the gathered shape",
                    ));
                }
                let mut out = vec![0.0; outer * n * inner];
                for o in 0..outer {
                    for (j, &id) in ids.iter().enumerate() {
                        let src = &g[(o * m + j) * inner..(o * m + j + 1) * inner];
                        let at = (o * n + id as usize) * inner;
                        out[at..at + inner]
                            .iter_mut()
                            .zip(src)
                            .for_each(|(d, s)| *d += s);
                    }
                }
                NdArray::from_f64(shape, out)
                    .map_err(tensor)?
                    .astype(dy.dtype())
            }
            IndexOp::Where => {
                let [c] = inputs::<1>(op, given)?;
                let mask = c.to_bool_array();
                let rank = c.ndim();
                let mut coords = Vec::new();
                for (ix, &v) in mask.indexed_iter() {
                    if v {
                        coords.extend((0..rank).map(|d| ix[d] as i64));
                    }
                }
                let n = coords.len() / rank.max(1);
                NdArray::from_i64(&[n, rank], coords).map_err(tensor)?
            }
            IndexOp::OneHot {
                depth,
                on,
                off,
                axis,
                dtype,
            } => {
                let [idx] = inputs::<1>(op, given)?;
                if !idx.dtype().is_int() {
                    return Err(OpError::attr_dtype(
                        op,
                        "indices:TI, depth:int32, on_value:T, off_value:T -> output:T",
                        idx.dtype(),
                        super::error::Allowed(
                            "uint8, int8, int32, int64",
                            "DT_UINT8, DT_INT8, DT_INT32, DT_INT64",
                        ),
                    ));
                }
                let n = idx.ndim();
                let k = if *axis == -1 {
                    n
                } else {
                    norm_axis(op, &dn, *axis, n + 1)?
                };
                let (ishape, ids) = idx.to_i64_vec();
                let mut shape = ishape.clone();
                shape.insert(k, *depth);
                crate::tensor::check_alloc(&shape, *dtype).map_err(tensor)?;
                let outer: usize = ishape[..k].iter().product();
                let inner: usize = ishape[k..].iter().product();
                let mut out = vec![*off; ids.len() * depth];
                for o in 0..outer {
                    for i in 0..inner {
                        let id = ids[o * inner + i];
                        if id >= 0 && (id as usize) < *depth {
                            out[(o * depth + id as usize) * inner + i] = *on;
                        }
                    }
                }
                NdArray::from_f64(&shape, out)
                    .map_err(tensor)?
                    .astype(*dtype)
            }
        }])
    }

    pub(crate) fn vjp(
        &self,
        e: &mut Eager,
        node: &Node,
        grads: &[Tensor],
    ) -> OpResult<Vec<Option<Tensor>>> {
        let (_, dy) = first(node, grads)?;
        Ok(match self {
            IndexOp::StridedSlice { spec } => {
                let [x] = node_inputs::<1>(node)?;
                vec![Some(strided_slice_grad(e, dy, x.shape(), spec)?)]
            }
            IndexOp::Slice { begin, size } => {
                let [x] = node_inputs::<1>(node)?;
                let spec = slice_spec(begin, size, x.shape(), "CPU:0")?;
                vec![Some(strided_slice_grad(e, dy, x.shape(), &spec)?)]
            }
            IndexOp::StridedSliceGrad { spec, .. } => vec![Some(strided_slice(e, dy, spec)?)],
            IndexOp::Gather { axis } => {
                let [params, idx] = node_inputs::<2>(node)?;
                let g = e.execute1(
                    Op::Index(IndexOp::GatherGrad {
                        axis: *axis,
                        shape: params.shape().to_vec(),
                    }),
                    &[dy.clone(), idx.clone()],
                )?;
                vec![Some(g), None]
            }
            IndexOp::GatherGrad { axis, .. } => {
                let [_, idx] = node_inputs::<2>(node)?;
                vec![Some(gather(e, dy, idx, *axis)?), None]
            }
            IndexOp::Where => return Err(OpError::no_gradient(self.name())),
            IndexOp::OneHot { .. } => vec![None],
        })
    }
}

fn strided_slice_grad(
    e: &mut Eager,
    dy: &Tensor,
    shape: &[usize],
    spec: &[SliceItem],
) -> OpResult<Tensor> {
    e.execute1(
        Op::Index(IndexOp::StridedSliceGrad {
            shape: shape.to_vec(),
            spec: spec.to_vec(),
        }),
        std::slice::from_ref(dy),
    )
}

/// `x[spec]`.
pub fn strided_slice(e: &mut Eager, x: &Tensor, spec: &[SliceItem]) -> OpResult<Tensor> {
    e.execute1(
        Op::Index(IndexOp::StridedSlice {
            spec: spec.to_vec(),
        }),
        std::slice::from_ref(x),
    )
}

/// `tf.slice(x, begin, size)`.
pub fn slice(e: &mut Eager, x: &Tensor, begin: &[i64], size: &[i64]) -> OpResult<Tensor> {
    e.execute1(
        Op::Index(IndexOp::Slice {
            begin: begin.to_vec(),
            size: size.to_vec(),
        }),
        std::slice::from_ref(x),
    )
}

/// `tf.gather(params, indices, axis)`.
pub fn gather(e: &mut Eager, params: &Tensor, indices: &Tensor, axis: i64) -> OpResult<Tensor> {
    e.execute1(
        Op::Index(IndexOp::Gather { axis }),
        &[params.clone(), indices.clone()],
    )
}

/// `tf.one_hot(indices, depth, on_value, off_value, axis, dtype)`.
pub fn one_hot(
    e: &mut Eager,
    indices: &Tensor,
    depth: usize,
    on: f64,
    off: f64,
    axis: i64,
    dtype: DType,
) -> OpResult<Tensor> {
    e.execute1(
        Op::Index(IndexOp::OneHot {
            depth,
            on,
            off,
            axis,
            dtype,
        }),
        std::slice::from_ref(indices),
    )
}
