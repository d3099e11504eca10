//! The objects the interpreter implements itself: functions and their frames, classes and
//! instances, bound methods, sets, ranges, slices, iterators and builtin types. They enter
//! values as `Value::Obj`; the evaluator recognises them by downcasting. Behaviour lives in
//! the evaluator; these are plain data with the `Object` basics.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::rc::Rc;

use indexmap::IndexMap;

use super::exc::PyResult;
use super::object::{Ctx, Object};
use super::value::{HashKey, Value};
use crate::lang::eval::vm::FastHash;
use crate::lang::syntax::ast::FuncDef;

/// A function call's local slots, linked to the frame it was defined in (for closures).
pub struct Frame {
    pub slots: RefCell<Vec<Option<Value>>>,
    pub parent: Option<Rc<Frame>>,
}

impl Frame {
    pub fn new(n: usize, parent: Option<Rc<Frame>>) -> Rc<Frame> {
        Rc::new(Frame {
            slots: RefCell::new(vec![None; n]),
            parent,
        })
    }
    pub fn up(self: &Rc<Frame>, depth: u32) -> Option<Rc<Frame>> {
        let mut f = self.clone();
        for _ in 0..depth {
            f = f.parent.clone()?;
        }
        Some(f)
    }
}

macro_rules! any_impl {
    () => {
        fn as_any(&self) -> &dyn Any {
            self
        }
    };
}

fn addr<T>(t: &T) -> u64 {
    t as *const T as usize as u64
}

pub struct Function {
    pub def: Rc<FuncDef>,
    /// One per parameter: the evaluated default, if any.
    pub defaults: Vec<Option<Value>>,
    pub closure: Option<Rc<Frame>>,
    pub qualname: String,
    pub attrs: RefCell<IndexMap<String, Value, FastHash>>,
    /// The class whose body defined this function, for zero-argument `super()`.
    pub owner: RefCell<Option<Value>>,
}

impl Object for Function {
    fn type_name(&self) -> String {
        "function".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(format!(
            "<function {} at 0x{:x}>",
            self.qualname,
            addr(self)
        ))
    }
    fn hash(&self) -> Option<u64> {
        Some(addr(self))
    }
    fn doc(&self) -> Option<String> {
        self.def.doc.clone()
    }
    any_impl!();
}

pub struct Class {
    pub name: String,
    pub module: String,
    pub base: Option<Value>,
    pub dict: RefCell<IndexMap<String, Value, FastHash>>,
    /// Builtin exception classes print as `<class 'ValueError'>`.
    pub builtin: bool,
    /// Whether `dict` has ever held a property (see `any_property`).
    pub properties: Cell<bool>,
}

impl Class {
    /// The class and its ancestors that are interpreter classes, most derived first.
    pub fn mro(self: &Class) -> Vec<&Class> {
        let mut out = vec![self];
        let mut cur = self;
        while let Some(b) = cur.base.as_ref().and_then(|b| b.downcast::<Class>()) {
            out.push(b);
            cur = b;
        }
        out
    }
    /// Whether this class or an ancestor has ever held a property: the one kind of class
    /// attribute that changes what `obj.name = value` does. Without one, setting an
    /// instance attribute skips looking the name up along the classes.
    pub fn any_property(&self) -> bool {
        let mut cur = self;
        loop {
            if cur.properties.get() {
                return true;
            }
            match cur.base.as_ref().and_then(|b| b.downcast::<Class>()) {
                Some(b) => cur = b,
                None => return false,
            }
        }
    }
    /// `name` in this class or its nearest ancestor defining it (walked without
    /// collecting the chain, since every method call looks up its method here).
    pub fn lookup(&self, name: &str) -> Option<Value> {
        let mut cur = self;
        loop {
            if let Some(v) = cur.dict.borrow().get(name) {
                return Some(v.clone());
            }
            cur = cur.base.as_ref().and_then(|b| b.downcast::<Class>())?;
        }
    }
    /// The first native class among the ancestors, if any.
    pub fn native_base(&self) -> Option<Value> {
        let last = *self.mro().last()?;
        match &last.base {
            Some(v @ Value::Native(_)) => Some(v.clone()),
            _ => None,
        }
    }
    pub fn is_subclass_of(&self, other: &Class) -> bool {
        self.mro().iter().any(|c| std::ptr::eq(*c, other))
    }
}

