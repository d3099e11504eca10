"""Inputs that once killed, hung or crashed the kernel, each driven through the real
jupyter_client: the reply is an `error` with the Python exception CPython or TensorFlow
raises (or CPython's own output), the kernel answers the next cell, and what the session
held before is still there. Also the wire: malformed messages, two clients on one kernel,
the exact signature, and a kernel whose launcher dies."""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

import pytest
from jupyter_client import BlockingKernelClient
from jupyter_client.connect import write_connection_file
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import start_new_kernel
from jupyter_client.session import Session

from conftest import KERNEL, TIMEOUT, no_message, outputs_of, reply_to, run, stdout_of
from test_protocol import raw_send, still_answers


@pytest.fixture(scope="module")
def session():
    """One kernel for the whole list: each case must leave it able to go on."""
    km, kc = start_new_kernel(kernel_name=KERNEL, startup_timeout=60)
    content, _ = run(kc, "kept = 'still here'")
    assert content["status"] == "ok"
    try:
        yield km, kc
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def result_of(msgs):
    for m in msgs:
        if m["msg_type"] == "execute_result":
            return m["content"]["data"]["text/plain"]
    return None


def assert_session_lives(km, kc):
    assert km.is_alive()
    content, msgs = run(kc, "print(kept, 6 * 7)")
    assert content["status"] == "ok", content
    assert stdout_of(msgs) == "still here 42\n"


# (code, exception name) for inputs CPython or TensorFlow answer with an exception.
RAISING = [
    ("'a'.center(10**12)", "MemoryError"),
    ("'a'.ljust(10**12)", "MemoryError"),
    ("'a'.rjust(10**12)", "MemoryError"),
    ("'1'.zfill(10**12)", "MemoryError"),
    ("'ab' * 10**12", "MemoryError"),
    ("[0] * 10**12", "MemoryError"),
    ("(0,) * 10**12", "MemoryError"),
    ("list(range(10**12))", "MemoryError"),
    ("format(1, '1000000000000')", "MemoryError"),
    ("f'{1:>{10**12}}'", "MemoryError"),
    ("format(1.5, '.2147483648f')", "ValueError"),
    ("'%.2147483648f' % 1.5", "ValueError"),
    ("format(1, '99999999999999999999')", "ValueError"),
    ("'{:{:{:{}}}}'.format(1, 2, 3, 4)", "ValueError"),
    (
        "import tensorflow as tf\n"
        "m = tf.keras.Sequential([tf.keras.layers.Dense(10**12, input_shape=(10**6,))])\n"
        "m.summary()",
        "ResourceExhaustedError",
    ),
    (
        "import tensorflow as tf\n"
        "m = tf.keras.Sequential([tf.keras.layers.Dense(2**31, input_shape=(4,))])\n"
        "m.count_params()",
        "ResourceExhaustedError",
    ),
    (
        "import tensorflow as tf\n"
        "m = tf.keras.Sequential([tf.keras.layers.Dense(2**40)])\n"
        "m.build((None, 4))",
        "ResourceExhaustedError",
    ),
    (
        "import numpy as np\n"
        "np.zeros((10**6, 10**6))",
        "MemoryError",
    ),
    ("a = []\nb = []\na.append(a)\nb.append(b)\na == b", "RecursionError"),
    ("a = []\nb = []\na.append(a)\nb.append(b)\na.count(b)", "RecursionError"),
    ("x = []\nfor i in range(100000):\n    x = [x]\nrepr(x)", "RecursionError"),
    ("x = " + "-" * 100000 + "1", "RecursionError"),
    ("x = " + "1+" * 100000 + "1", "RecursionError"),
    ("def down(n):\n    return down(n + 1)\ndown(0)", "RecursionError"),
    ("import time\ntime.sleep(float('nan'))", "ValueError"),
    ("import time\ntime.sleep(1e300)", "OverflowError"),
    ("open('/dev/zero').read()", "MemoryError"),
    ("class P:\n    pass\nP() in P()", "TypeError"),
    ("'%c' % 10**10", "OverflowError"),
]


@pytest.mark.parametrize("code,ename", RAISING, ids=[c[:40] for c, _ in RAISING])
def test_input_is_a_python_exception_and_the_session_lives(session, code, ename):
    km, kc = session
    content, msgs = run(kc, code, timeout=120)
    assert content["status"] == "error", (code, content)
    assert content["ename"] == ename, (code, content["ename"], content["evalue"])
    errors = [m for m in msgs if m["msg_type"] == "error"]
    assert errors and errors[0]["content"]["ename"] == ename
    assert_session_lives(km, kc)


