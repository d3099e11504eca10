//! Generators as CPython has them: calling a generator function (or evaluating a generator
//! expression) makes a [`Generator`] whose body has not run yet; `next()`, `send()`,
//! `throw()` and `close()` run it up to its next `yield` and stop it there. Each body is a
//! stackful coroutine (`corosensei`) on a stack of its own, suspended at its `yield`.
//!
//! This module owns the coroutine of each generator, the switch between the resumer's
//! interpreter and the body's, `yield`, `yield from`, and the generator methods with
//! CPython's errors. It does not know what a body computes (the caller hands it a closure)
//! nor how a function's arguments are bound (`call` does that before the generator exists).
//!
//! The body's evaluator frames hold a `&mut Vm` that must stay valid while the body is
//! suspended, yet a generator may be resumed by a later cell's `Vm`, elsewhere in memory.
//! So each body runs on a `Vm` of its own, kept on its own stack: every resume moves the
//! resumer's interpreter state into it, and every `yield` (or the end of the body) moves
//! it back. Per-thread state that belongs to the generator rather than to its resumer (its
//! frames' share of the recursion depth, the exceptions its `except` blocks are handling,
//! the bound of the stack it runs on) is set aside while it is suspended and put back on
//! top of the resumer's when it runs again, as CPython keeps a generator's exception state
//! in the generator.
//!
//! A generator dropped while suspended unwinds its stack (the coroutine is force-unwound),
//! which drops the values its frames hold; as in CPython, no Python code is needed for
//! that. Finished coroutines give their stacks back to a small pool, so that generator
//! expressions made in a loop do not map a stack each.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::mem::MaybeUninit;
use std::rc::Rc;

use corosensei::stack::{DefaultStack, Stack};
use corosensei::{Coroutine, CoroutineResult, Yielder};

use super::recursion::SEGMENT;
use super::vm::Vm;
use crate::lang::builtins::wrappers::MethodRef;
use crate::lang::values::exc::{PyErr, PyResult};
use crate::lang::values::object::{Args, Ctx, Object};
use crate::lang::values::value::Value;

/// What a generator is resumed with: the resumer's interpreter and what to do.
pub(in crate::lang) struct Sent {
    vm: *mut Vm<'static>,
    input: Input,
}

/// `send(v)` (and `next()`, which sends `None`), or `throw(e)`.
pub(in crate::lang) enum Input {
    Value(Value),
    Throw(PyErr),
}

/// How a turn of the body ended when it did not raise.
pub(in crate::lang) enum Step {
    Yielded(Value),
    Returned(Value),
}

type Co = Coroutine<Sent, Value, PyResult<Value>, DefaultStack>;

/// The running body's way back to its resumer, kept in the body's `Vm` while it runs:
/// its coroutine's yielder and the resumer's interpreter, which gets the state back at a
/// `yield`. Both are raw pointers: the yielder lives on the body's stack for as long as
/// the body runs, and the resumer's `Vm` waits in `resume` until the body stops.
#[derive(Clone, Copy)]
pub struct GenLink {
    yielder: *const Yielder<Sent, Value>,
    caller: *mut Vm<'static>,
}

