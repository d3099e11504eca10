//! A small notebook run end to end through the interpreter: stdout merged into one stream,
//! a figure shown by `plt.show()` as a PNG, a display updated in place, the execute result
//! with its count, and a failing cell that stops the run (or not, with `allow_errors`).

use std::path::{Path, PathBuf};

use mirror_kernel::runner::{exec_script, exec_script_with_args, run_notebook, RunnerError};
use serde_json::{json, Value};

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mk-e2e-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn write_notebook(path: &Path, sources: &[&str]) {
    let cells: Vec<Value> = sources
        .iter()
        .map(|s| json!({"cell_type": "code", "metadata": {}, "source": s, "outputs": [], "execution_count": null}))
        .collect();
    let nb = json!({"nbformat": 4, "nbformat_minor": 4, "metadata": {}, "cells": cells});
    std::fs::write(path, serde_json::to_string_pretty(&nb).unwrap()).unwrap();
}

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn notebook_outputs_have_jupyters_shape() {
    let dir = temp_dir("nb");
    let input = dir.join("lesson.ipynb");
    let saved = dir.join("bars.png");
    let cell2 = format!(
        "h = display(HTML('<b>epoch 1</b>'), display_id=True)\n\
         h.update(HTML('<b>epoch 2</b>'))\n\
         fig, axes = plt.subplots(1, 2, figsize=(4, 2))\n\
         axes[0].bar([1, 2, 3], [3, 1, 2])\n\
         axes[1].hist([1, 2, 2, 3], bins=3)\n\
         fig.savefig({:?})\n\
         plt.close('all')\n\
         6 * 7",
        saved.to_str().unwrap()
    );
    write_notebook(
        &input,
        &[
            "import matplotlib.pyplot as plt\nfrom IPython.display import display, HTML\nprint('hello')\nprint('world')\nplt.plot([1, 4, 9], 'o-')\nplt.show()",
            &cell2,
            "1 / 0",
            "print('not reached')",
        ],
    );
    let err = run_notebook(&input, None, false, None, false).unwrap_err();
    let RunnerError::CellFailed {
        cell,
        ename,
        written,
        ..
    } = err
    else {
        panic!("expected a failing cell, got {err:?}")
    };
    assert_eq!((cell, ename.as_str()), (2, "ZeroDivisionError"));
    assert_eq!(written, dir.join("lesson.nbconvert.ipynb"));
    let nb = read(&written);
    let cells = nb["cells"].as_array().unwrap();
    let out0 = cells[0]["outputs"].as_array().unwrap();
    assert_eq!(
        out0[0],
        json!({"output_type": "stream", "name": "stdout", "text": "hello\nworld\n"})
    );
    assert_eq!(out0[1]["output_type"], "display_data");
    assert_eq!(
        out0[1]["data"]["text/plain"],
        "<Figure size 640x480 with 1 Axes>"
    );
    assert!(out0[1]["data"]["image/png"]
        .as_str()
        .unwrap()
        .starts_with("iVBORw0KGgo"));
    let out1 = cells[1]["outputs"].as_array().unwrap();
    assert_eq!(out1.len(), 2);
    assert_eq!(out1[0]["data"]["text/html"], "<b>epoch 2</b>");
    assert_eq!(
        out1[1],
        json!({"output_type": "execute_result", "execution_count": 2, "data": {"text/plain": "42"}, "metadata": {}})
    );
    assert_eq!(cells[1]["execution_count"], 2);
    assert_eq!(cells[2]["outputs"][0]["ename"], "ZeroDivisionError");
    assert!(
        cells[3]["outputs"].as_array().unwrap().is_empty(),
        "the run stops at the error"
    );
    let png = std::fs::read(&saved).unwrap();
    let info = png::Decoder::new(png.as_slice()).read_info().unwrap();
    assert_eq!((info.info().width, info.info().height), (400, 200));

    // With allow_errors every cell runs, and in place the input itself is rewritten.
    let summary = run_notebook(&input, None, true, None, true).unwrap();
    assert_eq!(summary.output, input);
    assert_eq!(summary.cells_run, 4);
    assert_eq!(summary.errors, vec![(2, "ZeroDivisionError".to_string())]);
    let nb = read(&input);
    assert_eq!(nb["cells"][3]["outputs"][0]["text"], "not reached\n");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_cell_past_its_timeout_is_interrupted() {
    let dir = temp_dir("timeout");
    let input = dir.join("slow.ipynb");
    write_notebook(
        &input,
        &["n = 0\nwhile True:\n    n += 1", "print('after')"],
    );
    let out = dir.join("out.ipynb");
    let t = std::time::Duration::from_millis(300);
    let err = run_notebook(&input, Some(&out), false, Some(t), false).unwrap_err();
    assert!(
        matches!(err, RunnerError::CellFailed { cell: 0, ref ename, .. } if ename == "KeyboardInterrupt"),
        "{err:?}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn scripts_report_their_status() {
    let dir = temp_dir("exec");
    let ok = dir.join("ok.py");
    std::fs::write(&ok, "total = sum(range(10))\nprint('total', total)\n").unwrap();
    assert_eq!(exec_script(&ok).unwrap(), 0);
    let bad = dir.join("bad.py");
    std::fs::write(&bad, "raise ValueError('nope')\n").unwrap();
    assert_eq!(exec_script(&bad).unwrap(), 1);
    assert!(matches!(
        exec_script(&dir.join("missing.py")),
        Err(RunnerError::Read { .. })
    ));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn script_arguments_become_sys_argv() {
    let dir = temp_dir("argv");
    let script = dir.join("args.py");
    let args: Vec<String> = ["cnn", "--epochs=3", "two words", "quote\"back\\slash", "é✓"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    // The script fails (status 1) unless it sees exactly what `python FILE ARGS` gives.
    let mut want = vec![script.to_string_lossy().into_owned()];
    want.extend(args.iter().cloned());
    let expected: Vec<String> = want.iter().map(|a| format!("{a:?}")).collect();
    std::fs::write(
        &script,
        format!(
            "import sys\nassert sys.argv == [{}], sys.argv\nassert '_argv_sys' not in globals()\n",
            expected.join(", ")
        ),
    )
    .unwrap();
    assert_eq!(exec_script_with_args(&script, &args).unwrap(), 0);
    assert_eq!(exec_script_with_args(&script, &args[..2]).unwrap(), 1);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn numpy_arrays_plot_like_lists() {
    let dir = temp_dir("np");
    let input = dir.join("arrays.ipynb");
    let png = dir.join("digits.png");
    let cell = format!(
        "import numpy as np\n\
         import matplotlib.pyplot as plt\n\
         x = np.linspace(0, 10, 50)\n\
         fig, axes = plt.subplots(1, 2, figsize=(6, 3), dpi=50)\n\
         axes[0].imshow(np.arange(784).reshape(28, 28) / 784.0, cmap='gray')\n\
         axes[1].plot(x, np.sin(x), 'r--')\n\
         counts, edges, _ = axes[1].hist(np.array([1.0, 2.0, 2.0, 3.0]), bins=2)\n\
         fig.savefig({:?})\n\
         print(counts, len(edges))\n\
         plt.close(fig)",
        png.to_str().unwrap()
    );
    write_notebook(&input, &[&cell]);
    run_notebook(&input, None, true, None, false).unwrap();
    let nb = read(&input);
    assert_eq!(nb["cells"][0]["outputs"][0]["text"], "[1.0, 3.0] 3\n");
    let bytes = std::fs::read(&png).unwrap();
    let info = png::Decoder::new(bytes.as_slice()).read_info().unwrap();
    assert_eq!((info.info().width, info.info().height), (300, 150));
    std::fs::remove_dir_all(&dir).ok();
}

/// The CLI as a shell user runs it, output piped: `run` works in the notebook's folder and
/// shows each cell as it runs; neither command writes colour codes into a pipe.
#[test]
fn the_cli_runs_in_the_notebooks_folder_and_writes_plain_text_to_pipes() {
    let dir = temp_dir("cli");
    std::fs::write(dir.join("numbers.txt"), "1 2 3\n").unwrap();
    let input = dir.join("lesson.ipynb");
    write_notebook(
        &input,
        &[
            "# read the data beside the notebook\nvals = open('numbers.txt').read().split()\nprint(len(vals))",
            "import tensorflow as tf, numpy as np\n\
             m = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(1)])\n\
             m.compile(optimizer='sgd', loss='mse')\n\
             h = m.fit(np.ones((8, 3)), np.ones((8, 1)), epochs=2, batch_size=4)",
            "1 / 0",
        ],
    );
    // Started from elsewhere, with a path relative to that place.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mirror-kernel"))
        .current_dir(dir.parent().unwrap())
        .args(["run", "--allow-errors"])
        .arg(Path::new(dir.file_name().unwrap()).join("lesson.ipynb"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(
        lines[0].starts_with("[1/3] vals = open('numbers.txt').read().split()  ("),
        "{stdout}"
    );
    assert!(
        lines[1].starts_with("[2/3] import tensorflow as tf, numpy as np  ("),
        "{stdout}"
    );
    // The fit's last progress line, under the cell's text.
    assert!(
        lines[2].starts_with("      2/2 ━━━━━━━━━━━━━━━━━━━━ "),
        "{stdout}"
    );
    assert!(lines[2].contains("loss: "), "{stdout}");
    assert!(lines[3].starts_with("[3/3] 1 / 0  ("), "{stdout}");
    assert!(
        stdout.contains("ZeroDivisionError: division by zero"),
        "{stdout}"
    );
    assert!(
        !stdout.contains('\x1b') && !stderr.contains('\x1b'),
        "{stdout}{stderr}"
    );
    assert!(
        stderr.contains("ran 3 code cells") && stderr.contains("(1 raised)"),
        "{stderr}"
    );
    let nb = read(&dir.join("lesson.nbconvert.ipynb"));
    assert_eq!(nb["cells"][0]["outputs"][0]["text"], "3\n");

    let script = dir.join("fails.py");
    std::fs::write(&script, "print('before')\nraise ValueError('bad value')\n").unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mirror-kernel"))
        .arg("exec")
        .arg(&script)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "before\n");
    assert!(stderr.contains("ValueError: bad value"), "{stderr}");
    assert!(!stderr.contains('\x1b'), "{stderr}");
}
