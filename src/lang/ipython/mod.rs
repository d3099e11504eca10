//! What IPython adds on top of Python: line and cell magics, completion, inspection and `help`
//! text, the traceback rendering of an uncaught exception, and the pretty printer for execute
//! results.

pub(super) mod complete;
pub(super) mod help;
pub(super) mod magics;
pub(super) mod pretty;
pub(super) mod traceback;
