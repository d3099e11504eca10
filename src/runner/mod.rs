//! Runs notebooks (`mirror-kernel run NB.ipynb`) and scripts (`mirror-kernel exec F.py`)
//! with the embedded engine and no Jupyter: cells go through the same [`Session`] the
//! kernel uses, and outputs are written back as nbformat 4.5.
//!
//! [`Session`]: crate::session::Session

mod outputs;
mod progress;
mod terminal;

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

pub use outputs::{source_text, valid_cell_id, CellOutputs, Displays};
pub use progress::{CellEvent, RunProgress};
pub use terminal::{colour_wanted, strip_ansi, TerminalSink};

use crate::cell::{CollectSink, ExecuteReply, ExecuteRequest};
use crate::session::Session;

/// How a run went wrong; the CLI prints it and exits non-zero.
#[derive(Debug, thiserror::Error)]
pub enum RunnerError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not a notebook: {reason}")]
    NotNotebook { path: PathBuf, reason: String },
    #[error("cannot start the interpreter: {0}")]
    Session(std::io::Error),
    #[error("cell {cell} failed with {ename}: {evalue} (outputs written to {written})")]
    CellFailed {
        /// 0-based index of the cell among all cells.
        cell: usize,
        ename: String,
        evalue: String,
        written: PathBuf,
    },
}

/// What a notebook run did.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSummary {
    /// Where the executed notebook was written.
    pub output: PathBuf,
    /// Code cells executed.
    pub cells_run: usize,
    /// Cells that raised (only more than one with `allow_errors`): index, exception name.
    pub errors: Vec<(usize, String)>,
}

/// Where the executed notebook goes: the input itself, the given path, or, as nbconvert
/// names it, `NAME.nbconvert.ipynb` beside the input.
fn output_path(input: &Path, output: Option<&Path>, inplace: bool) -> PathBuf {
    if inplace {
        return input.to_path_buf();
    }
    if let Some(o) = output {
        return o.to_path_buf();
    }
    let stem = input
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "notebook".into());
    input.with_file_name(format!("{stem}.nbconvert.ipynb"))
}

/// Runs one cell, waiting at most `timeout`; past it the cell is interrupted (so it ends
/// with `KeyboardInterrupt`) and given a few seconds to unwind.
fn run_cell(
    session: &Session,
    code: String,
    sink: Arc<CollectSink>,
    timeout: Option<Duration>,
) -> Option<ExecuteReply> {
    let request = ExecuteRequest {
        code,
        silent: false,
        store_history: true,
        allow_stdin: false,
        user_expressions: vec![],
    };
    let Some(limit) = timeout else {
        return Some(session.execute_blocking(request, Box::new(sink)));
    };
    let (tx, rx) = mpsc::channel();
    session.execute(request, Box::new(sink), move |r| {
        let _ = tx.send(r);
    });
    match rx.recv_timeout(limit) {
        Ok(r) => Some(r),
        Err(_) => {
            session.interrupt();
            rx.recv_timeout(Duration::from_secs(10)).ok()
        }
    }
}

/// Gives every cell an nbformat 4.5 id, keeping valid unique ones.
fn ensure_cell_ids(cells: &mut [Value]) {
    let mut seen = std::collections::HashSet::new();
    for cell in cells.iter_mut() {
        let keep = cell
            .get("id")
            .and_then(Value::as_str)
            .filter(|id| valid_cell_id(id) && !seen.contains(*id))
            .map(str::to_string);
        let id = keep.unwrap_or_else(|| {
            let mut id;
            loop {
                id = uuid::Uuid::new_v4().simple().to_string()[..8].to_string();
                if !seen.contains(&id) {
                    break;
                }
            }
            id
        });
        seen.insert(id.clone());
        if let Some(obj) = cell.as_object_mut() {
            obj.insert("id".into(), Value::String(id));
        }
    }
}

/// Executes every code cell of `input` in one fresh session and writes the notebook with
/// its outputs. Stops at the first error unless `allow_errors` (the notebook is written
/// either way, so the error can be read in it).
pub fn run_notebook(
    input: &Path,
    output: Option<&Path>,
    inplace: bool,
    timeout: Option<Duration>,
    allow_errors: bool,
) -> Result<RunSummary, RunnerError> {
    run_notebook_watched(input, output, inplace, timeout, allow_errors, &mut |_| {})
}

