"""Fuzzing the kernel through the real jupyter_client, with a fixed seed and a time bound.

Cells: the corpus (fuzz/cells.py, typical notebook work) runs once as written, then each
cell is mutated again and again (numbers pushed to extremes, strings and format specs
made absurd, brackets and operators swapped, deep nesting, self-containing values,
splices, truncations) and run. Messages: well-formed requests of every kind are mutated
(headers and contents of the wrong JSON type, missing and extra fields, megabyte strings,
10,000-deep JSON, broken frames and signatures) and sent raw on shell and control.

What must hold, and is counted: no crash (the kernel process lives), no hang (every cell
ends, at the latest within seconds of an interrupt sent after CELL_TIMEOUT), and every
error reply names a Python exception class (CPython's, TensorFlow's, numpy's, or one the
cells define), never the kernel's own internal error. Failures are collected with the
input that caused them and reported together.
"""
import builtins
import json
import os
import random
import re
import time
from pathlib import Path
from queue import Empty

import pytest
from jupyter_client.manager import start_new_kernel

from conftest import KERNEL

# FUZZ_SEED, FUZZ_CELLS and FUZZ_MESSAGES override these for a longer hunt by hand; CI
# runs the fixed defaults.
SEED = int(os.environ.get("FUZZ_SEED", "192024"))
MIN_CELLS = int(os.environ.get("FUZZ_CELLS", "3000"))
MIN_MESSAGES = int(os.environ.get("FUZZ_MESSAGES", "2000"))
# A cell still running after this long is interrupted; it must then end promptly.
CELL_TIMEOUT = 3.0
# A cell must end this soon after an interrupt.
INTERRUPT_WITHIN = 2.0
# Longer than this after the interrupt is a hang.
HANG_AFTER_INTERRUPT = 15.0
# The kernel under fuzz refuses any single allocation beyond this, so that a mutated
# size fails fast with MemoryError instead of filling the machine.
MEMORY_LIMIT = "512M"
# A kernel whose memory grows past this is restarted (mutated cells keep what they make).
RSS_RESTART_KB = 2_000_000

CORPUS = Path(__file__).parent / "fuzz" / "cells.py"

TF_ERRORS = {
    "OpError", "CancelledError", "UnknownError", "InvalidArgumentError",
    "DeadlineExceededError", "NotFoundError", "AlreadyExistsError",
    "PermissionDeniedError", "UnauthenticatedError", "ResourceExhaustedError",
    "FailedPreconditionError", "AbortedError", "OutOfRangeError", "UnimplementedError",
    "InternalError", "UnavailableError", "DataLossError",
}
PYTHON_ERRORS = {
    n for n in dir(builtins)
    if isinstance(getattr(builtins, n), type) and issubclass(getattr(builtins, n), BaseException)
}
OTHER_ERRORS = {"AxisError", "StdinNotImplementedError", "UsageError"}


def load_cells():
    text = CORPUS.read_text()
    cells = [c.strip("\n") for c in text.split("\n# %%\n")]
    # The first cell opens with the corpus's own comment lines.
    cells[0] = "\n".join(l for l in cells[0].splitlines() if not l.startswith("#"))
    return [c for c in cells if c.strip()]


# ---------------------------------------------------------------- cell mutations

EXTREME_NUMBERS = [
    "0", "-1", "1", "2**31", "2**63-1", "-2**63+1", "10**12", "10**18", "2**62",
    "1e308", "-1e308", "1e-320", "float('nan')", "float('inf')", "0.5", "100000",
    "-100000", "65536", "True", "None", "3.7", "10**6",
]
EXTREME_STRINGS = [
    "''", "'x' * 10**6", "'\\x00'", "'é€😀'", "'{}'", "'%s%d%%'", "'{0:{1}}'",
    "'a' * 10**12", "'\\n' * 1000", "'\\t'", "'{' * 50", "'%'", "'.'",
]
ABSURD_SPECS = [
    ".65536f", ".2147483648f", ">1000000000", ",_", "#x", "z", "=^10", "99999999999999999999",
    ".0e", "%", "{", "", "c", ".100000g", "*^2147483647", "0=30", ".-1", "+#0,.3f", "s",
]
OPERATORS = ["+", "-", "*", "/", "//", "%", "**", "<<", ">>", "&", "|", "^", "==", "<",
             " in ", " is ", " and ", " or ", "@", ", "]
