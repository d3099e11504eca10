//! [`Tensor`]: an immutable host array with an identity. The identity ([`TensorId`]) is
//! what a tape records and what a graph recorder names: two tensors with equal values are
//! still different tensors, and a clone is the same tensor. Values are shared behind an
//! `Arc`, so tensors are cheap to clone and may cross threads (a replica thread runs a
//! traced graph on them).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::error::{OpError, OpResult};
use crate::tensor::{DType, NdArray, Scalar};

/// The identity of a tensor (or of a variable's handle, which a tape treats as a tensor).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TensorId(u64);

/// The next identity. Ids only need to be unique, never reproducible, so one counter for
/// the process serves every session and thread without coordination (TensorFlow's eager
/// tensor ids work the same way).
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

impl TensorId {
    pub fn fresh() -> TensorId {
        TensorId(NEXT_ID.fetch_add(1, Ordering::Relaxed))
    }

    /// The number behind the id, for a graph recorder's node names.
    pub fn raw(self) -> u64 {
        self.0
    }
}

/// An eager tensor: a value and the identity the tape knows it by.
#[derive(Debug, Clone)]
pub struct Tensor {
    id: TensorId,
    value: Arc<NdArray>,
}

impl Tensor {
    /// A new tensor (a constant: no op made it) with a fresh identity.
    pub fn new(value: NdArray) -> Tensor {
        Tensor::from_arc(Arc::new(value))
    }

    /// A new tensor sharing an existing value, with a fresh identity.
    pub fn from_arc(value: Arc<NdArray>) -> Tensor {
        Tensor {
            id: TensorId::fresh(),
            value,
        }
    }

    /// A constant scalar of `dtype` (cast as numpy casts).
    pub fn scalar(v: f64, dtype: DType) -> Tensor {
        // A 0-d array holds one element, so it cannot exceed the allocation limit.
        Tensor::new(
            NdArray::full(&[], v, dtype).unwrap_or_else(|_| NdArray::from_scalar(Scalar::F64(v))),
        )
    }

    /// A constant of `shape` filled with `v`.
    pub fn full(shape: &[usize], v: f64, dtype: DType) -> OpResult<Tensor> {
        NdArray::full(shape, v, dtype)
            .map(Tensor::new)
            .map_err(|e| OpError::from_tensor("Fill", "CPU:0", e))
    }

    /// A tensor with a given identity: how a variable's handle enters a tape.
    pub(crate) fn with_id(id: TensorId, value: Arc<NdArray>) -> Tensor {
        Tensor { id, value }
    }

    pub fn id(&self) -> TensorId {
        self.id
    }

    pub fn value(&self) -> &NdArray {
        &self.value
    }

    /// The shared value, for callers that keep it without the identity.
    pub fn array(&self) -> &Arc<NdArray> {
        &self.value
    }

    pub fn dtype(&self) -> DType {
        self.value.dtype()
    }

    pub fn shape(&self) -> &[usize] {
        self.value.shape()
    }

    pub fn ndim(&self) -> usize {
        self.value.ndim()
    }

    pub fn size(&self) -> usize {
        self.value.size()
    }

    /// Whether gradients can flow through a tensor of this dtype (TF's "trainable" dtypes).
    pub fn is_float(&self) -> bool {
        self.dtype().is_float()
    }
}
