//! `keras.callbacks.ModelCheckpoint`: saves the model (or only its weights) at the end of
//! each epoch, or only when the monitored value improves, to a path formatted from the
//! epoch number and the logs with Python's format mini-language (`{epoch:02d}`,
//! `{val_loss:.2f}`), as Keras does.

use super::callbacks::{Callback, Mode};
use super::error::{KResult, KerasError};
use super::fit::Logs;
use super::saving::{save_model, save_weights, SavedModel};
use super::trainer::Trainer;
use std::path::PathBuf;

pub struct ModelCheckpoint {
    pub filepath: String,
    pub monitor: String,
    pub save_best_only: bool,
    pub save_weights_only: bool,
    pub mode: Mode,
    best: f64,
    /// Paths written so far, for the "Epoch N: saving model to ..." lines.
    pub saved: Vec<PathBuf>,
}

impl ModelCheckpoint {
    /// Checks the extension as Keras's constructor does.
    pub fn new(
        filepath: &str,
        monitor: &str,
        save_best_only: bool,
        save_weights_only: bool,
    ) -> KResult<ModelCheckpoint> {
        if save_weights_only && !filepath.ends_with(".weights.h5") {
            return Err(KerasError::Path(format!(
                "When using `save_weights_only=True` in `ModelCheckpoint`, the filepath provided must end in `.weights.h5` (Keras weights format). Received: filepath={filepath}"
            )));
        }
        if !save_weights_only && !filepath.ends_with(".keras") {
            return Err(KerasError::Path(format!(
                "The filepath provided must end in `.keras` (Keras model format). Received: filepath={filepath}"
            )));
        }
        let mode = Mode::auto(monitor);
        Ok(ModelCheckpoint {
            filepath: filepath.to_string(),
            monitor: monitor.to_string(),
            save_best_only,
            save_weights_only,
            mode,
            best: match mode {
                Mode::Min => f64::INFINITY,
                Mode::Max => f64::NEG_INFINITY,
            },
            saved: vec![],
        })
    }
}

impl Callback for ModelCheckpoint {
    fn on_epoch_end(
        &mut self,
        epoch: usize,
        logs: &mut Logs,
        model: &mut dyn Trainer,
    ) -> KResult<bool> {
        if self.save_best_only {
            let Some(&current) = logs.get(&self.monitor) else {
                return Ok(false);
            };
            let better = match self.mode {
                Mode::Min => current < self.best,
                Mode::Max => current > self.best,
            };
            if !better {
                return Ok(false);
            }
            self.best = current;
        }
        // Keras formats with the 1-based epoch number.
        let path = PathBuf::from(format_path(&self.filepath, epoch + 1, logs)?);
        if self.save_weights_only {
            save_weights(&path, model.config(), &model.get_weights()?)?;
        } else {
            save_model(&path, &SavedModel::from_trainer(model)?)?;
        }
        self.saved.push(path);
        Ok(false)
    }
}

/// Formats `{name}` / `{name:spec}` fields from `epoch` and `logs`; `{{` and `}}` escape.
pub fn format_path(template: &str, epoch: usize, logs: &Logs) -> KResult<String> {
    let mut out = String::new();
    let mut chars = template.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                out.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                out.push('}');
            }
            '{' => {
                let field: String = chars.by_ref().take_while(|c| *c != '}').collect();
                let (name, spec) = field.split_once(':').unwrap_or((&field, ""));
                let value = if name == "epoch" {
                    epoch as f64
                } else {
                    *logs.get(name).ok_or_else(|| {
                        KerasError::Value(format!(
                            "Failed to format this callback filepath: \"{template}\". Reason: '{name}'"
                        ))
                    })?
                };
                out.push_str(&format_number(value, spec, name == "epoch"));
            }
            c => out.push(c),
        }
    }
    Ok(out)
}

/// A subset of Python's format specs: `[0][width][.precision](d|f|e)`.
fn format_number(v: f64, spec: &str, integer: bool) -> String {
    let (body, kind) = match spec.chars().last() {
        Some(k @ ('d' | 'f' | 'e')) => (&spec[..spec.len() - 1], k),
        _ => (spec, if integer { 'd' } else { ' ' }),
    };
    let zero = body.starts_with('0');
    let (width, prec) = match body.split_once('.') {
        Some((w, p)) => (w.parse().unwrap_or(0), p.parse().ok()),
        None => (body.parse().unwrap_or(0), None),
    };
    let s = match kind {
        'd' => format!("{}", v.round() as i64),
        'f' => format!("{:.*}", prec.unwrap_or(6), v),
        'e' => format!("{:.*e}", prec.unwrap_or(6), v),
        _ => format!("{v}"),
    };
    if s.len() >= width {
        s
    } else if zero {
        let (sign, digits) = s.strip_prefix('-').map_or(("", s.as_str()), |d| ("-", d));
        format!("{sign}{}{digits}", "0".repeat(width - s.len()))
    } else {
        format!("{}{s}", " ".repeat(width - s.len()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_format_like_python() {
        let logs = Logs::from([("val_loss".to_string(), 0.12345), ("loss".to_string(), 2.0)]);
        let p = format_path("ckpt/{epoch:04d}-{val_loss:.2f}.keras", 7, &logs).expect("fmt");
        assert_eq!(p, "ckpt/0007-0.12.keras");
        assert_eq!(
            format_path("m{epoch}.keras", 12, &logs).expect("fmt"),
            "m12.keras"
        );
        assert_eq!(
            format_path("{{x}}{loss:6.1f}", 1, &logs).expect("fmt"),
            "{x}   2.0"
        );
        assert!(format_path("{val_acc}.keras", 1, &logs).is_err());
    }
}
