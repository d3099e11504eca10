//! Python values. Small immutable values (None, bool, int, float) live inline; containers
//! and objects are reference-counted and shared, with interior mutability where Python
//! allows mutation. Values never cross threads: the interpreter is single-threaded, and
//! training threads work on engine types that bindings convert to and from.
//!
//! Natives (Rust objects implementing [`Object`]) enter as [`Value::Native`]; bindings
//! recover their own type with [`Value::downcast`].

use std::cell::RefCell;
use std::rc::Rc;

use indexmap::IndexMap;

use super::exc::{PyErr, PyResult};
use super::object::{BinOp, Ctx, Object};

// The tag is a full word so that every payload starts on an 8-byte boundary: with a
// one-byte tag, moving a value through `Option`/`Result` copied the bytes after the tag
// as odd-sized pieces, which stalled the CPU's store forwarding on every operand read.
// Values stay 24 bytes and `Option<Value>` and `PyResult<Value>` keep using the tag's niche.
#[repr(u64)]
pub enum Value {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(Rc<str>),
    List(Rc<ListItems>),
    Tuple(Rc<TupleItems>),
    Dict(Rc<RefCell<Dict>>),
    /// Python objects the interpreter implements itself (functions, classes, instances,
    /// sets, ranges, slices, modules, bound methods, ...): see `lang::runtime`.
    Obj(Rc<dyn Object>),
    /// Rust objects from the bindings (arrays, tensors, models, strategies, figures).
    Native(Rc<dyn Object>),
}

// Written out rather than derived so that it inlines: a clone is a copy or one
// reference-count increment, made several times per loop iteration.
impl Clone for Value {
    #[inline(always)]
    fn clone(&self) -> Value {
        match self {
            Value::None => Value::None,
            Value::Bool(b) => Value::Bool(*b),
            Value::Int(i) => Value::Int(*i),
            Value::Float(x) => Value::Float(*x),
            Value::Str(s) => Value::Str(Rc::clone(s)),
            Value::List(l) => Value::List(Rc::clone(l)),
            Value::Tuple(t) => Value::Tuple(Rc::clone(t)),
            Value::Dict(d) => Value::Dict(Rc::clone(d)),
            Value::Obj(o) => Value::Obj(Rc::clone(o)),
            Value::Native(o) => Value::Native(Rc::clone(o)),
        }
    }
}

impl std::fmt::Debug for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::None => write!(f, "None"),
            Value::Bool(b) => write!(f, "{}", if *b { "True" } else { "False" }),
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) => write!(f, "{x:?}"),
            Value::Str(s) => write!(f, "{s:?}"),
            // Items are shown a bounded number of levels deep: a value may nest a million
            // deep or contain itself.
            Value::List(l) => {
                debug_nested(f, |f| f.debug_list().entries(l.borrow().iter()).finish())
            }
            Value::Tuple(t) => debug_nested(f, |f| f.debug_tuple("").field(&&t[..]).finish()),
            Value::Dict(d) => write!(f, "<dict of {}>", d.borrow().len()),
            Value::Obj(o) | Value::Native(o) => write!(f, "<{}>", o.type_name()),
        }
    }
}

