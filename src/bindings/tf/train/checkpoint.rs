//! `tf.train.Checkpoint` and the status objects `restore` returns. A checkpoint holds named
//! trackables (`Checkpoint(model=model, optimizer=opt)`) and a `save_counter`;
//! `write(prefix)` saves every variable they reach (`graph.rs`) as the bundle at `prefix`,
//! `save(prefix)` counts and writes `prefix-N` and records it in the directory's
//! `checkpoint` state file, `restore(path)`/`read(path)` put the saved values back, now
//! into the variables that exist and later into those made after (`restore.rs`).

use std::any::Any;
use std::cell::RefCell;
use std::rc::Rc;

use indexmap::IndexMap;

use super::graph::{is_trackable, not_trackable, walk, Unbuilt, VALUE_SUFFIX};
use super::restore::{assign, defer_model, defer_optimizer, saved_value, Unresolved};
use super::state_file::{now, write_state, CheckpointState};
use crate::bindings::tf::convert::variable_of;
use crate::bindings::tf::variable::Variable;
use crate::bindings::tf::{address_of, bound, given};
use crate::keras::saving::bundle::{
    read_bundle, write_bundle, Entry, DATA_SUFFIX, NOT_A_BUNDLE, SHORT_DATA, TOO_SHORT,
};
use crate::keras::KerasError;
use crate::lang::{Args, Ctx, NativeClass, Object, PyErr, PyResult, Value};
use crate::tensor::{NdArray, Scalar};

/// One `tf.train.Checkpoint`.
pub struct CheckpointObj {
    objects: RefCell<IndexMap<String, Value>>,
    /// `save_counter`, made by the first `save`, `restore` or read of the attribute.
    save_counter: RefCell<Option<Value>>,
}

const SAVE_COUNTER: &str = "save_counter";

/// TensorFlow's words (and exception class) for a bundle that cannot be read.
pub fn bundle_error(e: KerasError) -> PyErr {
    match e {
        KerasError::NotFound(path) if path.ends_with(DATA_SUFFIX) => {
            PyErr::new("OpError", format!("{path}; No such file or directory"))
        }
        KerasError::NotFound(prefix) => PyErr::new(
            "NotFoundError",
            format!(
                "Error when restoring from checkpoint or SavedModel at {prefix}: Unsuccessful TensorSliceReader constructor: Failed to find any matching files for {prefix}\nPlease double-check that the path is correct. You may be missing the checkpoint suffix (e.g. the '-1' in 'path/to/ckpt-1')."
            ),
        ),
        KerasError::Corrupt { detail, .. } if detail == TOO_SHORT || detail == NOT_A_BUNDLE => {
            PyErr::new("OpError", detail)
        }
        KerasError::Corrupt { detail, .. } if detail == SHORT_DATA => {
            PyErr::new("IndexError", detail)
        }
        KerasError::Corrupt { detail, .. } => PyErr::new("DataLossError", detail),
        other => PyErr::new("OSError", other.to_string()),
    }
}

/// A path argument: a string, or an object whose `str` is one (`pathlib.Path`).
pub fn path_arg(v: &Value, ctx: &mut dyn Ctx) -> PyResult<String> {
    match v {
        Value::Str(s) => Ok(s.to_string()),
        other => ctx.str(other),
    }
}

impl CheckpointObj {
    /// The named objects, then `save_counter` once it exists.
    pub fn children(&self) -> Vec<(String, Value)> {
        let mut out: Vec<(String, Value)> = self
            .objects
            .borrow()
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if let Some(c) = self.save_counter.borrow().as_ref() {
            out.push((SAVE_COUNTER.into(), c.clone()));
        }
        out
    }

    fn counter(&self) -> Value {
        self.save_counter
            .borrow_mut()
            .get_or_insert_with(|| {
                Value::native(Variable::new(
                    NdArray::from_scalar(Scalar::I64(0)),
                    "save_counter:0",
                    false,
                ))
            })
            .clone()
    }

