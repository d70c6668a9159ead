"""@PACKAGE@: optimized CUDA kernels for a client's PyTorch model, written by nova export.

    from @PACKAGE@ import ModelNew, optimize
    model = ModelNew(*init_args)      # same constructor, forward signature and state_dict as Model
    optimize(existing_model)          # or accelerate an existing instance in place

See README.md for what ships, the accelerated shapes and the measured figures.
"""

from ._ops import COMPILED, LOAD_ERROR, MANIFEST
from ._runtime import Model, ModelNew, get_init_inputs, get_inputs, optimize

__all__ = ["Model", "ModelNew", "optimize", "get_inputs", "get_init_inputs", "MANIFEST", "COMPILED", "LOAD_ERROR"]
