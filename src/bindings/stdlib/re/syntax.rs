//! Python's regular-expression syntax read into the `regex` crate's: the checks that give
//! CPython's `re.error` texts and positions (an unterminated subpattern or character set,
//! an unbalanced parenthesis, nothing to repeat, a bad escape), and the spellings that
//! differ (`\Z`, `{,n}`, a literal `{`, `[` and `&` inside a set, verbose mode, leading
//! global flags). Constructs the `regex` crate cannot run (look-around, backreferences,
//! possessive repeats) are refused with a `re.error` that says so.

use crate::lang::{PyErr, PyResult};

pub const IGNORECASE: i64 = 2;
pub const MULTILINE: i64 = 8;
pub const DOTALL: i64 = 16;
pub const UNICODE: i64 = 32;
pub const VERBOSE: i64 = 64;

/// `re.error` with CPython's "at position N" suffix.
pub fn error_at(msg: &str, pos: usize) -> PyErr {
    PyErr::new("error", format!("{msg} at position {pos}"))
}

fn unsupported(what: &str, pos: usize) -> PyErr {
    error_at(
        &format!("{what} are not supported by this kernel's regular expressions"),
        pos,
    )
}

/// A pattern ready for the `regex` crate, with the flags it sets (the caller's and the
/// pattern's leading `(?imsx)`).
pub struct Translated {
    pub source: String,
    pub flags: i64,
}

/// What the previous item was, for the repeat checks.
#[derive(PartialEq, Clone, Copy)]
enum Prev {
    /// The start of the pattern, a group or an alternative: nothing to repeat.
    Start,
    Atom,
    Repeat,
    /// A lazy repeat (`*?`): a further repeat is a multiple repeat.
    Lazy,
}

/// The length in characters of a `{n}`, `{n,}`, `{,m}` or `{n,m}` repeat at `i`, and its
/// spelling for the `regex` crate; `None` when the brace is a literal, as CPython reads it.
fn brace_repeat(c: &[char], i: usize) -> Option<(usize, String)> {
    let close = c[i..].iter().position(|&ch| ch == '}')? + i;
    let body: String = c[i + 1..close].iter().collect();
    let (lo, hi) = match body.split_once(',') {
        Some((lo, hi)) => (lo, Some(hi)),
        None => (body.as_str(), None),
    };
    let digits = |s: &str| s.chars().all(|ch| ch.is_ascii_digit());
    if !digits(lo) || !hi.is_none_or(digits) || (lo.is_empty() && hi.is_none_or(str::is_empty)) {
        return None;
    }
    let lo = if lo.is_empty() { "0" } else { lo };
    let spelled = match hi {
        None => format!("{{{lo}}}"),
        Some(hi) => format!("{{{lo},{hi}}}"),
    };
    Some((close - i + 1, spelled))
}

/// Reads leading global flags `(?aiLmsux)`; returns the flags and the characters used.
fn leading_flags(c: &[char]) -> (i64, usize) {
    if c.len() < 3 || c[0] != '(' || c[1] != '?' {
        return (0, 0);
    }
    let mut flags = 0;
    let mut i = 2;
    while i < c.len() {
        flags |= match c[i] {
            'i' => IGNORECASE,
            'm' => MULTILINE,
            's' => DOTALL,
            'x' => VERBOSE,
            'u' => UNICODE,
            ')' if i > 2 => return (flags, i + 1),
            _ => return (0, 0),
        };
        i += 1;
    }
    (0, 0)
}

