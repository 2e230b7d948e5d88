#!/usr/bin/env bash
# Installs onnxruntime 1.30 for node (npm onnxruntime-node@1.30.0) into build/ort of this
# checkout, once, and prints the node_modules folder to put in TCONV_ORT_NODE_MODULES (which
# scripts/ort/ortlib.js reads). Used by scripts/ort-check.sh and bench/run.sh.
# Installs nodejs/npm (Debian) when missing. --ignore-scripts: the package's install script
# would fetch GPU files from a host CI cannot reach; the package itself carries the linux-x64
# CPU library.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    sudo_cmd=""
    [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
    $sudo_cmd apt-get update -q >&2 # a fresh machine has no package lists
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -q nodejs npm >&2
fi
ort_dir="$root/build/ort"
if [ ! -f "$ort_dir/node_modules/onnxruntime-node/package.json" ]; then
    mkdir -p "$ort_dir"
    npm install --prefix "$ort_dir" --ignore-scripts --no-audit --no-fund --loglevel=error \
        onnxruntime-node@1.30.0 >&2
fi
echo "$ort_dir/node_modules"
