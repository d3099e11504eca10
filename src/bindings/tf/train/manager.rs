//! `tf.train.CheckpointManager` and `tf.train.latest_checkpoint`. A manager numbers its
//! checkpoints with the checkpoint's `save_counter` (`DIR/ckpt-N`), keeps the newest
//! `max_to_keep` (deleting older ones' files), and records them in the directory's
//! `checkpoint` state file; a new manager on the same directory takes up the list the
//! state file records, as TensorFlow's does.

use std::any::Any;
use std::cell::RefCell;
use std::path::Path;

use super::checkpoint::{bundle_error, path_arg, CheckpointObj};
use super::state_file::{now, read_state, write_state, CheckpointState};
use crate::bindings::tf::{address_of, bound, given, TfError};
use crate::keras::saving::bundle::{bundle_exists, remove_bundle};
use crate::lang::{Args, Ctx, NativeClass, Object, PyErr, PyResult, Value};

/// `tf.train.latest_checkpoint(checkpoint_dir)`: the newest checkpoint the directory's state
/// file names, if its files exist; else `None`.
pub fn latest_checkpoint(dir: &str) -> Option<String> {
    let s = read_state(dir)?;
    bundle_exists(&s.latest).then_some(s.latest)
}

pub struct ManagerObj {
    checkpoint: Value,
    directory: String,
    prefix: String,
    max_to_keep: Option<usize>,
    /// Kept checkpoints, oldest first, with the time each was written.
    kept: RefCell<Vec<(String, f64)>>,
    latest: RefCell<Option<String>>,
    last_preserved: f64,
    /// Called by `restore_or_initialize` when there is no checkpoint to restore.
    init_fn: Option<Value>,
}

impl ManagerObj {
    fn save(&self, ctx: &mut dyn Ctx, number: Option<i64>) -> PyResult<String> {
        let Some(ck) = self.checkpoint.downcast::<CheckpointObj>() else {
            return Err(PyErr::type_error(
                "CheckpointManager needs a tf.train.Checkpoint",
            ));
        };
        // TF counts every save, also one numbered by the caller.
        let counted = ck.bump()?;
        let n = number.unwrap_or(counted);
        let path = format!("{}-{n}", self.prefix);
        CheckpointObj::write(&self.checkpoint, &path, ctx)?;
        {
            let mut kept = self.kept.borrow_mut();
            kept.retain(|(p, _)| *p != path);
            kept.push((path.clone(), now()));
            if let Some(max) = self.max_to_keep {
                while kept.len() > max {
                    let (old, _) = kept.remove(0);
                    remove_bundle(&old);
                }
            }
        }
        *self.latest.borrow_mut() = Some(path.clone());
        self.record()?;
        Ok(path)
    }

    fn record(&self) -> PyResult<()> {
        let kept = self.kept.borrow();
        let Some(latest) = self.latest.borrow().clone() else {
            return Ok(());
        };
        let state = CheckpointState {
            latest,
            all: kept.iter().map(|(p, _)| p.clone()).collect(),
            timestamps: kept.iter().map(|(_, t)| *t).collect(),
            last_preserved: Some(self.last_preserved),
        };
        write_state(&self.directory, &state).map_err(bundle_error)
    }

    fn checkpoints(&self) -> Value {
        Value::list(
            self.kept
                .borrow()
                .iter()
                .map(|(p, _)| Value::from(p.clone()))
                .collect(),
        )
    }
}

