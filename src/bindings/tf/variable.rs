//! `tf.Variable` (TF's ResourceVariable) and `MirroredVariable`. A `tf.Variable` wraps an
//! op-library [`Variable`](crate::ops::Variable) (a handle with shared storage); reads for
//! arithmetic, indexing and `read_value` go through the session's execution context, so
//! a gradient tape watches trainable variables as they are read, and `assign`,
//! `assign_add`, `assign_sub` run as the context's (non-differentiable) assignments.
//! Printing and `numpy()` read the stored value without a tape seeing it. A variable
//! created while a strategy's scope is active is mirrored: one copy per replica, an
//! assignment outside a replica applied to all of them, one inside a replica's function
//! combined by its `tf.VariableAggregation`, printed as TF prints `MirroredVariable:{...}`.

use std::any::Any;

use super::convert::{dtype_arg, to_array};
use super::distribute::{active_strategy, Strategy};
use super::eager::{context, op_err, run, wrap};
use super::tensor::{
    array_attr, array_truthy, numpy_text, shape_text, tensor_binop, tensor_compare, tensor_getitem,
    tensor_iter, tensor_unary,
};
use super::values::Aggregation;
use super::{bound, given, TfError};
use crate::lang::{Args, BinOp, CmpOp, Ctx, Object, PyResult, UnaryOp, Value};
use crate::ops::{self, Assign};
use crate::tensor::NdArray;

/// One variable.
pub struct Variable {
    pub var: ops::Variable,
    /// The view `assign` returns, printed as TF's `UnreadVariable`.
    pub unread: bool,
}

impl Variable {
    pub fn new(a: NdArray, name: &str, trainable: bool) -> Variable {
        Variable {
            var: ops::Variable::new(a, name, trainable),
            unread: false,
        }
    }

    /// The stored value, unseen by tapes.
    pub fn snapshot(&self) -> NdArray {
        (*self.var.snapshot()).clone()
    }

    /// A read through the execution context: what arithmetic on the variable uses.
    pub fn read(&self, ctx: &mut dyn Ctx) -> ops::Tensor {
        context(ctx).read(&self.var)
    }

    /// Stores `new` (cast to the variable's dtype) after TF's shape check.
    pub fn store(&self, new: NdArray) -> PyResult<()> {
        self.var.store(new.astype(self.var.dtype())).map_err(op_err)
    }

    fn view(&self) -> Value {
        Value::native(Variable {
            var: self.var.clone(),
            unread: true,
        })
    }

    /// `assign`, `assign_add`, `assign_sub`: `v` converted to the variable's dtype.
    fn update(&self, how: Assign, v: &Value, ctx: &mut dyn Ctx) -> PyResult<()> {
        // A tensor of the variable's dtype is assigned as itself, so a graph recorder sees
        // which computation the value came from.
        let value = match v.downcast::<super::tensor::Tensor>() {
            Some(t) if t.tensor.dtype() == self.var.dtype() => t.tensor.clone(),
            Some(t) => {
                let t = t.tensor.clone();
                let d = self.var.dtype();
                run(ctx, |e| ops::cast(e, &t, d))?
            }
            None => ops::Tensor::new(to_array(v, Some(self.var.dtype()), false, ctx)?),
        };
        run(ctx, |e| e.assign(&self.var, how, &value))
    }
}

fn assign_kind(name: &str) -> Option<Assign> {
    match name {
        "assign" => Some(Assign::Set),
        "assign_add" => Some(Assign::Add),
        "assign_sub" => Some(Assign::Sub),
        _ => None,
    }
}

fn update_method(
    how: Assign,
    name: &'static str,
) -> impl Fn(&Variable, &Value, &Args, &mut dyn Ctx) -> PyResult<Value> {
    move |var, _, args, ctx| {
        let s = args.bind(name, &["value", "use_locking", "name", "read_value"], 1)?;
        var.update(how, s[0].as_ref().unwrap_or(&Value::None), ctx)?;
        Ok(match given(&s[3]) {
            Some(Value::Bool(false)) => Value::None,
            _ => var.view(),
        })
    }
}

