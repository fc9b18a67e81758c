#!/usr/bin/env bash
# Builds .venv-ascend, the environment irscope's Ascend worker runs in (docs/ascend.md).
#
# triton-ascend replaces the `triton` package (it is Triton 3.2), so it cannot live in .venv (Triton 3.6).
# It ships Python 3.11 wheels only. Its one import-time dependency outside the standard library is pybind11;
# torch is not needed to compile. Installing it ignores its declared dependencies (--no-deps), as upstream's
# own instructions for compile-only use do.
#
#   scripts/ascend_env.sh                     # from the package registry (a 54 MB wheel, 168 MB installed)
#   ASCEND_WHEEL=path/to/triton_ascend-3.2.0-cp311-….whl scripts/ascend_env.sh   # from a local wheel
#
# Idempotent: a finished environment carries .venv-ascend/.installed and is left alone.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=.venv-ascend
PY=${PY:-python3.11}
WHEEL=${ASCEND_WHEEL:-triton-ascend==3.2.0}
STAMP="$VENV/.installed"

if [ -f "$STAMP" ]; then
  exit 0
fi
if ! command -v "$PY" >/dev/null 2>&1; then
  echo "ascend_env.sh: $PY not found; triton-ascend 3.2.0 ships Python 3.11 wheels only (set PY=...)" >&2
  exit 1
fi
"$PY" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' || {
  echo "ascend_env.sh: $PY is not Python 3.11; triton-ascend 3.2.0 ships cp311 wheels only" >&2
  exit 1
}
test -x "$VENV/bin/python" || "$PY" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-deps "$WHEEL"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check "pybind11==3.1.0"
"$VENV/bin/python" - <<'PY'
import importlib.metadata
import triton
from triton.backends import backends

assert "ascend" in backends, f"triton {triton.__version__} in this environment has no ascend backend"
print(f"triton-ascend {importlib.metadata.version('triton-ascend')} (triton {triton.__version__}) ready")
PY
touch "$STAMP"
