"""Opt-in check that files this kernel writes open in real Keras: the kernel trains an MLP,
a CNN and a functional chain for one epoch and saves each as `.keras`, legacy `.h5` and
`.weights.h5`, and a graph that is not a chain (two inputs, two outputs, Concatenate, Add,
a shared layer) as `.keras` and `.h5`, and three models built on a user's classes (the
classes of tests/fixtures/keras/make_custom_files_reference.py: a Sequential holding a
registered layer and a registered subclassed model) as `.keras`, with its predictions on fixed inputs; this script then
loads every file in real Keras 3 and compares the predictions.

Run with a Python that has TensorFlow 2.21 / Keras 3.15, after `cargo build`:

    path/to/python scripts/keras_files_interop.py [path/to/mirror-kernel]

Prints one line per file and exits non-zero when a prediction differs by more than 1e-6.
"""

import json
import os
import subprocess
import sys
import tempfile

import numpy as np

MODELS = {
    "mlp": ((4,), "tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(5, activation='relu'), tf.keras.layers.Dense(3, activation='softmax')])"),
    "cnn": ((6, 6, 1), "tf.keras.Sequential([tf.keras.Input((6, 6, 1)), tf.keras.layers.Conv2D(2, 3, activation='relu'), tf.keras.layers.MaxPooling2D(2), tf.keras.layers.Flatten(), tf.keras.layers.Dense(2)])"),
    "functional": ((3,), "(lambda i: tf.keras.Model(i, tf.keras.layers.Dense(2, activation='sigmoid')(tf.keras.layers.Dense(4, activation='tanh')(i))))(tf.keras.Input((3,)))"),
}

PRELUDE = "import tensorflow as tf\nimport numpy as np\n"

# One model's part of the kernel's script: train, save three ways, print the predictions.
KERNEL_PART = """m = {make}
m.compile(optimizer='adam', loss='mse')
np.random.seed(0)
x = np.random.rand(*{batch!r}).astype('float32')
y = np.random.rand(16, m.output_shape[-1]).astype('float32')
m.fit(x, y, epochs=1, batch_size=8, verbose=0)
m.save({stem!r} + '.keras')
m.save({stem!r} + '.h5')
m.save_weights({stem!r} + '.weights.h5')
print({name!r}, x[:4].tolist(), m.predict(x[:4], verbose=0).tolist())
"""

# A graph that is not a chain, saved as `.keras` and legacy `.h5`.
GRAPH_PART = """a = tf.keras.Input((3,), name='a')
b = tf.keras.Input((2,), name='b')
shared = tf.keras.layers.Dense(4, activation='tanh')
c = tf.keras.layers.Concatenate()([shared(a), b])
s = tf.keras.layers.Add()([tf.keras.layers.Dense(4)(c), shared(tf.keras.layers.Dense(3)(c))])
m = tf.keras.Model([a, b], [tf.keras.layers.Dense(1, name='score')(s), tf.keras.layers.Dense(2, activation='softmax', name='kind')(c)])
m.compile(optimizer='adam', loss=['mse', 'categorical_crossentropy'], metrics=[['mae'], ['accuracy']])
np.random.seed(0)
gx = [np.random.rand(16, 3).astype('float32'), np.random.rand(16, 2).astype('float32')]
gy = [np.random.rand(16, 1).astype('float32'), np.random.rand(16, 2).astype('float32')]
m.fit(gx, gy, epochs=1, batch_size=8, verbose=0)
m.save({stem!r} + '.keras')
m.save({stem!r} + '.h5')
print('graph', [v[:4].tolist() for v in gx], [p.tolist() for p in m.predict([v[:4] for v in gx], verbose=0)])
"""


