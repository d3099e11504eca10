//! `.keras` archives of functional models that are not chains, both ways: the archives
//! real Keras 3.15 wrote (tests/fixtures/keras/files, by make_graph_files_reference.py) for
//! a two-input, two-output graph with Concatenate, Add and a shared layer, and for a
//! residual block with Add and Multiply, load here with their layers in Keras's order,
//! predict what Keras predicted within 1e-6, and take the next `fit` step Keras took after
//! loading (compile config and Adam's state restored); so do the legacy `.h5` files Keras
//! wrote for them. Graphs saved here (`.keras` and `.h5`) load back with the same weights,
//! predictions and summary bit for bit and train on identically; cut copies of both files
//! are Python errors and the session lives on.

use crate::common::cells::{ok, run, session};

use mirror_kernel::session::Session;
use serde_json::Value;

const DIR: &str = "tests/fixtures/keras/files";
const FIXTURES: [&str; 2] = ["graph_model", "skip_model"];

fn reference() -> Value {
    let p = format!("{DIR}/graph_files_reference.json");
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{p}: {e}"))
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .map(|a| a.iter().filter_map(Value::as_f64).collect())
        .unwrap_or_default()
}

fn flat(v: &Value) -> Vec<f64> {
    v.as_array()
        .into_iter()
        .flatten()
        .flat_map(floats)
        .collect()
}

fn assert_close(what: &str, want: &[f64], got: &[f64], tol: f64) {
    assert_eq!(want.len(), got.len(), "{what}: {got:?}");
    for (i, (a, b)) in want.iter().zip(got).enumerate() {
        assert!((a - b).abs() <= tol, "{what}[{i}]: want {a}, got {b}");
    }
}

fn printed_floats(s: &Session, list: &str) -> Vec<f64> {
    let out = ok(s, &format!("print({list})"));
    serde_json::from_str::<Vec<f64>>(out.trim()).unwrap_or_else(|e| panic!("{out}: {e}"))
}

/// Python for the reference's arrays (one per input or output) with `rows` rows each.
fn arrays(values: &Value, rows: usize) -> String {
    let items: Vec<String> = values
        .as_array()
        .into_iter()
        .flatten()
        .map(|v| {
            let f = floats(v);
            let width = f.len() / rows;
            format!("np.array({f:?}, dtype='float32').reshape(({rows}, {width}))")
        })
        .collect();
    format!("one_or_list([{}])", items.join(", "))
}

const PRELUDE: &str = "import tensorflow as tf\nimport numpy as np\n\
def one_or_list(a):\n    return a if len(a) > 1 else a[0]\n\
def flat_predictions(m, x):\n    o = m.predict(x, verbose=0)\n    return [float(v) for p in (o if isinstance(o, list) else [o]) for v in p.ravel()]\n";

#[test]
fn graph_archives_real_keras_wrote_load_predict_and_continue_fit_as_keras_did() {
    let reference = reference();
    let s = session();
    ok(&s, PRELUDE);
    for (name, ext) in FIXTURES.into_iter().flat_map(|n| [(n, "keras"), (n, "h5")]) {
        let r = &reference[name];
        let p = format!("{DIR}/{name}.{ext}");
        ok(
            &s,
            &format!(
                "x = {}\ntx = {}\nty = {}\nm = tf.keras.models.load_model({p:?})",
                arrays(&r["x"], 2),
                arrays(&r["train_x"], 8),
                arrays(&r["train_y"], 8)
            ),
        );
        let names = ok(&s, "print([l.name for l in m.layers])");
        let want: Vec<String> = r["layer_names"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|n| n.as_str().map(|n| format!("'{n}'")))
            .collect();
        assert_eq!(names.trim(), format!("[{}]", want.join(", ")), "{p}");
        let step = ok(&s, "print(int(m.optimizer.iterations.numpy()))");
        assert_eq!(step.trim(), r["iterations"].to_string(), "{p}");
        let predicted = printed_floats(&s, "flat_predictions(m, x)");
        assert_close(&p, &flat(&r["predictions"]), &predicted, 1e-6);
        ok(
            &s,
            "m.fit(tx, ty, batch_size=8, epochs=1, verbose=0, shuffle=False)",
        );
        let weights = printed_floats(&s, "[float(v) for w in m.get_weights() for v in w.ravel()]");
        assert_close(
            &format!("{p} after one more step"),
            &flat(&r["weights_after_fit"]),
            &weights,
            1e-5,
        );
    }
}

