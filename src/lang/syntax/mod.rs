//! Source text to the interpreter's tree: parsing a cell with astral's parser (depth-bounded),
//! CPython's wording for syntax errors, the tree itself, and the conversion that resolves names
//! to slots (with the scope analysis it needs). Nothing here runs code.

pub(super) mod ast;
pub(super) mod convert;
pub(super) mod convert_expr;
pub(super) mod errors;
pub(super) mod parse;
pub(super) mod scope;
