//! `tf.GradientTape` and `tf.UnconnectedGradients`, as TensorFlow 2.21 has them. The tape
//! is an op-library [`Tape`](crate::ops::Tape); `with` makes it active in the session's
//! execution context, where every op a cell runs is recorded when it uses a watched
//! tensor (trainable variables are watched as they are read). `gradient` and `jacobian`
//! take nested lists, tuples and dicts of sources and answer in the same structure;
//! TF's warnings go to stderr as TF's logging prints them.

use std::any::Any;
use std::cell::RefCell;

use super::convert::{tensor_of, variable_in};
use super::eager::{context, op_err, run, wrap};
use super::tensor::Tensor;
use super::variable::Variable;
use super::{address_of, bound, given, TfError, TfState};
use crate::lang::{Args, CmpOp, Ctx, Dict, NativeClass, Object, PyErr, PyResult, Value};
use crate::ops::{lock, Source, Tape, TapeRef, Unconnected};

/// How often TF logs each tape warning (`log_first_n`), counted per session.
#[derive(Default)]
pub struct TapeWarnings {
    watched_dtype: usize,
    persistent_inside: usize,
}

fn warn(ctx: &mut dyn Ctx, text: &str) {
    super::tf_log(ctx, 30, text);
}

/// A nested structure of values (lists, tuples, dicts) as TF's `nest` sees it.
enum Nest {
    Leaf(Value),
    List(Vec<Nest>),
    Tuple(Vec<Nest>),
    Dict(Vec<(Value, Nest)>),
}

impl Nest {
    fn of(v: &Value) -> Nest {
        match v {
            Value::List(l) => Nest::List(l.borrow().iter().map(Nest::of).collect()),
            Value::Tuple(t) => Nest::Tuple(t.iter().map(Nest::of).collect()),
            Value::Dict(d) => Nest::Dict(
                d.borrow()
                    .items()
                    .map(|(k, v)| (k.clone(), Nest::of(v)))
                    .collect(),
            ),
            other => Nest::Leaf(other.clone()),
        }
    }

    fn leaves(&self, out: &mut Vec<Value>) {
        match self {
            Nest::Leaf(v) => out.push(v.clone()),
            Nest::List(items) | Nest::Tuple(items) => items.iter().for_each(|n| n.leaves(out)),
            Nest::Dict(items) => items.iter().for_each(|(_, n)| n.leaves(out)),
        }
    }

    fn flat(&self) -> Vec<Value> {
        let mut out = Vec::new();
        self.leaves(&mut out);
        out
    }

    /// The same structure with its leaves replaced, in order, by `values`.
    fn pack(&self, values: &mut impl Iterator<Item = Value>) -> PyResult<Value> {
        Ok(match self {
            Nest::Leaf(_) => values.next().unwrap_or(Value::None),
            Nest::List(items) => Value::list(
                items
                    .iter()
                    .map(|n| n.pack(values))
                    .collect::<PyResult<_>>()?,
            ),
            Nest::Tuple(items) => Value::tuple(
                items
                    .iter()
                    .map(|n| n.pack(values))
                    .collect::<PyResult<_>>()?,
            ),
            Nest::Dict(items) => {
                let mut d = Dict::default();
                for (k, n) in items {
                    d.insert(k.clone(), n.pack(values)?)?;
                }
                Value::Dict(std::rc::Rc::new(RefCell::new(d)))
            }
        })
    }
}

/// `tf.UnconnectedGradients.NONE` / `.ZERO`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnconnectedGradients(Unconnected);

impl UnconnectedGradients {
    fn name(self) -> &'static str {
        match self.0 {
            Unconnected::None => "NONE",
            Unconnected::Zero => "ZERO",
        }
    }

    fn value(self) -> &'static str {
        match self.0 {
            Unconnected::None => "none",
            Unconnected::Zero => "zero",
        }
    }

    /// The choice named by an argument: the enum member or its value string.
    fn from_arg(v: Option<&Value>) -> PyResult<Unconnected> {
        let Some(v) = v else {
            return Ok(Unconnected::None);
        };
        if let Some(u) = v.downcast::<UnconnectedGradients>() {
            return Ok(u.0);
        }
        match v {
            Value::Str(s) if &**s == "none" => Ok(Unconnected::None),
            Value::Str(s) if &**s == "zero" => Ok(Unconnected::Zero),
            other => Err(PyErr::value_error(format!(
                "Unknown value for unconnected_gradients: {}",
                other.type_name()
            ))),
        }
    }
}

