//! Fallible allocation for the interpreter's values. Every string, list, tuple, dict or set
//! whose size a cell chooses (`'a'.center(10**12)`, `[0] * n`, `'x'.join(...)`, a format
//! width, an append in a long loop) makes its room through these functions, which refuse a
//! request beyond the memory bound (`crate::memory`, the bound numpy's arrays use too) and
//! then reserve with `try_reserve`, so a request the allocator cannot meet is a
//! `MemoryError` too, never the process abort a failed Rust allocation is. Sizes are the
//! real ones (`len * size_of::<T>()` of the buffer about to be made), not estimates.
//! This file knows no values and no evaluator; it only sizes buffers.

use super::exc::{PyErr, PyResult};

/// CPython's `MemoryError`, which carries no message.
pub fn memory_error() -> PyErr {
    PyErr::memory_error("")
}

/// Whether `count` items of `size` bytes each fit the memory bound.
pub fn fits(count: usize, size: usize) -> bool {
    crate::memory::fits(count as u128 * size.max(1) as u128)
}

fn check(count: usize, size: usize) -> PyResult<()> {
    if fits(count, size) {
        Ok(())
    } else {
        Err(memory_error())
    }
}

/// Makes room for `additional` more items, within the bound.
pub fn reserve<T>(v: &mut Vec<T>, additional: usize) -> PyResult<()> {
    let total = v.len().checked_add(additional).ok_or_else(memory_error)?;
    if total <= v.capacity() {
        return Ok(());
    }
    check(total, std::mem::size_of::<T>())?;
    v.try_reserve(additional).map_err(|_| memory_error())
}

/// Room for one more item, so that the `push` after it cannot abort. Free while the
/// buffer has spare capacity; growing doubles it, as `push` would.
#[inline]
pub fn room_for_one<T>(v: &mut Vec<T>) -> PyResult<()> {
    if v.len() < v.capacity() {
        Ok(())
    } else {
        reserve(v, v.len().max(4))
    }
}

/// `push`, growing within the bound.
#[inline]
pub fn push<T>(v: &mut Vec<T>, item: T) -> PyResult<()> {
    room_for_one(v)?;
    v.push(item);
    Ok(())
}

/// An empty vector with room for `n` items.
pub fn vec_with_capacity<T>(n: usize) -> PyResult<Vec<T>> {
    let mut v = Vec::new();
    reserve(&mut v, n)?;
    Ok(v)
}

/// Makes room for `additional` more bytes of text. Text is built in a `String` and then
/// copied once into its value (`Rc<str>`), so the bound must hold both.
pub fn reserve_str(s: &mut String, additional: usize) -> PyResult<()> {
    let total = s.len().checked_add(additional).ok_or_else(memory_error)?;
    if total <= s.capacity() {
        return Ok(());
    }
    check(total, 2)?;
    s.try_reserve(additional).map_err(|_| memory_error())
}

/// An empty string with room for `n` bytes.
pub fn string_with_capacity(n: usize) -> PyResult<String> {
    let mut s = String::new();
    reserve_str(&mut s, n)?;
    Ok(s)
}

/// `s` repeated `n` times (`str * n`).
pub fn repeat_str(s: &str, n: usize) -> PyResult<String> {
    let bytes = repeat(s.as_bytes(), n)?;
    // Copies of valid UTF-8 laid end to end are valid UTF-8.
    String::from_utf8(bytes).map_err(|_| memory_error())
}

/// Appends `n` copies of `c` to `out`.
pub fn push_fill(out: &mut String, c: char, n: usize) -> PyResult<()> {
    let total = c.len_utf8().checked_mul(n).ok_or_else(memory_error)?;
    reserve_str(out, total)?;
    out.extend(std::iter::repeat_n(c, n));
    Ok(())
}

/// `body` with `left` copies of `fill` before it and `right` after it.
pub fn pad(body: &str, fill: char, left: usize, right: usize) -> PyResult<String> {
    let fills = left.checked_add(right).ok_or_else(memory_error)?;
    let total = fill
        .len_utf8()
        .checked_mul(fills)
        .and_then(|f| f.checked_add(body.len()))
        .ok_or_else(memory_error)?;
    let mut out = string_with_capacity(total)?;
    out.extend(std::iter::repeat_n(fill, left));
    out.push_str(body);
    out.extend(std::iter::repeat_n(fill, right));
    Ok(out)
}

