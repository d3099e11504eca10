//! IPython's pretty printer for execute results: containers on one line while they fit in
//! 79 columns, else one item per line with hanging indents, long sequences cut at 1000
//! items; while it runs, `repr` shows sets sorted and builtin types by their bare names,
//! as IPython's printer does.

use crate::lang::datamodel::repr::{entry_at, REPR_CONTEXT};
use crate::lang::eval::vm::Vm;
use crate::lang::values::exc::PyResult;
use crate::lang::values::memory;
use crate::lang::values::object::Ctx;
use crate::lang::values::value::Value;

/// The width IPython's pretty printer fills before it breaks a container into lines.
const LINE_WIDTH: usize = 79;

/// IPython's `max_seq_length`: a container shows this many items, then `...`.
const MAX_SEQ_LENGTH: usize = 1000;

impl Vm<'_> {
    /// IPython's pretty form of an execute result.
    pub fn pretty(&mut self, v: &Value) -> PyResult<String> {
        self.pretty_types = true;
        let r = self.pretty_at(v, 0, 0);
        self.pretty_types = false;
        r
    }

    /// `v` printed from column `indent`; the later lines of a multi-line repr (a 2-D
    /// array in a list) are indented by `hang`, the enclosing containers' depth, as
    /// IPython's `break_()` does.
    fn pretty_at(&mut self, v: &Value, indent: usize, hang: usize) -> PyResult<String> {
        let len = match v {
            Value::List(l) => l.borrow().len(),
            Value::Tuple(t) if t.len() > 1 => t.len(),
            Value::Dict(d) => d.borrow().len(),
            _ => {
                let r = self.repr_of(v)?;
                return Ok(r.replace('\n', &format!("\n{}", " ".repeat(hang))));
            }
        };
        // Every item takes at least one character and a separator, so a container of more
        // than a line's worth of items never fits flat: its flat repr is not built.
        if 3 * len + indent <= LINE_WIDTH {
            let flat = self.repr_of(v)?;
            // An item printed on several lines breaks its container too.
            if flat.chars().count() + indent <= LINE_WIDTH && !flat.contains('\n') {
                return Ok(flat);
            }
        }
        if !self.repr_enter(v) {
            // Printed further out already: `[...]`.
            return self.repr_of(v);
        }
        let r = self.nested(REPR_CONTEXT, |vm| vm.pretty_lines(v, indent));
        self.repr_leave(v);
        r
    }

    /// A container one item per line, at most [`MAX_SEQ_LENGTH`] of them then `...`, as
    /// IPython's pretty printer breaks what does not fit.
    fn pretty_lines(&mut self, v: &Value, indent: usize) -> PyResult<String> {
        let (open, close) = match v {
            Value::List(_) => ("[", "]"),
            Value::Dict(_) => ("{", "}"),
            _ => ("(", ")"),
        };
        let sep = format!(",\n{}", " ".repeat(indent + 1));
        let mut out = String::from(open);
        let mut i = 0;
        loop {
            let Some((key, item)) = entry_at(v, i) else {
                break;
            };
            if i > 0 {
                memory::reserve_str(&mut out, sep.len())?;
                out.push_str(&sep);
            }
            if i == MAX_SEQ_LENGTH {
                out.push_str("...");
                break;
            }
            let line = match key {
                Some(k) => {
                    let ks = self.repr_of(&k)?;
                    let w = indent + 1 + ks.chars().count() + 2;
                    format!("{ks}: {}", self.pretty_at(&item, w, indent + 1)?)
                }
                None => self.pretty_at(&item, indent + 1, indent + 1)?,
            };
            memory::reserve_str(&mut out, line.len() + close.len())?;
            out.push_str(&line);
            i += 1;
            if i % 256 == 0 {
                Ctx::check_interrupt(self)?;
            }
        }
        out.push_str(close);
        Ok(out)
    }
}
