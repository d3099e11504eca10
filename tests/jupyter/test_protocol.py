"""The kernel driven by jupyter_client directly: signatures, bad input, interrupts,
restart, shutdown, large output, stdin, aborting queued cells, comms."""
import os
import signal
import time
import uuid

from conftest import TIMEOUT, no_message, outputs_of, reply_to, run, stdout_of


def raw_send(kc, socket, msg_type, content, key=None, mangle=None):
    """Sends a message by hand, signed with `key` (default: the right key)."""
    session = kc.session
    msg = session.msg(msg_type, content)
    parts = [
        session.pack(msg["header"]),
        session.pack(msg["parent_header"]),
        session.pack(msg["metadata"]),
        session.pack(msg["content"]),
    ]
    if mangle:
        parts = mangle(parts)
    if key is None:
        signature = session.sign(parts)
    elif key == b"":
        signature = b""
    else:
        import hashlib
        import hmac

        h = hmac.new(key, digestmod=hashlib.sha256)
        for p in parts:
            h.update(p)
        signature = h.hexdigest().encode()
    socket.send_multipart([b"<IDS|MSG>", signature] + parts)
    return msg["header"]["msg_id"]


def parents_seen(kc, seconds):
    seen = set()
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if kc.iopub_channel.msg_ready():
            seen.add(kc.get_iopub_msg(timeout=1)["parent_header"].get("msg_id"))
        else:
            time.sleep(0.02)
    return seen


def still_answers(kc):
    msg_id = kc.kernel_info()
    reply = reply_to(kc, msg_id, timeout=10)
    return reply["content"]["status"] == "ok"


def test_kernel_info_reports_python_language(kernel):
    _, kc = kernel
    reply = reply_to(kc, kc.kernel_info())
    content = reply["content"]
    assert content["protocol_version"].startswith("5.")
    info = content["language_info"]
    assert info["name"] == "python"
    assert info["file_extension"] == ".py"
    assert info["mimetype"] == "text/x-python"


def test_wrongly_signed_execute_is_neither_run_nor_answered(kernel):
    _, kc = kernel
    bad = raw_send(kc, kc.shell_channel.socket, "execute_request",
                   {"code": "print('should not run')", "silent": False}, key=b"wrong key")
    unsigned = raw_send(kc, kc.shell_channel.socket, "execute_request",
                        {"code": "print('unsigned')"}, key=b"")
    assert no_message(kc.get_shell_msg, 1.5)
    seen = parents_seen(kc, 0.5)
    assert bad not in seen and unsigned not in seen
    assert still_answers(kc)


def test_signed_garbage_and_unknown_types_do_not_kill_the_kernel(kernel):
    km, kc = kernel
    shell = kc.shell_channel.socket
    raw_send(kc, shell, "execute_request", {}, mangle=lambda p: [b"{not json", p[1], p[2], p[3]])
    raw_send(kc, shell, "execute_request", {}, mangle=lambda p: [p[0], p[1], p[2], b"\xff\xfe"])
    raw_send(kc, shell, "execute_request", {"code": 42})
    raw_send(kc, shell, "no_such_request", {"x": 1})
    raw_send(kc, kc.control_channel.socket, "no_such_control_request", {})
    shell.send_multipart([b"just", b"noise"])
    shell.send_multipart([b"<IDS|MSG>"])
    time.sleep(0.5)
    assert km.is_alive()
    assert still_answers(kc)


def test_comm_info_is_empty_and_unknown_comms_are_closed(kernel):
    _, kc = kernel
    reply = reply_to(kc, kc.comm_info())
    assert reply["content"] == {"status": "ok", "comms": {}}
    comm_id = uuid.uuid4().hex
    msg_id = raw_send(kc, kc.shell_channel.socket, "comm_open",
                      {"comm_id": comm_id, "target_name": "nobody", "data": {}})
    msgs = outputs_of(kc, msg_id)
    closes = [m for m in msgs if m["msg_type"] == "comm_close"]
    assert closes and closes[0]["content"]["comm_id"] == comm_id


def test_sigint_does_not_kill_an_idle_kernel(kernel):
    km, kc = kernel
    os.kill(km.provisioner.process.pid, signal.SIGINT)
    time.sleep(0.3)
    assert km.is_alive()
    assert still_answers(kc)


def test_shutdown_ends_the_process_within_5_seconds(kernel):
    km, kc = kernel
    process = km.provisioner.process
    msg_id = kc.shutdown()
    reply = reply_to(kc, msg_id, channel="control", timeout=5)
    assert reply["content"]["status"] == "ok"
    start = time.monotonic()
    while process.poll() is None and time.monotonic() - start < 5:
        time.sleep(0.05)
    assert process.poll() == 0


def test_control_answers_while_a_cell_runs(kernel):
    km, kc = kernel
    busy = kc.execute("while True:\n    pass")
    time.sleep(0.5)
    start = time.monotonic()
    # Ask on control and time the answer.
    msg = kc.session.msg("kernel_info_request")
    kc.control_channel.send(msg)
    reply = reply_to(kc, msg["header"]["msg_id"], channel="control", timeout=5)
    assert reply["content"]["status"] == "ok"
    assert time.monotonic() - start < 2
    km.interrupt_kernel()
    reply_to(kc, busy, timeout=10)


