//! numpy's side of the memory bound (`crate::memory`): an array of a shape and dtype that
//! does not fit is refused before it is made, with numpy's `Unable to allocate ...`.

use super::{shape_str, DType, TResult, TensorError};
pub use crate::memory::{fits, memory_limit, size_string};

/// Refuses an allocation of `shape` elements of `dtype` that does not [`fit`](fits), with
/// numpy's message.
pub fn check_alloc(shape: &[usize], dtype: DType) -> TResult<()> {
    let mut n: u128 = dtype.itemsize() as u128;
    for &d in shape {
        n = n.saturating_mul(d as u128);
    }
    if !fits(n) {
        return Err(TensorError::Memory(format!(
            "Unable to allocate {} for an array with shape {} and data type {}",
            size_string(n),
            shape_str(shape),
            dtype.name()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrays_beyond_the_bound_are_refused_in_numpys_words() {
        let e = check_alloc(&[1_000_000, 1_000_000], DType::F64).unwrap_err();
        assert_eq!(
            e.to_string(),
            "Unable to allocate 7.28 TiB for an array with shape (1000000, 1000000) and data type float64"
        );
        assert!(check_alloc(&[usize::MAX, usize::MAX, 2], DType::F32).is_err());
        assert!(check_alloc(&[3, 4], DType::F32).is_ok());
    }
}
