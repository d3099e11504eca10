//! What a value is: the `Value` enum and its containers, the `Object` contract every native
//! implements (with `Ctx`, the way natives call back into Python, and `StandIn`, a `Ctx`
//! without an interpreter), native functions and modules, lazy iterators, the interpreter's own objects
//! (functions, classes, instances, sets, ranges), exceptions and their class tree, fallible
//! allocation under the memory bound, and dropping deep values without deep recursion.

pub(super) mod exc;
pub(super) mod exceptions;
pub(super) mod lazy;
pub(super) mod memory;
pub(super) mod native;
pub(super) mod object;
pub(super) mod runtime;
pub(super) mod stand_in;
pub(super) mod trashcan;
pub(super) mod value;
