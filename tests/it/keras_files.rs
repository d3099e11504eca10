//! Real Keras files both ways (HDF5): the `.keras`, `.weights.h5` and legacy `.h5` files
//! TensorFlow 2.21 / Keras 3.15 wrote for an MLP, a CNN, a functional model and two models
//! holding BatchNormalization, LayerNormalization and layers without variables
//! (tests/fixtures/keras/files, written by make_files_reference.py) load here and predict
//! what real Keras predicted within 1e-6, with the compile config and Adam's state (and
//! the normalization models continue `fit` as the loaded Keras model did); an
//! uncompiled model's files load uncompiled, and `fit` refuses as Keras does; files
//! written here read back the same; archives of earlier versions of this kernel still load
//! with a note; truncated and bit-flipped copies of every fixture give Python errors and
//! the session lives on. Models Keras saves through their objects (a subclassed MLP, a
//! Sequential holding a user's layer, a two-input, two-output graph with a shared layer)
//! load real Keras's `.weights.h5`, predict and continue `fit` as Keras did, and write the
//! same HDF5 layout; a file of another model, a missing file and an archive without
//! config.json give Keras's errors.

use crate::common::cells::{ok, run, saved_and_loaded_back};

use std::path::{Path, PathBuf};

use mirror_kernel::device::LossKind;
use mirror_kernel::keras::load_model;
use mirror_kernel::session::Session;
use serde_json::Value;

const DIR: &str = "tests/fixtures/keras/files";
const MODELS: [&str; 5] = ["mlp", "cnn", "functional", "norm", "norm_cnn"];
/// The models holding normalizations and layers without variables (the op library runs
/// them, not the compiled engine).
const NORM_MODELS: [&str; 2] = ["norm", "norm_cnn"];

fn session() -> Session {
    match Session::start() {
        Ok(s) => s,
        Err(e) => panic!("session did not start: {e}"),
    }
}

fn reference() -> Value {
    let p = format!("{DIR}/files_reference.json");
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{p}: {e}"))
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .map(|a| a.iter().filter_map(Value::as_f64).collect())
        .unwrap_or_default()
}

fn fixture(name: &str) -> String {
    Path::new(DIR).join(name).display().to_string()
}

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("keras-files-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

/// The models of the generator, built in a cell (for `load_weights`).
fn build(name: &str) -> &'static str {
    match name {
        "mlp" => "tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(5, activation='relu'), tf.keras.layers.Dense(3, activation='softmax')])",
        "cnn" => "tf.keras.Sequential([tf.keras.Input((6, 6, 1)), tf.keras.layers.Conv2D(2, 3, activation='relu'), tf.keras.layers.MaxPooling2D(2), tf.keras.layers.Flatten(), tf.keras.layers.Dense(2)])",
        "norm" => "tf.keras.Sequential([tf.keras.Input((5,)), tf.keras.layers.Dense(4, use_bias=False), tf.keras.layers.BatchNormalization(momentum=0.5), tf.keras.layers.LeakyReLU(negative_slope=0.2), tf.keras.layers.LayerNormalization(), tf.keras.layers.Dense(2, activation='sigmoid')])",
        "norm_cnn" => "(lambda i: tf.keras.Model(i, tf.keras.layers.Dense(2)(tf.keras.layers.GlobalAveragePooling2D()(tf.keras.layers.AveragePooling2D(2)(tf.keras.layers.ReLU()(tf.keras.layers.BatchNormalization(momentum=0.8, epsilon=0.01)(tf.keras.layers.Conv2D(3, 3, use_bias=False)(i))))))))(tf.keras.Input((6, 6, 2)))",
        _ => "(lambda i: tf.keras.Model(i, tf.keras.layers.Dense(2, activation='sigmoid')(tf.keras.layers.Dense(4, activation='tanh')(i))))(tf.keras.Input((3,)))",
    }
}

/// Sets `x` to the model's probe input in the session.
fn probe(s: &Session, r: &Value) {
    let x = floats(&r["x"]);
    let shape: Vec<String> = floats(&r["input_shape"])
        .iter()
        .map(|d| (*d as usize).to_string())
        .collect();
    ok(
        s,
        &format!(
            "import tensorflow as tf\nimport numpy as np\nx = np.array({x:?}, dtype='float32').reshape((2, {}))",
            shape.join(", ")
        ),
    );
}