def test_interrupt_ends_a_busy_loop_and_keeps_variables(kernel):
    km, kc = kernel
    content, _ = run(kc, "kept = 41")
    assert content["status"] == "ok"
    busy = kc.execute("while True:\n    pass")
    time.sleep(0.5)
    start = time.monotonic()
    km.interrupt_kernel()
    reply = reply_to(kc, busy, timeout=10)
    assert time.monotonic() - start < 2
    assert reply["content"]["status"] == "error"
    assert reply["content"]["ename"] == "KeyboardInterrupt"
    content, msgs = run(kc, "print(kept + 1)")
    assert stdout_of(msgs) == "42\n"


def test_restart_clears_the_session(kernel):
    km, kc = kernel
    run(kc, "forgotten = 1")
    km.restart_kernel(now=False)
    kc.wait_for_ready(timeout=60)
    content, msgs = run(kc, "forgotten")
    assert content["status"] == "error"
    assert content["ename"] == "NameError"


def test_three_megabytes_of_stdout_arrive_whole(kernel):
    _, kc = kernel
    code = "line = 'x' * 1023\nfor i in range(3072):\n    print(line)"
    content, msgs = run(kc, code, timeout=120)
    assert content["status"] == "ok"
    text = stdout_of(msgs)
    assert len(text) == 3 * 1024 * 1024
    assert text == ("x" * 1023 + "\n") * 3072


def test_unbounded_recursion_is_a_recursion_error(kernel):
    _, kc = kernel
    content, _ = run(kc, "def down(n):\n    return down(n + 1)\ndown(0)", timeout=60)
    assert content["status"] == "error"
    assert content["ename"] == "RecursionError"
    content, msgs = run(kc, "print(1 + 1)")
    assert stdout_of(msgs) == "2\n"


def test_input_asks_the_front_end(kernel):
    _, kc = kernel
    msg_id = kc.execute("name = input('who? ')\nprint('hi ' + name)", allow_stdin=True)
    request = kc.get_stdin_msg(timeout=TIMEOUT)
    assert request["msg_type"] == "input_request"
    assert request["content"]["prompt"] == "who? "
    assert request["parent_header"]["msg_id"] == msg_id
    kc.input("ada")
    assert reply_to(kc, msg_id)["content"]["status"] == "ok"
    assert stdout_of(outputs_of(kc, msg_id)) == "hi ada\n"


def test_input_without_stdin_is_an_error(kernel):
    _, kc = kernel
    content, _ = run(kc, "input('x')", allow_stdin=False)
    assert content["status"] == "error"
    assert no_message(kc.get_stdin_msg, 0.3)


def test_a_failed_cell_aborts_the_queued_ones(kernel):
    _, kc = kernel
    first = kc.execute("import time\ntime.sleep(0.5)\nraise ValueError('stop here')")
    second = kc.execute("print('never')")
    third = kc.execute("print('never either')")
    assert reply_to(kc, first)["content"]["status"] == "error"
    assert reply_to(kc, second)["content"]["status"] == "aborted"
    assert reply_to(kc, third)["content"]["status"] == "aborted"
    content, msgs = run(kc, "print('runs again')")
    assert stdout_of(msgs) == "runs again\n"


def test_stop_on_error_false_keeps_going(kernel):
    _, kc = kernel
    first = kc.execute("import time\ntime.sleep(0.3)\nraise ValueError('x')", stop_on_error=False)
    second = kc.execute("print('still runs')")
    assert reply_to(kc, first)["content"]["status"] == "error"
    assert reply_to(kc, second)["content"]["status"] == "ok"


def test_execution_count_counts_stored_cells_only(kernel):
    _, kc = kernel
    a, _ = run(kc, "1")
    b, _ = run(kc, "2", store_history=False)
    c, msgs = run(kc, "3", silent=True)
    d, _ = run(kc, "4")
    assert d["execution_count"] == a["execution_count"] + 1
    assert not [m for m in msgs if m["msg_type"] in ("execute_input", "execute_result")]


def test_display_ids_and_transient(kernel):
    _, kc = kernel
    code = (
        "from IPython.display import display\n"
        "h = display('first', display_id=True)\n"
        "h.update('second')\n"
        "display('plain')"
    )
    content, msgs = run(kc, code)
    assert content["status"] == "ok"
    shown = [m for m in msgs if m["msg_type"] == "display_data"]
    updated = [m for m in msgs if m["msg_type"] == "update_display_data"]
    assert shown[0]["content"]["transient"]["display_id"]
    assert updated[0]["content"]["transient"] == shown[0]["content"]["transient"]
    assert shown[1]["content"].get("transient", {}) == {}


def test_sigint_interrupts_a_busy_cell_like_a_message(kernel):
    km, kc = kernel
    busy = kc.execute("while True:\n    pass")
    time.sleep(0.5)
    os.kill(km.provisioner.process.pid, signal.SIGINT)
    reply = reply_to(kc, busy, timeout=10)
    assert reply["content"]["ename"] == "KeyboardInterrupt"
    assert km.is_alive()
    content, msgs = run(kc, "print('alive')")
    assert stdout_of(msgs) == "alive\n"


def test_history_lists_this_sessions_cells(kernel):
    _, kc = kernel
    run(kc, "first = 1")
    run(kc, "second = 2")
    run(kc, "not_stored = 3", store_history=False)
    reply = reply_to(kc, kc.history(hist_access_type="tail", n=10, output=False, raw=True))
    inputs = [entry[2] for entry in reply["content"]["history"]]
    assert inputs == ["first = 1", "second = 2"]
    reply = reply_to(kc, kc.history(hist_access_type="search", pattern="sec*", output=False, raw=True))
    assert [entry[2] for entry in reply["content"]["history"]] == ["second = 2"]
