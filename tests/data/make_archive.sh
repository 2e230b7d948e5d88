#!/usr/bin/env bash
# Rebuilds onnx-node-tests-v1.22.0.tar.xz, byte for byte, from a copy of ONNX's node test folder:
#   tests/data/make_archive.sh NODE_DIR [OUT.tar.xz]
# NODE_DIR is onnx/backend/test/data/node of onnx v1.22.0 (e.g. from
# `git -C onnx archive v1.22.0 onnx/backend/test/data/node | tar -x`); MANIFEST.md says where the
# committed archive came from. The archive is deterministic: names sorted in the C locale, one
# fixed mtime, owner and group 0, modes 644/755 (ONNX's files are read-only in some copies, which
# would make the unpacked build folder hard to delete), ustar format, xz -9e single-threaded.
set -euo pipefail
src=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
out=${2:-$here/onnx-node-tests-v1.22.0.tar.xz}
top=onnx-node-tests-v1.22.0
stage=$(mktemp -d)
trap 'chmod -R u+w "$stage"; rm -rf "$stage"' EXIT
cp -R "$src" "$stage/$top"
chmod -R u=rwX,go=rX "$stage/$top"
(cd "$stage" && LC_ALL=C tar --sort=name --format=ustar --mtime='2025-01-01 00:00:00Z' \
    --owner=0 --group=0 --numeric-owner --mode='u=rwX,go=rX' -cf - "$top") |
    xz -9e -T1 >"$out.tmp"
mv "$out.tmp" "$out"
echo "$out: $(stat -c %s "$out") bytes, $(find "$src" -mindepth 1 -maxdepth 1 -type d | wc -l) test folders"
