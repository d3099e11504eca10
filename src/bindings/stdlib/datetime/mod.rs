//! `datetime`: naive `date` and `datetime` (calendar arithmetic by `chrono`), `timedelta`
//! (`delta`), `strftime`/`strptime`/`fromisoformat` (`format`), with CPython's reprs,
//! strs, comparisons, arithmetic and ValueError texts. Time zones are left out: every
//! value is naive, as `datetime.now()` gives it.

mod delta;
pub(super) mod format;

use std::any::Any;
use std::cmp::Ordering;

use chrono::{Datelike, Duration, NaiveDate, NaiveDateTime, NaiveTime, Timelike};

use super::{bound_method, f, method_names, Method};
use crate::bindings::common::arg;
use crate::lang::{
    Args, BinOp, CmpOp, Ctx, NativeClass, NativeModule, Object, PyErr, PyResult, Value,
};
use delta::{Delta, MICROS_PER_DAY};

/// Whether `ord` satisfies `op`.
pub fn ordered(op: CmpOp, ord: Ordering) -> bool {
    match op {
        CmpOp::Eq => ord == Ordering::Equal,
        CmpOp::Ne => ord != Ordering::Equal,
        CmpOp::Lt => ord == Ordering::Less,
        CmpOp::Le => ord != Ordering::Greater,
        CmpOp::Gt => ord == Ordering::Greater,
        CmpOp::Ge => ord != Ordering::Less,
    }
}

/// `datetime.date`.
pub struct Date(NaiveDate);
/// `datetime.datetime`.
pub struct DateTime(NaiveDateTime);

fn int(v: &Value) -> PyResult<i64> {
    match v {
        Value::Int(_) | Value::Bool(_) => v.as_int(),
        other => Err(PyErr::type_error(format!(
            "'{}' object cannot be interpreted as an integer",
            other.type_name()
        ))),
    }
}

/// A calendar date from its fields, with CPython's range errors.
fn make_date(y: i64, m: i64, d: i64) -> PyResult<NaiveDate> {
    if !(1..=9999).contains(&y) {
        return Err(PyErr::value_error(format!("year {y} is out of range")));
    }
    if !(1..=12).contains(&m) {
        return Err(PyErr::value_error("month must be in 1..12"));
    }
    NaiveDate::from_ymd_opt(y as i32, m as u32, d.clamp(0, 99) as u32)
        .filter(|_| d >= 1)
        .ok_or_else(|| PyErr::value_error("day is out of range for month"))
}

fn make_time(h: i64, mi: i64, s: i64, us: i64) -> PyResult<NaiveTime> {
    for (v, name, hi) in [
        (h, "hour", 23),
        (mi, "minute", 59),
        (s, "second", 59),
        (us, "microsecond", 999_999),
    ] {
        if !(0..=hi).contains(&v) {
            return Err(PyErr::value_error(format!("{name} must be in 0..{hi}")));
        }
    }
    NaiveTime::from_hms_micro_opt(h as u32, mi as u32, s as u32, us as u32)
        .ok_or_else(|| PyErr::value_error("time out of range"))
}

const DATE_FIELDS: &[&str] = &["year", "month", "day"];
const TIME_FIELDS: &[&str] = &["hour", "minute", "second", "microsecond"];

fn date_new(a: &Args, _: &mut dyn Ctx) -> PyResult<Value> {
    let s = a.bind("date", DATE_FIELDS, 3)?;
    let d = make_date(int(arg(&s, 0))?, int(arg(&s, 1))?, int(arg(&s, 2))?)?;
    Ok(Value::native(Date(d)))
}

fn datetime_new(a: &Args, _: &mut dyn Ctx) -> PyResult<Value> {
    let names: Vec<&str> = DATE_FIELDS.iter().chain(TIME_FIELDS).copied().collect();
    let s = a.bind("datetime", &names, 3)?;
    let opt = |i: usize| match arg(&s, i) {
        Value::None => Ok(0),
        v => int(v),
    };
    let d = make_date(int(arg(&s, 0))?, int(arg(&s, 1))?, int(arg(&s, 2))?)?;
    let t = make_time(opt(3)?, opt(4)?, opt(5)?, opt(6)?)?;
    Ok(Value::native(DateTime(d.and_time(t))))
}

fn micros(dt: &NaiveDateTime) -> i128 {
    let days = dt.date().num_days_from_ce() as i128;
    let t = dt.time();
    days * MICROS_PER_DAY
        + t.num_seconds_from_midnight() as i128 * 1_000_000
        + (t.nanosecond() / 1000) as i128
}

