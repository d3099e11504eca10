//! `tf.function`: a Python function traced into graphs of the op library and replayed
//! without the interpreter, as TensorFlow 2.21 does it. The parts: `spec.rs`
//! (`tf.TensorSpec` and the trace types calls are keyed by), `trace.rs` (the traces in
//! progress, what tensors show while traced), `args.rs` (binding a call to the function's
//! parameters and flattening it into tensors and a key), `concrete.rs`
//! (`ConcreteFunction`), `print.rs` (`tf.print`), `control.rs` (`tf.cond`,
//! `tf.while_loop`).
//!
//! Which path a call takes: the call is bound to the parameters and flattened into its
//! tensors and a trace type (tensors by dtype and shape, Python values by value). A type
//! with a trace replays that trace's graph ([`ops::Graph::run`]): no Python runs, a
//! `tf.print` prints, a Python `print` does not. A new type traces: the Python function
//! runs once on the call's values with a recorder attached, and its result is the call's
//! result. A trace that made variables is undone and traced again (TF traces twice on a
//! first call that makes variables; a later trace that makes one is TF's `ValueError`). A
//! trace whose Python read the value of a tensor that depends on the inputs (`if x > 0:`)
//! cannot be a graph: the function then runs its Python eagerly on every call, with a
//! one-line note on stderr. Graphs are specialised to concrete shapes, so under a relaxed
//! signature (`input_signature` with `None`, `reduce_retracing`) a new concrete shape is
//! traced again without counting as a trace, with a one-line note.

mod args;
pub mod concrete;
mod control;
mod print;
pub mod spec;
pub mod trace;

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::{Rc, Weak};

use self::args::{Bound, Flat, Leaf, OutTree};
use self::concrete::ConcreteFunction;
use self::spec::TraceType;
use self::trace::Frame;
use super::eager::{context, op_err};
use super::{address_of, bound, TfState};
use crate::cell::{Output, StreamName};
use crate::lang::{signature, Args, Ctx, NativeFn, Object, PyErr, PyResult, Signature, Value};
use crate::ops::{self, Graph, PrintSpec, Printer, Recorder};
use crate::tensor::DType;

pub use self::trace::Tracing;

/// The `tf` names this module provides.
pub fn values() -> Vec<(&'static str, Value)> {
    vec![
        (
            "function",
            NativeFn::value("function", FUNCTION_DOC, function),
        ),
        ("TensorSpec", spec::class()),
        (
            "print",
            NativeFn::value("print", print::DOC, print::tf_print),
        ),
        (
            "cond",
            NativeFn::value("cond", control::COND_DOC, control::cond),
        ),
        (
            "while_loop",
            NativeFn::value("while_loop", control::WHILE_DOC, control::while_loop),
        ),
    ]
}

const FUNCTION_DOC: &str = "function(func=None, input_signature=None, autograph=True, \
    jit_compile=None, reduce_retracing=False, experimental_implements=None, \
    experimental_autograph_options=None, experimental_attributes=None, \
    experimental_relax_shapes=None, experimental_compile=None, \
    experimental_follow_type_hints=None)\n\nCompiles a function into a callable \
    TensorFlow graph: traced once per input signature, then replayed.";

const PARAMS: &[&str] = &[
    "func",
    "input_signature",
    "autograph",
    "jit_compile",
    "reduce_retracing",
    "experimental_implements",
    "experimental_autograph_options",
    "experimental_attributes",
    "experimental_relax_shapes",
    "experimental_compile",
    "experimental_follow_type_hints",
];

/// `tf.function(func=None, ...)`: the decorator with or without arguments.
fn function(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind("function", PARAMS, 0)?;
    let input_signature = match s[1].as_ref().filter(|v| !v.is_none()) {
        Some(sig) => Some(args::input_signature(sig, ctx)?),
        None => None,
    };
    let relax = [&s[4], &s[8]]
        .iter()
        .any(|v| matches!(v, Some(Value::Bool(true))));
    let options = Options {
        input_signature,
        reduce_retracing: relax,
    };
    match s[0].as_ref().filter(|v| !v.is_none()) {
        Some(f) => Function::wrap(f.clone(), options),
        None => Ok(NativeFn::value("decorator", "", move |a, _| {
            let s = a.bind("decorator", &["func"], 1)?;
            Function::wrap(s[0].clone().unwrap_or(Value::None), options.clone())
        })),
    }
}

