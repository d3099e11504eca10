//! Distributed values as a cell sees them: `PerReplica` (one value per replica, from
//! `strategy.run`), `MirroredVariable`'s printed form, `tf.distribute.ReduceOp`, and the
//! replica/value contexts that a function running on one replica can ask about. Holds the
//! language values themselves; reductions over tensors go through the tensor part.

use std::any::Any;

use super::address_of;
use crate::bindings::common::ItemIter;
use crate::lang::{CmpOp, Ctx, NativeFn, Object, PyErr, PyResult, Value};
use crate::ops;

/// Values with one component per replica, printed as TF prints them:
/// `PerReplica:{\n  0: ...,\n  1: ...\n}`.
pub struct DistributedValues {
    /// `PerReplica` or `MirroredVariable` (the printed and `type()` name).
    pub kind: &'static str,
    pub parts: Vec<Value>,
}

impl DistributedValues {
    pub fn per_replica(parts: Vec<Value>) -> Value {
        Value::native(DistributedValues {
            kind: "PerReplica",
            parts,
        })
    }

    fn shown(
        &self,
        ctx: &mut dyn Ctx,
        show: impl Fn(&mut dyn Ctx, &Value) -> PyResult<String>,
    ) -> PyResult<String> {
        let mut lines = Vec::with_capacity(self.parts.len());
        for (i, p) in self.parts.iter().enumerate() {
            lines.push(format!("  {i}: {}", show(ctx, p)?));
        }
        Ok(format!("{}:{{\n{}\n}}", self.kind, lines.join(",\n")))
    }

    /// The component a replica sees: its own part, or the value itself when it is not
    /// distributed. Lists, tuples and dicts are unwrapped item by item, as TF's nest does.
    pub fn local(v: &Value, replica: usize) -> Value {
        if let Some(d) = v.downcast::<DistributedValues>() {
            return d.parts.get(replica).cloned().unwrap_or(Value::None);
        }
        match v {
            Value::List(l) => {
                Value::list(l.borrow().iter().map(|x| Self::local(x, replica)).collect())
            }
            Value::Tuple(t) => Value::tuple(t.iter().map(|x| Self::local(x, replica)).collect()),
            other => other.clone(),
        }
    }
}

impl Object for DistributedValues {
    fn type_name(&self) -> String {
        self.kind.into()
    }
    fn repr(&self, ctx: &mut dyn Ctx) -> PyResult<String> {
        self.shown(ctx, |ctx, p| ctx.repr(p))
    }
    /// TF's `str` shows each part's `str` (`tf.Tensor(1, ...)`), its `repr` each `repr`.
    fn str(&self, ctx: &mut dyn Ctx) -> PyResult<String> {
        self.shown(ctx, |ctx, p| ctx.str(p))
    }
    fn getattr(&self, _this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        Ok(match name {
            "values" => Some(Value::tuple(self.parts.clone())),
            _ => None,
        })
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// `tf.distribute.ReduceOp.SUM` / `.MEAN`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReduceOp {
    Sum,
    Mean,
}

impl ReduceOp {
    pub fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "SUM",
            ReduceOp::Mean => "MEAN",
        }
    }

    /// The op named by a value: a `ReduceOp` or the strings `"SUM"`/`"MEAN"` TF accepts.
    pub fn from_value(v: &Value) -> PyResult<ReduceOp> {
        if let Some(op) = v.downcast::<ReduceOp>() {
            return Ok(*op);
        }
        match v {
            Value::Str(s) if s.eq_ignore_ascii_case("sum") => Ok(ReduceOp::Sum),
            Value::Str(s) if s.eq_ignore_ascii_case("mean") => Ok(ReduceOp::Mean),
            other => Err(PyErr::value_error(format!(
                "{} is not a valid ReduceOp\nHint: use tf.distribute.ReduceOp.SUM or \
                 tf.distribute.ReduceOp.MEAN.",
                other.type_name()
            ))),
        }
    }
}