/// Runs a container's debug print one level deeper, or prints `...` past 32 levels.
fn debug_nested(
    f: &mut std::fmt::Formatter<'_>,
    items: impl FnOnce(&mut std::fmt::Formatter<'_>) -> std::fmt::Result,
) -> std::fmt::Result {
    thread_local! {
        static DEPTH: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
    }
    let depth = DEPTH.get();
    if depth >= 32 {
        return write!(f, "...");
    }
    DEPTH.set(depth + 1);
    let r = items(f);
    DEPTH.set(depth);
    r
}

impl Value {
    pub fn native<T: Object>(obj: T) -> Value {
        Value::Native(Rc::new(obj))
    }

    pub fn str(s: &str) -> Value {
        Value::Str(Rc::from(s))
    }

    pub fn list(items: Vec<Value>) -> Value {
        Value::List(Rc::new(ListItems(RefCell::new(items))))
    }

    pub fn tuple(items: Vec<Value>) -> Value {
        Value::Tuple(TupleItems::rc(items))
    }

    /// A dict from string keys, in the given order.
    pub fn dict_from(pairs: Vec<(&str, Value)>) -> Value {
        let mut d = Dict::default();
        for (k, v) in pairs {
            d.insert_str(k, v);
        }
        Value::Dict(Rc::new(RefCell::new(d)))
    }

    pub fn is_none(&self) -> bool {
        matches!(self, Value::None)
    }

    /// The native object of type `T` inside this value, if it is one.
    pub fn downcast<T: Object>(&self) -> Option<&T> {
        match self {
            Value::Native(o) | Value::Obj(o) => o.as_any().downcast_ref::<T>(),
            _ => None,
        }
    }

    /// `type(v).__name__` for the inline and container kinds; objects answer themselves.
    pub fn type_name(&self) -> String {
        match self {
            Value::None => "NoneType".into(),
            Value::Bool(_) => "bool".into(),
            Value::Int(_) => "int".into(),
            Value::Float(_) => "float".into(),
            Value::Str(_) => "str".into(),
            Value::List(_) => "list".into(),
            Value::Tuple(_) => "tuple".into(),
            Value::Dict(_) => "dict".into(),
            Value::Obj(o) | Value::Native(o) => o.type_name(),
        }
    }

    /// An `int` (or bool) argument, as `operator.index` accepts it.
    pub fn as_int(&self) -> PyResult<i64> {
        match self {
            Value::Int(i) => Ok(*i),
            Value::Bool(b) => Ok(*b as i64),
            other => Err(PyErr::type_error(format!(
                "'{}' object cannot be interpreted as an integer",
                other.type_name()
            ))),
        }
    }

    /// A real number argument (int, bool or float).
    pub fn as_float(&self) -> PyResult<f64> {
        match self {
            Value::Int(i) => Ok(*i as f64),
            Value::Bool(b) => Ok(*b as i64 as f64),
            Value::Float(x) => Ok(*x),
            other => Err(PyErr::type_error(format!(
                "must be real number, not {}",
                other.type_name()
            ))),
        }
    }

    pub fn as_str(&self) -> PyResult<&str> {
        match self {
            Value::Str(s) => Ok(s),
            other => Err(PyErr::type_error(format!(
                "expected str, got {}",
                other.type_name()
            ))),
        }
    }

    pub fn as_bool_strict(&self) -> PyResult<bool> {
        match self {
            Value::Bool(b) => Ok(*b),
            Value::Int(i) => Ok(*i != 0),
            other => Err(PyErr::type_error(format!(
                "expected bool, got {}",
                other.type_name()
            ))),
        }
    }

    /// The items of a list or tuple (natives and other iterables go through `Ctx::iterate`).
    pub fn as_seq(&self) -> Option<Vec<Value>> {
        match self {
            Value::List(l) => Some(l.borrow().clone()),
            Value::Tuple(t) => Some(t.to_vec()),
            _ => None,
        }
    }

    /// Identity, as `is` compares.
    pub fn is(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::None, Value::None) => true,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Int(a), Value::Int(b)) => a == b,
            (Value::Float(a), Value::Float(b)) => a.to_bits() == b.to_bits(),
            (Value::Str(a), Value::Str(b)) => Rc::ptr_eq(a, b),
            (Value::List(a), Value::List(b)) => Rc::ptr_eq(a, b),
            (Value::Tuple(a), Value::Tuple(b)) => Rc::ptr_eq(a, b),
            (Value::Dict(a), Value::Dict(b)) => Rc::ptr_eq(a, b),
            (Value::Obj(a), Value::Obj(b)) | (Value::Native(a), Value::Native(b)) => {
                std::ptr::addr_eq(Rc::as_ptr(a), Rc::as_ptr(b))
            }
            _ => false,
        }
    }
}

