//! The builtin namespace and the standard modules a notebook imports: builtin functions and the
//! builtin types' constructors, the methods of `str`, `list`, `tuple`, `dict`, `set`, `int` and
//! `float`, format specs and `%` formatting, sorting, `open()`, the `math` module and the
//! import machinery.

pub(super) mod files;
pub(super) mod format;
pub(super) mod introspection;
pub(super) mod io;
pub(super) mod iteration;
pub(super) mod math;
pub(super) mod methods;
pub(super) mod modules;
pub(super) mod namespace;
pub(super) mod numeric;
pub(super) mod sort;
pub(super) mod types;
pub(super) mod wrappers;
