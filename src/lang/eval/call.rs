//! Calling things: user functions (argument binding to slots, defaults, `*args`,
//! `**kwargs`, keyword-only parameters, the recursion bound, traceback frames),
//! generator functions (which make a generator, see `generator`), classes (instances,
//! `__init__`, native bases), bound methods, builtin types and natives.

use std::cell::RefCell;
use std::rc::Rc;

use indexmap::IndexMap;

use super::stmt::Flow;
use super::vm::{Env, Vm, RECURSION_LIMIT};
use crate::lang::builtins::wrappers::{MethodRef, Super, Wrapper};
use crate::lang::syntax::ast::{Arg, FuncDef, ParamKind};
use crate::lang::values::exc::{Frame as TbFrame, PyErr, PyResult};
use crate::lang::values::object::Args;
use crate::lang::values::runtime::{BoundMethod, BuiltinType, Class, Frame, Function, Instance};
use crate::lang::values::value::{Dict, Value};

impl Vm<'_> {
    pub fn call_value(&mut self, f: &Value, args: Args) -> PyResult<Value> {
        if let Value::Obj(o) = f {
            let any = o.as_any();
            if let Some(func) = any.downcast_ref::<Function>() {
                return self.call_function(func, args, None);
            }
            if let Some(m) = any.downcast_ref::<BoundMethod>() {
                let mut a = args;
                a.pos.insert(0, m.this.clone());
                if let Some(func) = m.func.downcast::<Function>() {
                    return self.call_function(func, a, None);
                }
                let func = m.func.clone();
                return self.call_value(&func, a);
            }
            if let Some(b) = any.downcast_ref::<crate::lang::builtins::namespace::Builtin>() {
                return (b.run)(self, b.name, args);
            }
            if let Some(m) = any.downcast_ref::<MethodRef>() {
                return self.call_method(&m.this, &m.name, args);
            }
            if any.downcast_ref::<Class>().is_some() {
                return self.instantiate(f, args);
            }
            if let Some(t) = any.downcast_ref::<BuiltinType>() {
                return self.call_type(t.name, args);
            }
            if let Some(w) = any.downcast_ref::<Wrapper>() {
                let func = w.func.clone();
                return self.call_value(&func, args);
            }
            if let Some(i) = any.downcast_ref::<Instance>() {
                if let Some(c) = i.class().and_then(|c| c.lookup("__call__")) {
                    if let Value::Native(n) = &c {
                        if let Some(bound) = n.bind_instance(&c, f) {
                            return self.call_value(&bound, args);
                        }
                    }
                    let mut a = args;
                    a.pos.insert(0, f.clone());
                    return self.call_value(&c, a);
                }
                if let Some(nb) = i.class().and_then(|c| c.native_base()) {
                    if let Some(m) = nb
                        .downcast::<crate::lang::NativeClass>()
                        .and_then(|n| n.bound(f, "__call__"))
                    {
                        return self.call_value(&m, args);
                    }
                }
            }
            return Err(PyErr::type_error(format!(
                "'{}' object is not callable",
                f.type_name()
            )));
        }
        match f {
            Value::Native(o) => {
                let o = o.clone();
                o.call(f, args, self)
            }
            other => Err(PyErr::type_error(format!(
                "'{}' object is not callable",
                other.type_name()
            ))),
        }
    }

    pub fn call_function(
        &mut self,
        func: &Function,
        args: Args,
        _owner: Option<Value>,
    ) -> PyResult<Value> {
        let def = func.def.clone();
        if self.depth >= RECURSION_LIMIT {
            return Err(super::recursion::recursion_error(""));
        }
        let frame = self.new_frame(def.nlocals, func.closure.clone());
        self.bind_args(func, args, &frame)?;
        self.run_function_checked(func, frame)
    }

    /// A call with positional arguments only, evaluated straight into the new frame's
    /// slots (the common case in loops: no argument vector, no keyword matching). `this`
    /// is the instance of a method call, bound to the first parameter without building
    /// a bound-method object.
    pub fn call_positional(
        &mut self,
        func: &Function,
        this: Option<Value>,
        args: &[Arg],
        env: &Env,
    ) -> PyResult<Value> {
        let def = &func.def;
        if self.depth >= RECURSION_LIMIT {
            return Err(super::recursion::recursion_error(""));
        }
        let frame = self.new_frame(def.nlocals, func.closure.clone());
        let skip = usize::from(this.is_some());
        // `this` is matched in place: moving it into a tuple first copied it whole right
        // after the caller wrote it (see `fast`'s module note).
        if let Some(t) = this {
            if let Some(p) = def.params.first() {
                super::fast::set_slot(&frame, p.slot, t);
            }
        }
        for (i, a) in args.iter().enumerate() {
            let Arg::Pos(e) = a else {
                return Err(PyErr::type_error("positional arguments expected"));
            };
            let v = self.operand(e, env)?;
            if let Some(p) = def.params.get(i + skip) {
                super::fast::set_slot_operand(&frame, p.slot, v);
            }
        }
        let given = args.len() + skip;
        if given < def.params.len() {
            let mut slots = frame.slots.borrow_mut();
            for (p, d) in def.params.iter().zip(func.defaults.iter()).skip(given) {
                match d {
                    Some(d) => slots[p.slot as usize] = Some(d.clone()),
                    None => {
                        // Let the general binder word the missing-argument error.
                        let given: Vec<Value> = (0..given)
                            .filter_map(|i| slots[def.params[i].slot as usize].clone())
                            .collect();
                        drop(slots);
                        return self.call_function(func, Args::new(given), None);
                    }
                }
            }
        }
        self.run_function_checked(func, frame)
    }

    /// Runs the call on a stack with room for it: every few levels of Python calls the
    /// stack left is checked and, when short, a new segment is taken (see `recursion`).
    #[inline(always)]
    fn run_function_checked(&mut self, func: &Function, frame: Rc<Frame>) -> PyResult<Value> {
        if !self
            .depth
            .is_multiple_of(super::recursion::CALLS_PER_STACK_CHECK)
        {
            return self.run_function(func, frame);
        }
        match self.stack_limit {
            None => super::recursion::with_stack(|| self.run_function(func, frame)),
            Some(limit) if super::together::stack_left(limit) >= super::recursion::RED_ZONE => {
                self.run_function(func, frame)
            }
            // A replica's coroutine measures its own stack (`stacker` knows only the
            // thread's), and runs short calls on a segment of its own.
            Some(_) => super::together::on_new_segment(|limit| {
                let outer = self.stack_limit.replace(limit);
                let r = self.run_function(func, frame);
                self.stack_limit = outer;
                r
            }),
        }
    }

    #[inline(always)]
    fn run_function(&mut self, func: &Function, frame: Rc<Frame>) -> PyResult<Value> {
        let def = &func.def;
        if def.is_generator {
            return generator_of(func, frame);
        }
        let mut env = Env {
            frame: Some(frame),
            class_ns: None,
            line: std::cell::Cell::new(0),
            owner: func.owner.borrow().clone(),
        };
        self.depth += 1;
        let r = self.exec_block(&def.body, &env);
        self.depth -= 1;
        match r {
            Ok(flow) => {
                if let Some(f) = env.frame.take() {
                    self.release_frame(f);
                }
                Ok(match flow {
                    Flow::Return(v) => super::fast::relay(v),
                    // Normal, Break, Continue own nothing: forgotten, not dropped (see
                    // `fast::split_int`).
                    other => {
                        std::mem::forget(other);
                        Value::None
                    }
                })
            }
            Err(e) => Err(traceback_frame(def, env.line.get(), e)),
        }
    }

    fn bind_args(&mut self, func: &Function, args: Args, frame: &Rc<Frame>) -> PyResult<()> {
        let def = &func.def;
        // CPython's messages name the function by its qualified name (`C.method()`).
        let name = &func.qualname;
        let mut slots = frame.slots.borrow_mut();
        let npos = def.npos;
        let mut extra = vec![];
        for (i, v) in args.pos.into_iter().enumerate() {
            if i < npos {
                slots[def.params[i].slot as usize] = Some(v);
            } else {
                extra.push(v);
            }
        }
        // Too many positionals are reported after the keywords are bound, as CPython
        // does, so that keyword errors come first and the message can count keyword-only
        // arguments given.
        let too_many = !extra.is_empty() && def.vararg.is_none();
        let given_pos = npos + extra.len();
        if let Some((_, s)) = &def.vararg {
            slots[*s as usize] = Some(Value::tuple(extra));
        }
        let mut kwextra = Dict::default();
        for (k, v) in args.kw {
            match def.params.iter().find(|p| *p.name == *k) {
                Some(p) => {
                    let s = p.slot as usize;
                    if slots[s].is_some() {
                        return Err(PyErr::type_error(format!(
                            "{name}() got multiple values for argument '{k}'"
                        )));
                    }
                    slots[s] = Some(v);
                }
                None if def.kwarg.is_some() => kwextra.insert_str(&k, v),
                None => {
                    return Err(PyErr::type_error(format!(
                        "{name}() got an unexpected keyword argument '{k}'"
                    )))
                }
            }
        }
        if let Some((_, s)) = &def.kwarg {
            slots[*s as usize] = Some(Value::Dict(Rc::new(RefCell::new(kwextra))));
        }
        if too_many {
            let kwonly_given = def.params[npos..]
                .iter()
                .filter(|p| slots[p.slot as usize].is_some())
                .count();
            return Err(too_many_positional(func, given_pos, kwonly_given));
        }
        let mut missing = vec![];
        for (p, d) in def.params.iter().zip(func.defaults.iter()) {
            let s = p.slot as usize;
            if slots[s].is_none() {
                match d {
                    Some(d) => slots[s] = Some(d.clone()),
                    None => missing.push((p.name.clone(), p.kind)),
                }
            }
        }
        // Missing positionals are reported before missing keyword-only ones.
        if missing.iter().any(|m| m.1 != ParamKind::KwOnly) {
            missing.retain(|m| m.1 != ParamKind::KwOnly);
        }
        if !missing.is_empty() {
            let kind = if missing[0].1 == ParamKind::KwOnly {
                "keyword-only"
            } else {
                "positional"
            };
            let names: Vec<String> = missing.iter().map(|(n, _)| format!("'{n}'")).collect();
            let list = match names.len() {
                1 => names[0].clone(),
                2 => format!("{} and {}", names[0], names[1]),
                _ => format!(
                    "{}, and {}",
                    names[..names.len() - 1].join(", "),
                    names[names.len() - 1]
                ),
            };
            return Err(PyErr::type_error(format!(
                "{name}() missing {} required {kind} argument{}: {list}",
                missing.len(),
                if missing.len() == 1 { "" } else { "s" }
            )));
        }
        Ok(())
    }

    pub fn instantiate(&mut self, cls: &Value, args: Args) -> PyResult<Value> {
        let Some(c) = cls.downcast::<Class>() else {
            return Err(PyErr::type_error("not a class"));
        };
        if crate::lang::values::exceptions::is_exception_class(cls)
            && c.lookup("__init__").is_none()
        {
            return Ok(crate::lang::values::exceptions::exc_instance(
                cls.clone(),
                args.pos,
            ));
        }
        let mut attrs = IndexMap::default();
        if crate::lang::values::exceptions::is_exception_class(cls) {
            attrs.insert("args".to_string(), Value::tuple(args.pos.clone()));
        }
        let inst = Value::Obj(Rc::new(Instance {
            class: cls.clone(),
            attrs: RefCell::new(attrs),
        }));
        match c.lookup("__init__") {
            Some(init) => {
                let mut a = args;
                a.pos.insert(0, inst.clone());
                let r = self.call_value(&init, a)?;
                if !r.is_none() {
                    return Err(PyErr::type_error(
                        "__init__() should return None, not 'int'",
                    ));
                }
            }
            None => {
                if let Some(nb) = c.native_base() {
                    if let Some(m) = nb
                        .downcast::<crate::lang::NativeClass>()
                        .and_then(|n| n.bound(&inst, "__init__"))
                    {
                        self.call_value(&m, args)?;
                    }
                } else if !args.pos.is_empty() || !args.kw.is_empty() {
                    return Err(PyErr::type_error(format!(
                        "{}() takes no arguments",
                        c.name
                    )));
                }
            }
        }
        Ok(inst)
    }

    pub fn make_super(&mut self, env: &Env) -> PyResult<Value> {
        let Some(owner) = env.owner.clone() else {
            return Err(PyErr::runtime_error("super(): no arguments"));
        };
        let this = env
            .frame
            .as_ref()
            .and_then(|f| f.slots.borrow().first().cloned().flatten())
            .ok_or_else(|| PyErr::runtime_error("super(): no arguments"))?;
        Ok(Value::Obj(Rc::new(Super { owner, this })))
    }
}