#[derive(Clone)]
struct Options {
    /// One spec (possibly nested) per parameter, from `input_signature`.
    input_signature: Option<Vec<TraceType>>,
    reduce_retracing: bool,
}

/// What a `tf.function` shares between its per-instance copies.
struct Def {
    python: Value,
    sig: Signature,
    options: Options,
    /// The traces of each instance a method was called on, by the instance's identity
    /// (weakly held, as TF keys them).
    instances: RefCell<Vec<InstanceTraces>>,
}

/// An instance a method was called on (weakly held) and that instance's traces.
type InstanceTraces = (Weak<dyn Object>, Rc<Traces>);

/// One trace: its key, and the graphs recorded for it (one per concrete input shapes).
struct Trace {
    key: TraceType,
    /// Each parameter with its type, for signatures.
    params: Vec<concrete::Param>,
    graphs: Vec<Rc<Traced>>,
}

/// A recorded graph and how to call it.
pub(crate) struct Traced {
    graph: Graph,
    /// The concrete input types it was recorded with.
    inputs: Vec<(DType, Vec<usize>)>,
    /// Whether it replays on other shapes of the same ranks (nothing in it depends on
    /// the concrete shapes).
    generic: bool,
    /// For each variable argument (in flat order), its index among the graph's variables.
    var_args: Vec<Option<usize>>,
    outputs: OutTree,
    /// The static type of each output tensor.
    out_specs: Vec<spec::TensorSpec>,
    captures: Vec<ops::Capture>,
    /// The strategy whose `strategy.run` the graph traced, if any.
    strategy: Option<Value>,
}

/// The traces of one function (or of one instance's method).
#[derive(Default)]
struct Traces {
    count: Cell<usize>,
    list: RefCell<Vec<Trace>>,
    exact: RefCell<HashMap<TraceType, usize>>,
    /// Why the function runs eagerly, once a trace read a tensor's value.
    eager: RefCell<Option<String>>,
    /// Whether the note about shapes has been shown.
    shape_note: Cell<bool>,
}

/// A `tf.function`.
pub struct Function {
    def: Rc<Def>,
    traces: Rc<Traces>,
    /// The instance a method is bound to.
    this: Option<Value>,
}

impl Function {
    fn wrap(f: Value, options: Options) -> PyResult<Value> {
        if let Some(inner) = f.downcast::<Function>() {
            // `tf.function(tf.function(f))` is the same function.
            return Ok(Value::native(Function {
                def: inner.def.clone(),
                traces: inner.traces.clone(),
                this: inner.this.clone(),
            }));
        }
        let (sig, this) = signature(&f).ok_or_else(|| {
            PyErr::type_error(format!(
                "tf.function expects a Python function, got {}",
                f.type_name()
            ))
        })?;
        if let Some(specs) = &options.input_signature {
            let free = if sig.is_method() && this.is_none() {
                sig.params.len().saturating_sub(1)
            } else {
                sig.params.len()
            };
            if specs.len() > free && sig.vararg.is_none() {
                return Err(PyErr::type_error(format!(
                    "input_signature has {} elements, but the function takes {free} arguments",
                    specs.len()
                )));
            }
        }
        let _ = this;
        Ok(Value::native(Function {
            def: Rc::new(Def {
                python: f,
                sig,
                options,
                instances: RefCell::new(Vec::new()),
            }),
            traces: Rc::new(Traces::default()),
            this: None,
        }))
    }

    /// Whether calls pass the instance first (a method read from its class).
    fn is_method(&self) -> bool {
        self.def.sig.is_method() && signature(&self.def.python).is_some_and(|(_, t)| t.is_none())
    }

