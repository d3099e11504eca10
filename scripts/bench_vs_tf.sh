#!/usr/bin/env bash
# Side by side with TensorFlow: runs scripts/bench_vs_tf.py, one Keras source, under real
# TensorFlow (`python bench_vs_tf.py ...`) and under mirror-kernel (`mirror-kernel exec
# bench_vs_tf.py ...`), one right after the other for each case: the MLP and the CNN, without
# a strategy and with MirroredStrategy on 2 logical CPUs, train (best of 3 epochs) and predict.
# Prints a Markdown table of samples/s with the ratios, and mirror-kernel's peak RSS per case.
# Opt-in, never part of the tests: it needs a Python with tensorflow-cpu 2.21.
#
# Usage:
#   scripts/bench_vs_tf.sh [--venv DIR] [--repeat N] [CASE...]
#     --venv DIR   a virtual environment with TensorFlow (default $BENCH_TF_VENV, else
#                  .venv-tf in the repository, created with tensorflow-cpu==2.21.0 if missing)
#     --repeat N   run every case N times and keep each side's best (default 1)
#     CASE         mlp-none mlp-mirrored cnn-none cnn-mirrored (default: all four)
#   MIRROR_KERNEL_BIN   the binary to use (default: target/release/mirror-kernel, built with
#                       cargo build --release when missing)
set -euo pipefail

cd "$(dirname "$0")/.."
venv=${BENCH_TF_VENV:-}
repeat=1
cases=()
while [ $# -gt 0 ]; do
    case $1 in
        --venv) venv=$2; shift 2 ;;
        --repeat) repeat=$2; shift 2 ;;
        -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
        *) cases+=("$1"); shift ;;
    esac
done
[ ${#cases[@]} -gt 0 ] || cases=(mlp-none mlp-mirrored cnn-none cnn-mirrored)
venv=${venv:-.venv-tf}

if [ ! -x "$venv/bin/python" ]; then
    echo "creating $venv with tensorflow-cpu==2.21.0 (once)" >&2
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet tensorflow-cpu==2.21.0
fi
py=$venv/bin/python
bin=${MIRROR_KERNEL_BIN:-target/release/mirror-kernel}
if [ ! -x "$bin" ]; then
    cargo build --release
fi
script=scripts/bench_vs_tf.py

# Runs one side once; prints "TRAIN PREDICT RSS_MIB".
run_side() {
    local side=$1 model=$2 strategy=$3 out rss
    local log
    log=$(mktemp)
    if [ "$side" = tf ]; then
        TF_CPP_MIN_LOG_LEVEL=3 /usr/bin/time -f '%M' -o "$log.rss" "$py" "$script" "$model" "$strategy" > "$log" 2>&1 || true
    else
        /usr/bin/time -f '%M' -o "$log.rss" "$bin" exec "$script" "$model" "$strategy" > "$log" 2>&1 || true
    fi
    out=$(grep -m1 '^result ' "$log" || true)
    rss=$(tail -n1 "$log.rss" 2>/dev/null || echo 0)
    if [ -z "$out" ]; then
        echo "$side $model $strategy failed:" >&2
        tail -n 5 "$log" >&2
        echo "0 0 0"
    else
        local train predict
        train=$(sed -n 's/.* train=\([0-9]*\).*/\1/p' <<< "$out")
        predict=$(sed -n 's/.* predict=\([0-9]*\).*/\1/p' <<< "$out")
        echo "$train $predict $(( rss / 1024 ))"
    fi
    rm -f "$log" "$log.rss"
}

best() { [ "$1" -gt "$2" ] && echo "$1" || echo "$2"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }

echo "| model | strategy | TF train | ours train | ratio | TF predict | ours predict | ratio | our peak RSS |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for c in "${cases[@]}"; do
    model=${c%-*}
    strategy=${c#*-}
    tf_train=0 tf_pred=0 our_train=0 our_pred=0 our_rss=0
    for _ in $(seq "$repeat"); do
        read -r t p _ <<< "$(run_side tf "$model" "$strategy")"
        tf_train=$(best "$t" "$tf_train"); tf_pred=$(best "$p" "$tf_pred")
        read -r t p r <<< "$(run_side ours "$model" "$strategy")"
        our_train=$(best "$t" "$our_train"); our_pred=$(best "$p" "$our_pred")
        our_rss=$(best "$r" "$our_rss")
    done
    label=$([ "$strategy" = none ] && echo "none" || echo "MirroredStrategy, 2 logical CPUs")
    echo "| $model | $label | $tf_train | $our_train | $(ratio "$our_train" "$tf_train")x | $tf_pred | $our_pred | $(ratio "$our_pred" "$tf_pred")x | ${our_rss} MiB |"
done
