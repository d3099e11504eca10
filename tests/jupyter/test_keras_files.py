"""Files the kernel saves, read back by h5py: `.weights.h5`, the `model.weights.h5`
inside a `.keras` archive and legacy `.h5` in Keras 3's layouts (group and dataset names,
attributes, shapes and the values the kernel printed)."""
import io
import json
import zipfile

import h5py
import numpy as np

from conftest import run, stdout_of

CELL = """import tensorflow as tf
import numpy as np
np.random.seed(0)
x = np.random.rand(8, 6, 6, 1).astype('float32')
y = np.random.rand(8, 2).astype('float32')
m = tf.keras.Sequential([tf.keras.Input((6, 6, 1)), tf.keras.layers.Conv2D(2, 3, activation='relu'),
    tf.keras.layers.MaxPooling2D(2), tf.keras.layers.Flatten(), tf.keras.layers.Dense(2)])
m.compile(optimizer='adam', loss='mse')
m.fit(x, y, epochs=1, batch_size=8, verbose=0)
m.save({keras!r})
m.save({legacy!r})
m.save_weights({weights!r})
print([w.tolist() for w in m.get_weights()])
"""

NAMES = ["layers/conv2d/vars/0", "layers/conv2d/vars/1", "layers/dense/vars/0", "layers/dense/vars/1"]
SHAPES = [(3, 3, 1, 2), (2,), (8, 2), (2,)]


def saved(kernel, tmp_path):
    _, kc = kernel
    paths = {k: str(tmp_path / n) for k, n in
             [("keras", "m.keras"), ("legacy", "m.h5"), ("weights", "m.weights.h5")]}
    reply, msgs = run(kc, CELL.format(**paths), timeout=120)
    assert reply["status"] == "ok", reply
    weights = [np.array(w, dtype=np.float32) for w in json.loads(stdout_of(msgs))]
    return paths, weights


def check_keras3_layout(f, weights, optimizer):
    for name, shape, want in zip(NAMES, SHAPES, weights):
        assert f[name].shape == shape, name
        assert f[name].dtype == np.float32, name
        np.testing.assert_array_equal(f[name][()], want)
    assert set(f["layers"].keys()) == {"conv2d", "max_pooling2d", "flatten", "dense"}
    assert f["layers/dense/vars"].attrs["name"] == "dense"
    if optimizer:
        vars_ = f["optimizer/vars"]
        assert len(vars_) == 2 + 2 * len(weights)
        assert vars_["0"].dtype == np.int64 and vars_["0"][()] == 1
        assert abs(vars_["1"][()] - 0.001) < 1e-9
        for i, shape in enumerate(SHAPES):
            assert vars_[str(2 + 2 * i)].shape == shape
            assert vars_[str(3 + 2 * i)].shape == shape


def test_weights_and_archives_are_keras_hdf5(kernel, tmp_path):
    paths, weights = saved(kernel, tmp_path)
    with h5py.File(paths["weights"], "r") as f:
        check_keras3_layout(f, weights, optimizer=False)
    with zipfile.ZipFile(paths["keras"]) as z:
        assert set(z.namelist()) == {"metadata.json", "config.json", "model.weights.h5"}
        with h5py.File(io.BytesIO(z.read("model.weights.h5")), "r") as f:
            check_keras3_layout(f, weights, optimizer=True)


def test_legacy_h5_has_kerass_attributes(kernel, tmp_path):
    paths, weights = saved(kernel, tmp_path)
    with h5py.File(paths["legacy"], "r") as f:
        config = json.loads(f.attrs["model_config"])
        assert config["class_name"] == "Sequential"
        training = json.loads(f.attrs["training_config"])
        assert training["loss"] == "mean_squared_error"
        assert training["optimizer_config"]["class_name"] == "Adam"
        mw = f["model_weights"]
        layer_names = [n.decode() if isinstance(n, bytes) else n for n in mw.attrs["layer_names"]]
        assert layer_names == ["conv2d", "max_pooling2d", "flatten", "dense"]
        got = []
        for layer in layer_names:
            for n in mw[layer].attrs["weight_names"]:
                got.append(mw[layer][n.decode() if isinstance(n, bytes) else n][()])
        assert [g.shape for g in got] == SHAPES
        for g, w in zip(got, weights):
            np.testing.assert_array_equal(g, w)
        order = [n.decode() if isinstance(n, bytes) else n
                 for n in f["optimizer_weights"].attrs["weight_names"]]
        assert order[:2] == ["adam/iteration", "adam/learning_rate"]
        assert f["optimizer_weights"][order[0]][()] == 1
        assert len(order) == 2 + 2 * len(weights)