impl Object for UnconnectedGradients {
    fn type_name(&self) -> String {
        "UnconnectedGradients".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(format!(
            "<UnconnectedGradients.{}: '{}'>",
            self.name(),
            self.value()
        ))
    }
    fn str(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(format!("UnconnectedGradients.{}", self.name()))
    }
    fn getattr(&self, _this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        Ok(match name {
            "name" => Some(Value::str(self.name())),
            "value" => Some(Value::str(self.value())),
            _ => None,
        })
    }
    fn compare(&self, op: CmpOp, other: &Value, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        let same = other
            .downcast::<UnconnectedGradients>()
            .is_some_and(|o| o == self);
        Ok(match op {
            CmpOp::Eq => Some(Value::Bool(same)),
            CmpOp::Ne => Some(Value::Bool(!same)),
            _ => None,
        })
    }
    fn hash(&self) -> Option<u64> {
        Some(0x6e0c + u64::from(self.0 == Unconnected::Zero))
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// The enum class `tf.UnconnectedGradients` itself.
struct UnconnectedGradientsEnum;

impl Object for UnconnectedGradientsEnum {
    fn type_name(&self) -> String {
        "EnumType".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok("<enum 'UnconnectedGradients'>".into())
    }
    fn getattr(&self, _this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        Ok(match name {
            "NONE" => Some(Value::native(UnconnectedGradients(Unconnected::None))),
            "ZERO" => Some(Value::native(UnconnectedGradients(Unconnected::Zero))),
            "__name__" => Some(Value::str("UnconnectedGradients")),
            _ => None,
        })
    }
    fn iter(&self, _this: &Value, _ctx: &mut dyn Ctx) -> PyResult<Value> {
        Ok(crate::bindings::common::ItemIter::list(vec![
            Value::native(UnconnectedGradients(Unconnected::None)),
            Value::native(UnconnectedGradients(Unconnected::Zero)),
        ]))
    }
    fn call(&self, _this: &Value, args: Args, _ctx: &mut dyn Ctx) -> PyResult<Value> {
        let s = args.bind("UnconnectedGradients", &["value"], 1)?;
        Ok(Value::native(UnconnectedGradients(
            UnconnectedGradients::from_arg(given(&s[0]))?,
        )))
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// A gradient tape.
pub struct GradientTape {
    tape: TapeRef,
    /// Whether `with` has entered it once (TF creates its tape on entry).
    entered: std::cell::Cell<bool>,
}

/// What TF says about a value that is neither a tensor nor a variable.
fn not_a_tensor(v: &Value, ctx: &mut dyn Ctx) -> PyErr {
    let shown = ctx.str(v).unwrap_or_else(|_| v.type_name());
    PyErr::value_error(format!(
        "Passed in object {shown} of type '{}', not tf.Tensor or tf.Variable or ExtensionType.",
        v.type_name()
    ))
}

/// A gradient source: the tensor itself, or the variable (its reads carry the gradient;
/// inside a replica's function, a mirrored variable is that replica's copy).
fn source_of(v: &Value, ctx: &mut dyn Ctx) -> PyResult<Source> {
    if let Some(t) = v.downcast::<Tensor>() {
        return Ok(Source::Tensor(t.tensor.clone()));
    }
    match variable_in(v, ctx) {
        Some(var) => Ok(Source::Variable(var)),
        None => Err(PyErr::attribute_error(format!(
            "'{}' object has no attribute '_id'",
            v.type_name()
        ))),
    }
}

fn tape_of(this: &Value) -> PyResult<TapeRef> {
    this.downcast::<GradientTape>()
        .map(|g| g.tape.clone())
        .ok_or_else(|| PyErr::type_error("descriptor requires a 'GradientTape' object"))
}

fn not_recording() -> PyErr {
    TfError::Value("Tape is not recording.".into()).into()
}

impl GradientTape {
    fn watch(&self, args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
        let s = args.bind("watch", &["tensor"], 1)?;
        for v in Nest::of(s[0].as_ref().unwrap_or(&Value::None)).flat() {
            let (ok, dtype) = if let Some(t) = v.downcast::<Tensor>() {
                (lock(&self.tape).watch(&t.tensor), t.tensor.dtype())
            } else if let Some(var) = variable_in(&v, ctx) {
                (lock(&self.tape).watch_variable(&var), var.dtype())
            } else {
                return Err(not_a_tensor(&v, ctx));
            };
            if !ok {
                let st = &mut ctx.state().get::<TfState>().tape_warnings;
                st.watched_dtype += 1;
                if st.watched_dtype <= 5 {
                    warn(
                        ctx,
                        &format!(
                            "The dtype of the watched tensor must be floating (e.g. tf.float32), got tf.{}",
                            dtype.name()
                        ),
                    );
                }
            }
        }
        Ok(Value::None)
    }

    fn gradient(&self, args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
        // A gradient's ops bake in the shapes they were computed for.
        super::function::trace::shapes_baked(ctx);
        let s = args.bind(
            "gradient",
            &[
                "target",
                "sources",
                "output_gradients",
                "unconnected_gradients",
            ],
            2,
        )?;
        let persistent = {
            let t = lock(&self.tape);
            t.ensure_usable().map_err(op_err)?;
            t.persistent()
        };
        if persistent && context(ctx).is_active(&self.tape) {
            let st = &mut ctx.state().get::<TfState>().tape_warnings;
            st.persistent_inside += 1;
            if st.persistent_inside == 1 {
                warn(
                    ctx,
                    "Calling GradientTape.gradient on a persistent tape inside its context is \
                     significantly less efficient than calling it outside the context (it causes \
                     the gradient ops to be recorded on the tape, leading to increased CPU and \
                     memory usage). Only call GradientTape.gradient inside the context if you \
                     actually want to trace the gradient in order to compute higher order \
                     derivatives.",
                );
            }
        }
        let targets = Nest::of(s[0].as_ref().unwrap_or(&Value::None)).flat();
        let targets = targets
            .iter()
            .map(|t| tensor_of(t, ctx))
            .collect::<PyResult<Vec<_>>>()?;
        let sources = Nest::of(s[1].as_ref().unwrap_or(&Value::None));
        let flat: Vec<Source> = sources
            .flat()
            .iter()
            .map(|v| source_of(v, ctx))
            .collect::<PyResult<_>>()?;
        let output_gradients = match given(&s[2]) {
            None => None,
            Some(og) => {
                let leaves = Nest::of(og).flat();
                let mut out = Vec::with_capacity(leaves.len());
                for (leaf, t) in leaves.iter().zip(&targets) {
                    out.push(match leaf {
                        Value::None => {
                            crate::ops::Tensor::full(t.shape(), 1.0, t.dtype()).map_err(op_err)?
                        }
                        v => tensor_of(v, ctx)?,
                    });
                }
                Some(out)
            }
        };
        let unconnected = UnconnectedGradients::from_arg(given(&s[3]))?;
        let tape = self.tape.clone();
        let grads = run(ctx, |e| {
            e.gradient(
                &tape,
                &targets,
                &flat,
                output_gradients.as_deref(),
                unconnected,
            )
        })?;
        let mut values = grads.into_iter().map(|g| g.map_or(Value::None, wrap));
        sources.pack(&mut values)
    }

    fn jacobian(&self, args: &Args, ctx: &mut dyn Ctx, batch: bool) -> PyResult<Value> {
        super::function::trace::shapes_baked(ctx);
        let name = if batch { "batch_jacobian" } else { "jacobian" };
        let second = if batch { "source" } else { "sources" };
        let s = args.bind(
            name,
            &[
                "target",
                second,
                "unconnected_gradients",
                "parallel_iterations",
                "experimental_use_pfor",
            ],
            2,
        )?;
        lock(&self.tape).ensure_usable().map_err(op_err)?;
        let target = tensor_of(s[0].as_ref().unwrap_or(&Value::None), ctx)?;
        let sources = Nest::of(s[1].as_ref().unwrap_or(&Value::None));
        let flat: Vec<Source> = sources
            .flat()
            .iter()
            .map(|v| source_of(v, ctx))
            .collect::<PyResult<_>>()?;
        let unconnected = UnconnectedGradients::from_arg(given(&s[2]))?;
        let tape = self.tape.clone();
        let js = run(ctx, |e| {
            e.jacobian(&tape, &target, &flat, unconnected, batch)
        })?;
        let mut values = js.into_iter().map(|g| g.map_or(Value::None, wrap));
        sources.pack(&mut values)
    }
}

impl Object for GradientTape {
    fn type_name(&self) -> String {
        "GradientTape".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(format!(
            "<tensorflow.python.eager.backprop.GradientTape object at {}>",
            address_of(self)
        ))
    }
    fn enter(&self, this: &Value, ctx: &mut dyn Ctx) -> PyResult<Value> {
        self.entered.set(true);
        context(ctx).push_tape(self.tape.clone());
        Ok(this.clone())
    }
    fn exit(&self, _error: Option<&PyErr>, ctx: &mut dyn Ctx) -> PyResult<bool> {
        context(ctx).pop_tape(&self.tape);
        Ok(false)
    }
    fn getattr(&self, this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        Ok(Some(match name {
            "watch" => bound::<GradientTape>(this, name, |g, _, a, c| g.watch(a, c)),
            "gradient" => bound::<GradientTape>(this, name, |g, _, a, c| g.gradient(a, c)),
            "jacobian" => bound::<GradientTape>(this, name, |g, _, a, c| g.jacobian(a, c, false)),
            "batch_jacobian" => {
                bound::<GradientTape>(this, name, |g, _, a, c| g.jacobian(a, c, true))
            }
            "reset" => bound::<GradientTape>(this, name, |g, _, _, c| {
                if !context(c).is_active(&g.tape) {
                    return Err(not_recording());
                }
                lock(&g.tape).reset();
                Ok(Value::None)
            }),
            "stop_recording" => bound::<GradientTape>(this, name, |g, this, _, _| {
                // TF has no tape to stop before the first `with`, or once a
                // non-persistent tape has answered.
                let usable = lock(&g.tape).ensure_usable().is_ok();
                Ok(Value::native(StopRecording {
                    tape: tape_of(this)?,
                    exists: g.entered.get() && usable,
                }))
            }),
            "watched_variables" => bound::<GradientTape>(this, name, |g, _, _, _| {
                let vars = lock(&g.tape).watched_variables().to_vec();
                Ok(Value::tuple(
                    vars.into_iter()
                        .map(|var| Value::native(Variable { var, unread: false }))
                        .collect(),
                ))
            }),
            _ => return Ok(None),
        }))
    }
    fn dir(&self) -> Vec<String> {
        [
            "batch_jacobian",
            "gradient",
            "jacobian",
            "reset",
            "stop_recording",
            "watch",
            "watched_variables",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// The context manager `tape.stop_recording()` returns: this tape (only) stops recording
/// inside it, as TF pops it from the active tapes and pushes it back after.
struct StopRecording {
    tape: TapeRef,
    exists: bool,
}

impl Object for StopRecording {
    fn type_name(&self) -> String {
        "_GeneratorContextManager".into()
    }
    fn enter(&self, _this: &Value, ctx: &mut dyn Ctx) -> PyResult<Value> {
        if !self.exists {
            return Err(TfError::Runtime(
                "Trying to stop recording a tape which is not recording.".into(),
            )
            .into());
        }
        if !context(ctx).pop_tape(&self.tape) {
            return Err(not_recording());
        }
        Ok(Value::None)
    }
    fn exit(&self, _error: Option<&PyErr>, ctx: &mut dyn Ctx) -> PyResult<bool> {
        context(ctx).push_tape(self.tape.clone());
        Ok(false)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

fn new_tape(args: &Args, _ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind(
        "GradientTape",
        &["persistent", "watch_accessed_variables"],
        0,
    )?;
    let persistent = given(&s[0]).map_or(Ok(false), |v| v.as_bool_strict())?;
    let watch = given(&s[1]).map_or(Ok(true), |v| v.as_bool_strict())?;
    Ok(Value::native(GradientTape {
        tape: Tape::new(persistent, watch).shared(),
        entered: std::cell::Cell::new(false),
    }))
}

/// `tf.GradientTape` (a class) and `tf.UnconnectedGradients`, for `tf` to bind.
pub fn values() -> Vec<(&'static str, Value)> {
    let class = NativeClass::new(
        "GradientTape",
        "tensorflow.python.eager.backprop",
        "GradientTape(persistent=False, watch_accessed_variables=True)\n\nRecords operations \
         for automatic differentiation.",
    )
    .constructor(new_tape)
    .into_value();
    vec![
        ("GradientTape", class),
        (
            "UnconnectedGradients",
            Value::native(UnconnectedGradientsEnum),
        ),
    ]
}
