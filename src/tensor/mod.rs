//! Host n-dimensional arrays with numpy's dtypes, promotion rules, broadcasting, indexing,
//! reductions, printing and the legacy `RandomState` streams. These are the values behind
//! `np.ndarray` and `tf.Tensor`. This module is a plain Rust library: it must never import
//! the language, the bindings or the protocol; the `numpy` binding converts Python values
//! to and from [`NdArray`].

pub mod array;
pub mod build;
pub mod dtype;
pub mod einsum;
pub mod format;
pub mod index;
pub mod interrupt;
pub mod linalg;
pub mod math;
pub mod memory;
pub mod npy;
pub mod ops;
pub mod print;
pub mod random;
pub mod rearrange;
pub mod reduce;
pub mod scalar;
pub mod stats;

pub use array::{Data, NdArray, Scalar};
pub use dtype::DType;
pub use index::IndexItem;
pub use math::UnaryFn;
pub use memory::{check_alloc, fits, memory_limit};
pub use ops::BinaryOp;
pub use print::{
    repr_array, repr_with_options, repr_with_prefix, str_array, str_with_options, PrintOptions,
};
pub use random::{
    philox_categorical, philox_floats, philox_ints, philox_permutation, Philox, PhiloxDist,
    RandomState,
};
pub use reduce::Reduction;

/// Errors of array operations. Each variant maps to the Python exception numpy raises
/// ([`TensorError::py_type`]); the message is numpy's own wording.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TensorError {
    /// Both shapes as Python tuples; numpy prints them without spaces.
    #[error(
        "operands could not be broadcast together with shapes {} {} ",
        .0.replace(' ', ""),
        .1.replace(' ', "")
    )]
    Broadcast(String, String),
    #[error("{0}")]
    Value(String),
    #[error("{0}")]
    Index(String),
    #[error("{0}")]
    Type(String),
    /// numpy's `AxisError`, both a `ValueError` and an `IndexError`.
    #[error("{0}")]
    Axis(String),
    #[error("{0}")]
    Overflow(String),
    /// An allocation bigger than the host can sensibly hold; refused before trying.
    #[error("{0}")]
    Memory(String),
    /// The kernel's interrupt arrived during a long operation (see `interrupt`).
    #[error("")]
    Interrupted,
}

impl TensorError {
    /// The Python exception class numpy raises for this error.
    pub fn py_type(&self) -> &'static str {
        match self {
            TensorError::Broadcast(..) | TensorError::Value(_) => "ValueError",
            TensorError::Index(_) => "IndexError",
            TensorError::Type(_) => "TypeError",
            TensorError::Axis(_) => "AxisError",
            TensorError::Overflow(_) => "OverflowError",
            TensorError::Memory(_) => "MemoryError",
            TensorError::Interrupted => "KeyboardInterrupt",
        }
    }
}

pub type TResult<T> = Result<T, TensorError>;

/// A shape as Python prints a tuple: `(2, 3)`, `(4,)`, `()`.
pub fn shape_str(shape: &[usize]) -> String {
    match shape.len() {
        0 => "()".into(),
        1 => format!("({},)", shape[0]),
        _ => {
            let parts: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
            format!("({})", parts.join(", "))
        }
    }
}

#[cfg(test)]
mod tests;