impl From<i64> for Value {
    fn from(v: i64) -> Value {
        Value::Int(v)
    }
}
impl From<usize> for Value {
    fn from(v: usize) -> Value {
        Value::Int(v as i64)
    }
}
impl From<f64> for Value {
    fn from(v: f64) -> Value {
        Value::Float(v)
    }
}
impl From<bool> for Value {
    fn from(v: bool) -> Value {
        Value::Bool(v)
    }
}
impl From<&str> for Value {
    fn from(v: &str) -> Value {
        Value::str(v)
    }
}
impl From<String> for Value {
    fn from(v: String) -> Value {
        Value::Str(Rc::from(v.as_str()))
    }
}

/// A list's items. When the last reference goes, the items are dropped through the
/// trashcan (see `trashcan`), so a list nested millions deep does not overflow the stack.
#[derive(Default)]
pub struct ListItems(RefCell<Vec<Value>>);

impl std::ops::Deref for ListItems {
    type Target = RefCell<Vec<Value>>;
    #[inline(always)]
    fn deref(&self) -> &RefCell<Vec<Value>> {
        &self.0
    }
}

impl Drop for ListItems {
    fn drop(&mut self) {
        super::trashcan::release(std::mem::take(self.0.get_mut()));
    }
}

/// A tuple's items, in one allocation with the reference counts as `Rc<[Value]>` has
/// them, dropped through the trashcan like a list's.
#[repr(transparent)]
pub struct TupleItems([Value]);

impl TupleItems {
    fn rc(items: Vec<Value>) -> Rc<TupleItems> {
        let rc: Rc<[Value]> = Rc::from(items);
        // SAFETY: `TupleItems` is `repr(transparent)` over `[Value]`, so the two have the
        // same layout and pointer metadata; std converts `Rc<OsStr>` to `Rc<Path>` alike.
        unsafe { Rc::from_raw(Rc::into_raw(rc) as *const TupleItems) }
    }
}

impl std::ops::Deref for TupleItems {
    type Target = [Value];
    #[inline(always)]
    fn deref(&self) -> &[Value] {
        &self.0
    }
}

impl Drop for TupleItems {
    fn drop(&mut self) {
        super::trashcan::release_each(&mut self.0);
    }
}

/// A hashable form of a dict key. Equal Python keys map to equal `HashKey`s (`1`, `1.0` and
/// `True` are one key, as in Python).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum HashKey {
    None,
    Int(i64),
    /// Floats that are not integral, by their bits.
    Float(u64),
    Str(Rc<str>),
    Tuple(Vec<HashKey>),
    /// Objects hashed by their `Object::hash` (identity for plain objects).
    Obj(u64),
}

impl HashKey {
    /// The key for `v`, or Python's `TypeError: unhashable type` error. Tuples nest at
    /// most the recursion limit deep (`RecursionError` beyond), so neither this nor the
    /// key's own hashing and dropping recurses without bound.
    pub fn of(v: &Value) -> PyResult<HashKey> {
        Self::of_at(v, 0)
    }

    fn of_at(v: &Value, depth: usize) -> PyResult<HashKey> {
        Ok(match v {
            Value::None => HashKey::None,
            Value::Bool(b) => HashKey::Int(*b as i64),
            Value::Int(i) => HashKey::Int(*i),
            Value::Float(x) => {
                if x.fract() == 0.0 && x.abs() < 9.2e18 {
                    HashKey::Int(*x as i64)
                } else {
                    HashKey::Float(x.to_bits())
                }
            }
            Value::Str(s) => HashKey::Str(s.clone()),
            Value::Tuple(t) => {
                if depth >= crate::lang::eval::vm::RECURSION_LIMIT {
                    return Err(crate::lang::eval::recursion::recursion_error(
                        " while calling a Python object",
                    ));
                }
                HashKey::Tuple(
                    t.iter()
                        .map(|x| HashKey::of_at(x, depth + 1))
                        .collect::<PyResult<_>>()?,
                )
            }
            Value::Obj(o) | Value::Native(o) => match o.hash() {
                Some(h) => HashKey::Obj(h),
                None => {
                    return Err(PyErr::type_error(format!(
                        "unhashable type: '{}'",
                        o.type_name()
                    )))
                }
            },
            other => {
                return Err(PyErr::type_error(format!(
                    "unhashable type: '{}'",
                    other.type_name()
                )))
            }
        })
    }
}