# Models on a user's classes (defined before this part from the fixture's source).
CUSTOM_PART = """cx = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], dtype='float32')
ca = keras.Sequential([keras.Input((3,)), MyDense(4), keras.layers.Dense(2)])
ca.compile(optimizer='adam', loss='mse')
ca.fit(cx, np.ones((2, 2), 'float32'), verbose=0)
cb = TwoDense(hidden=5, out=2)
cb(cx)
for n, model in [('custom_seq', ca), ('custom_subclassed', cb)]:
    model.save({stem!r} + n + '.keras')
    print('custom', n, cx.tolist(), model.predict(cx, verbose=0).tolist())
"""

CLASSES_FILE = os.path.join(
    os.path.dirname(os.path.abspath(__file__)),
    "..", "tests", "fixtures", "keras", "files", "custom_files_reference.json",
)


def check_custom(tf, d, line):
    """Loads one of the kernel's archives of a user's classes in Keras."""
    _, name, rest = line.split(" ", 2)
    x, want = json.loads("[" + rest.replace("]] [[", "]], [[") + "]")
    model = tf.keras.models.load_model(os.path.join(d, f"{name}.keras"))
    diff = float(np.abs(model.predict(np.array(x, dtype="float32"), verbose=0) - np.array(want)).max())
    ok = diff <= 1e-6
    print(f"{name}.keras: {'ok' if ok else 'DIFFERS'} (max difference {diff:.2e})")
    return int(not ok)


def check_graph(tf, d, line):
    """Loads the kernel's graph files in Keras and compares their two outputs."""
    x, want = json.loads("[" + line.split(" ", 1)[1].replace("]]] [[[", "]]], [[[") + "]")
    failed = 0
    for ext in ["keras", "h5"]:
        model = tf.keras.models.load_model(os.path.join(d, f"graph.{ext}"))
        got = model.predict([np.array(v, dtype="float32") for v in x], verbose=0)
        diff = max(float(np.abs(g - np.array(w)).max()) for g, w in zip(got, want))
        ok = diff <= 1e-6
        failed += not ok
        print(f"graph.{ext}: {'ok' if ok else 'DIFFERS'} (max difference {diff:.2e})")
    return failed


def main():
    kernel = sys.argv[1] if len(sys.argv) > 1 else os.path.join("target", "debug", "mirror-kernel")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf

    with open(CLASSES_FILE) as f:
        source = json.load(f)["classes"]
    # Real Keras registers the classes as the kernel's cell does.
    exec(source, {"tf": tf, "keras": tf.keras})
    failed = 0
    with tempfile.TemporaryDirectory() as d:
        cell = os.path.join(d, "save.py")
        with open(cell, "w") as f:
            f.write(PRELUDE + "from tensorflow import keras\n" + source)
            f.write(CUSTOM_PART.format(stem=os.path.join(d, "")))
            for name, (shape, make) in MODELS.items():
                stem = os.path.join(d, name)
                f.write(KERNEL_PART.format(make=make, batch=(16,) + shape, stem=stem, name=name))
            f.write(GRAPH_PART.format(stem=os.path.join(d, "graph")))
        out = subprocess.run([kernel, "exec", cell], check=True, capture_output=True, text=True)
        want, inputs = {}, {}
        for line in out.stdout.splitlines():
            if line.startswith("custom "):
                failed += check_custom(tf, d, line)
                continue
            if line.startswith("graph "):
                failed += check_graph(tf, d, line)
                continue
            name, rest = line.split(" ", 1)
            x, p = json.loads("[" + rest.replace("] [", "], [") + "]")
            inputs[name.strip("'")], want[name.strip("'")] = np.array(x, dtype="float32"), p
        for name, (shape, make) in MODELS.items():
            x = inputs[name]
            for ext in ["keras", "h5", "weights.h5"]:
                path = os.path.join(d, f"{name}.{ext}")
                if ext == "weights.h5":
                    model = eval(make, {"tf": tf})
                    model.load_weights(path)
                else:
                    model = tf.keras.models.load_model(path)
                diff = float(np.abs(model.predict(x, verbose=0) - np.array(want[name])).max())
                ok = diff <= 1e-6
                failed += not ok
                print(f"{name}.{ext}: {'ok' if ok else 'DIFFERS'} (max difference {diff:.2e})")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