    /// This function bound to `instance`, with that instance's own traces.
    fn bound_to(&self, instance: &Value) -> Function {
        let traces = match instance {
            Value::Obj(rc) | Value::Native(rc) => {
                let mut list = self.def.instances.borrow_mut();
                list.retain(|(w, _)| w.strong_count() > 0);
                let found = list.iter().find_map(|(w, t)| {
                    w.upgrade().filter(|o| Rc::ptr_eq(o, rc)).map(|_| t.clone())
                });
                found.unwrap_or_else(|| {
                    let t = Rc::new(Traces::default());
                    list.push((Rc::downgrade(rc), t.clone()));
                    t
                })
            }
            _ => Rc::new(Traces::default()),
        };
        Function {
            def: self.def.clone(),
            traces,
            this: Some(instance.clone()),
        }
    }

    fn name(&self) -> &str {
        &self.def.sig.name
    }

    /// A call: replay, trace, or the eager fallback.
    fn invoke(&self, args: Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
        if self.this.is_none() && self.is_method() {
            // A method called through its class with the instance first (also how an
            // instance's `__call__` arrives): the instance's own traces.
            let mut a = args;
            if a.pos.is_empty() {
                return Err(PyErr::type_error(format!(
                    "{}() missing 1 required positional argument: 'self'",
                    self.def.sig.qualname
                )));
            }
            let me = a.pos.remove(0);
            return self.bound_to(&me).invoke(a, ctx);
        }
        let (bound, flat) = self.bind(&args, ctx)?;
        if let Some(why) = self.traces.eager.borrow().clone() {
            let _ = why;
            self.count_key(&flat.key);
            return self.run_python(&bound, &flat, None, ctx);
        }
        if let Some(i) = self.find(&flat.key) {
            if let Some(t) = self.graph_for(i, &flat) {
                return self.replay(&t, &flat, ctx);
            }
            // A relaxed trace meets new concrete shapes: record them too.
            self.shape_note(ctx);
            return self.trace(i, &bound, &flat, false, ctx);
        }
        let key = flat.sig.clone().unwrap_or_else(|| self.new_key(&flat.key));
        let params = args::param_types(&bound, &key);
        let i = {
            let mut list = self.traces.list.borrow_mut();
            list.push(Trace {
                key: key.clone(),
                params,
                graphs: Vec::new(),
            });
            list.len() - 1
        };
        if !key.relaxed() {
            self.traces.exact.borrow_mut().insert(key, i);
        }
        self.traces.count.set(self.traces.count.get() + 1);
        self.trace(i, &bound, &flat, true, ctx).inspect_err(|_| {
            // A failed trace is not kept: the next call traces again, as in TF.
            self.forget(i);
        })
    }

    /// Binds a call to the parameters and flattens it into its tensors and trace type
    /// (against the `input_signature` if there is one); a call that does not bind is TF's
    /// `TypeError`.
    fn bind(&self, args: &Args, ctx: &mut dyn Ctx) -> PyResult<(Bound, Flat)> {
        let bound = args::bind(&self.def.sig, self.is_bound_method(), args)
            .map_err(|why| args::binding_error(&why, args, &self.signature_text(), ctx))?;
        let flat = match &self.def.options.input_signature {
            Some(specs) => args::flatten_with(&bound, specs, ctx)
                .map_err(|why| args::binding_error(&why, args, &self.signature_text(), ctx))?,
            None => args::flatten(&bound, ctx)?,
        };
        Ok((bound, flat))
    }

    fn is_bound_method(&self) -> bool {
        self.this.is_some() && self.def.sig.is_method()
    }

    /// `(x: TensorSpec(...))` with the input signature, `(x, d)` without.
    fn signature_text(&self) -> String {
        let params = self.params();
        let specs = self.def.options.input_signature.as_ref();
        let items: Vec<String> = params
            .iter()
            .enumerate()
            .map(|(i, p)| match specs.and_then(|s| s.get(i)) {
                Some(t) => format!("{}: {}", p.name, t.text()),
                None => p.name.clone(),
            })
            .collect();
        format!("({})", items.join(", "))
    }

    /// The parameters a caller passes (without `self` for a method).
    fn params(&self) -> Vec<crate::lang::SigParam> {
        let mut p = self.def.sig.params.clone();
        if self.def.sig.is_method() && (self.this.is_some() || self.is_method()) && !p.is_empty() {
            p.remove(0);
        }
        p
    }

    fn forget(&self, i: usize) {
        let mut list = self.traces.list.borrow_mut();
        if i + 1 == list.len() {
            let t = list.remove(i);
            self.traces.exact.borrow_mut().remove(&t.key);
        }
    }