/// The pieces laid end to end, in one buffer sized first.
pub fn concat(parts: &[&str]) -> PyResult<String> {
    let total = parts
        .iter()
        .try_fold(0usize, |n, p| n.checked_add(p.len()))
        .ok_or_else(memory_error)?;
    let mut out = string_with_capacity(total)?;
    for p in parts {
        out.push_str(p);
    }
    Ok(out)
}

/// `items` repeated `n` times (`list * n`, `tuple * n`), by doubling what is already
/// copied, so a large repetition is a few large copies.
pub fn repeat<T: Clone>(items: &[T], n: usize) -> PyResult<Vec<T>> {
    if items.is_empty() || n == 0 {
        return Ok(Vec::new());
    }
    let total = items.len().checked_mul(n).ok_or_else(memory_error)?;
    let mut out = vec_with_capacity(total)?;
    out.extend_from_slice(items);
    while out.len() < total {
        let more = out.len().min(total - out.len());
        out.extend_from_within(..more);
    }
    Ok(out)
}

/// A copy of `items`.
pub fn copy<T: Clone>(items: &[T]) -> PyResult<Vec<T>> {
    let mut out = vec_with_capacity(items.len())?;
    out.extend_from_slice(items);
    Ok(out)
}

/// Two slices laid end to end (`list + list`).
pub fn joined<T: Clone>(a: &[T], b: &[T]) -> PyResult<Vec<T>> {
    let total = a.len().checked_add(b.len()).ok_or_else(memory_error)?;
    let mut out = vec_with_capacity(total)?;
    out.extend_from_slice(a);
    out.extend_from_slice(b);
    Ok(out)
}

/// Room for `additional` more entries in an insertion-ordered map (dicts and sets). An
/// entry costs its key and value, a stored hash and a slot of the index table.
pub fn reserve_map<K, V, S>(m: &mut indexmap::IndexMap<K, V, S>, additional: usize) -> PyResult<()>
where
    K: std::hash::Hash + Eq,
    S: std::hash::BuildHasher,
{
    let total = m.len().checked_add(additional).ok_or_else(memory_error)?;
    if total <= m.capacity() {
        return Ok(());
    }
    let entry = std::mem::size_of::<(K, V)>() + 2 * std::mem::size_of::<usize>();
    check(total, entry)?;
    m.try_reserve(additional).map_err(|_| memory_error())
}

/// Room for one more entry in a map; free while it has spare capacity.
#[inline]
pub fn map_room_for_one<K, V, S>(m: &mut indexmap::IndexMap<K, V, S>) -> PyResult<()>
where
    K: std::hash::Hash + Eq,
    S: std::hash::BuildHasher,
{
    if m.len() < m.capacity() {
        Ok(())
    } else {
        reserve_map(m, m.len().max(4))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_beyond_the_bound_are_memory_errors() {
        let e = repeat_str("a", usize::MAX / 2).unwrap_err();
        assert_eq!(e.type_name(), "MemoryError");
        assert_eq!(e.message(), "");
        assert!(pad("", 'a', 1 << 50, 1 << 50).is_err());
        assert!(repeat(&[1u64, 2], usize::MAX).is_err());
        assert!(string_with_capacity(1 << 60).is_err());
        let mut v: Vec<u64> = vec![];
        assert!(reserve(&mut v, 1 << 58).is_err());
        assert!(v.capacity() < 1 << 20);
    }

    #[test]
    fn small_requests_build_what_they_say() {
        assert_eq!(repeat_str("ab", 3).unwrap(), "ababab");
        assert_eq!(pad("x", 'é', 1, 2).unwrap(), "éxéé");
        assert_eq!(repeat(&[1, 2], 2).unwrap(), vec![1, 2, 1, 2]);
        assert_eq!(joined(&[1], &[2, 3]).unwrap(), vec![1, 2, 3]);
        assert_eq!(concat(&["a", "bc", ""]).unwrap(), "abc");
        let mut v = vec![];
        for i in 0..100 {
            push(&mut v, i).unwrap();
        }
        assert_eq!(v.len(), 100);
        let mut s = String::from("x");
        push_fill(&mut s, '-', 3).unwrap();
        assert_eq!(s, "x---");
    }
}