impl Object for ManagerObj {
    fn type_name(&self) -> String {
        "CheckpointManager".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(format!(
            "<tensorflow.python.checkpoint.checkpoint_management.CheckpointManager object at {}>",
            address_of(self)
        ))
    }
    fn getattr(&self, this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        Ok(Some(match name {
            "directory" => Value::from(self.directory.clone()),
            "checkpoints" => self.checkpoints(),
            "latest_checkpoint" => self
                .latest
                .borrow()
                .clone()
                .map_or(Value::None, Value::from),
            "checkpoint" => self.checkpoint.clone(),
            "save" => bound::<ManagerObj>(this, name, |m, _, args, ctx| {
                let s = args.bind(
                    "save",
                    &["checkpoint_number", "check_interval", "options"],
                    0,
                )?;
                let n = given(&s[0]).map(|v| v.as_int()).transpose()?;
                m.save(ctx, n).map(Value::from)
            }),
            "restore_or_initialize" => bound::<ManagerObj>(this, name, |m, _, _, ctx| {
                let Some(latest) = m.latest.borrow().clone() else {
                    if let Some(f) = &m.init_fn {
                        ctx.call(f, Args::default())?;
                    }
                    return Ok(Value::None);
                };
                let restore = ctx.getattr(&m.checkpoint, "restore")?;
                ctx.call(&restore, Args::new(vec![Value::from(latest.clone())]))?;
                Ok(Value::from(latest))
            }),
            _ => return Ok(None),
        }))
    }
    fn dir(&self) -> Vec<String> {
        [
            "directory",
            "checkpoints",
            "latest_checkpoint",
            "checkpoint",
            "save",
            "restore_or_initialize",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// `tf.train.CheckpointManager(checkpoint, directory, max_to_keep, ..., checkpoint_name='ckpt')`.
pub fn class() -> Value {
    NativeClass::new(
        "CheckpointManager",
        "tensorflow.python.checkpoint.checkpoint_management",
        "CheckpointManager(checkpoint, directory, max_to_keep, keep_checkpoint_every_n_hours=None, checkpoint_name='ckpt', step_counter=None, checkpoint_interval=None, init_fn=None)\nKeeps the newest checkpoints of a run.",
    )
    .constructor(|args, ctx| {
        let s = args.bind(
            "CheckpointManager",
            &[
                "checkpoint",
                "directory",
                "max_to_keep",
                "keep_checkpoint_every_n_hours",
                "checkpoint_name",
                "step_counter",
                "checkpoint_interval",
                "init_fn",
            ],
            3,
        )?;
        let checkpoint = s[0].clone().unwrap_or(Value::None);
        if checkpoint.downcast::<CheckpointObj>().is_none() {
            return Err(TfError::Type(format!(
                "CheckpointManager expects a tf.train.Checkpoint as `checkpoint`, got {}",
                checkpoint.type_name()
            ))
            .into());
        }
        let directory = path_arg(s[1].as_ref().unwrap_or(&Value::None), ctx)?;
        let max_to_keep = match given(&s[2]) {
            None => None,
            Some(v) => {
                let n = v.as_int()?;
                if n <= 0 {
                    return Err(TfError::Value(format!(
                        "Expected a positive integer or `None` for `max_to_keep`, got {n}."
                    ))
                    .into());
                }
                Some(n as usize)
            }
        };
        // Saving by time or by step interval is not built; refusing beats ignoring them.
        for (i, arg) in [
            (3, "keep_checkpoint_every_n_hours"),
            (5, "step_counter"),
            (6, "checkpoint_interval"),
        ] {
            if given(&s[i]).is_some() {
                return Err(TfError::NotImplemented(format!(
                    "CheckpointManager's `{arg}` is not supported by this kernel"
                ))
                .into());
            }
        }
        let name = match given(&s[4]) {
            Some(v) => path_arg(v, ctx)?,
            None => "ckpt".into(),
        };
        let prefix = Path::new(&directory).join(&name).display().to_string();
        let state = read_state(&directory);
        let (kept, latest) = match &state {
            Some(st) => {
                let mut times = st.timestamps.clone();
                times.resize(st.all.len(), now());
                (
                    st.all.iter().cloned().zip(times).collect(),
                    Some(st.latest.clone()),
                )
            }
            None => (vec![], None),
        };
        Ok(Value::native(ManagerObj {
            checkpoint,
            directory,
            prefix,
            max_to_keep,
            kept: RefCell::new(kept),
            latest: RefCell::new(latest),
            last_preserved: now(),
            init_fn: given(&s[7]).cloned(),
        }))
    })
    .into_value()
}
