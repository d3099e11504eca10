//! IPython's rendering of an uncaught exception: a rule, the exception name with
//! "Traceback (most recent call last)", then one block per frame (outermost first) with
//! the cell and line, two lines of context before the failing line (marked `---->`) and
//! one after, dedented together, and finally `Name: message`, then the error's teaching
//! hint, if any (kept out of `evalue`). Colours as IPython's Linux scheme.

use crate::cell::ErrorInfo;
use crate::lang::eval::vm::Vm;
use crate::lang::values::exc::{Frame, PyErr};

const RED: &str = "\u{1b}[0;31m";
const GREEN: &str = "\u{1b}[0;32m";
const RESET: &str = "\u{1b}[0m";

fn frame_block(vm: &Vm, f: &Frame) -> String {
    let head = match &f.function {
        Some(func) => format!("{GREEN}{}, line {}, in {func}{RESET}", f.file, f.line),
        None => format!("{GREEN}{}, line {}{RESET}", f.file, f.line),
    };
    let lines: Vec<(usize, String)> = match vm.core.sources.get(&f.file) {
        Some(src) if f.line >= 1 && f.line <= src.lines.len() => {
            let lo = f.line.saturating_sub(2).max(1);
            let hi = (f.line + 1).min(src.lines.len());
            let in_function = f.function.is_some();
            (lo..=hi)
                .map(|n| (n, src.lines.get(n - 1).cloned().unwrap_or_default()))
                // The line after the failing one shows only while it is still part of the
                // same code: not blank, and inside the function for a function's frame.
                .filter(|(n, l)| {
                    *n <= f.line
                        || !(l.trim().is_empty() || in_function && !l.starts_with([' ', '\t']))
                })
                .collect()
        }
        _ => vec![(f.line, f.source.clone())],
    };
    let indent = lines
        .iter()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(_, l)| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let mut out = vec![head];
    for (n, l) in lines {
        let code = l.get(indent..).unwrap_or(l.trim_start());
        let num = n.to_string();
        if n == f.line {
            let dashes = "-".repeat(5usize.saturating_sub(num.len()));
            out.push(format!("{GREEN}{dashes}> {num}{RESET} {code}"));
        } else {
            out.push(format!("{GREEN}{num:>7}{RESET} {code}"));
        }
    }
    out.join("\n") + "\n"
}

/// The `ErrorInfo` Jupyter receives for an uncaught exception.
pub fn error_info(vm: &mut Vm, e: PyErr) -> ErrorInfo {
    let ename = e.type_name().to_string();
    let evalue = e.message().to_string();
    let mut tb = vec![
        format!("{RED}{}{RESET}", "-".repeat(75)),
        format!("{RED}{ename:<42}{RESET}Traceback (most recent call last)"),
    ];
    for f in &e.0.traceback {
        tb.push(frame_block(vm, f));
    }
    for n in &e.0.notes {
        tb.push(n.clone());
    }
    tb.push(if evalue.is_empty() {
        format!("{RED}{ename}{RESET}")
    } else {
        format!("{RED}{ename}{RESET}: {evalue}")
    });
    tb.extend(e.hint().map(str::to_string));
    ErrorInfo {
        ename,
        evalue,
        traceback: tb,
    }
}
