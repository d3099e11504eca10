//! `io.StringIO`: an in-memory text file (`write`, `read`, `readline`, `readlines`,
//! `getvalue`, `seek`, `tell`, `truncate`, iteration by line, `with`, and a target for
//! `print(file=...)`), with positions in characters and CPython's closed-file errors.

use std::any::Any;
use std::cell::{Cell, RefCell};

use super::Method;
use crate::bindings::common::{arg, ItemIter};
use crate::lang::{Args, Ctx, NativeClass, NativeModule, Object, PyErr, PyResult, Value};

pub struct StringIO {
    text: RefCell<Vec<char>>,
    pos: Cell<usize>,
    closed: Cell<bool>,
}

/// A size argument: `None` or a negative number mean "to the end".
fn size_arg(v: &Value) -> PyResult<Option<usize>> {
    Ok(match v {
        Value::None => None,
        v => usize::try_from(v.as_int()?).ok(),
    })
}

impl StringIO {
    fn open(&self) -> PyResult<()> {
        if self.closed.get() {
            return Err(PyErr::value_error("I/O operation on closed file"));
        }
        Ok(())
    }

    fn readline(&self, limit: Option<usize>) -> String {
        let text = self.text.borrow();
        let start = self.pos.get().min(text.len());
        let mut end = start;
        while end < text.len() && limit.is_none_or(|l| end - start < l) {
            end += 1;
            if text[end - 1] == '\n' {
                break;
            }
        }
        self.pos.set(end.max(self.pos.get()));
        text[start..end].iter().collect()
    }

    fn lines(&self) -> Vec<Value> {
        let mut out = vec![];
        loop {
            let line = self.readline(None);
            if line.is_empty() {
                return out;
            }
            out.push(Value::from(line));
        }
    }
}

const METHODS: &[Method<StringIO>] = &[
    ("write", |io, _, a, _| {
        io.open()?;
        let s = a.bind("write", &["s"], 1)?;
        let Value::Str(t) = arg(&s, 0) else {
            return Err(PyErr::type_error(format!(
                "string argument expected, got '{}'",
                arg(&s, 0).type_name()
            )));
        };
        let mut text = io.text.borrow_mut();
        let pos = io.pos.get();
        if pos > text.len() {
            text.resize(pos, '\0');
        }
        // Written over what is there, then past the end.
        let mut n = 0;
        for ch in t.chars() {
            match text.get_mut(pos + n) {
                Some(slot) => *slot = ch,
                None => text.push(ch),
            }
            n += 1;
        }
        io.pos.set(pos + n);
        Ok(Value::Int(n as i64))
    }),
    ("writelines", |io, me, a, ctx| {
        let s = a.bind("writelines", &["lines"], 1)?;
        for line in ctx.iterate(arg(&s, 0))? {
            (METHODS[0].1)(io, me, &Args::new(vec![line]), ctx)?;
        }
        Ok(Value::None)
    }),
    ("read", |io, _, a, _| {
        io.open()?;
        let s = a.bind("read", &["size"], 0)?;
        let text = io.text.borrow();
        let start = io.pos.get().min(text.len());
        let end = match size_arg(arg(&s, 0))? {
            Some(n) => (start + n).min(text.len()),
            None => text.len(),
        };
        io.pos.set(end.max(io.pos.get()));
        Ok(Value::from(text[start..end].iter().collect::<String>()))
    }),
    ("readline", |io, _, a, _| {
        io.open()?;
        let s = a.bind("readline", &["size"], 0)?;
        Ok(Value::from(io.readline(size_arg(arg(&s, 0))?)))
    }),
    ("readlines", |io, _, a, _| {
        io.open()?;
        a.bind("readlines", &[], 0)?;
        Ok(Value::list(io.lines()))
    }),
    ("getvalue", |io, _, a, _| {
        io.open()?;
        a.bind("getvalue", &[], 0)?;
        Ok(Value::from(io.text.borrow().iter().collect::<String>()))
    }),
    ("seek", |io, _, a, _| {
        io.open()?;
        let s = a.bind("seek", &["pos", "whence"], 1)?;
        let pos = arg(&s, 0).as_int()?;
        let whence = match arg(&s, 1) {
            Value::None => 0,
            v => v.as_int()?,
        };
        match whence {
            0 if pos < 0 => Err(PyErr::value_error(format!("Negative seek position {pos}"))),
            0 => {
                io.pos.set(pos as usize);
                Ok(Value::Int(pos))
            }
            1 | 2 if pos != 0 => Err(PyErr::new("OSError", "Can't do nonzero cur-relative seeks")),
            1 => Ok(Value::Int(io.pos.get() as i64)),
            2 => {
                let end = io.text.borrow().len();
                io.pos.set(end);
                Ok(Value::Int(end as i64))
            }
            w => Err(PyErr::value_error(format!(
                "Invalid whence ({w}, should be 0, 1 or 2)"
            ))),
        }
    }),
    ("tell", |io, _, a, _| {
        io.open()?;
        a.bind("tell", &[], 0)?;
        Ok(Value::Int(io.pos.get() as i64))
    }),
    ("truncate", |io, _, a, _| {
        io.open()?;
        let s = a.bind("truncate", &["pos"], 0)?;
        let at = match size_arg(arg(&s, 0))? {
            Some(n) => n,
            None => io.pos.get(),
        };
        io.text.borrow_mut().truncate(at);
        Ok(Value::Int(at as i64))
    }),
    ("close", |io, _, a, _| {
        a.bind("close", &[], 0)?;
        io.closed.set(true);
        Ok(Value::None)
    }),
    ("flush", |io, _, a, _| {
        io.open()?;
        a.bind("flush", &[], 0)?;
        Ok(Value::None)
    }),
];

