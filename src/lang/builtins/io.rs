//! Builtins that talk to the world outside the program: `print` (to the cell's stdout or any
//! object with `write`), `input` (through the front end's stdin), `open`, `display` and `help`
//! (to the pager), and `exit`/`quit`.

use super::namespace::{kw, unknown};
use crate::cell::StreamName;
use crate::lang::eval::vm::Vm;
use crate::lang::values::exc::{PyErr, PyResult};
use crate::lang::values::object::Args;
use crate::lang::values::value::Value;

/// The builtin functions this file answers for.
pub(super) const NAMES: &[&str] = &["print", "input", "open", "display", "help", "exit", "quit"];

impl Vm<'_> {
    /// Calls the builtin `name` (one of [`NAMES`]).
    pub(super) fn builtin_io(&mut self, name: &str, a: Args) -> PyResult<Value> {
        Ok(match name {
            "print" => {
                let sep = match kw(&a, "sep") {
                    Some(Value::None) | None => " ".to_string(),
                    Some(v) => self.str_of(v)?,
                };
                let end = match kw(&a, "end") {
                    Some(Value::None) | None => "\n".to_string(),
                    Some(v) => self.str_of(v)?,
                };
                let mut parts = Vec::with_capacity(a.pos.len());
                for v in &a.pos {
                    parts.push(self.str_of(v)?);
                }
                let text = format!("{}{end}", parts.join(&sep));
                match kw(&a, "file") {
                    None | Some(Value::None) => self.write(StreamName::Stdout, &text),
                    Some(f) => {
                        let w = self.get_attr(f, "write")?;
                        self.call_value(&w, Args::new(vec![Value::from(text)]))?;
                    }
                }
                if kw(&a, "flush")
                    .map(|v| matches!(v, Value::Bool(true)))
                    .unwrap_or(false)
                {
                    self.flush();
                }
                Value::None
            }
            "input" => {
                let prompt = match a.pos.first() {
                    Some(v) => self.str_of(v)?,
                    None => String::new(),
                };
                Value::from(crate::lang::values::object::Ctx::input(
                    self, &prompt, false,
                )?)
            }
            "open" => super::files::open(self, &a)?,
            "display" => {
                for v in &a.pos {
                    let data = self.rich_of(v)?;
                    crate::lang::values::object::Ctx::emit(
                        self,
                        crate::cell::Output::DisplayData {
                            data,
                            metadata: Default::default(),
                            display_id: None,
                        },
                    );
                }
                Value::None
            }
            "help" => {
                // As in IPython, help text goes to the front end's pager.
                if let Some(v) = a.pos.first() {
                    let text = crate::lang::ipython::help::help_text(self, v)?;
                    self.pager.push(crate::display::plain(text));
                }
                Value::None
            }
            "exit" | "quit" => return Err(PyErr::new("SystemExit", "")),
            _ => return Err(unknown(name)),
        })
    }
}
