//! Inspection text: signatures and one-paragraph docs for builtins, user functions and
//! classes, and natives (through `Object::doc`), as `help(x)`, `x?` and the inspect request
//! show them.

use crate::lang::eval::vm::Vm;
use crate::lang::syntax::ast::ParamKind;
use crate::lang::values::exc::PyResult;
use crate::lang::values::runtime::{BoundMethod, Class, Function};
use crate::lang::values::value::Value;

pub fn builtin_doc(name: &str) -> String {
    let (sig, doc) = match name {
        "print" => ("print(*args, sep=' ', end='\\n', file=None, flush=False)", "Prints the values to a stream, or to sys.stdout by default."),
        "len" => ("len(obj, /)", "Return the number of items in a container."),
        "range" => ("range(stop) / range(start, stop[, step])", "Return an object that produces a sequence of integers from start (inclusive) to stop (exclusive) by step."),
        "sorted" => ("sorted(iterable, /, *, key=None, reverse=False)", "Return a new list containing all items from the iterable in ascending order."),
        "isinstance" => ("isinstance(obj, class_or_tuple, /)", "Return whether an object is an instance of a class or of a subclass thereof."),
        "display" => ("display(*objs)", "Display a Python object in all frontends, using its richest representation."),
        "enumerate" => ("enumerate(iterable, start=0)", "Return an enumerate object yielding (index, value) pairs."),
        "zip" => ("zip(*iterables)", "Iterate over several iterables in parallel, producing tuples."),
        "sum" => ("sum(iterable, /, start=0)", "Return the sum of a 'start' value (default: 0) plus an iterable of numbers."),
        "open" => ("open(file, mode='r', encoding=None)", "Open file and return a stream."),
        _ => ("", ""),
    };
    if sig.is_empty() {
        format!("{name}(...)\nBuilt-in function {name}.")
    } else {
        format!("{sig}\n{doc}")
    }
}

pub fn help_text(vm: &mut Vm, v: &Value) -> PyResult<String> {
    if let Some(f) = v.downcast::<Function>() {
        let params: Vec<String> = f.def.params.iter().map(|p| p.name.to_string()).collect();
        let mut s = format!("{}({})", f.def.name, params.join(", "));
        if let Some(d) = &f.def.doc {
            s.push('\n');
            s.push_str(d);
        }
        return Ok(s);
    }
    if let Some(c) = v.downcast::<Class>() {
        let mut s = format!("class {}", c.name);
        if let Some(Value::Str(d)) = c.lookup("__doc__") {
            s.push('\n');
            s.push_str(&d);
        }
        return Ok(s);
    }
    if let Value::Obj(o) | Value::Native(o) = v {
        if let Some(d) = o.doc() {
            if !d.is_empty() {
                return Ok(d);
            }
        }
    }
    let r = vm.repr_of(v)?;
    Ok(format!("{r}\nType: {}", v.type_name()))
}

/// One parameter of a user function, as `inspect.signature` lists it.
#[derive(Debug, Clone)]
pub struct SigParam {
    pub name: String,
    pub kw_only: bool,
    /// The evaluated default, if the parameter has one.
    pub default: Option<Value>,
}

/// The signature of a user function: what a native that wraps functions (`tf.function`)
/// needs to bind arguments to parameter names as Python would.
#[derive(Debug, Clone)]
pub struct Signature {
    pub name: String,
    pub qualname: String,
    pub params: Vec<SigParam>,
    pub vararg: Option<String>,
    pub kwarg: Option<String>,
}

impl Signature {
    /// Whether the function was defined in a class body (its qualified name names the
    /// class), so that its first parameter is the instance.
    pub fn is_method(&self) -> bool {
        let parts: Vec<&str> = self.qualname.split('.').collect();
        parts.len() >= 2 && parts[parts.len() - 2] != "<locals>"
    }
}

/// The signature of a user function (or of the function behind a bound method, with the
/// bound instance), `None` for anything else.
pub fn signature(v: &Value) -> Option<(Signature, Option<Value>)> {
    if let Some(m) = v.downcast::<BoundMethod>() {
        let (mut sig, _) = signature(&m.func)?;
        if !sig.params.is_empty() {
            sig.params.remove(0);
        }
        return Some((sig, Some(m.this.clone())));
    }
    let f = v.downcast::<Function>()?;
    let params = f
        .def
        .params
        .iter()
        .zip(&f.defaults)
        .map(|(p, d)| SigParam {
            name: p.name.to_string(),
            kw_only: matches!(p.kind, ParamKind::KwOnly),
            default: d.clone(),
        })
        .collect();
    Some((
        Signature {
            name: f.def.name.to_string(),
            qualname: f.qualname.clone(),
            params,
            vararg: f.def.vararg.as_ref().map(|(n, _)| n.to_string()),
            kwarg: f.def.kwarg.as_ref().map(|(n, _)| n.to_string()),
        },
        None,
    ))
}
