//! Host n-dimensional arrays with numpy's dtypes, promotion rules, broadcasting, indexing,
//! reductions, printing and the legacy `RandomState` streams. These are the values behind
//! `np.ndarray` and `tf.Tensor`. This module is a plain Rust library: it must never import
//! the language, the bindings or the protocol; the `numpy` binding converts Python values
//! to and from [`NdArray`].

pub mod array;
pub mod build;
pub mod dtype;
pub mod format;
pub mod index;
pub mod linalg;
pub mod math;
pub mod ops;
pub mod print;
pub mod random;
pub mod reduce;

pub use array::{Data, NdArray, Scalar};
pub use dtype::DType;
pub use index::IndexItem;
pub use math::UnaryFn;
pub use ops::BinaryOp;
pub use print::{repr_array, repr_with_prefix, str_array};
pub use random::RandomState;
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

/// The most bytes one array may take: half of the machine's memory (8 GiB when it cannot
/// be read). Bigger requests fail with `MemoryError` instead of aborting the kernel.
pub fn memory_limit() -> u64 {
    let total = std::fs::read_to_string("/proc/meminfo").ok().and_then(|s| {
        s.lines()
            .find(|l| l.starts_with("MemTotal:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<u64>().ok())
    });
    match total {
        Some(kb) => kb * 1024 / 2,
        None => 8 << 30,
    }
}

/// Refuses an allocation of `shape` elements of `dtype` that exceeds [`memory_limit`].
pub fn check_alloc(shape: &[usize], dtype: DType) -> TResult<()> {
    let mut n: u128 = dtype.itemsize() as u128;
    for &d in shape {
        n = n.saturating_mul(d as u128);
    }
    if n > memory_limit() as u128 {
        let gib = n as f64 / (1u64 << 30) as f64;
        return Err(TensorError::Memory(format!(
            "Unable to allocate {gib:.2} GiB for an array with shape {} and data type {}",
            shape_str(shape),
            dtype.name()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
