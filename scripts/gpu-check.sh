#!/usr/bin/env bash
# GPU check for mirror-kernel, for a machine with NVIDIA GPUs (and no other preparation):
# builds the release binary and the integration-test binary, runs the GPU tests (CUDA ops against the
# CPU device, GPU replicas through MirroredStrategy and keras fit, the mirror invariant, a
# notebook session on the GPUs, the device errors), runs `mirror-kernel bench train --device
# gpu` (the device layer, then keras fit on MirroredStrategy as a notebook trains: the MLP, and
# the CNN Conv32-Pool-Conv64-Pool-Dense10 on 28x28x1), runs the device-level GPU benchmark,
# and, when PyTorch is importable, times the same MLP and CNN in PyTorch on the same GPU and
# reports the ratios. Every step has its own time limit, cut to what is left of
# a 290-second budget, so the whole check stays under five minutes; a failing step is reported
# and the check moves on. Exit status: 0 when the build and the GPU tests passed, 1 otherwise.
#
# Usage:
#   scripts/gpu-check.sh REPORT_DIR
#       Builds with cargo and runs everything; the report lands in REPORT_DIR.
#   scripts/gpu-check.sh --prepare BIN_DIR [PROFILE]
#       On a machine with Rust (no GPU needed): builds the integration-test binary and the CLI with
#       PROFILE (default release; `dev` builds faster) and copies them, stripped, to BIN_DIR,
#       for GPU machines that have no Rust toolchain.
#   GPU_CHECK_BIN=BIN_DIR scripts/gpu-check.sh REPORT_DIR
#       (BIN_DIR relative to the repository root or absolute.) Runs the prepared binaries instead of building (also chosen when cargo is missing
#       and ./gpu-bin exists).

set -u
# The integration tests are one test binary (`it`); these are its GPU modules, run by name.
test_names=(cuda_detect cuda_kernels cuda_hostreduce cuda_ops cuda_ops_nn cuda_replicas cuda_strategy
    cuda_notebook tf_devices cuda_bench)

if [ "${1:-}" = "--prepare" ]; then
    dest=${2:?usage: $0 --prepare BIN_DIR [PROFILE]}
    profile=${3:-release}
    mkdir -p "$dest"
    cd "$(dirname "$0")/.." || exit 2
    cargo build --profile "$profile" --bin mirror-kernel || exit 1
    cargo test --profile "$profile" --no-run --message-format=json --test it \
        > "$dest/.build.json" || exit 1
    python3 - "$dest" << 'PY' || exit 1
import json, shutil, sys
dest = sys.argv[1]
for line in open(f"{dest}/.build.json"):
    try:
        msg = json.loads(line)
    except ValueError:
        continue
    if msg.get("reason") == "compiler-artifact" and msg.get("executable") \
            and "test" in msg["target"]["kind"]:
        shutil.copy(msg["executable"], f"{dest}/{msg['target']['name']}")