    /// The number of saves so far.
    pub fn count(&self) -> i64 {
        let c = self.counter();
        let v = c
            .downcast::<Variable>()
            .map(|v| v.snapshot().to_i64_vec().1);
        v.and_then(|x| x.first().copied()).unwrap_or(0)
    }

    /// Advances `save_counter` by one; returns its new value.
    pub fn bump(&self) -> PyResult<i64> {
        let n = self.count() + 1;
        if let Some(c) = self.counter().downcast::<Variable>() {
            c.store(NdArray::from_scalar(Scalar::I64(n)))?;
        }
        Ok(n)
    }

    /// `write(file_prefix)`: the bundle at `prefix`; returns the prefix.
    pub fn write(this: &Value, prefix: &str, ctx: &mut dyn Ctx) -> PyResult<String> {
        let g = walk(this, ctx)?;
        let mut entries = Vec::with_capacity(g.variables.len());
        for (key, v) in &g.variables {
            if let (Some(value), Some(var)) = (saved_value(v), variable_of(v)) {
                let name = var.name();
                entries.push(Entry {
                    key: key.clone(),
                    name: name.strip_suffix(":0").unwrap_or(name).to_string(),
                    value,
                });
            }
        }
        write_bundle(prefix, &entries).map_err(bundle_error)?;
        Ok(prefix.to_string())
    }

    /// `save(file_prefix)`: counts, writes `prefix-N` and records it as the latest in the
    /// directory's state file.
    pub fn save(&self, this: &Value, prefix: &str, ctx: &mut dyn Ctx) -> PyResult<String> {
        let n = self.bump()?;
        let path = format!("{prefix}-{n}");
        Self::write(this, &path, ctx)?;
        let dir = std::path::Path::new(&path)
            .parent()
            .map(|d| d.display().to_string())
            .unwrap_or_default();
        let dir = if dir.is_empty() { ".".into() } else { dir };
        let state = CheckpointState {
            latest: path.clone(),
            all: vec![path.clone()],
            timestamps: vec![now()],
            last_preserved: None,
        };
        write_state(&dir, &state).map_err(bundle_error)?;
        Ok(path)
    }

    /// `restore(save_path)` / `read(save_path)`: values into the variables that exist,
    /// deferred for those made later.
    pub fn restore(&self, this: &Value, path: &str, ctx: &mut dyn Ctx) -> PyResult<Value> {
        let saved = read_bundle(path).map_err(bundle_error)?;
        // The counter continues from the checkpoint's, as TF's does.
        let counter_key = format!("{SAVE_COUNTER}{VALUE_SUFFIX}");
        if saved.iter().any(|e| e.key == counter_key) {
            self.counter();
        }
        let g = walk(this, ctx)?;
        let mut unmatched_existing = vec![];
        let mut consumed = vec![false; saved.len()];
        for (key, v) in &g.variables {
            match saved.iter().position(|e| e.key == *key) {
                Some(i) => {
                    assign(key, v, &saved[i].value)?;
                    consumed[i] = true;
                }
                None => unmatched_existing.push(key.clone()),
            }
        }
        let unresolved: Unresolved = Rc::new(RefCell::new(
            saved
                .iter()
                .zip(&consumed)
                .filter(|(_, c)| !**c)
                .map(|(e, _)| (e.key.clone(), e.name.clone()))
                .collect(),
        ));
        for u in g.unbuilt {
            match u {
                Unbuilt::Model { prefix, name, have } => {
                    let values = positional(&saved, &consumed, &format!("{prefix}/_weights/"));
                    let values: Vec<_> =
                        values.into_iter().filter(|(i, _, _)| *i >= have).collect();
                    if !values.is_empty() {
                        defer_model(ctx, name, have, values, unresolved.clone());
                    }
                }
                Unbuilt::Optimizer { prefix, iterations } => {
                    let values = positional(&saved, &consumed, &format!("{prefix}/_variables/"));
                    if !values.is_empty() {
                        defer_optimizer(ctx, iterations, values, unresolved.clone());
                    }
                }
            }
        }
        Ok(Value::native(LoadStatus {
            kind: StatusKind::Load,
            unresolved,
            unmatched_existing,
        }))
    }
}

