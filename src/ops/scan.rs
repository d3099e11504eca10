//! The scan op `Cumsum` (`tf.cumsum(x, axis, exclusive, reverse)`): one running sum per
//! lane along an axis, computed in one pass on the host array, so memory stays linear in
//! the axis length. Its vector-Jacobian product is TF's `_CumsumGrad`: the scan of the
//! output gradient in the other direction, with the same `exclusive`. This file owns the
//! op's dtype and axis checks with TF's error texts; it does not touch the reductions.

use ndarray::{ArrayD, Axis};

use super::eager::Eager;
use super::error::{ErrorClass, OpError, OpResult};
use super::op::{first, inputs, Op};
use super::tape::Node;
use super::tensor::Tensor;
use crate::device::Device;
use crate::tensor::{DType, Data, NdArray};

/// A cumulative sum along `axis` (negative counts from the end).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scan {
    pub axis: i64,
    /// Each output leaves out its own element (starts from zero).
    pub exclusive: bool,
    /// The sums run from the end of the axis towards its start.
    pub reverse: bool,
}

/// The dtypes TF's `Cumsum` kernel refuses, with its op-definition text.
const CUMSUM_SIGNATURE: &str = "x:T, axis:Tidx -> out:T; attr=exclusive:bool,default=false; \
     attr=reverse:bool,default=false; attr=T:type,allowed=[DT_FLOAT, DT_DOUBLE, DT_INT32, \
     DT_UINT8, DT_INT16, DT_INT8, DT_COMPLEX64, DT_INT64, DT_QINT8, DT_QUINT8, DT_QINT32, \
     DT_BFLOAT16, DT_QINT16, DT_QUINT16, DT_UINT16, DT_COMPLEX128, DT_HALF, DT_UINT32, \
     DT_UINT64]; attr=Tidx:type,default=DT_INT32,allowed=[DT_INT32, DT_INT64]";

/// Runs the scan over every lane of `a` along axis `k`, in place.
fn scan_lanes<T: Copy + Default>(a: &mut ArrayD<T>, k: usize, s: &Scan, add: impl Fn(T, T) -> T) {
    for mut lane in a.lanes_mut(Axis(k)) {
        let n = lane.len();
        let mut acc = T::default();
        for step in 0..n {
            let i = if s.reverse { n - 1 - step } else { step };
            let here = lane[i];
            let next = add(acc, here);
            lane[i] = if s.exclusive { acc } else { next };
            acc = next;
        }
    }
}

impl Scan {
    pub fn name(&self) -> &'static str {
        "Cumsum"
    }

    pub(crate) fn forward(&self, dev: &dyn Device, given: &[&NdArray]) -> OpResult<Vec<NdArray>> {
        let [x] = inputs::<1>("Cumsum", given)?;
        if x.dtype() == DType::Bool {
            return Err(OpError::new(
                ErrorClass::InvalidArgument,
                format!(
                    "Value for attr 'T' of bool is not in the list of allowed values: float, \
                     double, int32, uint8, int16, int8, complex64, int64, qint8, quint8, \
                     qint32, bfloat16, qint16, quint16, uint16, complex128, half, uint32, \
                     uint64\n\t; NodeDef: {{{{node Cumsum}}}}; Op<name=Cumsum; \
                     signature={CUMSUM_SIGNATURE}> [Op:Cumsum] name: "
                ),
            ));
        }
        let nd = x.ndim() as i64;
        let k = if self.axis < 0 {
            self.axis + nd
        } else {
            self.axis
        };
        if k < 0 || k >= nd {
            return Err(OpError::framed(
                "Cumsum",
                "Cumsum",
                &dev.name(),
                &format!(
                    "ScanOp: Expected scan axis in the range [{}, {nd}), but got {}",
                    -nd, self.axis
                ),
                Some(""),
            ));
        }
        let k = k as usize;
        // Sums keep the input's dtype as TF's kernel does: floats add in their own
        // precision (float32 in float32), integers wrap.
        let out = match x.data.clone() {
            Data::F32(mut a) => {
                scan_lanes(&mut a, k, self, |p, c| p + c);
                NdArray::new(Data::F32(a))
            }
            Data::F64(mut a) => {
                scan_lanes(&mut a, k, self, |p, c| p + c);
                NdArray::new(Data::F64(a))
            }
            Data::I32(mut a) => {
                scan_lanes(&mut a, k, self, i32::wrapping_add);
                NdArray::new(Data::I32(a))
            }
            Data::I64(mut a) => {
                scan_lanes(&mut a, k, self, i64::wrapping_add);
                NdArray::new(Data::I64(a))
            }
            Data::U8(mut a) => {
                scan_lanes(&mut a, k, self, u8::wrapping_add);
                NdArray::new(Data::U8(a))
            }
            Data::Bool(_) => return Err(OpError::internal("Cumsum of bool was refused above")),
        };
        Ok(vec![out])
    }

    pub(crate) fn vjp(
        &self,
        e: &mut Eager,
        node: &Node,
        grads: &[Tensor],
    ) -> OpResult<Vec<Option<Tensor>>> {
        let (_, dy) = first(node, grads)?;
        let back = Scan {
            reverse: !self.reverse,
            ..*self
        };
        Ok(vec![Some(
            e.execute1(Op::Scan(back), std::slice::from_ref(dy))?,
        )])
    }
}

/// `tf.cumsum(x, axis, exclusive, reverse)`.
pub fn cumsum(
    e: &mut Eager,
    x: &Tensor,
    axis: i64,
    exclusive: bool,
    reverse: bool,
) -> OpResult<Tensor> {
    e.execute1(
        Op::Scan(Scan {
            axis,
            exclusive,
            reverse,
        }),
        std::slice::from_ref(x),
    )
}
