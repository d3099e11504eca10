//! Running the tree: the `Vm` (session state that outlives cells, one cell's run of it), the
//! hot path, expressions, statements, `try`/`with`, comprehensions, calls of every kind of
//! callable, lazy generators (`generator`), context managers, calls that take turns and meet (`together`: `strategy.run`'s replicas),
//! and the recursion bounds that keep all of it off an unbounded
//! Rust stack.

pub(super) mod call;
pub(super) mod comp;
pub(super) mod ctxmgr;
pub(super) mod expr;
pub(super) mod fast;
pub(super) mod generator;
pub(super) mod guard;
pub(super) mod interp;
pub(super) mod recursion;
pub(super) mod stmt;
pub(super) mod together;
pub(super) mod vm;
