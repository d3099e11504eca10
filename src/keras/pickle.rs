//! A small, safe reader for the Python pickles Keras's CIFAR files are made of: a dict of
//! byte strings, lists of ints and one numpy array. It runs the pickle stack machine over the
//! data-building opcodes only, and treats the four globals Keras's own restricted unpickler
//! allows (`numpy.ndarray`, `numpy.dtype`, `numpy.core.multiarray._reconstruct` and its
//! numpy 2 spelling) as names it recognises, never as code: nothing in a file is executed,
//! imported or looked up. Any other opcode or global is refused with an error that says
//! where, so a damaged or tampered file is a clear `ValueError`, not a crash.
//!
//! It owns only the decoding; [`super::cifar`] decides what the decoded values mean.

use std::collections::HashMap;
use std::rc::Rc;

/// A decoded pickle value. Python 2 `str` and Python 3 `bytes` both become [`Obj::Bytes`]
/// (Keras loads these files with `encoding="bytes"`).
#[derive(Debug, Clone, PartialEq)]
pub enum Obj {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Bytes(Rc<[u8]>),
    Str(String),
    List(Vec<Obj>),
    Tuple(Vec<Obj>),
    Dict(Vec<(Obj, Obj)>),
    /// A numpy array: dtype code (`u1`, `<i8`, ...), shape, raw C-order bytes.
    Array {
        dtype: String,
        shape: Vec<usize>,
        data: Rc<[u8]>,
    },
    /// One of the allowed globals, or a value under construction from one of them.
    Global(Global),
    NdEmpty,
    Dtype(String),
    Mark,
}

/// The globals a numpy array's pickle names, and nothing else.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Global {
    Reconstruct,
    NdArray,
    Dtype,
}

impl Obj {
    /// `d[key]` for a dict whose keys are byte strings or text.
    pub fn get(&self, key: &str) -> Option<&Obj> {
        let Obj::Dict(items) = self else { return None };
        items.iter().find_map(|(k, v)| match k {
            Obj::Bytes(b) if &**b == key.as_bytes() => Some(v),
            Obj::Str(s) if s == key => Some(v),
            _ => None,
        })
    }

    /// How many values this one holds, counted through containers, to bound the work a
    /// file can ask for by fetching the same large value from the memo again and again.
    fn weight(&self) -> usize {
        match self {
            Obj::List(v) | Obj::Tuple(v) => 1 + v.iter().map(Obj::weight).sum::<usize>(),
            Obj::Dict(v) => {
                1 + v
                    .iter()
                    .map(|(k, x)| k.weight() + x.weight())
                    .sum::<usize>()
            }
            _ => 1,
        }
    }
}

/// The most values memo fetches may copy in one file; far above what a CIFAR batch needs.
const COPY_BUDGET: usize = 1 << 24;

struct Machine<'a> {
    bytes: &'a [u8],
    at: usize,
    stack: Vec<Obj>,
    memo: HashMap<u32, Obj>,
    copied: usize,
}

/// Decodes one pickle. `Err` holds a sentence saying what is wrong and at which byte.
pub fn load(bytes: &[u8]) -> Result<Obj, String> {
    let mut m = Machine {
        bytes,
        at: 0,
        stack: Vec::new(),
        memo: HashMap::new(),
        copied: 0,
    };
    m.run()
}