pub fn translate(pattern: &str, flags: i64) -> PyResult<Translated> {
    let c: Vec<char> = pattern.chars().collect();
    let (lead, mut i) = leading_flags(&c);
    let flags = flags | lead;
    let verbose = flags & VERBOSE != 0;
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut open: Vec<usize> = vec![];
    let mut prev = Prev::Start;
    while i < c.len() {
        let ch = c[i];
        if verbose && ch.is_whitespace() {
            i += 1;
            continue;
        }
        if verbose && ch == '#' {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
            continue;
        }
        match ch {
            '\\' => {
                let Some(&e) = c.get(i + 1) else {
                    return Err(PyErr::new("error", "bad escape (end of pattern)"));
                };
                match e {
                    'Z' => out.push_str(r"\z"),
                    '1'..='9' => return Err(unsupported("backreferences", i)),
                    'd' | 'D' | 's' | 'S' | 'w' | 'W' | 'b' | 'B' | 'A' | 'n' | 't' | 'r' | 'f'
                    | 'v' | 'x' | 'u' | 'U' | '0' => {
                        out.push('\\');
                        out.push(e);
                    }
                    'a' => out.push_str(r"\x07"),
                    e if e.is_ascii_alphabetic() => {
                        return Err(error_at(&format!("bad escape \\{e}"), i))
                    }
                    e => {
                        // Any other character stands for itself; the `regex` crate accepts
                        // an escape only before punctuation.
                        if e.is_ascii_punctuation() {
                            out.push('\\');
                        }
                        out.push(e);
                    }
                }
                // An anchor may not be repeated, as at the start.
                let anchor = matches!(e, 'b' | 'B' | 'A' | 'Z');
                prev = if anchor { Prev::Start } else { Prev::Atom };
                i += 2;
            }
            '[' => {
                let start = i;
                out.push('[');
                i += 1;
                if c.get(i) == Some(&'^') {
                    out.push('^');
                    i += 1;
                }
                // A `]` first in the set is a literal.
                if c.get(i) == Some(&']') {
                    out.push_str(r"\]");
                    i += 1;
                }
                loop {
                    let Some(&x) = c.get(i) else {
                        return Err(error_at("unterminated character set", start));
                    };
                    match x {
                        ']' => break,
                        '\\' => {
                            let Some(&e) = c.get(i + 1) else {
                                return Err(error_at("unterminated character set", start));
                            };
                            match e {
                                'd' | 'D' | 's' | 'S' | 'w' | 'W' | 'n' | 't' | 'r' | 'f' | 'v'
                                | 'x' | 'u' | 'U' | '0' => {
                                    out.push('\\');
                                    out.push(e);
                                }
                                'a' => out.push_str(r"\x07"),
                                'b' => out.push_str(r"\x08"),
                                e if e.is_ascii_alphanumeric() => {
                                    return Err(error_at(&format!("bad escape \\{e}"), i))
                                }
                                e => {
                                    if e.is_ascii_punctuation() {
                                        out.push('\\');
                                    }
                                    out.push(e);
                                }
                            }
                            i += 2;
                            continue;
                        }
                        // Literals to Python, set operations or nesting to the `regex` crate.
                        '[' | '&' | '~' => {
                            out.push('\\');
                            out.push(x);
                        }
                        '-' if c.get(i + 1) == Some(&'-') => out.push_str(r"\-"),
                        x => out.push(x),
                    }
                    i += 1;
                }
                out.push(']');
                i += 1;
                prev = Prev::Atom;
            }
            '(' => {
                let rest: String = c[i..c.len().min(i + 4)].iter().collect();
                if rest.starts_with("(?=")
                    || rest.starts_with("(?!")
                    || rest.starts_with("(?<=")
                    || rest.starts_with("(?<!")
                {
                    return Err(unsupported("look-around assertions", i));
                }
                if rest.starts_with("(?P=") {
                    return Err(unsupported("backreferences", i));
                }
                if rest.starts_with("(?#") {
                    while i < c.len() && c[i] != ')' {
                        i += 1;
                    }
                    if i == c.len() {
                        return Err(PyErr::new("error", "missing ), unterminated comment"));
                    }
                    i += 1;
                    continue;
                }
                if rest.starts_with("(?") && !rest.starts_with("(?:") && !rest.starts_with("(?P<") {
                    // Scoped flags `(?i:...)`; global ones after the start are an error.
                    let close = c[i..].iter().position(|&x| x == ':' || x == ')');
                    if close.is_some_and(|k| c[i + k] == ')') {
                        return Err(error_at(
                            "global flags not at the start of the expression",
                            i,
                        ));
                    }
                }
                open.push(i);
                // The group's opening as written: `(`, `(?:`, `(?P<name>` or `(?i:`.
                let end = if rest.starts_with("(?P<") {
                    c[i..].iter().position(|&x| x == '>')
                } else if rest.starts_with("(?") {
                    c[i..].iter().position(|&x| x == ':')
                } else {
                    Some(0)
                };
                let Some(end) = end else {
                    return Err(error_at("missing >, unterminated name", i + 4));
                };
                out.extend(&c[i..=i + end]);
                i += end + 1;
                prev = Prev::Start;
            }
            ')' => {
                if open.pop().is_none() {
                    return Err(error_at("unbalanced parenthesis", i));
                }
                out.push(')');
                i += 1;
                prev = Prev::Atom;
            }
            '|' => {
                out.push('|');
                i += 1;
                prev = Prev::Start;
            }
            '*' | '+' | '?' | '{' => {
                let brace = if ch == '{' { brace_repeat(&c, i) } else { None };
                if ch == '{' && brace.is_none() {
                    out.push_str(r"\{");
                    i += 1;
                    prev = Prev::Atom;
                    continue;
                }
                if ch == '?' && prev == Prev::Repeat {
                    out.push('?');
                    i += 1;
                    prev = Prev::Lazy;
                    continue;
                }
                if ch == '+' && prev == Prev::Repeat {
                    return Err(unsupported("possessive repeats", i));
                }
                match prev {
                    Prev::Start => return Err(error_at("nothing to repeat", i)),
                    Prev::Repeat | Prev::Lazy => return Err(error_at("multiple repeat", i)),
                    Prev::Atom => {}
                }
                match brace {
                    Some((len, spelled)) => {
                        out.push_str(&spelled);
                        i += len;
                    }
                    None => {
                        out.push(ch);
                        i += 1;
                    }
                }
                prev = Prev::Repeat;
            }
            '}' => {
                out.push_str(r"\}");
                i += 1;
                prev = Prev::Atom;
            }
            '^' | '$' => {
                out.push(ch);
                i += 1;
                prev = Prev::Start;
            }
            ch => {
                if verbose && ch == ' ' {
                    i += 1;
                    continue;
                }
                out.push(ch);
                i += 1;
                prev = Prev::Atom;
            }
        }
    }
    if let Some(&at) = open.last() {
        return Err(error_at("missing ), unterminated subpattern", at));
    }
    Ok(Translated { source: out, flags })
}