/// Whether a call of `func` with `args` (after `bound` leading arguments already known)
/// can take the positional fast path: only plain positional arguments, no more of them
/// than the function has positional parameters, and no star parameters or generator.
#[inline]
pub(in crate::lang) fn positional_fits(func: &Function, args: &[Arg], bound: usize) -> bool {
    let d = &func.def;
    args.len() + bound <= d.npos
        && d.vararg.is_none()
        && d.kwarg.is_none()
        && !d.is_generator
        && args.iter().all(|a| matches!(a, Arg::Pos(_)))
}

/// The function `o.name` would bind to `o` when `o` is an instance of an interpreter class
/// that defines `name` as a plain function (not shadowed by an instance attribute, and not
/// a static method, class method or property): then the call can pass `o` itself as the
/// first argument, exactly as the bound method would.
pub(in crate::lang) fn plain_method(o: &Value, name: &str) -> Option<Value> {
    let Value::Obj(obj) = o else {
        return None;
    };
    let inst = obj.as_any().downcast_ref::<Instance>()?;
    if name == "__class__" || name == "__dict__" || inst.attrs.borrow().contains_key(name) {
        return None;
    }
    let m = inst.class()?.lookup(name)?;
    m.downcast::<Function>().is_some().then_some(m)
}

/// Adds the frame of `func` (stopped at `line`) to an exception leaving it; kept out of
/// line since only the error path needs it.
#[cold]
#[inline(never)]
fn traceback_frame(def: &FuncDef, line: u32, mut e: PyErr) -> PyErr {
    let source = def
        .src
        .lines
        .get((line as usize).saturating_sub(1))
        .cloned()
        .unwrap_or_default();
    e.0.traceback.insert(
        0,
        TbFrame {
            file: def.src.file.clone(),
            function: Some(signature(def)),
            line: line as usize,
            source,
        },
    );
    e
}

