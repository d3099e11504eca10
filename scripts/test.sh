#!/usr/bin/env bash
# The project's one test command. Needs only a Rust toolchain and python3 (and, on Debian or
# Ubuntu, apt-get for libgloo-dev): it builds the kernel with the `gloo` feature, makes .venv
# with pinned Jupyter clients, installs the kernelspec there, runs every Rust test (all built
# with the same features), then the tests that drive the kernel through real Jupyter clients.
set -euo pipefail
cd "$(dirname "$0")/.."

# One build configuration for every test: the multi-worker tests need Gloo.
./scripts/install-gloo.sh
features=(--features gloo)

echo "== cargo build"
cargo build "${features[@]}"

if [ ! -x .venv/bin/python ]; then
    echo "== creating .venv"
    python3 -m venv .venv
fi
# Installing is quick when the pinned versions are already there.
.venv/bin/python -m pip install --quiet --disable-pip-version-check -r tests/jupyter/requirements.txt

echo "== installing the kernelspec into .venv"
./target/debug/mirror-kernel install --prefix .venv

# Both suites run even when the first fails, so one run shows every failure.
status=0
echo "== cargo test"
cargo test "${features[@]}" || status=1

echo "== Jupyter client tests"
(cd tests/jupyter && ../../.venv/bin/python -m pytest -q "$@") || status=1

if [ "$status" -ne 0 ]; then
    echo "== FAILED"
fi
exit "$status"