fn shifted(dt: &NaiveDateTime, by: i128) -> PyResult<NaiveDateTime> {
    i64::try_from(by)
        .ok()
        .and_then(|us| dt.checked_add_signed(Duration::microseconds(us)))
        .filter(|r| (1..=9999).contains(&r.year()))
        .ok_or_else(|| PyErr::new("OverflowError", "date value out of range"))
}

fn iso_datetime(dt: &NaiveDateTime, sep: &str) -> String {
    let mut s = format!(
        "{}{sep}{:02}:{:02}:{:02}",
        dt.date().format("%Y-%m-%d"),
        dt.hour(),
        dt.minute(),
        dt.second()
    );
    let us = dt.nanosecond() / 1000;
    if us != 0 {
        s.push_str(&format!(".{us:06}"));
    }
    s
}

/// `replace(**fields)` over the named fields of `now`.
fn replaced(now: &[i64], names: &[&str], a: &Args) -> PyResult<Vec<i64>> {
    let s = a.bind("replace", names, 0)?;
    let mut out = now.to_vec();
    for (i, v) in s.iter().enumerate() {
        if let Some(v) = v {
            out[i] = int(v)?;
        }
    }
    Ok(out)
}

const DATE_METHODS: &[Method<Date>] = &[
    ("weekday", |d, _, _, _| {
        Ok(Value::Int(d.0.weekday().num_days_from_monday() as i64))
    }),
    ("isoweekday", |d, _, _, _| {
        Ok(Value::Int(d.0.weekday().number_from_monday() as i64))
    }),
    ("isoformat", |d, _, _, _| {
        Ok(Value::from(d.0.format("%Y-%m-%d").to_string()))
    }),
    ("toordinal", |d, _, _, _| {
        Ok(Value::Int(d.0.num_days_from_ce() as i64))
    }),
    ("strftime", |d, _, a, _| {
        let s = a.bind("strftime", &["format"], 1)?;
        let dt = d.0.and_time(NaiveTime::MIN);
        Ok(Value::from(format::strftime(&dt, arg(&s, 0).as_str()?)))
    }),
    ("replace", |d, _, a, _| {
        let now = [d.0.year() as i64, d.0.month() as i64, d.0.day() as i64];
        let v = replaced(&now, DATE_FIELDS, a)?;
        Ok(Value::native(Date(make_date(v[0], v[1], v[2])?)))
    }),
];

const DATETIME_METHODS: &[Method<DateTime>] = &[
    ("weekday", |d, _, _, _| {
        Ok(Value::Int(d.0.weekday().num_days_from_monday() as i64))
    }),
    ("isoweekday", |d, _, _, _| {
        Ok(Value::Int(d.0.weekday().number_from_monday() as i64))
    }),
    ("isoformat", |d, _, a, _| {
        let s = a.bind("isoformat", &["sep"], 0)?;
        let sep = match arg(&s, 0) {
            Value::None => "T".to_string(),
            v => v.as_str()?.to_string(),
        };
        Ok(Value::from(iso_datetime(&d.0, &sep)))
    }),
    ("strftime", |d, _, a, _| {
        let s = a.bind("strftime", &["format"], 1)?;
        Ok(Value::from(format::strftime(&d.0, arg(&s, 0).as_str()?)))
    }),
    ("date", |d, _, _, _| Ok(Value::native(Date(d.0.date())))),
    ("toordinal", |d, _, _, _| {
        Ok(Value::Int(d.0.num_days_from_ce() as i64))
    }),
    ("replace", |d, _, a, _| {
        let t = d.0;
        let now = [
            t.year() as i64,
            t.month() as i64,
            t.day() as i64,
            t.hour() as i64,
            t.minute() as i64,
            t.second() as i64,
            (t.nanosecond() / 1000) as i64,
        ];
        let names: Vec<&str> = DATE_FIELDS.iter().chain(TIME_FIELDS).copied().collect();
        let v = replaced(&now, &names, a)?;
        let date = make_date(v[0], v[1], v[2])?;
        Ok(Value::native(DateTime(
            date.and_time(make_time(v[3], v[4], v[5], v[6])?),
        )))
    }),
];

fn field(name: &str, dt: &NaiveDateTime, with_time: bool) -> Option<Value> {
    let v = match name {
        "year" => dt.year() as i64,
        "month" => dt.month() as i64,
        "day" => dt.day() as i64,
        "hour" if with_time => dt.hour() as i64,
        "minute" if with_time => dt.minute() as i64,
        "second" if with_time => dt.second() as i64,
        "microsecond" if with_time => (dt.nanosecond() / 1000) as i64,
        _ => return None,
    };
    Some(Value::Int(v))
}

