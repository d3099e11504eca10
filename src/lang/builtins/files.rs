//! `open()`: text files for reading and writing, usable as context managers.

use std::any::Any;
use std::cell::RefCell;

use crate::lang::eval::vm::Vm;
use crate::lang::values::exc::{PyErr, PyResult};
use crate::lang::values::object::{Args, Ctx, Object};
use crate::lang::values::value::Value;
use crate::lang::NativeFn;

pub struct File {
    pub path: String,
    pub mode: String,
    pub buf: RefCell<String>,
    pub pos: RefCell<usize>,
    pub closed: RefCell<bool>,
}

/// An I/O error as CPython raises it (`FileNotFoundError: [Errno 2] ...: 'path'`).
pub fn io_err(e: std::io::Error, path: &str) -> PyErr {
    let name = match e.kind() {
        std::io::ErrorKind::NotFound => "FileNotFoundError",
        std::io::ErrorKind::PermissionDenied => "PermissionError",
        std::io::ErrorKind::AlreadyExists => "FileExistsError",
        _ => "OSError",
    };
    let code = e.raw_os_error().unwrap_or(0);
    let msg = e.to_string();
    let msg = msg.split(" (os error").next().unwrap_or(&msg).to_string();
    PyErr::new(name, format!("[Errno {code}] {msg}: '{path}'"))
}

pub fn open(_vm: &mut Vm, a: &Args) -> PyResult<Value> {
    let slots = a.bind(
        "open",
        &["file", "mode", "buffering", "encoding", "errors", "newline"],
        1,
    )?;
    let path = match &slots[0] {
        Some(Value::Str(s)) => s.to_string(),
        Some(v) => _vm.str_of(v)?,
        None => String::new(),
    };
    let mode = match &slots[1] {
        Some(v) => v.as_str()?.to_string(),
        None => "r".into(),
    };
    let buf = if mode.contains('r') {
        read_text(_vm, &path)?
    } else if mode.contains('a') {
        read_text(_vm, &path).unwrap_or_default()
    } else {
        std::fs::write(&path, "").map_err(|e| io_err(e, &path))?;
        String::new()
    };
    Ok(Value::native(File {
        path,
        mode,
        buf: RefCell::new(buf),
        pos: RefCell::new(0),
        closed: RefCell::new(false),
    }))
}

/// The whole text of `path`, read a piece at a time within the memory bound and with
/// interrupt checks, so that `/dev/zero` or a huge file ends in `MemoryError` (or at an
/// interrupt) rather than in the out-of-memory killer.
fn read_text(vm: &mut Vm, path: &str) -> PyResult<String> {
    use std::io::Read;
    const PIECE: usize = 1 << 20;
    let mut file = std::fs::File::open(path).map_err(|e| io_err(e, path))?;
    let mut bytes: Vec<u8> = vec![];
    loop {
        crate::lang::values::memory::reserve(&mut bytes, PIECE)?;
        let len = bytes.len();
        bytes.resize(len + PIECE, 0);
        let n = file.read(&mut bytes[len..]).map_err(|e| io_err(e, path))?;
        bytes.truncate(len + n);
        if n == 0 {
            break;
        }
        vm.check_interrupt()?;
    }
    // The text is copied once more into its value: that copy must fit too.
    if !crate::lang::values::memory::fits(bytes.len(), 2) {
        return Err(crate::lang::values::memory::memory_error());
    }
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let byte = e.as_bytes().get(at).copied().unwrap_or(0);
        PyErr::new(
            "UnicodeDecodeError",
            format!(
                "'utf-8' codec can't decode byte 0x{byte:02x} in position {at}: invalid start byte"
            ),
        )
    })
}

impl File {
    fn flush_to_disk(&self) -> PyResult<()> {
        if !self.mode.contains('r') || self.mode.contains('+') {
            std::fs::write(&self.path, &*self.buf.borrow()).map_err(|e| io_err(e, &self.path))?;
        }
        Ok(())
    }
}

