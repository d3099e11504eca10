//! `strftime` and `strptime` for the codes notebooks use (`%Y %y %m %d %H %I %M %S %f %p
//! %B %b %A %a %j %%`), and `fromisoformat`'s reading of ISO 8601 dates and times, with
//! CPython's ValueError texts.

use chrono::{Datelike, NaiveDate, NaiveDateTime, NaiveTime, Timelike};

use crate::lang::{PyErr, PyResult};

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const DAYS: [&str; 7] = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];

pub fn strftime(dt: &NaiveDateTime, fmt: &str) -> String {
    let mut out = String::new();
    let mut chars = fmt.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let Some(code) = chars.next() else {
            out.push('%');
            break;
        };
        let hour12 = match dt.hour() % 12 {
            0 => 12,
            h => h,
        };
        let piece = match code {
            'Y' => format!("{}", dt.year()),
            'y' => format!("{:02}", dt.year() % 100),
            'm' => format!("{:02}", dt.month()),
            'd' => format!("{:02}", dt.day()),
            'H' => format!("{:02}", dt.hour()),
            'I' => format!("{hour12:02}"),
            'M' => format!("{:02}", dt.minute()),
            'S' => format!("{:02}", dt.second()),
            'f' => format!("{:06}", dt.nanosecond() / 1000),
            'p' => (if dt.hour() < 12 { "AM" } else { "PM" }).to_string(),
            'B' => MONTHS[dt.month0() as usize].to_string(),
            'b' | 'h' => MONTHS[dt.month0() as usize][..3].to_string(),
            'A' => DAYS[dt.weekday().num_days_from_monday() as usize].to_string(),
            'a' => DAYS[dt.weekday().num_days_from_monday() as usize][..3].to_string(),
            'j' => format!("{:03}", dt.ordinal()),
            'w' => format!("{}", dt.weekday().num_days_from_sunday()),
            'z' | 'Z' => String::new(),
            '%' => "%".into(),
            other => format!("%{other}"),
        };
        out.push_str(&piece);
    }
    out
}

/// The fields `strptime` reads, CPython's defaults where the format leaves one out.
struct Fields {
    year: i32,
    month: u32,
    day: u32,
    hour: u32,
    minute: u32,
    second: u32,
    micro: u32,
    pm: Option<bool>,
    yday: Option<u32>,
}

/// Reads up to `max` digits (at least one) at `i`.
fn digits(s: &[char], i: &mut usize, max: usize) -> Option<u32> {
    let start = *i;
    while *i < s.len() && *i - start < max && s[*i].is_ascii_digit() {
        *i += 1;
    }
    if *i == start {
        return None;
    }
    s[start..*i].iter().collect::<String>().parse().ok()
}

/// Reads one of `names` (or its first three letters), case-insensitively; its index.
fn name(s: &[char], i: &mut usize, names: &[&str], short: bool) -> Option<u32> {
    let rest: String = s[*i..].iter().collect::<String>().to_lowercase();
    for (k, n) in names.iter().enumerate() {
        let n = if short { &n[..3] } else { n };
        if rest.starts_with(&n.to_lowercase()) {
            *i += n.chars().count();
            return Some(k as u32);
        }
    }
    None
}

pub fn strptime(text: &str, fmt: &str) -> PyResult<NaiveDateTime> {
    let mismatch = || {
        PyErr::value_error(format!(
            "time data {} does not match format {}",
            crate::lang::str_repr(text),
            crate::lang::str_repr(fmt)
        ))
    };
    let s: Vec<char> = text.chars().collect();
    let mut f = Fields {
        year: 1900,
        month: 1,
        day: 1,
        hour: 0,
        minute: 0,
        second: 0,
        micro: 0,
        pm: None,
        yday: None,
    };
    let mut i = 0;
    let mut codes = fmt.chars();
    while let Some(c) = codes.next() {
        if c != '%' {
            if c.is_whitespace() {
                while i < s.len() && s[i].is_whitespace() {
                    i += 1;
                }
                continue;
            }
            if s.get(i) != Some(&c) {
                return Err(mismatch());
            }
            i += 1;
            continue;
        }
        let code = codes.next().ok_or_else(|| {
            PyErr::value_error(format!("stray % in format {}", crate::lang::str_repr(fmt)))
        })?;
        let ok = match code {
            'Y' => digits(&s, &mut i, 4).map(|v| f.year = v as i32),
            'y' => digits(&s, &mut i, 2).map(|v| {
                f.year = if v < 69 {
                    2000 + v as i32
                } else {
                    1900 + v as i32
                }
            }),
            'm' => digits(&s, &mut i, 2)
                .filter(|v| (1..=12).contains(v))
                .map(|v| f.month = v),
            'd' => digits(&s, &mut i, 2)
                .filter(|v| (1..=31).contains(v))
                .map(|v| f.day = v),
            'H' => digits(&s, &mut i, 2)
                .filter(|v| *v <= 23)
                .map(|v| f.hour = v),
            'I' => digits(&s, &mut i, 2)
                .filter(|v| (1..=12).contains(v))
                .map(|v| f.hour = v % 12),
            'M' => digits(&s, &mut i, 2)
                .filter(|v| *v <= 59)
                .map(|v| f.minute = v),
            'S' => digits(&s, &mut i, 2)
                .filter(|v| *v <= 61)
                .map(|v| f.second = v),
            'f' => {
                let start = i;
                digits(&s, &mut i, 6).map(|v| {
                    let n = i - start;
                    f.micro = v * 10u32.pow(6 - n as u32);
                })
            }
            'p' => name(&s, &mut i, &["AM", "PM"], false).map(|k| f.pm = Some(k == 1)),
            'B' => name(&s, &mut i, &MONTHS, false).map(|k| f.month = k + 1),
            'b' | 'h' => name(&s, &mut i, &MONTHS, true).map(|k| f.month = k + 1),
            'A' => name(&s, &mut i, &DAYS, false).map(|_| ()),
            'a' => name(&s, &mut i, &DAYS, true).map(|_| ()),
            'j' => digits(&s, &mut i, 3)
                .filter(|v| (1..=366).contains(v))
                .map(|v| f.yday = Some(v)),
            '%' => (s.get(i) == Some(&'%')).then(|| i += 1),
            other => {
                return Err(PyErr::value_error(format!(
                    "'{other}' is a bad directive in format {}",
                    crate::lang::str_repr(fmt)
                )))
            }
        };
        if ok.is_none() {
            return Err(mismatch());
        }
    }
    if i < s.len() {
        let rest: String = s[i..].iter().collect();
        return Err(PyErr::value_error(format!(
            "unconverted data remains: {rest}"
        )));
    }
    if f.pm == Some(true) {
        f.hour += 12;
    }
    let date = match f.yday {
        Some(d) => NaiveDate::from_yo_opt(f.year, d),
        None => NaiveDate::from_ymd_opt(f.year, f.month, f.day),
    }
    .ok_or_else(|| PyErr::value_error("day is out of range for month"))?;
    let time = NaiveTime::from_hms_micro_opt(f.hour, f.minute, f.second.min(59), f.micro)
        .ok_or_else(mismatch)?;
    Ok(date.and_time(time))
}

