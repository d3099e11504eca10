//! Sorting as CPython's `list.sort` and `sorted` do: stable, asking only `a < b`, and
//! never failing because the comparisons disagree with each other (a list with NaNs, a
//! `__lt__` that answers at random): the result is then some order of the items, as in
//! CPython, where a Rust sort may panic on a comparator that is not a total order. The
//! sort is a merge sort over indices that checks for an interrupt as it goes, so sorting
//! ten million items ends within moments of an interrupt. Lists of only ints, only strings
//! or only floats without NaN compare without going through the evaluator.

use crate::lang::eval::vm::Vm;
use crate::lang::values::exc::PyResult;
use crate::lang::values::memory;
use crate::lang::values::object::{Args, CmpOp};
use crate::lang::values::value::Value;

/// Runs shorter than this are sorted by insertion before they are merged.
const RUN: usize = 16;

/// Sorts `idx` stably by `lt`, a strict "less than" that may fail; `tick` runs between
/// comparisons now and then (the interrupt check). Only `lt(a, b)` with `a` after `b` in
/// the input order decides a swap, so equal items keep their order.
fn merge_sort(
    idx: &mut Vec<usize>,
    lt: &mut dyn FnMut(usize, usize) -> PyResult<bool>,
    tick: &mut dyn FnMut() -> PyResult<()>,
) -> PyResult<()> {
    let mut count: u32 = 0;
    let mut lt = |a: usize, b: usize| -> PyResult<bool> {
        count = count.wrapping_add(1);
        if count.is_multiple_of(4096) {
            tick()?;
        }
        lt(a, b)
    };
    let n = idx.len();
    for start in (0..n).step_by(RUN) {
        let end = (start + RUN).min(n);
        for i in start + 1..end {
            let mut j = i;
            while j > start && lt(idx[j], idx[j - 1])? {
                idx.swap(j, j - 1);
                j -= 1;
            }
        }
    }
    let mut buf: Vec<usize> = memory::vec_with_capacity(n)?;
    let mut width = RUN;
    while width < n {
        buf.clear();
        let mut start = 0;
        while start < n {
            let mid = (start + width).min(n);
            let end = (start + 2 * width).min(n);
            // Runs already in order (the common case of sorted input) cost one comparison.
            if mid >= end || !lt(idx[mid], idx[mid - 1])? {
                buf.extend_from_slice(&idx[start..end]);
            } else {
                let (mut i, mut j) = (start, mid);
                while i < mid && j < end {
                    if lt(idx[j], idx[i])? {
                        buf.push(idx[j]);
                        j += 1;
                    } else {
                        buf.push(idx[i]);
                        i += 1;
                    }
                }
                buf.extend_from_slice(&idx[i..mid]);
                buf.extend_from_slice(&idx[j..end]);
            }
            start = end;
        }
        std::mem::swap(idx, &mut buf);
        width *= 2;
    }
    Ok(())
}

/// The keys when they are all of one kind that compares without the evaluator.
enum Plain {
    Ints(Vec<i64>),
    Floats(Vec<f64>),
    Strs(Vec<std::rc::Rc<str>>),
    Mixed,
}

fn plain(keys: &[Value]) -> Plain {
    match keys.first() {
        Some(Value::Int(_)) => keys
            .iter()
            .map(|k| match k {
                Value::Int(i) => Some(*i),
                _ => None,
            })
            .collect::<Option<Vec<_>>>()
            .map_or(Plain::Mixed, Plain::Ints),
        Some(Value::Float(_)) => keys
            .iter()
            .map(|k| match k {
                Value::Float(x) if !x.is_nan() => Some(*x),
                _ => None,
            })
            .collect::<Option<Vec<_>>>()
            .map_or(Plain::Mixed, Plain::Floats),
        Some(Value::Str(_)) => keys
            .iter()
            .map(|k| match k {
                Value::Str(s) => Some(s.clone()),
                _ => None,
            })
            .collect::<Option<Vec<_>>>()
            .map_or(Plain::Mixed, Plain::Strs),
        _ => Plain::Mixed,
    }
}

impl Vm<'_> {
    /// A stable sort with an optional key function, as `sorted` and `list.sort` do.
    /// `reverse` keeps equal items in their order, as CPython does by reversing, sorting
    /// and reversing again.
    pub fn sort_values(
        &mut self,
        items: Vec<Value>,
        key: Option<Value>,
        reverse: bool,
    ) -> PyResult<Vec<Value>> {
        let keys = match &key {
            Some(k) => {
                let mut keys = memory::vec_with_capacity(items.len())?;
                for x in &items {
                    keys.push(self.call_value(k, Args::new(vec![x.clone()]))?);
                }
                keys
            }
            None => items.clone(),
        };
        let mut idx: Vec<usize> = memory::vec_with_capacity(items.len())?;
        idx.extend(0..items.len());
        if reverse {
            idx.reverse();
        }
        let flag = self.core.interrupt.clone();
        let mut tick = || -> PyResult<()> {
            if flag.swap(false, std::sync::atomic::Ordering::SeqCst) {
                return Err(crate::lang::values::exc::PyErr::keyboard_interrupt());
            }
            Ok(())
        };
        match plain(&keys) {
            Plain::Ints(k) => merge_sort(&mut idx, &mut |a, b| Ok(k[a] < k[b]), &mut tick)?,
            Plain::Floats(k) => merge_sort(&mut idx, &mut |a, b| Ok(k[a] < k[b]), &mut tick)?,
            Plain::Strs(k) => merge_sort(&mut idx, &mut |a, b| Ok(k[a] < k[b]), &mut tick)?,
            Plain::Mixed => {
                let mut lt = |a: usize, b: usize| -> PyResult<bool> {
                    let r = self.rich_compare(CmpOp::Lt, &keys[a], &keys[b])?;
                    self.truthy(&r)
                };
                merge_sort(&mut idx, &mut lt, &mut tick)?
            }
        }
        if reverse {
            idx.reverse();
        }
        Ok(idx.into_iter().map(|i| items[i].clone()).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted_by(v: &[i64], mut lt: impl FnMut(i64, i64) -> bool) -> Vec<i64> {
        let mut idx: Vec<usize> = (0..v.len()).collect();
        merge_sort(&mut idx, &mut |a, b| Ok(lt(v[a], v[b])), &mut || Ok(())).unwrap();
        idx.into_iter().map(|i| v[i]).collect()
    }

    #[test]
    fn sorts_like_the_standard_sort_and_keeps_equal_items_in_order() {
        let mut x: u64 = 12345;
        let v: Vec<i64> = (0..5000)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (x >> 40) as i64 % 100
            })
            .collect();
        let mut want = v.clone();
        want.sort();
        assert_eq!(sorted_by(&v, |a, b| a < b), want);
        // Stability: sorting pairs by their first half keeps the second half's order.
        let pairs: Vec<i64> = v
            .iter()
            .enumerate()
            .map(|(i, k)| k * 10_000 + i as i64)
            .collect();
        let got = sorted_by(&pairs, |a, b| a / 10_000 < b / 10_000);
        let mut want = pairs.clone();
        want.sort();
        assert_eq!(got, want);
    }

    #[test]
    fn an_inconsistent_comparison_still_ends_with_every_item() {
        let v: Vec<i64> = (0..3000).collect();
        let mut n = 0u32;
        let got = sorted_by(&v, |_, _| {
            n = n.wrapping_mul(1103515245).wrapping_add(12345);
            n >> 16 & 1 == 1
        });
        let mut back = got.clone();
        back.sort();
        assert_eq!(back, v);
    }
}