NOISE = ["(", ")", "[", "]", "{", "}", ":", ",", ".", "'", '"', "\\", "\t", " ", "\n",
         "*", "**", "lambda:", "not ", "%", "#", "@", "=", "yield ", "await ", "`", "$",
         "\n    ", ";", "\x00", "…"]
HOSTILE = [
    "a = []\na.append(a)\nprint(a, a == a, a.count(a), sorted([a, a]), max([a, a]))",
    "d = {}\nd['d'] = d\nd",
    "b = [1]\nb.append(b)\nb",
    "x = []\nfor _ in range(3000):\n    x = [x]\nrepr(x)",
    "t = ()\nfor _ in range(3000):\n    t = (t,)\nhash(t)",
    "format(1.5, '.100000f')[:5]",
    "'%.100000f' % 1.5",
    "round(0.5, 70000)",
    "'x'.join(['ab'] * 10**6)[:10]",
    "'a'.center(10**12)",
    "[0] * 10**12",
    "list(range(10**12))",
    "sorted([float('nan'), 1.0, 2.0] * 500)",
    "def r(n):\n    return r(n + 1)\nr(0)",
    "open('/dev/zero').read()",
    "tf.keras.Sequential([tf.keras.layers.Dense(10**12, input_shape=(10**6,))])",
    "tf.keras.Sequential([tf.keras.layers.Dense(2**31, input_shape=(4,))]).count_params()",
    "np.zeros((10**6, 10**6))",
    "range(10**12)[::3][-1]",
    "'{:{:{:{}}}}'.format(1, 2, 3, 4)",
    "[*range(10**12)]",
    "{**{i: i for i in range(10)}, 'x': 1}",
    "import time\ntime.sleep(float('nan'))",
    "chr(0x110000)",
    "int('9' * 5000)",
    "exec('1+') if 'exec' in dir(__builtins__) else None",
    "class C:\n    def __repr__(self):\n        return repr(self)\nC()",
    "class E:\n    def __eq__(self, o):\n        return self == o\nE() == E()",
]
NESTERS = [("(", ")"), ("[", "]"), ("{1: ", "}"), ("-", ""), ("not ", ""), ("1 + ", ""),
           ("f(", ")"), ("lambda: ", "")]


def _literals(code, pattern):
    return [m.span() for m in re.finditer(pattern, code)]


NUMBER = r"(?<![\w.])\d+(\.\d+)?(e[-+]?\d+)?(?![\w.])"
STRING = r"'[^'\n]*'|\"[^\"\n]*\""


def replace_span(code, span, text):
    return code[: span[0]] + text + code[span[1]:]


def m_number(rng, code, _):
    spans = _literals(code, NUMBER)
    return replace_span(code, rng.choice(spans), rng.choice(EXTREME_NUMBERS)) if spans else code


def m_string(rng, code, _):
    spans = _literals(code, STRING)
    return replace_span(code, rng.choice(spans), rng.choice(EXTREME_STRINGS)) if spans else code


def m_spec(rng, code, _):
    spans = [m.span(1) for m in re.finditer(r"\{[^{}:\n]*:([^{}\n]*)\}", code)]
    spans += [m.span(1) for m in re.finditer(r"%([-+ #0-9.]*[sdfgexr])", code)]
    if not spans:
        return code
    return replace_span(code, rng.choice(spans), rng.choice(ABSURD_SPECS))


def m_operator(rng, code, _):
    spans = _literals(code, r" [-+*/%&|^<>=]{1,2} ")
    return replace_span(code, rng.choice(spans), rng.choice(OPERATORS)) if spans else code


def m_noise(rng, code, _):
    at = rng.randrange(len(code) + 1)
    return code[:at] + rng.choice(NOISE) + code[at:]


def m_delete(rng, code, _):
    if not code:
        return code
    at = rng.randrange(len(code))
    return code[:at] + code[at + rng.randint(1, 5):]


