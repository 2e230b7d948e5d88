#!/usr/bin/env bash
# The Python package tconv (python/tconv): builds build/test when needed (the package is copied
# into build/test/python beside the libtconv it was built with), runs its pytest tests
# (python/tests) against that build, then installs into a temporary prefix with cmake --install
# and runs the README's Python example from the installed package.
#   scripts/test-python.sh [PYTEST ARGS...]
# Installs Debian's python3-numpy, python3-onnx and python3-pytest when missing. Exit 0 only when
# tests ran and all passed: pytest's "no tests collected" (5) is a failure here.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/deps.sh" python3 python3-numpy python3-onnx python3-pytest
python=/usr/bin/python3
build="$root/build/test"
cmake -S "$root" -B "$build" -DTCONV_WERROR=ON >/dev/null
cmake --build "$build" -j"$(nproc)" --target tconv_python tconv-import tconv-run >/dev/null

rc=0
TCONV_BUILD="$build" PYTHONPATH="$build/python" "$python" -m pytest -q -p no:cacheprovider \
    "$root/python/tests" "$@" || rc=$?
if [ "$rc" -eq 5 ]; then
    echo "test-python: FAIL: pytest collected no tests" >&2
    exit 1
elif [ "$rc" -ne 0 ]; then
    echo "test-python: FAIL: pytest exit $rc" >&2
    exit "$rc"
fi

# The installed package: cmake --install into a fresh prefix, the README's example run from a
# folder outside the repository with that prefix's package (and its libtconv) alone.
work=$(mktemp -d "${TMPDIR:-/tmp}/tconv-python.XXXXXX")
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
site="$work/prefix/lib/python3/dist-packages"
[ -f "$site/tconv/_libpath.py" ] || { echo "test-python: FAIL: no $site/tconv" >&2; exit 1; }
mkdir -p "$work/run/models"
cp -r "$root/models/keras_decoder" "$work/run/models/"
"$python" - "$root/README.md" >"$work/run/example.py" <<'PY'
import re, sys
print(re.findall(r"```python\n(.*?)```", open(sys.argv[1]).read(), re.S)[0], end="")
PY
(cd "$work/run" && env -u TCONV_LIBRARY PYTHONPATH="$site" "$python" example.py) >"$work/out.txt"
grep -q "proven" "$work/out.txt" || { echo "test-python: FAIL: the example printed:" >&2; cat "$work/out.txt" >&2; exit 1; }
(cd "$work/run" && env -u TCONV_LIBRARY PYTHONPATH="$site" "$python" -c \
    'import tconv, sys; sys.exit(0 if tconv._lib.path.startswith(sys.argv[1]) else 1)' "$work/prefix") ||
    { echo "test-python: FAIL: the installed package did not load the installed libtconv" >&2; exit 1; }
echo "test-python: installed package ok ($(cat "$work/out.txt" | tr '\n' ' '))" >&2
