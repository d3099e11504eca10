//! The running interpreter: `Core` is the state that outlives cells (globals, builtins,
//! imported modules, session state, history); `Vm` is one cell's run of it, holding the
//! sink and the buffered streams. `Vm` implements [`Ctx`], which is how natives call back
//! into Python. Output is buffered and flushed every ~50 ms or 8 KB, and at cell end.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use indexmap::IndexMap;

use crate::cell::{HistoryEntry, Output, Sink, StreamName};
use crate::display::MimeBundle;
use crate::lang::values::exc::{PyErr, PyResult};
use crate::lang::values::object::{Args, BinOp, CmpOp, Ctx, State, ThreadState};
use crate::lang::values::runtime::Frame;
use crate::lang::values::value::Value;
use crate::lang::ModuleLoader;

pub type Globals = Rc<RefCell<IndexMap<Rc<str>, Value, FastHash>>>;

/// FNV-1a for bytes and one multiply per whole word: names are short and come from the
/// cell's own source, so a fast unkeyed hash is the right trade for the global and builtin
/// lookups made on every name access, and for the dict keys of a notebook's own data.
#[derive(Default, Clone, Copy)]
pub struct Fnv(u64);

impl std::hash::Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for b in bytes {
            h ^= *b as u64;
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = h;
    }
    // Whole words (ints, lengths, enum tags) are mixed in one multiply instead of eight,
    // which keeps int-keyed dicts and sets cheap to hash.
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
    fn write_usize(&mut self, x: usize) {
        self.write_u64(x as u64);
    }
    fn write_i64(&mut self, x: i64) {
        self.write_u64(x as u64);
    }
    fn write_isize(&mut self, x: isize) {
        self.write_u64(x as u64);
    }
}

pub type FastHash = std::hash::BuildHasherDefault<Fnv>;

/// The Python-visible recursion limit; the session thread's large stack holds far more.
pub const RECURSION_LIMIT: usize = 1000;

pub struct Core {
    pub globals: Globals,
    pub builtins: HashMap<String, Value, FastHash>,
    pub interrupt: Arc<AtomicBool>,
    pub loader: ModuleLoader,
    /// The names of the modules `loader` provides, which a failed import lists; the
    /// bindings hand them down with [`crate::lang::Interpreter::set_provided_modules`].
    pub provided: Vec<&'static str>,
    pub modules: HashMap<String, Value>,
    pub state: State,
    pub count: u64,
    pub history: Vec<HistoryEntry>,
    pub exc_classes: HashMap<String, Value>,
    /// Names the kernel itself put in the namespace (hidden from `%who`).
    pub hidden: Vec<String>,
    /// Each cell's source by its traceback name (`Cell In[3]`), for context lines.
    pub sources: HashMap<String, Rc<crate::lang::syntax::ast::Source>>,
}

/// Where an expression runs: the function frame (none at cell level), the class body
/// namespace while a class statement runs, and the class owning the running method.
pub struct Env {
    pub frame: Option<Rc<Frame>>,
    pub class_ns: Option<Rc<RefCell<IndexMap<String, Value>>>>,
    pub line: Cell<u32>,
    pub owner: Option<Value>,
}

impl Env {
    pub fn top() -> Env {
        Env {
            frame: None,
            class_ns: None,
            line: Cell::new(0),
            owner: None,
        }
    }
}

pub struct Vm<'a> {
    pub core: &'a mut Core,
    pub sink: &'a dyn Sink,
    pub out: String,
    pub err: String,
    pub last_flush: Instant,
    pub depth: usize,
    /// Set while a generator's body runs on this `Vm`: the way back to its resumer.
    pub gen: Option<super::generator::GenLink>,
    pub pager: Vec<MimeBundle>,
    pub allow_stdin: bool,
    pub file: String,
    /// Counts loop iterations between interrupt checks.
    pub tick: u32,
    /// Exceptions being handled (innermost last), for a bare `raise`.
    pub handling: Vec<PyErr>,
    /// Set while IPython's pretty printer runs: classes print as bare names.
    pub pretty_types: bool,
    /// Finished function frames kept for reuse (see `fast::new_frame`).
    pub frame_pool: Vec<Rc<Frame>>,
    /// The containers being printed right now, innermost last (see `recursion`).
    pub repr_active: Vec<usize>,
    /// The lowest address the running stack may reach when it is not the session thread's
    /// own (a replica's coroutine, see `together`); `None` on the session thread.
    pub stack_limit: Option<usize>,
}