def m_truncate(rng, code, _):
    return code[: rng.randrange(len(code) + 1)]


def m_duplicate(rng, code, _):
    if not code:
        return code
    a = rng.randrange(len(code))
    b = min(len(code), a + rng.randint(1, 40))
    return code[:b] + code[a:b] * rng.randint(1, 3) + code[b:]


def m_lines(rng, code, _):
    lines = code.split("\n")
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    choice = rng.randrange(3)
    if choice == 0:
        lines[i], lines[j] = lines[j], lines[i]
    elif choice == 1:
        del lines[i]
    else:
        lines.insert(i, "    " + lines[j])
    return "\n".join(lines)


def m_splice(rng, code, cells):
    other = rng.choice(cells).split("\n")
    lines = code.split("\n")
    at = rng.randrange(len(lines) + 1)
    piece = other[rng.randrange(len(other)):][: rng.randint(1, 4)]
    return "\n".join(lines[:at] + piece + lines[at:])


def m_nest(rng, code, _):
    spans = _literals(code, NUMBER) or _literals(code, r"\b[a-z_]+\b")
    if not spans:
        return code
    span = rng.choice(spans)
    opening, closing = rng.choice(NESTERS)
    k = rng.choice([5, 50, 300, 3000, 20000])
    return replace_span(code, span, opening * k + code[span[0]:span[1]] + closing * k)


def m_hostile(rng, code, _):
    lines = code.split("\n")
    at = rng.randrange(len(lines) + 1)
    return "\n".join(lines[:at] + rng.choice(HOSTILE).split("\n") + lines[at:])


# Weights favour the mutations that keep cells runnable, so that many reach the evaluator.
MUTATORS = [
    (m_number, 6), (m_string, 3), (m_spec, 3), (m_operator, 3), (m_noise, 3),
    (m_delete, 2), (m_truncate, 1), (m_duplicate, 2), (m_lines, 2), (m_splice, 3),
    (m_nest, 2), (m_hostile, 3),
]


def mutate(rng, code, cells):
    fns = [f for f, _ in MUTATORS]
    weights = [w for _, w in MUTATORS]
    for _ in range(rng.choice([1, 1, 2, 3])):
        code = rng.choices(fns, weights)[0](rng, code, cells)
    return code


# ---------------------------------------------------------------- running cells


