#!/usr/bin/env bash
# Installs the Debian 12 packages tconv builds with, only those that are missing, plus any
# package names given as arguments (scripts/fuzz.sh adds clang's).
# Needs root (or sudo) when something is missing; does nothing otherwise.
set -euo pipefail
packages=(gcc libc6-dev make cmake protobuf-c-compiler libprotobuf-c-dev libcmocka-dev g++ pkg-config "$@")
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "deps: installing ${missing[*]}" >&2
    sudo_cmd=""
    [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
    $sudo_cmd apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi
