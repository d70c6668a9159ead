"""The ops of @PACKAGE@, one per fusion group that ships a kernel (torch.ops.@PACKAGE@.group_N).

Importing this module loads the compiled library (`@PACKAGE@._C`, which registers the ops with
TORCH_LIBRARY and their CUDA kernels). Where the library was not built (no CUDA toolkit, a CPU-only
machine), the same schemas are defined here without kernels, so the package still imports and every
group runs its original PyTorch code. For each op it registers a fake (meta) function, so
torch.compile and torch.export trace through it, and an autograd formula whose backward recomputes
the group's original PyTorch ops (the backward pass is not accelerated). Each op has a twin,
group_N_infer: the same kernels without an autograd formula, which the package calls where autograd
is off (torch.no_grad, inference; also in a graph torch.compile makes then), so that no call passes
through a Python autograd layer only to be handed on. It also holds each group's
original PyTorch code as nova recorded it (groups/group_N.py: exactly the ATen ops the kernels
replace, at the shapes they were built for).
"""

import importlib.util
import json
import os

import torch

_HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(_HERE, "package.json"), encoding="utf-8") as _f:
    MANIFEST = json.load(_f)
NAMESPACE = MANIFEST["package"]
SHIPPED = [g for g in MANIFEST["groups"] if g["ships"]]
DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16,
          "float64": torch.float64, "int64": torch.int64, "int32": torch.int32, "bool": torch.bool}


def infer_name(name):
    """The name of an op's twin without an autograd formula (see the module's docstring)."""
    return name + "_infer"


def _load_library():
    if not SHIPPED:
        return False, "no group ships a kernel"
    if not any(name.startswith("_C.") and name.endswith((".so", ".pyd")) for name in os.listdir(_HERE)):
        return False, (f"the compiled library ({NAMESPACE}/_C*.so) is not there: install the package with "
                       "`pip install --no-build-isolation .` on a machine with the CUDA toolkit")
    try:
        from . import _C  # noqa: F401  (loading the library registers the ops)
        return True, ""
    except ImportError as exc:
        return False, str(exc)


COMPILED, LOAD_ERROR = _load_library()
_fallback_library = None
if SHIPPED and not COMPILED:
    # The schemas without kernels: every call takes the original PyTorch path (see _runtime).
    _fallback_library = torch.library.Library(NAMESPACE, "DEF")
    for _g in SHIPPED:
        _fallback_library.define(_g["schema"])
        _fallback_library.define(_g["schema"].replace(_g["op"] + "(", infer_name(_g["op"]) + "(", 1))


def _load_functional(group):
    path = os.path.join(_HERE, group["functional_source"])
    spec = importlib.util.spec_from_file_location(f"{NAMESPACE}._group_{group['id']}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def as_list(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


# op name -> the group's original PyTorch code (module_fn) and its get_inputs() (fresh example inputs).
ORIGINAL = {}
EXAMPLE_INPUTS = {}
for _g in SHIPPED:
    _m = _load_functional(_g)
    ORIGINAL[_g["op"]] = _m.module_fn
    EXAMPLE_INPUTS[_g["op"]] = _m.get_inputs


def op(name):
    """The op's default overload, torch.ops.@PACKAGE@.<name>.default."""
    return getattr(getattr(torch.ops, NAMESPACE), name).default


def infer_op(name):
    """The default overload of the op's twin without an autograd formula (for calls with autograd off)."""
    return op(infer_name(name))


def _register(group):
    qualname = f"{NAMESPACE}::{group['op']}"
    specs = group["output_specs"]
    original = ORIGINAL[group["op"]]

    def fake(*inputs):
        # The kernels run only on the shapes they were built for (the shape guard sees to it), so
        # the outputs have the recorded shapes, on the inputs' device.
        return [inputs[0].new_empty(s["shape"], dtype=DTYPES[s["dtype"]]) for s in specs]

    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*inputs)

    def backward(ctx, grads):
        inputs = ctx.saved_tensors
        needs = ctx.needs_input_grad
        with torch.enable_grad():
            xs = [x.detach().requires_grad_(bool(n) and x.is_floating_point()) for x, n in zip(inputs, needs)]
            outs = as_list(original(*xs))
            pairs = [(o, g) for o, g in zip(outs, grads) if g is not None and o.requires_grad]
            wanted = [x for x in xs if x.requires_grad]
            got = (torch.autograd.grad([o for o, _ in pairs], wanted, [g for _, g in pairs], allow_unused=True)
                   if pairs and wanted else [None] * len(wanted))
        it = iter(got)
        return tuple(next(it) if x.requires_grad else None for x in xs)

    torch.library.register_fake(qualname, fake)
    torch.library.register_fake(f"{NAMESPACE}::{infer_name(group['op'])}", fake)
    torch.library.register_autograd(qualname, backward, setup_context=setup_context)


for _g in SHIPPED:
    _register(_g)
