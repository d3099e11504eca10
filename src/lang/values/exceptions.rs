//! The exception class hierarchy (CPython's, IPython's `UsageError`, TensorFlow's error
//! names) as interpreter classes, and the rules that connect a [`PyErr`] raised anywhere
//! (user code or natives, which raise by name) to `except` clauses and `as e` values.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use indexmap::IndexMap;

use super::exc::PyErr;
use super::runtime::{Class, Instance};
use super::value::Value;
use crate::lang::eval::vm::Vm;

/// (class, parent) pairs, parents first.
const HIERARCHY: &[(&str, &str)] = &[
    ("BaseException", ""),
    ("Exception", "BaseException"),
    ("KeyboardInterrupt", "BaseException"),
    ("SystemExit", "BaseException"),
    ("GeneratorExit", "BaseException"),
    ("ArithmeticError", "Exception"),
    ("ZeroDivisionError", "ArithmeticError"),
    ("OverflowError", "ArithmeticError"),
    ("FloatingPointError", "ArithmeticError"),
    ("LookupError", "Exception"),
    ("IndexError", "LookupError"),
    ("KeyError", "LookupError"),
    ("ValueError", "Exception"),
    ("UnicodeError", "ValueError"),
    ("TypeError", "Exception"),
    ("NameError", "Exception"),
    ("UnboundLocalError", "NameError"),
    ("AttributeError", "Exception"),
    ("RuntimeError", "Exception"),
    ("RecursionError", "RuntimeError"),
    ("NotImplementedError", "RuntimeError"),
    ("ImportError", "Exception"),
    ("ModuleNotFoundError", "ImportError"),
    ("StopIteration", "Exception"),
    ("AssertionError", "Exception"),
    ("OSError", "Exception"),
    ("FileNotFoundError", "OSError"),
    ("FileExistsError", "OSError"),
    ("IsADirectoryError", "OSError"),
    ("NotADirectoryError", "OSError"),
    ("PermissionError", "OSError"),
    ("TimeoutError", "OSError"),
    ("MemoryError", "Exception"),
    ("SyntaxError", "Exception"),
    ("IndentationError", "SyntaxError"),
    ("SystemError", "Exception"),
    ("Warning", "Exception"),
    ("UserWarning", "Warning"),
    ("DeprecationWarning", "Warning"),
    ("UsageError", "Exception"),
    ("StdinNotImplementedError", "NotImplementedError"),
];

/// TensorFlow's error classes (`tf.errors`), all below `OpError`. They are not builtins:
/// the tf binding exposes them through [`crate::lang::exception_class`].
pub const TF_ERRORS: &[&str] = &[
    "InvalidArgumentError",
    "ResourceExhaustedError",
    "NotFoundError",
    "UnimplementedError",
    "FailedPreconditionError",
    "OutOfRangeError",
    "UnknownError",
    "InternalError",
    "AbortedError",
    "CancelledError",
    "AlreadyExistsError",
    "PermissionDeniedError",
    "DeadlineExceededError",
    "DataLossError",
    "UnavailableError",
    "UnauthenticatedError",
];

const TF_MODULE: &str = "tensorflow.python.framework.errors_impl";

/// Python's builtin exception classes by name.
pub fn make_classes() -> HashMap<String, Value> {
    let mut out: HashMap<String, Value> = HashMap::new();
    for (name, parent) in HIERARCHY {
        let base = out.get(*parent).cloned();
        out.insert(name.to_string(), new_class(name, base));
    }
    out
}

/// Adds TensorFlow's `OpError` family, so a native raising `InvalidArgumentError` by
/// name is caught by `except tf.errors.OpError`.
pub fn add_tf_classes(classes: &mut HashMap<String, Value>) {
    let op = class_in("OpError", classes.get("Exception").cloned(), TF_MODULE);
    for name in TF_ERRORS {
        let c = class_in(name, Some(op.clone()), TF_MODULE);
        classes.insert(name.to_string(), c);
    }
    classes.insert("OpError".into(), op);
}

