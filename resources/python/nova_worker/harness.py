"""Runs a candidate's launch plan on torch tensors.

A candidate (core/gen/candidate.h) carries device code that NVRTC compiled to a cubin in the studio
process, and a plan: kernel launches with their grid, block and arguments, and library calls
through PyTorch. The harness loads the cubin once through the CUDA driver API (ctypes on libcuda,
the library torch itself loads) and launches on the current torch stream, so no host code is ever
compiled for a candidate: that keeps the edit-validate loop well under a second.
"""

import ctypes
import json

import torch

_DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16,
           "float64": torch.float64, "int32": torch.int32, "int64": torch.int64, "bool": torch.bool}
_CTYPES = {"float": ctypes.c_float, "double": ctypes.c_double, "int32": ctypes.c_int32,
           "int64": ctypes.c_int64, "uint32": ctypes.c_uint32}


class CudaError(RuntimeError):
    """A CUDA driver call failed; the message names the call and the error."""


def _libcuda():
    lib = ctypes.CDLL("libcuda.so.1")
    lib.cuGetErrorString.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
    lib.cuModuleLoadData.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p]
    lib.cuModuleGetFunction.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p, ctypes.c_char_p]
    lib.cuModuleUnload.argtypes = [ctypes.c_void_p]
    lib.cuFuncSetAttribute.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int]
    lib.cuLaunchKernel.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 6 + [
        ctypes.c_uint, ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p]
    return lib


def _check(lib, result, what):
    if result != 0:
        msg = ctypes.c_char_p()
        lib.cuGetErrorString(result, ctypes.byref(msg))
        text = msg.value.decode() if msg.value else "unknown error"
        raise CudaError(f"{what} failed: {text} ({result})")


_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8


class CompiledModule:
    """A cubin loaded into the current CUDA context, with its kernels looked up by name."""

    def __init__(self, cubin: bytes, kernel_names):
        torch.cuda.init()
        torch.cuda.current_stream()  # makes torch's primary context current on this thread
        self._lib = _libcuda()
        self._image = ctypes.create_string_buffer(cubin, len(cubin))
        self.module = ctypes.c_void_p()
        _check(self._lib, self._lib.cuModuleLoadData(ctypes.byref(self.module), self._image), "cuModuleLoadData")
        self.functions = {}
        for name in kernel_names:
            fn = ctypes.c_void_p()
            _check(self._lib, self._lib.cuModuleGetFunction(ctypes.byref(fn), self.module, name.encode()),
                   f"cuModuleGetFunction({name})")
            self.functions[name] = fn


def _resolve_op(name):
    # "aten.addmm.default" -> torch.ops.aten.addmm.default
    obj = torch.ops
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


