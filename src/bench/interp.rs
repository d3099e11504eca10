//! The interpreter benchmark: a loop of integer arithmetic, function calls and list
//! appends, timed here and in `python3` on the same machine, reported as a ratio.
//!
//! Both sides are timed the same way: from handing over the source text (so parsing or
//! compiling is included) to the end of the run, with process and interpreter start-up
//! left out. CPython times itself with `time.perf_counter` around `exec(compile(...))` in
//! a fresh module namespace; this interpreter is timed around `execute` on a fresh
//! `Interpreter`. The rounds alternate between the two and the best round of each is
//! compared, so a burst of load from other processes hurts neither side alone.

use std::time::Instant;

use crate::cell::{CollectSink, ExecuteRequest};

pub const BENCH_CODE: &str = "def f(a, b):\n    return a * 2 + b\n\ndef run(n):\n    out = []\n    total = 0\n    for i in range(n):\n        total = total + f(i, 3) % 7\n        out.append(total)\n    return len(out)\n\nrun(1000000)\n";

/// How many alternating rounds each side runs; the best one of each is reported.
const ROUNDS: usize = 11;

/// The CPython side: the benchmark source arrives as `argv[1]` and the script prints the
/// seconds its compile-and-run took.
const PY_TIMER: &str = "import sys, time\nsrc = sys.argv[1]\nt = time.perf_counter()\nexec(compile(src, '<bench>', 'exec'), {'__name__': '__main__'})\nprint(time.perf_counter() - t)\n";

/// One timed run of the benchmark in this interpreter, in seconds.
fn time_ours() -> Result<f64, String> {
    let mut interp =
        crate::lang::Interpreter::new(Default::default(), crate::bindings::load_module);
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
    let secs = t.elapsed().as_secs_f64();
    match r.result {
        Ok(_) => Ok(secs),
        Err(e) => Err(format!("{}: {}", e.ename, e.evalue)),
    }
}

/// One timed run in `python3`, in seconds as CPython measured it; `None` when there is no
/// working `python3`.
fn time_cpython() -> Option<f64> {
    let out = std::process::Command::new("python3")
        .arg("-c")
        .arg(PY_TIMER)
        .arg(BENCH_CODE)
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    String::from_utf8_lossy(&out.stdout).trim().parse().ok()
}

/// Times the benchmark in this interpreter and in `python3` (when present); returns a
/// printable report with both best times and their ratio.
pub fn bench_interpreter() -> String {
    let mut ours = f64::INFINITY;
    let mut theirs: Option<f64> = None;
    for _ in 0..ROUNDS {
        match time_ours() {
            Ok(t) => ours = ours.min(t),
            Err(e) => return format!("interpreter benchmark failed: {e}"),
        }
        if let Some(t) = time_cpython() {
            theirs = Some(theirs.map_or(t, |b: f64| b.min(t)));
        }
    }
    let what = format!("interpreter loop (1e6 iterations, best of {ROUNDS}, start-up excluded)");
    match theirs {
        Some(theirs) => format!(
            "{what}: mirror-kernel {ours:.3} s, python3 {theirs:.3} s, ratio {:.2}x",
            ours / theirs
        ),
        None => format!("{what}: mirror-kernel {ours:.3} s (python3 not found)"),
    }
}
