//! `tf.distribute` strategies as language objects: the [`Strategy`] native (devices,
//! `num_replicas_in_sync`, `scope()`, `run`, `reduce`, local results), the scope stack kept
//! in session state so that a `with strategy.scope():` in one cell still holds for the model
//! built in the next, and the checks Keras makes when a model meets a strategy (built
//! outside, fitted inside; two strategies mixed). The constructors (`MirroredStrategy`, ...)
//! are in `strategies.rs`; training itself belongs to the distribute part.

use std::any::Any;
use std::cell::RefCell;
use std::sync::Arc;

use super::values::{DistributedValues, ReduceOp, ReplicaContext};
use super::{address_of, bound, given, py_tuple, TfError, TfState};
use crate::display::{plain, MimeBundle};
use crate::lang::str_repr;
use crate::lang::{Args, Ctx, Object, PyResult, Value};
use crate::ops;

pub use super::mistakes::{check_fit_scope, warn_compile_outside_scope};
pub use super::strategies::module;

/// Which strategy class a [`Strategy`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StrategyKind {
    Mirrored,
    OneDevice,
    MultiWorkerMirrored,
    /// The strategy `tf.distribute.get_strategy()` returns outside every scope.
    Default,
}

impl StrategyKind {
    pub fn class_name(self) -> &'static str {
        match self {
            StrategyKind::Mirrored => "MirroredStrategy",
            StrategyKind::OneDevice => "OneDeviceStrategy",
            StrategyKind::MultiWorkerMirrored => "MultiWorkerMirroredStrategy",
            StrategyKind::Default => "_DefaultDistributionStrategy",
        }
    }
    fn module_path(self) -> &'static str {
        match self {
            StrategyKind::Mirrored => "tensorflow.python.distribute.mirrored_strategy",
            StrategyKind::OneDevice => "tensorflow.python.distribute.one_device_strategy",
            StrategyKind::MultiWorkerMirrored => {
                "tensorflow.python.distribute.collective_all_reduce_strategy"
            }
            StrategyKind::Default => "tensorflow.python.distribute.distribute_lib",
        }
    }
}

/// A distribution strategy: which devices hold a replica, and how gradients are summed.
pub struct Strategy {
    pub kind: StrategyKind,
    /// Logical devices as `(device_type, index)`, one per replica.
    pub devices: Vec<(&'static str, usize)>,
    /// The same devices as the engine makes replicas on (with the physical GPU each
    /// logical GPU is carved from), fixed when the strategy is made.
    pub engine: Vec<crate::device::DeviceSpec>,
    /// The cross-device reduction the user asked for (`NcclAllReduce`, ...), for display.
    pub cross_device_ops: Option<String>,
    /// The engine's replicas, made when the first model is built under this strategy
    /// (replica threads cost memory, so a strategy only printed never starts them).
    pub core: RefCell<Option<Arc<crate::distribute::MirroredStrategy>>>,
    /// `MultiWorkerMirroredStrategy`'s cluster: none for the other strategies.
    pub cluster: Option<InCluster>,
}

/// What a `MultiWorkerMirroredStrategy` knows of its cluster.
pub struct InCluster {
    /// `strategy.cluster_resolver`.
    pub resolver: Value,
    /// The cluster and this task, read from the resolver when the strategy was made.
    pub config: crate::distribute::cluster::TfConfig,
    /// `CommunicationOptions.implementation` (`AUTO`, `RING`, `NCCL`).
    pub implementation: &'static str,
    /// `CommunicationOptions.timeout_seconds`: how long a worker waits for the others.
    pub timeout: Option<std::time::Duration>,
}

/// The full name TF gives a local device in `worker_devices` and the INFO line.
pub fn full_device_name(device_type: &str, index: usize) -> String {
    format!("/job:localhost/replica:0/task:0/device:{device_type}:{index}")
}

impl Strategy {
    /// A strategy over `engine` devices (its replicas start when the first model is built).
    pub fn new(
        kind: StrategyKind,
        engine: Vec<crate::device::DeviceSpec>,
        cross_device_ops: Option<String>,
    ) -> Strategy {
        Strategy {
            kind,
            devices: engine.iter().map(|d| (d.kind.as_str(), d.index)).collect(),
            engine,
            cross_device_ops,
            core: RefCell::new(None),
            cluster: None,
        }
    }

