//! Indexing for reading and assignment with numpy's rules: integers (negative too),
//! slices with steps, `...`, `None`/newaxis, boolean masks and integer arrays (advanced
//! indexing, with the broadcast index shape placed where numpy places it). Assignment
//! reuses the read path on an array of flat positions, so both always agree.

use ndarray::{ArrayD, IxDyn, SliceInfo, SliceInfoElem};

use super::array::{Data, NdArray};
use super::ops::broadcast_shapes;
use super::{shape_str, TResult, TensorError};
use crate::map_data;

/// One item of an index tuple.
#[derive(Debug, Clone)]
pub enum IndexItem {
    Int(i64),
    Slice(Option<i64>, Option<i64>, Option<i64>),
    NewAxis,
    Ellipsis,
    /// A boolean mask or an integer index array.
    Array(NdArray),
}

/// A Python slice resolved against an axis of length `n`: (first, step, count).
pub fn resolve_slice(
    n: usize,
    start: Option<i64>,
    stop: Option<i64>,
    step: Option<i64>,
) -> TResult<(i64, i64, usize)> {
    let n = n as i64;
    let step = step.unwrap_or(1);
    if step == 0 {
        return Err(TensorError::Value("slice step cannot be zero".into()));
    }
    let fix = |v: i64, lo: i64, hi: i64| -> i64 {
        let v = if v < 0 { v + n } else { v };
        v.clamp(lo, hi)
    };
    let (first, count) = if step > 0 {
        let s = start.map_or(0, |v| fix(v, 0, n));
        let e = stop.map_or(n, |v| fix(v, 0, n));
        (s, if e > s { (e - s + step - 1) / step } else { 0 })
    } else {
        let s = start.map_or(n - 1, |v| fix(v, -1, n - 1));
        let e = stop.map_or(-1, |v| fix(v, -1, n - 1));
        (
            s,
            if s > e {
                (s - e + (-step) - 1) / (-step)
            } else {
                0
            },
        )
    };
    Ok((first, step, count as usize))
}

fn slice_elem(first: i64, step: i64, count: usize) -> SliceInfoElem {
    if count == 0 {
        return SliceInfoElem::Slice {
            start: 0,
            end: Some(0),
            step: 1,
        };
    }
    let last = first + step * (count as i64 - 1);
    let (lo, hi) = if step > 0 {
        (first, last + 1)
    } else {
        (last, first + 1)
    };
    SliceInfoElem::Slice {
        start: lo as isize,
        end: Some(hi as isize),
        step: step as isize,
    }
}

/// The index after `...` is expanded and masks became integer arrays: basic slicing
/// elements plus the advanced arrays and the axes (of the sliced result) they index.
struct Plan {
    basic: Vec<SliceInfoElem>,
    adv: Vec<(usize, ArrayD<i64>)>,
}

