//! Python's data model as the evaluator applies it to every kind of value: attribute access,
//! items (indexing, slicing, membership, iteration), operators, comparisons, and `repr`/`str`.
//! Each falls back to a user's `__dunder__` methods and then to a native's `Object` methods, in
//! CPython's order.

pub(super) mod attr;
pub(super) mod compare;
pub(super) mod items;
pub(super) mod ops;
pub(super) mod repr;