/// The saved values not yet taken whose keys are `base` + a position + the value suffix.
fn positional(saved: &[Entry], consumed: &[bool], base: &str) -> Vec<(usize, String, NdArray)> {
    saved
        .iter()
        .zip(consumed)
        .filter(|(_, c)| !**c)
        .filter_map(|(e, _)| {
            let i = e
                .key
                .strip_prefix(base)?
                .strip_suffix(VALUE_SUFFIX)?
                .parse()
                .ok()?;
            Some((i, e.key.clone(), e.value.clone()))
        })
        .collect()
}

fn path_of(args: &Args, func: &str, name: &str, ctx: &mut dyn Ctx) -> PyResult<Option<String>> {
    let s = args.bind(func, &[name, "options"], 1)?;
    match given(&s[0]) {
        Some(v) => path_arg(v, ctx).map(Some),
        None => Ok(None),
    }
}

impl Object for CheckpointObj {
    fn type_name(&self) -> String {
        "Checkpoint".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(format!(
            "<tensorflow.python.checkpoint.checkpoint.Checkpoint object at {}>",
            address_of(self)
        ))
    }
    fn getattr(&self, this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        if let Some(v) = self.objects.borrow().get(name) {
            return Ok(Some(v.clone()));
        }
        Ok(Some(match name {
            SAVE_COUNTER => self.counter(),
            "save" => bound::<CheckpointObj>(this, name, |c, this, args, ctx| {
                let p = path_of(args, "save", "file_prefix", ctx)?.unwrap_or_default();
                c.save(this, &p, ctx).map(Value::from)
            }),
            "write" => bound::<CheckpointObj>(this, name, |_, this, args, ctx| {
                let p = path_of(args, "write", "file_prefix", ctx)?.unwrap_or_default();
                CheckpointObj::write(this, &p, ctx).map(Value::from)
            }),
            "restore" | "read" => {
                let label: &'static str = if name == "read" { "read" } else { "restore" };
                bound::<CheckpointObj>(this, name, move |c, this, args, ctx| {
                    match path_of(args, label, "save_path", ctx)? {
                        Some(p) => c.restore(this, &p, ctx),
                        // TF: restoring `None` (no checkpoint yet) initializes, a no-op here.
                        None => Ok(Value::native(LoadStatus {
                            kind: StatusKind::InitializationOnly,
                            unresolved: Rc::default(),
                            unmatched_existing: vec![],
                        })),
                    }
                })
            }
            _ => return Ok(None),
        }))
    }
    fn setattr(&self, name: &str, v: Value, ctx: &mut dyn Ctx) -> PyResult<()> {
        if name == SAVE_COUNTER {
            return Err(PyErr::attribute_error(
                "property 'save_counter' of 'Checkpoint' object has no setter",
            ));
        }
        if !is_trackable(&v, ctx) {
            return Err(not_trackable(name, &v, ctx));
        }
        self.objects.borrow_mut().insert(name.to_string(), v);
        Ok(())
    }
    fn dir(&self) -> Vec<String> {
        let mut v: Vec<String> = self.objects.borrow().keys().cloned().collect();
        v.extend(
            [SAVE_COUNTER, "save", "write", "restore", "read"]
                .iter()
                .map(|s| s.to_string()),
        );
        v
    }
    fn class_chain(&self) -> Vec<String> {
        vec!["Checkpoint".into(), "AutoTrackable".into()]
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// `tf.train.Checkpoint(root=None, **kwargs)`.
pub fn class() -> Value {
    NativeClass::new(
        "Checkpoint",
        "tensorflow.python.checkpoint.checkpoint",
        "Checkpoint(root=None, **kwargs)\nGroups trackable objects, saving and restoring them.",
    )
    .constructor(|args, ctx| {
        let mut objects = IndexMap::new();
        let mut pos = args.pos.iter();
        if let Some(root) = pos.next() {
            if !root.is_none() {
                if !is_trackable(root, ctx) {
                    return Err(not_trackable("root", root, ctx));
                }
                objects.insert("root".to_string(), root.clone());
            }
        }
        if pos.next().is_some() {
            return Err(PyErr::type_error(format!(
                "Checkpoint.__init__() takes from 1 to 2 positional arguments but {} were given",
                args.pos.len() + 1
            )));
        }
        for (k, v) in &args.kw {
            if v.is_none() {
                continue;
            }
            if !is_trackable(v, ctx) {
                return Err(not_trackable(k, v, ctx));
            }
            objects.insert(k.clone(), v.clone());
        }
        Ok(Value::native(CheckpointObj {
            objects: RefCell::new(objects),
            save_counter: RefCell::new(None),
        }))
    })
    .into_value()
}

#[derive(Clone, Copy, PartialEq)]
enum StatusKind {
    Load,
    InitializationOnly,
}

/// What `restore` returns: which saved values found no variable (yet), and which
/// variables found no saved value.
pub struct LoadStatus {
    kind: StatusKind,
    unresolved: Unresolved,
    unmatched_existing: Vec<String>,
}

impl LoadStatus {
    fn check_consumed(&self) -> PyResult<()> {
        if self.kind == StatusKind::InitializationOnly {
            return Err(PyErr::new(
                "AssertionError",
                "No checkpoint specified (save_path=None); nothing is being restored.",
            ));
        }
        let left = self.unresolved.borrow();
        if let Some((key, name)) = left.first() {
            let object = key.strip_suffix(VALUE_SUFFIX).unwrap_or(key);
            return Err(PyErr::new(
                "AssertionError",
                format!(
                    "Unresolved object in checkpoint (root).{}: attributes {{\n  name: \"VARIABLE_VALUE\"\n  full_name: \"{name}\"\n  checkpoint_key: \"{key}\"\n}}\nhas_checkpoint_values {{\n  value: true\n}}\n",
                    object.replace('/', ".")
                ),
            ));
        }
        self.check_existing()
    }

    fn check_existing(&self) -> PyResult<()> {
        if self.kind == StatusKind::InitializationOnly {
            return Err(PyErr::new(
                "AssertionError",
                "No checkpoint specified (save_path=None); nothing is being restored.",
            ));
        }
        if !self.unmatched_existing.is_empty() {
            return Err(PyErr::new(
                "AssertionError",
                format!(
                    "Some objects had attributes which were not restored: {}",
                    self.unmatched_existing.join(", ")
                ),
            ));
        }
        Ok(())
    }
}

impl Object for LoadStatus {
    fn type_name(&self) -> String {
        match self.kind {
            StatusKind::Load => "CheckpointLoadStatus".into(),
            StatusKind::InitializationOnly => "InitializationOnlyStatus".into(),
        }
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(format!(
            "<tensorflow.python.checkpoint.checkpoint.{} object at {}>",
            self.type_name(),
            address_of(self)
        ))
    }
    fn getattr(&self, this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        Ok(Some(match name {
            "assert_consumed" => bound::<LoadStatus>(this, name, |s, this, _, _| {
                s.check_consumed().map(|_| this.clone())
            }),
            "assert_existing_objects_matched" => {
                bound::<LoadStatus>(this, name, |s, this, _, _| {
                    s.check_existing().map(|_| this.clone())
                })
            }
            // The status is the same object: TF's silences its warnings of unused values.
            "expect_partial" => bound::<LoadStatus>(this, name, |_, this, _, _| Ok(this.clone())),
            _ => return Ok(None),
        }))
    }
    fn dir(&self) -> Vec<String> {
        [
            "assert_consumed",
            "assert_existing_objects_matched",
            "expect_partial",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}
