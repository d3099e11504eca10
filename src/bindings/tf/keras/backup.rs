//! `tf.keras.callbacks.BackupAndRestore(backup_dir, save_freq='epoch',
//! double_checkpoint=False, delete_checkpoint=True)`, as Keras 3.15's: at the end of every
//! epoch (or every `save_freq` batches) it writes the model's weights with the optimizer's
//! state (`latest.weights.h5`) and the training position (`training_metadata.json`) into
//! `backup_dir`; when a `fit` starts and finds them (an earlier `fit` was interrupted), it
//! loads them and training continues from the saved epoch; a `fit` that ends normally
//! removes the folder. Writing goes through the model's own `save_weights`, like
//! `ModelCheckpoint`; restoring happens before the first epoch, through [`Rule::resume`],
//! because the weights must be in place before the engine takes the model.

use std::cell::RefCell;
use std::path::{Path, PathBuf};

use super::super::{func, given};
use super::callbacks::{CallbackObj, Kind};
use super::schedules::{epoch_and_logs, opt_bool, Rule};
use crate::lang::{Args, Ctx, NativeModule, PyErr, PyResult, Value};

/// When a backup is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SaveFreq {
    Epoch,
    /// Every this many batches (Keras accepts any int, `False` included, as `0`).
    Batches(i64),
}

/// Keras's counters: the epoch to resume from and the batches since the last backup.
#[derive(Debug, Default)]
struct Progress {
    current_epoch: i64,
    last_batch_seen: i64,
    batches_since_saving: i64,
}

struct BackupAndRestore {
    backup_dir: String,
    save_freq: SaveFreq,
    double_checkpoint: bool,
    delete_checkpoint: bool,
    st: RefCell<Progress>,
}

fn os_error(e: std::io::Error, path: &Path) -> PyErr {
    PyErr::new("OSError", format!("{e}: '{}'", path.display()))
}

impl BackupAndRestore {
    fn weights_path(&self) -> PathBuf {
        Path::new(&self.backup_dir).join("latest.weights.h5")
    }
    fn metadata_path(&self) -> PathBuf {
        Path::new(&self.backup_dir).join("training_metadata.json")
    }
    /// The copy `double_checkpoint` keeps of a file: its name with `.bkp` added.
    fn previous(path: &Path) -> PathBuf {
        let mut s = path.as_os_str().to_owned();
        s.push(".bkp");
        PathBuf::from(s)
    }

    /// Loads the backup into the model through `load` and reads the epoch to resume from.
    fn load(&self, load: &mut dyn FnMut(&str) -> PyResult<()>) -> PyResult<Option<usize>> {
        let weights = self.weights_path();
        if weights.exists() {
            load(&weights.to_string_lossy())?;
        }
        let meta = self.metadata_path();
        if !meta.exists() {
            return Ok(None);
        }
        let text = std::fs::read_to_string(&meta).map_err(|e| os_error(e, &meta))?;
        let epoch = serde_json::from_str::<serde_json::Value>(&text)
            .ok()
            .and_then(|v| v.get("epoch").and_then(serde_json::Value::as_i64))
            .ok_or_else(|| {
                PyErr::new(
                    "JSONDecodeError",
                    format!("no training epoch in {}", meta.display()),
                )
            })?;
        self.st.borrow_mut().current_epoch = epoch;
        Ok(Some(epoch.max(0) as usize))
    }

    /// Keras's `_save_model`: the folder, the previous backup kept aside when asked, the
    /// weights through the model's `save_weights`, then the position.
    fn save(&self, model: &Value, ctx: &mut dyn Ctx) -> PyResult<()> {
        let dir = Path::new(&self.backup_dir);
        std::fs::create_dir_all(dir).map_err(|e| os_error(e, dir))?;
        let (weights, meta) = (self.weights_path(), self.metadata_path());
        if self.double_checkpoint {
            for file in [&weights, &meta] {
                if file.exists() {
                    let to = Self::previous(file);
                    std::fs::copy(file, &to).map_err(|e| os_error(e, &to))?;
                }
            }
        }
        let f = ctx.getattr(model, "save_weights")?;
        let path = Value::from(weights.to_string_lossy().into_owned());
        ctx.call(
            &f,
            Args::new(vec![path]).with_kw("overwrite", Value::Bool(true)),
        )?;
        let st = self.st.borrow();
        // `json.dumps` of Keras's dict, keys in its order.
        let text = format!(
            "{{\"epoch\": {}, \"batch\": {}}}",
            st.current_epoch, st.last_batch_seen
        );
        let tmp = Self::previous(&meta).with_extension("tmp");
        std::fs::write(&tmp, text).map_err(|e| os_error(e, &tmp))?;
        std::fs::rename(&tmp, &meta).map_err(|e| os_error(e, &meta))
    }

    /// Keras's `_should_save_on_batch` (a batch index not past the last one seen starts a
    /// new epoch).
    fn due_on_batch(&self, batch: i64) -> bool {
        let SaveFreq::Batches(every) = self.save_freq else {
            return false;
        };
        let mut st = self.st.borrow_mut();
        let added = if batch <= st.last_batch_seen {
            batch + 1
        } else {
            batch - st.last_batch_seen
        };
        st.batches_since_saving += added;
        st.last_batch_seen = batch;
        if st.batches_since_saving >= every {
            st.batches_since_saving = 0;
            return true;
        }
        false
    }
}