fn invalid(text: &str) -> PyErr {
    PyErr::value_error(format!(
        "Invalid isoformat string: {}",
        crate::lang::str_repr(text)
    ))
}

/// `date.fromisoformat`: `YYYY-MM-DD` or `YYYYMMDD`.
pub fn iso_date(text: &str) -> PyResult<NaiveDate> {
    let t: Vec<char> = text.chars().collect();
    let (y, m, d) = match t.len() {
        10 if t[4] == '-' && t[7] == '-' => (&t[0..4], &t[5..7], &t[8..10]),
        8 => (&t[0..4], &t[4..6], &t[6..8]),
        _ => return Err(invalid(text)),
    };
    let num = |c: &[char]| -> PyResult<u32> {
        if !c.iter().all(|x| x.is_ascii_digit()) {
            return Err(invalid(text));
        }
        c.iter()
            .collect::<String>()
            .parse()
            .map_err(|_| invalid(text))
    };
    let (y, m, d) = (num(y)?, num(m)?, num(d)?);
    if !(1..=12).contains(&m) {
        return Err(PyErr::value_error("month must be in 1..12"));
    }
    NaiveDate::from_ymd_opt(y as i32, m, d)
        .ok_or_else(|| PyErr::value_error("day is out of range for month"))
}

/// `datetime.fromisoformat`: a date, then `T` or a space and `HH[:MM[:SS[.ffffff]]]`.
pub fn iso_datetime(text: &str) -> PyResult<NaiveDateTime> {
    let (date, time) = if text.chars().count() > 10 {
        let cut = text
            .char_indices()
            .nth(10)
            .map(|(i, _)| i)
            .unwrap_or(text.len());
        let sep = &text[cut..];
        if !(sep.starts_with('T') || sep.starts_with(' ')) {
            return Err(invalid(text));
        }
        (&text[..cut], &sep[1..])
    } else {
        (text, "")
    };
    let date = iso_date(date).map_err(|_| invalid(text))?;
    if time.is_empty() {
        return Ok(date.and_time(NaiveTime::MIN));
    }
    let (hms, frac) = match time.split_once(['.', ',']) {
        Some((a, b)) => (a, Some(b)),
        None => (time, None),
    };
    let parts: Vec<&str> = hms.split(':').collect();
    let two = |p: &str| -> PyResult<u32> {
        if p.len() != 2 || !p.chars().all(|c| c.is_ascii_digit()) {
            return Err(invalid(text));
        }
        p.parse().map_err(|_| invalid(text))
    };
    let h = two(parts[0])?;
    let m = parts.get(1).map(|p| two(p)).transpose()?.unwrap_or(0);
    let s = parts.get(2).map(|p| two(p)).transpose()?.unwrap_or(0);
    if parts.len() > 3 || (frac.is_some() && parts.len() != 3) {
        return Err(invalid(text));
    }
    let micro = match frac {
        Some(f) if matches!(f.len(), 3 | 6) && f.chars().all(|c| c.is_ascii_digit()) => {
            let v: u32 = f.parse().map_err(|_| invalid(text))?;
            if f.len() == 3 {
                v * 1000
            } else {
                v
            }
        }
        Some(_) => return Err(invalid(text)),
        None => 0,
    };
    let time = NaiveTime::from_hms_micro_opt(h, m, s, micro).ok_or_else(|| invalid(text))?;
    Ok(date.and_time(time))
}
