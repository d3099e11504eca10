"""TensorBoard event files written by `fit` in the kernel, read back by the `tensorboard`
package's own event reader (which checks each record's masked CRC32C): the same tags, steps
and values as the History `fit` returned, in the layout Keras 3.15 writes (`train/` and
`validation/`, `epoch_*` per epoch, `batch_*` every `update_freq` batches,
`evaluation_*_vs_iterations` at the optimizer's step count); and `%tensorboard` plotting
them inline."""
import ast
import os

from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from tensorboard.util import tensor_util

from conftest import run, stdout_of

FIT = """
import numpy as np
import tensorflow as tf
x = (np.arange(48, dtype="float32").reshape(16, 3) / 48.0)
y = x.sum(axis=1, keepdims=True)
m = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(1)])
m.compile(optimizer=tf.keras.optimizers.SGD(learning_rate=0.05), loss="mse", metrics=["mae"])
tb = tf.keras.callbacks.TensorBoard(log_dir=LOGS, update_freq=2)
h = m.fit(x, y, batch_size=4, epochs=3, verbose=0, shuffle=False,
          validation_data=(x[:8], y[:8]), callbacks=[tb])
print(h.history)
"""


def scalars(run_dir):
    """{tag: [(step, value), ...]} as TensorBoard reads the run's event files."""
    acc = EventAccumulator(run_dir, size_guidance={"tensors": 0, "scalars": 0})
    acc.Reload()
    out = {}
    for tag in acc.Tags()["tensors"]:
        out[tag] = [
            (e.step, float(tensor_util.make_ndarray(e.tensor_proto))) for e in acc.Tensors(tag)
        ]
    for tag in acc.Tags()["scalars"]:
        out[tag] = [(e.step, e.value) for e in acc.Scalars(tag)]
    return out


def close(a, b):
    return abs(a - b) <= 1e-6 * max(1.0, abs(b))


def test_fit_writes_event_files_tensorboard_reads(kernel, tmp_path):
    _, kc = kernel
    logs = str(tmp_path / "logs")
    reply, msgs = run(kc, f"LOGS = {logs!r}\n" + FIT, timeout=120)
    assert reply["status"] == "ok", reply
    history = ast.literal_eval(stdout_of(msgs).strip().splitlines()[-1])
    names = sorted(os.listdir(logs))
    assert names == ["train", "validation"]
    for run_name in names:
        files = os.listdir(os.path.join(logs, run_name))
        assert len(files) == 1 and files[0].startswith("events.out.tfevents."), files
        assert files[0].endswith(".v2"), files

    train = scalars(os.path.join(logs, "train"))
    assert sorted(train) == [
        "batch_loss", "batch_mae", "epoch_learning_rate", "epoch_loss", "epoch_mae"
    ]
    for key in ("loss", "mae"):
        steps = [s for s, _ in train[f"epoch_{key}"]]
        assert steps == [0, 1, 2]
        for (_, got), want in zip(train[f"epoch_{key}"], history[key]):
            assert close(got, want), (key, got, want)
    assert [s for s, _ in train["batch_loss"]] == [2, 4, 6, 8, 10, 12]
    # The batch logs are the epoch's running means: the last batch of an epoch is its log.
    assert close(dict(train["batch_loss"])[4], history["loss"][0])
    assert all(close(v, 0.05) for _, v in train["epoch_learning_rate"])

    val = scalars(os.path.join(logs, "validation"))
    assert sorted(val) == [
        "epoch_loss", "epoch_mae", "evaluation_loss_vs_iterations", "evaluation_mae_vs_iterations"
    ]
    assert [s for s, _ in val["epoch_loss"]] == [0, 1, 2]
    assert [s for s, _ in val["evaluation_loss_vs_iterations"]] == [4, 8, 12]
    for (_, got), want in zip(val["epoch_loss"], history["val_loss"]):
        assert close(got, want)
    for (_, got), want in zip(val["evaluation_mae_vs_iterations"], history["val_mae"]):
        assert close(got, want)


def test_tensorboard_magic_plots_the_logged_scalars(kernel, tmp_path):
    _, kc = kernel
    logs = str(tmp_path / "logs")
    reply, _ = run(kc, f"LOGS = {logs!r}\n" + FIT, timeout=120)
    assert reply["status"] == "ok", reply
    reply, msgs = run(kc, "%load_ext tensorboard")
    assert reply["status"] == "ok", reply
    reply, msgs = run(kc, f"%tensorboard --logdir {logs}")
    assert reply["status"] == "ok", reply
    assert "does not start a TensorBoard server" in stdout_of(msgs)
    shown = [m for m in msgs if m["msg_type"] == "display_data"]
    assert len(shown) == 1
    assert shown[0]["content"]["data"]["image/png"]
