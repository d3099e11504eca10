//! How cell output events become nbformat outputs, as Jupyter clients record them, and the
//! shape of a notebook written by `run_notebook`.

use mirror_kernel::cell::{ErrorInfo, Output, StreamName};
use mirror_kernel::display::plain;
use mirror_kernel::runner::{run_notebook, valid_cell_id, CellOutputs, Displays};
use serde_json::{json, Value};

fn record(cells: &mut Vec<Vec<Value>>, displays: &mut Displays, cell: usize, outs: &[Output]) {
    let mut rec = CellOutputs::new(cell, cells, displays);
    for o in outs {
        rec.apply(o);
    }
}

fn stream(name: StreamName, text: &str) -> Output {
    Output::Stream {
        name,
        text: text.into(),
    }
}

fn display(text: &str, id: Option<&str>) -> Output {
    Output::DisplayData {
        data: plain(text),
        metadata: Default::default(),
        display_id: id.map(str::to_string),
    }
}

fn update(text: &str, id: &str) -> Output {
    Output::UpdateDisplayData {
        data: plain(text),
        metadata: Default::default(),
        display_id: id.into(),
    }
}

#[test]
fn streams_merge_per_name_and_updates_replace_in_place() {
    let (mut cells, mut displays) = (vec![], Displays::default());
    record(
        &mut cells,
        &mut displays,
        0,
        &[
            stream(StreamName::Stdout, "a\n"),
            stream(StreamName::Stdout, "b\n"),
            stream(StreamName::Stderr, "warn\n"),
            stream(StreamName::Stdout, "c\n"),
            display("1/3", Some("bar")),
            update("2/3", "bar"),
            update("3/3 done", "bar"),
        ],
    );
    let got = &cells[0];
    assert_eq!(got.len(), 4);
    assert_eq!(
        got[0],
        json!({"output_type": "stream", "name": "stdout", "text": "a\nb\n"})
    );
    assert_eq!(got[1]["name"], "stderr");
    assert_eq!(got[2]["text"], "c\n");
    assert_eq!(got[3]["data"]["text/plain"], "3/3 done");
    // A later cell may update a display shown by an earlier one.
    record(&mut cells, &mut displays, 1, &[update("again", "bar")]);
    assert_eq!(cells[0][3]["data"]["text/plain"], "again");
    assert!(cells[1].is_empty());
}

#[test]
fn clear_output_now_and_with_wait() {
    let (mut cells, mut displays) = (vec![], Displays::default());
    let mut rec = CellOutputs::new(0, &mut cells, &mut displays);
    rec.apply(&stream(StreamName::Stdout, "old\n"));
    rec.apply(&Output::ClearOutput { wait: false });
    rec.apply(&stream(StreamName::Stdout, "x\n"));
    rec.apply(&Output::ClearOutput { wait: true });
    // `wait` keeps the output until something new arrives.
    assert_eq!(rec.outputs().len(), 1);
    assert_eq!(rec.outputs()[0]["text"], "x\n");
    rec.apply(&display("new", Some("d")));
    rec.apply(&Output::ExecuteResult {
        execution_count: 3,
        data: plain("42"),
        metadata: Default::default(),
    });
    rec.apply(&Output::Error(ErrorInfo {
        ename: "ValueError".into(),
        evalue: "bad".into(),
        traceback: vec!["tb".into()],
    }));
    assert_eq!(cells[0].len(), 3);
    assert_eq!(cells[0][0]["data"]["text/plain"], "new");
    assert_eq!(
        cells[0][1],
        json!({"output_type": "execute_result", "execution_count": 3, "data": {"text/plain": "42"}, "metadata": {}})
    );
    assert_eq!(
        cells[0][2],
        json!({"output_type": "error", "ename": "ValueError", "evalue": "bad", "traceback": ["tb"]})
    );
}

fn notebook(cells: Value) -> Value {
    json!({
        "nbformat": 4,
        "nbformat_minor": 2,
        "metadata": {"kernelspec": {"name": "mirror", "display_name": "Mirror (Keras, multi-GPU)", "language": "python"}},
        "cells": cells,
    })
}

#[test]
fn written_notebook_has_cell_ids_counts_and_outputs() {
    let dir = std::env::temp_dir().join(format!("mk-runner-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let input = dir.join("shape.ipynb");
    let nb = notebook(json!([
        {"cell_type": "markdown", "metadata": {}, "source": ["# Title\n", "text"]},
        {"cell_type": "code", "metadata": {}, "source": ["x = 1\n", "print(x + 1)"], "outputs": [], "execution_count": null},
        {"cell_type": "code", "id": "keep-me", "metadata": {}, "source": "x * 21", "outputs": [], "execution_count": null},
    ]));
    std::fs::write(&input, serde_json::to_string(&nb).unwrap()).unwrap();
    let out = dir.join("out.ipynb");
    // Errors are allowed so the shape is checked whatever the cells do.
    let summary = run_notebook(&input, Some(&out), false, None, true).unwrap();
    assert_eq!(summary.cells_run, 2);
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(written["nbformat_minor"], 5);
    let cells = written["cells"].as_array().unwrap();
    let ids: Vec<&str> = cells.iter().map(|c| c["id"].as_str().unwrap()).collect();
    assert!(ids.iter().all(|id| valid_cell_id(id)));
    assert_eq!(ids[2], "keep-me");
    assert_ne!(ids[0], ids[1]);
    assert!(
        cells[0].get("outputs").is_none(),
        "markdown cells carry no outputs"
    );
    for c in &cells[1..] {
        assert!(c["outputs"].is_array());
        assert!(c["execution_count"].is_u64());
    }
    validate_with_nbformat(&out);
    std::fs::remove_dir_all(&dir).ok();
}

/// Checks the notebook with nbformat's own validator when a Python that has it is at hand:
/// the project's `.venv` (made by scripts/test.sh) or the interpreter in `NBFORMAT_PYTHON`.
fn validate_with_nbformat(path: &std::path::Path) {
    let venv = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python");
    let python = match std::env::var_os("NBFORMAT_PYTHON") {
        Some(p) => std::path::PathBuf::from(p),
        None if venv.exists() => venv,
        None => return,
    };
    let check = "import sys, nbformat\n\
                 nb = nbformat.read(sys.argv[1], as_version=4)\n\
                 nbformat.validate(nb)\n\
                 print('valid', nb.nbformat, nb.nbformat_minor)";
    let out = std::process::Command::new(&python)
        .arg("-c")
        .arg(check)
        .arg(path)
        .output()
        .expect("the Python named for nbformat runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("valid 4 5"),
        "nbformat rejected the notebook: {}{}",
        stdout,
        String::from_utf8_lossy(&out.stderr)
    );
}
