//! Where the replicas of an eager `strategy.run` meet: `ReplicaContext.merge_call` and
//! `ReplicaContext.all_reduce` (SUM or MEAN of a nest of tensors, every replica getting the
//! reduced values at once), and the collective that `optimizer.apply_gradients` and a
//! variable's aggregated assignment make in a replica context. The replicas run as calls
//! that take turns and meet (`lang`'s `run_together`); this file gives a meeting its
//! TensorFlow meaning (what is merged, in which context, what each replica gets back) and
//! switches each replica's own state in and out of the session ([`ReplicaTurns`]). Inside a
//! `tf.function` trace the same code runs: a meeting's reduction is recorded in the
//! cross-replica context, where the replay's stages turn it into the ring all-reduce that
//! the replica threads meet at. The arithmetic is the op library's.

use std::any::Any;

use super::distribute::{enter_replica, restore_replica, sum_parts, take_replica};
use super::eager::{run, wrap};
use super::values::{DistributedValues, ReduceOp};
use super::{TfError, TfState};
use crate::lang::{Args, Ctx, Merge, Offer, PyErr, PyResult, Turns, Value};
use crate::ops;

/// TF's error when some replicas of `strategy.run` returned while others wait at a
/// `merge_call` (an `all_reduce`, an `apply_gradients`).
const UNMATCHED: &str =
    "Some replicas made a different number of replica_context().merge_call() calls.";

/// Each replica's own state while its call has the turn: the replica context that
/// `get_replica_context()` and mirrored variables see, the replica the traces in progress
/// tag steps with, and the replica's gradient tapes (per thread in TF).
pub struct ReplicaTurns {
    strategy: Value,
    saved: Vec<Option<(Value, usize)>>,
    tags: Vec<Vec<Option<usize>>>,
    tapes: Vec<ops::TapeState>,
}

impl ReplicaTurns {
    /// The turns of `n` replicas of `strategy`; each replica's tapes start as the tapes
    /// active now, which go on recording what the replicas compute.
    pub fn new(ctx: &mut dyn Ctx, strategy: &Value, n: usize) -> ReplicaTurns {
        let eager = super::eager::context(ctx);
        ReplicaTurns {
            strategy: strategy.clone(),
            saved: vec![None; n],
            tags: vec![Vec::new(); n],
            tapes: (0..n).map(|_| eager.tape_state()).collect(),
        }
    }
}

impl Turns for ReplicaTurns {
    fn enter(&mut self, ctx: &mut dyn Ctx, r: usize) {
        if let Some(slot) = self.saved.get_mut(r) {
            *slot = enter_replica(ctx, &self.strategy, r);
        }
        let tags = super::function::trace::tag_replica(ctx, Some(r));
        if let Some(slot) = self.tags.get_mut(r) {
            *slot = tags;
        }
        if let Some(t) = self.tapes.get_mut(r) {
            super::eager::context(ctx).switch_tapes(t);
        }
    }
    fn leave(&mut self, ctx: &mut dyn Ctx, r: usize) {
        if let Some(t) = self.tapes.get_mut(r) {
            super::eager::context(ctx).switch_tapes(t);
        }
        let tags = self.tags.get_mut(r).map(std::mem::take).unwrap_or_default();
        super::function::trace::restore_replica(ctx, tags);
        let saved = self.saved.get_mut(r).and_then(Option::take);
        restore_replica(ctx, saved);
    }
    fn unmatched(&self) -> PyErr {
        TfError::Runtime(UNMATCHED.into()).into()
    }
}

/// Runs `f` in `strategy`'s cross-replica context: no replica is running as far as
/// `get_replica_context()`, mirrored variables and the traces in progress see, and the
/// strategy is entered (`in_cross_replica_context()` is true, as in a `merge_fn`).
fn cross_replica<R>(ctx: &mut dyn Ctx, strategy: &Value, f: impl FnOnce(&mut dyn Ctx) -> R) -> R {
    let saved = take_replica(ctx);
    ctx.state()
        .get::<TfState>()
        .dist
        .stack
        .push(strategy.clone());
    let out = super::distribute::cross_replica(ctx, f);
    let stack = &mut ctx.state().get::<TfState>().dist.stack;
    if let Some(at) = stack.iter().rposition(|s| s.is(strategy)) {
        stack.remove(at);
    }
    restore_replica(ctx, saved);
    out
}