fn assert_close(what: &str, want: &[f64], got: &[f64], tol: f64) {
    assert_eq!(want.len(), got.len(), "{what}: {got:?}");
    for (i, (a, b)) in want.iter().zip(got).enumerate() {
        assert!((a - b).abs() <= tol, "{what}[{i}]: want {a}, got {b}");
    }
}

/// The numbers a cell prints as a Python list of floats (`print([...])`).
fn printed_floats(s: &Session, list: &str) -> Vec<f64> {
    let out = ok(s, &format!("print({list})"));
    serde_json::from_str::<Vec<f64>>(out.trim()).unwrap_or_else(|e| panic!("{out}: {e}"))
}

fn predicted(s: &Session, model: &str) -> Vec<f64> {
    printed_floats(
        s,
        &format!("[float(v) for v in {model}.predict(x, verbose=0).ravel()]"),
    )
}

#[test]
fn real_keras_files_load_and_predict_as_keras_did() {
    let reference = reference();
    let s = session();
    for name in MODELS {
        let r = &reference[name];
        let want = floats(&r["predictions"]);
        probe(&s, r);
        for ext in ["keras", "h5"] {
            let p = fixture(&format!("{name}.{ext}"));
            ok(&s, &format!("m = tf.keras.models.load_model({p:?})"));
            assert_close(&p, &want, &predicted(&s, "m"), 1e-6);
        }
        let p = fixture(&format!("{name}.weights.h5"));
        ok(&s, &format!("w = {}\nw.load_weights({p:?})", build(name)));
        assert_close(&p, &want, &predicted(&s, "w"), 1e-6);
    }
}