class Fuzz:
    """A kernel under fuzz, restarted when it dies or grows too large."""

    def __init__(self, cells):
        self.cells = cells
        self.failures = []
        self.counts = {"cells": 0, "errors": 0, "interrupted": 0, "restarts": 0,
                       "messages": 0, "slowest_interrupt_s": 0.0}
        self.defined = set()
        # How often each exception class answered a mutated cell (printed in the summary).
        self.enames = {}
        self.km = self.kc = None
        self.start()

    def start(self):
        env = dict(os.environ, MIRROR_MEMORY_LIMIT=MEMORY_LIMIT)
        self.km, self.kc = start_new_kernel(kernel_name=KERNEL, startup_timeout=60, env=env)
        for code in self.cells:
            self.run(code, record=False)

    def stop(self):
        if self.kc:
            self.kc.stop_channels()
        if self.km:
            self.km.shutdown_kernel(now=True)

    def restart(self, why, code):
        self.failures.append((why, code))
        self.counts["restarts"] += 1
        try:
            self.stop()
        except Exception:  # noqa: BLE001 - the kernel may already be gone
            pass
        self.start()

    def rss_kb(self):
        try:
            pid = self.km.provisioner.process.pid
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1])
        except (OSError, AttributeError):
            pass
        return 0

    def wait_reply(self, msg_id, timeout):
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            try:
                msg = self.kc.get_shell_msg(timeout=min(left, 0.5))
            except Empty:
                if not self.km.is_alive():
                    return "dead"
                continue
            if msg["parent_header"].get("msg_id") == msg_id:
                return msg
            if isinstance(msg.get("content"), dict):
                self.check_ename(msg["content"], "(an earlier request)")

    def drain_iopub(self):
        while True:
            try:
                self.kc.get_iopub_msg(timeout=0)
            except Empty:
                return

    def check_ename(self, content, code):
        if content.get("status") != "error":
            return
        ename = content.get("ename", "")
        evalue = content.get("evalue", "")
        allowed = PYTHON_ERRORS | TF_ERRORS | OTHER_ERRORS | self.defined
        if ename not in allowed or "internal error in the kernel" in evalue:
            self.failures.append((f"error reply {ename}: {evalue[:200]}", code))

    def run(self, code, record=True):
        self.defined |= set(re.findall(r"class\s+(\w+)", code))
        msg_id = self.kc.execute(code)
        reply = self.wait_reply(msg_id, CELL_TIMEOUT)
        if reply is None:
            self.counts["interrupted"] += 1
            sent = time.monotonic()
            self.km.interrupt_kernel()
            reply = self.wait_reply(msg_id, HANG_AFTER_INTERRUPT)
            took = time.monotonic() - sent
            self.counts["slowest_interrupt_s"] = max(self.counts["slowest_interrupt_s"], took)
            if reply is None:
                self.restart("hang: no reply after an interrupt", code)
                return
            if took > INTERRUPT_WITHIN and reply != "dead":
                self.failures.append((f"slow: ended {took:.1f} s after the interrupt", code))
        if reply == "dead":
            self.restart("crash: the kernel died", code)
            return
        self.drain_iopub()
        if record:
            self.counts["cells"] += 1
            if reply["content"]["status"] == "error":
                self.counts["errors"] += 1
                ename = reply["content"].get("ename", "?")
                self.enames[ename] = self.enames.get(ename, 0) + 1
            self.check_ename(reply["content"], code)
            if self.rss_kb() > RSS_RESTART_KB:
                self.stop()
                self.start()

    def alive(self, what):
        msg_id = self.kc.kernel_info()
        reply = self.wait_reply(msg_id, 10)
        if reply in (None, "dead"):
            self.restart(f"no kernel_info reply after {what}", what)


def summary(f):
    print("\nfuzz:", json.dumps(f.counts))
    print("fuzz errors by class:", json.dumps(dict(sorted(f.enames.items(), key=lambda kv: -kv[1]))))


@pytest.fixture(scope="module")
def fuzz():
    f = Fuzz(load_cells())
    yield f
    f.stop()


def report(f):
    summary(f)
    return "\n\n".join(f"{why}\n--- input ---\n{code[:600]!r}" for why, code in f.failures[:20])


@pytest.mark.timeout(900)
def test_mutated_cells_never_crash_hang_or_raise_a_non_python_error(fuzz):
    rng = random.Random(SEED)
    cells = fuzz.cells
    while fuzz.counts["cells"] < MIN_CELLS:
        fuzz.run(mutate(rng, rng.choice(cells), cells))
    fuzz.alive("the mutated cells")
    assert not fuzz.failures, report(fuzz)
    assert fuzz.counts["cells"] >= MIN_CELLS
    summary(fuzz)


# ---------------------------------------------------------------- wire mutations

TEMPLATES = [
    ("shell", "execute_request", {"code": "1 + 1", "silent": False, "store_history": True,
                                  "user_expressions": {}, "allow_stdin": False, "stop_on_error": False}),
    ("shell", "kernel_info_request", {}),
    ("shell", "complete_request", {"code": "pri", "cursor_pos": 3}),
    ("shell", "inspect_request", {"code": "print", "cursor_pos": 5, "detail_level": 0}),
    ("shell", "is_complete_request", {"code": "for i in x:"}),
    ("shell", "history_request", {"hist_access_type": "tail", "n": 3, "output": False, "raw": True}),
    ("shell", "comm_info_request", {}),
    ("shell", "comm_open", {"comm_id": "c1", "target_name": "t", "data": {}}),
    ("shell", "comm_msg", {"comm_id": "c1", "data": {}}),
    ("control", "kernel_info_request", {}),
    ("control", "interrupt_request", {}),
]
ODD_VALUES = [None, 0, -1, 2**64, 1e308, "", "x" * (1 << 20), [], {}, True, [[[]]], "é", -2**63]


def deep_json(depth):
    return "[" * depth + "]" * depth