    /// The trace whose key covers `key`.
    fn find(&self, key: &TraceType) -> Option<usize> {
        if let Some(i) = self.traces.exact.borrow().get(key) {
            return Some(*i);
        }
        let list = self.traces.list.borrow();
        list.iter()
            .position(|t| t.key.relaxed() && t.key.covers(key))
    }

    /// Counts a new key in the eager fallback, so the tracing count stays TF's.
    fn count_key(&self, key: &TraceType) {
        if self.find(key).is_none() {
            let mut list = self.traces.list.borrow_mut();
            list.push(Trace {
                key: key.clone(),
                params: Vec::new(),
                graphs: Vec::new(),
            });
            self.traces
                .exact
                .borrow_mut()
                .insert(key.clone(), list.len() - 1);
            self.traces.count.set(self.traces.count.get() + 1);
        }
    }

    /// The key a new trace gets: the call's own, or with `reduce_retracing` the join of
    /// it with a trace of the same structure.
    fn new_key(&self, key: &TraceType) -> TraceType {
        if !self.def.options.reduce_retracing {
            return key.clone();
        }
        let list = self.traces.list.borrow();
        list.iter()
            .rev()
            .find_map(|t| t.key.join(key))
            .unwrap_or_else(|| key.clone())
    }

    fn graph_for(&self, i: usize, flat: &Flat) -> Option<Rc<Traced>> {
        let list = self.traces.list.borrow();
        let trace = list.get(i)?;
        trace
            .graphs
            .iter()
            .find(|g| {
                g.inputs.len() == flat.leaves.len() - flat.variables()
                    && flat.tensors().zip(&g.inputs).all(|(t, (d, s))| {
                        t.dtype() == *d
                            && (t.shape() == s.as_slice() || g.generic && t.ndim() == s.len())
                    })
            })
            .cloned()
    }

    fn shape_note(&self, ctx: &mut dyn Ctx) {
        if self.traces.shape_note.replace(true) {
            return;
        }
        ctx.emit(Output::Stream {
            name: StreamName::Stderr,
            text: format!(
                "note: tf.function '{}' is traced again for input shapes its signature leaves \
                 open (graphs here are specialised to shapes); its Python runs again, which \
                 TensorFlow would not do\n",
                self.name()
            ),
        });
    }

    /// Runs the graph of a trace on the call's tensors.
    fn replay(&self, t: &Traced, flat: &Flat, ctx: &mut dyn Ctx) -> PyResult<Value> {
        let inputs: Vec<ops::Tensor> = flat.tensors().cloned().collect();
        let mut vars: Option<Vec<ops::Variable>> = None;
        for (leaf, at) in flat.variable_leaves().zip(&t.var_args) {
            if let Some(i) = at {
                let v = vars.get_or_insert_with(|| t.graph.variables().to_vec());
                v[*i] = leaf.clone();
            }
        }
        let outer = ctx
            .state()
            .get::<TfState>()
            .tracing
            .frames
            .last()
            .map(|f| f.recorder.clone());
        let mut printer = Collect {
            out: Vec::new(),
            outer,
        };
        let vars = vars.as_deref().unwrap_or(t.graph.variables());
        let result = if t.graph.has_replica_stages() {
            // The replicas of a traced `strategy.run` run at once, each on its replica's
            // thread.
            let workers = super::distribute::replica_threads(t.strategy.as_ref());
            let e = context(ctx);
            t.graph
                .run_replicated(e, &inputs, vars, &mut printer, workers.as_ref())
        } else {
            t.graph.run_with(context(ctx), &inputs, vars, &mut printer)
        };
        trace::show(ctx, printer.out);
        let outs = result.map_err(op_err)?;
        Ok(t.outputs.build(&outs))
    }