impl Object for Class {
    fn type_name(&self) -> String {
        "type".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(if self.builtin {
            format!("<class '{}'>", self.name)
        } else {
            format!("<class '{}.{}'>", self.module, self.name)
        })
    }
    fn hash(&self) -> Option<u64> {
        Some(addr(self))
    }
    fn dir(&self) -> Vec<String> {
        let mut v: Vec<String> = vec![];
        for c in self.mro() {
            v.extend(c.dict.borrow().keys().cloned());
        }
        v
    }
    fn doc(&self) -> Option<String> {
        match self.dict.borrow().get("__doc__") {
            Some(Value::Str(s)) => Some(s.to_string()),
            _ => None,
        }
    }
    any_impl!();
}

pub struct Instance {
    pub class: Value,
    pub attrs: RefCell<IndexMap<String, Value, FastHash>>,
}

// A chain of instances linked by an attribute (a linked list) is dropped through the
// trashcan, as nested lists are.
impl Drop for Instance {
    fn drop(&mut self) {
        let attrs = self.attrs.get_mut();
        if !attrs.is_empty() {
            super::trashcan::release(std::mem::take(attrs));
        }
    }
}

impl Instance {
    pub fn class(&self) -> Option<&Class> {
        self.class.downcast::<Class>()
    }
}

impl Object for Instance {
    fn type_name(&self) -> String {
        self.class().map(|c| c.name.clone()).unwrap_or_default()
    }
    fn hash(&self) -> Option<u64> {
        // A class that sets `__hash__ = None` (as a dataclass with `eq` does) makes its
        // instances unhashable, as in CPython.
        if let Some(Value::None) = self.class().and_then(|c| c.lookup("__hash__")) {
            return None;
        }
        Some(addr(self))
    }
    fn dir(&self) -> Vec<String> {
        let mut v: Vec<String> = self.attrs.borrow().keys().cloned().collect();
        if let Some(c) = self.class() {
            v.extend(c.dir());
        }
        v
    }
    fn class_chain(&self) -> Vec<String> {
        self.class()
            .map(|c| c.mro().iter().map(|c| c.name.clone()).collect())
            .unwrap_or_default()
    }
    any_impl!();
}

pub struct BoundMethod {
    pub func: Value,
    pub this: Value,
}

impl Object for BoundMethod {
    fn type_name(&self) -> String {
        "method".into()
    }
    fn hash(&self) -> Option<u64> {
        Some(addr(self))
    }
    any_impl!();
}

/// `set` and `frozenset`: insertion-ordered members keyed like dict keys.
pub struct Set {
    pub items: RefCell<IndexMap<HashKey, Value>>,
    pub frozen: bool,
}

impl Drop for Set {
    fn drop(&mut self) {
        let items = self.items.get_mut();
        if !items.is_empty() {
            super::trashcan::release(std::mem::take(items));
        }
    }
}

impl Set {
    pub fn value(items: IndexMap<HashKey, Value>, frozen: bool) -> Value {
        Value::Obj(Rc::new(Set {
            items: RefCell::new(items),
            frozen,
        }))
    }
}

