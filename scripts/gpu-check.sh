#!/usr/bin/env bash
# GPU check for mirror-kernel, for a machine with NVIDIA GPUs (and no other preparation):
# builds the release binary, runs the GPU tests, runs `mirror-kernel bench train --device gpu`
# when the CLI has it, runs the device-level GPU benchmark, and, when PyTorch is importable,
# times the same MLP in PyTorch on the same GPU and reports the ratio. Every step has its own
# time limit so the whole check stays under five minutes; a failing step is reported and the
# check moves on. Usage: scripts/gpu-check.sh REPORT_DIR (the report lands in REPORT_DIR).
# Exit status: 0 when the build and the GPU tests passed, 1 otherwise.

set -u
if [ $# -lt 1 ]; then
    echo "usage: $0 REPORT_DIR" >&2
    exit 2
fi
report=$1
mkdir -p "$report"
report=$(cd "$report" && pwd)
cd "$(dirname "$0")/.." || exit 2
summary="$report/summary.txt"
: > "$summary"
say() { echo "$*" | tee -a "$summary"; }
began=$(date +%s)
elapsed() { echo $(( $(date +%s) - began ))s; }
status=0

say "mirror-kernel GPU check, $(date -u +%Y-%m-%dT%H:%M:%SZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"

# 1. The machine.
if command -v nvidia-smi > /dev/null; then
    nvidia-smi > "$report/nvidia-smi.txt" 2>&1
    say "GPUs: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | paste -sd ';' -)"
else
    say "nvidia-smi: not found (no NVIDIA driver in PATH)"
fi
for lib in libcuda.so.1 libnvrtc.so libcublas.so libnccl.so.2; do
    where=$(ldconfig -p 2>/dev/null | grep -m1 "$lib" | sed 's/.*=> //')
    say "library $lib: ${where:-not in the loader cache (may still be on LD_LIBRARY_PATH)}"
done

# 2. Release build.
if timeout 200 cargo build --release > "$report/build.log" 2>&1; then
    say "build: ok ($(elapsed))"
else
    say "build: FAILED (exit $?; see build.log)"
    say "total: $(elapsed)"
    exit 1
fi

# 3. GPU tests (each skips with one line when its hardware is missing; those lines are kept).
tests=(--test cuda_detect --test cuda_kernels --test cuda_ops --test cuda_replicas)
if timeout 120 cargo test --release "${tests[@]}" -- --nocapture --test-threads=1 \
    > "$report/gpu-tests.log" 2>&1; then
    passed=$(grep -o 'test result: ok\. [0-9]* passed' "$report/gpu-tests.log" | awk '{s += $4} END {print s + 0}')
    say "GPU tests: ok ($passed passed, $(elapsed))"
else
    say "GPU tests: FAILED (exit $?; see gpu-tests.log)"
    grep -E '^test .* FAILED|panicked' "$report/gpu-tests.log" | head -20 | tee -a "$summary"
    status=1
fi
# With --nocapture a skip line shares its line with the harness's "test NAME ... " prefix.
skips=$(grep -o 'skipped: .*' "$report/gpu-tests.log" | wc -l)
if [ "$skips" -gt 0 ]; then
    say "GPU tests skipped: $skips (of the passed count above)"
    grep -o 'skipped: .*' "$report/gpu-tests.log" | sort | uniq -c | tee -a "$summary"
fi

# 4. The CLI benchmark, once the integrator has wired it.
bin=target/release/mirror-kernel
if timeout 90 "$bin" bench train --device gpu > "$report/bench-cli.txt" 2>&1; then
    say "bench CLI (mirror-kernel bench train --device gpu):"
    tail -n 20 "$report/bench-cli.txt" | tee -a "$summary"
else
    say "bench CLI: not available or failed (exit $?): $(head -c 300 "$report/bench-cli.txt" | tr '\n' ' ')"
fi

# 5. The device-level benchmark (Dense 784-128 relu-10, Adam, batch 128, 60,000 samples).
if MIRROR_GPU_BENCH=1 timeout 90 cargo test --release --test cuda_bench -- --nocapture \
    > "$report/bench-device.txt" 2>&1; then
    if grep -qE '^(bench|allreduce) ' "$report/bench-device.txt"; then
        grep -E '^(bench|allreduce) ' "$report/bench-device.txt" | tee -a "$summary"
    else
        say "device benchmark: no result: $(grep -o 'skipped: .*' "$report/bench-device.txt" | head -1)"
    fi
else
    say "device benchmark: FAILED (exit $?; see bench-device.txt)"
fi
ours=$(grep -m1 '^bench replicas=1 ' "$report/bench-device.txt" | sed -n 's/.*samples_per_sec=\([0-9.]*\).*/\1/p')

# 6. PyTorch on the same GPU, same model, same batch, same data size, loss read every step.
if timeout 20 python3 -c 'import torch; assert torch.cuda.is_available()' > /dev/null 2>&1; then
    timeout 90 python3 - > "$report/torch.txt" 2>&1 << 'PY'
import time
import torch

torch.manual_seed(0)
dev = torch.device("cuda:0")
n, batch = 60_000, 128
x = torch.rand(n, 784)
y = torch.randint(0, 10, (n,))
model = torch.nn.Sequential(
    torch.nn.Linear(784, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10)
).to(dev)
opt = torch.optim.Adam(model.parameters(), lr=1e-3, eps=1e-7)
loss_fn = torch.nn.CrossEntropyLoss()


def run(first, last):
    loss = None
    for s in range(first, last):
        # Batches come from host memory each step, as in mirror-kernel's benchmark.
        xb = x[s * batch:(s + 1) * batch].to(dev)
        yb = y[s * batch:(s + 1) * batch].to(dev)
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(xb), yb)
        loss.backward()
        opt.step()
        loss = loss.item()  # what a Keras progress bar does every step
    torch.cuda.synchronize()
    return loss


steps = n // batch
run(0, 20)
t0 = time.perf_counter()
last = run(20, steps)
secs = time.perf_counter() - t0
print(f"torch {torch.__version__} samples_per_sec={(steps - 20) * batch / secs:.0f} "
      f"step_ms={secs * 1e3 / (steps - 20):.3f} last_loss={last:.4f}")
PY
    if grep -q '^torch ' "$report/torch.txt"; then
        grep '^torch ' "$report/torch.txt" | tee -a "$summary"
        theirs=$(sed -n 's/.*samples_per_sec=\([0-9.]*\).*/\1/p' "$report/torch.txt" | head -1)
        if [ -n "$ours" ] && [ -n "$theirs" ]; then
            say "ratio mirror-kernel/PyTorch samples/s (1 GPU): $(python3 -c "print(f'{$ours / $theirs:.2f}')")"
        fi
    else
        say "PyTorch run failed: $(tail -n 3 "$report/torch.txt" | tr '\n' ' ')"
    fi
else
    say "PyTorch: not importable with CUDA here; no ratio"
fi

say "total: $(elapsed)"
exit $status