/// A graph with two inputs, two outputs, a shared layer, Concatenate, Add and Multiply,
/// compiled with a loss and a metric per output and fitted one step.
const GRAPH: &str = "a = tf.keras.Input((3,), name='a')\n\
b = tf.keras.Input((2,), name='b')\n\
shared = tf.keras.layers.Dense(4, activation='tanh')\n\
c = tf.keras.layers.Concatenate()([shared(a), b])\n\
s = tf.keras.layers.Add()([tf.keras.layers.Dense(4)(c), shared(tf.keras.layers.Dense(3)(c))])\n\
g = tf.keras.layers.Multiply()([s, tf.keras.layers.Dense(4, activation='sigmoid')(c)])\n\
y1 = tf.keras.layers.Dense(1, name='score')(g)\n\
y2 = tf.keras.layers.Dense(2, activation='softmax', name='kind')(c)\n\
m = tf.keras.Model([a, b], [y1, y2], name='two_heads')\n\
m.compile(optimizer=tf.keras.optimizers.Adam(0.01), loss=['mse', 'categorical_crossentropy'], loss_weights=[1.0, 0.5], metrics=[['mae'], ['accuracy']])\n\
np.random.seed(1)\n\
x = [np.random.rand(8, 3).astype('float32'), np.random.rand(8, 2).astype('float32')]\n\
y = [np.random.rand(8, 1).astype('float32'), np.eye(2, dtype='float32')[np.random.randint(0, 2, size=8)]]\n\
m.fit(x, y, batch_size=8, epochs=1, verbose=0)\n";

#[test]
fn graphs_saved_here_load_back_bitwise_and_train_on_identically() {
    let s = session();
    ok(&s, PRELUDE);
    ok(&s, GRAPH);
    let dir = std::env::temp_dir().join(format!("graph-files-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    ok(
        &s,
        "def same(a, b):\n    return len(a) == len(b) and all([(p == q).all() for p, q in zip(a, b)])\n",
    );
    // Each file holds `m` as trained so far; `m` and the loaded copy then take one step.
    for file in ["g.h5", "g.keras"] {
        let p = dir.join(file).display().to_string();
        let out = ok(
            &s,
            &format!(
                "m.save({p:?})\n\
n = tf.keras.models.load_model({p:?})\n\
print(n.name, [l.name for l in n.layers] == [l.name for l in m.layers])\n\
print(same(m.get_weights(), n.get_weights()), flat_predictions(m, x) == flat_predictions(n, x))\n\
m.fit(x, y, batch_size=8, epochs=1, verbose=0, shuffle=False)\n\
n.fit(x, y, batch_size=8, epochs=1, verbose=0, shuffle=False)\n\
print(same(m.get_weights(), n.get_weights()))\n"
            ),
        );
        assert_eq!(out, "two_heads True\nTrue True\nTrue\n", "{file}");
    }
    let summaries = run(&s, "m.summary()\nn.summary()");
    assert_eq!(summaries.error, None);
    let texts: Vec<String> = summaries
        .outputs
        .iter()
        .filter_map(|o| match o {
            mirror_kernel::cell::Output::DisplayData { data, .. } => data
                .get("text/plain")
                .and_then(|v| v.as_str())
                .map(str::to_string),
            _ => None,
        })
        .collect();
    assert_eq!(texts.len(), 2, "{texts:?}");
    assert_eq!(texts[0], texts[1]);
    let evaluated = ok(
        &s,
        "print(m.evaluate(x, y, verbose=0, return_dict=True) == n.evaluate(x, y, verbose=0, return_dict=True))",
    );
    assert_eq!(evaluated, "True\n");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn cut_graph_files_are_python_errors_and_the_session_lives() {
    let s = session();
    ok(&s, PRELUDE);
    let dir = std::env::temp_dir().join(format!("graph-cut-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    for ext in ["keras", "h5"] {
        let bytes = std::fs::read(format!("{DIR}/graph_model.{ext}")).expect("fixture");
        for (i, keep) in [bytes.len() / 2, bytes.len() - 100].into_iter().enumerate() {
            let p = dir.join(format!("cut{i}.{ext}"));
            std::fs::write(&p, &bytes[..keep]).expect("write");
            let shown = run(
                &s,
                &format!("tf.keras.models.load_model({:?})", p.display().to_string()),
            );
            let (ename, _) = shown.error.expect("a cut archive must not load");
            assert!(
                ["ValueError", "OSError"].contains(&ename.as_str()),
                "{ext}: {ename}"
            );
        }
    }
    assert_eq!(ok(&s, "print(1 + 1)"), "2\n");
    let _ = std::fs::remove_dir_all(&dir);
}