/// A body: what runs on the first resume, with the generator's own `Vm`. Its `Ok` is the
/// generator's return value (`StopIteration.value`).
pub(in crate::lang) type Body = Box<dyn FnOnce(&mut Vm<'static>) -> PyResult<Value>>;

/// A generator object.
pub struct Generator {
    /// `__name__` and `__qualname__` (`f`, `C.method`, `<genexpr>`).
    name: String,
    qualname: String,
    /// The suspended (or not yet started) body; `None` once it has finished, and while it
    /// runs (it is taken out for the turn, so that a body reaching its own generator again
    /// finds it busy).
    co: RefCell<Option<Co>>,
    running: Cell<bool>,
    /// The recursion depth of the body's own frames, counted on top of the resumer's.
    depth: Cell<usize>,
    /// Exceptions the body's `except` blocks were handling when it yielded.
    handling: RefCell<Vec<PyErr>>,
    /// The lowest address the body's stack may reach.
    limit: usize,
}

/// Room kept free below a stack's recorded bound, as `together` keeps it.
const GUARD_SLACK: usize = 64 << 10;

/// How many finished generators' stacks are kept for new generators.
const POOL: usize = 16;

thread_local! {
    static STACKS: RefCell<Vec<DefaultStack>> = const { RefCell::new(Vec::new()) };
}

fn take_stack() -> PyResult<DefaultStack> {
    if let Some(s) = STACKS.with(|p| p.borrow_mut().pop()) {
        return Ok(s);
    }
    DefaultStack::new(SEGMENT)
        .map_err(|_| PyErr::memory_error("no memory for the stack of a generator"))
}

/// Ends a coroutine (unwinding it if it is suspended) and keeps its stack for reuse.
fn retire(mut co: Co) {
    co.force_unwind();
    let stack = co.into_stack();
    STACKS.with(|p| {
        let mut p = p.borrow_mut();
        if p.len() < POOL {
            p.push(stack);
        }
    });
}

impl Drop for Generator {
    fn drop(&mut self) {
        if let Some(co) = self.co.get_mut().take() {
            retire(co);
        }
    }
}

impl Generator {
    /// A generator named `name` (`__qualname__` `qualname`) that runs `body` when first
    /// resumed.
    pub(in crate::lang) fn value(name: &str, qualname: &str, body: Body) -> PyResult<Value> {
        let stack = take_stack()?;
        let limit = stack.limit().get() + GUARD_SLACK;
        // SAFETY: the body owns what it uses (`'static` captures); the interpreter it runs
        // on arrives with every resume and is handed back before the resume returns.
        let co: Co = unsafe {
            Coroutine::with_stack_unchecked(stack, move |y: &Yielder<Sent, Value>, first: Sent| {
                let mut slot = MaybeUninit::<Vm<'static>>::uninit();
                let vm = slot.as_mut_ptr();
                std::ptr::copy_nonoverlapping(first.vm, vm, 1);
                (*vm).gen = Some(GenLink {
                    yielder: y,
                    caller: first.vm,
                });
                let vm = std::hint::black_box(&mut *vm);
                let r = match first.input {
                    Input::Value(_) => run_body(vm, body),
                    Input::Throw(e) => Err(e),
                };
                let caller = vm.gen.map(|l| l.caller).unwrap_or(first.vm);
                std::ptr::copy_nonoverlapping(vm as *const Vm<'static>, caller, 1);
                r
            })
        };
        Ok(Value::Obj(Rc::new(Generator {
            name: name.to_string(),
            qualname: qualname.to_string(),
            co: RefCell::new(Some(co)),
            running: Cell::new(false),
            depth: Cell::new(0),
            handling: RefCell::new(vec![]),
            limit,
        })))
    }

    fn started_or_done(&self) -> bool {
        match &*self.co.borrow() {
            Some(co) => co.started(),
            None => true,
        }
    }
}

/// Runs a body one call deeper, turning a `StopIteration` that leaves it into CPython's
/// `RuntimeError` (PEP 479: it would otherwise end the loop that drives the generator).
fn run_body(vm: &mut Vm<'static>, body: Body) -> PyResult<Value> {
    vm.depth += 1;
    let r = body(vm);
    vm.depth -= 1;
    match r {
        Err(e) if e.type_name() == "StopIteration" => {
            let mut r = PyErr::runtime_error("generator raised StopIteration");
            r.0.traceback = e.0.traceback.clone();
            Err(r)
        }
        other => other,
    }
}

impl Object for Generator {
    fn type_name(&self) -> String {
        "generator".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(format!(
            "<generator object {} at 0x{:x}>",
            self.qualname, self as *const Generator as usize
        ))
    }
    fn getattr(&self, this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        Ok(Some(match name {
            "send" | "throw" | "close" | "__next__" | "__iter__" => {
                Value::Obj(Rc::new(MethodRef {
                    this: this.clone(),
                    name: name.to_string(),
                }))
            }
            "gi_running" => Value::Bool(self.running.get()),
            "__name__" => Value::str(&self.name),
            "__qualname__" => Value::str(&self.qualname),
            _ => return Ok(None),
        }))
    }
    fn dir(&self) -> Vec<String> {
        [
            "__iter__",
            "__name__",
            "__next__",
            "__qualname__",
            "close",
            "gi_running",
            "send",
            "throw",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    }
    fn hash(&self) -> Option<u64> {
        Some(self as *const Generator as usize as u64)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// `StopIteration(value)` as a finished generator raises it (no argument for `None`).
fn stop_iteration(vm: &mut Vm<'_>, value: Value) -> PyErr {
    let cls = vm.exc_class("StopIteration");
    let args = if value.is_none() { vec![] } else { vec![value] };
    vm.err_from_instance(crate::lang::values::exceptions::exc_instance(cls, args))
}

impl Vm<'_> {
    /// Runs `g`'s body with `input` until it yields or ends. The resumer's per-thread
    /// state is swapped for the generator's around the turn (see the module doc).
    pub(in crate::lang) fn resume_generator(
        &mut self,
        g: &Generator,
        input: Input,
    ) -> PyResult<Step> {
        if g.running.get() {
            return Err(PyErr::value_error("generator already executing"));
        }
        let Some(mut co) = g.co.borrow_mut().take() else {
            return match input {
                Input::Throw(e) => Err(e),
                Input::Value(_) => Ok(Step::Returned(Value::None)),
            };
        };
        if !co.started() {
            if let Input::Throw(e) = input {
                // Thrown into a body that never ran: it ends there, with nothing to unwind.
                retire(co);
                return Err(e);
            }
        }
        if self.depth + g.depth.get() >= super::vm::RECURSION_LIMIT {
            *g.co.borrow_mut() = Some(co);
            return Err(super::recursion::recursion_error(""));
        }
        g.running.set(true);
        let outer_depth = self.depth;
        self.depth += g.depth.get();
        let outer_handling = self.handling.len();
        self.handling.append(&mut g.handling.borrow_mut());
        let outer_limit = self.stack_limit.replace(g.limit);
        let outer_link = self.gen.take();
        let aside = super::together::set_aside(self);
        let me = (self as *mut Vm<'_>).cast::<Vm<'static>>();
        let r = co.resume(Sent { vm: me, input });
        let this = std::hint::black_box(self);
        super::together::put_back(this, aside);
        this.gen = outer_link;
        this.stack_limit = outer_limit;
        *g.handling.borrow_mut() = this
            .handling
            .split_off(outer_handling.min(this.handling.len()));
        g.depth.set(this.depth.saturating_sub(outer_depth));
        this.depth = outer_depth;
        g.running.set(false);
        match r {
            CoroutineResult::Yield(v) => {
                *g.co.borrow_mut() = Some(co);
                Ok(Step::Yielded(v))
            }
            CoroutineResult::Return(r) => {
                g.depth.set(0);
                g.handling.borrow_mut().clear();
                retire(co);
                r.map(Step::Returned)
            }
        }
    }

    /// `yield v`: hands `v` to the resumer and waits; returns what the next resume sends
    /// (or raises what it throws).
    pub(in crate::lang) fn yield_value(&mut self, v: Value) -> PyResult<Value> {
        let Some(link) = self.gen else {
            return Err(PyErr::new("SyntaxError", "'yield' outside function"));
        };
        let me = (self as *mut Vm<'_>).cast::<Vm<'static>>();
        // SAFETY: `link.caller` is the resumer's `Vm`, waiting in `resume_generator` for
        // this turn to end; the state moves back to it before the switch, and the next
        // resumer's state moves in after it. Nothing reads this `Vm` while suspended.
        unsafe {
            std::ptr::copy_nonoverlapping(me as *const Vm<'static>, link.caller, 1);
            let sent = (*link.yielder).suspend(v);
            std::ptr::copy_nonoverlapping(sent.vm as *const Vm<'static>, me, 1);
            let me = std::hint::black_box(&mut *me);
            me.gen = Some(GenLink {
                yielder: link.yielder,
                caller: sent.vm,
            });
            match sent.input {
                Input::Value(x) => Ok(x),
                Input::Throw(e) => Err(e),
            }
        }
    }

    /// `yield from src`: delegates to `src` until it is exhausted; its return value (a
    /// generator's `return x`) is the expression's value. Sent values and thrown
    /// exceptions pass through to a generator; `GeneratorExit` closes it first.
    pub(in crate::lang) fn yield_from(&mut self, src: Value) -> PyResult<Value> {
        if let Some(g) = src.downcast::<Generator>() {
            let mut input = Input::Value(Value::None);
            loop {
                match self.resume_generator(g, input)? {
                    Step::Returned(r) => return Ok(r),
                    Step::Yielded(v) => {
                        input = match self.yield_value(v) {
                            Ok(x) => Input::Value(x),
                            Err(e) if e.type_name() == "GeneratorExit" => {
                                self.close_generator(g)?;
                                return Err(e);
                            }
                            Err(e) => Input::Throw(e),
                        }
                    }
                }
            }
        }
        let it = self.get_iter(&src)?;
        while let Some(v) = self.next_item(&it)? {
            let sent = self.yield_value(v)?;
            if !sent.is_none() {
                // Only generators take sent values; CPython asks the iterator for `send`.
                let send = self.get_attr(&it, "send")?;
                self.call_value(&send, Args::new(vec![sent]))?;
            }
        }
        Ok(Value::None)
    }

    /// The next item of a generator for iteration: `None` once it has returned.
    pub(in crate::lang) fn generator_next(&mut self, g: &Generator) -> PyResult<Option<Value>> {
        match self.resume_generator(g, Input::Value(Value::None))? {
            Step::Yielded(v) => Ok(Some(v)),
            Step::Returned(_) => Ok(None),
        }
    }

    /// `g.send(v)`, `next(g)`: the next yielded value, or `StopIteration(return value)`.
    pub(in crate::lang) fn generator_send(&mut self, g: &Generator, v: Value) -> PyResult<Value> {
        if !v.is_none() && !g.started_or_done() {
            return Err(PyErr::type_error(
                "can't send non-None value to a just-started generator",
            ));
        }
        match self.resume_generator(g, Input::Value(v))? {
            Step::Yielded(v) => Ok(v),
            Step::Returned(r) => Err(stop_iteration(self, r)),
        }
    }

    /// `g.close()`: `GeneratorExit` at the paused `yield`; CPython's `RuntimeError` when
    /// the body yields again instead of ending.
    pub(in crate::lang) fn close_generator(&mut self, g: &Generator) -> PyResult<()> {
        if !g.started_or_done() {
            if let Some(co) = g.co.borrow_mut().take() {
                retire(co);
            }
            return Ok(());
        }
        match self.resume_generator(g, Input::Throw(PyErr::new("GeneratorExit", ""))) {
            Ok(Step::Yielded(_)) => Err(PyErr::runtime_error("generator ignored GeneratorExit")),
            Ok(Step::Returned(_)) => Ok(()),
            Err(e) if matches!(e.type_name(), "GeneratorExit" | "StopIteration") => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// The methods of a generator object.
    pub(in crate::lang) fn generator_method(
        &mut self,
        this: &Value,
        g: &Generator,
        name: &str,
        a: Args,
    ) -> PyResult<Value> {
        let arity = |n: usize, most: usize| {
            if a.pos.len() < n || a.pos.len() > most || !a.kw.is_empty() {
                let want = if n == most {
                    format!("exactly one argument ({} given)", a.pos.len())
                } else {
                    format!("expected at most {most} arguments, got {}", a.pos.len())
                };
                Err(PyErr::type_error(if n == most {
                    format!("generator.{name}() takes {want}")
                } else {
                    format!("{name} {want}")
                }))
            } else {
                Ok(())
            }
        };
        match name {
            "__next__" if a.pos.is_empty() => self.generator_send(g, Value::None),
            "__iter__" if a.pos.is_empty() => Ok(this.clone()),
            "send" => {
                arity(1, 1)?;
                self.generator_send(g, a.pos[0].clone())
            }
            "close" if a.pos.is_empty() => self.close_generator(g).map(|_| Value::None),
            "throw" => {
                if a.pos.is_empty() {
                    return Err(PyErr::type_error(
                        "throw expected at least 1 argument, got 0",
                    ));
                }
                arity(1, 3)?;
                let e = self.thrown(&a.pos[0], a.pos.get(1))?;
                match self.resume_generator(g, Input::Throw(e))? {
                    Step::Yielded(v) => Ok(v),
                    Step::Returned(r) => Err(stop_iteration(self, r)),
                }
            }
            _ => Err(PyErr::type_error(format!(
                "generator.{name}() takes no arguments ({} given)",
                a.pos.len()
            ))),
        }
    }

    /// The exception `throw(typ[, val])` raises: an exception class (called with `val`)
    /// or an instance.
    fn thrown(&mut self, typ: &Value, val: Option<&Value>) -> PyResult<PyErr> {
        use crate::lang::values::exceptions::is_exception_class;
        if is_exception_class(typ) {
            let args = match val {
                None | Some(Value::None) => vec![],
                Some(Value::Tuple(t)) => t.to_vec(),
                Some(v) => vec![v.clone()],
            };
            let inst = self.call_value(typ, Args::new(args))?;
            return Ok(self.err_from_instance(inst));
        }
        if let Some(i) = typ.downcast::<crate::lang::values::runtime::Instance>() {
            if is_exception_class(&i.class) {
                if val.is_some_and(|v| !v.is_none()) {
                    return Err(PyErr::type_error(
                        "instance exception may not have a separate value",
                    ));
                }
                return Ok(self.err_from_instance(typ.clone()));
            }
        }
        Err(PyErr::type_error(format!(
            "exceptions must be classes or instances deriving from BaseException, not {}",
            typ.type_name()
        )))
    }
}
