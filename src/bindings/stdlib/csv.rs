//! `csv`: `reader` and `writer` over any file-like object (an `open` file, a `StringIO`, a
//! list of lines), `DictReader` and `DictWriter`, with CPython's dialect options
//! (`delimiter`, `quotechar`, `lineterminator`, `skipinitialspace`, `quoting`) and its
//! quoting: fields holding the delimiter, the quote character or a line break are quoted,
//! quotes doubled, and a quoted field may span lines.

use std::any::Any;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use super::{f, Method};
use crate::bindings::common::arg;
use crate::lang::{Args, Ctx, Dict, NativeClass, NativeModule, Object, PyErr, PyResult, Value};

const QUOTE_MINIMAL: i64 = 0;
const QUOTE_ALL: i64 = 1;
const QUOTE_NONNUMERIC: i64 = 2;
const QUOTE_NONE: i64 = 3;

fn csv_error(msg: impl Into<String>) -> PyErr {
    PyErr::new("Error", msg)
}

#[derive(Clone)]
struct Dialect {
    delimiter: char,
    quotechar: char,
    lineterminator: String,
    skipinitialspace: bool,
    quoting: i64,
}

// Named dialects, `doublequote=False`, `escapechar` and `strict` are left out.
const DIALECT_NAMES: &[&str] = &[
    "delimiter",
    "quotechar",
    "lineterminator",
    "skipinitialspace",
    "quoting",
];

impl Dialect {
    /// The options among keyword arguments `kw`.
    fn from_kw(kw: &[(String, Value)], ctx: &mut dyn Ctx) -> PyResult<Dialect> {
        let mut d = Dialect {
            delimiter: ',',
            quotechar: '"',
            lineterminator: "\r\n".into(),
            skipinitialspace: false,
            quoting: QUOTE_MINIMAL,
        };
        let one_char = |name: &str, v: &Value| -> PyResult<char> {
            match v {
                Value::Str(s) if s.chars().count() == 1 => Ok(s.chars().next().unwrap_or(',')),
                Value::Str(_) => Err(PyErr::type_error(format!(
                    "\"{name}\" must be a 1-character string"
                ))),
                other => Err(PyErr::type_error(format!(
                    "\"{name}\" must be string, not {}",
                    other.type_name()
                ))),
            }
        };
        for (k, v) in kw {
            match k.as_str() {
                "delimiter" => d.delimiter = one_char("delimiter", v)?,
                "quotechar" => d.quotechar = one_char("quotechar", v)?,
                "lineterminator" => d.lineterminator = v.as_str()?.to_string(),
                "skipinitialspace" => d.skipinitialspace = ctx.truthy(v)?,
                "quoting" => d.quoting = v.as_int()?,
                _ => {}
            }
        }
        Ok(d)
    }
}

/// The keyword arguments that are dialect options; a TypeError for any other.
type Keywords = Vec<(String, Value)>;

fn split_kw(a: &Args, func: &str, own: &[&str]) -> PyResult<(Keywords, Keywords)> {
    let (mut dialect, mut rest) = (vec![], vec![]);
    for (k, v) in &a.kw {
        if DIALECT_NAMES.contains(&k.as_str()) {
            dialect.push((k.clone(), v.clone()));
        } else if own.contains(&k.as_str()) {
            rest.push((k.clone(), v.clone()));
        } else {
            return Err(PyErr::type_error(format!(
                "'{k}' is an invalid keyword argument for {func}()"
            )));
        }
    }
    Ok((dialect, rest))
}

// ---- reading ----

/// Splits the text of one or more lines into the records they hold.
struct Parser {
    d: Dialect,
    /// Lines not yet read.
    lines: VecDeque<String>,
}

impl Parser {
    fn record(&mut self) -> PyResult<Option<Vec<(String, bool)>>> {
        let Some(mut line) = self.lines.pop_front() else {
            return Ok(None);
        };
        let (q, delim) = (self.d.quotechar, self.d.delimiter);
        let mut fields: Vec<(String, bool)> = vec![];
        let mut field = String::new();
        let mut quoted = false;
        let mut in_quotes = false;
        let mut at_start = true;
        loop {
            let chars: Vec<char> = line.chars().collect();
            let mut i = 0;
            while i < chars.len() {
                let c = chars[i];
                if in_quotes {
                    if c == q {
                        if chars.get(i + 1) == Some(&q) {
                            field.push(q);
                            i += 2;
                            continue;
                        }
                        in_quotes = false;
                    } else {
                        field.push(c);
                    }
                    i += 1;
                    continue;
                }
                match c {
                    c if c == delim => {
                        fields.push((std::mem::take(&mut field), quoted));
                        quoted = false;
                        at_start = true;
                        i += 1;
                        if self.d.skipinitialspace {
                            while chars.get(i) == Some(&' ') {
                                i += 1;
                            }
                        }
                        continue;
                    }
                    '\r' | '\n' => {}
                    c if c == q && at_start && self.d.quoting != QUOTE_NONE => {
                        in_quotes = true;
                        quoted = true;
                    }
                    c => field.push(c),
                }
                at_start = false;
                i += 1;
            }
            if !in_quotes {
                break;
            }
            // A quoted field goes on over the line break (already in the field when the
            // line kept its end).
            match self.lines.pop_front() {
                Some(next) => {
                    if !line.ends_with(['\n', '\r']) {
                        field.push('\n');
                    }
                    line = next;
                }
                None => return Err(csv_error("unexpected end of data")),
            }
        }
        let blank = fields.is_empty() && field.is_empty() && !quoted;
        if blank {
            return Ok(Some(vec![]));
        }
        fields.push((field, quoted));
        Ok(Some(fields))
    }

