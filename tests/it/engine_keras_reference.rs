//! Replays real Keras training runs (tests/fixtures/engine/keras_reference.json, made by
//! make_keras_reference.py beside it) on the Rust engine: same model config (read from
//! Keras's own JSON), same initial weights, same unshuffled data, same optimizer. After two
//! epochs the weights, the History, evaluate() and predict() must match Keras within 1e-4.

use mirror_kernel::device::cpu::CpuDevice;
use mirror_kernel::keras::saving::{compile_from_json, model_from_json};
use mirror_kernel::keras::{evaluate, fit, predict, Data, FitOptions, HostArray, Replica};
use serde_json::Value;

fn floats(v: &Value) -> Vec<f32> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_f64)
                .map(|x| x as f32)
                .collect()
        })
        .unwrap_or_default()
}

fn close(what: &str, got: f64, want: f64, tol: f64) {
    assert!(
        (got - want).abs() <= tol * (1.0 + want.abs()),
        "{what}: engine {got}, keras {want}"
    );
}

#[test]
fn the_engine_trains_exactly_like_keras() {
    let text = include_str!("../fixtures/engine/keras_reference.json");
    let doc: Value = serde_json::from_str(text).expect("fixture");
    let cases = doc["cases"].as_array().expect("cases");
    assert!(cases.len() >= 20);
    for case in cases {
        let name = case["name"].as_str().unwrap_or("?");
        let (cfg, _) = model_from_json(&case["model"]).expect(name);
        let compile = compile_from_json(&case["compile"]).expect(name);
        let plan = cfg.plan().expect(name);
        let init: Vec<HostArray> = plan
            .vars
            .iter()
            .zip(case["initial_weights"].as_array().expect("weights"))
            .map(|(v, w)| HostArray::new(v.shape.clone(), floats(w)))
            .collect();
        let mut r = Replica::new(&cfg, &init, Box::new(CpuDevice::new(0))).expect(name);
        r.compile(&compile).expect(name);
        let (x, y) = (floats(&case["x"]), floats(&case["y"]));
        let bs = case["batch_size"].as_u64().unwrap_or(32) as usize;
        let opts = FitOptions {
            epochs: case["epochs"].as_u64().unwrap_or(1) as usize,
            batch_size: bs,
            shuffle: false,
            ..FitOptions::default()
        };
        let h = fit(&mut r, Data { x: &x, y: &y }, None, &opts, &mut [], None).expect(name);
        let want_keys: Vec<&String> = case["history"].as_object().expect("h").keys().collect();
        let mut want_keys: Vec<&String> = want_keys;
        want_keys.sort();
        assert_eq!(h.history.keys().collect::<Vec<_>>(), want_keys, "{name}");
        for (k, vals) in case["history"].as_object().expect("history") {
            for (e, want) in floats(vals).iter().enumerate() {
                close(
                    &format!("{name} history {k}[{e}]"),
                    h.history[k][e],
                    f64::from(*want),
                    1e-4,
                );
            }
        }
        let got = r.get_weights().expect(name);
        for (i, (g, want)) in got
            .iter()
            .zip(case["final_weights"].as_array().expect("w"))
            .enumerate()
        {
            for (j, (a, b)) in g.data.iter().zip(floats(want)).enumerate() {
                close(
                    &format!("{name} weight {i}[{j}]"),
                    f64::from(*a),
                    f64::from(b),
                    1e-4,
                );
            }
        }
        let ev = evaluate(&mut r, Data { x: &x, y: &y }, bs, None).expect(name);
        for (k, v) in &ev {
            let want = case["evaluate"][k.as_str()].as_f64().expect("evaluate key");
            close(&format!("{name} evaluate {k}"), *v, want, 1e-4);
        }
        let per: usize = cfg.input_shape.iter().product();
        let p = predict(&mut r, &x[..4 * per], 32, None).expect(name);
        for (a, b) in p.iter().zip(floats(&case["predict"])) {
            close(
                &format!("{name} predict"),
                f64::from(*a),
                f64::from(b),
                1e-4,
            );
        }
    }
}
