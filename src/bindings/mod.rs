//! The modules a cell can import: `tensorflow` (config, distribute, keras, data, nn, math),
//! `numpy`, `matplotlib.pyplot`, `IPython.display`, and the standard library's modules in
//! `stdlib/`. Each converts language values to engine types and back and holds no numerics
//! of its own. [`provided_modules`] names them for the interpreter's `ModuleNotFoundError`.

pub mod common;
pub mod ipython;
pub mod numpy;
pub mod plt;
pub mod stdlib;
pub mod tf;

use crate::lang::{Ctx, PyResult, Value};

/// The names of the modules [`load_module`] provides, as a failed import lists them.
pub fn provided_modules() -> Vec<&'static str> {
    let mut names = vec![
        "tensorflow",
        "numpy",
        "matplotlib.pyplot",
        "IPython.display",
    ];
    names.extend(stdlib::NAMES);
    names
}

/// The kernel's module loader, handed to the interpreter by the session. Dotted names not
/// listed here (`tensorflow.keras.layers`) are found by the interpreter as attributes of
/// their top-level module.
pub fn load_module(name: &str, ctx: &mut dyn Ctx) -> Option<PyResult<Value>> {
    // Long array operations on this thread stop at the cell's interrupt.
    crate::tensor::interrupt::watch(ctx.interrupt_flag());
    match name {
        "numpy" => Some(numpy::module(ctx)),
        "tensorflow" => Some(tf::module(ctx)),
        "matplotlib" | "matplotlib.pyplot" => Some(plt::module(name, ctx)),
        "IPython" | "IPython.display" => Some(ipython::module(name, ctx)),
        n if stdlib::NAMES.contains(&n) => Some(stdlib::module(name, ctx)),
        "tensorboard" | "tensorboard.notebook" => Some(Ok(tf::keras::tensorboard::module(name))),
        _ => None,
    }
}
