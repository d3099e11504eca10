//! `textwrap`: `wrap`, `fill`, `shorten`, `dedent` and `indent` as CPython's `TextWrapper`
//! does them: text cut into words and spaces (a hyphenated word breaks after its hyphens),
//! lines filled greedily up to `width`, words longer than a line broken, the whitespace at
//! line ends dropped, and `max_lines` with a placeholder for `shorten`.

use super::f;
use crate::bindings::common::arg;
use crate::lang::{Args, Ctx, NativeModule, PyErr, PyResult, Value};

/// The options of a `TextWrapper`, as keyword arguments set them; tabs are expanded to
/// 8 columns and whitespace replaced by spaces, as by default (`expand_tabs`, `tabsize`,
/// `replace_whitespace` and `fix_sentence_endings` are left out).
struct Wrapper {
    width: i64,
    initial_indent: String,
    subsequent_indent: String,
    break_long_words: bool,
    break_on_hyphens: bool,
    drop_whitespace: bool,
    max_lines: Option<usize>,
    placeholder: String,
}

const OPTIONS: &[&str] = &[
    "width",
    "initial_indent",
    "subsequent_indent",
    "break_long_words",
    "break_on_hyphens",
    "drop_whitespace",
    "max_lines",
    "placeholder",
];

impl Wrapper {
    fn from_args(s: &[Option<Value>], first: usize, ctx: &mut dyn Ctx) -> PyResult<Wrapper> {
        let opt = |i: usize| s.get(first + i).cloned().flatten();
        let text = |v: Option<Value>, d: &str| -> PyResult<String> {
            Ok(match v {
                Some(v) => v.as_str()?.to_string(),
                None => d.to_string(),
            })
        };
        let mut flag = |v: Option<Value>, d: bool| -> PyResult<bool> {
            match v {
                Some(v) => ctx.truthy(&v),
                None => Ok(d),
            }
        };
        Ok(Wrapper {
            width: match opt(0) {
                Some(v) => v.as_int()?,
                None => 70,
            },
            initial_indent: text(opt(1), "")?,
            subsequent_indent: text(opt(2), "")?,
            break_long_words: flag(opt(3), true)?,
            break_on_hyphens: flag(opt(4), true)?,
            drop_whitespace: flag(opt(5), true)?,
            max_lines: match opt(6) {
                Some(Value::None) | None => None,
                Some(v) => Some(v.as_int()?.max(0) as usize),
            },
            placeholder: text(opt(7), " [...]")?,
        })
    }

    fn wrap(&self, text: &str) -> PyResult<Vec<String>> {
        let text: String = expand_tabs(text)
            .chars()
            .map(|c| if is_ws(c) { ' ' } else { c })
            .collect();
        let chunks = split_chunks(&text, self.break_on_hyphens);
        self.wrap_chunks(chunks)
    }

    fn wrap_chunks(&self, chunks: Vec<String>) -> PyResult<Vec<String>> {
        if self.width <= 0 {
            return Err(PyErr::value_error(format!(
                "invalid width {} (must be > 0)",
                self.width
            )));
        }
        let width = self.width as usize;
        if let Some(m) = self.max_lines {
            let indent = if m > 1 {
                &self.subsequent_indent
            } else {
                &self.initial_indent
            };
            if len(indent) + len(self.placeholder.trim_start()) > width {
                return Err(PyErr::value_error("placeholder too large for max width"));
            }
        }
        let mut lines: Vec<String> = vec![];
        // Chunks are taken from the end of a reversed list, as CPython pops them.
        let mut chunks: Vec<String> = chunks.into_iter().rev().collect();
        while !chunks.is_empty() {
            let mut cur: Vec<String> = vec![];
            let mut cur_len = 0usize;
            let indent = if lines.is_empty() {
                &self.initial_indent
            } else {
                &self.subsequent_indent
            };
            let room = width.saturating_sub(len(indent));
            if self.drop_whitespace
                && !lines.is_empty()
                && chunks.last().is_some_and(|c| c.trim().is_empty())
            {
                chunks.pop();
            }
            while let Some(c) = chunks.last() {
                let l = len(c);
                if cur_len + l <= room {
                    cur_len += l;
                    cur.push(chunks.pop().unwrap_or_default());
                } else {
                    break;
                }
            }
            if chunks.last().is_some_and(|c| len(c) > room) {
                self.long_word(&mut chunks, &mut cur, cur_len, room);
                cur_len = cur.iter().map(|c| len(c)).sum();
            }
            if self.drop_whitespace && cur.last().is_some_and(|c| c.trim().is_empty()) {
                if let Some(c) = cur.pop() {
                    cur_len -= len(&c);
                }
            }
            if cur.is_empty() {
                continue;
            }
            let fits_rest = chunks.is_empty()
                || (self.drop_whitespace && chunks.len() == 1 && chunks[0].trim().is_empty());
            let under_max = self.max_lines.is_none_or(|m| lines.len() + 1 < m);
            if under_max || (fits_rest && cur_len <= room) {
                lines.push(format!("{indent}{}", cur.concat()));
                continue;
            }
            // The last line allowed: end it with the placeholder.
            loop {
                if let Some(last) = cur.last() {
                    if !last.trim().is_empty() && cur_len + len(&self.placeholder) <= room {
                        cur.push(self.placeholder.clone());
                        lines.push(format!("{indent}{}", cur.concat()));
                        break;
                    }
                    cur_len -= len(last);
                    cur.pop();
                    continue;
                }
                match lines.last_mut() {
                    Some(prev) => {
                        let trimmed = prev.trim_end().to_string();
                        if len(&trimmed) + len(&self.placeholder) <= width {
                            *prev = trimmed + &self.placeholder;
                            break;
                        }
                        lines.push(format!("{indent}{}", self.placeholder.trim_start()));
                    }
                    None => lines.push(format!("{indent}{}", self.placeholder.trim_start())),
                }
                break;
            }
            break;
        }
        Ok(lines)
    }