impl Set {
    /// The members in the order CPython iterates them where that order is predictable:
    /// non-negative ints sit in the hash-table slot `value & mask`, so they come out by
    /// slot (sorted, for small values). Other members keep insertion order.
    pub fn ordered(&self) -> Vec<Value> {
        let items = self.items.borrow();
        let ints: Option<Vec<i64>> = items
            .values()
            .map(|v| match v {
                Value::Int(i) if *i >= 0 && *i < (1 << 61) => Some(*i),
                Value::Bool(b) => Some(*b as i64),
                _ => None,
            })
            .collect();
        let Some(ints) = ints else {
            return items.values().cloned().collect();
        };
        // Replay CPython's open addressing (hash = value for these ints): 8 slots to
        // start, nine linear probes then perturbed jumps, and growth when 3/5 full to
        // the smallest power of two above four times the members.
        let mut table: Vec<Option<usize>> = vec![None; 8];
        let mut used = 0usize;
        for (idx, v) in ints.iter().enumerate() {
            place(&mut table, *v as u64, idx);
            used += 1;
            let mask = table.len() - 1;
            if used * 5 >= mask * 3 {
                let want = if used > 50_000 { used * 2 } else { used * 4 };
                let mut size = 8;
                while size <= want {
                    size <<= 1;
                }
                let old = std::mem::replace(&mut table, vec![None; size]);
                for j in old.into_iter().flatten() {
                    place(&mut table, ints[j] as u64, j);
                }
            }
        }
        let vals: Vec<Value> = items.values().cloned().collect();
        table
            .into_iter()
            .flatten()
            .map(|i| vals[i].clone())
            .collect()
    }
}

/// Puts member `idx` with hash `h` where CPython's set would.
fn place(table: &mut [Option<usize>], h: u64, idx: usize) {
    let mask = table.len() - 1;
    let mut perturb = h;
    let mut i = (h as usize) & mask;
    loop {
        let probes = if i + 9 <= mask { 9 } else { 0 };
        for j in 0..=probes {
            if table[i + j].is_none() {
                table[i + j] = Some(idx);
                return;
            }
        }
        perturb >>= 5;
        i = (i
            .wrapping_mul(5)
            .wrapping_add(1)
            .wrapping_add(perturb as usize))
            & mask;
    }
}

impl Object for Set {
    fn type_name(&self) -> String {
        if self.frozen { "frozenset" } else { "set" }.into()
    }
    fn hash(&self) -> Option<u64> {
        if self.frozen {
            let mut h = 0u64;
            for k in self.items.borrow().keys() {
                use std::hash::{Hash, Hasher};
                let mut s = std::collections::hash_map::DefaultHasher::new();
                k.hash(&mut s);
                h ^= s.finish();
            }
            Some(h)
        } else {
            None
        }
    }
    any_impl!();
}

#[derive(Clone, Copy)]
pub struct Range {
    pub start: i64,
    pub stop: i64,
    pub step: i64,
}

impl Range {
    /// The number of values; a range longer than `i64::MAX` (only `range(-2**63, 2**63 - 1)`
    /// and its like) counts as `i64::MAX`, more than anything can hold.
    pub fn len(&self) -> i64 {
        let (start, stop, step) = (self.start as i128, self.stop as i128, self.step as i128);
        let n = if step > 0 && stop > start {
            (stop - start + step - 1) / step
        } else if step < 0 && start > stop {
            (start - stop - step - 1) / -step
        } else {
            0
        };
        i64::try_from(n).unwrap_or(i64::MAX)
    }
}

impl Object for Range {
    fn type_name(&self) -> String {
        "range".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(if self.step == 1 {
            format!("range({}, {})", self.start, self.stop)
        } else {
            format!("range({}, {}, {})", self.start, self.stop, self.step)
        })
    }
    fn hash(&self) -> Option<u64> {
        Some((self.start as u64) ^ ((self.stop as u64) << 7) ^ ((self.step as u64) << 13))
    }
    any_impl!();
}

pub struct Slice {
    pub lo: Value,
    pub hi: Value,
    pub step: Value,
}

impl Object for Slice {
    fn type_name(&self) -> String {
        "slice".into()
    }
    any_impl!();
}

/// An iterator over values already collected (lists, tuples, dict keys, generators).
pub struct SeqIter {
    pub items: Vec<Value>,
    pub pos: Cell<usize>,
}