    /// The next record as Python values (`QUOTE_NONNUMERIC` reads unquoted fields as floats).
    fn next_row(&mut self) -> PyResult<Option<Vec<Value>>> {
        let Some(fields) = self.record()? else {
            return Ok(None);
        };
        fields
            .into_iter()
            .map(|(s, quoted)| {
                if self.d.quoting == QUOTE_NONNUMERIC && !quoted {
                    s.trim().parse::<f64>().map(Value::Float).map_err(|_| {
                        PyErr::value_error(format!(
                            "could not convert string to float: {}",
                            crate::lang::str_repr(&s)
                        ))
                    })
                } else {
                    Ok(Value::from(s))
                }
            })
            .collect::<PyResult<Vec<_>>>()
            .map(Some)
    }
}

fn lines_of(src: &Value, ctx: &mut dyn Ctx) -> PyResult<VecDeque<String>> {
    let mut out = VecDeque::new();
    for v in ctx.iterate(src)? {
        match v {
            Value::Str(s) => out.push_back(s.to_string()),
            other => {
                return Err(csv_error(format!(
                "iterator should return strings, not {} (the file should be opened in text mode)",
                other.type_name()
            )))
            }
        }
    }
    Ok(out)
}

/// `csv.reader(...)` and `csv.DictReader(...)`: rows as lists, or as dicts by field name.
struct Reader {
    parser: RefCell<Parser>,
    line_num: RefCell<i64>,
    /// For a `DictReader`: the field names (read from the first row when not given),
    /// `restkey` and `restval`.
    dict: Option<RefCell<DictRows>>,
}

struct DictRows {
    fieldnames: Option<Vec<Value>>,
    restkey: Value,
    restval: Value,
}

impl Reader {
    fn row(&self) -> PyResult<Option<Vec<Value>>> {
        let r = self.parser.borrow_mut().next_row();
        if let Ok(Some(_)) = &r {
            *self.line_num.borrow_mut() += 1;
        }
        r
    }

    fn fieldnames(&self) -> PyResult<Value> {
        let Some(d) = &self.dict else {
            return Ok(Value::None);
        };
        if d.borrow().fieldnames.is_none() {
            let first = self.row()?;
            d.borrow_mut().fieldnames = first;
        }
        Ok(d.borrow()
            .fieldnames
            .clone()
            .map(Value::list)
            .unwrap_or(Value::None))
    }
}