class CandidateRunner:
    """Callable with the group's inputs (in call order); returns its outputs as a tuple.

    `candidate` is the candidate JSON (dict), `cubin` the bytes NVRTC produced for its cuda_source.
    Outputs are allocated fresh on every call with `allocator` (torch.empty): the candidate must
    write every element (validation swaps in a poisoning allocator to prove it).

    Everything that does not change between calls (kernel parameter arrays, scalar arguments,
    expected shapes) is prepared once here, so a call costs little more than the launches: on
    small problems the host side is most of the time a user sees.
    """

    def __init__(self, candidate, cubin: bytes, device="cuda"):
        self.candidate = candidate
        self.plan = candidate["plan"]
        self.device = torch.device(device)
        kernels = sorted({s["kernel"] for s in self.plan["steps"] if s["type"] == "kernel"})
        self.module = CompiledModule(cubin, kernels) if kernels else None
        self._lib = self.module._lib if self.module else None
        self.allocator = lambda shape, dtype: torch.empty(shape, dtype=dtype, device=self.device)
        self._inputs = [(torch.Size(spec["shape"]), _DTYPES[spec["dtype"]], spec["name"]) for spec in self.plan["inputs"]]
        self._outputs = [(tuple(s["shape"]), _DTYPES[s["dtype"]]) for s in self.plan["outputs"]]
        self._temps = [(tuple(s["shape"]), _DTYPES[s["dtype"]]) for s in self.plan["temps"]]
        self._steps = []
        for step in self.plan["steps"]:
            if step["type"] == "kernel":
                holders, slots = [], []  # slots: (holder, kind, index) for tensor arguments
                for a in step["args"]:
                    if "ref" in a:
                        h = ctypes.c_void_p(0)
                        kind, idx = a["ref"].split(":")
                        slots.append((h, kind, int(idx)))
                    else:
                        h = _CTYPES[a["scalar_type"]](a["scalar"])
                    holders.append(h)
                params = (ctypes.c_void_p * len(holders))(
                    *[ctypes.cast(ctypes.pointer(h), ctypes.c_void_p) for h in holders])
                shared = int(step.get("shared_bytes", 0))
                fn = self.module.functions[step["kernel"]]
                if shared >= 48 * 1024:
                    _check(self._lib, self._lib.cuFuncSetAttribute(
                        fn, _CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, shared), f"cuFuncSetAttribute({step['kernel']})")
                g, b = step["grid"], step["block"]
                self._steps.append(("kernel", step["kernel"], fn, (int(g[0]), int(g[1]), int(g[2]),
                                    int(b[0]), int(b[1]), int(b[2]), shared), params, holders, slots))
            else:
                refs = [(a["ref"].split(":")[0], int(a["ref"].split(":")[1]), a.get("view")) if "ref" in a
                        else None for a in step["args"]]
                consts = [None if "ref" in a else a["scalar"] for a in step["args"]]
                kind, idx = step["out"].split(":")
                self._steps.append(("library", step["op"], _resolve_op(step["op"]), refs, consts,
                                    step.get("kwargs", {}), (kind, int(idx))))

    def _check_inputs(self, inputs):
        if len(inputs) != len(self._inputs):
            raise ValueError(f"candidate takes {len(self._inputs)} inputs, got {len(inputs)}")
        for i, (t, (shape, dtype, name)) in enumerate(zip(inputs, self._inputs)):
            if not isinstance(t, torch.Tensor):
                raise TypeError(f"input {i} ({name}) must be a tensor")
            if t.shape != shape or t.dtype != dtype:
                raise ValueError(f"input {i} ({name}): expected {str(dtype).replace('torch.', '')}{list(shape)}, "
                                 f"got {str(t.dtype).replace('torch.', '')}{list(t.shape)}")
            if not t.is_contiguous():
                raise ValueError(f"input {i} ({name}) must be contiguous")

    def __call__(self, *inputs):
        self._check_inputs(inputs)
        alloc = self.allocator
        tensors = {"input": inputs,
                   "output": [alloc(shape, dtype) for shape, dtype in self._outputs],
                   "temp": [alloc(shape, dtype) for shape, dtype in self._temps]}
        stream = ctypes.c_void_p(torch.cuda.current_stream(self.device).cuda_stream)
        for step in self._steps:
            if step[0] == "kernel":
                _, name, fn, dims, params, _holders, slots = step
                for holder, kind, idx in slots:
                    holder.value = tensors[kind][idx].data_ptr()
                r = self._lib.cuLaunchKernel(fn, *dims, stream, params, None)
                if r != 0:
                    _check(self._lib, r, f"cuLaunchKernel({name})")
            else:
                _, name, op, refs, consts, kwargs, (kind, idx) = step
                args = []
                for ref, const in zip(refs, consts):
                    if ref is None:
                        args.append(const)
                    else:
                        t = tensors[ref[0]][ref[1]]
                        args.append(t.t() if ref[2] == "t" else t)
                result = op(*args, **kwargs)
                target = tensors[kind][idx]
                if result.shape != target.shape:
                    raise ValueError(f"library step {name} gave shape {list(result.shape)}, "
                                     f"plan expects {list(target.shape)}")
                tensors[kind][idx] = result
        return tuple(tensors["output"])


def load_candidate(candidate_path, cubin_path, device="cuda"):
    with open(candidate_path) as f:
        candidate = json.load(f)
    with open(cubin_path, "rb") as f:
        cubin = f.read()
    return CandidateRunner(candidate, cubin, device)