    /// Traces trace `i` on the call's values: the call's result.
    fn trace(
        &self,
        i: usize,
        bound: &Bound,
        flat: &Flat,
        first_of_key: bool,
        ctx: &mut dyn Ctx,
    ) -> PyResult<Value> {
        let first_call = first_of_key && self.traces.count.get() == 1;
        let key = self.traces.list.borrow()[i].key.clone();
        let run = self.trace_once(bound, flat, &key, first_call, ctx)?;
        let mut run = if run.created && run.eager.is_none() {
            // TF traces a first call that made variables a second time, with the
            // variables in place and no step of the first trace run.
            undo(&run.recorder);
            self.traces.count.set(self.traces.count.get() + 1);
            self.trace_once(bound, flat, &key, false, ctx)?
        } else {
            run
        };
        if let Some(why) = run.eager.clone() {
            self.fall_back(&why, ctx);
            trace::show(ctx, std::mem::take(&mut run.printed));
            return Ok(run.value);
        }
        let value = run.value.clone();
        let printed = std::mem::take(&mut run.printed);
        let traced = Traced::from_run(run, flat)?;
        if let Some(t) = self.traces.list.borrow_mut().get_mut(i) {
            t.graphs.push(traced);
        }
        trace::show(ctx, printed);
        Ok(value)
    }

    /// Runs the Python function once under a recorder.
    fn trace_once(
        &self,
        bound: &Bound,
        flat: &Flat,
        key: &TraceType,
        may_create: bool,
        ctx: &mut dyn Ctx,
    ) -> PyResult<TraceRun> {
        let recorder = Recorder::new();
        let start = recorder.start();
        let placeholders = args::placeholders(flat, key, &recorder, ctx);
        let observer = context(ctx).attach(recorder.observer());
        ctx.state().get::<TfState>().tracing.frames.push(Frame {
            recorder: recorder.clone(),
            start,
            observer,
            value_read: None,
            created: Vec::new(),
            may_create,
            printed: Vec::new(),
            shape_bound: false,
            strategy: None,
        });
        let result = self.run_python(bound, flat, Some(&placeholders), ctx);
        let frame = ctx.state().get::<TfState>().tracing.frames.pop();
        context(ctx).detach(observer);
        let Some(frame) = frame else {
            return Err(PyErr::runtime_error(
                "tf.function: the trace stack was lost",
            ));
        };
        let value = match result {
            Ok(v) => v,
            Err(e) => {
                undo(&recorder);
                return Err(in_user_code(e));
            }
        };
        let outputs = match args::outputs(&value, ctx) {
            Ok(o) => o,
            Err(e) => {
                undo(&recorder);
                return Err(e);
            }
        };
        Ok(TraceRun {
            value: outputs.value.clone(),
            outputs,
            created: !frame.created.is_empty(),
            eager: frame.value_read,
            printed: frame.printed,
            generic: !frame.shape_bound && !key.unknown_rank(),
            recorder,
            strategy: frame.strategy,
        })
    }

    /// Calls the Python function with the bound arguments (tensors replaced by
    /// `placeholders` when tracing).
    fn run_python(
        &self,
        bound: &Bound,
        flat: &Flat,
        placeholders: Option<&[Value]>,
        ctx: &mut dyn Ctx,
    ) -> PyResult<Value> {
        let mut call = match placeholders {
            Some(p) => args::rebuild(bound, flat, p),
            None => bound.to_args(),
        };
        if let Some(me) = self.this.clone().filter(|_| self.def.sig.is_method()) {
            call.pos.insert(0, me);
        }
        let out = ctx.call(&self.def.python, call)?;
        if placeholders.is_some() {
            return Ok(out);
        }
        args::outputs(&out, ctx).map(|o| o.value)
    }

    fn fall_back(&self, why: &str, ctx: &mut dyn Ctx) {
        if self.traces.eager.borrow().is_some() {
            return;
        }
        *self.traces.eager.borrow_mut() = Some(why.to_string());
        ctx.emit(Output::Stream {
            name: StreamName::Stderr,
            text: format!(
                "note: tf.function '{}' reads a traced tensor's value in Python ({why}), so it \
                 runs eagerly on every call; its results are TensorFlow's, its speed is not a \
                 graph's\n",
                self.name()
            ),
        });
    }