impl Object for StringIO {
    fn type_name(&self) -> String {
        "StringIO".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok("<_io.StringIO object>".into())
    }
    fn getattr(&self, this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        if name == "closed" {
            return Ok(Some(Value::Bool(self.closed.get())));
        }
        Ok(super::bound_method(this, METHODS, name))
    }
    fn dir(&self) -> Vec<String> {
        let mut d: Vec<String> = super::method_names(METHODS);
        d.push("closed".into());
        d
    }
    fn iter(&self, _this: &Value, _ctx: &mut dyn Ctx) -> PyResult<Value> {
        self.open()?;
        Ok(ItemIter::value("list_iterator", self.lines()))
    }
    fn enter(&self, this: &Value, _ctx: &mut dyn Ctx) -> PyResult<Value> {
        self.open()?;
        Ok(this.clone())
    }
    fn exit(&self, _error: Option<&PyErr>, _ctx: &mut dyn Ctx) -> PyResult<bool> {
        self.closed.set(true);
        Ok(false)
    }
    fn truthy(&self, _ctx: &mut dyn Ctx) -> PyResult<Option<bool>> {
        Ok(Some(true))
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

fn string_io(a: &Args, _: &mut dyn Ctx) -> PyResult<Value> {
    // `newline` (translation of line endings) is left out.
    let s = a.bind("StringIO", &["initial_value"], 0)?;
    let text = match arg(&s, 0) {
        Value::None => vec![],
        Value::Str(t) => t.chars().collect(),
        other => {
            return Err(PyErr::type_error(format!(
                "initial_value must be str or None, not {}",
                other.type_name()
            )))
        }
    };
    Ok(Value::native(StringIO {
        text: RefCell::new(text),
        pos: Cell::new(0),
        closed: Cell::new(false),
    }))
}

pub fn module() -> Value {
    NativeModule::new("io", "The io module: in-memory text streams.")
        .with(
            "StringIO",
            NativeClass::new(
                "StringIO",
                "_io",
                "StringIO(initial_value='')\nText I/O implementation using an in-memory buffer.",
            )
            .constructor(string_io)
            .into_value(),
        )
        .into_value()
}