    /// The strategy as one worker of a cluster (`MultiWorkerMirroredStrategy`).
    pub fn in_cluster(
        mut self,
        resolver: Value,
        config: crate::distribute::cluster::TfConfig,
        implementation: &'static str,
        timeout: Option<std::time::Duration>,
    ) -> Strategy {
        self.cluster = Some(InCluster {
            resolver,
            config,
            implementation,
            timeout,
        });
        self
    }

    /// This process's replicas (those `run` calls and a local batch is split over).
    pub fn num_replicas(&self) -> usize {
        self.devices.len().max(1)
    }

    /// How many workers train together (1 outside a cluster).
    pub fn num_workers(&self) -> usize {
        self.cluster
            .as_ref()
            .map_or(1, |c| c.config.cluster.num_workers().max(1))
    }

    /// `num_replicas_in_sync`: every worker's replicas (each worker runs as many).
    pub fn num_replicas_in_sync(&self) -> usize {
        self.num_replicas() * self.num_workers()
    }

    /// Whether this worker writes checkpoints and summaries: the chief, or any strategy
    /// outside a cluster.
    pub fn is_chief(&self) -> bool {
        self.cluster.as_ref().is_none_or(|c| c.config.is_chief())
    }

    /// The local devices' full names: `/job:localhost/...`, or this task's job and index
    /// when the strategy is one worker of several.
    pub fn worker_devices(&self) -> Vec<String> {
        let task = self
            .cluster
            .as_ref()
            .filter(|c| c.config.cluster.num_workers() > 1)
            .map(|c| {
                let ty = c.config.task_type.as_deref().unwrap_or("worker");
                (ty.to_string(), c.config.task_id.unwrap_or(0))
            });
        self.devices
            .iter()
            .map(|(t, i)| match &task {
                Some((job, id)) => format!("/job:{job}/replica:0/task:{id}/device:{t}:{i}"),
                None => full_device_name(t, *i),
            })
            .collect()
    }

    /// The engine's replicas for this strategy: the local devices, and for a strategy that
    /// is one worker of several the collective that joins the other workers.
    pub fn engine_core(&self) -> crate::distribute::Result<crate::distribute::MirroredStrategy> {
        match self
            .cluster
            .as_ref()
            .filter(|c| c.config.cluster.num_workers() > 1)
        {
            None => crate::distribute::MirroredStrategy::for_devices(self.engine.clone()),
            Some(c) => crate::distribute::workers::join(self.engine.clone(), &c.config, c.timeout),
        }
    }

    fn worker_devices_tuple(&self) -> Value {
        Value::tuple(self.worker_devices().into_iter().map(Value::from).collect())
    }

    /// `strategy.run(fn, args=(), kwargs=None)`: calls `fn` once per replica, replica by
    /// replica, with per-replica arguments unwrapped; results come back as `PerReplica`.
    /// Inside a `tf.function` trace, each replica's steps are tagged with its replica, so
    /// the graph's replay runs the replicas at the same time.
    fn run(&self, this: &Value, args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
        let s = args.bind("run", &["fn", "args", "kwargs", "options"], 1)?;
        let f = s[0].clone().unwrap_or(Value::None);
        let Args { pos, kw } = call_arguments(&s[1], &s[2])?;
        let n = self.num_replicas();
        super::function::trace::runs_strategy(ctx, this);
        let outer = ctx
            .state()
            .get::<TfState>()
            .dist
            .run
            .replace(RunShared::new(n));
        let results = self.run_replicas(this, &f, &pos, &kw, ctx);
        ctx.state().get::<TfState>().dist.run = outer;
        Ok(regroup(results?))
    }