    /// `get_concrete_function(*args, **kwargs)`: the trace for the arguments (tensors or
    /// `tf.TensorSpec`s), traced if needed without running anything.
    fn concrete(&self, this: &Value, args: Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
        let args = if args.pos.is_empty() && args.kw.is_empty() {
            match &self.def.options.input_signature {
                Some(specs) => Args::new(specs.iter().map(args::spec_value).collect()),
                None => args,
            }
        } else {
            args
        };
        let (bound, flat) = self.bind(&args, ctx)?;
        let i = match self.find(&flat.key) {
            Some(i) => i,
            None => {
                let key = flat.sig.clone().unwrap_or_else(|| self.new_key(&flat.key));
                let params = args::param_types(&bound, &key);
                let mut list = self.traces.list.borrow_mut();
                list.push(Trace {
                    key: key.clone(),
                    params,
                    graphs: Vec::new(),
                });
                let i = list.len() - 1;
                drop(list);
                if !key.relaxed() {
                    self.traces.exact.borrow_mut().insert(key, i);
                }
                self.traces.count.set(self.traces.count.get() + 1);
                i
            }
        };
        let traced = match self.graph_for(i, &flat) {
            Some(t) => t,
            None => {
                // Traced on stand-in values; TF runs nothing here, so every assignment of
                // the trace is undone.
                let key = self.traces.list.borrow()[i].key.clone();
                let first = self.traces.count.get() == 1;
                let run = self.trace_once(&bound, &flat, &key, first, ctx)?;
                undo(&run.recorder);
                if let Some(why) = run.eager {
                    self.fall_back(&why, ctx);
                    return Err(PyErr::not_implemented(format!(
                        "this tf.function reads a traced tensor's value ({why}) and runs \
                         eagerly, so it has no concrete function here"
                    )));
                }
                let t = Traced::from_run(run, &flat)?;
                if flat.stand_in {
                    t
                } else {
                    if let Some(tr) = self.traces.list.borrow_mut().get_mut(i) {
                        tr.graphs.push(t.clone());
                    }
                    t
                }
            }
        };
        let list = self.traces.list.borrow();
        let trace = &list[i];
        Ok(Value::native(ConcreteFunction::new(
            this.clone(),
            trace.params.clone(),
            traced,
        )))
    }
}

/// What one run of the Python function under a recorder left.
struct TraceRun {
    value: Value,
    outputs: args::Outputs,
    created: bool,
    eager: Option<String>,
    printed: Vec<Output>,
    /// Whether the graph replays on any shapes the trace's type covers.
    generic: bool,
    recorder: Recorder,
    strategy: Option<Value>,
}

impl Traced {
    /// The graph of a finished trace run.
    fn from_run(run: TraceRun, flat: &Flat) -> PyResult<Rc<Traced>> {
        let graph = run.recorder.finish(&run.outputs.tensors).map_err(op_err)?;
        let var_args = flat
            .variable_leaves()
            .map(|v| graph.variables().iter().position(|g| g.same(v)))
            .collect();
        let out_specs = run
            .outputs
            .tensors
            .iter()
            .map(|t| spec::TensorSpec {
                shape: run
                    .recorder
                    .static_shape(t.id())
                    .unwrap_or_else(|| spec::known(t.shape())),
                dtype: t.dtype(),
                name: None,
            })
            .collect();
        let graph = if run.generic {
            graph.any_shapes()
        } else {
            graph
        };
        Ok(Rc::new(Traced {
            inputs: graph.input_types().to_vec(),
            generic: run.generic,
            graph,
            var_args,
            outputs: run.outputs.tree,
            out_specs,
            captures: run.recorder.captures(),
            strategy: run.strategy,
        }))
    }
}

/// Puts back every variable a discarded trace assigned.
fn undo(rec: &Recorder) {
    for (var, prev) in rec.assigned() {
        // The value came out of this variable, so its dtype and shape fit.
        let _ = var.store((*prev).clone());
    }
}

/// An error raised while tracing, in TF's words: `in user code:` with the frames of the
/// traced code, then the original error's type and text.
fn in_user_code(e: PyErr) -> PyErr {
    if e.type_name() == "KeyboardInterrupt" || e.message().starts_with("in user code:") {
        return e;
    }
    let mut text = String::from("in user code:\n\n");
    for f in &e.0.traceback {
        let name = f
            .function
            .as_deref()
            .map_or("<module>", |s| s.split('(').next().unwrap_or(s));
        text.push_str(&format!(
            "    File \"{}\", line {}, in {name}  *\n        {}\n",
            f.file,
            f.line,
            f.source.trim()
        ));
    }
    text.push_str(&format!("\n    {}: {}\n", e.type_name(), e.message()));
    let mut out = PyErr::new(e.type_name(), text);
    out.0.traceback = e.0.traceback.clone();
    out
}