/// Comparing a date with a datetime: never equal, and no order (CPython tries the
/// datetime's reflected comparison first, so its text names the datetime first).
fn cross_compare(op: CmpOp, other: &Value) -> PyResult<Option<Value>> {
    if other.downcast::<Date>().is_none() && other.downcast::<DateTime>().is_none() {
        return Ok(None);
    }
    match op {
        CmpOp::Eq => Ok(Some(Value::Bool(false))),
        CmpOp::Ne => Ok(Some(Value::Bool(true))),
        _ => Err(PyErr::type_error(
            "can't compare datetime.datetime to datetime.date",
        )),
    }
}

/// What `date` and `datetime` share: both are a point on one time line (a date is its
/// midnight), compared and moved along it the same way.
trait Instant: Object + Sized {
    fn naive(&self) -> NaiveDateTime;
    fn at(dt: NaiveDateTime) -> Self;
    /// How far `td` moves this kind: a date moves by the delta's whole days only.
    fn step(td: &Delta) -> i128;
}

impl Instant for Date {
    fn naive(&self) -> NaiveDateTime {
        self.0.and_time(NaiveTime::MIN)
    }
    fn at(dt: NaiveDateTime) -> Self {
        Date(dt.date())
    }
    fn step(td: &Delta) -> i128 {
        td.days() as i128 * MICROS_PER_DAY
    }
}

impl Instant for DateTime {
    fn naive(&self) -> NaiveDateTime {
        self.0
    }
    fn at(dt: NaiveDateTime) -> Self {
        DateTime(dt)
    }
    fn step(td: &Delta) -> i128 {
        td.micros
    }
}

/// `x + timedelta`, `x - timedelta` and `x - y` for two values of one kind.
fn arithmetic<T: Instant>(
    this: &T,
    op: BinOp,
    other: &Value,
    reflected: bool,
) -> PyResult<Option<Value>> {
    if let Some(td) = other.downcast::<Delta>() {
        let by = match (op, reflected) {
            (BinOp::Add, _) => T::step(td),
            (BinOp::Sub, false) => -T::step(td),
            _ => return Ok(None),
        };
        return Ok(Some(Value::native(T::at(shifted(&this.naive(), by)?))));
    }
    if let (BinOp::Sub, Some(o)) = (op, other.downcast::<T>()) {
        let diff = micros(&this.naive()) - micros(&o.naive());
        return Ok(Some(Delta::value(if reflected { -diff } else { diff })?));
    }
    Ok(None)
}

/// Ordering within one kind; across kinds, [`cross_compare`].
fn comparison<T: Instant>(this: &T, op: CmpOp, other: &Value) -> PyResult<Option<Value>> {
    match other.downcast::<T>() {
        Some(o) => Ok(Some(Value::Bool(ordered(op, this.naive().cmp(&o.naive()))))),
        None => cross_compare(op, other),
    }
}

