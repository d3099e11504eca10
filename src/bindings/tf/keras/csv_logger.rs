//! `CSVLogger`: one row per epoch in a CSV file, as Keras 3.15 writes it through Python's
//! `csv.DictWriter` with the excel dialect: an `epoch` column then the logged keys sorted
//! (with `val_` twins filled with `NA` when the first epoch logged no validation values),
//! numbers as Python's `str` shows them, fields quoted only when they hold the separator, a
//! quote or a line break, and rows ended by `\r\n`. With `append=True` it adds to the file
//! and writes the header only when the file was empty. It owns its open file and nothing
//! of the model.

use std::cell::RefCell;
use std::fs::{File, OpenOptions};
use std::io::Write;

use super::super::{func, given};
use super::callbacks::{CallbackObj, Kind};
use super::schedules::{epoch_and_logs, opt_bool, Rule};
use crate::bindings::stdlib::io_err;
use crate::lang::float_repr;
use crate::lang::{Args, Ctx, NativeModule, PyErr, PyResult, Value};

struct CsvState {
    file: Option<File>,
    keys: Option<Vec<String>>,
    append_header: bool,
}

struct CsvLogger {
    filename: String,
    sep: String,
    append: bool,
    st: RefCell<CsvState>,
}

impl CsvLogger {
    /// One field as the excel dialect writes it (QUOTE_MINIMAL).
    fn field(&self, text: &str) -> String {
        let needs = text.contains(self.sep.as_str())
            || text.contains('"')
            || text.contains('\r')
            || text.contains('\n');
        if needs {
            format!("\"{}\"", text.replace('"', "\"\""))
        } else {
            text.to_string()
        }
    }

    fn row(&self, fields: &[String]) -> String {
        let cells: Vec<String> = fields.iter().map(|f| self.field(f)).collect();
        format!("{}\r\n", cells.join(&self.sep))
    }

    fn train_begin(&self) -> PyResult<()> {
        let path = &self.filename;
        let mut st = self.st.borrow_mut();
        let file = if self.append {
            if let Ok(text) = std::fs::read_to_string(path) {
                st.append_header = text.is_empty();
            }
            OpenOptions::new().append(true).create(true).open(path)
        } else {
            File::create(path)
        };
        st.file = Some(file.map_err(|e| io_err(e, path))?);
        st.keys = None;
        Ok(())
    }

    fn epoch_end(&self, epoch: i64, logs: &Option<Value>, ctx: &mut dyn Ctx) -> PyResult<()> {
        let mut entries: Vec<(String, Value)> = vec![];
        if let Some(Value::Dict(d)) = logs {
            for (k, v) in d.borrow().items() {
                entries.push((ctx.str(k)?, v.clone()));
            }
        }
        let mut text = String::new();
        let keys = {
            let mut st = self.st.borrow_mut();
            if st.keys.is_none() {
                // Python's csv module refuses the separator when the writer is made.
                if self.sep.chars().count() != 1 {
                    return Err(PyErr::type_error(
                        "\"delimiter\" must be a 1-character string",
                    ));
                }
                let mut keys: Vec<String> = entries.iter().map(|(k, _)| k.clone()).collect();
                keys.sort();
                if !keys.is_empty() && !keys.iter().any(|k| k.starts_with("val_")) {
                    let twins: Vec<String> = keys.iter().map(|k| format!("val_{k}")).collect();
                    keys.extend(twins);
                }
                let mut header = vec!["epoch".to_string()];
                header.extend(keys.iter().cloned());
                if st.append_header {
                    text.push_str(&self.row(&header));
                }
                st.keys = Some(keys);
            }
            st.keys.clone().unwrap_or_default()
        };
        let mut fields = vec![epoch.to_string()];
        for k in &keys {
            fields.push(match entries.iter().find(|(n, _)| n == k) {
                None => "NA".to_string(),
                Some((_, Value::Float(x))) => float_repr(*x),
                Some((_, v)) => ctx.str(v)?,
            });
        }
        text.push_str(&self.row(&fields));
        let mut st = self.st.borrow_mut();
        let Some(file) = st.file.as_mut() else {
            return Err(PyErr::value_error("I/O operation on closed file."));
        };
        file.write_all(text.as_bytes())
            .and_then(|()| file.flush())
            .map_err(|e| io_err(e, &self.filename))
    }
}

impl Rule for CsvLogger {
    fn class_name(&self) -> &'static str {
        "CSVLogger"
    }
    fn module_path(&self) -> &'static str {
        "keras.src.callbacks.csv_logger"
    }
    fn hook(&self, name: &str, args: &Args, _model: &Value, ctx: &mut dyn Ctx) -> PyResult<()> {
        match name {
            "on_train_begin" => self.train_begin(),
            "on_epoch_end" => {
                let (epoch, logs) = epoch_and_logs(args, name)?;
                self.epoch_end(epoch, &logs, ctx)
            }
            "on_train_end" => {
                self.st.borrow_mut().file = None;
                Ok(())
            }
            _ => Ok(()),
        }
    }
    fn attr(&self, name: &str) -> Option<Value> {
        Some(match name {
            "filename" => Value::str(&self.filename),
            "sep" => Value::str(&self.sep),
            "append" => Value::Bool(self.append),
            "keys" => match &self.st.borrow().keys {
                Some(k) => Value::list(k.iter().map(|s| Value::str(s)).collect()),
                None => Value::None,
            },
            _ => return None,
        })
    }
}

fn csv_logger(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind("CSVLogger", &["filename", "separator", "append"], 1)?;
    let filename = match given(&s[0]) {
        Some(v) => ctx.str(v)?,
        None => String::new(),
    };
    let sep = match given(&s[1]) {
        Some(v) => v.as_str()?.to_string(),
        None => ",".to_string(),
    };
    Ok(CallbackObj::value(Kind::Rule(Box::new(CsvLogger {
        filename,
        sep,
        append: opt_bool(&s[2])?,
        st: RefCell::new(CsvState {
            file: None,
            keys: None,
            append_header: true,
        }),
    }))))
}

/// Registers `CSVLogger` in `tf.keras.callbacks`.
pub fn register(m: &NativeModule) {
    m.set(
        "CSVLogger",
        func(
            "CSVLogger",
            "CSVLogger(filename, separator=',', append=False)",
            csv_logger,
        ),
    );
}