    /// A word longer than the room left: as much as fits (at a hyphen when one is there)
    /// when long words may break, else the whole word alone on a line.
    fn long_word(
        &self,
        chunks: &mut Vec<String>,
        cur: &mut Vec<String>,
        cur_len: usize,
        room: usize,
    ) {
        let space_left = if room < 1 {
            1
        } else {
            room.saturating_sub(cur_len)
        };
        let Some(chunk) = chunks.pop() else {
            return;
        };
        if self.break_long_words {
            let chars: Vec<char> = chunk.chars().collect();
            let mut end = space_left;
            if self.break_on_hyphens && chars.len() > space_left {
                // Break after the last hyphen that fits, if it follows a non-hyphen.
                if let Some(h) = chars[..space_left].iter().rposition(|&c| c == '-') {
                    if h > 0 && chars[..h].iter().any(|&c| c != '-') {
                        end = h + 1;
                    }
                }
            }
            let end = end.min(chars.len());
            cur.push(chars[..end].iter().collect());
            let rest: String = chars[end..].iter().collect();
            if !rest.is_empty() {
                chunks.push(rest);
            }
        } else if cur.is_empty() {
            cur.push(chunk);
        } else {
            chunks.push(chunk);
        }
    }
}

fn len(s: &str) -> usize {
    s.chars().count()
}

fn is_ws(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\x0b' | '\x0c' | '\r' | ' ')
}

fn expand_tabs(s: &str) -> String {
    let mut out = String::new();
    let mut col = 0;
    for c in s.chars() {
        match c {
            '\t' => {
                let n = 8 - col % 8;
                out.extend(std::iter::repeat_n(' ', n));
                col += n;
            }
            '\n' | '\r' => {
                out.push(c);
                col = 0;
            }
            c => {
                out.push(c);
                col += 1;
            }
        }
    }
    out
}

/// `[^\d\W]`: a word character that is not a digit.
fn is_letter(c: char) -> bool {
    c.is_alphabetic() || c == '_'
}

/// Words, runs of spaces, and (with `hyphens`) the pieces of a hyphenated word, each
/// ending after its hyphen where CPython's `wordsep_re` cuts: a hyphen after two letters
/// (or a letter, hyphen, letter) and before a letter.
fn split_chunks(text: &str, hyphens: bool) -> Vec<String> {
    let c: Vec<char> = text.chars().collect();
    let mut out = vec![];
    let mut i = 0;
    while i < c.len() {
        let start = i;
        if c[i] == ' ' {
            while i < c.len() && c[i] == ' ' {
                i += 1;
            }
            out.push(c[start..i].iter().collect());
            continue;
        }
        while i < c.len() && c[i] != ' ' {
            i += 1;
            // A hyphen at `i - 1` ends a piece when it follows two letters (or a letter,
            // hyphen, letter) and a letter, maybe a hyphen, and a letter follow.
            if hyphens && i >= 3 && i < c.len() && c[i - 1] == '-' {
                let letter = |k: usize| c.get(k).is_some_and(|&x| is_letter(x));
                let before = letter(i - 2) && letter(i - 3)
                    || i >= 4 && letter(i - 2) && c[i - 3] == '-' && letter(i - 4);
                let after =
                    letter(i) && (letter(i + 1) || c.get(i + 1) == Some(&'-') && letter(i + 2));
                if before && after {
                    break;
                }
            }
        }
        out.push(c[start..i].iter().collect());
    }
    out
}

