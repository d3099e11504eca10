//! Completion (names in scope, builtins, keywords, attributes after a dot) and inspection
//! (signature and doc of the name under the cursor). Cursors count code points.

use crate::cell::Completion;
use crate::display::MimeBundle;
use crate::lang::eval::vm::Vm;

const KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "break", "class", "continue", "def", "del",
    "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is",
    "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while", "with", "yield",
];

/// The dotted expression ending at the cursor: (start in chars, text).
fn token_before(chars: &[char], cursor: usize) -> (usize, String) {
    let mut i = cursor.min(chars.len());
    while i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_' || chars[i - 1] == '.') {
        i -= 1;
    }
    (i, chars[i..cursor.min(chars.len())].iter().collect())
}

pub fn complete(vm: &mut Vm, code: &str, cursor: usize) -> Completion {
    let chars: Vec<char> = code.chars().collect();
    let cursor = cursor.min(chars.len());
    let (start, tok) = token_before(&chars, cursor);
    let mut matches: Vec<String> = vec![];
    let mut cursor_start = start;
    if let Some((obj, prefix)) = tok.rsplit_once('.') {
        cursor_start = cursor - prefix.chars().count();
        if let Ok(v) = super::magics::eval_text(vm, obj) {
            for n in vm.dir_of(&v) {
                if n.starts_with(prefix) && (prefix.starts_with('_') || !n.starts_with('_')) {
                    matches.push(n);
                }
            }
        }
    } else {
        let mut names: Vec<String> = vm
            .core
            .globals
            .borrow()
            .keys()
            .map(|k| k.to_string())
            .collect();
        names.extend(
            vm.core
                .builtins
                .keys()
                .filter(|k| !k.starts_with("__"))
                .cloned(),
        );
        names.extend(KEYWORDS.iter().map(|s| s.to_string()));
        for n in names {
            if n.starts_with(&tok) {
                matches.push(n);
            }
        }
    }
    matches.sort();
    matches.dedup();
    Completion {
        matches,
        cursor_start,
        cursor_end: cursor,
    }
}

pub fn inspect(vm: &mut Vm, code: &str, cursor: usize) -> Option<MimeBundle> {
    let chars: Vec<char> = code.chars().collect();
    let mut end = cursor.min(chars.len());
    while end < chars.len() && (chars[end].is_alphanumeric() || chars[end] == '_') {
        end += 1;
    }
    let (_, mut tok) = token_before(&chars, end);
    if tok.is_empty() {
        // Inside a call's parentheses: inspect the callee.
        let before: String = chars[..cursor.min(chars.len())].iter().collect();
        let p = before.rfind('(')?;
        let c: Vec<char> = before[..p].chars().collect();
        tok = token_before(&c, c.len()).1;
    }
    let tok = tok.trim_matches('.');
    let v = super::magics::eval_text(vm, tok).ok()?;
    let text = super::help::help_text(vm, &v).ok()?;
    let ty = v.type_name();
    Some(crate::display::plain(format!(
        "Type:      {ty}\nDocstring:\n{text}"
    )))
}
