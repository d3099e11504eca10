//! Syntax errors in CPython's words ("'(' was never closed", "unterminated string
//! literal") and `is_complete` for the console, both from the parser and a light scan of
//! brackets and strings.

use ruff_python_parser::Mode;

use crate::cell::{ErrorInfo, IsComplete};

/// The first bracket left open at the end of the code: its char, line, column and line text.
fn unclosed(code: &str) -> Option<(char, usize, usize, String)> {
    let mut stack: Vec<(char, usize, usize)> = vec![];
    for (ln, line) in code.lines().enumerate() {
        let mut chars = line.char_indices().peekable();
        let mut in_str: Option<char> = None;
        while let Some((i, c)) = chars.next() {
            match in_str {
                Some(q) => {
                    if c == '\\' {
                        chars.next();
                    } else if c == q {
                        in_str = None;
                    }
                }
                None => match c {
                    '#' => break,
                    '\'' | '"' => in_str = Some(c),
                    '(' | '[' | '{' => stack.push((c, ln + 1, line[..i].chars().count())),
                    ')' | ']' | '}' => {
                        stack.pop();
                    }
                    _ => {}
                },
            }
        }
    }
    let (c, ln, col) = *stack.first()?;
    let text = code.lines().nth(ln - 1).unwrap_or("").to_string();
    Some((c, ln, col, text))
}

/// The first physical line of the cell's last logical line: brackets, backslashes and
/// triple-quoted strings continue a line.
fn last_logical_start(code: &str) -> &str {
    let (mut depth, mut start, mut continued) = (0i32, "", false);
    let mut triple: Option<&str> = None;
    for line in code.lines() {
        if depth <= 0 && !continued && triple.is_none() && !line.trim().is_empty() {
            start = line;
        }
        let mut in_str: Option<char> = None;
        let mut i = 0;
        while let Some(c) = line[i..].chars().next() {
            let rest = &line[i..];
            if let Some(q) = triple {
                if rest.starts_with(q) {
                    triple = None;
                    i += 3;
                    continue;
                }
            } else if let Some(q) = in_str {
                if c == '\\' {
                    i += rest.chars().nth(1).map_or(0, char::len_utf8);
                } else if c == q {
                    in_str = None;
                }
            } else if rest.starts_with("\"\"\"") || rest.starts_with("'''") {
                triple = Some(&rest[..3]);
                i += 3;
                continue;
            } else {
                match c {
                    '#' => break,
                    '\'' | '"' => in_str = Some(c),
                    '(' | '[' | '{' => depth += 1,
                    ')' | ']' | '}' => depth -= 1,
                    _ => {}
                }
            }
            i += c.len_utf8();
        }
        continued = line.ends_with('\\');
    }
    start
}

fn unterminated_triple(code: &str) -> bool {
    let n3 = code.matches("\"\"\"").count();
    let n3s = code.matches("'''").count();
    n3 % 2 == 1 || n3s % 2 == 1
}

pub fn message(code: &str, e: &ruff_python_parser::ParseError) -> String {
    if let Some((c, _, _, _)) = unclosed(code) {
        return format!("'{c}' was never closed");
    }
    if unterminated_triple(code) {
        return "unterminated triple-quoted string literal".into();
    }
    let m = e.error.to_string();
    if m.contains("missing closing quote") || m.contains("unterminated string") {
        return "unterminated string literal".into();
    }
    if m.contains("Expected an indented block") {
        return "expected an indented block".into();
    }
    if m.contains("Unexpected indentation") {
        return "unexpected indent".into();
    }
    if m.contains("unindent") {
        return "unindent does not match any outer indentation level".into();
    }
    if m.starts_with("Expected ':'") || m.contains("Expected ':'") {
        return "expected ':'".into();
    }
    if m.contains("Expected") || m.contains("Unexpected") || m.contains("found") {
        return "invalid syntax".into();
    }
    m
}

/// Where CPython points for the errors it attributes to a bracket.
pub fn locate(
    code: &str,
    _e: &ruff_python_parser::ParseError,
    msg: &str,
) -> Option<(usize, String, usize)> {
    if msg.ends_with("was never closed") {
        let (_, ln, col, text) = unclosed(code)?;
        return Some((ln, text, col));
    }
    None
}

pub fn is_complete(code: &str) -> IsComplete {
    if code.trim().is_empty() {
        return IsComplete::Complete;
    }
    if code.trim_end_matches('\n').ends_with('\\') {
        return IsComplete::Incomplete {
            indent: String::new(),
        };
    }
    let tree = super::parse::Tree::parse(code, Mode::Ipython);
    match tree.error() {
        None => {
            // A block typed at a console waits for an empty line before running.
            // As in IPython, a block whose last line is still indented needs that blank
            // line too (`def f(x):\n  x*2` is incomplete); the indent offered is the last
            // line's own.
            // A statement continued in brackets counts by its first line, as IPython's
            // tokenizer sees it (`x = [1,\n 2]` is complete).
            let last = code.trim_end_matches('\n').lines().last().unwrap_or("");
            let nested = last_logical_start(code).starts_with([' ', '\t']);
            if !code.ends_with("\n\n") && nested {
                let indent: String = last
                    .chars()
                    .take_while(|c| *c == ' ' || *c == '\t')
                    .collect();
                return IsComplete::Incomplete { indent };
            }
            IsComplete::Complete
        }
        Some(e) => {
            if unclosed(code).is_some() || unterminated_triple(code) {
                return IsComplete::Incomplete {
                    indent: String::new(),
                };
            }
            let at_end = e.location.start().to_usize() >= code.trim_end().len();
            if at_end && code.trim_end().ends_with(':') {
                return IsComplete::Incomplete {
                    indent: "    ".into(),
                };
            }
            if at_end && e.error.to_string().contains("indented block") {
                return IsComplete::Incomplete {
                    indent: "    ".into(),
                };
            }
            IsComplete::Invalid
        }
    }
}

/// A parse error as IPython shows a `SyntaxError`: the cell line, the source and a caret.
pub fn syntax_error_info(code: &str, e: &ruff_python_parser::ParseError, file: &str) -> ErrorInfo {
    let start = e.location.start().to_usize().min(code.len());
    let line_no = code[..start].matches('\n').count() + 1;
    let line_start = code[..start].rfind('\n').map(|i| i + 1).unwrap_or(0);
    let line = code[line_start..].lines().next().unwrap_or("");
    let col = code[line_start..start].chars().count();
    let msg = message(code, e);
    let (line_no, line, col) = locate(code, e, &msg).unwrap_or((line_no, line.to_string(), col));
    let evalue = msg.clone();
    let tb = vec![
        format!(
            "  \u{1b}[0;36mCell {file}, line {line_no}\u{1b}[0m",
            file = file.trim_start_matches("Cell ")
        ),
        format!("    {}", line.trim_end()),
        format!(
            "    {}\u{1b}[0;31m^\u{1b}[0m",
            " ".repeat(col.saturating_sub(line.len() - line.trim_start().len()))
        ),
        format!("\u{1b}[0;31mSyntaxError\u{1b}[0m\u{1b}[0;31m:\u{1b}[0m {msg}"),
    ];
    let mut tb = tb;
    tb[1] = format!("    {}", line.trim());
    ErrorInfo {
        ename: "SyntaxError".into(),
        evalue,
        traceback: tb,
    }
}