    /// Calls `f` as each replica, with that replica's part of every argument. Several
    /// replicas take turns as calls that can meet (`lang`'s `run_together`): each runs
    /// until it reaches a `merge_call` (an `all_reduce`, an `apply_gradients`) or returns,
    /// and the merge runs once all have met, as TF's replica threads do.
    fn run_replicas(
        &self,
        this: &Value,
        f: &Value,
        pos: &[Value],
        kw: &[(String, Value)],
        ctx: &mut dyn Ctx,
    ) -> PyResult<Vec<Value>> {
        let n = self.num_replicas();
        let args_of = |r: usize| Args {
            pos: pos.iter().map(|v| DistributedValues::local(v, r)).collect(),
            kw: kw
                .iter()
                .map(|(k, v)| (k.clone(), DistributedValues::local(v, r)))
                .collect(),
        };
        if n == 1 {
            ctx.check_interrupt()?;
            let saved = enter_replica(ctx, this, 0);
            let tags = super::function::trace::tag_replica(ctx, Some(0));
            let out = ctx.call(f, args_of(0));
            super::function::trace::restore_replica(ctx, tags);
            restore_replica(ctx, saved);
            return Ok(vec![out?]);
        }
        let body = |ctx: &mut dyn Ctx, r: usize| ctx.call(f, args_of(r));
        let mut turns = super::merge::ReplicaTurns::new(ctx, this, n);
        crate::lang::run_together(ctx, n, &body, &mut turns)
    }

