"""Torch's bytecode for a worker whose installation has none: when torch's .pyc files are missing
beside its sources (installed without them, or into a folder Python may not write, and with
PYTHONDONTWRITEBYTECODE set, as on the GPU box and in many container images), every worker start
compiles torch's Python again (17-18 s there to import torch, torch._dynamo and inductor; about 7 s
from a cache). Core names a folder of nova's cache in NOVA_PYCACHE (core/worker/bytecode_cache.h);
the worker then reads and writes bytecode there (sys.pycache_prefix), never beside the sources. Where
torch has its bytecode, nothing changes: a prefix would hide that bytecode and compile it all again."""

import importlib.util
import os
import sys


def bytecode_missing(module):
    """True when `module` is found and its compiled bytecode is not beside its source."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return False
    saved = sys.pycache_prefix
    try:
        sys.pycache_prefix = None
        return not os.path.exists(importlib.util.cache_from_source(spec.origin))
    finally:
        sys.pycache_prefix = saved


def use_cache_if_missing(module="torch", environ=os.environ):
    """Turns the cache on (before `module` is imported) when NOVA_PYCACHE names a folder and `module`
    has no bytecode of its own. Returns the folder in use, or None."""
    folder = environ.get("NOVA_PYCACHE")
    if not folder or module in sys.modules or not os.path.isdir(folder) or not bytecode_missing(module):
        return None
    sys.pycache_prefix = folder
    sys.dont_write_bytecode = False
    return folder


def describe(module="torch"):
    """Where this process's `module` bytecode comes from, in words (`nova doctor`)."""
    if not bytecode_missing(module):
        return "its own, beside its sources"
    if sys.pycache_prefix:
        return f"nova's cache ({sys.pycache_prefix})"
    if sys.dont_write_bytecode:
        return "none: compiled again by every process (PYTHONDONTWRITEBYTECODE is set and no cache is named)"
    return "none beside its sources yet: Python writes it on first import where it may"
