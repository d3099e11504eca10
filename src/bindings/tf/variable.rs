//! `tf.Variable` (TF's ResourceVariable) and `MirroredVariable`: mutable arrays with
//! `assign`/`assign_add`/`assign_sub`, `read_value`, `numpy()` and TF's repr. A variable
//! created while a strategy's scope is active is mirrored: one copy per replica, every
//! assignment applied to all of them, printed as TF prints `MirroredVariable:{...}`.

use std::any::Any;
use std::cell::RefCell;
use std::rc::Rc;

use super::convert::{dtype_arg, tensor_value, to_array};
use super::distribute::{active_strategy, Strategy};
use super::tensor::{
    array_attr, array_binop, array_compare, array_getitem, array_iter, array_truthy, array_unary,
    numpy_text, shape_text,
};
use super::{bound, given, TfError};
use crate::lang::{Args, BinOp, CmpOp, Ctx, Object, PyResult, UnaryOp, Value};
use crate::tensor::ops::{binary, Operand};
use crate::tensor::{BinaryOp, NdArray};

/// One variable: shared storage (views returned by `assign` see the same values).
pub struct Variable {
    pub value: Rc<RefCell<NdArray>>,
    pub name: String,
    pub trainable: bool,
    /// The view `assign` returns, printed as TF's `UnreadVariable`.
    pub unread: bool,
}

impl Variable {
    pub fn new(a: NdArray, name: &str, trainable: bool) -> Variable {
        Variable {
            value: Rc::new(RefCell::new(a)),
            name: name.to_string(),
            trainable,
            unread: false,
        }
    }

    pub fn read(&self) -> NdArray {
        self.value.borrow().clone()
    }

    /// Stores `new` (cast to the variable's dtype) after TF's shape check.
    pub fn store(&self, new: NdArray) -> PyResult<()> {
        let (shape, dtype) = {
            let cur = self.value.borrow();
            (cur.shape().to_vec(), cur.dtype())
        };
        if new.shape() != shape.as_slice() {
            return Err(TfError::Value(format!(
                "Cannot assign value to variable ' {}': Shape mismatch.The variable shape {}, and \
                 the assigned value shape {} are incompatible.",
                self.name,
                crate::tensor::shape_str(&shape),
                crate::tensor::shape_str(new.shape())
            ))
            .into());
        }
        *self.value.borrow_mut() = new.astype(dtype);
        Ok(())
    }

    fn view(&self) -> Value {
        Value::native(Variable {
            value: self.value.clone(),
            name: self.name.clone(),
            trainable: self.trainable,
            unread: true,
        })
    }

    /// `assign`, `assign_add`, `assign_sub` with `op` combining the old value and `v`.
    fn update(&self, op: Option<BinaryOp>, v: &Value, ctx: &mut dyn Ctx) -> PyResult<()> {
        let dtype = self.value.borrow().dtype();
        let arg = to_array(v, Some(dtype), false, ctx)?;
        let new = match op {
            None => arg,
            Some(op) => {
                let cur = self.read();
                binary(Operand::Arr(&cur), Operand::Arr(&arg), op)
                    .map_err(super::convert::tensor_err)?
            }
        };
        self.store(new)
    }
}