    /// `strategy.reduce(op, value, axis=None)` for Python numbers; tensors reduce through the
    /// tensor part.
    fn reduce(&self, args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
        let s = args.bind("reduce", &["reduce_op", "value", "axis"], 2)?;
        let op = ReduceOp::from_value(s[0].as_ref().unwrap_or(&Value::None))?;
        let v = s[1].clone().unwrap_or(Value::None);
        let parts = match v.downcast::<DistributedValues>() {
            Some(d) => d.parts.clone(),
            None if op == ReduceOp::Mean || self.num_replicas() == 1 => return Ok(v),
            None => {
                let shown = ctx.repr(&v)?;
                return Err(TfError::Value(format!(
                    "A non-DistributedValues value {shown} cannot be reduced with the given \
                     reduce op ReduceOp.SUM."
                ))
                .into());
            }
        };
        if parts.iter().any(super::convert::holds_array) {
            let axis = super::ops::axes_arg(s[2].as_ref(), ctx)?;
            return super::values::reduce_tensors(op, &parts, axis, ctx);
        }
        super::values::reduce_numbers(op, &parts)
    }
}

/// `strategy.gather(value, axis)`: the replicas' parts joined along `axis`, in replica
/// order (a value that is not per replica is its one part).
fn gather(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind("gather", &["value", "axis"], 2)?;
    let v = s[0].clone().unwrap_or(Value::None);
    let axis = s[1].as_ref().map_or(Ok(0), Value::as_int)?;
    let parts = match v.downcast::<DistributedValues>() {
        Some(d) => d.parts.clone(),
        None => vec![v],
    };
    let refs: Vec<&Value> = parts.iter().collect();
    let tensors = super::convert::matching(&refs, ctx)?;
    super::eager::apply(ctx, |e| ops::concat(e, &tensors, axis))
}

/// The session's strategy bookkeeping.
#[derive(Default)]
pub struct DistState {
    /// Strategies whose `scope()` is entered, innermost last.
    pub stack: Vec<Value>,
    /// The default strategy, made once so `get_strategy()` keeps its identity.
    default: Option<Value>,
    /// While `strategy.run` calls a replica's function: that strategy and replica.
    replica: Option<(Value, usize)>,
    /// What the replicas of the `strategy.run` in progress share.
    run: Option<RunShared>,
}

/// What the replicas of one `strategy.run` share: the variables made in the run, made
/// once by the first replica and handed to the others in the same order.
pub struct RunShared {
    /// The variables the first replica made, in order.
    created: Vec<Value>,
    /// How many variables each replica has made so far.
    created_made: Vec<usize>,
}

impl RunShared {
    fn new(replicas: usize) -> RunShared {
        RunShared {
            created: vec![],
            created_made: vec![0; replicas],
        }
    }
}

/// The threads that run the replicas' parts of a graph traced from `strategy.run`: the
/// strategy's own replica threads (those `fit` trains on) once its replicas are made, else
/// threads made for each replay.
pub fn replica_threads(strategy: Option<&Value>) -> Box<dyn ops::Workers> {
    let core = strategy
        .and_then(|s| s.downcast::<Strategy>())
        .and_then(|s| s.core.borrow().clone());
    match core {
        Some(core) => Box::new(ReplicaThreads(core)),
        None => Box::new(ops::ScopedThreads),
    }
}

struct ReplicaThreads(Arc<crate::distribute::MirroredStrategy>);

impl ops::Workers for ReplicaThreads {
    fn each(&self, n: usize, job: &(dyn Fn(usize) + Sync)) {
        if n != self.0.num_replicas_in_sync() {
            return ops::ScopedThreads.each(n, job);
        }
        // A job that panics leaves its replica's result unset, which the replay reports.
        let _ = self.0.run(|replica| job(replica.rank));
    }
}

/// Runs `f` (the work a collective call completes: the reduction and the update it
/// feeds) in the cross-replica context as far as the traces in progress see it, so a
/// replay runs it once every replica's part is ready.
pub fn cross_replica<R>(ctx: &mut dyn Ctx, f: impl FnOnce(&mut dyn Ctx) -> R) -> R {
    let tags = super::function::trace::tag_replica(ctx, None);
    let out = f(ctx);
    super::function::trace::restore_replica(ctx, tags);
    out
}

/// The SUM all-reduce of every replica's parts, slot by slot, in replica order (a slot no
/// replica filled stays empty).
pub fn sum_parts(
    e: &mut ops::Eager,
    parts: &[Vec<Option<ops::Tensor>>],
) -> ops::OpResult<Vec<Option<ops::Tensor>>> {
    let slots = parts.iter().map(Vec::len).max().unwrap_or(0);
    let mut out = Vec::with_capacity(slots);
    for i in 0..slots {
        let given: Vec<ops::Tensor> = parts
            .iter()
            .filter_map(|p| p.get(i).cloned().flatten())
            .collect();
        out.push(match given.len() {
            0 => None,
            1 => given.into_iter().next(),
            _ => Some(ops::add_n(e, &given)?),
        });
    }
    Ok(out)
}

/// A variable made inside `strategy.run`: the first replica makes it (with `make`), the
/// others get the one the first replica made at the same point, as TF shares a variable
/// made in a replica context. Outside a run, `make` makes it.
pub fn shared_variable(ctx: &mut dyn Ctx, make: impl FnOnce(&mut dyn Ctx) -> Value) -> Value {
    let st = &mut ctx.state().get::<TfState>().dist;
    let r = st.replica.as_ref().map(|(_, r)| *r);
    let Some(run) = st.run.as_mut() else {
        return make(ctx);
    };
    let Some(made) = run.created_made.get_mut(r.unwrap_or(0)) else {
        return make(ctx);
    };
    let k = *made;
    *made += 1;
    if r != Some(0) {
        if let Some(v) = run.created.get(k) {
            return v.clone();
        }
    }
    let v = make(ctx);
    if let Some(run) = ctx.state().get::<TfState>().dist.run.as_mut() {
        if r == Some(0) {
            run.created.push(v.clone());
        }
    }
    v
}

/// The `args=` and `kwargs=` of `strategy.run` and `merge_call`: a sequence (or one value)
/// of positional arguments, and a dict of keyword arguments (TypeError for anything else).
pub fn call_arguments(args: &Option<Value>, kwargs: &Option<Value>) -> PyResult<Args> {
    let pos = match given(args) {
        Some(v) => v.as_seq().unwrap_or_else(|| vec![v.clone()]),
        None => vec![],
    };
    let kw = match given(kwargs) {
        Some(Value::Dict(d)) => d
            .borrow()
            .items()
            .map(|(k, v)| Ok((k.as_str()?.to_string(), v.clone())))
            .collect::<PyResult<_>>()?,
        Some(other) => {
            return Err(
                TfError::Type(format!("kwargs must be a dict, not {}", other.type_name())).into(),
            )
        }
        None => vec![],
    };
    Ok(Args { pos, kw })
}

/// The results of the replicas as TF regroups them: tuples and lists item by item, dicts
/// key by key, a value every replica returned identically (the same object: here `None`,
/// a bool, an equal string or an equal int) as itself, anything else as `PerReplica`. One
/// replica's result is itself.
pub(super) fn regroup(results: Vec<Value>) -> Value {
    regroup_values(results, false)
}

/// [`regroup`] of the arguments the replicas pass to a `merge_call`, where an equal float
/// is taken as the same object: there it is most often a constant of the replica
/// function's code (`kwargs={"k": 1.0}`), one object in CPython that every replica passes.
pub(super) fn regroup_arguments(results: Vec<Value>) -> Value {
    regroup_values(results, true)
}

fn regroup_values(mut results: Vec<Value>, floats_alike: bool) -> Value {
    if results.len() <= 1 {
        return results.pop().unwrap_or(Value::None);
    }
    let first = results[0].clone();
    let column = |i: usize| -> Vec<Value> {
        results
            .iter()
            .map(|r| {
                r.as_seq()
                    .and_then(|s| s.get(i).cloned())
                    .unwrap_or(Value::None)
            })
            .collect()
    };
    let same_len = |len: usize, tuple: bool| {
        results.iter().all(|r| match r {
            Value::Tuple(t) => tuple && t.len() == len,
            Value::List(l) => !tuple && l.borrow().len() == len,
            _ => false,
        })
    };
    match &first {
        Value::Tuple(t) if same_len(t.len(), true) => {
            return Value::tuple(
                (0..t.len())
                    .map(|i| regroup_values(column(i), floats_alike))
                    .collect(),
            )
        }
        Value::List(l) if same_len(l.borrow().len(), false) => {
            let len = l.borrow().len();
            return Value::list(
                (0..len)
                    .map(|i| regroup_values(column(i), floats_alike))
                    .collect(),
            );
        }
        Value::Dict(d) => {
            if let Some(dict) = regroup_dicts(&d.borrow(), &results, floats_alike) {
                return dict;
            }
        }
        _ => {}
    }
    // A float a replica computed is a new object in CPython, never the same as another's.
    let identical = (floats_alike || !matches!(first, Value::Float(_)))
        && results.iter().all(|r| {
            r.is(&first)
                || match (r, &first) {
                    (Value::None, Value::None) => true,
                    (Value::Bool(a), Value::Bool(b)) => a == b,
                    (Value::Int(a), Value::Int(b)) => a == b && (-5..=256).contains(a),
                    (Value::Float(a), Value::Float(b)) => {
                        floats_alike && a.to_bits() == b.to_bits()
                    }
                    (Value::Str(a), Value::Str(b)) => a == b,
                    _ => false,
                }
        });
    if identical {
        return first;
    }
    DistributedValues::per_replica(results)
}

/// Dicts regrouped key by key in the first one's key order, as TF regroups a mapping;
/// `None` when the results are not all dicts with the first one's keys.
fn regroup_dicts(
    first: &crate::lang::Dict,
    results: &[Value],
    floats_alike: bool,
) -> Option<Value> {
    let keys: Vec<Value> = first.items().map(|(k, _)| k.clone()).collect();
    let mut columns: Vec<Vec<Value>> = vec![Vec::with_capacity(results.len()); keys.len()];
    for r in results {
        let Value::Dict(d) = r else {
            return None;
        };
        let d = d.borrow();
        if d.len() != keys.len() {
            return None;
        }
        for (k, column) in keys.iter().zip(&mut columns) {
            column.push(d.get(k).ok().flatten()?);
        }
    }
    let mut out = crate::lang::Dict::default();
    for (k, column) in keys.into_iter().zip(columns) {
        // The keys come from a dict, so they hash.
        out.insert(k, regroup_values(column, floats_alike)).ok()?;
    }
    Some(Value::Dict(std::rc::Rc::new(std::cell::RefCell::new(out))))
}

/// Makes replica `r` of `strategy` the running one; returns what ran before, for
/// [`restore_replica`].
pub(super) fn enter_replica(
    ctx: &mut dyn Ctx,
    strategy: &Value,
    r: usize,
) -> Option<(Value, usize)> {
    let st = &mut ctx.state().get::<TfState>().dist;
    st.replica.replace((strategy.clone(), r))
}

/// Leaves the replica context for the cross-replica one; returns what ran before, for
/// [`restore_replica`].
pub(super) fn take_replica(ctx: &mut dyn Ctx) -> Option<(Value, usize)> {
    ctx.state().get::<TfState>().dist.replica.take()
}

pub(super) fn restore_replica(ctx: &mut dyn Ctx, saved: Option<(Value, usize)>) {
    ctx.state().get::<TfState>().dist.replica = saved;
}

/// Runs `f` as replica `r` of `strategy` (mirrored variables read that replica's copy, and
/// `tf.distribute.get_replica_context()` names it), restoring the context after.
pub fn as_replica<R>(
    ctx: &mut dyn Ctx,
    strategy: &Value,
    r: usize,
    f: impl FnOnce(&mut dyn Ctx) -> R,
) -> R {
    let saved = enter_replica(ctx, strategy, r);
    let out = f(ctx);
    restore_replica(ctx, saved);
    out
}

/// The replica whose function `strategy.run` (or a subclassed model's step) is running,
/// if any: a mirrored variable read there reads that replica's copy.
pub fn running_replica(ctx: &mut dyn Ctx) -> Option<usize> {
    ctx.state()
        .get::<TfState>()
        .dist
        .replica
        .as_ref()
        .map(|(_, r)| *r)
}

/// The strategy whose scope is active (innermost), if any.
pub fn active_strategy(ctx: &mut dyn Ctx) -> Option<Value> {
    let st = &ctx.state().get::<TfState>().dist;
    if let Some((s, _)) = &st.replica {
        return Some(s.clone());
    }
    st.stack.last().cloned()
}

/// `tf.distribute.get_strategy()`: the active strategy, else the default one.
pub fn current_or_default(ctx: &mut dyn Ctx) -> Value {
    if let Some(s) = active_strategy(ctx) {
        return s;
    }
    let st = &mut ctx.state().get::<TfState>().dist;
    st.default
        .get_or_insert_with(|| {
            Value::native(Strategy::new(
                StrategyKind::Default,
                vec![crate::device::DeviceSpec::cpu(0)],
                None,
            ))
        })
        .clone()
}

/// `tf.distribute.get_replica_context()`: the replica being run, the default replica
/// context outside every scope, and `None` in a strategy's cross-replica context.
pub fn replica_context(ctx: &mut dyn Ctx) -> Value {
    let running = ctx.state().get::<TfState>().dist.replica.clone();
    if let Some((s, r)) = running {
        let n = s.downcast::<Strategy>().map_or(1, |x| x.num_replicas());
        return Value::native(ReplicaContext {
            strategy: s,
            replica: r,
            replicas: n,
            value_context: false,
            default: false,
        });
    }
    if active_strategy(ctx).is_some() {
        return Value::None;
    }
    Value::native(ReplicaContext {
        strategy: current_or_default(ctx),
        replica: 0,
        replicas: 1,
        value_context: false,
        default: true,
    })
}

pub(crate) fn strategy_repr(v: &Value, ctx: &mut dyn Ctx) -> String {
    ctx.repr(v).unwrap_or_else(|_| "<strategy>".into())
}

impl Object for Strategy {
    fn type_name(&self) -> String {
        self.kind.class_name().into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(format!(
            "<{}.{} object at {}>",
            self.kind.module_path(),
            self.kind.class_name(),
            address_of(self)
        ))
    }
    fn rich(&self, ctx: &mut dyn Ctx) -> PyResult<Option<MimeBundle>> {
        let devices = self.worker_devices();
        let mut text = format!(
            "{} with {} replica{}:\n",
            self.kind.class_name(),
            self.num_replicas(),
            if self.num_replicas() == 1 { "" } else { "s" }
        );
        let mut html = format!(
            "<div><b>{}</b> &mdash; {} replica(s)<table><tr><th>replica</th><th>device</th></tr>",
            self.kind.class_name(),
            self.num_replicas()
        );
        for (i, d) in devices.iter().enumerate() {
            text.push_str(&format!("  replica {i}: {d}\n"));
            html.push_str(&format!("<tr><td>{i}</td><td><code>{d}</code></td></tr>"));
        }
        html.push_str("</table>");
        let stats = self.core.borrow().as_ref().and_then(|c| c.last_fit_stats());
        if let Some(st) = stats {
            let line = format!(
                "last fit: global batch {} split {:?} over replicas; step time: compute {:.0}%, \
                 all-reduce ({}) {:.0}%, update {:.0}%",
                st.global_batch,
                st.local_batch,
                100.0 * st.compute_share(),
                st.all_reduce,
                100.0 * st.all_reduce_share(),
                100.0 * st.update_share()
            );
            text.push_str(&line);
            text.push('\n');
            html.push_str(&format!("<p>{line}</p>"));
        }
        html.push_str("</div>");
        let _ = ctx;
        let mut b = plain(text.trim_end());
        b.insert("text/html".into(), serde_json::Value::String(html));
        Ok(Some(b))
    }
    fn getattr(&self, this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        Ok(Some(match name {
            "num_replicas_in_sync" => Value::Int(self.num_replicas_in_sync() as i64),
            "extended" => Value::native(Extended {
                strategy: this.clone(),
            }),
            "cluster_resolver" => self
                .cluster
                .as_ref()
                .map_or(Value::None, |c| c.resolver.clone()),
            "scope" => bound::<Strategy>(this, "scope", |_, this, _, _| {
                Ok(Value::native(Scope {
                    strategy: this.clone(),
                }))
            }),
            "run" => bound::<Strategy>(this, "run", |s, this, a, c| s.run(this, a, c)),
            "reduce" => bound::<Strategy>(this, "reduce", |s, _, a, c| s.reduce(a, c)),
            "gather" => bound::<Strategy>(this, "gather", |_, _, a, c| gather(a, c)),
            "experimental_local_results" => {
                bound::<Strategy>(this, "experimental_local_results", |_, _, a, _| {
                    let s = a.bind("experimental_local_results", &["value"], 1)?;
                    let v = s[0].clone().unwrap_or(Value::None);
                    Ok(match v.downcast::<DistributedValues>() {
                        Some(d) => Value::tuple(d.parts.clone()),
                        None => Value::tuple(vec![v]),
                    })
                })
            }
            "experimental_distribute_dataset" => {
                bound::<Strategy>(this, "experimental_distribute_dataset", |s, _, a, _| {
                    super::data::distribute::distribute(s.num_replicas(), a)
                })
            }
            "distribute_datasets_from_function" => {
                bound::<Strategy>(this, "distribute_datasets_from_function", |s, _, a, c| {
                    super::data::distribute::from_function(s.num_replicas(), a, c)
                })
            }
            "experimental_distribute_values_from_function" => bound::<Strategy>(
                this,
                "experimental_distribute_values_from_function",
                |s, this, a, c| {
                    let slots = a.bind(
                        "experimental_distribute_values_from_function",
                        &["value_fn"],
                        1,
                    )?;
                    let f = slots[0].clone().unwrap_or(Value::None);
                    let mut parts = vec![];
                    for r in 0..s.num_replicas() {
                        let vc = Value::native(ReplicaContext {
                            strategy: this.clone(),
                            replica: r,
                            replicas: s.num_replicas(),
                            value_context: true,
                            default: false,
                        });
                        parts.push(c.call(&f, Args::new(vec![vc]))?);
                    }
                    Ok(DistributedValues::per_replica(parts))
                },
            ),
            _ => return Ok(None),
        }))
    }
    fn dir(&self) -> Vec<String> {
        [
            "num_replicas_in_sync",
            "extended",
            "scope",
            "run",
            "reduce",
            "gather",
            "experimental_local_results",
            "experimental_distribute_dataset",
            "distribute_datasets_from_function",
            "experimental_distribute_values_from_function",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    }
    fn class_chain(&self) -> Vec<String> {
        vec![self.kind.class_name().into(), "Strategy".into()]
    }
    fn hash(&self) -> Option<u64> {
        Some(self as *const Strategy as usize as u64)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// `strategy.extended`: the device lists.
struct Extended {
    strategy: Value,
}

impl Object for Extended {
    fn type_name(&self) -> String {
        "MirroredExtended".into()
    }
    fn getattr(&self, _this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        let Some(s) = self.strategy.downcast::<Strategy>() else {
            return Ok(None);
        };
        Ok(match name {
            "worker_devices" | "parameter_devices" => Some(s.worker_devices_tuple()),
            "experimental_should_init" => Some(Value::Bool(true)),
            "experimental_between_graph" => Some(Value::Bool(s.cluster.is_some())),
            "should_checkpoint" | "should_save_summary" => Some(Value::Bool(s.is_chief())),
            _ => None,
        })
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// The context manager `strategy.scope()` returns. Entering pushes the strategy on the
/// session's scope stack, which outlives the cell exactly as long as the block lasts.
struct Scope {
    strategy: Value,
}

impl Object for Scope {
    fn type_name(&self) -> String {
        "_CurrentDistributionContext".into()
    }
    fn enter(&self, _this: &Value, ctx: &mut dyn Ctx) -> PyResult<Value> {
        if let Some(current) = active_strategy(ctx) {
            if !current.is(&self.strategy) {
                return Err(TfError::Runtime(format!(
                    "Mixing different tf.distribute.Strategy objects: {} is not {}\nHint: leave \
                     the first strategy's `with` block before entering another, and use one \
                     strategy per session.",
                    strategy_repr(&current, ctx),
                    strategy_repr(&self.strategy, ctx)
                ))
                .into());
            }
        }
        super::config::initialize(ctx);
        ctx.state()
            .get::<TfState>()
            .dist
            .stack
            .push(self.strategy.clone());
        Ok(self.strategy.clone())
    }
    fn exit(&self, _error: Option<&crate::lang::PyErr>, ctx: &mut dyn Ctx) -> PyResult<bool> {
        let stack = &mut ctx.state().get::<TfState>().dist.stack;
        if let Some(pos) = stack.iter().rposition(|s| s.is(&self.strategy)) {
            stack.remove(pos);
        }
        Ok(false)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// The printed device tuple of the INFO line: `('/job:.../device:CPU:0',)`.
pub fn devices_tuple_text(names: &[String]) -> String {
    py_tuple(&names.iter().map(|n| str_repr(n)).collect::<Vec<_>>())
}