# (code, what CPython 3.11 prints or shows) for inputs CPython answers with output.
ANSWERING = [
    ("a = []\na.append(a)\nprint(a)", "[[...]]\n", None),
    ("d = {}\nd['d'] = d\nprint(d)", "{'d': {...}}\n", None),
    ("d = {}\nd['d'] = d\nd", "", "{'d': {...}}"),
    ("a = []\na.append(a)\na", "", "[[...]]"),
    ("a = list(range(3))\na.append(a)\nt = (a,)\na.append(t)\nprint(t)", "([0, 1, 2, [...], (...)],)\n", None),
    ("a = []\na.append(a)\nprint(a == a, a.count(a), a in a)", "True 1 True\n", None),
    ("a = []\na.append(a)\nprint(sorted([a, a]), max([a, a]))", "[[[...]], [[...]]] [[...]]\n", None),
    ("print(len(format(1.5, '.65536f')))", "65538\n", None),
    ("print(format(1.5, '.65536f') == '1.5' + '0' * 65535)", "True\n", None),
    ("print(len('%.100000f' % 1.5), len(f'{1.5:.100000f}'))", "100002 100002\n", None),
    ("print(round(0.5, 70000), round(2.675, 2), round(123.456, -400))", "0.5 2.67 0.0\n", None),
    ("print('x'.join(['ab'] * 6**10)[:10])", "abxabxabxa\n", None),
    ("print(len(sorted([float('nan'), 3.0, 1.0, float('nan'), 2.0] * 1000)))", "5000\n", None),
    ("print(range(10**12)[::2][5], len(range(10**12)[::2]))", "10 500000000000\n", None),
]


@pytest.mark.parametrize("code,stdout,result", ANSWERING, ids=[c[:40] for c, _, _ in ANSWERING])
def test_input_gives_cpythons_output_and_the_session_lives(session, code, stdout, result):
    km, kc = session
    content, msgs = run(kc, code, timeout=120)
    assert content["status"] == "ok", (code, content)
    assert stdout_of(msgs) == stdout
    assert result_of(msgs) == result
    assert_session_lives(km, kc)


def test_a_huge_join_ends_at_an_interrupt(kernel):
    km, kc = kernel
    run(kc, "kept = 'still here'\nparts = ['ab'] * 6**10")
    # Joined again and again, so that the cell is busy in Rust when the interrupt comes.
    busy = kc.execute("while True:\n    s = 'x'.join(parts)")
    time.sleep(1.5)
    start = time.monotonic()
    km.interrupt_kernel()
    reply = reply_to(kc, busy, timeout=30)
    assert reply["content"]["ename"] == "KeyboardInterrupt"
    assert time.monotonic() - start < 2
    assert_session_lives(km, kc)


def test_long_rust_loops_end_within_two_seconds_of_an_interrupt(kernel):
    km, kc = kernel
    run(kc, "kept = 'still here'\nbig = list(range(3 * 10**6))\nbig.reverse()\n"
            "import numpy as np\nsquare = np.ones((3000, 3000))\nlong = np.ones(5 * 10**7)")
    for code in [
        "while True:\n    s = sorted(big)",
        "while True:\n    r = repr(big)",
        "while True:\n    c = big.count(-1)",
        "while True:\n    b = big == big[:]",
        "while True:\n    p = square @ square",
        "while True:\n    q = long * long",
    ]:
        busy = kc.execute(code)
        time.sleep(1.0)
        start = time.monotonic()
        km.interrupt_kernel()
        reply = reply_to(kc, busy, timeout=30)
        assert reply["content"].get("ename") == "KeyboardInterrupt", (code, reply["content"])
        assert time.monotonic() - start < 2, code
    assert_session_lives(km, kc)


# The wire: messages that parse but carry the wrong types are logged and dropped or
# answered with an error reply; the kernel goes on.


