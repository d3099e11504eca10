//! `pprint`: `pprint`, `pformat` and `pp` with CPython's `PrettyPrinter` layout: a value
//! whose repr fits in what is left of `width` is written whole; dicts, lists, tuples and
//! sets that do not fit put one item per line (`compact` packs items), long strings are
//! cut at spaces into implicitly joined pieces, and dict keys and set items are sorted
//! (`sort_dicts`). Other values are written as their repr.

use std::rc::Rc;

use super::f;
use crate::bindings::common::arg;
use crate::cell::{Output, StreamName};
use crate::lang::{str_repr, Args, CmpOp, Ctx, NativeModule, PyResult, Value};

struct Printer {
    indent: usize,
    width: i64,
    compact: bool,
    sort_dicts: bool,
}

/// The kinds of container the printer breaks over lines.
enum Shape {
    Dict(Vec<(Value, Value)>),
    List(Vec<Value>),
    Tuple(Vec<Value>),
    Set(Vec<Value>),
    Str(Rc<str>),
    Other,
}

impl Printer {
    /// Items in `<` order, as `sorted` gives them; the given order when they do not compare.
    fn sorted<T: Clone>(
        &self,
        items: Vec<T>,
        key: impl Fn(&T) -> &Value,
        ctx: &mut dyn Ctx,
    ) -> Vec<T> {
        let mut out = items.clone();
        for i in 1..out.len() {
            let mut j = i;
            while j > 0 {
                let lt = match ctx.compare(CmpOp::Lt, key(&out[j]), key(&out[j - 1])) {
                    Ok(v) => ctx.truthy(&v),
                    Err(_) => return items,
                };
                match lt {
                    Ok(true) => out.swap(j, j - 1),
                    Ok(false) => break,
                    Err(_) => return items,
                }
                j -= 1;
            }
        }
        out
    }

    fn shape(&self, v: &Value, ctx: &mut dyn Ctx) -> PyResult<Shape> {
        Ok(match v {
            Value::Dict(d) if d.borrow().kind.is_none() => {
                let items: Vec<(Value, Value)> = d
                    .borrow()
                    .items()
                    .map(|(k, x)| (k.clone(), x.clone()))
                    .collect();
                Shape::Dict(if self.sort_dicts {
                    self.sorted(items, |p| &p.0, ctx)
                } else {
                    items
                })
            }
            Value::List(l) => Shape::List(l.borrow().clone()),
            Value::Tuple(t) => Shape::Tuple(t.to_vec()),
            Value::Str(s) => Shape::Str(s.clone()),
            Value::Obj(_) if v.type_name() == "set" => {
                let items = ctx.iterate(v)?;
                Shape::Set(self.sorted(items, |x| x, ctx))
            }
            _ => Shape::Other,
        })
    }

    /// The one-line repr, with dict keys sorted at every depth.
    fn repr(&self, v: &Value, ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(match self.shape(v, ctx)? {
            Shape::Dict(items) => {
                let mut parts = vec![];
                for (k, x) in items {
                    parts.push(format!("{}: {}", self.repr(&k, ctx)?, self.repr(&x, ctx)?));
                }
                format!("{{{}}}", parts.join(", "))
            }
            Shape::List(items) => format!("[{}]", self.reprs(&items, ctx)?.join(", ")),
            Shape::Tuple(items) if items.len() == 1 => format!("({},)", self.repr(&items[0], ctx)?),
            Shape::Tuple(items) => format!("({})", self.reprs(&items, ctx)?.join(", ")),
            _ => ctx.repr(v)?,
        })
    }

    fn reprs(&self, items: &[Value], ctx: &mut dyn Ctx) -> PyResult<Vec<String>> {
        items.iter().map(|x| self.repr(x, ctx)).collect()
    }

