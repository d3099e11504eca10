"""Shared fixtures: the tests talk to the `mirror` kernelspec installed in this
environment (scripts/test.sh installs it with `mirror-kernel install --prefix .venv`)."""
import os
import sys
import time
from queue import Empty

import pytest
from jupyter_client.manager import start_new_kernel

# Prefer the kernelspec of this environment over any user-wide `mirror` install.
os.environ["JUPYTER_PATH"] = os.path.join(sys.prefix, "share", "jupyter")

KERNEL = "mirror"
TIMEOUT = 30


@pytest.fixture
def kernel():
    km, kc = start_new_kernel(kernel_name=KERNEL, startup_timeout=60)
    try:
        yield km, kc
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def outputs_of(kc, msg_id, timeout=TIMEOUT):
    """The iopub messages a request caused, up to its `idle` status."""
    got = []
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"no idle for {msg_id}")
        msg = kc.get_iopub_msg(timeout=left)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            return got
        got.append(msg)


def reply_to(kc, msg_id, timeout=TIMEOUT, channel="shell"):
    """The reply on shell (or control) whose parent is `msg_id`."""
    get = kc.get_shell_msg if channel == "shell" else kc.get_control_msg
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"no reply to {msg_id}")
        msg = get(timeout=left)
        if msg["parent_header"].get("msg_id") == msg_id:
            return msg


def run(kc, code, timeout=TIMEOUT, **kw):
    """Executes `code`; returns (reply content, iopub messages)."""
    msg_id = kc.execute(code, **kw)
    reply = reply_to(kc, msg_id, timeout)
    return reply["content"], outputs_of(kc, msg_id, timeout)


def stdout_of(msgs):
    return "".join(
        m["content"]["text"]
        for m in msgs
        if m["msg_type"] == "stream" and m["content"]["name"] == "stdout"
    )


def no_message(get, timeout):
    """True when nothing arrives on a channel within `timeout` seconds."""
    try:
        get(timeout=timeout)
    except Empty:
        return True
    return False