/// Whether a call of the Python function (or bound method) `f` binds the keyword `name`.
pub(in crate::lang) fn accepts_keyword(f: &Value, name: &str) -> Option<bool> {
    let func = match f.downcast::<BoundMethod>() {
        Some(m) => m.func.clone(),
        None => f.clone(),
    };
    let def = &func.downcast::<Function>()?.def;
    Some(def.kwarg.is_some() || def.params.iter().any(|p| &*p.name == name))
}

/// `f(a, b, c, *args, **kw)`: how IPython names a function in a traceback frame (every
/// parameter by name, keyword-only ones included, then the star parameters).
fn signature(def: &FuncDef) -> String {
    let mut parts: Vec<String> = def.params.iter().map(|p| p.name.to_string()).collect();
    if let Some((v, _)) = &def.vararg {
        parts.push(format!("*{v}"));
    }
    if let Some((k, _)) = &def.kwarg {
        parts.push(format!("**{k}"));
    }
    format!("{}({})", def.name, parts.join(", "))
}

/// CPython's error for too many positional arguments: `f() takes from 1 to 2 positional
/// arguments but 3 positional arguments (and 1 keyword-only argument) were given`.
fn too_many_positional(func: &Function, given: usize, kwonly_given: usize) -> PyErr {
    let def = &func.def;
    let npos = def.npos;
    let with_default = func.defaults[..npos].iter().filter(|d| d.is_some()).count();
    let (sig, plural) = if with_default > 0 {
        (format!("from {} to {npos}", npos - with_default), true)
    } else {
        (npos.to_string(), npos != 1)
    };
    let s = |n: usize| if n == 1 { "" } else { "s" };
    let kwonly = if kwonly_given > 0 {
        format!(
            " positional argument{} (and {kwonly_given} keyword-only argument{})",
            s(given),
            s(kwonly_given)
        )
    } else {
        String::new()
    };
    PyErr::type_error(format!(
        "{}() takes {sig} positional argument{} but {given}{kwonly} {} given",
        func.qualname,
        if plural { "s" } else { "" },
        if given == 1 && kwonly_given == 0 {
            "was"
        } else {
            "were"
        }
    ))
}

/// The generator a call of a generator function makes: its body runs in `frame` (the
/// arguments already bound) when the generator is first resumed.
fn generator_of(func: &Function, frame: Rc<Frame>) -> PyResult<Value> {
    let def = func.def.clone();
    let owner = func.owner.borrow().clone();
    let body = Box::new(move |vm: &mut Vm<'static>| {
        let env = Env {
            frame: Some(frame),
            class_ns: None,
            line: std::cell::Cell::new(0),
            owner,
        };
        match vm.exec_block(&def.body, &env) {
            Ok(Flow::Return(v)) => Ok(super::fast::relay(v)),
            Ok(_) => Ok(Value::None),
            Err(e) => Err(traceback_frame(&def, env.line.get(), e)),
        }
    });
    super::generator::Generator::value(&func.def.name, &func.qualname, body)
}