fn update_method(
    op: Option<BinaryOp>,
    name: &'static str,
) -> impl Fn(&Variable, &Value, &Args, &mut dyn Ctx) -> PyResult<Value> {
    move |var, _, args, ctx| {
        let s = args.bind(name, &["value", "use_locking", "name", "read_value"], 1)?;
        var.update(op, s[0].as_ref().unwrap_or(&Value::None), ctx)?;
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
        let a = self.value.borrow();
        let name = if self.unread {
            "UnreadVariable"
        } else {
            &self.name
        };
        Ok(format!(
            "<tf.Variable '{name}' shape={} dtype={}, numpy={}>",
            shape_text(&a),
            a.dtype().name(),
            numpy_text(&a, true)
        ))
    }
    fn getattr(&self, this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        let a = self.read();
        if let Some(v) = array_attr::<Variable>(this, &a, name, |v| v.read()) {
            return Ok(Some(v));
        }
        Ok(Some(match name {
            "name" => Value::str(&self.name),
            "trainable" => Value::Bool(self.trainable),
            "assign" => bound::<Variable>(this, name, update_method(None, "assign")),
            "assign_add" => {
                bound::<Variable>(this, name, update_method(Some(BinaryOp::Add), "assign_add"))
            }
            "assign_sub" => {
                bound::<Variable>(this, name, update_method(Some(BinaryOp::Sub), "assign_sub"))
            }
            "read_value" | "value" => {
                bound::<Variable>(this, name, |v, _, _, _| Ok(tensor_value(v.read())))
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
        array_binop(&Rc::new(self.read()), op, other, reflected, ctx)
    }
    fn compare(&self, op: CmpOp, other: &Value, ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        array_compare(&Rc::new(self.read()), op, other, ctx)
    }
    fn unary(&self, op: UnaryOp, _ctx: &mut dyn Ctx) -> PyResult<Value> {
        array_unary(&self.read(), op)
    }
    fn truthy(&self, _ctx: &mut dyn Ctx) -> PyResult<Option<bool>> {
        array_truthy(&self.read())
    }
    fn getitem(&self, key: &Value, ctx: &mut dyn Ctx) -> PyResult<Value> {
        array_getitem(&self.read(), key, ctx)
    }
    fn iter(&self, _this: &Value, _ctx: &mut dyn Ctx) -> PyResult<Value> {
        array_iter(&self.read())
    }
    fn hash(&self) -> Option<u64> {
        Some(Rc::as_ptr(&self.value) as usize as u64)
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
        MirroredVariable { parts, strategy }
    }

    pub fn primary(&self) -> Option<&Variable> {
        self.parts.first().and_then(|p| p.downcast::<Variable>())
    }

    fn each(&self) -> impl Iterator<Item = &Variable> {
        self.parts.iter().filter_map(|p| p.downcast::<Variable>())
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
        let op = match name {
            "assign" => None,
            "assign_add" => Some(BinaryOp::Add),
            "assign_sub" => Some(BinaryOp::Sub),
            "values" => return Ok(Some(Value::tuple(self.parts.clone()))),
            "distribute_strategy" => return Ok(Some(self.strategy.clone())),
            _ => {
                return match self.parts.first() {
                    Some(Value::Native(p)) => p.clone().getattr(&self.parts[0], name, ctx),
                    _ => Ok(None),
                }
            }
        };
        let label: &'static str = match op {
            None => "assign",
            Some(BinaryOp::Add) => "assign_add",
            _ => "assign_sub",
        };
        Ok(Some(bound::<MirroredVariable>(
            this,
            name,
            move |m, this, args, ctx| {
                let s = args.bind(label, &["value", "use_locking", "name", "read_value"], 1)?;
                let v = s[0].clone().unwrap_or(Value::None);
                // One conversion, then the same update on every copy keeps them identical.
                for var in m.each() {
                    var.update(op, &v, ctx)?;
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
        match self.primary() {
            Some(p) => array_binop(&Rc::new(p.read()), op, other, reflected, ctx),
            None => Ok(None),
        }
    }
    fn compare(&self, op: CmpOp, other: &Value, ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        match self.primary() {
            Some(p) => array_compare(&Rc::new(p.read()), op, other, ctx),
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

/// A new variable: mirrored over the active strategy's replicas when one is in scope.
pub fn make_variable(ctx: &mut dyn Ctx, a: NdArray, name: &str, trainable: bool) -> Value {
    if let Some(s) = active_strategy(ctx) {
        let n = s.downcast::<Strategy>().map_or(1, |st| st.num_replicas());
        return Value::native(MirroredVariable::new(&a, name, n, trainable, s));
    }
    Value::native(Variable::new(a, &format!("{name}:0"), trainable))
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
        Value::Native(_) | Value::Obj(_) if super::convert::held_array(init).is_none() => {
            ctx.call(init, Args::default())?
        }
        other => other.clone(),
    };
    let dtype = dtype_arg(s[6].as_ref(), ctx)?;
    let a = to_array(&init, dtype, false, ctx)?;
    let trainable = given(&s[1]).map_or(Ok(true), |v| v.as_bool_strict())?;
    let name = match given(&s[4]) {
        Some(v) => v.as_str()?.to_string(),
        None => "Variable".to_string(),
    };
    super::config::initialize(ctx);
    Ok(make_variable(ctx, a, &name, trainable))
}
