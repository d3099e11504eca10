//! The traces in progress and what the rest of the `tensorflow` binding asks of them. A
//! trace runs the Python function once on concrete values with a [`Recorder`] attached to
//! the session's execution context; while it runs, tensors the function made are graph
//! tensors: they print as TF prints them (`Tensor("add:0", shape=(), dtype=int32)`), their
//! static shape has the signature's unknown dimensions, and `.numpy()` is TF's
//! AttributeError. Reading the value of a tensor that depends on the inputs (`bool(t)`,
//! `int(t)`, `if t > 0:`, a tensor index, a conversion to an array) cannot be baked into a
//! graph: the trace notes it and the function then runs eagerly on every call. A
//! `tf.Variable` made during a trace is reported here, which both records it and refuses
//! it where TF does. Lives in `TfState`, never in a global.

use crate::bindings::tf::TfState;
use crate::cell::Output;
use crate::lang::{Ctx, PyErr, PyResult, Value};
use crate::ops::{self, ObserverId, Recorder, StaticShape, TensorId};

/// TF's error for a variable made on a trace after the first call.
pub const SINGLETON_VARIABLES: &str = "tf.function only supports singleton tf.Variables \
    created on the first call. Make sure the tf.Variable is only created once or created \
    outside tf.function. See https://www.tensorflow.org/guide/function#creating_tfvariables \
    for more information.";

/// One trace in progress.
pub struct Frame {
    pub recorder: Recorder,
    /// Tensors with this id or a later one were made during the trace.
    pub start: TensorId,
    pub observer: ObserverId,
    /// What the traced code read the value of, when it read one that a graph cannot hold.
    pub value_read: Option<String>,
    /// Variables the trace made, and whether it may make any.
    pub created: Vec<ops::Variable>,
    pub may_create: bool,
    /// Whether the graph depends on the concrete shapes of the inputs beyond what TF's
    /// static shapes say: a gradient (its ops bake shapes in), `tf.shape`, `len` or
    /// iteration of an input-dependent tensor. Such a graph replays only on the shapes it
    /// was traced with.
    pub shape_bound: bool,
    /// What `tf.print` printed during the trace: shown once the trace is kept (a trace
    /// that is undone ran nothing, as far as TF is concerned).
    pub printed: Vec<Output>,
    /// The strategy whose `strategy.run` the traced code called: its replica threads
    /// replay the replicas' parts of the graph.
    pub strategy: Option<Value>,
}

/// The traces in progress, innermost last.
#[derive(Default)]
pub struct Tracing {
    pub frames: Vec<Frame>,
}

fn frames(ctx: &mut dyn Ctx) -> &mut Vec<Frame> {
    &mut ctx.state().get::<TfState>().tracing.frames
}

/// Whether any trace is in progress.
pub fn active(ctx: &mut dyn Ctx) -> bool {
    !frames(ctx).is_empty()
}

/// A tensor as a graph tensor of the trace in progress: its name and static shape, or
/// `None` when no trace is running or the tensor was made before it (an eager tensor the
/// function captures prints as itself).
pub fn symbol(ctx: &mut dyn Ctx, t: &ops::Tensor) -> Option<(String, StaticShape)> {
    let fs = frames(ctx);
    let first = fs.first()?;
    if t.id() < first.start {
        return None;
    }
    for f in fs.iter().rev() {
        if let (Some(name), Some(shape)) =
            (f.recorder.name(t.id()), f.recorder.static_shape(t.id()))
        {
            return Some((name, shape));
        }
    }
    // A constant the traced code made and no op has used yet: a graph constant.
    let f = fs.last()?;
    f.recorder.capture(t);
    Some((f.recorder.name(t.id())?, f.recorder.static_shape(t.id())?))
}

/// Whether `t` is a graph tensor whose value changes between calls.
pub fn is_dynamic(ctx: &mut dyn Ctx, t: &ops::Tensor) -> bool {
    frames(ctx).iter().any(|f| f.recorder.is_dynamic(t.id()))
}

/// Notes that the traced code read the value of `t` (`what` says how: `bool(tensor)`),
/// which the graphs being traced cannot replay when `t` depends on their inputs.
pub fn value_read(ctx: &mut dyn Ctx, t: &ops::Tensor, what: &str) {
    let fs = frames(ctx);
    for f in fs.iter_mut() {
        if f.recorder.is_dynamic(t.id()) && f.value_read.is_none() {
            f.value_read = Some(what.to_string());
        }
    }
}

/// TF's error for `.numpy()` on a graph tensor.
pub fn no_numpy() -> PyErr {
    PyErr::attribute_error("'SymbolicTensor' object has no attribute 'numpy'")
}

/// Reports a `tf.Variable` made while tracing: recorded, or TF's `ValueError` where the
/// trace may not make one.
pub fn variable_created(ctx: &mut dyn Ctx, var: &ops::Variable) -> PyResult<()> {
    let Some(f) = frames(ctx).last_mut() else {
        return Ok(());
    };
    if !f.may_create {
        return Err(PyErr::value_error(SINGLETON_VARIABLES));
    }
    f.created.push(var.clone());
    Ok(())
}

/// Shows prints: into the enclosing trace's pending prints when one is running, else on
/// the cell's output.
pub fn show(ctx: &mut dyn Ctx, outs: Vec<Output>) {
    match frames(ctx).last_mut() {
        Some(f) => f.printed.extend(outs),
        None => {
            for o in outs {
                ctx.emit(o);
            }
        }
    }
}

/// Notes that the trace's graph now depends on its inputs' concrete shapes (a gradient).
pub fn shapes_baked(ctx: &mut dyn Ctx) {
    for f in frames(ctx).iter_mut() {
        f.shape_bound = true;
    }
}

/// Notes that the traced code read the concrete shape of `t` (`tf.shape`, `len`,
/// iteration), which binds the graph to its inputs' shapes when `t` depends on them.
pub fn shape_read(ctx: &mut dyn Ctx, t: &ops::Tensor) {
    for f in frames(ctx).iter_mut() {
        if f.recorder.is_dynamic(t.id()) {
            f.shape_bound = true;
        }
    }
}

/// Tags what the traces in progress record from now on with the replica of `strategy.run`
/// whose function runs (`None`: the cross-replica context), so a replay can run the
/// replicas' parts at once; returns the previous tags for [`restore_replica`].
pub fn tag_replica(ctx: &mut dyn Ctx, replica: Option<usize>) -> Vec<Option<usize>> {
    frames(ctx)
        .iter()
        .map(|f| f.recorder.set_replica(replica))
        .collect()
}

/// Notes that the traced code calls `strategy.run` of `strategy`.
pub fn runs_strategy(ctx: &mut dyn Ctx, strategy: &Value) {
    for f in frames(ctx).iter_mut() {
        f.strategy.get_or_insert_with(|| strategy.clone());
    }
}

/// Puts back the tags [`tag_replica`] replaced.
pub fn restore_replica(ctx: &mut dyn Ctx, previous: Vec<Option<usize>>) {
    for (f, p) in frames(ctx).iter().zip(previous) {
        f.recorder.set_replica(p);
    }
}
