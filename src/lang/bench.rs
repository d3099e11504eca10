//! The interpreter benchmark: a loop of integer arithmetic, function calls and list
//! appends, timed here and in `python3` on the same machine, reported as a ratio.

use std::time::Instant;

use crate::session::{CollectSink, ExecuteRequest};

pub const BENCH_CODE: &str = "def f(a, b):\n    return a * 2 + b\n\ndef run(n):\n    out = []\n    total = 0\n    for i in range(n):\n        total = total + f(i, 3) % 7\n        out.append(total)\n    return len(out)\n\nrun(1000000)\n";

/// Times the benchmark in this interpreter and in `python3` (when present); returns a
/// printable report with both times and their ratio.
pub fn bench_interpreter() -> String {
    let mut interp = super::Interpreter::new(Default::default(), crate::bindings::load_module);
    let sink = CollectSink::default();
    let req = ExecuteRequest {
        code: BENCH_CODE.into(),
        silent: false,
        store_history: true,
        allow_stdin: false,
        user_expressions: vec![],
    };
    let t = Instant::now();
    let r = interp.execute(&req, &sink);
    let ours = t.elapsed().as_secs_f64();
    if let Err(e) = r.result {
        return format!("interpreter benchmark failed: {}: {}", e.ename, e.evalue);
    }
    let t = Instant::now();
    let py = std::process::Command::new("python3")
        .arg("-c")
        .arg(BENCH_CODE)
        .output();
    let theirs = t.elapsed().as_secs_f64();
    match py {
        Ok(o) if o.status.success() => format!(
            "interpreter loop (1e6 iterations): mirror-kernel {ours:.3} s, python3 {theirs:.3} s, ratio {:.2}x",
            ours / theirs
        ),
        _ => format!("interpreter loop (1e6 iterations): mirror-kernel {ours:.3} s (python3 not found)"),
    }
}