/// `dedent`: removes the leading whitespace every non-blank line shares; blank lines
/// become empty.
fn dedent(text: &str) -> String {
    let lines: Vec<String> = text
        .split('\n')
        .map(|l| {
            if !l.is_empty() && l.chars().all(|c| c == ' ' || c == '\t') {
                String::new()
            } else {
                l.to_string()
            }
        })
        .collect();
    let mut margin: Option<String> = None;
    for l in &lines {
        if l.is_empty() {
            continue;
        }
        let indent: String = l.chars().take_while(|&c| c == ' ' || c == '\t').collect();
        if indent.len() == l.len() {
            continue;
        }
        margin = Some(match margin {
            None => indent,
            Some(m) => m
                .chars()
                .zip(indent.chars())
                .take_while(|(a, b)| a == b)
                .map(|(a, _)| a)
                .collect(),
        });
    }
    let margin = margin.unwrap_or_default();
    lines
        .iter()
        .map(|l| l.strip_prefix(margin.as_str()).unwrap_or(l).to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Lines with their ends kept, as `str.splitlines(True)` cuts them.
fn lines_with_ends(text: &str) -> Vec<&str> {
    let mut out = vec![];
    let mut start = 0;
    for (i, c) in text.char_indices() {
        if matches!(
            c,
            '\n' | '\r'
                | '\x0b'
                | '\x0c'
                | '\u{1c}'
                | '\u{1d}'
                | '\u{1e}'
                | '\u{85}'
                | '\u{2028}'
                | '\u{2029}'
        ) {
            let mut end = i + c.len_utf8();
            if c == '\r' && text[end..].starts_with('\n') {
                continue;
            }
            if c == '\n' && i > 0 && text[..i].ends_with('\r') {
                end = i + 1;
            }
            out.push(&text[start..end]);
            start = end;
        }
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

fn wrap_call(func: &'static str, a: &Args, ctx: &mut dyn Ctx) -> PyResult<(Wrapper, String)> {
    let mut names = vec!["text"];
    names.extend(OPTIONS);
    let s = a.bind(func, &names, 1)?;
    // CPython calls the text's `expandtabs` first.
    let text = match arg(&s, 0) {
        Value::Str(t) => t.to_string(),
        other => {
            return Err(PyErr::attribute_error(format!(
                "'{}' object has no attribute 'expandtabs'",
                other.type_name()
            )))
        }
    };
    Ok((Wrapper::from_args(&s, 1, ctx)?, text))
}

pub fn module() -> Value {
    NativeModule::new("textwrap", "Text wrapping and filling.")
        .with(
            "wrap",
            f("wrap", "wrap(text, width=70, **kwargs)", |a, ctx| {
                let (w, text) = wrap_call("wrap", a, ctx)?;
                Ok(Value::list(
                    w.wrap(&text)?.into_iter().map(Value::from).collect(),
                ))
            }),
        )
        .with(
            "fill",
            f("fill", "fill(text, width=70, **kwargs)", |a, ctx| {
                let (w, text) = wrap_call("fill", a, ctx)?;
                Ok(Value::from(w.wrap(&text)?.join("\n")))
            }),
        )
        .with(
            "shorten",
            f("shorten", "shorten(text, width, **kwargs)", |a, ctx| {
                let (mut w, text) = wrap_call("shorten", a, ctx)?;
                w.max_lines = Some(1);
                let collapsed = text.split_whitespace().collect::<Vec<_>>().join(" ");
                Ok(Value::from(w.wrap(&collapsed)?.join("\n")))
            }),
        )
        .with(
            "dedent",
            f("dedent", "dedent(text)", |a, _| {
                let s = a.bind("dedent", &["text"], 1)?;
                Ok(Value::from(dedent(arg(&s, 0).as_str()?)))
            }),
        )
        .with(
            "indent",
            f(
                "indent",
                "indent(text, prefix, predicate=None)",
                |a, ctx| {
                    let s = a.bind("indent", &["text", "prefix", "predicate"], 2)?;
                    let text = arg(&s, 0).as_str()?.to_string();
                    let prefix = arg(&s, 1).as_str()?.to_string();
                    let mut out = String::new();
                    for line in lines_with_ends(&text) {
                        let add = match &s[2] {
                            Some(p) if !matches!(p, Value::None) => {
                                let r = ctx.call(p, Args::new(vec![Value::str(line)]))?;
                                ctx.truthy(&r)?
                            }
                            _ => !line.trim().is_empty(),
                        };
                        if add {
                            out.push_str(&prefix);
                        }
                        out.push_str(line);
                    }
                    Ok(Value::from(out))
                },
            ),
        )
        .into_value()
}