PY
    dir=release
    [ "$profile" = dev ] && dir=debug
    [ "$profile" = release ] || [ "$profile" = dev ] || dir=$profile
    cp "target/$dir/mirror-kernel" "$dest/"
    strip "$dest"/* 2> /dev/null
    rm -f "$dest/.build.json"
    ls -la "$dest"
    exit 0
fi

if [ $# -lt 1 ]; then
    echo "usage: $0 REPORT_DIR | --prepare BIN_DIR [PROFILE]" >&2
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
# The smaller of a step's own limit and what is left of the whole check's budget (at least 1).
budget=290
limit() {
    local left=$(( budget - ($(date +%s) - began) ))
    [ "$left" -lt "$1" ] && set -- "$left"
    [ "$1" -lt 1 ] && set -- 1
    echo "$1"
}
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

# 2. Release build, or prepared binaries where there is no Rust toolchain.
prebuilt=${GPU_CHECK_BIN:-}
if [ -z "$prebuilt" ] && ! command -v cargo > /dev/null && [ -d gpu-bin ]; then
    prebuilt=gpu-bin
fi
if [ -n "$prebuilt" ]; then
    prebuilt=$(cd "$prebuilt" && pwd)
    bin=$prebuilt/mirror-kernel
    say "build: skipped, using the prepared binaries in $prebuilt"
elif ! command -v cargo > /dev/null; then
    say "build: impossible: no cargo here and no prepared binaries (see --prepare)"
    say "total: $(elapsed)"
    exit 1
elif timeout "$(limit 200)" bash -c 'cargo build --release && cargo test --release --no-run --test it' \
        > "$report/build.log" 2>&1; then
    bin=target/release/mirror-kernel
    say "build: ok ($(elapsed))"
else
    say "build: FAILED (exit $?; see build.log)"
    say "total: $(elapsed)"
    exit 1
fi

# Runs the named modules of the integration-test binary (prepared, or through cargo).
run_tests() {
    local filters=()
    for t in "$@"; do filters+=("$t::"); done
    if [ -n "$prebuilt" ]; then
        "$prebuilt/it" "${filters[@]}" --nocapture --test-threads=1
        return
    fi
    cargo test --release --test it -- "${filters[@]}" --nocapture --test-threads=1
}

# 3. GPU tests (each skips with one line when its hardware is missing; those lines are kept).
gpu_tests=()
for t in "${test_names[@]}"; do [ "$t" = cuda_bench ] || gpu_tests+=("$t"); done
if timeout "$(limit 100)" bash -c "$(declare -f run_tests); prebuilt='$prebuilt'; run_tests ${gpu_tests[*]}" \
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

# 4. The CLI benchmark: the device layer, then keras fit on MirroredStrategy's GPU replicas.
if timeout "$(limit 60)" "$bin" bench train --device gpu > "$report/bench-cli.txt" 2>&1 \
    && [ -s "$report/bench-cli.txt" ]; then
    say "bench CLI (mirror-kernel bench train --device gpu):"
    tail -n 24 "$report/bench-cli.txt" | tee -a "$summary"
else
    say "bench CLI: not available, failed or silent: $(head -c 300 "$report/bench-cli.txt" | tr '\n' ' ')"
fi

# 5. The device-level benchmark (Dense 784-128 relu-10, Adam, batch 128, 60,000 samples).
if MIRROR_GPU_BENCH=1 timeout "$(limit 40)" bash -c "$(declare -f run_tests); prebuilt='$prebuilt'; run_tests cuda_bench" \
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

our_cnn=$(grep -m1 '^keras fit CNN on MirroredStrategy, 1 GPU replica' "$report/bench-cli.txt" 2>/dev/null \
    | sed -n 's/.*: \([0-9]*\) samples\/s.*/\1/p')

# 6. PyTorch on the same GPU, same models, same batch, same data size, loss read every step.
if timeout "$(limit 20)" python3 -c 'import torch; assert torch.cuda.is_available()' > /dev/null 2>&1; then
    timeout "$(limit 40)" python3 - > "$report/torch.txt" 2>&1 << 'PY'
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

# The CNN, NHWC data turned to PyTorch's NCHW on the GPU, as Keras's layers see it.
x = x.reshape(n, 28, 28, 1)
model = torch.nn.Sequential(
    torch.nn.Conv2d(1, 32, 3), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
    torch.nn.Conv2d(32, 64, 3), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
    torch.nn.Flatten(), torch.nn.Linear(1600, 10),
).to(dev)
opt = torch.optim.Adam(model.parameters(), lr=1e-3, eps=1e-7)


def run_cnn(first, last):
    loss = None
    for s in range(first, last):
        xb = x[s * batch:(s + 1) * batch].to(dev).permute(0, 3, 1, 2)
        yb = y[s * batch:(s + 1) * batch].to(dev)
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(xb), yb)
        loss.backward()
        opt.step()
        loss = loss.item()
    torch.cuda.synchronize()
    return loss


run_cnn(0, 20)
t0 = time.perf_counter()
last = run_cnn(20, steps)
secs = time.perf_counter() - t0
print(f"torch-cnn {torch.__version__} samples_per_sec={(steps - 20) * batch / secs:.0f} "
      f"step_ms={secs * 1e3 / (steps - 20):.3f} last_loss={last:.4f}")
PY
    if grep -q '^torch ' "$report/torch.txt"; then
        grep '^torch ' "$report/torch.txt" | tee -a "$summary"
        theirs=$(sed -n 's/.*samples_per_sec=\([0-9.]*\).*/\1/p' "$report/torch.txt" | head -1)
        if [ -n "$ours" ] && [ -n "$theirs" ]; then
            say "ratio mirror-kernel/PyTorch samples/s (1 GPU): $(python3 -c "print(f'{$ours / $theirs:.2f}')")"
        fi
        grep '^torch-cnn ' "$report/torch.txt" | tee -a "$summary"
        theirs_cnn=$(sed -n 's/^torch-cnn .*samples_per_sec=\([0-9.]*\).*/\1/p' "$report/torch.txt" | head -1)
        if [ -n "$our_cnn" ] && [ -n "$theirs_cnn" ]; then
            say "ratio mirror-kernel/PyTorch CNN samples/s (keras fit, 1 GPU): $(python3 -c "print(f'{$our_cnn / $theirs_cnn:.2f}')")"
        fi
    else
        say "PyTorch run failed: $(tail -n 3 "$report/torch.txt" | tr '\n' ' ')"
    fi
else
    say "PyTorch: not importable with CUDA here; no ratio"
fi

say "total: $(elapsed)"
exit $status