impl SeqIter {
    pub fn value(items: Vec<Value>) -> Value {
        Value::Obj(Rc::new(SeqIter {
            items,
            pos: Cell::new(0),
        }))
    }
}

impl Object for SeqIter {
    fn type_name(&self) -> String {
        "iterator".into()
    }
    fn next(&self, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        let i = self.pos.get();
        self.pos.set(i + 1);
        Ok(self.items.get(i).cloned())
    }
    fn hash(&self) -> Option<u64> {
        Some(addr(self))
    }
    any_impl!();
}

/// `int`, `str`, `list`, ...: callable conversions that `isinstance` understands.
pub struct BuiltinType {
    pub name: &'static str,
}

impl Object for BuiltinType {
    fn type_name(&self) -> String {
        "type".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(format!("<class '{}'>", self.name))
    }
    fn hash(&self) -> Option<u64> {
        Some(addr(self))
    }
    any_impl!();
}

/// The `NotImplemented` and `Ellipsis` singletons.
pub struct Singleton(pub &'static str);

/// Python's `NotImplemented`, which a native binary dunder (a dataclass's `__eq__`)
/// returns to let the other operand answer.
pub fn not_implemented() -> Value {
    Value::Obj(Rc::new(Singleton("NotImplemented")))
}

/// The value under `name` in the class `cls`'s own namespace (`cls.__dict__[name]`, not a
/// base's), for natives that decorate classes as CPython's do (`dataclasses`); `None` when
/// `cls` is not a class made by a `class` statement or has no such entry.
pub fn class_own_attr(cls: &Value, name: &str) -> Option<Value> {
    cls.downcast::<Class>()?.dict.borrow().get(name).cloned()
}

/// The class `cls`'s own namespace, in definition order (empty for anything else).
pub fn class_own_items(cls: &Value) -> Vec<(String, Value)> {
    cls.downcast::<Class>()
        .map(|c| {
            c.dict
                .borrow()
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        })
        .unwrap_or_default()
}

/// Whether `v` is a class made by a `class` statement.
pub fn is_user_class(v: &Value) -> bool {
    v.downcast::<Class>().is_some()
}

/// Removes `name` from the class `cls`'s own namespace (`delattr(cls, name)`), as a
/// dataclass removes a field's `field(default_factory=...)` marker.
pub fn remove_class_attr(cls: &Value, name: &str) {
    if let Some(c) = cls.downcast::<Class>() {
        c.dict.borrow_mut().shift_remove(name);
    }
}

impl Object for Singleton {
    fn type_name(&self) -> String {
        if self.0 == "Ellipsis" {
            "ellipsis"
        } else {
            "NotImplementedType"
        }
        .into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(self.0.into())
    }
    fn hash(&self) -> Option<u64> {
        Some(addr(self))
    }
    any_impl!();
}

/// `dict.keys()`, `dict.values()`, `dict.items()`: live views over the dict.
pub struct DictView {
    pub dict: Rc<RefCell<super::value::Dict>>,
    /// "keys", "values" or "items".
    pub kind: &'static str,
}

impl DictView {
    pub fn values(&self) -> Vec<Value> {
        let d = self.dict.borrow();
        match self.kind {
            "keys" => d.items().map(|(k, _)| k.clone()).collect(),
            "values" => d.items().map(|(_, v)| v.clone()).collect(),
            _ => d
                .items()
                .map(|(k, v)| Value::tuple(vec![k.clone(), v.clone()]))
                .collect(),
        }
    }
}

impl Object for DictView {
    fn type_name(&self) -> String {
        format!("dict_{}", self.kind)
    }
    fn repr(&self, ctx: &mut dyn Ctx) -> PyResult<String> {
        let inner = ctx.repr(&Value::list(self.values()))?;
        Ok(format!("dict_{}({inner})", self.kind))
    }
    fn len(&self, _ctx: &mut dyn Ctx) -> PyResult<Option<usize>> {
        Ok(Some(self.dict.borrow().len()))
    }
    fn hash(&self) -> Option<u64> {
        None
    }
    any_impl!();
}