/// A Python dict: insertion-ordered, keyed by [`HashKey`], keeping the original key value.
#[derive(Debug, Default)]
pub struct Dict {
    pub map: IndexMap<HashKey, (Value, Value), crate::lang::eval::vm::FastHash>,
    /// The dict subclass this dict is an instance of (`collections.Counter`, ...), which the
    /// bindings define; `None` for a plain dict.
    pub kind: Option<Rc<dyn DictKind>>,
}

/// What a dict subclass from the bindings adds to a dict, which stays a dict everywhere
/// else (`isinstance(d, dict)`, `json.dumps`, iteration, `len`, `in`): CPython's
/// `__missing__` hook, its repr, its own methods and operators.
pub trait DictKind: std::fmt::Debug {
    /// The class name, as `isinstance` against the binding's class compares it.
    fn type_name(&self) -> &str;
    /// `d[key]` for a key `d` lacks, as `__missing__`; `Ok(None)` raises the KeyError.
    fn missing(&self, this: &Value, key: &Value, ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        let _ = (this, key, ctx);
        Ok(None)
    }
    fn repr(&self, this: &Value, ctx: &mut dyn Ctx) -> PyResult<String>;
    /// The attributes the subclass adds or overrides; `Ok(None)` falls back to dict's.
    fn getattr(&self, this: &Value, name: &str, ctx: &mut dyn Ctx) -> PyResult<Option<Value>>;
    /// The names `getattr` adds, for `dir()` and completion.
    fn dir(&self) -> Vec<String>;
    /// `this op other` (`other op this` when `reflected`); `Ok(None)` falls back to dict's.
    fn binop(
        &self,
        op: BinOp,
        this: &Value,
        other: &Value,
        reflected: bool,
        ctx: &mut dyn Ctx,
    ) -> PyResult<Option<Value>> {
        let _ = (op, this, other, reflected, ctx);
        Ok(None)
    }
}

// A copy made by the interpreter (`dict(d)`, `d | e`, `d.copy()`) is a plain dict, as
// CPython's are; a subclass copies itself through its own `copy`.
impl Clone for Dict {
    fn clone(&self) -> Dict {
        Dict {
            map: self.map.clone(),
            kind: None,
        }
    }
}

impl Drop for Dict {
    fn drop(&mut self) {
        if !self.map.is_empty() {
            super::trashcan::release(std::mem::take(&mut self.map));
        }
    }
}

impl Dict {
    pub fn len(&self) -> usize {
        self.map.len()
    }
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
    pub fn insert(&mut self, k: Value, v: Value) -> PyResult<()> {
        let h = HashKey::of(&k)?;
        match self.map.get_mut(&h) {
            // Python keeps the first key object and replaces only the value.
            Some(slot) => slot.1 = v,
            None => {
                super::memory::map_room_for_one(&mut self.map)?;
                self.map.insert(h, (k, v));
            }
        }
        Ok(())
    }
    pub fn insert_str(&mut self, k: &str, v: Value) {
        let key = Value::str(k);
        self.map.insert(HashKey::Str(Rc::from(k)), (key, v));
    }
    pub fn get(&self, k: &Value) -> PyResult<Option<Value>> {
        Ok(self.map.get(&HashKey::of(k)?).map(|(_, v)| v.clone()))
    }
    pub fn get_str(&self, k: &str) -> Option<Value> {
        self.map
            .get(&HashKey::Str(Rc::from(k)))
            .map(|(_, v)| v.clone())
    }
    pub fn remove(&mut self, k: &Value) -> PyResult<Option<Value>> {
        Ok(self.map.shift_remove(&HashKey::of(k)?).map(|(_, v)| v))
    }
    pub fn items(&self) -> impl Iterator<Item = (&Value, &Value)> {
        self.map.values().map(|(k, v)| (k, v))
    }
    /// The subclass of `v` when it is a dict made by one.
    pub fn kind_of(v: &Value) -> Option<Rc<dyn DictKind>> {
        match v {
            Value::Dict(d) => d.borrow().kind.clone(),
            _ => None,
        }
    }
}
