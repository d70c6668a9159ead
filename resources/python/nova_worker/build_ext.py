"""The full path's build as a job of its own: nvcc and ninja through torch.utils.cpp_extension,
into the build folder validate and bench load from afterwards (then a no-op). It needs no GPU, so
core runs it in the CPU lane while the GPU lane validates something else. Entry points:
build_ext(args, progress) and `python -m nova_worker.build_ext ARGS.json`."""

import os
import sys
import time

from . import candidates


def build_ext(args, progress):
    progress("building the extension with nvcc and ninja", 0.0)
    started = time.monotonic()
    module = candidates.build_extension(args)
    elapsed = time.monotonic() - started
    progress("built", 1.0)
    return {"build_s": elapsed, "module": module.__name__, "file": getattr(module, "__file__", ""),
            "extension": os.path.abspath(args["extension"])}


if __name__ == "__main__":
    sys.exit(candidates.run_standalone(build_ext, sys.argv))