def mutate_message(rng, session, socket_name, msg_type, content):
    """The frames of one mutated message (identity frames are added by the socket)."""
    content = json.loads(json.dumps(content))
    msg = session.msg(msg_type, content)
    header, parent, metadata = msg["header"], msg["parent_header"], msg["metadata"]
    kind = rng.randrange(12)
    raw = None
    if kind == 0:  # a header of the wrong type or with fields of the wrong type
        header = rng.choice([[1, 2], "header", 7, None, {}, {"msg_id": 5, "msg_type": msg_type},
                             {"msg_id": "x"}, dict(header, msg_type=rng.choice(ODD_VALUES)),
                             dict(header, date=123, version=[5], session=None)])
    elif kind == 1:  # content of the wrong type
        content = rng.choice([None, [], "code", 42, [content], True])
    elif kind == 2:  # one field of the wrong type
        if content:
            key = rng.choice(list(content))
            content[key] = rng.choice(ODD_VALUES)
    elif kind == 3:  # missing and extra fields
        if content:
            content.pop(rng.choice(list(content)))
        content[rng.choice(["zz", "code", "cursor_pos", "n", ""])] = rng.choice(ODD_VALUES)
    elif kind == 4:  # parent header or metadata of the wrong type
        parent = rng.choice([[], "p", 3, {"msg_id": 1}, None])
        metadata = rng.choice([[], "m", 3, None, {"deep": [[[[]]]]}])
    elif kind == 5:  # a megabyte string somewhere
        content[rng.choice(["code", "zz"])] = "y" * (1 << 20)
    elif kind == 6:  # hostile code that parses
        content["code"] = rng.choice(HOSTILE + ["x = " + "(" * 5000 + ")" * 5000,
                                              "x = " + "1+" * 50000 + "1"])
    parts = [session.pack(header), session.pack(parent), session.pack(metadata), session.pack(content)]
    if kind == 7:  # 10,000-deep JSON in one frame
        parts[rng.randrange(4)] = deep_json(10_000).encode()
    elif kind == 8:  # not JSON, or not UTF-8
        parts[rng.randrange(4)] = rng.choice([b"{not json", b"\xff\xfe\x00", b"", b"nul", b"[1,", b"1e99999"])
    signature = session.sign(parts)
    if kind == 9:  # broken signatures
        signature = rng.choice([signature.upper(), signature[:-1], b"", b"00" * 32, signature + b"0"])
    frames = [b"<IDS|MSG>", signature] + parts
    if kind == 10:  # broken framing
        raw = rng.choice([frames[:rng.randrange(len(frames))], frames + [b"buffer"] * 3,
                          [b"<IDS|MSG>"] + frames, [b"noise"] + frames[1:], frames[2:]])
    elif kind == 11:  # an unknown message type
        header = dict(header, msg_type=rng.choice(["nope", "x" * 10_000, "shutdown_request_"]))
        parts[0] = session.pack(header)
        frames = [b"<IDS|MSG>", session.sign(parts)] + parts
    return raw or frames


@pytest.mark.timeout(900)
def test_malformed_messages_never_crash_or_hang_the_kernel(fuzz):
    rng = random.Random(SEED + 1)
    kc = fuzz.kc
    sent = 0
    while sent < MIN_MESSAGES:
        kc = fuzz.kc
        socket_name, msg_type, content = rng.choice(TEMPLATES)
        socket = kc.shell_channel.socket if socket_name == "shell" else kc.control_channel.socket
        frames = mutate_message(rng, kc.session, socket_name, msg_type, content)
        if not frames:
            continue
        socket.send_multipart(frames)
        sent += 1
        if sent % 25 == 0:
            # Every reply so far must name a Python exception when it is an error.
            while True:
                try:
                    msg = kc.get_shell_msg(timeout=0.05)
                except Empty:
                    break
                fuzz.check_ename(msg["content"] if isinstance(msg["content"], dict) else {}, "wire")
            fuzz.drain_iopub()
            fuzz.alive(f"message {sent}")
    fuzz.counts["messages"] = sent
    fuzz.alive("the malformed messages")
    assert not fuzz.failures, report(fuzz)
    assert fuzz.km.is_alive()
    summary(fuzz)