impl<'a> Vm<'a> {
    pub fn new(core: &'a mut Core, sink: &'a dyn Sink, file: String, allow_stdin: bool) -> Vm<'a> {
        Vm {
            core,
            sink,
            out: String::new(),
            err: String::new(),
            last_flush: Instant::now(),
            depth: 0,
            gen: None,
            pager: vec![],
            allow_stdin,
            file,
            tick: 0,
            handling: vec![],
            pretty_types: false,
            frame_pool: vec![],
            repr_active: vec![],
            stack_limit: None,
        }
    }

    pub fn write(&mut self, stream: StreamName, text: &str) {
        match stream {
            StreamName::Stdout => {
                if !self.err.is_empty() {
                    self.flush();
                }
                self.out.push_str(text)
            }
            StreamName::Stderr => {
                if !self.out.is_empty() {
                    self.flush();
                }
                self.err.push_str(text)
            }
        }
        if self.out.len() + self.err.len() > 8192
            || self.last_flush.elapsed() > Duration::from_millis(50)
        {
            self.flush();
        }
    }

    pub fn flush(&mut self) {
        if !self.out.is_empty() {
            let text = std::mem::take(&mut self.out);
            self.sink.emit(Output::Stream {
                name: StreamName::Stdout,
                text,
            });
        }
        if !self.err.is_empty() {
            let text = std::mem::take(&mut self.err);
            self.sink.emit(Output::Stream {
                name: StreamName::Stderr,
                text,
            });
        }
        self.last_flush = Instant::now();
    }

    #[inline]
    pub fn check_interrupt_fast(&mut self) -> PyResult<()> {
        self.tick = self.tick.wrapping_add(1);
        if self.tick & 63 == 0 {
            if self.core.interrupt.load(Ordering::Relaxed) {
                self.core.interrupt.store(false, Ordering::SeqCst);
                return Err(PyErr::keyboard_interrupt());
            }
            if !self.out.is_empty() && self.last_flush.elapsed() > Duration::from_millis(50) {
                self.flush();
            }
        }
        Ok(())
    }

    pub fn global(&self, name: &str) -> Option<Value> {
        if let Some(v) = self.core.globals.borrow().get(name) {
            return Some(v.clone());
        }
        self.core.builtins.get(name).cloned()
    }
}

impl Ctx for Vm<'_> {
    fn call(&mut self, f: &Value, args: Args) -> PyResult<Value> {
        self.call_value(f, args)
    }
    fn getattr(&mut self, v: &Value, name: &str) -> PyResult<Value> {
        self.get_attr(v, name)
    }
    fn repr(&mut self, v: &Value) -> PyResult<String> {
        self.repr_of(v)
    }
    fn str(&mut self, v: &Value) -> PyResult<String> {
        self.str_of(v)
    }
    fn rich(&mut self, v: &Value) -> PyResult<MimeBundle> {
        self.rich_of(v)
    }
    fn iterate(&mut self, v: &Value) -> PyResult<Vec<Value>> {
        self.iter_values(v)
    }
    fn emit(&mut self, out: Output) {
        match out {
            Output::Stream { name, text } => self.write(name, &text),
            other => {
                self.flush();
                self.sink.emit(other)
            }
        }
    }
    fn check_interrupt(&mut self) -> PyResult<()> {
        // Natives call this from long loops: a good moment to let buffered prints out.
        if !(self.out.is_empty() && self.err.is_empty())
            && self.last_flush.elapsed() > Duration::from_millis(50)
        {
            self.flush();
        }
        if self.core.interrupt.load(Ordering::Relaxed) {
            self.core.interrupt.store(false, Ordering::SeqCst);
            return Err(PyErr::keyboard_interrupt());
        }
        Ok(())
    }
    fn interrupt_flag(&self) -> Arc<AtomicBool> {
        self.core.interrupt.clone()
    }
    fn state(&mut self) -> &mut State {
        &mut self.core.state
    }
    fn input(&mut self, prompt: &str, password: bool) -> PyResult<String> {
        self.flush();
        if !self.allow_stdin {
            return Err(PyErr::new(
                "StdinNotImplementedError",
                "raw_input was called, but this frontend does not support input requests.",
            ));
        }
        match self.sink.input(prompt, password) {
            Some(s) => Ok(s),
            None => Err(PyErr::new(
                "StdinNotImplementedError",
                "raw_input was called, but this frontend does not support input requests.",
            )),
        }
    }
    fn execution_count(&self) -> u64 {
        self.core.count
    }
    fn exception_class(&mut self, name: &str) -> Option<Value> {
        Some(self.exc_class(name))
    }
    fn setattr(&mut self, v: &Value, name: &str, value: Value) -> PyResult<()> {
        self.set_attr(v, name, value)
    }
    fn accepts_keyword(&mut self, f: &Value, name: &str) -> Option<bool> {
        super::call::accepts_keyword(f, name)
    }
    fn binop(&mut self, op: BinOp, a: &Value, b: &Value) -> PyResult<Value> {
        Vm::binop(self, op, a, b)
    }
    fn compare(&mut self, op: CmpOp, a: &Value, b: &Value) -> PyResult<Value> {
        self.rich_compare(op, a, b)
    }
    fn truthy(&mut self, v: &Value) -> PyResult<bool> {
        Vm::truthy(self, v)
    }
    fn get_iter(&mut self, v: &Value) -> PyResult<Value> {
        Vm::get_iter(self, v)
    }
    fn getitem(&mut self, v: &Value, key: &Value) -> PyResult<Value> {
        self.get_item(v, key)
    }
    fn contains(&mut self, container: &Value, item: &Value) -> PyResult<bool> {
        Vm::contains(self, container, item)
    }
    fn next_item(&mut self, it: &Value) -> PyResult<Option<Value>> {
        Vm::next_item(self, it)
    }
    fn switch_thread(&mut self, thread: &mut ThreadState) {
        std::mem::swap(&mut self.depth, &mut thread.depth);
        std::mem::swap(&mut self.handling, &mut thread.handling);
        std::mem::swap(&mut self.repr_active, &mut thread.repr_active);
        std::mem::swap(&mut self.stack_limit, &mut thread.stack_limit);
    }
}
