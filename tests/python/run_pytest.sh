#!/bin/sh
# CTest's python_worker_pytest: the worker's pytest suite (tests/python) with the interpreter the
# workers run with, found as core finds it (core/env/resource_paths.cpp, default_python()):
# $NOVA_PYTHON, else $NOVA_VENV/bin/python (default ~/.local/share/nova/venv), else python3.
here="$(cd "$(dirname "$0")" && pwd)"
venv="${NOVA_VENV:-$HOME/.local/share/nova/venv}"
python="${NOVA_PYTHON:-$venv/bin/python}"
[ -x "$python" ] || python=python3
if ! "$python" -c "import pytest" 2>/dev/null; then
  echo "pytest is not installed for $python: pip install -r packaging/requirements.txt" >&2
  exit 1
fi
export PYTHONDONTWRITEBYTECODE=1  # nothing written into the source tree
# Arguments that name test files run those; other arguments go to pytest with the whole folder.
if [ $# -gt 0 ] && [ -f "$1" ]; then
  exec "$python" -m pytest -q -p no:cacheprovider "$@"
fi
exec "$python" -m pytest -q -p no:cacheprovider "$here" "$@"
