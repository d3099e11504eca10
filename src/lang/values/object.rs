//! The contract between the interpreter and every native (Rust-implemented) Python object:
//! numpy arrays, tensors, Keras models and layers, strategies, figures. A binding implements
//! [`Object`] for its type and wraps it with [`Value::native`]; the interpreter calls these
//! methods for attribute access, calls, operators, indexing, iteration, `with` blocks and
//! display. Every method has a default that raises the `TypeError` or `AttributeError`
//! CPython would raise, so a binding implements only what its type supports.
//!
//! Natives receive a [`Ctx`]: the running interpreter seen from outside, through which they
//! call back into Python (a `Dataset.map` function, a user callback), emit output, check the
//! interrupt flag and keep session-wide state (the active strategy scope).

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use super::exc::{PyErr, PyResult};
use super::value::Value;
use crate::cell::Output;
use crate::display::MimeBundle;

/// Positional and keyword arguments of a call, in call order.
#[derive(Debug, Clone, Default)]
pub struct Args {
    pub pos: Vec<Value>,
    pub kw: Vec<(String, Value)>,
}

impl Args {
    pub fn new(pos: Vec<Value>) -> Args {
        Args { pos, kw: vec![] }
    }

    pub fn with_kw(mut self, name: &str, v: Value) -> Args {
        self.kw.push((name.to_string(), v));
        self
    }

    /// Binds the arguments to a parameter list, CPython style: `names[i]` is the i-th
    /// parameter; `required` of them come first and must be given. Unknown keywords, missing
    /// required arguments, too many positionals and duplicates are `TypeError`s naming
    /// `func`. Returns one slot per parameter, `None` where the caller left it out.
    pub fn bind(
        &self,
        func: &str,
        names: &[&str],
        required: usize,
    ) -> PyResult<Vec<Option<Value>>> {
        let mut slots: Vec<Option<Value>> = vec![None; names.len()];
        if self.pos.len() > names.len() {
            return Err(PyErr::type_error(format!(
                "{func}() takes {} positional argument{} but {} were given",
                names.len(),
                if names.len() == 1 { "" } else { "s" },
                self.pos.len()
            )));
        }
        for (i, v) in self.pos.iter().enumerate() {
            slots[i] = Some(v.clone());
        }
        for (k, v) in &self.kw {
            match names.iter().position(|n| n == k) {
                Some(i) if slots[i].is_some() => {
                    return Err(PyErr::type_error(format!(
                        "{func}() got multiple values for argument '{k}'"
                    )))
                }
                Some(i) => slots[i] = Some(v.clone()),
                None => {
                    return Err(PyErr::type_error(format!(
                        "{func}() got an unexpected keyword argument '{k}'"
                    )))
                }
            }
        }
        for (i, n) in names.iter().enumerate().take(required) {
            if slots[i].is_none() {
                return Err(PyErr::type_error(format!(
                    "{func}() missing 1 required positional argument: '{n}'"
                )));
            }
        }
        Ok(slots)
    }
}

/// Binary operators as the interpreter dispatches them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    FloorDiv,
    Mod,
    Pow,
    MatMul,
    BitAnd,
    BitOr,
    BitXor,
    LShift,
    RShift,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnaryOp {
    Neg,
    Pos,
    Invert,
}

/// A Rust-implemented Python object. `&self` methods only: objects with state keep it in a
/// `RefCell` (the interpreter is single-threaded; training threads never see a `Value`).
pub trait Object: Any {
    /// `type(x).__name__`.
    fn type_name(&self) -> String;