/// Exception classes of standard-library modules (class, parent, module): not builtins,
/// bound in their module (`json.JSONDecodeError`) through [`crate::lang::exception_class`].
const STDLIB_ERRORS: &[(&str, &str, &str)] = &[
    ("JSONDecodeError", "ValueError", "json.decoder"),
    ("Error", "OSError", "shutil"),
    ("SameFileError", "Error", "shutil"),
    ("error", "Exception", "re"),
    ("StatisticsError", "ValueError", "statistics"),
    ("FrozenInstanceError", "AttributeError", "dataclasses"),
];

/// Adds the standard library's exception classes, so a native raising `JSONDecodeError`
/// by name is caught by `except ValueError`.
pub fn add_stdlib_classes(classes: &mut HashMap<String, Value>) {
    for (name, parent, module) in STDLIB_ERRORS {
        let c = class_in(name, classes.get(*parent).cloned(), module);
        classes.insert(name.to_string(), c);
    }
}

fn new_class(name: &str, base: Option<Value>) -> Value {
    class_in(name, base, "builtins")
}

fn class_in(name: &str, base: Option<Value>, module: &str) -> Value {
    Value::Obj(Rc::new(Class {
        name: name.to_string(),
        module: module.into(),
        base,
        dict: RefCell::new(IndexMap::default()),
        builtin: module == "builtins",
        properties: Default::default(),
    }))
}

impl Vm<'_> {
    /// The class an error belongs to: its instance's class, or the builtin class of that
    /// name (unknown names, such as TensorFlow's, become subclasses of `Exception`).
    pub fn err_class(&mut self, e: &PyErr) -> Value {
        if let Some(v) = &e.0.value {
            if let Some(i) = v.downcast::<Instance>() {
                return i.class.clone();
            }
        }
        self.exc_class(e.type_name())
    }

    pub fn exc_class(&mut self, name: &str) -> Value {
        if let Some(c) = self.core.exc_classes.get(name) {
            return c.clone();
        }
        let base = self.core.exc_classes.get("Exception").cloned();
        let c = new_class(name, base);
        self.core.exc_classes.insert(name.to_string(), c.clone());
        c
    }

    /// Whether the error matches an `except` clause's class (or tuple of classes).
    pub fn err_matches(&mut self, e: &PyErr, spec: &Value) -> bool {
        if let Some(t) = spec.as_seq() {
            return t.iter().any(|s| self.err_matches(e, s));
        }
        let cls = self.err_class(e);
        match (cls.downcast::<Class>(), spec.downcast::<Class>()) {
            (Some(a), Some(b)) => a.is_subclass_of(b),
            _ => match spec {
                Value::Native(o) => {
                    let want = o.as_any().downcast_ref::<crate::lang::NativeClass>();
                    let name = want.map(|c| c.name.clone()).unwrap_or_default();
                    let chain: Vec<String> = cls
                        .downcast::<Class>()
                        .map(|c| c.mro().iter().map(|c| c.name.clone()).collect())
                        .unwrap_or_default();
                    chain.contains(&name)
                }
                _ => false,
            },
        }
    }

    /// The exception object `except ... as e` binds.
    pub fn err_value(&mut self, e: &PyErr) -> Value {
        if let Some(v) = &e.0.value {
            return v.clone();
        }
        let cls = self.err_class(e);
        let args = if e.message().is_empty() {
            vec![]
        } else {
            vec![Value::str(e.message())]
        };
        exc_instance(cls, args)
    }
}

impl Vm<'_> {
    /// `KeyError(key)` as Python raises it: the instance holds the key itself.
    pub fn key_error(&mut self, key: &Value) -> PyErr {
        let cls = self.exc_class("KeyError");
        self.err_from_instance(exc_instance(cls, vec![key.clone()]))
    }
}

pub fn exc_instance(cls: Value, args: Vec<Value>) -> Value {
    let mut attrs = IndexMap::default();
    attrs.insert("args".to_string(), Value::tuple(args));
    Value::Obj(Rc::new(Instance {
        class: cls,
        attrs: RefCell::new(attrs),
    }))
}

/// Whether a class value derives from BaseException.
pub fn is_exception_class(v: &Value) -> bool {
    v.downcast::<Class>()
        .map(|c| {
            c.mro()
                .iter()
                .any(|k| k.builtin && k.name == "BaseException")
        })
        .unwrap_or(false)
}
