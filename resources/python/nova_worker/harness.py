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

    def launch(self, name, grid, block, shared_bytes, args, stream):
        fn = self.functions[name]
        if shared_bytes >= 48 * 1024:
            _check(self._lib, self._lib.cuFuncSetAttribute(
                fn, _CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, int(shared_bytes)),
                f"cuFuncSetAttribute({name})")
        holders = []
        for a in args:
            holders.append(a)
        params = (ctypes.c_void_p * len(holders))(*[ctypes.cast(ctypes.pointer(h), ctypes.c_void_p) for h in holders])
        _check(self._lib, self._lib.cuLaunchKernel(
            fn, int(grid[0]), int(grid[1]), int(grid[2]), int(block[0]), int(block[1]), int(block[2]),
            int(shared_bytes), ctypes.c_void_p(stream), params, None), f"cuLaunchKernel({name})")


def _resolve_op(name):
    # "aten.addmm.default" -> torch.ops.aten.addmm.default
    obj = torch.ops
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


class CandidateRunner:
    """Callable with the group's inputs (in call order); returns its outputs as a tuple.

    `candidate` is the candidate JSON (dict), `cubin` the bytes NVRTC produced for its cuda_source.
    Outputs are allocated fresh on every call with torch.empty: the candidate must write every
    element (validation poisons memory to prove it).
    """

    def __init__(self, candidate, cubin: bytes, device="cuda"):
        self.candidate = candidate
        self.plan = candidate["plan"]
        self.device = torch.device(device)
        kernels = sorted({s["kernel"] for s in self.plan["steps"] if s["type"] == "kernel"})
        self.module = CompiledModule(cubin, kernels) if kernels else None
        self._ops = {s["op"]: _resolve_op(s["op"]) for s in self.plan["steps"] if s["type"] == "library"}
        self.allocator = lambda shape, dtype: torch.empty(shape, dtype=dtype, device=self.device)

    def _check_inputs(self, inputs):
        specs = self.plan["inputs"]
        if len(inputs) != len(specs):
            raise ValueError(f"candidate takes {len(specs)} inputs, got {len(inputs)}")
        for i, (t, spec) in enumerate(zip(inputs, specs)):
            if not isinstance(t, torch.Tensor):
                raise TypeError(f"input {i} ({spec['name']}) must be a tensor")
            if list(t.shape) != list(spec["shape"]) or t.dtype != _DTYPES[spec["dtype"]]:
                raise ValueError(f"input {i} ({spec['name']}): expected {spec['dtype']}{spec['shape']}, "
                                 f"got {str(t.dtype).replace('torch.', '')}{list(t.shape)}")
            if not t.is_contiguous():
                raise ValueError(f"input {i} ({spec['name']}) must be contiguous")

    def __call__(self, *inputs):
        self._check_inputs(inputs)
        tensors = {"input": list(inputs)}
        tensors["output"] = [self.allocator(s["shape"], _DTYPES[s["dtype"]]) for s in self.plan["outputs"]]
        tensors["temp"] = [self.allocator(s["shape"], _DTYPES[s["dtype"]]) for s in self.plan["temps"]]
        stream = torch.cuda.current_stream(self.device).cuda_stream

        def ref(arg):
            kind, idx = arg["ref"].split(":")
            t = tensors[kind][int(idx)]
            if arg.get("view") == "t":
                t = t.t()
            return t

        for step in self.plan["steps"]:
            if step["type"] == "kernel":
                cargs = []
                for a in step["args"]:
                    if "ref" in a:
                        cargs.append(ctypes.c_void_p(ref(a).data_ptr()))
                    else:
                        cargs.append(_CTYPES[a["scalar_type"]](a["scalar"]))
                self.module.launch(step["kernel"], step["grid"], step["block"], step.get("shared_bytes", 0),
                                   cargs, stream)
            else:
                args = [ref(a) if "ref" in a else a["scalar"] for a in step["args"]]
                result = self._ops[step["op"]](*args, **step.get("kwargs", {}))
                kind, idx = step["out"].split(":")
                target = tensors[kind][int(idx)]
                if result.shape != target.shape:
                    raise ValueError(f"library step {step['op']} gave shape {list(result.shape)}, "
                                     f"plan expects {list(target.shape)}")
                tensors[kind][int(idx)] = result
        return tuple(tensors["output"])


def load_candidate(candidate_path, cubin_path, device="cuda"):
    with open(candidate_path) as f:
        candidate = json.load(f)
    with open(cubin_path, "rb") as f:
        cubin = f.read()
    return CandidateRunner(candidate, cubin, device)