    /// `repr(x)`.
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(format!("<{} object>", self.type_name()))
    }

    /// `str(x)`; defaults to `repr`.
    fn str(&self, ctx: &mut dyn Ctx) -> PyResult<String> {
        self.repr(ctx)
    }

    /// A rich MIME bundle for display (`text/plain` is filled from `repr` when absent).
    fn rich(&self, _ctx: &mut dyn Ctx) -> PyResult<Option<MimeBundle>> {
        Ok(None)
    }

    /// `x.name`; `Ok(None)` means "no such attribute" and becomes CPython's AttributeError.
    fn getattr(&self, _this: &Value, _name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        Ok(None)
    }

    fn setattr(&self, _name: &str, _v: Value, _ctx: &mut dyn Ctx) -> PyResult<()> {
        Err(PyErr::attribute_error(format!(
            "'{}' object attribute is read-only",
            self.type_name()
        )))
    }

    /// Names for completion and `dir()`.
    fn dir(&self) -> Vec<String> {
        vec![]
    }

    /// `x(*args, **kwargs)`; `this` is the value wrapping `self`.
    fn call(&self, _this: &Value, _args: Args, _ctx: &mut dyn Ctx) -> PyResult<Value> {
        Err(PyErr::type_error(format!(
            "'{}' object is not callable",
            self.type_name()
        )))
    }

    /// `x op other` (or, with `reflected`, `other op x`). `Ok(None)` is NotImplemented.
    fn binop(
        &self,
        _op: BinOp,
        _other: &Value,
        _reflected: bool,
        _ctx: &mut dyn Ctx,
    ) -> PyResult<Option<Value>> {
        Ok(None)
    }

    /// `x op other` for comparisons; `Ok(None)` falls back to identity for `==`/`!=`.
    fn compare(&self, _op: CmpOp, _other: &Value, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        Ok(None)
    }

    fn unary(&self, op: UnaryOp, _ctx: &mut dyn Ctx) -> PyResult<Value> {
        let sym = match op {
            UnaryOp::Neg => "-",
            UnaryOp::Pos => "+",
            UnaryOp::Invert => "~",
        };
        Err(PyErr::type_error(format!(
            "bad operand type for unary {sym}: '{}'",
            self.type_name()
        )))
    }

    /// `bool(x)`; `None` means "always true" as for plain objects.
    fn truthy(&self, _ctx: &mut dyn Ctx) -> PyResult<Option<bool>> {
        Ok(None)
    }

    fn len(&self, _ctx: &mut dyn Ctx) -> PyResult<Option<usize>> {
        Ok(None)
    }

    fn getitem(&self, _key: &Value, _ctx: &mut dyn Ctx) -> PyResult<Value> {
        Err(PyErr::type_error(format!(
            "'{}' object is not subscriptable",
            self.type_name()
        )))
    }

    fn setitem(&self, _key: &Value, _v: Value, _ctx: &mut dyn Ctx) -> PyResult<()> {
        Err(PyErr::type_error(format!(
            "'{}' object does not support item assignment",
            self.type_name()
        )))
    }

    /// `iter(x)`: returns an iterator value (often a native whose `next` yields items).
    fn iter(&self, _this: &Value, _ctx: &mut dyn Ctx) -> PyResult<Value> {
        Err(PyErr::type_error(format!(
            "'{}' object is not iterable",
            self.type_name()
        )))
    }

    /// `next(x)` for native iterators; `Ok(None)` is StopIteration.
    fn next(&self, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        Err(PyErr::type_error(format!(
            "'{}' object is not an iterator",
            self.type_name()
        )))
    }

    /// `with x:` entry; returns the value bound by `as`.
    fn enter(&self, _this: &Value, _ctx: &mut dyn Ctx) -> PyResult<Value> {
        Err(PyErr::type_error(format!(
            "'{}' object does not support the context manager protocol",
            self.type_name()
        )))
    }

    /// `with x:` exit; `error` is the exception leaving the block, if any. Returning
    /// `Ok(true)` swallows it, as `__exit__` returning True does.
    fn exit(&self, _error: Option<&PyErr>, _ctx: &mut dyn Ctx) -> PyResult<bool> {
        Ok(false)
    }

    /// `instance.name` where `instance`'s class holds this native as `name`: what a Python
    /// descriptor's `__get__` returns (`this` is the value wrapping `self`). `None` binds
    /// it as a method, the default for callables.
    fn bind_instance(&self, _this: &Value, _instance: &Value) -> Option<Value> {
        None
    }

    /// Hash for use as a dict key or set member; `None` is unhashable.
    fn hash(&self) -> Option<u64> {
        None
    }

    /// The signature and one-paragraph doc shown by inspect, `help(x)` and `x?`.
    fn doc(&self) -> Option<String> {
        None
    }

    /// `isinstance(x, cls)` for native classes: the names of the classes this object is an
    /// instance of, most derived first (e.g. `["Dense", "Layer", "Operation"]`).
    fn class_chain(&self) -> Vec<String> {
        vec![self.type_name()]
    }

    fn as_any(&self) -> &dyn Any;
}

