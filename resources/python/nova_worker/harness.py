"""Runs a candidate's launch plan on torch tensors.

A candidate (core/gen/candidate.h) carries device code that NVRTC compiled to a cubin in the studio
process, and a plan: kernel launches with their grid, block and arguments, and library calls
through PyTorch. The harness loads the cubin once through the CUDA driver API (ctypes on libcuda,
the library torch itself loads) and launches on the current torch stream, so no host code is ever
compiled for a candidate: that keeps the edit-validate loop well under a second.
"""

import ctypes

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
    # No argtypes for cuLaunchKernel: CandidateRunner passes every argument as a ctypes object built
    # once (c_void_p, c_uint, the parameter array), which ctypes hands over as is. With argtypes,
    # each call converted its 7 Python ints to c_uint again: about half the cost of the call.
    lib.cuLaunchKernel.restype = ctypes.c_int
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

    Everything that does not change between calls is prepared once here: the expected input
    signature, the launch argument lists (function, dims, a stream holder, the parameter array whose
    tensor slots get the call's data pointers), and which buffers a library step produces (those are
    not allocated). A call then costs one signature comparison, the allocations, the raw stream
    handle and the launches: on small problems the host side is most of the time a user sees.
    Not thread-safe: the parameter holders are shared by all calls.
    """

    def __init__(self, candidate, cubin: bytes, device="cuda"):
        self.candidate = candidate
        self.plan = candidate["plan"]
        self.device = torch.device(device)
        kernels = sorted({s["kernel"] for s in self.plan["steps"] if s["type"] == "kernel"})
        self.module = CompiledModule(cubin, kernels) if kernels else None
        self._lib = self.module._lib if self.module else None
        self.allocator = self.empty
        if self.device.index is not None:
            self._device_index = self.device.index
        else:  # the device CompiledModule loaded the cubin on, as get_device() reports it (-1: CPU)
            self._device_index = torch.cuda.current_device() if self.device.type == "cuda" else -1
        # Read once per call, and only where a kernel is launched: the raw handle of the caller's
        # current stream (an int, no torch.cuda.Stream object built).
        self._raw_stream = torch._C._cuda_getCurrentRawStream if kernels else None
        self._stream = ctypes.c_void_p(0)
        self._inputs = [(torch.Size(spec["shape"]), _DTYPES[spec["dtype"]], spec["name"]) for spec in self.plan["inputs"]]
        self._signature = [(shape, dtype, self._device_index, True) for shape, dtype, _ in self._inputs]
        # All buffers in one flat list per call: inputs, then outputs, then temps.
        n_in, n_out = len(self.plan["inputs"]), len(self.plan["outputs"])
        self._out_slice = slice(n_in, n_in + n_out)
        base = {"input": 0, "output": n_in, "temp": n_in + n_out}

        def flat(ref):
            kind, idx = ref.split(":")
            return base[kind] + int(idx)

        buffers = self.plan["outputs"] + self.plan["temps"]
        # A buffer whose first use is as a library step's result is that step's fresh tensor:
        # allocating (and, in validation, poisoning) it beforehand would be work thrown away.
        first_use = {}
        for step in self.plan["steps"]:
            for a in step["args"]:
                if "ref" in a:
                    first_use.setdefault(flat(a["ref"]), "read")
            if step["type"] == "library":
                first_use.setdefault(flat(step["out"]), "library")
        self._alloc = [(n_in + i, tuple(b["shape"]), _DTYPES[b["dtype"]]) for i, b in enumerate(buffers)
                       if first_use.get(n_in + i) != "library"]
        self._tail = (None,) * len(buffers)  # the outputs' and temps' places in a call's list
        self._shapes = [shape for shape, _, _ in self._inputs] + [torch.Size(b["shape"]) for b in buffers]
        self._launch = self._lib.cuLaunchKernel if self._lib else None
        self._steps = []
        for step in self.plan["steps"]:
            if step["type"] == "kernel":
                holders, slots = [], []  # slots: (holder, flat buffer index) for tensor arguments
                for a in step["args"]:
                    if "ref" in a:
                        h = ctypes.c_void_p(0)
                        slots.append((h, flat(a["ref"])))
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
                dims = [ctypes.c_uint(int(v)) for v in (g[0], g[1], g[2], b[0], b[1], b[2], shared)]
                # cuLaunchKernel(f, grid xyz, block xyz, sharedMemBytes, hStream, kernelParams, extra)
                args = [fn, *dims, self._stream, params, None]
                self._steps.append((True, step["kernel"], args, slots, holders))
            else:
                refs = [(flat(a["ref"]), a.get("view") == "t") if "ref" in a else None for a in step["args"]]
                consts = [None if "ref" in a else a["scalar"] for a in step["args"]]
                self._steps.append((False, step["op"], _resolve_op(step["op"]), refs, consts,
                                    step.get("kwargs", {}), flat(step["out"])))

    def empty(self, shape, dtype):
        """The default allocator: torch.empty on the candidate's device."""
        return torch.empty(shape, dtype=dtype, device=self.device)

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
            if t.get_device() != self._device_index:
                raise ValueError(f"input {i} ({name}) is on {t.device}, the candidate runs on {self.device}")

    def __call__(self, *inputs):
        # The fast case is one comparison against the signature prepared in __init__; anything
        # else (including a non-tensor, which has no .shape) goes through _check_inputs, which
        # raises with the reason.
        try:
            ok = [(t.shape, t.dtype, t.get_device(), t.is_contiguous()) for t in inputs] == self._signature
        except AttributeError:
            ok = False
        if not ok:
            self._check_inputs(inputs)
        bufs = [*inputs, *self._tail]
        alloc = self.allocator
        for i, shape, dtype in self._alloc:
            bufs[i] = alloc(shape, dtype)
        if self._raw_stream is not None:
            self._stream.value = self._raw_stream(self._device_index)
        for step in self._steps:
            if step[0]:
                _, name, args, slots, _holders = step
                for holder, i in slots:
                    holder.value = bufs[i].data_ptr()
                r = self._launch(*args)
                if r != 0:
                    _check(self._lib, r, f"cuLaunchKernel({name})")
            else:
                _, name, op, refs, consts, kwargs, out = step
                args = [const if ref is None else (bufs[ref[0]].t() if ref[1] else bufs[ref[0]])
                        for ref, const in zip(refs, consts)]
                result = op(*args, **kwargs)
                expected = self._shapes[out]
                if result.shape != expected:
                    raise ValueError(f"library step {name} gave shape {list(result.shape)}, "
                                     f"plan expects {list(expected)}")
                bufs[out] = result
        return tuple(bufs[self._out_slice])