impl Object for File {
    fn type_name(&self) -> String {
        "TextIOWrapper".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(format!(
            "<_io.TextIOWrapper name='{}' mode='{}' encoding='UTF-8'>",
            self.path, self.mode
        ))
    }
    fn getattr(&self, this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        let Some(f) = this.downcast::<File>() else {
            return Ok(None);
        };
        let _ = f;
        let me = this.clone();
        let get = move |v: &Value| v.downcast::<File>().map(|f| f as *const File);
        let _ = get;
        Ok(Some(match name {
            "name" => Value::str(&self.path),
            "mode" => Value::str(&self.mode),
            "closed" => Value::Bool(*self.closed.borrow()),
            "read" | "readline" | "readlines" | "write" | "writelines" | "close" | "flush"
            | "__iter__" => {
                let n = name.to_string();
                NativeFn::value(name, "", move |a, ctx| {
                    let Some(f) = me.downcast::<File>() else {
                        return Ok(Value::None);
                    };
                    f.method(&n, a, ctx)
                })
            }
            _ => return Ok(None),
        }))
    }
    fn iter(&self, _this: &Value, _ctx: &mut dyn Ctx) -> PyResult<Value> {
        let rest = self.rest();
        Ok(crate::lang::values::runtime::SeqIter::value(
            split_lines(&rest).into_iter().map(Value::from).collect(),
        ))
    }
    fn enter(&self, this: &Value, _ctx: &mut dyn Ctx) -> PyResult<Value> {
        Ok(this.clone())
    }
    fn exit(&self, _error: Option<&PyErr>, _ctx: &mut dyn Ctx) -> PyResult<bool> {
        self.close()?;
        Ok(false)
    }
    fn hash(&self) -> Option<u64> {
        Some(self as *const File as usize as u64)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

fn split_lines(s: &str) -> Vec<String> {
    s.split_inclusive('\n').map(String::from).collect()
}

impl File {
    fn rest(&self) -> String {
        let buf = self.buf.borrow();
        let p = (*self.pos.borrow()).min(buf.len());
        let r = buf[p..].to_string();
        *self.pos.borrow_mut() = buf.len();
        r
    }
    fn close(&self) -> PyResult<()> {
        if !*self.closed.borrow() {
            self.flush_to_disk()?;
            *self.closed.borrow_mut() = true;
        }
        Ok(())
    }
    fn method(&self, name: &str, a: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
        if *self.closed.borrow() && name != "close" {
            return Err(PyErr::value_error("I/O operation on closed file."));
        }
        Ok(match name {
            "read" => Value::from(self.rest()),
            "readline" => {
                let buf = self.buf.borrow().clone();
                let p = *self.pos.borrow();
                let tail = buf.get(p..).unwrap_or("");
                let end = tail.find('\n').map(|i| i + 1).unwrap_or(tail.len());
                *self.pos.borrow_mut() = p + end;
                Value::str(&tail[..end])
            }
            "readlines" => Value::list(
                split_lines(&self.rest())
                    .into_iter()
                    .map(Value::from)
                    .collect(),
            ),
            "write" => {
                let s = match a.pos.first() {
                    Some(Value::Str(s)) => s.to_string(),
                    Some(v) => {
                        return Err(PyErr::type_error(format!(
                            "write() argument must be str, not {}",
                            v.type_name()
                        )))
                    }
                    None => String::new(),
                };
                if self.mode.contains('r') && !self.mode.contains('+') {
                    return Err(PyErr::new("UnsupportedOperation", "not writable"));
                }
                self.buf.borrow_mut().push_str(&s);
                Value::Int(s.chars().count() as i64)
            }
            "writelines" => {
                for v in ctx.iterate(a.pos.first().unwrap_or(&Value::None))? {
                    self.buf.borrow_mut().push_str(v.as_str()?);
                }
                Value::None
            }
            "close" => {
                self.close()?;
                Value::None
            }
            "flush" => {
                self.flush_to_disk()?;
                Value::None
            }
            _ => Value::None,
        })
    }
}