fn plan(shape: &[usize], items: &[IndexItem]) -> TResult<Plan> {
    // Boolean masks expand into one integer array per axis they cover.
    let mut expanded: Vec<IndexItem> = Vec::new();
    for it in items {
        match it {
            IndexItem::Array(a) if a.dtype() == super::DType::Bool && a.ndim() > 0 => {
                let m = a.to_bool_array();
                let nd = m.ndim();
                let mut cols: Vec<Vec<i64>> = vec![vec![]; nd];
                for (ix, &v) in m.indexed_iter() {
                    if v {
                        for (d, c) in cols.iter_mut().enumerate() {
                            c.push(ix[d] as i64);
                        }
                    }
                }
                for c in cols {
                    let n = c.len();
                    expanded.push(IndexItem::Array(NdArray::from_i64(&[n], c)?));
                }
            }
            other => expanded.push(other.clone()),
        }
    }
    let consumed = expanded
        .iter()
        .filter(|i| !matches!(i, IndexItem::NewAxis | IndexItem::Ellipsis))
        .count();
    if consumed > shape.len() {
        return Err(TensorError::Index(format!(
            "too many indices for array: array is {}-dimensional, but {consumed} were indexed",
            shape.len()
        )));
    }
    if expanded
        .iter()
        .filter(|i| matches!(i, IndexItem::Ellipsis))
        .count()
        > 1
    {
        return Err(TensorError::Index(
            "an index can only have a single ellipsis ('...')".into(),
        ));
    }
    let mut full = Vec::new();
    let mut had_ellipsis = false;
    for it in expanded {
        if matches!(it, IndexItem::Ellipsis) {
            had_ellipsis = true;
            for _ in 0..shape.len() - consumed {
                full.push(IndexItem::Slice(None, None, None));
            }
        } else {
            full.push(it);
        }
    }
    if !had_ellipsis {
        for _ in 0..shape.len() - consumed {
            full.push(IndexItem::Slice(None, None, None));
        }
    }
    let mut basic = Vec::new();
    let mut adv = Vec::new();
    let (mut axis, mut out_axis) = (0usize, 0usize);
    for it in full {
        match it {
            IndexItem::NewAxis => {
                basic.push(SliceInfoElem::NewAxis);
                out_axis += 1;
            }
            IndexItem::Int(i) => {
                let n = shape[axis] as i64;
                let k = if i < 0 { i + n } else { i };
                if k < 0 || k >= n {
                    return Err(TensorError::Index(format!(
                        "index {i} is out of bounds for axis {axis} with size {n}"
                    )));
                }
                basic.push(SliceInfoElem::Index(k as isize));
                axis += 1;
            }
            IndexItem::Slice(s, e, st) => {
                let (first, step, count) = resolve_slice(shape[axis], s, e, st)?;
                basic.push(slice_elem(first, step, count));
                axis += 1;
                out_axis += 1;
            }
            IndexItem::Array(a) => {
                if a.dtype().is_float() {
                    return Err(TensorError::Index(
                        "arrays used as indices must be of integer (or boolean) type".into(),
                    ));
                }
                let n = shape[axis] as i64;
                let mut idx = a.to_i64_array();
                for v in idx.iter_mut() {
                    if *v < -n || *v >= n {
                        return Err(TensorError::Index(format!(
                            "index {} is out of bounds for axis {axis} with size {n}",
                            *v
                        )));
                    }
                    if *v < 0 {
                        *v += n;
                    }
                }
                basic.push(SliceInfoElem::Slice {
                    start: 0,
                    end: None,
                    step: 1,
                });
                adv.push((out_axis, idx));
                axis += 1;
                out_axis += 1;
            }
            IndexItem::Ellipsis => {}
        }
    }
    Ok(Plan { basic, adv })
}

fn check_masks(shape: &[usize], items: &[IndexItem]) -> TResult<()> {
    let mut axis = 0usize;
    for it in items {
        match it {
            IndexItem::Array(a) if a.dtype() == super::DType::Bool && a.ndim() > 0 => {
                for (k, &d) in a.shape().iter().enumerate() {
                    match shape.get(axis + k) {
                        Some(&n) if n != d => {
                            return Err(TensorError::Index(format!(
                                "boolean index did not match indexed array along axis {}; \
                                 size of axis is {n} but size of corresponding boolean axis \
                                 is {d}",
                                axis + k
                            )))
                        }
                        _ => {}
                    }
                }
                axis += a.ndim();
            }
            IndexItem::NewAxis => {}
            IndexItem::Ellipsis => {
                let rest = items
                    .iter()
                    .skip_while(|i| !matches!(i, IndexItem::Ellipsis))
                    .skip(1)
                    .map(|i| match i {
                        IndexItem::NewAxis | IndexItem::Ellipsis => 0,
                        IndexItem::Array(a) if a.dtype() == super::DType::Bool => a.ndim(),
                        _ => 1,
                    })
                    .sum::<usize>();
                axis = shape.len().saturating_sub(rest);
            }
            _ => axis += 1,
        }
    }
    Ok(())
}