/// [`run_notebook`], telling `watch` as each code cell starts and ends (the CLI shows it
/// with [`RunProgress`]).
pub fn run_notebook_watched(
    input: &Path,
    output: Option<&Path>,
    inplace: bool,
    timeout: Option<Duration>,
    allow_errors: bool,
    watch: &mut dyn FnMut(CellEvent<'_>),
) -> Result<RunSummary, RunnerError> {
    let text = std::fs::read_to_string(input).map_err(|source| RunnerError::Read {
        path: input.to_path_buf(),
        source,
    })?;
    let not_nb = |reason: String| RunnerError::NotNotebook {
        path: input.to_path_buf(),
        reason,
    };
    let mut nb: Value = serde_json::from_str(&text).map_err(|e| not_nb(e.to_string()))?;
    if nb.get("nbformat").and_then(Value::as_u64) != Some(4) {
        return Err(not_nb("only nbformat 4 notebooks can be run".into()));
    }
    nb["nbformat_minor"] = json!(nb["nbformat_minor"].as_u64().unwrap_or(0).max(5));
    let mut cells = match nb.get_mut("cells").map(Value::take) {
        Some(Value::Array(c)) => c,
        _ => return Err(not_nb("it has no list of cells".into())),
    };
    ensure_cell_ids(&mut cells);

    let session = Session::start().map_err(RunnerError::Session)?;
    let mut recorded: Vec<Vec<Value>> = vec![vec![]; cells.len()];
    let mut displays = Displays::default();
    let mut summary = RunSummary {
        output: output_path(input, output, inplace),
        cells_run: 0,
        errors: vec![],
    };
    let mut first_failure = None;
    let is_code = |cell: &Value| cell.get("cell_type").and_then(Value::as_str) == Some("code");
    let total = cells.iter().filter(|c| is_code(c)).count();
    for (i, cell) in cells.iter_mut().enumerate() {
        if !is_code(cell) {
            continue;
        }
        let code = source_text(cell.get("source").unwrap_or(&Value::Null));
        watch(CellEvent::Started {
            number: summary.cells_run + 1,
            total,
            source: &code,
        });
        let sink = Arc::new(CollectSink::default());
        let started = Instant::now();
        let reply = run_cell(&session, code, sink.clone(), timeout);
        let elapsed = started.elapsed();
        let outputs = sink.take();
        let mut rec = CellOutputs::new(i, &mut recorded, &mut displays);
        for out in &outputs {
            rec.apply(out);
        }
        summary.cells_run += 1;
        let (count, failure) = match reply {
            Some(r) => (json!(r.execution_count), r.result.err()),
            None => {
                let e = crate::cell::ErrorInfo {
                    ename: "TimeoutError".into(),
                    evalue: "the cell did not finish within the timeout".into(),
                    traceback: vec![
                        "TimeoutError: the cell did not finish within the timeout".into()
                    ],
                };
                rec.apply(&crate::cell::Output::Error(e.clone()));
                (Value::Null, Some(e))
            }
        };
        cell["execution_count"] = count;
        watch(CellEvent::Finished {
            elapsed,
            outputs: &outputs,
            error: failure.as_ref(),
        });
        if let Some(e) = failure {
            summary.errors.push((i, e.ename.clone()));
            if first_failure.is_none() {
                first_failure = Some((i, e));
            }
            if !allow_errors {
                break;
            }
        }
    }
    for (i, cell) in cells.iter_mut().enumerate() {
        if cell.get("cell_type").and_then(Value::as_str) == Some("code") {
            cell["outputs"] = Value::Array(std::mem::take(&mut recorded[i]));
            if cell.get("execution_count").is_none() {
                cell["execution_count"] = Value::Null;
            }
            if cell.get("metadata").is_none() {
                cell["metadata"] = json!({});
            }
        }
    }
    nb["cells"] = Value::Array(cells);
    let body = serde_json::to_string_pretty(&nb).map_err(|e| not_nb(e.to_string()))? + "\n";
    std::fs::write(&summary.output, body).map_err(|source| RunnerError::Write {
        path: summary.output.clone(),
        source,
    })?;
    match first_failure {
        Some((cell, e)) if !allow_errors => Err(RunnerError::CellFailed {
            cell,
            ename: e.ename,
            evalue: e.evalue,
            written: summary.output,
        }),
        _ => Ok(summary),
    }
}

/// Runs a Python file as one cell with its output on this terminal; returns the process
/// exit status (0, or 1 when the script raised).
pub fn exec_script(path: &Path) -> Result<i32, RunnerError> {
    exec_script_with_args(path, &[])
}

/// [`exec_script`] with command-line arguments: the script sees `sys.argv` as
/// `[path, *args]`, as under `python FILE ARGS...`.
pub fn exec_script_with_args(path: &Path, args: &[String]) -> Result<i32, RunnerError> {
    let code = std::fs::read_to_string(path).map_err(|source| RunnerError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let session = Session::start().map_err(RunnerError::Session)?;
    let mut argv = vec![path.to_string_lossy().into_owned()];
    argv.extend(args.iter().cloned());
    // A silent, unstored cell fills `sys.argv` in place (the module is cached, so the
    // script's own `import sys` sees the same list) and leaves no name behind.
    let literals: Vec<String> = argv.iter().map(|a| py_str(a)).collect();
    let prelude = ExecuteRequest {
        code: format!(
            "import sys as _argv_sys\n_argv_sys.argv[:] = [{}]\ndel _argv_sys\n",
            literals.join(", ")
        ),
        silent: true,
        store_history: false,
        allow_stdin: false,
        user_expressions: vec![],
    };
    let quiet = Arc::new(CollectSink::default());
    if let Err(e) = session
        .execute_blocking(prelude, Box::new(quiet.clone()))
        .result
    {
        return Err(RunnerError::Session(std::io::Error::other(format!(
            "could not set sys.argv: {}: {}",
            e.ename, e.evalue
        ))));
    }
    let sink = Arc::new(TerminalSink::default());
    let request = ExecuteRequest {
        code,
        silent: false,
        // Stored, so tracebacks name the script's code `Cell In[1]` rather than `In[0]`.
        store_history: true,
        allow_stdin: true,
        user_expressions: vec![],
    };
    let reply = session.execute_blocking(request, Box::new(sink.clone()));
    sink.finish();
    Ok(if reply.result.is_ok() { 0 } else { 1 })
}

/// A Python string literal for `text`: every character outside printable ASCII (and the
/// quote and backslash) as an escape, so any argument survives the trip.
fn py_str(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for ch in text.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            ' '..='~' => out.push(ch),
            c if (c as u32) <= 0xFFFF => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push_str(&format!("\\U{:08x}", c as u32)),
        }
    }
    out.push('"');
    out
}