/// Collects a replay's prints (and hands them to an enclosing trace's recorder).
struct Collect {
    out: Vec<Output>,
    outer: Option<Recorder>,
}

impl Printer for Collect {
    fn print(&mut self, spec: &PrintSpec, inputs: &[ops::Tensor]) {
        let arrays: Vec<&crate::tensor::NdArray> = inputs.iter().map(ops::Tensor::value).collect();
        self.out.push(print::output(spec, spec.render(&arrays)));
        if let Some(r) = &self.outer {
            r.print(spec.clone(), inputs);
        }
    }
}

impl Object for Function {
    fn type_name(&self) -> String {
        "Function".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(format!(
            "<tensorflow.python.eager.polymorphic_function.polymorphic_function.Function \
             object at {}>",
            address_of(self)
        ))
    }
    fn call(&self, _this: &Value, args: Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
        self.invoke(args, ctx)
    }
    fn bind_instance(&self, _this: &Value, instance: &Value) -> Option<Value> {
        self.def
            .sig
            .is_method()
            .then(|| Value::native(self.bound_to(instance)))
    }
    fn getattr(&self, this: &Value, name: &str, ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        Ok(Some(match name {
            "python_function" | "__wrapped__" => self.def.python.clone(),
            "__name__" => Value::str(self.name()),
            "__qualname__" => Value::str(&self.def.sig.qualname),
            "__doc__" => return ctx.getattr(&self.def.python, "__doc__").map(Some),
            "input_signature" => match &self.def.options.input_signature {
                Some(s) => Value::tuple(s.iter().map(args::spec_value).collect()),
                None => Value::None,
            },
            "experimental_get_tracing_count" => bound::<Function>(this, name, |f, _, _, _| {
                Ok(Value::Int(f.traces.count.get() as i64))
            }),
            "get_concrete_function" => bound::<Function>(this, name, |f, me, args, ctx| {
                f.concrete(me, args.clone(), ctx)
            }),
            "pretty_printed_concrete_signatures" => bound::<Function>(this, name, |f, _, _, _| {
                let list = f.traces.list.borrow();
                let texts: Vec<String> = list
                    .iter()
                    .filter_map(|t| {
                        let g = t.graphs.first()?;
                        Some(concrete::signature_text(&t.params, g))
                    })
                    .collect();
                Ok(Value::str(&texts.join("\n\n")))
            }),
            "function_spec" => Value::native(concrete::FunctionSpec {
                input_signature: self.def.options.input_signature.clone(),
            }),
            "__call__" => {
                let me = this.clone();
                NativeFn::value("__call__", "", move |a, ctx| ctx.call(&me, a.clone()))
            }
            _ => return Ok(None),
        }))
    }
    fn hash(&self) -> Option<u64> {
        Some(Rc::as_ptr(&self.traces) as usize as u64)
    }
    fn dir(&self) -> Vec<String> {
        [
            "python_function",
            "input_signature",
            "experimental_get_tracing_count",
            "get_concrete_function",
            "pretty_printed_concrete_signatures",
            "function_spec",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    }
    fn class_chain(&self) -> Vec<String> {
        vec!["Function".into(), "GenericFunction".into()]
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// Leaves of a call: used by `args.rs` and the replay.
impl Flat {
    fn tensors(&self) -> impl Iterator<Item = &ops::Tensor> {
        self.leaves.iter().filter_map(|l| match l {
            Leaf::Tensor(t, _) => Some(t),
            Leaf::Variable(..) => None,
        })
    }
    fn variable_leaves(&self) -> impl Iterator<Item = &ops::Variable> {
        self.leaves.iter().filter_map(|l| match l {
            Leaf::Variable(v, _) => Some(v),
            Leaf::Tensor(..) => None,
        })
    }
    fn variables(&self) -> usize {
        self.variable_leaves().count()
    }
}