impl Object for ReduceOp {
    fn type_name(&self) -> String {
        "ReduceOp".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(format!("<ReduceOp.{0}: '{0}'>", self.name()))
    }
    fn str(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(format!("ReduceOp.{}", self.name()))
    }
    fn getattr(&self, _this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        Ok(match name {
            "name" | "value" => Some(Value::str(self.name())),
            _ => None,
        })
    }
    fn compare(&self, op: CmpOp, other: &Value, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        let same = other.downcast::<ReduceOp>().is_some_and(|o| o == self);
        Ok(match op {
            CmpOp::Eq => Some(Value::Bool(same)),
            CmpOp::Ne => Some(Value::Bool(!same)),
            _ => None,
        })
    }
    fn hash(&self) -> Option<u64> {
        Some(*self as u64 + 0x7ed0)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// The enum class `tf.distribute.ReduceOp` itself.
pub struct ReduceOpEnum;

impl Object for ReduceOpEnum {
    fn type_name(&self) -> String {
        "EnumType".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok("<enum 'ReduceOp'>".into())
    }
    fn getattr(&self, _this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        Ok(match name {
            "SUM" => Some(Value::native(ReduceOp::Sum)),
            "MEAN" => Some(Value::native(ReduceOp::Mean)),
            "__name__" => Some(Value::str("ReduceOp")),
            _ => None,
        })
    }
    fn call(&self, _this: &Value, args: crate::lang::Args, _ctx: &mut dyn Ctx) -> PyResult<Value> {
        let s = args.bind("ReduceOp", &["value"], 1)?;
        Ok(Value::native(ReduceOp::from_value(
            s[0].as_ref().unwrap_or(&Value::None),
        )?))
    }
    fn iter(&self, _this: &Value, _ctx: &mut dyn Ctx) -> PyResult<Value> {
        Ok(ItemIter::list(vec![
            Value::native(ReduceOp::Sum),
            Value::native(ReduceOp::Mean),
        ]))
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// What a function running on one replica sees through `tf.distribute.get_replica_context()`
/// (`value_context == false`) or `experimental_distribute_values_from_function`'s argument.
pub struct ReplicaContext {
    pub strategy: Value,
    pub replica: usize,
    pub replicas: usize,
    pub value_context: bool,
    /// The default strategy's context (outside every scope), whose replica id is a Python
    /// int; a strategy's replica sees its id as an int32 tensor, as in TF.
    pub default: bool,
}

impl Object for ReplicaContext {
    fn type_name(&self) -> String {
        if self.value_context {
            "ValueContext"
        } else if self.default {
            "_DefaultReplicaContext"
        } else {
            "_MirroredReplicaContext"
        }
        .into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(if self.value_context {
            format!(
                "tf.distribute.experimental.ValueContext(replica id {},  total replicas in sync: {})",
                self.replica, self.replicas
            )
        } else {
            format!(
                "<tensorflow.python.distribute.{} object at {}>",
                if self.default {
                    "distribute_lib._DefaultReplicaContext"
                } else {
                    "mirrored_run._MirroredReplicaContext"
                },
                address_of(self)
            )
        })
    }
    fn getattr(&self, _this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        Ok(match name {
            "replica_id_in_sync_group" if self.default || self.value_context => {
                Some(Value::Int(self.replica as i64))
            }
            "replica_id_in_sync_group" => Some(super::eager::wrap(ops::Tensor::scalar(
                self.replica as f64,
                crate::tensor::DType::I32,
            ))),
            "num_replicas_in_sync" => Some(Value::Int(self.replicas as i64)),
            "strategy" if !self.value_context => Some(self.strategy.clone()),
            "all_reduce" if !self.value_context => Some(NativeFn::value(
                "all_reduce",
                "Reduces `value` across replicas and returns the result on every replica.",
                super::merge::all_reduce,
            )),
            "merge_call" if !self.value_context => {
                let strategy = self.strategy.clone();
                Some(NativeFn::value(
                    "merge_call",
                    "Merges the replicas: calls `merge_fn(strategy, *args, **kwargs)` once in \
                     the cross-replica context.",
                    move |a, c| super::merge::merge_call(&strategy, a, c),
                ))
            }
            _ => None,
        })
    }
    fn dir(&self) -> Vec<String> {
        let mut names = vec!["num_replicas_in_sync", "replica_id_in_sync_group"];
        if !self.value_context {
            names.extend(["all_reduce", "merge_call", "strategy"]);
        }
        names.into_iter().map(String::from).collect()
    }
    fn class_chain(&self) -> Vec<String> {
        let mut chain = vec![self.type_name()];
        if !self.value_context {
            chain.push("ReplicaContext".into());
        }
        chain
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// Sums or averages per-replica tensors: element-wise across replicas, or with `axis`
/// over the replicas' values joined along that axis (the global batch), as TF does. The
/// arithmetic is the op library's, run in the session's context.
pub fn reduce_tensors(
    op: ReduceOp,
    parts: &[Value],
    axis: Option<Vec<i64>>,
    ctx: &mut dyn Ctx,
) -> PyResult<Value> {
    use crate::ops::{self, ReduceKind};
    let refs: Vec<&Value> = parts.iter().collect();
    let tensors = super::convert::matching(&refs, ctx)?;
    if tensors.is_empty() {
        return Err(super::TfError::Value("nothing to reduce".into()).into());
    }
    let kind = if op == ReduceOp::Sum {
        ReduceKind::Sum
    } else {
        ReduceKind::Mean
    };
    super::eager::apply(ctx, |e| match axis {
        Some(ax) => {
            let first = ax.first().copied().unwrap_or(0);
            let joined = if tensors[0].ndim() == 0 {
                ops::stack(e, &tensors, 0)?
            } else {
                ops::concat(e, &tensors, first)?
            };
            ops::reduce(e, &joined, kind, Some(ax), false)
        }
        None => {
            let total = ops::add_n(e, &tensors)?;
            if op == ReduceOp::Sum {
                return Ok(total);
            }
            // A mean of integers stays an integer, as TF keeps the values' dtype.
            let n = ops::Tensor::scalar(tensors.len() as f64, total.dtype());
            if total.dtype().is_float() {
                ops::div(e, &total, &n)
            } else {
                ops::binary(e, ops::Binary::FloorDiv, &total, &n)
            }
        }
    })
}

/// Sums or averages Python numbers, keeping ints for an integer SUM as TF keeps int dtypes.
pub fn reduce_numbers(op: ReduceOp, parts: &[Value]) -> PyResult<Value> {
    if parts.is_empty() {
        return Ok(Value::None);
    }
    let all_int = parts
        .iter()
        .all(|p| matches!(p, Value::Int(_) | Value::Bool(_)));
    if all_int && op == ReduceOp::Sum {
        let mut total: i64 = 0;
        for p in parts {
            total = total.wrapping_add(p.as_int()?);
        }
        return Ok(Value::Int(total));
    }
    let mut total = 0.0;
    for p in parts {
        total += p.as_float().map_err(|_| {
            super::TfError::Type(format!(
                "strategy.reduce cannot reduce values of type {}",
                p.type_name()
            ))
        })?;
    }
    Ok(Value::Float(match op {
        ReduceOp::Sum => total,
        ReduceOp::Mean => total / parts.len() as f64,
    }))
}

/// `tf.VariableAggregation`: how a mirrored variable combines the updates its replicas
/// make in a replica context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Aggregation {
    /// Each replica updates its own copy.
    None,
    Sum,
    Mean,
    OnlyFirstReplica,
}

impl Aggregation {
    const ALL: [Aggregation; 4] = [
        Aggregation::None,
        Aggregation::Sum,
        Aggregation::Mean,
        Aggregation::OnlyFirstReplica,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Aggregation::None => "NONE",
            Aggregation::Sum => "SUM",
            Aggregation::Mean => "MEAN",
            Aggregation::OnlyFirstReplica => "ONLY_FIRST_REPLICA",
        }
    }

    /// The aggregation a `tf.Variable(aggregation=...)` argument names (`None`: NONE).
    pub fn from_value(v: Option<&Value>) -> PyResult<Aggregation> {
        match v {
            None | Some(Value::None) => Ok(Aggregation::None),
            Some(v) => v.downcast::<Aggregation>().copied().ok_or_else(|| {
                PyErr::value_error(format!(
                    "Invalid variable aggregation mode: {} for variable: Variable",
                    v.type_name()
                ))
            }),
        }
    }
}

impl Object for Aggregation {
    fn type_name(&self) -> String {
        "VariableAggregationV2".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        let i = Aggregation::ALL.iter().position(|a| a == self).unwrap_or(0);
        Ok(format!("<VariableAggregationV2.{}: {i}>", self.name()))
    }
    fn str(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(format!("VariableAggregationV2.{}", self.name()))
    }
    fn getattr(&self, _this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        Ok(match name {
            "name" => Some(Value::str(self.name())),
            "value" => Some(Value::Int(
                Aggregation::ALL.iter().position(|a| a == self).unwrap_or(0) as i64,
            )),
            _ => None,
        })
    }
    fn compare(&self, op: CmpOp, other: &Value, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        let same = other.downcast::<Aggregation>().is_some_and(|o| o == self);
        Ok(match op {
            CmpOp::Eq => Some(Value::Bool(same)),
            CmpOp::Ne => Some(Value::Bool(!same)),
            _ => None,
        })
    }
    fn hash(&self) -> Option<u64> {
        Some(*self as u64 + 0xa99)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// The enum class `tf.VariableAggregation` itself.
pub struct AggregationEnum;

impl Object for AggregationEnum {
    fn type_name(&self) -> String {
        "EnumType".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok("<enum 'VariableAggregationV2'>".into())
    }
    fn getattr(&self, _this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        if name == "__name__" {
            return Ok(Some(Value::str("VariableAggregationV2")));
        }
        Ok(Aggregation::ALL
            .iter()
            .find(|a| a.name() == name)
            .map(|a| Value::native(*a)))
    }
    fn dir(&self) -> Vec<String> {
        Aggregation::ALL
            .iter()
            .map(|a| a.name().to_string())
            .collect()
    }
    fn iter(&self, _this: &Value, _ctx: &mut dyn Ctx) -> PyResult<Value> {
        Ok(ItemIter::list(
            Aggregation::ALL.iter().map(|a| Value::native(*a)).collect(),
        ))
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}