#[test]
fn an_uncompiled_models_files_load_uncompiled() {
    let r = &reference()["uncompiled"];
    let want = floats(&r["predictions"]);
    let s = session();
    probe(&s, r);
    for ext in ["keras", "h5"] {
        let p = fixture(&format!("uncompiled.{ext}"));
        // config.json holds `"compile_config": {}`; the legacy file has no training_config.
        let saved = load_model(Path::new(&p)).unwrap_or_else(|e| panic!("{p}: {e}"));
        assert!(saved.compile.is_none(), "{p}");
        assert!(saved.optimizer.is_none(), "{p}");
        ok(&s, &format!("m = tf.keras.models.load_model({p:?})"));
        assert_close(&p, &want, &predicted(&s, "m"), 1e-6);
        let out = ok(
            &s,
            "try:\n    m.fit(x, np.zeros((2, 3), 'float32'), verbose=0)\nexcept Exception as e:\n    print(type(e).__name__, e)",
        );
        let want_err = r["fit_error"]
            .as_array()
            .map(|e| {
                e.iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .unwrap_or_default();
        assert_eq!(out.trim(), want_err, "{p}");
    }
}

#[test]
fn real_keras_files_restore_the_compile_config_and_adams_state() {
    let reference = reference();
    for name in MODELS {
        let r = &reference[name];
        for ext in ["keras", "h5"] {
            let p = fixture(&format!("{name}.{ext}"));
            let saved = load_model(Path::new(&p)).unwrap_or_else(|e| panic!("{p}: {e}"));
            let c = saved
                .compile
                .as_ref()
                .unwrap_or_else(|| panic!("{p}: not compiled"));
            assert_eq!(c.optimizer.class_name(), "Adam", "{p}");
            let lr = r["learning_rate"].as_f64().unwrap_or_default();
            assert!(
                (f64::from(c.optimizer.learning_rate) - lr).abs() < 1e-9,
                "{p}"
            );
            let loss = match r["loss"].as_str() {
                Some("mse") => LossKind::MeanSquaredError,
                Some("binary_crossentropy") => LossKind::BinaryCrossentropy { from_logits: false },
                _ => LossKind::CategoricalCrossentropy { from_logits: false },
            };
            assert_eq!(c.loss, loss, "{p}");
            let weights: Vec<f64> = saved
                .weights
                .iter()
                .flat_map(|w| w.data.iter().map(|&v| f64::from(v)))
                .collect();
            let want: Vec<f64> = r["weights"]
                .as_array()
                .into_iter()
                .flatten()
                .flat_map(floats)
                .collect();
            // The values are float32 both sides; the tolerance only absorbs the parsing of the
            // JSON's decimal digits.
            assert_close(&format!("{p} weights"), &want, &weights, 1e-12);
            let opt = saved
                .optimizer
                .as_ref()
                .unwrap_or_else(|| panic!("{p}: no optimizer state"));
            assert_eq!(opt.iterations, r["iterations"].as_u64().unwrap_or(0), "{p}");
            let slots: Vec<f64> = opt
                .slots
                .iter()
                .flatten()
                .flat_map(|s| s.data.iter().map(|&v| f64::from(v)))
                .collect();
            let want: Vec<f64> = r["slots"]
                .as_array()
                .into_iter()
                .flatten()
                .flat_map(floats)
                .collect();
            assert_close(&format!("{p} slots"), &want, &slots, 1e-12);
        }
    }
}

/// Saves the session's `m` with `save_weights`, loads the file into `fresh` (Python that
/// makes an unfitted copy of `m`) and says whether weights and predictions on `x` came
/// back bit for bit.
fn weights_round_trip(s: &Session, dir: &Path, tag: &str, fresh: &str) -> String {
    let w = dir.join(format!("{tag}.weights.h5")).display().to_string();
    ok(
        s,
        &format!(
            "def same(a, b):\n    return len(a) == len(b) and all([(p == q).all() for p, q in zip(a, b)])\n\
m.save_weights({w:?})\nn = {fresh}\nn(x)\nn.load_weights({w:?})\n\
def outputs(model):\n    p = model.predict(x, verbose=0)\n    return np.concatenate([np.ravel(o) for o in (p if isinstance(p, list) else [p])])\n\
print(same(m.get_weights(), n.get_weights()), (outputs(m) == outputs(n)).all())\n"
        ),
    )
}

#[test]
fn files_written_here_load_back_with_their_state() {
    let dir = scratch("round");
    let s = session();
    ok(
        &s,
        &format!(
            "import tensorflow as tf\nimport numpy as np\n\
np.random.seed(0)\n\
x = np.random.rand(16, 6, 6, 1).astype('float32')\n\
y = np.random.rand(16, 2).astype('float32')\n\
m = {}\nm.compile(optimizer='adam', loss='mse')\nm.fit(x, y, epochs=2, batch_size=8, verbose=0)",
            build("cnn")
        ),
    );
    // Adam's moments and step come back: continuing from the file matches continuing the
    // model that was saved.
    for (file, out) in saved_and_loaded_back(
        &s,
        "keras-files-saved-cnn",
        "print(type(a.optimizer).__name__)",
    ) {
        assert_eq!(out, "Adam\nTrue True\nTrue\n", "{file}");
    }
    assert_eq!(
        weights_round_trip(&s, &dir, "cnn", build("cnn")),
        "True True\n"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The session's `x`, `y` set to a reference's training batch, and `same(a, b)` defined.
fn training_batch(s: &Session, r: &Value) {
    let shape: Vec<String> = floats(&r["input_shape"])
        .iter()
        .map(|d| (*d as usize).to_string())
        .collect();
    ok(
        s,
        &format!(
            "import tensorflow as tf\nimport numpy as np\n\
x = np.array({:?}, dtype='float32').reshape((8, {}))\n\
y = np.array({:?}, dtype='float32').reshape((8, -1))\n\
def same(a, b):\n    return len(a) == len(b) and all([(p == q).all() for p, q in zip(a, b)])\n",
            floats(&r["train_x"]),
            shape.join(", "),
            floats(&r["train_y"]),
        ),
    );
}

fn weights_of(s: &Session, model: &str) -> Vec<f64> {
    printed_floats(
        s,
        &format!("[float(v) for w in {model}.get_weights() for v in w.ravel()]"),
    )
}

#[test]
fn normalization_models_from_keras_continue_fit_as_keras_did() {
    let reference = reference();
    let s = session();
    for name in NORM_MODELS {
        let r = &reference[name];
        training_batch(&s, r);
        let want: Vec<f64> = r["weights_after_fit"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(floats)
            .collect();
        for ext in ["keras", "h5"] {
            let p = fixture(&format!("{name}.{ext}"));
            ok(
                &s,
                &format!(
                    "m = tf.keras.models.load_model({p:?})\n\
m.fit(x, y, batch_size=8, epochs=1, verbose=0, shuffle=False)"
                ),
            );
            // One Adam step from the restored moments and step count, and the moving
            // statistics moved by the batch's; float32 sums in another order differ in
            // the last bits.
            assert_close(&format!("{p} after fit"), &want, &weights_of(&s, "m"), 1e-5);
        }
    }
}

#[test]
fn normalization_models_saved_here_load_back_and_train_on_exactly() {
    let dir = scratch("norm");
    let reference = reference();
    let s = session();
    for name in NORM_MODELS {
        training_batch(&s, &reference[name]);
        ok(
            &s,
            &format!(
                "m = {}\nm.compile(optimizer=tf.keras.optimizers.Adam(0.01), loss='mse')\n\
m.fit(x, y, epochs=2, batch_size=4, verbose=0, shuffle=False)",
                build(name)
            ),
        );
        for (file, out) in saved_and_loaded_back(
            &s,
            &format!("keras-files-saved-{name}"),
            "print(type(a.optimizer).__name__)",
        ) {
            assert_eq!(out, "Adam\nTrue True\nTrue\n", "{name} {file}");
        }
        assert_eq!(
            weights_round_trip(&s, &dir, name, build(name)),
            "True True\n",
            "{name} weights"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The generator's models that Keras saves through their objects, as Python: a subclassed
/// MLP (a list of layers, a layer, a weight of its own), a Sequential holding a user's
/// layer, and a two-input, two-output graph with Concatenate, Add and a shared layer.
const OBJECT_MODELS: &str = r#"import tensorflow as tf
import numpy as np
keras = tf.keras
class SubclassedMLP(keras.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.hidden = [keras.layers.Dense(5, activation='relu'), keras.layers.Dense(4, activation='tanh')]
        self.head = keras.layers.Dense(3)
        self.scale = self.add_weight(shape=(3,), initializer='ones', name='scale')
    def call(self, x):
        for layer in self.hidden:
            x = layer(x)
        return self.head(x) * self.scale
class Affine(keras.layers.Layer):
    def __init__(self, units=2, **kwargs):
        super().__init__(**kwargs)
        self.units = units
    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1], self.units), name='w')
        self.b = self.add_weight(shape=(self.units,), initializer='zeros', name='b')
    def call(self, x):
        return tf.matmul(x, self.w) + self.b
def custom_layer():
    return keras.Sequential([keras.Input((4,)), Affine(3), keras.layers.ReLU(), keras.layers.Dense(2)])
def graph():
    a = keras.Input((3,), name='a')
    b = keras.Input((2,), name='b')
    shared = keras.layers.Dense(4, activation='tanh')
    h = shared(a)
    c = keras.layers.Concatenate()([h, b])
    s = keras.layers.Add()([keras.layers.Dense(4)(c), shared(keras.layers.Dense(3)(c))])
    y1 = keras.layers.Dense(1, name='score')(s)
    y2 = keras.layers.Dense(2, activation='softmax', name='kind')(c)
    return keras.Model([a, b], [y1, y2])
def one_or_list(arrays):
    return arrays if len(arrays) > 1 else arrays[0]
"#;

/// The reference's models saved through their objects, with the Python that makes each.
const OBJECT_FIXTURES: [(&str, &str); 3] = [
    ("subclassed", "SubclassedMLP()"),
    ("custom_layer", "custom_layer()"),
    ("graph", "graph()"),
];

/// Python for a list of arrays of the reference (`x` or `train_x`, one per input or
/// output), each with `rows` rows and the shapes of `shapes`.
fn arrays(values: &Value, rows: usize, shapes: &[String]) -> String {
    let items: Vec<String> = values
        .as_array()
        .into_iter()
        .flatten()
        .zip(shapes)
        .map(|(v, shape)| {
            format!(
                "np.array({:?}, dtype='float32').reshape(({rows}, {shape}))",
                floats(v)
            )
        })
        .collect();
    format!("one_or_list([{}])", items.join(", "))
}

/// The shapes of a reference's inputs, as Python tuples' insides (`3`, `6, 6, 1`).
fn input_shapes(r: &Value) -> Vec<String> {
    r["inputs"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| {
            floats(s)
                .iter()
                .map(|d| (*d as usize).to_string())
                .collect::<Vec<_>>()
                .join(", ")
        })
        .collect()
}

/// The session's `x` (the probe), `tx` and `ty` (the training batch) from a reference
/// made by the generator's `weights_only`.
fn object_data(s: &Session, r: &Value) {
    let inputs = input_shapes(r);
    let outputs: Vec<String> = r["train_y"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|y| (floats(y).len() / 8).to_string())
        .collect();
    ok(
        s,
        &format!(
            "x = {}\ntx = {}\nty = {}",
            arrays(&r["x"], 2, &inputs),
            arrays(&r["train_x"], 8, &inputs),
            arrays(&r["train_y"], 8, &outputs)
        ),
    );
}

fn flat(v: &Value) -> Vec<f64> {
    v.as_array()
        .into_iter()
        .flatten()
        .flat_map(floats)
        .collect()
}

#[test]
fn subclassed_and_user_layer_models_load_keras_weights_and_continue_fit_as_keras_did() {
    let reference = reference();
    let s = session();
    ok(&s, OBJECT_MODELS);
    for (name, make) in OBJECT_FIXTURES {
        let r = &reference[name];
        object_data(&s, r);
        let p = fixture(&format!("{name}.weights.h5"));
        ok(&s, &format!("m = {make}\nm(x)\nm.load_weights({p:?})"));
        let predicted = printed_floats(
            &s,
            "[float(v) for p in (lambda o: o if isinstance(o, list) else [o])(m.predict(x, verbose=0)) for v in p.ravel()]",
        );
        assert_close(&p, &flat(&r["predictions"]), &predicted, 1e-6);
        ok(
            &s,
            "m.compile(optimizer=keras.optimizers.Adam(0.01), loss='mse')\n\
m.fit(tx, ty, batch_size=8, epochs=1, verbose=0, shuffle=False)",
        );
        assert_close(
            &format!("{p} after fit"),
            &flat(&r["weights_after_fit"]),
            &weights_of(&s, "m"),
            1e-5,
        );
    }
}

/// Every dataset of an HDF5 file with its shape, by path (`hidden/dense/vars/0`), and
/// every `vars` group's path; the optimizer's are left out (`save_weights` here writes
/// none).
fn layout(bytes: Vec<u8>) -> Vec<(String, Vec<u64>)> {
    fn visit(g: &hdf5_pure::Group, at: &str, out: &mut Vec<(String, Vec<u64>)>) {
        for d in g.datasets().unwrap_or_default() {
            let shape = g.dataset(&d).and_then(|d| d.shape()).unwrap_or_default();
            out.push((format!("{at}{d}"), shape));
        }
        for name in g.groups().unwrap_or_default() {
            if let Ok(sub) = g.group(&name) {
                out.push((format!("{at}{name}/"), vec![]));
                visit(&sub, &format!("{at}{name}/"), out);
            }
        }
    }
    let file = hdf5_pure::File::from_bytes(bytes).expect("an HDF5 file");
    let mut out = vec![];
    visit(&file.root(), "", &mut out);
    out.retain(|(p, _)| !p.starts_with("optimizer"));
    out.sort();
    out
}

#[test]
fn weights_of_subclassed_and_user_layer_models_written_here_have_kerass_layout() {
    let dir = scratch("objects");
    let reference = reference();
    let s = session();
    ok(&s, OBJECT_MODELS);
    for (name, make) in OBJECT_FIXTURES {
        object_data(&s, &reference[name]);
        ok(
            &s,
            &format!(
                "m = {make}\nm.compile(optimizer=keras.optimizers.Adam(0.01), loss='mse')\n\
m.fit(tx, ty, batch_size=4, epochs=2, verbose=0)"
            ),
        );
        assert_eq!(
            weights_round_trip(&s, &dir, name, make),
            "True True\n",
            "{name}"
        );
        let here = std::fs::read(dir.join(format!("{name}.weights.h5"))).expect("written");
        let keras = std::fs::read(fixture(&format!("{name}.weights.h5"))).expect("fixture");
        assert_eq!(layout(here), layout(keras), "{name}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Keras's error for a weights file that lacks objects of the model: the first object's
/// message, then the repr of each object that did not load (`objects` are Python
/// expressions, evaluated in the session).
fn missing_objects(s: &Session, first: &str, objects: &[&str]) -> String {
    let out = ok(
        s,
        &format!("for o in [{}]:\n    print(repr(o))", objects.join(", ")),
    );
    let reprs: Vec<&str> = out.lines().collect();
    format!(
        "A total of {} objects could not be loaded. Example error message for object {}:\n\n{first}\n\nList of objects that could not be loaded:\n[{}]",
        reprs.len(),
        reprs.first().copied().unwrap_or_default(),
        reprs.join(", ")
    )
}

#[test]
fn weights_of_another_model_and_missing_files_are_kerass_errors() {
    let dir = scratch("wrong");
    let s = session();
    ok(&s, OBJECT_MODELS);
    let sub = fixture("subclassed.weights.h5");
    let mlp = fixture("mlp.weights.h5");
    let error = |code: &str| run(&s, code).error.unwrap_or_default();
    // A model that was never called has no variables to load into.
    assert_eq!(
        error(&format!("m = SubclassedMLP()\nm.load_weights({sub:?})")),
        (
            "ValueError".to_string(),
            "You are loading weights into a model that has not yet been built. Try building the model first by calling it on some data or by using `build()`.".to_string()
        )
    );
    // As Keras 3.15 says it: the Sequential's own group holds the subclass's weight, and
    // its layers are not in the file.
    let (ename, evalue) = error(&format!("m = custom_layer()\nm.load_weights({sub:?})"));
    assert_eq!(ename, "ValueError");
    let name = ok(&s, "print(m.name)");
    let first = format!(
        "Layer '{}' expected 0 variables, but received 1 variables during loading. Expected: []",
        name.trim()
    );
    let want = missing_objects(&s, &first, &["m", "m.layers[0]", "m.layers[2]"]);
    assert_eq!(evalue, want);
    // A subclass finds its first layer again under `layers/dense` (Keras looks for a layer
    // that failed at its attribute's path under the model's `layers` too); the second is
    // there with another shape.
    let (ename, evalue) = error(&format!(
        "m = SubclassedMLP()\nm(np.zeros((1, 4), 'float32'))\nm.load_weights({mlp:?})"
    ));
    assert_eq!(ename, "ValueError");
    let name = ok(&s, "print(m.name)");
    let first = format!(
        "Layer '{}' expected 1 variables, but received 0 variables during loading. Expected: ['scale']",
        name.trim()
    );
    let want = missing_objects(&s, &first, &["m", "m.head", "m.hidden[1]"]);
    assert_eq!(evalue, want);
    // A missing file, for weights and for a model, and an archive without config.json.
    let missing = dir.join("missing.weights.h5").display().to_string();
    assert_eq!(
        error(&format!("m.load_weights({missing:?})")).0,
        "FileNotFoundError"
    );
    let missing = dir.join("missing.keras").display().to_string();
    let (ename, evalue) = error(&format!("tf.keras.models.load_model({missing:?})"));
    assert_eq!(ename, "ValueError");
    let want = format!("File not found: filepath={missing}. Please ensure the file is an accessible `.keras` zip file.");
    assert_eq!(evalue.lines().next(), Some(want.as_str()));
    let no_config = dir.join("no_config.keras");
    {
        let f = std::fs::File::create(&no_config).expect("create");
        let mut z = zip::ZipWriter::new(f);
        z.start_file("metadata.json", zip::write::SimpleFileOptions::default())
            .expect("zip");
        std::io::Write::write_all(&mut z, b"{}").expect("zip");
        z.finish().expect("zip");
    }
    let p = no_config.display().to_string();
    let (ename, evalue) = error(&format!("tf.keras.models.load_model({p:?})"));
    assert_eq!(ename, "ValueError");
    assert!(evalue.contains("config.json"), "{evalue}");
    assert_eq!(ok(&s, "print(1 + 1)"), "2\n");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn archives_of_earlier_versions_still_load_with_a_note() {
    let s = session();
    let p = fixture("old_kernel.keras");
    let w = fixture("old_kernel.weights.h5");
    let r = run(
        &s,
        &format!(
            "import tensorflow as tf\nimport numpy as np\n\
m = tf.keras.models.load_model({p:?})\n\
x = np.array([[0.1, 0.2, 0.3, 0.4]], dtype='float32')\n\
print(m.predict(x, verbose=0).tolist(), type(m.optimizer).__name__)\n\
n = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(3, activation='relu'), tf.keras.layers.Dense(2)])\n\
n.load_weights({w:?})\n\
print(n.predict(x, verbose=0).tolist())\n"
        ),
    );
    assert_eq!(r.error, None, "{}", r.stdout);
    // The kernel that wrote them gave every kernel entry 1 and every bias 0.
    assert_eq!(r.stdout, "[[3.0, 3.0]] Adam\n[[3.0, 3.0]]\n");
    assert_eq!(
        r.stderr
            .lines()
            .filter(|l| l.contains("earlier version of this kernel"))
            .count(),
        1,
        "{}",
        r.stderr
    );
}

#[test]
fn damaged_copies_of_every_fixture_give_python_errors() {
    let dir = scratch("damaged");
    let s = session();
    let mut cases = 0;
    for name in MODELS {
        for ext in ["keras", "h5", "weights.h5"] {
            let file = format!("{name}.{ext}");
            let bytes = std::fs::read(fixture(&file)).expect("fixture");
            let mut copies: Vec<(String, Vec<u8>)> = [0, 7, 100, bytes.len() / 2, bytes.len() - 1]
                .iter()
                .map(|&n| (format!("cut{n}"), bytes[..n].to_vec()))
                .collect();
            for seed in 0..6usize {
                let mut b = bytes.clone();
                // Flip bytes through the whole file, the superblock and headers included.
                for i in (seed * 13..b.len()).step_by(61 + seed * 17) {
                    if let Some(x) = b.get_mut(i) {
                        *x ^= 0xA5;
                    }
                }
                copies.push((format!("flip{seed}"), b));
            }
            for (tag, b) in copies {
                let p = dir.join(format!("{tag}-{file}")).display().to_string();
                std::fs::write(&p, &b).expect("write");
                let code = if ext == "weights.h5" {
                    format!("w = {}\nw.load_weights({p:?})", build(name))
                } else {
                    format!("tf.keras.models.load_model({p:?})")
                };
                let r = run(&s, &format!("import tensorflow as tf\n{code}"));
                // A cut file is always an error; a flipped byte in the data may only
                // change a value.
                assert!(
                    r.error.is_some() || tag.starts_with("flip"),
                    "{p} loaded without an error"
                );
                if let Some((ename, evalue)) = &r.error {
                    assert!(
                        ["OSError", "ValueError"].contains(&ename.as_str()),
                        "{p}: {ename}: {evalue}"
                    );
                    assert!(!evalue.is_empty(), "{p}");
                }
                cases += 1;
            }
            // Cut to nothing or to its signature, the file is an error h5py names.
            let p = dir.join(format!("cut7-{file}")).display().to_string();
            let code = if ext == "weights.h5" {
                format!("w.load_weights({p:?})")
            } else {
                format!("tf.keras.models.load_model({p:?})")
            };
            let (ename, evalue) = run(&s, &code).error.unwrap_or_default();
            if ext == "keras" {
                assert_eq!(ename, "ValueError", "{p}: {evalue}");
            } else {
                assert_eq!(ename, "OSError", "{p}: {evalue}");
                assert!(
                    evalue.contains("Unable to synchronously open file"),
                    "{evalue}"
                );
            }
        }
    }
    assert_eq!(cases, MODELS.len() * 3 * 11);
    assert_eq!(ok(&s, "print(1 + 1)"), "2\n");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_weights_file_loaded_as_a_model_gets_kerass_message() {
    let dir = scratch("foreign");
    let p = dir.join("weights_only.h5");
    std::fs::copy(fixture("mlp.weights.h5"), &p).expect("copy");
    let p = p.display().to_string();
    let s = session();
    let r = run(
        &s,
        &format!("import tensorflow as tf\ntf.keras.models.load_model({p:?})"),
    );
    // What Keras 3.15 raises for the same file (the kernel adds a hint line after it).
    let (ename, evalue) = r.error.unwrap_or_default();
    assert_eq!(ename, "ValueError");
    let want = format!("No model config found in the file at {p}.");
    assert_eq!(evalue.lines().next(), Some(want.as_str()), "{evalue}");
    let _ = std::fs::remove_dir_all(&dir);
}