impl Object for Variable {
    fn type_name(&self) -> String {
        "ResourceVariable".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        let a = self.var.snapshot();
        let name = if self.unread {
            "UnreadVariable"
        } else {
            self.var.name()
        };
        Ok(format!(
            "<tf.Variable '{name}' shape={} dtype={}, numpy={}>",
            shape_text(&a),
            a.dtype().name(),
            numpy_text(&a, true)
        ))
    }
    fn getattr(&self, this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        let a = self.var.snapshot();
        if let Some(v) = array_attr::<Variable>(this, &a, name, |v| v.snapshot()) {
            return Ok(Some(v));
        }
        if let Some(how) = assign_kind(name) {
            let label: &'static str = match how {
                Assign::Set => "assign",
                Assign::Add => "assign_add",
                Assign::Sub => "assign_sub",
            };
            return Ok(Some(bound::<Variable>(
                this,
                name,
                update_method(how, label),
            )));
        }
        Ok(Some(match name {
            "name" => Value::str(self.var.name()),
            "trainable" => Value::Bool(self.var.trainable()),
            "read_value" | "value" => {
                bound::<Variable>(this, name, |v, _, _, ctx| Ok(wrap(v.read(ctx))))
            }
            _ => return Ok(None),
        }))
    }
    fn binop(
        &self,
        op: BinOp,
        other: &Value,
        reflected: bool,
        ctx: &mut dyn Ctx,
    ) -> PyResult<Option<Value>> {
        let t = self.read(ctx);
        tensor_binop(t, op, other, reflected, ctx)
    }
    fn compare(&self, op: CmpOp, other: &Value, ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        let t = self.read(ctx);
        tensor_compare(t, op, other, ctx)
    }
    fn unary(&self, op: UnaryOp, ctx: &mut dyn Ctx) -> PyResult<Value> {
        let t = self.read(ctx);
        tensor_unary(t, op, ctx)
    }
    fn truthy(&self, _ctx: &mut dyn Ctx) -> PyResult<Option<bool>> {
        array_truthy(&self.var.snapshot())
    }
    fn getitem(&self, key: &Value, ctx: &mut dyn Ctx) -> PyResult<Value> {
        let t = self.read(ctx);
        tensor_getitem(t, key, ctx)
    }
    fn iter(&self, _this: &Value, ctx: &mut dyn Ctx) -> PyResult<Value> {
        let t = self.read(ctx);
        tensor_iter(t, ctx)
    }
    fn hash(&self) -> Option<u64> {
        Some(self.var.handle().raw())
    }
    fn class_chain(&self) -> Vec<String> {
        vec!["ResourceVariable".into(), "Variable".into()]
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// A variable with one copy per replica of the strategy that made it.
pub struct MirroredVariable {
    pub parts: Vec<Value>,
    pub strategy: Value,
    /// How the replicas' updates in a replica context combine (`tf.VariableAggregation`).
    pub aggregation: Aggregation,
}

impl MirroredVariable {
    /// Copies of `a`, named as TF names replica copies (`Variable:0`, `Variable/replica_1:0`).
    pub fn new(
        a: &NdArray,
        base: &str,
        replicas: usize,
        trainable: bool,
        strategy: Value,
    ) -> MirroredVariable {
        let parts = (0..replicas.max(1))
            .map(|r| {
                let name = if r == 0 {
                    format!("{base}:0")
                } else {
                    format!("{base}/replica_{r}:0")
                };
                Value::native(Variable::new(a.clone(), &name, trainable))
            })
            .collect();
        MirroredVariable {
            parts,
            strategy,
            aggregation: Aggregation::None,
        }
    }

    pub fn primary(&self) -> Option<&Variable> {
        self.parts.first().and_then(|p| p.downcast::<Variable>())
    }

    fn each(&self) -> impl Iterator<Item = &Variable> {
        self.parts.iter().filter_map(|p| p.downcast::<Variable>())
    }

    /// An update made in replica `r`'s function, as TF combines it by the variable's
    /// aggregation: NONE updates that replica's copy only; ONLY_FIRST_REPLICA applies the
    /// first replica's value to every copy; SUM and MEAN wait for every replica's value
    /// (a collective call, see `merge::collective`) and apply their sum or mean to
    /// every copy. A Python number is the same value on every replica, which TF refuses
    /// to SUM.
    fn update_in_replica(
        &self,
        r: usize,
        how: Assign,
        v: &Value,
        ctx: &mut dyn Ctx,
    ) -> PyResult<()> {
        use super::merge::{collective, Collective};
        match self.aggregation {
            Aggregation::None => {
                if let Some(var) = self.parts.get(r).and_then(|p| p.downcast::<Variable>()) {
                    var.update(how, v, ctx)?;
                }
                Ok(())
            }
            Aggregation::OnlyFirstReplica => {
                if r == 0 {
                    for var in self.each() {
                        var.update(how, v, ctx)?;
                    }
                }
                Ok(())
            }
            Aggregation::Sum | Aggregation::Mean => {
                let plain = !super::convert::holds_array(v)
                    || matches!(v, Value::Int(_) | Value::Float(_) | Value::Bool(_));
                if plain && self.aggregation == Aggregation::Sum && self.parts.len() > 1 {
                    let shown = ctx.repr(v)?;
                    return Err(TfError::Value(format!(
                        "A non-DistributedValues value {shown} cannot be reduced with the \
                         given reduce op ReduceOp.SUM."
                    ))
                    .into());
                }
                let Some(first) = self.primary() else {
                    return Ok(());
                };
                let dtype = first.var.dtype();
                let t = match v.downcast::<super::tensor::Tensor>() {
                    Some(x) if x.tensor.dtype() == dtype => x.tensor.clone(),
                    Some(x) => {
                        let x = x.tensor.clone();
                        run(ctx, |e| ops::cast(e, &x, dtype))?
                    }
                    None => ops::Tensor::new(to_array(v, Some(dtype), false, ctx)?),
                };
                let parts = match collective(ctx, vec![Some(t)])? {
                    Collective::Waiting => return Ok(()),
                    Collective::Ready(parts) => parts,
                    Collective::Alone => {
                        for var in self.each() {
                            var.update(how, v, ctx)?;
                        }
                        return Ok(());
                    }
                };
                super::distribute::cross_replica(ctx, |ctx| self.apply_reduced(how, &parts, ctx))
            }
        }
    }

    /// The SUM or MEAN of every replica's part of an update, applied to every copy.
    fn apply_reduced(
        &self,
        how: Assign,
        parts: &[Vec<Option<ops::Tensor>>],
        ctx: &mut dyn Ctx,
    ) -> PyResult<()> {
        use super::distribute::sum_parts;
        let n = parts.len();
        let mean = self.aggregation == Aggregation::Mean;
        let total = run(ctx, |e| {
            let total = sum_parts(e, parts)?.into_iter().flatten().next();
            match total {
                Some(t) if mean => {
                    let n = ops::Tensor::scalar(n as f64, t.dtype());
                    ops::div(e, &t, &n).map(Some)
                }
                other => Ok(other),
            }
        })?;
        if let Some(t) = total {
            let value = wrap(t);
            for var in self.each() {
                var.update(how, &value, ctx)?;
            }
        }
        Ok(())
    }

    /// A read of the copy the running code sees: the running replica's inside a replica's
    /// function, else the first.
    fn read(&self, ctx: &mut dyn Ctx) -> Option<ops::Tensor> {
        let r = super::distribute::running_replica(ctx).unwrap_or(0);
        let part = self.parts.get(r).or(self.parts.first());
        part.and_then(|p| p.downcast::<Variable>())
            .map(|p| p.read(ctx))
    }
}

impl Object for MirroredVariable {
    fn type_name(&self) -> String {
        "MirroredVariable".into()
    }
    fn repr(&self, ctx: &mut dyn Ctx) -> PyResult<String> {
        let mut lines = vec![];
        for (i, p) in self.parts.iter().enumerate() {
            lines.push(format!("  {i}: {}", ctx.repr(p)?));
        }
        Ok(format!("MirroredVariable:{{\n{}\n}}", lines.join(",\n")))
    }
    fn getattr(&self, this: &Value, name: &str, ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        let Some(how) = assign_kind(name) else {
            return match name {
                "values" => Ok(Some(Value::tuple(self.parts.clone()))),
                "distribute_strategy" => Ok(Some(self.strategy.clone())),
                _ => match self.parts.first() {
                    Some(Value::Native(p)) => p.clone().getattr(&self.parts[0], name, ctx),
                    _ => Ok(None),
                },
            };
        };
        let label: &'static str = match how {
            Assign::Set => "assign",
            Assign::Add => "assign_add",
            Assign::Sub => "assign_sub",
        };
        Ok(Some(bound::<MirroredVariable>(
            this,
            name,
            move |m, this, args, ctx| {
                let s = args.bind(label, &["value", "use_locking", "name", "read_value"], 1)?;
                let v = s[0].clone().unwrap_or(Value::None);
                if let Some(r) = super::distribute::running_replica(ctx) {
                    m.update_in_replica(r, how, &v, ctx)?;
                    return Ok(this.clone());
                }
                // Outside a replica, the same update on every copy keeps them identical.
                for var in m.each() {
                    var.update(how, &v, ctx)?;
                }
                Ok(this.clone())
            },
        )))
    }
    fn binop(
        &self,
        op: BinOp,
        other: &Value,
        reflected: bool,
        ctx: &mut dyn Ctx,
    ) -> PyResult<Option<Value>> {
        match self.read(ctx) {
            Some(t) => tensor_binop(t, op, other, reflected, ctx),
            None => Ok(None),
        }
    }
    fn compare(&self, op: CmpOp, other: &Value, ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        match self.read(ctx) {
            Some(t) => tensor_compare(t, op, other, ctx),
            None => Ok(None),
        }
    }
    fn class_chain(&self) -> Vec<String> {
        vec![
            "MirroredVariable".into(),
            "DistributedVariable".into(),
            "Variable".into(),
        ]
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// A new variable: mirrored over the active strategy's replicas when one is in scope (or
/// `strategy.run` is running, where the replicas share the one the first replica makes).
pub fn make_variable(ctx: &mut dyn Ctx, a: NdArray, name: &str, trainable: bool) -> Value {
    make_aggregated(ctx, a, name, trainable, Aggregation::None)
}

/// [`make_variable`] with the aggregation a mirrored variable's replica updates use.
fn make_aggregated(
    ctx: &mut dyn Ctx,
    a: NdArray,
    name: &str,
    trainable: bool,
    aggregation: Aggregation,
) -> Value {
    super::distribute::shared_variable(ctx, move |ctx| {
        if let Some(s) = active_strategy(ctx) {
            let n = s.downcast::<Strategy>().map_or(1, |st| st.num_replicas());
            let mut m = MirroredVariable::new(&a, name, n, trainable, s);
            m.aggregation = aggregation;
            return Value::native(m);
        }
        Value::native(Variable::new(a, &format!("{name}:0"), trainable))
    })
}

/// Every replica's copy of a mirrored variable (also behind a Keras variable); `None` for
/// a variable that is not mirrored.
pub fn mirrored_copies(v: &Value) -> Option<Vec<ops::Variable>> {
    let inner = match v.downcast::<super::keras::variable::KerasVariable>() {
        Some(k) => &k.value,
        None => v,
    };
    let m = inner.downcast::<MirroredVariable>()?;
    Some(m.each().map(|x| x.var.clone()).collect())
}

/// `tf.Variable(initial_value, trainable=True, name=None, dtype=None, shape=None)`.
pub fn variable_ctor(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind(
        "Variable",
        &[
            "initial_value",
            "trainable",
            "validate_shape",
            "caching_device",
            "name",
            "variable_def",
            "dtype",
            "import_scope",
            "constraint",
            "synchronization",
            "aggregation",
            "shape",
        ],
        0,
    )?;
    let Some(init) = given(&s[0]) else {
        return Err(TfError::Value("initial_value must be specified.".into()).into());
    };
    let init = match init {
        Value::Native(_) | Value::Obj(_) if !super::convert::holds_array(init) => {
            ctx.call(init, Args::default())?
        }
        other => other.clone(),
    };
    let dtype = dtype_arg(s[6].as_ref(), ctx)?;
    // An initial value is read once, when the variable is made (a traced function makes
    // its variables on the first call only), so reading it is no value read of a trace.
    let a = match init.downcast::<super::tensor::Tensor>() {
        Some(t) => {
            let a = t.tensor.value();
            dtype.map_or_else(|| a.clone(), |d| a.astype(d))
        }
        None => to_array(&init, dtype, false, ctx)?,
    };
    let trainable = given(&s[1]).map_or(Ok(true), |v| v.as_bool_strict())?;
    let name = match given(&s[4]) {
        Some(v) => v.as_str()?.to_string(),
        None => "Variable".to_string(),
    };
    let name = format!("{}{name}", super::module::scope_prefix(ctx));
    super::config::initialize(ctx);
    let aggregation = Aggregation::from_value(given(&s[10]))?;
    let v = make_aggregated(ctx, a, &name, trainable, aggregation);
    if let Some(var) = super::convert::variable_of(&v) {
        super::function::trace::variable_created(ctx, &var)?;
    }
    Ok(v)
}
