//! Python `Enum` classes whose members are fixed names and values, as TensorFlow declares
//! several (`tf.distribute.experimental.CommunicationImplementation`,
//! `tf.data.experimental.AutoShardPolicy`): the class (`<enum 'Name'>`, attribute access,
//! iteration in declaration order, lookup by value) and its members (`Name.MEMBER`,
//! `<Name.MEMBER: value>`, `.name`, `.value`, equality by identity of name). It owns no
//! meaning: the code that reads a member asks [`member_of`] which one it is.

use std::any::Any;

use crate::bindings::common::ItemIter;
use crate::lang::{Args, CmpOp, Ctx, Object, PyErr, PyResult, Value};

/// A member's value: TF's enums hold strings or integers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnumValue {
    Str(&'static str),
    Int(i64),
}

impl EnumValue {
    fn value(self) -> Value {
        match self {
            EnumValue::Str(s) => Value::str(s),
            EnumValue::Int(i) => Value::Int(i),
        }
    }
    fn repr(self) -> String {
        match self {
            EnumValue::Str(s) => format!("'{s}'"),
            EnumValue::Int(i) => i.to_string(),
        }
    }
}

/// An enum class: its name and its members in declaration order.
#[derive(Debug, Clone, Copy)]
pub struct EnumClass {
    pub name: &'static str,
    pub members: &'static [(&'static str, EnumValue)],
}

/// One member of an [`EnumClass`].
#[derive(Debug, Clone, Copy)]
pub struct EnumMember {
    pub class: EnumClass,
    pub name: &'static str,
    pub value: EnumValue,
}

impl EnumClass {
    /// The member called `name`, as a value.
    pub fn member(self, name: &str) -> Option<Value> {
        self.members
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(name, value)| {
                Value::native(EnumMember {
                    class: self,
                    name,
                    value: *value,
                })
            })
    }
    fn all(self) -> Vec<Value> {
        self.members
            .iter()
            .filter_map(|(n, _)| self.member(n))
            .collect()
    }
}

/// The name of the member of `class` that `v` is, if it is one.
pub fn member_of(v: &Value, class: &EnumClass) -> Option<&'static str> {
    v.downcast::<EnumMember>()
        .filter(|m| m.class.name == class.name)
        .map(|m| m.name)
}

impl Object for EnumMember {
    fn type_name(&self) -> String {
        self.class.name.into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(format!(
            "<{}.{}: {}>",
            self.class.name,
            self.name,
            self.value.repr()
        ))
    }
    fn str(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(format!("{}.{}", self.class.name, self.name))
    }
    fn getattr(&self, _this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        Ok(match name {
            "name" => Some(Value::str(self.name)),
            "value" => Some(self.value.value()),
            _ => None,
        })
    }
    fn dir(&self) -> Vec<String> {
        vec!["name".into(), "value".into()]
    }
    fn compare(&self, op: CmpOp, other: &Value, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        let same = member_of(other, &self.class) == Some(self.name);
        Ok(match op {
            CmpOp::Eq => Some(Value::Bool(same)),
            CmpOp::Ne => Some(Value::Bool(!same)),
            _ => None,
        })
    }
    fn hash(&self) -> Option<u64> {
        Some(
            self.class
                .name
                .bytes()
                .chain(self.name.bytes())
                .fold(0xcbf2_9ce4_8422_2325, |h, b| {
                    (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
                }),
        )
    }
    fn class_chain(&self) -> Vec<String> {
        vec![self.class.name.into(), "Enum".into()]
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl Object for EnumClass {
    fn type_name(&self) -> String {
        "EnumType".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(format!("<enum '{}'>", self.name))
    }
    fn getattr(&self, _this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        if name == "__name__" {
            return Ok(Some(Value::str(self.name)));
        }
        Ok(self.member(name))
    }
    fn dir(&self) -> Vec<String> {
        self.members.iter().map(|(n, _)| n.to_string()).collect()
    }
    fn iter(&self, _this: &Value, _ctx: &mut dyn Ctx) -> PyResult<Value> {
        Ok(ItemIter::list(self.all()))
    }
    fn len(&self, _ctx: &mut dyn Ctx) -> PyResult<Option<usize>> {
        Ok(Some(self.members.len()))
    }
    /// `Name(value)`: the member holding `value`, else Python's `ValueError`.
    fn call(&self, _this: &Value, args: Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
        let s = args.bind(self.name, &["value"], 1)?;
        let v = s[0].clone().unwrap_or(Value::None);
        if v.downcast::<EnumMember>().is_some() && member_of(&v, self).is_some() {
            return Ok(v);
        }
        let found = self.members.iter().find(|(_, m)| match (m, &v) {
            (EnumValue::Str(a), Value::Str(b)) => **a == **b,
            (EnumValue::Int(a), Value::Int(b)) => a == b,
            _ => false,
        });
        match found {
            Some((name, _)) => self
                .member(name)
                .ok_or_else(|| PyErr::value_error(format!("no member {name}"))),
            None => Err(PyErr::value_error(format!(
                "{} is not a valid {}",
                ctx.repr(&v)?,
                self.name
            ))),
        }
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}
