"""The `build_ext` command: the full path's build as a job of its own: nvcc and ninja through
torch.utils.cpp_extension, into the build folder validate and bench load from afterwards (then a
no-op). It needs no GPU, so core runs it in the CPU lane while the GPU lane validates something
else. args: {"extension_source": .cu text, "extension_name", "build_dir", "arch": "sm_90"}."""

import time

from . import candidates, schemas


def build_ext(args, progress) -> schemas.BuildExtResult:
    progress("building the extension with nvcc and ninja", 0.0)
    started = time.monotonic()
    module = candidates.build_extension(args)
    elapsed = time.monotonic() - started
    progress("built", 1.0)
    return {"build_s": elapsed, "module": module.__name__, "file": getattr(module, "__file__", ""),
            "extension": args.get("extension_name") or args.get("extension", "")}