/// What a collective call of a replica gives back: nothing to reduce (no other replica
/// runs), nothing more to do (another replica completes the call), or every replica's
/// part, for the one replica that completes it.
pub enum Collective {
    Alone,
    Waiting,
    Ready(Vec<Vec<Option<ops::Tensor>>>),
}

/// The running replica's collective call with `part` (one tensor, or none, per slot): the
/// replicas meet; the first to resume gets every replica's part and completes the call
/// (the reduction and the update it feeds) before any replica runs on, so every replica
/// sees the update after its call, as in TF.
pub fn collective(ctx: &mut dyn Ctx, part: Vec<Option<ops::Tensor>>) -> PyResult<Collective> {
    if !in_replicas(ctx) {
        return Ok(Collective::Alone);
    }
    let merge: Merge = Box::new(|_ctx: &mut dyn Ctx, args: Vec<Box<dyn Any>>| {
        let n = args.len();
        let parts: Vec<Vec<Option<ops::Tensor>>> = args
            .into_iter()
            .map(|a| {
                a.downcast::<Vec<Option<ops::Tensor>>>()
                    .map_or_else(|_| Vec::new(), |b| *b)
            })
            .collect();
        let mut answers: Vec<Box<dyn Any>> = Vec::with_capacity(n);
        answers.push(Box::new(Some(parts)));
        for _ in 1..n {
            answers.push(Box::new(None::<Vec<Vec<Option<ops::Tensor>>>>));
        }
        Ok(answers)
    });
    let offer = Offer {
        arg: Box::new(part),
        merge,
    };
    match crate::lang::meet(ctx, offer) {
        None => Ok(Collective::Alone),
        Some(answer) => Ok(
            match answer?.downcast::<Option<Vec<Vec<Option<ops::Tensor>>>>>() {
                Ok(b) => match *b {
                    Some(parts) => Collective::Ready(parts),
                    None => Collective::Waiting,
                },
                Err(_) => Collective::Waiting,
            },
        ),
    }
}

/// Whether the running code is a replica of a `strategy.run` whose replicas take turns
/// (there are others to meet).
fn in_replicas(ctx: &mut dyn Ctx) -> bool {
    super::distribute::running_replica(ctx).is_some() && crate::lang::in_call(ctx)
}

/// `ReplicaContext.merge_call(merge_fn, args=(), kwargs=None)`: every replica meets; then
/// `merge_fn(strategy, *args, **kwargs)` runs once in the cross-replica context, each
/// argument the replicas' values regrouped (a `PerReplica` where they differ), and each
/// replica gets its own part of the result.
pub fn merge_call(strategy: &Value, args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind("merge_call", &["merge_fn", "args", "kwargs"], 1)?;
    let f = s[0].clone().unwrap_or(Value::None);
    let Args { pos, kw } = super::distribute::call_arguments(&s[1], &s[2])?;
    if !in_replicas(ctx) {
        let call = Args {
            pos: std::iter::once(strategy.clone()).chain(pos).collect(),
            kw,
        };
        return cross_replica(ctx, strategy, |ctx| ctx.call(&f, call));
    }
    let strategy = strategy.clone();
    let merge: Merge = Box::new(move |ctx: &mut dyn Ctx, offers: Vec<Box<dyn Any>>| {
        let n = offers.len();
        let each: Vec<Arguments> = offers
            .into_iter()
            .map(|o| o.downcast().map_or_else(|_| (vec![], vec![]), |b| *b))
            .collect();
        let width = each.first().map_or(0, |e| e.0.len());
        let mut call = Args {
            pos: vec![strategy.clone()],
            kw: vec![],
        };
        for i in 0..width {
            let column = each
                .iter()
                .map(|e| e.0.get(i).cloned().unwrap_or(Value::None))
                .collect();
            call.pos.push(super::distribute::regroup_arguments(column));
        }
        let names: Vec<String> = each
            .first()
            .map(|e| e.1.iter().map(|(k, _)| k.clone()).collect())
            .unwrap_or_default();
        for k in names {
            let column = each
                .iter()
                .map(|e| {
                    e.1.iter()
                        .find(|(name, _)| *name == k)
                        .map_or(Value::None, |(_, v)| v.clone())
                })
                .collect();
            call.kw
                .push((k, super::distribute::regroup_arguments(column)));
        }
        let result = cross_replica(ctx, &strategy, |ctx| ctx.call(&f, call))?;
        Ok((0..n)
            .map(|r| Box::new(DistributedValues::local(&result, r)) as Box<dyn Any>)
            .collect())
    });
    let offer = Offer {
        arg: Box::new((pos, kw)),
        merge,
    };
    match crate::lang::meet(ctx, offer) {
        Some(answer) => Ok(answer?.downcast::<Value>().map_or(Value::None, |b| *b)),
        None => Ok(Value::None),
    }
}

