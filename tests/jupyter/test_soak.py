"""A soak test: a few thousand cells of ordinary notebook work (arithmetic, strings,
containers, numpy and tf operations, small Keras models built and fitted, prints and
displays) through the real jupyter_client. The kernel's resident memory, once warm, must
stay flat: it may grow by less than 50 MB between cell 500 and cell 3,000. Every cell
must succeed."""
import time

import pytest
from jupyter_client.manager import start_new_kernel

from conftest import KERNEL, run

CELLS = 3000
WARM = 500
MAX_GROWTH_MB = 50

SETUP = """\
import math
import numpy as np
import tensorflow as tf
from IPython.display import display
np.random.seed(0)
X = np.random.rand(128, 8).astype('float32')
Y = (X[:, 0] > 0.5).astype('int64')
"""

# Cycled through in order; `{i}` is the cell number, so values change from cell to cell.
WORK = [
    "total = sum(i * i for i in range({i} % 50 + 10))\nprint(total)",
    "words = ['w%d' % k for k in range(20)]\nprint(' '.join(sorted(words, reverse=True))[:30])",
    "d = {{k: str(k) * 3 for k in range(30)}}\nd['x{i}'] = [1, 2, 3]\nlen(d)",
    "f'{{{i} / 7:.3f}} {{math.sqrt({i}):.2e}} {{{i}:>8,}}'",
    "a = np.arange(64, dtype='float32').reshape(8, 8) * {i}\n(a @ a.T).sum()",
    "b = np.random.rand(32, 16)\nprint(b.mean(axis=0).round(2)[:3], b.max() <= 1)",
    "t = tf.constant(np.ones((4, 4)) * {i})\nprint(tf.reduce_sum(tf.matmul(t, t)).numpy())",
    "class P:\n    def __init__(self, v):\n        self.v = v\n    def __repr__(self):\n        return f'P({{self.v}})'\n[P(k) for k in range(5)]",
    "s = set(range({i} % 40))\nprint(len(s | {{100, 200}}), sorted(s)[:3])",
    "try:\n    {{}}['missing']\nexcept KeyError as e:\n    msg = repr(e)\nmsg",
    "display({{'cell': {i}, 'list': list(range(5))}})",
    "m = tf.keras.Sequential([tf.keras.layers.Dense(8, activation='relu', input_shape=(8,)), tf.keras.layers.Dense(2, activation='softmax')])\n"
    "m.compile(optimizer='adam', loss='sparse_categorical_crossentropy')\n"
    "h = m.fit(X, Y, epochs=1, batch_size=32, verbose=0)\nprint(len(h.history['loss']))",
    "text = ('line %d\\n' % {i}) * 20\nprint(len(text.splitlines()), text.count('line'))",
    "nested = [[k, [k] * 3, {{'k': k}}] for k in range(10)]\nnested[-1]",
    "def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\nfib(12)",
    "r = sorted(np.random.rand(200).tolist())\nprint(r[0] <= r[-1])",
]


def rss_mb(km):
    with open(f"/proc/{km.provisioner.process.pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


@pytest.mark.soak
@pytest.mark.timeout(900)
def test_resident_memory_stays_flat_over_three_thousand_cells():
    km, kc = start_new_kernel(kernel_name=KERNEL, startup_timeout=60)
    try:
        content, _ = run(kc, SETUP, timeout=60)
        assert content["status"] == "ok", content
        warm = None
        start = time.monotonic()
        for i in range(1, CELLS + 1):
            code = WORK[i % len(WORK)].format(i=i)
            content, _ = run(kc, code, timeout=60)
            assert content["status"] == "ok", (i, code, content)
            if i == WARM:
                warm = rss_mb(km)
        end = rss_mb(km)
        elapsed = time.monotonic() - start
        print(f"\nsoak: {CELLS} cells in {elapsed:.0f} s; RSS {warm:.1f} MB at cell {WARM}, "
              f"{end:.1f} MB at cell {CELLS}: {end - warm:+.1f} MB")
        assert end - warm < MAX_GROWTH_MB
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
