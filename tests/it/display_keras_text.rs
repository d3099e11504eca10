//! Progress-bar and summary text against Keras 3's own output. The fixtures come from
//! `tests/fixtures/display/generate.py`, which drives Keras's `Progbar` with a scripted
//! clock and prints real models' summaries.

use std::time::Duration;

use mirror_kernel::display::progress::{epoch_header, keras_order, Mode, ProgressBar};
use mirror_kernel::display::summary::{ParamCount, Summary, SummaryRow};
use serde_json::Value;

fn fixture(name: &str) -> Value {
    let path = format!(
        "{}/tests/fixtures/display/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn logs_of(v: &Value) -> Vec<(String, f64)> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|p| (p[0].as_str().unwrap().to_string(), p[1].as_f64().unwrap()))
        .collect()
}

/// Removes escape sequences and redraw characters: what a reader of the line sees.
fn visible(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => {
                for d in chars.by_ref() {
                    if d == 'm' {
                        break;
                    }
                }
            }
            '\u{8}' | '\r' | '\n' => {}
            c => out.push(c),
        }
    }
    out.trim_end().to_string()
}

#[test]
fn progress_frames_match_keras_byte_for_byte() {
    let cases = fixture("progress.json");
    let mut compared = 0;
    for case in cases.as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let total = case["total"].as_u64().map(|t| t as usize);
        let verbose = case["verbose"].as_u64().unwrap() as u8;
        let mut bar = ProgressBar::new(total, verbose, Mode::Terminal);
        let events = case["events"].as_array().unwrap();
        let frames = case["frames"].as_array().unwrap();
        for (i, (ev, want)) in events.iter().zip(frames).enumerate() {
            let step = ev["step"].as_u64().unwrap() as usize;
            let logs = logs_of(&ev["logs"]);
            let t = Duration::from_secs_f64(ev["t"].as_f64().unwrap());
            let got = if ev["finalize"].as_bool().unwrap() {
                bar.finish(step, &logs, t)
            } else {
                bar.update(step, &logs, t)
            };
            match (want.as_str(), got) {
                (None, None) => {}
                (Some(w), Some(g)) => {
                    assert_eq!(g.terminal, w, "{name} event {i}");
                    assert_eq!(g.plain, visible(w), "{name} event {i} (plain)");
                    compared += 1;
                }
                (w, g) => panic!("{name} event {i}: Keras printed {w:?}, we gave {g:?}"),
            }
        }
    }
    assert!(compared > 30, "only {compared} frames compared");
}

#[test]
fn notebook_mode_throttles_to_ten_frames_a_second_and_ends_with_the_final_line() {
    let mut bar = ProgressBar::new(Some(1000), 1, Mode::Notebook);
    let logs = vec![("loss".to_string(), 0.5)];
    let mut shown = 0;
    for step in 1..=1000 {
        let t = Duration::from_millis(step as u64 * 2);
        if bar.update(step, &logs, t).is_some() {
            shown += 1;
        }
    }
    // Two seconds of steps at most ten frames a second (plus the first frame).
    assert!((20..=21).contains(&shown), "{shown} frames");
    let last = bar
        .finish(1000, &logs, Duration::from_millis(2001))
        .unwrap();
    assert!(last.finished);
    assert_eq!(
        last.plain,
        "1000/1000 ━━━━━━━━━━━━━━━━━━━━ 2s 2ms/step - loss: 0.5000"
    );
    let bundle = last.bundle();
    assert_eq!(bundle["text/plain"], last.plain.as_str());
    assert!(bundle["text/html"]
        .as_str()
        .unwrap()
        .contains("width: 100%"));
}

#[test]
fn epoch_header_only_for_several_epochs() {
    assert_eq!(epoch_header(0, 5).as_deref(), Some("Epoch 1/5"));
    assert_eq!(epoch_header(0, 1), None);
}

#[test]
fn metric_order_matches_a_real_fit() {
    let order = fixture("fit_key_order.json");
    for key in ["batch", "epoch"] {
        let want: Vec<String> = order[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect();
        // Hand the keys over in a scrambled order; Keras's order must come back.
        let mut scrambled: Vec<(String, f64)> = want.iter().map(|k| (k.clone(), 0.0)).collect();
        scrambled.reverse();
        let got: Vec<String> = keras_order(&scrambled)
            .into_iter()
            .map(|(k, _)| k)
            .collect();
        assert_eq!(got, want, "{key}");
    }
}

fn count(v: &Value) -> ParamCount {
    ParamCount {
        count: v[0].as_u64().unwrap(),
        bytes: v[1].as_u64().unwrap(),
    }
}

#[test]
fn summaries_match_keras() {
    for name in ["small", "mnist_trained", "conv", "unbuilt", "functional"] {
        let f = fixture(&format!("summary_{name}.json"));
        // Keras adds the `Connected to` column only for models that are not a plain stack.
        let branching = f["text"].as_str().unwrap().contains("Connected to");
        let rows = f["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| SummaryRow {
                name: r["name"].as_str().unwrap().into(),
                type_name: r["type"].as_str().unwrap().into(),
                output_shape: r["shape"].as_str().unwrap().into(),
                params: r["params"].as_u64(),
                connected_to: branching.then(|| r["connected_to"].as_str().unwrap().into()),
            })
            .collect();
        let s = Summary {
            model_name: f["name"].as_str().unwrap().into(),
            rows,
            trainable: count(&f["trainable"]),
            non_trainable: count(&f["non_trainable"]),
            optimizer: f["optimizer"].as_array().map(|_| count(&f["optimizer"])),
        };
        assert_eq!(s.text(), f["text"].as_str().unwrap(), "summary {name}");
        let html = s.html();
        assert!(html.contains("<table") && html.contains(&f["name"].as_str().unwrap().to_string()));
    }
}

#[test]
fn logs_in_any_order_print_in_keras_order() {
    let mut bar = ProgressBar::new(Some(10), 1, Mode::Notebook);
    let logs = vec![("loss".to_string(), 0.25), ("accuracy".to_string(), 0.5)];
    bar.update(3, &logs, Duration::from_millis(300)).unwrap();
    let mut end = logs.clone();
    end.insert(0, ("val_loss".to_string(), 0.75));
    end.push(("val_accuracy".to_string(), 0.125));
    let last = bar.finish(10, &end, Duration::from_millis(1000)).unwrap();
    assert!(
        last.plain.ends_with(
            "- accuracy: 0.5000 - loss: 0.2500 - val_accuracy: 0.1250 - val_loss: 0.7500"
        ),
        "{}",
        last.plain
    );
}