/// The interpreter as natives see it.
pub trait Ctx {
    /// Calls any Python callable (a user function, a class, a bound method, a native).
    fn call(&mut self, f: &Value, args: Args) -> PyResult<Value>;
    /// `getattr(v, name)` with the full Python rules (instances of user classes included).
    fn getattr(&mut self, v: &Value, name: &str) -> PyResult<Value>;
    /// `repr(v)` and `str(v)` honouring user `__repr__`/`__str__`.
    fn repr(&mut self, v: &Value) -> PyResult<String>;
    fn str(&mut self, v: &Value) -> PyResult<String>;
    /// The display bundle of any value, as `display(v)` would show it.
    fn rich(&mut self, v: &Value) -> PyResult<MimeBundle>;
    /// Iterates any iterable to a vector (bounded by the interrupt flag).
    fn iterate(&mut self, v: &Value) -> PyResult<Vec<Value>>;
    /// Sends output to the cell's sink (stdout, stderr, displays).
    fn emit(&mut self, out: Output);
    /// `Err(KeyboardInterrupt)` when an interrupt is pending.
    fn check_interrupt(&mut self) -> PyResult<()>;
    /// The shared interrupt flag, for long native loops that run outside the interpreter.
    fn interrupt_flag(&self) -> Arc<AtomicBool>;
    /// Session-wide state that bindings keep across cells, keyed by type.
    fn state(&mut self) -> &mut State;
    /// A line of input from the front end (`input()`).
    fn input(&mut self, prompt: &str, password: bool) -> PyResult<String>;
    /// The execution count of the running cell.
    fn execution_count(&self) -> u64;
    /// The interpreter's exception class of that name (builtin, TensorFlow's `OpError`
    /// family, or a new `Exception` subclass for an unknown name), the same value that
    /// `except` clauses match natives' errors against. `None` from contexts without an
    /// interpreter.
    fn exception_class(&mut self, name: &str) -> Option<Value> {
        let _ = name;
        None
    }
    /// Whether calling `f` with the keyword argument `name` would bind it (a parameter of
    /// that name, or `**kwargs`), as Keras inspects a layer's `call` for `training`; `None`
    /// when `f` is not a Python function or method.
    fn accepts_keyword(&mut self, f: &Value, name: &str) -> Option<bool> {
        let _ = (f, name);
        None
    }
    /// `a op b`, `a op b` for comparisons, `bool(v)`, `iter(v)` and `next(it)` with the full
    /// Python rules (user dunder methods included), so that natives such as
    /// `itertools.accumulate` or `operator.add` compute and pull items lazily as Python does.
    /// Contexts without an interpreter refuse with a TypeError.
    fn binop(&mut self, op: BinOp, a: &Value, b: &Value) -> PyResult<Value> {
        let _ = (op, b);
        Err(no_interpreter(a))
    }
    fn compare(&mut self, op: CmpOp, a: &Value, b: &Value) -> PyResult<Value> {
        let _ = (op, b);
        Err(no_interpreter(a))
    }
    fn truthy(&mut self, v: &Value) -> PyResult<bool> {
        Err(no_interpreter(v))
    }
    fn get_iter(&mut self, v: &Value) -> PyResult<Value> {
        Err(no_interpreter(v))
    }
    /// `v[key]` and `item in container`, with the same rules.
    fn getitem(&mut self, v: &Value, key: &Value) -> PyResult<Value> {
        let _ = key;
        Err(no_interpreter(v))
    }
    fn contains(&mut self, container: &Value, item: &Value) -> PyResult<bool> {
        let _ = item;
        Err(no_interpreter(container))
    }
    fn next_item(&mut self, it: &Value) -> PyResult<Option<Value>> {
        Err(no_interpreter(it))
    }
    /// `v.name = value` with the full Python rules (instances of user classes included), so
    /// a native can set `self.model` on a user's callback. Contexts without an interpreter
    /// refuse with an AttributeError.
    fn setattr(&mut self, v: &Value, name: &str, value: Value) -> PyResult<()> {
        let _ = value;
        Err(PyErr::attribute_error(format!(
            "'{}' object attribute '{name}' cannot be set here",
            v.type_name()
        )))
    }
    /// Exchanges the interpreter state of the running thread of Python execution with
    /// `thread` (see [`ThreadState`]). Calling it twice with the same `thread` puts
    /// everything back. Contexts without an interpreter keep no such state.
    fn switch_thread(&mut self, thread: &mut ThreadState) {
        let _ = thread;
    }
}

/// What the interpreter keeps per thread of Python execution, as CPython keeps it per
/// thread: the recursion depth, the exceptions being handled (for a bare `raise`), the
/// containers being printed, and the lowest
/// address the running stack may reach (`None`: the session thread's own stack, which
/// `stacker` measures). Calls that take turns on one thread (`strategy.run`'s replicas)
/// each keep one, so one replica's frames never see another's.
#[derive(Default)]
pub struct ThreadState {
    pub(in crate::lang) depth: usize,
    pub(in crate::lang) handling: Vec<PyErr>,
    pub(in crate::lang) repr_active: Vec<usize>,
    pub(in crate::lang) stack_limit: Option<usize>,
}

impl ThreadState {
    /// A new thread's state: its calls counted from `depth`, on a stack whose lowest usable
    /// address is `stack_limit`.
    pub(in crate::lang) fn new(depth: usize, stack_limit: usize) -> ThreadState {
        ThreadState {
            depth,
            stack_limit: Some(stack_limit),
            ..ThreadState::default()
        }
    }

    pub(in crate::lang) fn depth(&self) -> usize {
        self.depth
    }
}

fn no_interpreter(v: &Value) -> PyErr {
    PyErr::type_error(format!(
        "'{}' object cannot be used here without an interpreter",
        v.type_name()
    ))
}

/// A type-keyed map of session state owned by bindings (the strategy stack, logical device
/// configuration, the current matplotlib figure). Cleared by `%reset` and kernel restart.
#[derive(Default)]
pub struct State {
    items: HashMap<TypeId, Box<dyn Any>>,
}

impl State {
    pub fn get<T: Any + Default>(&mut self) -> &mut T {
        self.items
            .entry(TypeId::of::<T>())
            .or_insert_with(|| Box::new(T::default()))
            .downcast_mut::<T>()
            .expect("State entries are keyed by their own TypeId")
    }

    pub fn clear(&mut self) {
        self.items.clear();
    }
}