impl Object for Date {
    fn type_name(&self) -> String {
        "date".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        let d = self.0;
        Ok(format!(
            "datetime.date({}, {}, {})",
            d.year(),
            d.month(),
            d.day()
        ))
    }
    fn str(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(self.0.format("%Y-%m-%d").to_string())
    }
    fn getattr(&self, this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        if let Some(v) = field(name, &self.0.and_time(NaiveTime::MIN), false) {
            return Ok(Some(v));
        }
        Ok(bound_method(this, DATE_METHODS, name))
    }
    fn dir(&self) -> Vec<String> {
        let mut d: Vec<String> = method_names(DATE_METHODS);
        d.extend(DATE_FIELDS.iter().map(|s| s.to_string()));
        d
    }
    fn binop(
        &self,
        op: BinOp,
        other: &Value,
        reflected: bool,
        _: &mut dyn Ctx,
    ) -> PyResult<Option<Value>> {
        arithmetic(self, op, other, reflected)
    }
    fn compare(&self, op: CmpOp, other: &Value, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        comparison(self, op, other)
    }
    fn hash(&self) -> Option<u64> {
        Some(micros(&self.naive()) as u64)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl Object for DateTime {
    fn type_name(&self) -> String {
        "datetime".into()
    }
    fn class_chain(&self) -> Vec<String> {
        vec!["datetime".into(), "date".into()]
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        let t = self.0;
        let mut parts = vec![
            t.year().to_string(),
            t.month().to_string(),
            t.day().to_string(),
            t.hour().to_string(),
            t.minute().to_string(),
        ];
        let us = t.nanosecond() / 1000;
        if t.second() != 0 || us != 0 {
            parts.push(t.second().to_string());
        }
        if us != 0 {
            parts.push(us.to_string());
        }
        Ok(format!("datetime.datetime({})", parts.join(", ")))
    }
    fn str(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(iso_datetime(&self.0, " "))
    }
    fn getattr(&self, this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        if let Some(v) = field(name, &self.0, true) {
            return Ok(Some(v));
        }
        Ok(bound_method(this, DATETIME_METHODS, name))
    }
    fn dir(&self) -> Vec<String> {
        let mut d: Vec<String> = DATETIME_METHODS
            .iter()
            .map(|(n, _)| n.to_string())
            .collect();
        d.extend(DATE_FIELDS.iter().chain(TIME_FIELDS).map(|s| s.to_string()));
        d
    }
    fn binop(
        &self,
        op: BinOp,
        other: &Value,
        reflected: bool,
        _: &mut dyn Ctx,
    ) -> PyResult<Option<Value>> {
        arithmetic(self, op, other, reflected)
    }
    fn compare(&self, op: CmpOp, other: &Value, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        comparison(self, op, other)
    }
    fn hash(&self) -> Option<u64> {
        Some(micros(&self.naive()) as u64)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

fn now() -> NaiveDateTime {
    let t = chrono::Local::now().naive_local();
    // CPython keeps microseconds.
    t.with_nanosecond(t.nanosecond() / 1000 * 1000).unwrap_or(t)
}

fn one_str(a: &Args, func: &str, names: &[&str]) -> PyResult<Vec<String>> {
    let s = a.bind(func, names, names.len())?;
    s.iter()
        .map(|v| match v {
            Some(Value::Str(t)) => Ok(t.to_string()),
            Some(other) => Err(PyErr::type_error(format!(
                "{func}() argument 1 must be str, not {}",
                other.type_name()
            ))),
            None => Ok(String::new()),
        })
        .collect()
}

pub fn module() -> Value {
    let date = NativeClass::new("date", "datetime", "date(year, month, day) --> date object")
        .constructor(date_new)
        .static_attr(
            "today",
            f("today", "Current date.", |_, _| {
                Ok(Value::native(Date(now().date())))
            }),
        )
        .static_attr(
            "fromisoformat",
            f(
                "fromisoformat",
                "str -> Construct a date from a string in ISO 8601 format.",
                |a, _| {
                    let s = one_str(a, "fromisoformat", &["date_string"])?;
                    Ok(Value::native(Date(format::iso_date(&s[0])?)))
                },
            ),
        );
    let datetime = NativeClass::new(
        "datetime",
        "datetime",
        "datetime(year, month, day[, hour[, minute[, second[, microsecond]]]])",
    )
    .base("date")
    .constructor(datetime_new)
    .static_attr(
        "now",
        f(
            "now",
            "Returns new datetime object representing current time local to tz.",
            |_, _| Ok(Value::native(DateTime(now()))),
        ),
    )
    .static_attr(
        "today",
        f("today", "Current date or datetime.", |_, _| {
            Ok(Value::native(DateTime(now())))
        }),
    )
    .static_attr(
        "fromisoformat",
        f(
            "fromisoformat",
            "string -> datetime from a string in most ISO 8601 formats",
            |a, _| {
                let s = one_str(a, "fromisoformat", &["date_string"])?;
                Ok(Value::native(DateTime(format::iso_datetime(&s[0])?)))
            },
        ),
    )
    .static_attr(
        "strptime",
        f(
            "strptime",
            "string, format -> new datetime parsed from a string",
            |a, _| {
                let s = one_str(a, "strptime", &["date_string", "format"])?;
                Ok(Value::native(DateTime(format::strptime(&s[0], &s[1])?)))
            },
        ),
    );
    let timedelta = NativeClass::new(
        "timedelta",
        "datetime",
        "timedelta(days=0, seconds=0, microseconds=0, milliseconds=0, minutes=0, hours=0, weeks=0)",
    )
    .constructor(delta::timedelta);
    NativeModule::new("datetime", "Fast implementation of the datetime type.")
        .with("date", date.into_value())
        .with("datetime", datetime.into_value())
        .with("timedelta", timedelta.into_value())
        .with("MINYEAR", Value::Int(1))
        .with("MAXYEAR", Value::Int(9999))
        .into_value()
}