def test_malformed_messages_are_dropped_or_answered_with_an_error(kernel):
    km, kc = kernel
    shell = kc.shell_channel.socket
    run(kc, "kept = 'still here'")
    header_list = raw_send(kc, shell, "execute_request", {"code": "1"},
                           mangle=lambda p: [b"[1, 2, 3]", p[1], p[2], p[3]])
    no_type = raw_send(kc, shell, "execute_request", {"code": "1"},
                       mangle=lambda p: [b'{"msg_id": "x"}', p[1], p[2], p[3]])
    deep = b"[" * 10000 + b"]" * 10000
    deep_content = raw_send(kc, shell, "execute_request", {}, mangle=lambda p: [p[0], p[1], p[2], deep])
    deep_parent = raw_send(kc, shell, "execute_request", {"code": "1"},
                           mangle=lambda p: [p[0], deep, p[2], p[3]])
    assert no_message(kc.get_shell_msg, 1.0)
    seen = set()
    while kc.iopub_channel.msg_ready():
        seen.add(kc.get_iopub_msg(timeout=1)["parent_header"].get("msg_id"))
    assert not seen & {header_list, no_type, deep_content, deep_parent}
    # Content that parses as a message but not as a request gets an error reply.
    for content in [None, [], 3, "code", {"code": 42}, {"code": None}, {"code": ["a"]},
                    {"code": "1", "silent": "yes"}, {"code": "1", "user_expressions": [1]}]:
        # Sent as the JSON given (jupyter_client would turn None into {}).
        frame = json.dumps(content).encode()
        msg_id = raw_send(kc, shell, "execute_request", {}, mangle=lambda p, f=frame: [p[0], p[1], p[2], f])
        reply = reply_to(kc, msg_id, timeout=10)["content"]
        assert reply["status"] == "error", content
        assert reply["ename"] == "ValueError", content
    for msg_type in ["complete_request", "inspect_request", "is_complete_request",
                     "history_request", "kernel_info_request", "comm_info_request"]:
        for content in [None, [], {"code": 7, "cursor_pos": "x"}, {"code": "a" * 2**20, "cursor_pos": 2**62}]:
            frame = json.dumps(content).encode()
            msg_id = raw_send(kc, shell, msg_type, {}, mangle=lambda p, f=frame: [p[0], p[1], p[2], f])
            reply = reply_to(kc, msg_id, timeout=30)
            assert reply["msg_type"] == msg_type.replace("_request", "_reply")
    assert_session_lives(km, kc)


def test_a_megabyte_of_code_and_of_output_travel(kernel):
    km, kc = kernel
    run(kc, "kept = 'still here'")
    big = "x = '" + "a" * 2**20 + "'\nprint(len(x))"
    content, msgs = run(kc, big, timeout=60)
    assert content["status"] == "ok"
    assert stdout_of(msgs) == f"{2**20}\n"
    inputs = [m for m in msgs if m["msg_type"] == "execute_input"]
    assert inputs[0]["content"]["code"] == big
    content, msgs = run(kc, "'" + "é" * 2**20 + "'", timeout=60)
    assert len(result_of(msgs)) == 2**20 + 2
    assert_session_lives(km, kc)


def test_an_upper_case_signature_is_refused(kernel):
    km, kc = kernel
    session = kc.session
    msg = session.msg("execute_request", {"code": "print('forged')"})
    parts = [session.pack(msg["header"]), session.pack(msg["parent_header"]),
             session.pack(msg["metadata"]), session.pack(msg["content"])]
    signature = session.sign(parts).upper()
    kc.shell_channel.socket.send_multipart([b"<IDS|MSG>", signature] + parts)
    assert no_message(kc.get_shell_msg, 1.5)
    assert still_answers(kc)


def test_two_clients_each_get_their_own_replies(kernel):
    km, first = kernel
    # A second front end: its own session, as a second notebook or console has.
    second = km.client(session=Session(key=km.session.key))
    second.start_channels()
    try:
        second.wait_for_ready(timeout=30)
        assert second.session.session != first.session.session
        sent = {}
        for i in range(10):
            for name, kc in (("first", first), ("second", second)):
                msg_id = kc.execute(f"print('{name}', {i})")
                sent.setdefault(name, []).append(msg_id)
        for name, kc in (("first", first), ("second", second)):
            got = []
            for msg_id in sent[name]:
                reply = reply_to(kc, msg_id)
                assert reply["parent_header"]["msg_id"] == msg_id
                assert reply["parent_header"]["session"] == kc.session.session
                got.append(reply["content"]["status"])
            assert got == ["ok"] * 10
            # No reply meant for the other client reaches this one.
            assert no_message(kc.get_shell_msg, 0.5)
        # Both see every cell's output on iopub, each parented to its own request.
        for name, kc in (("first", first), ("second", second)):
            for i, msg_id in enumerate(sent[name]):
                out = outputs_of(kc, msg_id)
                assert stdout_of(out) == f"{name} {i}\n"
    finally:
        second.stop_channels()