impl Rule for BackupAndRestore {
    fn class_name(&self) -> &'static str {
        "BackupAndRestore"
    }
    fn module_path(&self) -> &'static str {
        "keras.src.callbacks.backup_and_restore"
    }
    /// Keras's `on_train_begin`: when the latest backup cannot be read and
    /// `double_checkpoint` kept the one before, that one is put back and loaded instead.
    fn resume(&self, load: &mut dyn FnMut(&str) -> PyResult<()>) -> PyResult<Option<usize>> {
        let err = match self.load(load) {
            Ok(epoch) => return Ok(epoch),
            // Keras falls back on an OSError; a damaged weights file is a ValueError here.
            Err(e) if matches!(e.0.type_name.as_str(), "OSError" | "ValueError") => e,
            Err(e) => return Err(e),
        };
        let (weights, meta) = (self.weights_path(), self.metadata_path());
        let (prev_weights, prev_meta) = (Self::previous(&weights), Self::previous(&meta));
        if !prev_weights.exists() {
            return Err(err);
        }
        std::fs::copy(&prev_weights, &weights).map_err(|e| os_error(e, &weights))?;
        if prev_meta.exists() {
            std::fs::copy(&prev_meta, &meta).map_err(|e| os_error(e, &meta))?;
        } else if meta.exists() {
            std::fs::remove_file(&meta).map_err(|e| os_error(e, &meta))?;
        }
        self.load(load)
    }
    fn hook(&self, name: &str, args: &Args, model: &Value, ctx: &mut dyn Ctx) -> PyResult<()> {
        match name {
            "on_epoch_end" => {
                let (epoch, _) = epoch_and_logs(args, name)?;
                {
                    let mut st = self.st.borrow_mut();
                    st.current_epoch = epoch + 1;
                    st.last_batch_seen = 0;
                }
                match self.save_freq {
                    SaveFreq::Epoch => self.save(model, ctx),
                    SaveFreq::Batches(_) => Ok(()),
                }
            }
            "on_train_batch_end" => {
                let s = args.bind(name, &["batch", "logs"], 1)?;
                let batch = s[0].as_ref().map_or(Ok(0), |v| v.as_int())?;
                if self.due_on_batch(batch) {
                    self.save(model, ctx)?;
                }
                Ok(())
            }
            "on_train_end" => {
                let dir = Path::new(&self.backup_dir);
                if self.delete_checkpoint && dir.exists() {
                    std::fs::remove_dir_all(dir).map_err(|e| os_error(e, dir))?;
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }
    fn reads_weights_per_batch(&self) -> bool {
        matches!(self.save_freq, SaveFreq::Batches(_))
    }
    fn attr(&self, name: &str) -> Option<Value> {
        Some(match name {
            "backup_dir" => Value::str(&self.backup_dir),
            "save_freq" => match self.save_freq {
                SaveFreq::Epoch => Value::str("epoch"),
                SaveFreq::Batches(n) => Value::Int(n),
            },
            "double_checkpoint" => Value::Bool(self.double_checkpoint),
            "delete_checkpoint" => Value::Bool(self.delete_checkpoint),
            _ => return None,
        })
    }
}

fn backup_and_restore(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind(
        "BackupAndRestore",
        &[
            "backup_dir",
            "save_freq",
            "double_checkpoint",
            "delete_checkpoint",
        ],
        1,
    )?;
    let backup_dir = match given(&s[0]) {
        Some(v) if ctx.truthy(v)? => ctx.str(v)?,
        _ => return Err(PyErr::value_error("Empty `backup_dir` argument passed")),
    };
    let save_freq = match given(&s[1]) {
        None => SaveFreq::Epoch,
        Some(Value::Str(t)) if &**t == "epoch" => SaveFreq::Epoch,
        Some(Value::Int(n)) => SaveFreq::Batches(*n),
        Some(Value::Bool(b)) => SaveFreq::Batches(i64::from(*b)),
        Some(other) => {
            let shown = ctx.str(other)?;
            return Err(PyErr::value_error(format!(
                "Invalid value for argument `save_freq`. Received: save_freq={shown}. \
                 Expected either 'epoch' or an integer value."
            )));
        }
    };
    let delete_checkpoint = match given(&s[3]) {
        None => true,
        Some(v) => ctx.truthy(v)?,
    };
    Ok(CallbackObj::value(Kind::Rule(Box::new(BackupAndRestore {
        backup_dir,
        save_freq,
        double_checkpoint: opt_bool(&s[2])?,
        delete_checkpoint,
        st: RefCell::new(Progress::default()),
    }))))
}

/// Registers the callback in `tf.keras.callbacks`.
pub fn register(m: &NativeModule) {
    m.set(
        "BackupAndRestore",
        func(
            "BackupAndRestore",
            "BackupAndRestore(backup_dir, save_freq='epoch', double_checkpoint=False, delete_checkpoint=True)",
            backup_and_restore,
        ),
    );
}