    fn format(
        &self,
        v: &Value,
        out: &mut String,
        indent: usize,
        allowance: usize,
        level: usize,
        ctx: &mut dyn Ctx,
    ) -> PyResult<()> {
        ctx.check_interrupt()?;
        let rep = self.repr(v, ctx)?;
        let max_width = self.width - indent as i64 - allowance as i64;
        if (rep.chars().count() as i64) <= max_width {
            out.push_str(&rep);
            return Ok(());
        }
        let level = level + 1;
        let pad = " ".repeat(self.indent.saturating_sub(1));
        match self.shape(v, ctx)? {
            Shape::Dict(items) => {
                out.push('{');
                out.push_str(&pad);
                if !items.is_empty() {
                    let indent = indent + self.indent;
                    let delim = format!(",\n{}", " ".repeat(indent));
                    let last_index = items.len() - 1;
                    for (i, (k, x)) in items.iter().enumerate() {
                        let last = i == last_index;
                        let krep = self.repr(k, ctx)?;
                        out.push_str(&krep);
                        out.push_str(": ");
                        let allow = if last { allowance + 1 } else { 1 };
                        self.format(x, out, indent + krep.chars().count() + 2, allow, level, ctx)?;
                        if !last {
                            out.push_str(&delim);
                        }
                    }
                }
                out.push('}');
            }
            Shape::List(items) => {
                out.push('[');
                self.items(&items, out, indent, allowance + 1, level, ctx)?;
                out.push(']');
            }
            Shape::Tuple(items) => {
                let end = if items.len() == 1 { ",)" } else { ")" };
                out.push('(');
                self.items(&items, out, indent, allowance + end.len(), level, ctx)?;
                out.push_str(end);
            }
            Shape::Set(items) if !items.is_empty() => {
                out.push('{');
                self.items(&items, out, indent, allowance + 1, level, ctx)?;
                out.push('}');
            }
            Shape::Str(s) if !s.is_empty() => self.string(&s, out, indent, allowance, level),
            _ => out.push_str(&rep),
        }
        Ok(())
    }

    fn items(
        &self,
        items: &[Value],
        out: &mut String,
        indent: usize,
        allowance: usize,
        level: usize,
        ctx: &mut dyn Ctx,
    ) -> PyResult<()> {
        let indent = indent + self.indent;
        out.push_str(&" ".repeat(self.indent.saturating_sub(1)));
        let delimnl = format!(",\n{}", " ".repeat(indent));
        let mut delim = String::new();
        let mut max_width = self.width - indent as i64 + 1;
        let mut width = max_width;
        for (i, x) in items.iter().enumerate() {
            let last = i + 1 == items.len();
            if last {
                max_width -= allowance as i64;
                width -= allowance as i64;
            }
            if self.compact {
                let rep = self.repr(x, ctx)?;
                let w = rep.chars().count() as i64 + 2;
                if width < w {
                    width = max_width;
                    if !delim.is_empty() {
                        delim = delimnl.clone();
                    }
                }
                if width >= w {
                    width -= w;
                    out.push_str(&delim);
                    delim = ", ".into();
                    out.push_str(&rep);
                    continue;
                }
            }
            out.push_str(&delim);
            delim = delimnl.clone();
            self.format(x, out, indent, if last { allowance } else { 1 }, level, ctx)?;
        }
        Ok(())
    }

    /// A long string as pieces cut after runs of spaces, one per line, in parentheses at
    /// the top level.
    fn string(&self, s: &str, out: &mut String, indent: usize, allowance: usize, level: usize) {
        let (indent, allowance) = if level == 1 {
            (indent + 1, allowance + 1)
        } else {
            (indent, allowance)
        };
        let max_width = self.width - indent as i64;
        let mut chunks: Vec<String> = vec![];
        let lines = split_keep_ends(s);
        let mut rep = String::new();
        for (i, line) in lines.iter().enumerate() {
            rep = str_repr(line);
            let mut max1 = max_width;
            if i == lines.len() - 1 {
                max1 -= allowance as i64;
            }
            if rep.chars().count() as i64 <= max1 {
                chunks.push(rep.clone());
                continue;
            }
            let parts = words(line);
            let mut max2 = max_width;
            let mut current = String::new();
            for (j, part) in parts.iter().enumerate() {
                let candidate = format!("{current}{part}");
                if j == parts.len() - 1 && i == lines.len() - 1 {
                    max2 -= allowance as i64;
                }
                if str_repr(&candidate).chars().count() as i64 > max2 {
                    if !current.is_empty() {
                        chunks.push(str_repr(&current));
                    }
                    current = part.clone();
                } else {
                    current = candidate;
                }
            }
            if !current.is_empty() {
                chunks.push(str_repr(&current));
            }
        }
        if chunks.len() == 1 {
            out.push_str(&rep);
            return;
        }
        if level == 1 {
            out.push('(');
        }
        for (i, c) in chunks.iter().enumerate() {
            if i > 0 {
                out.push('\n');
                out.push_str(&" ".repeat(indent));
            }
            out.push_str(c);
        }
        if level == 1 {
            out.push(')');
        }
    }
}

