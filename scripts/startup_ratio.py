"""Startup time of the mirror kernel against ipykernel: from process start to the first
kernel_info reply, several runs each, median of each, and the ratio mirror / ipykernel
(goal: 0.25 or less). Run with the test environment's Python after ./scripts/test.sh:

    .venv/bin/python scripts/startup_ratio.py [--runs N]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from queue import Empty

from jupyter_client import BlockingKernelClient
from jupyter_client.connect import write_connection_file
from jupyter_client.kernelspec import KernelSpecManager


def time_one(argv_for):
    """Seconds from spawning the kernel to its first kernel_info_reply."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "kernel.json")
        write_connection_file(path, ip="127.0.0.1")
        client = BlockingKernelClient(connection_file=path)
        client.load_connection_file()
        client.start_channels()
        # The request waits in the client's queue until the kernel's socket exists.
        msg_id = client.kernel_info()
        start = time.perf_counter()
        proc = subprocess.Popen(argv_for(path), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            while True:
                try:
                    reply = client.get_shell_msg(timeout=30)
                except Empty:
                    raise RuntimeError("no kernel_info_reply within 30 s") from None
                if reply["parent_header"].get("msg_id") == msg_id:
                    elapsed = time.perf_counter() - start
                    break
        finally:
            client.stop_channels()
            proc.kill()
            proc.wait()
        return elapsed


def main():
    # Prefer the kernelspec of this environment over any user-wide `mirror` install.
    os.environ["JUPYTER_PATH"] = os.path.join(sys.prefix, "share", "jupyter")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    spec = KernelSpecManager().get_kernel_spec("mirror")
    mirror_argv = spec.argv
    ipy_argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]

    def fill(argv):
        return lambda path: [a.replace("{connection_file}", path) for a in argv]

    results = {}
    for name, argv in (("mirror", mirror_argv), ("ipykernel", ipy_argv)):
        times = [time_one(fill(argv)) for _ in range(args.runs)]
        results[name] = statistics.median(times)
        print(f"{name:10s} median {results[name] * 1000:8.1f} ms  "
              f"(runs: {', '.join(f'{t * 1000:.0f}' for t in times)})")
    ratio = results["mirror"] / results["ipykernel"]
    print(f"startup ratio mirror/ipykernel: {ratio:.3f} (goal <= 0.25)")
    print(json.dumps({"mirror_s": results["mirror"], "ipykernel_s": results["ipykernel"], "ratio": ratio}))


if __name__ == "__main__":
    main()