def test_the_kernel_exits_when_its_launcher_dies(tmp_path):
    spec = KernelSpecManager().get_kernel_spec(KERNEL)
    conn = tmp_path / "kernel.json"
    write_connection_file(str(conn))
    argv = [a.replace("{connection_file}", str(conn)) for a in spec.argv]
    # The launcher starts the kernel as Jupyter does (naming itself in JPY_PARENT_PID),
    # prints the kernel's pid, then waits to be killed.
    launcher = subprocess.Popen(
        [sys.executable, "-c",
         "import os, subprocess, sys, time\n"
         "env = dict(os.environ, JPY_PARENT_PID=str(os.getpid()))\n"
         f"p = subprocess.Popen({argv!r}, env=env)\n"
         "print(p.pid, flush=True)\n"
         "time.sleep(600)\n"],
        stdout=subprocess.PIPE, text=True)
    kernel_pid = int(launcher.stdout.readline())
    kc = BlockingKernelClient(connection_file=str(conn))
    kc.load_connection_file()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=60)
        assert alive(kernel_pid)
        launcher.send_signal(signal.SIGKILL)
        launcher.wait()
        deadline = time.monotonic() + 10
        while alive(kernel_pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not alive(kernel_pid)
    finally:
        kc.stop_channels()
        if alive(kernel_pid):
            os.kill(kernel_pid, signal.SIGKILL)


def alive(pid):
    """Whether `pid` runs (an exited process not yet reaped is a zombie: not alive)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
            return True
        except ProcessLookupError:
            return False


MIRRORED_SETUP = """\
import numpy as np
import tensorflow as tf
cpu = tf.config.list_physical_devices('CPU')[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
strategy = tf.distribute.MirroredStrategy()
np.random.seed(0)
X = np.random.randn(4096, 32).astype('float32')
Y = (X[:, 0] + X[:, 1] > 0).astype('int64')
with strategy.scope():
    model = tf.keras.Sequential([
        tf.keras.layers.Dense(64, activation='relu', input_shape=(32,)),
        tf.keras.layers.Dense(2, activation='softmax'),
    ])
    model.compile(optimizer='adam', loss='sparse_categorical_crossentropy', metrics=['accuracy'])
def mirrored_ok(m):
    for v in m.weights:
        parts = [p.numpy() for p in v.values]
        if len(parts) != 2 or not all(np.array_equal(parts[0], p) for p in parts[1:]):
            return False
        if not all(np.isfinite(p).all() for p in parts):
            return False
    return True
print(strategy.num_replicas_in_sync, mirrored_ok(model))
"""


@pytest.mark.timeout(300)
def test_ten_interrupts_of_a_mirrored_fit_each_end_within_two_seconds(kernel):
    km, kc = kernel
    content, msgs = run(kc, MIRRORED_SETUP, timeout=120)
    assert content["status"] == "ok", content
    assert stdout_of(msgs).endswith("2 True\n")
    latencies = []
    for i in range(10):
        busy = kc.execute("model.fit(X, Y, epochs=100000, batch_size=64, verbose=0)")
        time.sleep(0.5 + 0.1 * i)
        start = time.monotonic()
        km.interrupt_kernel()
        reply = reply_to(kc, busy, timeout=30)
        latencies.append(time.monotonic() - start)
        assert reply["content"]["status"] == "error"
        assert reply["content"]["ename"] == "KeyboardInterrupt"
    print("\ninterrupt latencies (s):", " ".join(f"{t:.3f}" for t in latencies))
    assert max(latencies) < 2, latencies
    content, msgs = run(kc, "print(mirrored_ok(model))")
    assert stdout_of(msgs) == "True\n"
    content, msgs = run(kc, "h = model.fit(X, Y, epochs=2, batch_size=64, verbose=0)\n"
                            "print(len(h.history['loss']), np.isfinite(h.history['loss']).all(), mirrored_ok(model))",
                        timeout=120)
    assert content["status"] == "ok", content
    assert stdout_of(msgs) == "2 True True\n"