fn gather<T: Clone>(y: ArrayD<T>, adv: &[(usize, ArrayD<i64>)]) -> TResult<ArrayD<T>> {
    let mut bshape: Vec<usize> = vec![];
    for (_, a) in adv {
        bshape = broadcast_shapes(&bshape, a.shape()).map_err(|_| {
            let shapes: Vec<String> = adv.iter().map(|(_, a)| shape_str(a.shape())).collect();
            TensorError::Index(format!(
                "shape mismatch: indexing arrays could not be broadcast together with shapes {}",
                shapes.join(" ")
            ))
        })?;
    }
    let pos: Vec<usize> = adv.iter().map(|(p, _)| *p).collect();
    let ysh = y.shape().to_vec();
    let rest: Vec<usize> = (0..y.ndim()).filter(|a| !pos.contains(a)).collect();
    let mut perm = pos.clone();
    perm.extend(&rest);
    let yp = y
        .permuted_axes(IxDyn(&perm))
        .as_standard_layout()
        .into_owned();
    let adims: Vec<usize> = pos.iter().map(|&p| ysh[p]).collect();
    let rdims: Vec<usize> = rest.iter().map(|&p| ysh[p]).collect();
    let rsize: usize = rdims.iter().product();
    let flat: Vec<T> = yp.iter().cloned().collect();
    let idx: Vec<ndarray::ArrayViewD<i64>> = adv
        .iter()
        .filter_map(|(_, a)| a.broadcast(IxDyn(&bshape)))
        .collect();
    let nb: usize = bshape.iter().product();
    let mut out = Vec::with_capacity(nb * rsize);
    let iters: Vec<Vec<i64>> = idx.iter().map(|v| v.iter().copied().collect()).collect();
    for b in 0..nb {
        let mut f = 0usize;
        for (j, it) in iters.iter().enumerate() {
            f = f * adims[j] + it[b] as usize;
        }
        out.extend_from_slice(&flat[f * rsize..(f + 1) * rsize]);
    }
    let mut oshape = bshape.clone();
    oshape.extend(&rdims);
    let res = ArrayD::from_shape_vec(IxDyn(&oshape), out)
        .map_err(|e| TensorError::Value(e.to_string()))?;
    let adjacent = pos.windows(2).all(|w| w[1] == w[0] + 1);
    if adjacent && pos[0] > 0 {
        let nbd = bshape.len();
        let p1 = pos[0];
        let mut perm: Vec<usize> = (nbd..nbd + p1).collect();
        perm.extend(0..nbd);
        perm.extend(nbd + p1..oshape.len());
        return Ok(res
            .permuted_axes(IxDyn(&perm))
            .as_standard_layout()
            .into_owned());
    }
    Ok(res)
}

fn apply<T: Clone>(a: &ArrayD<T>, p: &Plan) -> TResult<ArrayD<T>> {
    let info = SliceInfo::<Vec<SliceInfoElem>, IxDyn, IxDyn>::try_from(p.basic.clone())
        .map_err(|e| TensorError::Index(e.to_string()))?;
    let y = a.slice(info.as_ref()).to_owned();
    if p.adv.is_empty() {
        return Ok(y);
    }
    gather(y, &p.adv)
}

impl NdArray {
    /// `a[items]`.
    pub fn get(&self, items: &[IndexItem]) -> TResult<NdArray> {
        check_masks(self.shape(), items)?;
        let p = plan(self.shape(), items)?;
        Ok(NdArray::new(map_data!(&self.data, a => apply(a, &p)?)))
    }

    /// `a[i]` along the first axis (iteration).
    pub fn row(&self, i: usize) -> TResult<NdArray> {
        self.get(&[IndexItem::Int(i as i64)])
    }

    /// `a[items] = value`, with `value` broadcast to the selection and cast to `a`'s dtype.
    pub fn set(&mut self, items: &[IndexItem], value: &NdArray) -> TResult<()> {
        check_masks(self.shape(), items)?;
        let p = plan(self.shape(), items)?;
        let n = self.size();
        let positions = ArrayD::from_shape_vec(IxDyn(self.shape()), (0..n).collect::<Vec<_>>())
            .map_err(|e| TensorError::Value(e.to_string()))?;
        let sel = apply(&positions, &p)?;
        let v = value.astype(self.dtype());
        let shape_err = || {
            TensorError::Value(format!(
                "could not broadcast input array from shape {} into shape {}",
                shape_str(value.shape()),
                shape_str(sel.shape())
            ))
        };
        if !self.is_standard() {
            *self = self.standard();
        }
        macro_rules! write {
            ($dst:expr, $src:expr) => {{
                let src = $src.broadcast(sel.raw_dim()).ok_or_else(shape_err)?;
                let dst = $dst.as_slice_mut().ok_or_else(shape_err)?;
                for (&k, s) in sel.iter().zip(src.iter()) {
                    dst[k] = *s;
                }
            }};
        }
        match (&mut self.data, &v.data) {
            (Data::Bool(d), Data::Bool(s)) => write!(d, s),
            (Data::U8(d), Data::U8(s)) => write!(d, s),
            (Data::I32(d), Data::I32(s)) => write!(d, s),
            (Data::I64(d), Data::I64(s)) => write!(d, s),
            (Data::F32(d), Data::F32(s)) => write!(d, s),
            (Data::F64(d), Data::F64(s)) => write!(d, s),
            _ => return Err(shape_err()),
        }
        Ok(())
    }

    fn is_standard(&self) -> bool {
        crate::with_data!(&self.data, a => a.is_standard_layout())
    }
}