fn split_keep_ends(s: &str) -> Vec<String> {
    let mut out = vec![];
    let mut cur = String::new();
    for c in s.chars() {
        cur.push(c);
        if c == '\n' {
            out.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// `re.findall(r'\S*\s*', line)` less its empty last match: words with their spaces.
fn words(line: &str) -> Vec<String> {
    let mut out = vec![];
    let mut cur = String::new();
    let mut in_space = false;
    for c in line.chars() {
        if !c.is_whitespace() && in_space {
            out.push(std::mem::take(&mut cur));
            in_space = false;
        }
        if c.is_whitespace() {
            in_space = true;
        }
        cur.push(c);
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

// `depth` and `underscore_numbers` are left out.
const PARAMS: &[&str] = &["object", "indent", "width", "compact", "sort_dicts"];

fn pformat_with(a: &Args, func: &str, sort_default: bool, ctx: &mut dyn Ctx) -> PyResult<String> {
    // `pprint` takes `stream` second; the rest are shared.
    let mut names: Vec<&str> = PARAMS.to_vec();
    if func != "pformat" {
        names.insert(1, "stream");
    }
    let s = a.bind(func, &names, 1)?;
    let at = |n: &str| {
        names
            .iter()
            .position(|x| *x == n)
            .map(|i| arg(&s, i).clone())
            .unwrap_or(Value::None)
    };
    let int_or = |v: Value, d: i64| -> PyResult<i64> {
        match v {
            Value::None => Ok(d),
            v => v.as_int(),
        }
    };
    let indent = int_or(at("indent"), 1)?;
    let width = int_or(at("width"), 80)?;
    if indent < 0 {
        return Err(crate::lang::PyErr::value_error("indent must be >= 0"));
    }
    if width == 0 {
        return Err(crate::lang::PyErr::value_error("width must be != 0"));
    }
    let flag = |v: Value, d: bool, ctx: &mut dyn Ctx| -> PyResult<bool> {
        match v {
            Value::None => Ok(d),
            v => ctx.truthy(&v),
        }
    };
    let p = Printer {
        indent: indent as usize,
        width,
        compact: flag(at("compact"), false, ctx)?,
        sort_dicts: flag(at("sort_dicts"), sort_default, ctx)?,
    };
    let mut out = String::new();
    p.format(arg(&s, 0), &mut out, 0, 0, 0, ctx)?;
    Ok(out)
}

fn print_to(a: &Args, func: &str, sort_default: bool, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let text = pformat_with(a, func, sort_default, ctx)? + "\n";
    let stream =
        a.kw.iter()
            .find(|(k, _)| k == "stream")
            .map(|(_, v)| v.clone())
            .or_else(|| a.pos.get(1).cloned())
            .filter(|v| !matches!(v, Value::None));
    match stream {
        Some(s) => {
            let write = ctx.getattr(&s, "write")?;
            ctx.call(&write, Args::new(vec![Value::from(text)]))?;
        }
        None => ctx.emit(Output::Stream {
            name: StreamName::Stdout,
            text,
        }),
    }
    Ok(Value::None)
}

pub fn module() -> Value {
    NativeModule::new(
        "pprint",
        "Support to pretty-print lists, tuples, & dictionaries recursively.",
    )
    .with(
        "pformat",
        f(
            "pformat",
            "pformat(object, indent=1, width=80, *, compact=False, sort_dicts=True)",
            |a, ctx| Ok(Value::from(pformat_with(a, "pformat", true, ctx)?)),
        ),
    )
    .with(
        "pprint",
        f(
            "pprint",
            "pprint(object, stream=None, indent=1, width=80, *, compact=False, sort_dicts=True)",
            |a, ctx| print_to(a, "pprint", true, ctx),
        ),
    )
    .with(
        "pp",
        f(
            "pp",
            "pp(object, *args, sort_dicts=False, **kwargs)",
            |a, ctx| print_to(a, "pp", false, ctx),
        ),
    )
    .into_value()
}
