#!/usr/bin/env bash
# Makes sure Gloo (Debian's libgloo-dev: headers and libgloo.so) is installed, which the
# `gloo` cargo feature (MultiWorkerMirroredStrategy across processes) compiles against.
# Installs it with apt-get when it is missing; fails with a message where that cannot be done.
set -euo pipefail
if [ -f /usr/include/gloo/allreduce.h ]; then
    exit 0
fi
if ! command -v apt-get >/dev/null; then
    echo "libgloo-dev is needed (Gloo headers and library) and apt-get is not available;" >&2
    echo "install Gloo by other means, so that <gloo/allreduce.h> and libgloo.so are found." >&2
    exit 1
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
    sudo="sudo"
fi
echo "== installing libgloo-dev"
$sudo apt-get update -qq
$sudo apt-get install -y -qq libgloo-dev