/// What one replica passes to `merge_call`: its positional and keyword arguments.
type Arguments = (Vec<Value>, Vec<(String, Value)>);

/// A nest of values as TF's `nest.flatten` walks it (dicts by sorted key, lists, tuples),
/// with the structure kept to pack the leaves back.
enum Nest {
    Leaf,
    List(Vec<Nest>),
    Tuple(Vec<Nest>),
    /// The keys in the dict's own order, and each item's nest in sorted key order (the
    /// order of the leaves).
    Dict(Vec<Value>, Vec<(Value, Nest)>),
}

fn flatten(v: &Value, leaves: &mut Vec<Value>, ctx: &mut dyn Ctx) -> PyResult<Nest> {
    Ok(match v {
        Value::List(l) => {
            let items = l.borrow().clone();
            Nest::List(
                items
                    .iter()
                    .map(|x| flatten(x, leaves, ctx))
                    .collect::<PyResult<_>>()?,
            )
        }
        Value::Tuple(t) => Nest::Tuple(
            t.iter()
                .map(|x| flatten(x, leaves, ctx))
                .collect::<PyResult<_>>()?,
        ),
        Value::Dict(d) => {
            let mut items: Vec<(Value, Value)> = d
                .borrow()
                .items()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            let order: Vec<Value> = items.iter().map(|(k, _)| k.clone()).collect();
            let mut keyed = Vec::with_capacity(items.len());
            for (k, v) in items.drain(..) {
                keyed.push((ctx.repr(&k)?, k, v));
            }
            // TF sorts a dict's keys; keys of one kind compare as their reprs do for the
            // strings and small ints notebooks use.
            keyed.sort_by(|a, b| match (&a.1, &b.1) {
                (Value::Str(x), Value::Str(y)) => x.cmp(y),
                (Value::Int(x), Value::Int(y)) => x.cmp(y),
                _ => a.0.cmp(&b.0),
            });
            let mut out = Vec::with_capacity(keyed.len());
            for (_, k, v) in keyed {
                out.push((k, flatten(&v, leaves, ctx)?));
            }
            Nest::Dict(order, out)
        }
        other => {
            leaves.push(other.clone());
            Nest::Leaf
        }
    })
}

fn pack(nest: &Nest, leaves: &mut impl Iterator<Item = Value>) -> Value {
    match nest {
        Nest::Leaf => leaves.next().unwrap_or(Value::None),
        Nest::List(items) => Value::list(items.iter().map(|n| pack(n, leaves)).collect()),
        Nest::Tuple(items) => Value::tuple(items.iter().map(|n| pack(n, leaves)).collect()),
        Nest::Dict(order, items) => {
            let packed: Vec<(Value, Value)> = items
                .iter()
                .map(|(k, n)| (k.clone(), pack(n, leaves)))
                .collect();
            let mut d = crate::lang::Dict::default();
            for k in order {
                if let Some((_, v)) = packed.iter().find(|(pk, _)| pk.is(k)) {
                    // The keys come from a dict, so they hash.
                    let _ = d.insert(k.clone(), v.clone());
                }
            }
            Value::Dict(std::rc::Rc::new(std::cell::RefCell::new(d)))
        }
    }
}

