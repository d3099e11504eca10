//! Keras's callbacks around `fit`, seen from a notebook, against real TensorFlow 2.21 /
//! Keras 3.15: every cell of tests/fixtures/keras/callbacks_reference.json (ModelCheckpoint
//! each epoch, every N batches, on the best monitored value in either direction, with an
//! initial threshold, a missing or unknown monitor, its argument errors and the folders it
//! makes; the weights a batch-level checkpoint holds; the batch hooks and their logs;
//! ReduceLROnPlateau's learning-rate sequence, cooldown, floor and errors; EarlyStopping's
//! baseline, min_delta, start_from_epoch and restoring; CSVLogger's rows, separator and
//! append; LambdaCallback; TensorBoard's event files) runs through a real session, each in a
//! fresh one with a fresh folder for its files, and must print what Keras printed (numbers
//! within 1e-5, the rest exactly) and raise the same UserWarnings; the TensorBoard cell's
//! event files must hold the scalars Keras's held (runs, tags and steps in order, values
//! within 1e-5). The fixture is written by tests/fixtures/keras/make_callbacks_reference.py.

use std::path::Path;

use mirror_kernel::keras::callbacks::event_file::read_scalars;
use mirror_kernel::session::Session;
use serde_json::Value as Json;

use crate::common::cells::{difference, fixture_cases, raised, run};

/// Where a cell's folder goes in the fixture's code and printed text.
const MARK: &str = "@TMP@";

/// The UserWarnings a cell raised, one line each as `UserWarning: text`.
fn warnings_of(stderr: &str) -> String {
    stderr
        .lines()
        .filter_map(|l| l.find("UserWarning: ").map(|at| format!("{}\n", &l[at..])))
        .collect()
}

/// `[run, tag, step, value]` of every scalar in the event files of each run folder under
/// `logs`, in the order written, as the kernel's reader finds them.
fn events_under(logs: &Path) -> Vec<(String, String, i64, f64)> {
    let mut out = vec![];
    let mut runs: Vec<_> = std::fs::read_dir(logs)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    runs.sort();
    for run_dir in runs {
        let run_name = run_dir
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        let mut files: Vec<_> = std::fs::read_dir(&run_dir)
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        files.sort();
        for f in files {
            let bytes = std::fs::read(&f).unwrap_or_default();
            for s in read_scalars(&bytes) {
                out.push((run_name.clone(), s.tag, s.step, s.value));
            }
        }
    }
    out
}

/// Where the scalars the kernel logged differ from Keras's: the same runs, tags and steps
/// in the same order, values within `tol`.
fn events_differ(want: &Json, logs: &Path, tol: f64) -> Option<String> {
    let want: Vec<(String, String, i64, f64)> = want
        .as_array()?
        .iter()
        .map(|e| {
            (
                e[0].as_str().unwrap_or("").to_string(),
                e[1].as_str().unwrap_or("").to_string(),
                e[2].as_i64().unwrap_or(-1),
                e[3].as_f64().unwrap_or(f64::NAN),
            )
        })
        .collect();
    let got = events_under(logs);
    let keys = |v: &[(String, String, i64, f64)]| -> Vec<(String, String, i64)> {
        v.iter()
            .map(|(r, t, s, _)| (r.clone(), t.clone(), *s))
            .collect()
    };
    if keys(&want) != keys(&got) {
        return Some(format!(
            "expected {:?}\nwritten {:?}",
            keys(&want),
            keys(&got)
        ));
    }
    for (w, g) in want.iter().zip(&got) {
        if (w.3 - g.3).abs() > tol * w.3.abs().max(1.0) {
            return Some(format!("{} {} step {}: {} vs {}", w.0, w.1, w.2, w.3, g.3));
        }
    }
    None
}

#[test]
fn every_cell_matches_keras() {
    let mut failures = Vec::new();
    for case in &fixture_cases("tests/fixtures/keras/callbacks_reference.json") {
        let name = case["name"].as_str().unwrap_or("?");
        let code = case["code"].as_str().unwrap_or("");
        let tol = case["tol"].as_f64().unwrap_or(1e-5);
        let dir = std::env::temp_dir().join(format!("mk-callbacks-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        let folder = dir.to_string_lossy().to_string();
        let session = Session::start().unwrap_or_else(|e| panic!("session did not start: {e}"));
        let shown = run(&session, &code.replace(MARK, &folder));
        if let Some(want) = case.get("events") {
            if let Some(d) = events_differ(want, &dir.join("logs"), tol) {
                failures.push(format!("{name}: event files differ: {d}"));
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
        if let Some(raised) = raised(name, &shown) {
            failures.push(raised);
            continue;
        }
        let want = case["stdout"].as_str().unwrap_or("");
        let got = shown.stdout.replace(&folder, MARK);
        if let Some(d) = difference(want, &got, tol) {
            failures.push(format!("{name}: stdout differs: {d}\nprinted:\n{got}"));
        }
        let want_err = case["stderr"].as_str().unwrap_or("");
        let got_err = warnings_of(&shown.stderr).replace(&folder, MARK);
        if want_err != got_err {
            failures.push(format!(
                "{name}: warnings differ\nexpected:\n{want_err}\nprinted:\n{got_err}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
