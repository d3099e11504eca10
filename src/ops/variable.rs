//! [`Variable`]: the engine's resource variable. A handle with a stable identity, a name, a
//! trainable flag, a dtype and shape fixed at creation, and shared storage: every clone of
//! a `Variable` is the same variable, and an assignment through one is seen by all. Reads
//! are snapshots (the stored `Arc` is replaced on assignment, never mutated in place), so
//! a tensor read before an assignment keeps its value, as a TF read does.
//!
//! Reading and assigning through [`Eager`](super::Eager) is what tapes and graph recorders
//! see; the raw accessors here are for printing and for code outside any computation.
//!
//! Every store advances the variable's [`version`](Variable::version), so a holder of a
//! second copy of the value (a compiled model's device weights) can tell cheaply whether
//! the variable changed since it last copied it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

use super::error::{ErrorClass, OpError, OpResult};
use super::tensor::{Tensor, TensorId};
use crate::tensor::{shape_str, DType, NdArray};

struct Inner {
    /// The id a tape records reads against: gradients with respect to the variable are
    /// gradients with respect to this id.
    handle: TensorId,
    name: String,
    trainable: bool,
    dtype: DType,
    shape: Vec<usize>,
    value: RwLock<Arc<NdArray>>,
    /// How many stores the variable has seen.
    version: AtomicU64,
}

/// A resource variable; clones share the variable.
#[derive(Clone)]
pub struct Variable(Arc<Inner>);

impl std::fmt::Debug for Variable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Variable({:?}, {}, {:?})",
            self.0.name,
            self.0.dtype.name(),
            self.0.shape
        )
    }
}

impl Variable {
    pub fn new(value: NdArray, name: &str, trainable: bool) -> Variable {
        Variable(Arc::new(Inner {
            handle: TensorId::fresh(),
            name: name.to_string(),
            trainable,
            dtype: value.dtype(),
            shape: value.shape().to_vec(),
            value: RwLock::new(Arc::new(value)),
            version: AtomicU64::new(0),
        }))
    }

    /// The number of stores so far: equal versions mean an unchanged value.
    pub fn version(&self) -> u64 {
        self.0.version.load(Ordering::Acquire)
    }

    pub fn handle(&self) -> TensorId {
        self.0.handle
    }

    pub fn name(&self) -> &str {
        &self.0.name
    }

    pub fn trainable(&self) -> bool {
        self.0.trainable
    }

    pub fn dtype(&self) -> DType {
        self.0.dtype
    }

    pub fn shape(&self) -> &[usize] {
        &self.0.shape
    }

    /// Whether two handles name the same variable.
    pub fn same(&self, other: &Variable) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// The current value, unseen by tapes (printing, saving, `numpy()`).
    pub fn snapshot(&self) -> Arc<NdArray> {
        match self.0.value.read() {
            Ok(v) => v.clone(),
            // A writer panicked mid-store; the value it left is still a whole array.
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// The variable's handle as a tensor: its value under the handle's id. A tape records
    /// a read as an identity from this tensor.
    pub(crate) fn handle_tensor(&self) -> Tensor {
        Tensor::with_id(self.0.handle, self.snapshot())
    }

    /// Replaces the value after TF's checks: same dtype (callers convert first) and the
    /// shape fixed at creation.
    pub fn store(&self, new: NdArray) -> OpResult<()> {
        self.store_arc(Arc::new(new))
    }

    /// [`store`](Self::store) of a shared array: an assignment of a tensor's value keeps
    /// the tensor's array rather than copying it (arrays are never written in place).
    pub fn store_arc(&self, new: Arc<NdArray>) -> OpResult<()> {
        if new.shape() != self.shape() {
            return Err(OpError::new(
                ErrorClass::Value,
                format!(
                    "Cannot assign value to variable ' {}': Shape mismatch.The variable shape \
                     {}, and the assigned value shape {} are incompatible.",
                    self.0.name,
                    shape_str(self.shape()),
                    shape_str(new.shape())
                ),
            ));
        }
        if new.dtype() != self.dtype() {
            return Err(OpError::new(
                ErrorClass::InvalidArgument,
                format!(
                    "Cannot update variable with shape {} using a Tensor with dtype {}, \
                     expected dtype {}.",
                    shape_str(self.shape()),
                    new.dtype().name(),
                    self.dtype().name()
                ),
            ));
        }
        match self.0.value.write() {
            Ok(mut v) => *v = new,
            Err(poisoned) => *poisoned.into_inner() = new,
        }
        self.0.version.fetch_add(1, Ordering::AcqRel);
        Ok(())
    }
}
