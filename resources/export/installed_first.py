"""Makes `import @PACKAGE@` find the installed package (built by `pip install`, with its compiled
kernels) rather than this source folder's copy, which has no compiled library: run from the package's
folder (`python benchmark.py`, `pytest tests`), Python would otherwise import the folder's copy and
every group would silently run the original PyTorch code. Without an installed copy (running the
CPU checks from the source folder), the folder's copy is used. Imported by benchmark.py and the tests
before the package."""

import importlib.util
import os
import sys

_ROOT = os.path.dirname(os.path.abspath(__file__))


def prefer_installed(name="@PACKAGE@"):
    here = [p for p in sys.path if os.path.abspath(p or os.getcwd()) == _ROOT]
    if not here or name in sys.modules:
        return
    rest = [p for p in sys.path if p not in here]
    saved = sys.path[:]
    sys.path[:] = rest
    if importlib.util.find_spec(name) is None:
        sys.path[:] = saved  # not installed: the source folder's copy it is


prefer_installed()