impl Object for Reader {
    fn type_name(&self) -> String {
        match self.dict {
            Some(_) => "DictReader".into(),
            None => "_csv.reader".into(),
        }
    }
    fn getattr(&self, _this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        match name {
            "line_num" => Ok(Some(Value::Int(*self.line_num.borrow()))),
            "fieldnames" if self.dict.is_some() => self.fieldnames().map(Some),
            _ => Ok(None),
        }
    }
    fn dir(&self) -> Vec<String> {
        let mut d = vec!["line_num".to_string()];
        if self.dict.is_some() {
            d.push("fieldnames".into());
        }
        d
    }
    fn iter(&self, this: &Value, _ctx: &mut dyn Ctx) -> PyResult<Value> {
        Ok(this.clone())
    }
    fn next(&self, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        let Some(d) = &self.dict else {
            return Ok(self.row()?.map(Value::list));
        };
        let names = match self.fieldnames()? {
            Value::List(l) => l.borrow().clone(),
            _ => return Ok(None),
        };
        // A DictReader skips blank rows.
        let row = loop {
            match self.row()? {
                Some(r) if r.is_empty() => continue,
                Some(r) => break r,
                None => return Ok(None),
            }
        };
        let d = d.borrow();
        let mut out = Dict::default();
        for (i, k) in names.iter().enumerate() {
            out.insert(k.clone(), row.get(i).cloned().unwrap_or(d.restval.clone()))?;
        }
        if row.len() > names.len() {
            out.insert(d.restkey.clone(), Value::list(row[names.len()..].to_vec()))?;
        }
        Ok(Some(Value::Dict(Rc::new(RefCell::new(out)))))
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

fn reader(a: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let (dialect, _) = split_kw(a, "reader", &[])?;
    let src = a
        .pos
        .first()
        .ok_or_else(|| PyErr::type_error("expected at least 1 argument, got 0"))?;
    let d = Dialect::from_kw(&dialect, ctx)?;
    Ok(Value::native(Reader {
        parser: RefCell::new(Parser {
            d,
            lines: lines_of(src, ctx)?,
        }),
        line_num: RefCell::new(0),
        dict: None,
    }))
}

fn dict_reader(a: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let own = ["f", "fieldnames", "restkey", "restval"];
    let (dialect, rest) = split_kw(a, "DictReader", &own)?;
    let s = Args {
        pos: a.pos.clone(),
        kw: rest,
    }
    .bind("DictReader", &own, 1)?;
    let fieldnames = match arg(&s, 1) {
        Value::None => None,
        v => Some(ctx.iterate(v)?),
    };
    Ok(Value::native(Reader {
        parser: RefCell::new(Parser {
            d: Dialect::from_kw(&dialect, ctx)?,
            lines: lines_of(arg(&s, 0), ctx)?,
        }),
        line_num: RefCell::new(0),
        dict: Some(RefCell::new(DictRows {
            fieldnames,
            restkey: arg(&s, 2).clone(),
            restval: arg(&s, 3).clone(),
        })),
    }))
}

// ---- writing ----

struct Writer {
    file: Value,
    d: Dialect,
    /// For a `DictWriter`: field names, `restval` and whether extra keys raise.
    dict: Option<(Vec<Value>, Value, bool)>,
}

impl Writer {
    fn field(&self, v: &Value, ctx: &mut dyn Ctx) -> PyResult<String> {
        let numeric = matches!(v, Value::Int(_) | Value::Float(_) | Value::Bool(_));
        let text = match v {
            Value::None => String::new(),
            Value::Str(s) => s.to_string(),
            other => ctx.str(other)?,
        };
        let special = text.contains(self.d.delimiter)
            || text.contains(self.d.quotechar)
            || text.contains(['\r', '\n']);
        let quote = match self.d.quoting {
            QUOTE_ALL => true,
            QUOTE_NONNUMERIC => !numeric,
            QUOTE_NONE => {
                if special {
                    return Err(csv_error("need to escape, but no escapechar set"));
                }
                false
            }
            _ => special,
        };
        if !quote {
            return Ok(text);
        }
        let q = self.d.quotechar.to_string();
        Ok(format!("{q}{}{q}", text.replace(&q, &format!("{q}{q}"))))
    }

    fn write_row(&self, row: &Value, ctx: &mut dyn Ctx) -> PyResult<Value> {
        if matches!(row, Value::Str(_)) || ctx.get_iter(row).is_err() {
            return Err(csv_error(format!(
                "iterable expected, not {}",
                row.type_name()
            )));
        }
        let items = ctx.iterate(row)?;
        let mut parts = vec![];
        for v in &items {
            parts.push(self.field(v, ctx)?);
        }
        // A row of one empty field is written quoted, so that it reads back as a row.
        let mut line = if parts.len() == 1 && parts[0].is_empty() {
            let q = self.d.quotechar;
            format!("{q}{q}")
        } else {
            parts.join(&self.d.delimiter.to_string())
        };
        line.push_str(&self.d.lineterminator);
        let write = ctx.getattr(&self.file, "write")?;
        ctx.call(&write, Args::new(vec![Value::from(line)]))
    }

    fn dict_row(&self, row: &Value, ctx: &mut dyn Ctx) -> PyResult<Value> {
        let Some((names, restval, raise)) = &self.dict else {
            return Ok(Value::None);
        };
        let Value::Dict(d) = row else {
            return Err(PyErr::attribute_error(format!(
                "'{}' object has no attribute 'keys'",
                row.type_name()
            )));
        };
        if *raise {
            let mut extra = vec![];
            for (k, _) in d.borrow().items() {
                let known = names
                    .iter()
                    .any(|n| crate::lang::HashKey::of(n).ok() == crate::lang::HashKey::of(k).ok());
                if !known {
                    extra.push(k.clone());
                }
            }
            if !extra.is_empty() {
                let shown: Vec<String> =
                    extra.iter().map(|k| ctx.repr(k)).collect::<PyResult<_>>()?;
                return Err(PyErr::value_error(format!(
                    "dict contains fields not in fieldnames: {}",
                    shown.join(", ")
                )));
            }
        }
        let mut values = vec![];
        for n in names {
            values.push(d.borrow().get(n)?.unwrap_or(restval.clone()));
        }
        self.write_row(&Value::list(values), ctx)
    }
}

const METHODS: &[Method<Writer>] = &[
    ("writerow", |w, _, a, ctx| {
        let s = a.bind("writerow", &["row"], 1)?;
        match w.dict {
            Some(_) => w.dict_row(arg(&s, 0), ctx),
            None => w.write_row(arg(&s, 0), ctx),
        }
    }),
    ("writerows", |w, _, a, ctx| {
        let s = a.bind("writerows", &["rows"], 1)?;
        for row in ctx.iterate(arg(&s, 0))? {
            match w.dict {
                Some(_) => w.dict_row(&row, ctx)?,
                None => w.write_row(&row, ctx)?,
            };
        }
        Ok(Value::None)
    }),
    ("writeheader", |w, _, a, ctx| {
        a.bind("writeheader", &[], 0)?;
        match &w.dict {
            Some((names, _, _)) => w.write_row(&Value::list(names.clone()), ctx),
            None => Ok(Value::None),
        }
    }),
];

impl Object for Writer {
    fn type_name(&self) -> String {
        match self.dict {
            Some(_) => "DictWriter".into(),
            None => "_csv.writer".into(),
        }
    }
    fn getattr(&self, this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        if name == "fieldnames" {
            return Ok(self.dict.as_ref().map(|(n, _, _)| Value::list(n.clone())));
        }
        // `writeheader` belongs to DictWriter only.
        if name == "writeheader" && self.dict.is_none() {
            return Ok(None);
        }
        Ok(super::bound_method(this, METHODS, name))
    }
    fn dir(&self) -> Vec<String> {
        let mut d: Vec<String> = vec!["writerow".into(), "writerows".into()];
        if self.dict.is_some() {
            d.extend(["writeheader".into(), "fieldnames".into()]);
        }
        d
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

fn writer(a: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let (dialect, _) = split_kw(a, "writer", &[])?;
    let file = a
        .pos
        .first()
        .cloned()
        .ok_or_else(|| PyErr::type_error("expected at least 1 argument, got 0"))?;
    if ctx.getattr(&file, "write").is_err() {
        return Err(PyErr::type_error("argument 1 must have a \"write\" method"));
    }
    Ok(Value::native(Writer {
        file,
        d: Dialect::from_kw(&dialect, ctx)?,
        dict: None,
    }))
}

fn dict_writer(a: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let own = ["f", "fieldnames", "restval", "extrasaction"];
    let (dialect, rest) = split_kw(a, "DictWriter", &own)?;
    let s = Args {
        pos: a.pos.clone(),
        kw: rest,
    }
    .bind("DictWriter", &own, 2)?;
    let raise = match arg(&s, 3) {
        Value::None => true,
        Value::Str(x) if &**x == "raise" => true,
        Value::Str(x) if &**x == "ignore" => false,
        other => {
            return Err(PyErr::value_error(format!(
                "extrasaction ({}) must be 'raise' or 'ignore'",
                ctx.str(other)?
            )))
        }
    };
    let restval = match &s[2] {
        Some(v) => v.clone(),
        None => Value::str(""),
    };
    let w = Writer {
        file: arg(&s, 0).clone(),
        d: Dialect::from_kw(&dialect, ctx)?,
        dict: Some((ctx.iterate(arg(&s, 1))?, restval, raise)),
    };
    Ok(Value::native(w))
}

pub fn module(ctx: &mut dyn Ctx) -> Value {
    let class = |name: &str, doc: &str, body: fn(&Args, &mut dyn Ctx) -> PyResult<Value>| {
        NativeClass::new(name, "csv", doc)
            .constructor(body)
            .into_value()
    };
    NativeModule::new("csv", "CSV parsing and writing.")
        .with(
            "reader",
            f("reader", "reader(iterable, **fmtparams)", reader),
        )
        .with(
            "writer",
            f("writer", "writer(fileobj, **fmtparams)", writer),
        )
        .with(
            "DictReader",
            class(
                "DictReader",
                "DictReader(f, fieldnames=None, restkey=None, restval=None, **kwds)",
                dict_reader,
            ),
        )
        .with(
            "DictWriter",
            class(
                "DictWriter",
                "DictWriter(f, fieldnames, restval='', extrasaction='raise', **kwds)",
                dict_writer,
            ),
        )
        .with("QUOTE_MINIMAL", Value::Int(QUOTE_MINIMAL))
        .with("QUOTE_ALL", Value::Int(QUOTE_ALL))
        .with("QUOTE_NONNUMERIC", Value::Int(QUOTE_NONNUMERIC))
        .with("QUOTE_NONE", Value::Int(QUOTE_NONE))
        .with("Error", crate::lang::exception_class(ctx, "Error"))
        .into_value()
}