impl<'a> Machine<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self.at.checked_add(n).filter(|e| *e <= self.bytes.len());
        let Some(end) = end else {
            return Err(format!("the pickle is truncated at byte {}", self.at));
        };
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }

    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }

    fn le(&mut self, n: usize) -> Result<u64, String> {
        let b = self.take(n)?;
        Ok(b.iter()
            .rev()
            .fold(0u64, |acc, x| (acc << 8) | u64::from(*x)))
    }

    fn len(&mut self, n: usize) -> Result<usize, String> {
        let v = self.le(n)?;
        usize::try_from(v).map_err(|_| format!("a length of {v} bytes is too large"))
    }

    fn line(&mut self) -> Result<String, String> {
        let rest = &self.bytes[self.at..];
        let n = rest
            .iter()
            .position(|b| *b == b'\n')
            .ok_or_else(|| format!("the pickle is truncated at byte {}", self.at))?;
        let text = String::from_utf8_lossy(&rest[..n]).into_owned();
        self.at += n + 1;
        Ok(text)
    }

    fn pop(&mut self) -> Result<Obj, String> {
        match self.stack.pop() {
            Some(Obj::Mark) | None => Err(format!("stack underflow at byte {}", self.at)),
            Some(o) => Ok(o),
        }
    }

    /// Everything above the topmost mark, in order; the mark is removed.
    fn pop_mark(&mut self) -> Result<Vec<Obj>, String> {
        let at = self
            .stack
            .iter()
            .rposition(|o| *o == Obj::Mark)
            .ok_or_else(|| format!("no mark on the stack at byte {}", self.at))?;
        let items = self.stack.split_off(at + 1);
        self.stack.pop();
        Ok(items)
    }

    fn top(&mut self) -> Result<&mut Obj, String> {
        let at = self.at;
        self.stack
            .last_mut()
            .ok_or_else(|| format!("stack underflow at byte {at}"))
    }

    fn extend(&mut self, items: Vec<Obj>) -> Result<(), String> {
        match self.top()? {
            Obj::List(v) => {
                v.extend(items);
                Ok(())
            }
            _ => Err("APPEND onto something that is not a list".into()),
        }
    }

    fn set_items(&mut self, items: Vec<Obj>) -> Result<(), String> {
        if !items.len().is_multiple_of(2) {
            return Err("SETITEMS with an odd number of values".into());
        }
        let Obj::Dict(d) = self.top()? else {
            return Err("SETITEM onto something that is not a dict".into());
        };
        let mut it = items.into_iter();
        while let (Some(k), Some(v)) = (it.next(), it.next()) {
            match d.iter_mut().find(|(old, _)| *old == k) {
                Some(slot) => slot.1 = v,
                None => d.push((k, v)),
            }
        }
        Ok(())
    }

    fn global(module: &str, name: &str) -> Result<Obj, String> {
        match (module, name) {
            ("numpy", "ndarray") => Ok(Obj::Global(Global::NdArray)),
            ("numpy", "dtype") => Ok(Obj::Global(Global::Dtype)),
            ("numpy.core.multiarray" | "numpy._core.multiarray", "_reconstruct") => {
                Ok(Obj::Global(Global::Reconstruct))
            }
            _ => Err(format!(
                "Refusing to deserialize `{module}.{name}` while loading a Keras dataset. \
                 The file may be corrupted or malicious."
            )),
        }
    }

    fn reduce(&mut self) -> Result<(), String> {
        let args = self.pop()?;
        let func = self.pop()?;
        let Obj::Tuple(args) = args else {
            return Err("REDUCE without an argument tuple".into());
        };
        let made = match (func, args.as_slice()) {
            (Obj::Global(Global::Reconstruct), [Obj::Global(Global::NdArray), ..]) => Obj::NdEmpty,
            (Obj::Global(Global::Dtype), [Obj::Str(code), ..]) => Obj::Dtype(code.clone()),
            (Obj::Global(Global::Dtype), [Obj::Bytes(code), ..]) => {
                Obj::Dtype(String::from_utf8_lossy(code).into_owned())
            }
            (f, _) => return Err(format!("a call the reader does not allow: {f:?}")),
        };
        self.stack.push(made);
        Ok(())
    }

    fn build(&mut self) -> Result<(), String> {
        let state = self.pop()?;
        let obj = self.pop()?;
        let Obj::Tuple(state) = state else {
            return Err("BUILD without a state tuple".into());
        };
        let built = match (obj, state.as_slice()) {
            // numpy's dtype state is (version, byte order, ...); '|' and '<' are what a
            // little-endian machine writes, and '>' would need a byte swap we do not do.
            (Obj::Dtype(code), [_, order, ..]) => {
                let order = match order {
                    Obj::Str(s) => s.clone(),
                    Obj::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
                    _ => return Err("a dtype without a byte order".into()),
                };
                if order == ">" {
                    return Err("big-endian arrays are not supported".into());
                }
                let order = if order == "|" { "" } else { order.as_str() };
                Obj::Dtype(format!(
                    "{order}{}",
                    code.trim_start_matches(['<', '|', '='])
                ))
            }
            (Obj::NdEmpty, [_, Obj::Tuple(shape), Obj::Dtype(dtype), fortran, data]) => {
                if matches!(fortran, Obj::Bool(true) | Obj::Int(1)) {
                    return Err("Fortran-ordered arrays are not supported".into());
                }
                let shape = shape
                    .iter()
                    .map(|d| match d {
                        Obj::Int(n) => usize::try_from(*n).map_err(|_| "a negative dimension"),
                        _ => Err("a dimension that is not an int"),
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                let Obj::Bytes(data) = data else {
                    return Err("array data that is not a byte string".into());
                };
                Obj::Array {
                    dtype: dtype.clone(),
                    shape,
                    data: data.clone(),
                }
            }
            (o, _) => return Err(format!("BUILD on a value the reader does not allow: {o:?}")),
        };
        self.stack.push(built);
        Ok(())
    }

    fn memo_get(&mut self, key: u32) -> Result<(), String> {
        let o = self
            .memo
            .get(&key)
            .ok_or_else(|| format!("memo key {key} is not defined"))?
            .clone();
        self.copied += o.weight();
        if self.copied > COPY_BUDGET {
            return Err("the pickle copies more values than a dataset file holds".into());
        }
        self.stack.push(o);
        Ok(())
    }

    fn memo_put(&mut self, key: u32) -> Result<(), String> {
        let top = self.top()?.clone();
        self.memo.insert(key, top);
        Ok(())
    }

    fn text(&mut self, n: usize) -> Result<(), String> {
        let b = self.take(n)?;
        let s = std::str::from_utf8(b).map_err(|_| "text that is not valid UTF-8")?;
        self.stack.push(Obj::Str(s.to_string()));
        Ok(())
    }

    fn bytes_obj(&mut self, n: usize) -> Result<(), String> {
        let b = self.take(n)?;
        self.stack.push(Obj::Bytes(Rc::from(b)));
        Ok(())
    }

    fn run(&mut self) -> Result<Obj, String> {
        loop {
            let at = self.at;
            let op = self.u8()?;
            match op {
                0x80 => {
                    let proto = self.u8()?;
                    if proto > 5 {
                        return Err(format!("unsupported pickle protocol {proto}"));
                    }
                }
                0x95 => {
                    self.le(8)?;
                }
                b'.' => return self.pop(),
                b'(' => self.stack.push(Obj::Mark),
                b'}' => self.stack.push(Obj::Dict(Vec::new())),
                b']' => self.stack.push(Obj::List(Vec::new())),
                b')' => self.stack.push(Obj::Tuple(Vec::new())),
                b'N' => self.stack.push(Obj::None),
                0x88 => self.stack.push(Obj::Bool(true)),
                0x89 => self.stack.push(Obj::Bool(false)),
                b'K' => {
                    let v = self.le(1)?;
                    self.stack.push(Obj::Int(v as i64));
                }
                b'M' => {
                    let v = self.le(2)?;
                    self.stack.push(Obj::Int(v as i64));
                }
                b'J' => {
                    let v = self.le(4)? as u32 as i32;
                    self.stack.push(Obj::Int(i64::from(v)));
                }
                0x8a => {
                    let n = usize::from(self.u8()?);
                    if n > 8 {
                        return Err(format!("an integer of {n} bytes is too large"));
                    }
                    let v = self.le(n)?;
                    // Sign-extend from the top bit of the last byte, as LONG1 is two's complement.
                    let v = if n > 0 && n < 8 && v >> (8 * n - 1) & 1 == 1 {
                        (v | (!0u64 << (8 * n))) as i64
                    } else {
                        v as i64
                    };
                    self.stack.push(Obj::Int(v));
                }
                b'G' => {
                    let b = self.take(8)?;
                    let mut a = [0u8; 8];
                    a.copy_from_slice(b);
                    self.stack.push(Obj::Float(f64::from_be_bytes(a)));
                }
                b'U' | b'C' => {
                    let n = usize::from(self.u8()?);
                    self.bytes_obj(n)?;
                }
                b'T' => {
                    let n = self.le(4)? as u32 as i32;
                    let n = usize::try_from(n).map_err(|_| "a negative string length")?;
                    self.bytes_obj(n)?;
                }
                b'B' => {
                    let n = self.len(4)?;
                    self.bytes_obj(n)?;
                }
                0x8e => {
                    let n = self.len(8)?;
                    self.bytes_obj(n)?;
                }
                0x8c => {
                    let n = usize::from(self.u8()?);
                    self.text(n)?;
                }
                b'X' => {
                    let n = self.len(4)?;
                    self.text(n)?;
                }
                0x8d => {
                    let n = self.len(8)?;
                    self.text(n)?;
                }
                b't' => {
                    let items = self.pop_mark()?;
                    self.stack.push(Obj::Tuple(items));
                }
                0x85..=0x87 => {
                    let n = usize::from(op - 0x84);
                    let mut items = (0..n).map(|_| self.pop()).collect::<Result<Vec<_>, _>>()?;
                    items.reverse();
                    self.stack.push(Obj::Tuple(items));
                }
                b'a' => {
                    let v = self.pop()?;
                    self.extend(vec![v])?;
                }
                b'e' => {
                    let items = self.pop_mark()?;
                    self.extend(items)?;
                }
                b's' => {
                    let v = self.pop()?;
                    let k = self.pop()?;
                    self.set_items(vec![k, v])?;
                }
                b'u' => {
                    let items = self.pop_mark()?;
                    self.set_items(items)?;
                }
                b'c' => {
                    let module = self.line()?;
                    let name = self.line()?;
                    self.stack.push(Self::global(&module, &name)?);
                }
                0x93 => {
                    let name = self.pop()?;
                    let module = self.pop()?;
                    let (Obj::Str(module), Obj::Str(name)) = (module, name) else {
                        return Err("STACK_GLOBAL without two names".into());
                    };
                    self.stack.push(Self::global(&module, &name)?);
                }
                b'R' => self.reduce()?,
                b'b' => self.build()?,
                b'q' => {
                    let k = self.le(1)? as u32;
                    self.memo_put(k)?;
                }
                b'r' => {
                    let k = self.le(4)? as u32;
                    self.memo_put(k)?;
                }
                0x94 => {
                    let k = self.memo.len() as u32;
                    self.memo_put(k)?;
                }
                b'h' => {
                    let k = self.le(1)? as u32;
                    self.memo_get(k)?;
                }
                b'j' => {
                    let k = self.le(4)? as u32;
                    self.memo_get(k)?;
                }
                other => {
                    return Err(format!(
                        "pickle opcode 0x{other:02x} at byte {at} is not one a dataset file uses"
                    ))
                }
            }
        }
    }
}