/// A leaf of `all_reduce` as a tensor: tensors and variables; anything else fails where
/// TF reads its `dtype`.
fn leaf_tensor(v: &Value, ctx: &mut dyn Ctx) -> PyResult<ops::Tensor> {
    if v.downcast::<super::tensor::Tensor>().is_none() && super::convert::variable_of(v).is_none() {
        return Err(PyErr::attribute_error(format!(
            "'{}' object has no attribute 'dtype'",
            v.type_name()
        )));
    }
    super::convert::tensor_of(v, ctx)
}

/// The SUM or MEAN over `n` replicas of each slot of `parts` (replica by replica). A MEAN
/// of integers is a float64, as TF divides them.
fn reduce_slots(
    e: &mut ops::Eager,
    op: ReduceOp,
    parts: &[Vec<Option<ops::Tensor>>],
) -> ops::OpResult<Vec<ops::Tensor>> {
    let n = parts.len();
    let sums = sum_parts(e, parts)?;
    let mut out = Vec::with_capacity(sums.len());
    for t in sums.into_iter().flatten() {
        out.push(match op {
            ReduceOp::Sum => t,
            ReduceOp::Mean => {
                let t = if t.dtype().is_float() {
                    t
                } else {
                    ops::cast(e, &t, crate::tensor::DType::F64)?
                };
                let count = ops::Tensor::scalar(n as f64, t.dtype());
                ops::div(e, &t, &count)?
            }
        });
    }
    Ok(out)
}

/// `ReplicaContext.all_reduce(reduce_op, value, options=None)`: the SUM or MEAN across the
/// replicas of every tensor in the nest `value`, which every replica gets back at once
/// (each its own tensors, of equal values), in the nest's shape.
pub fn all_reduce(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind("all_reduce", &["reduce_op", "value", "options"], 2)?;
    let op = ReduceOp::from_value(s[0].as_ref().unwrap_or(&Value::None))?;
    let value = s[1].clone().unwrap_or(Value::None);
    let mut leaves = Vec::new();
    let nest = flatten(&value, &mut leaves, ctx)?;
    let mut part = Vec::with_capacity(leaves.len());
    for l in &leaves {
        part.push(Some(leaf_tensor(l, ctx)?));
    }
    let reduced: Vec<ops::Tensor> =
        if in_replicas(ctx) {
            let merge: Merge =
                Box::new(move |ctx: &mut dyn Ctx, offers: Vec<Box<dyn Any>>| {
                    let n = offers.len();
                    let parts: Vec<Vec<Option<ops::Tensor>>> = offers
                        .into_iter()
                        .map(|a| {
                            a.downcast::<Vec<Option<ops::Tensor>>>()
                                .map_or_else(|_| Vec::new(), |b| *b)
                        })
                        .collect();
                    let widths = parts.iter().map(Vec::len).collect::<Vec<_>>();
                    if widths.windows(2).any(|w| w[0] != w[1]) {
                        return Err(TfError::Value(format!(
                    "The two structures don't have the same nested structure: the replicas \
                     all-reduce {} and {} tensors.",
                    widths[0],
                    widths.iter().find(|w| **w != widths[0]).copied().unwrap_or(0)
                ))
                        .into());
                    }
                    let out = super::distribute::cross_replica(ctx, |ctx| {
                        run(ctx, |e| reduce_slots(e, op, &parts))
                    })?;
                    Ok((0..n)
                        .map(|_| Box::new(out.clone()) as Box<dyn Any>)
                        .collect())
                });
            let offer = Offer {
                arg: Box::new(part),
                merge,
            };
            match crate::lang::meet(ctx, offer) {
                Some(answer) => answer?
                    .downcast::<Vec<ops::Tensor>>()
                    .map_or_else(|_| Vec::new(), |b| *b),
                None => Vec::new(),
            }
        } else {
            run(ctx, |e| reduce_slots(e, op, &[part]))?
        };
    let mut it = reduced.into_iter().map(wrap);
    Ok(pack(&nest, &mut it))
}
