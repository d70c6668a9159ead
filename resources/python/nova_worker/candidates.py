"""Loads a candidate into something callable on torch tensors.

Fast path: the candidate JSON (core/gen/candidate.h) plus the cubin NVRTC produced, run by
harness.CandidateRunner. Full path: a complete torch extension source (host code and kernels)
built with nvcc and ninja through torch.utils.cpp_extension.load into a build folder; its
`forward` is the callable. Both report how long loading or building took.
"""

import base64
import binascii
import hashlib
import os
import time

import torch

from .protocol import BAD_REQUEST, WorkerFailure, require

POISON_BYTE = 0xFF  # 0xFF.. is NaN in float32, float16 and bfloat16


def poison(t):
    """Fills a tensor's bytes with the poison pattern (NaN for floating types)."""
    if t.numel():
        t.reshape(-1).view(torch.uint8).fill_(POISON_BYTE)
    return t


def poisoning_allocator(device):
    def alloc(shape, dtype):
        return poison(torch.empty(shape, dtype=dtype, device=device))
    return alloc


def poison_free_pool(byte_sizes, device, copies=8):
    """Takes `copies` blocks of each size from the caching allocator, poisons and frees them, so a
    candidate that returns torch::empty (or reads a freed buffer) sees NaN, not a stale answer."""
    held = []
    for n in byte_sizes:
        for _ in range(copies):
            held.append(poison(torch.empty(int(n), dtype=torch.uint8, device=device)))
    del held


class LoadedCandidate:
    def __init__(self, fn, path_kind, load_s, runner=None, build_log=""):
        self.fn = fn
        self.path_kind = path_kind  # "fast" or "full"
        self.load_s = load_s
        self.runner = runner
        self.build_log = build_log

    def set_poisoning(self, on, device):
        if self.runner is not None:
            self.runner.allocator = poisoning_allocator(device) if on else self.runner.empty


def request_file(args, key, work_dir, suffix):
    """The file a request's source argument stands for, on this host: args[key + "_source"] (the text,
    as core sends it) written into `work_dir` under the base name of args[key + "_name"], or, from
    callers that still send one, a path args[key]. Returns (path, the name to report it by)."""
    text = args.get(key + "_source")
    if text is not None:
        if not isinstance(text, str):
            raise WorkerFailure(BAD_REQUEST, f"the argument '{key}_source' must be text")
        name = args.get(key + "_name") or f"{key}{suffix}"
        base = os.path.basename(name) or f"{key}{suffix}"
        digest = hashlib.sha256(text.encode()).hexdigest()[:12]
        folder = os.path.join(work_dir, f"{key}-{digest}")
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, base)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path, name
    path = args.get(key)
    if not path:
        raise WorkerFailure(BAD_REQUEST, f"the request lacks the argument '{key}_source'")
    if not os.path.isfile(path):
        raise WorkerFailure(BAD_REQUEST, f"{key} file not found on the worker's host: {path}")
    return os.path.abspath(path), path


def work_dir(args):
    """The folder core gave for this request's files (a fresh temporary one if none)."""
    folder = args.get("work_dir")
    if not folder:
        import tempfile
        folder = tempfile.mkdtemp(prefix="nova-worker-")
    os.makedirs(folder, exist_ok=True)
    return folder


def build_extension(args):
    """Builds (or finds already built) a full-path extension source with nvcc and ninja, in a
    folder named after extension_build_key() (the source, flags, architectures, torch and CUDA), so
    another process finds the build and only loads it. Needs no GPU."""
    import sys
    from torch.utils import cpp_extension
    # ninja comes with the interpreter's environment (pip's ninja), not necessarily on PATH.
    os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")
    # The target architecture: the GPU's, as core found it ("sm_90" -> "9.0"); torch would ask the
    # device, which a CPU-lane build may not see.
    if args.get("arch") and not os.environ.get("TORCH_CUDA_ARCH_LIST"):
        digits = args["arch"].replace("sm_", "")
        os.environ["TORCH_CUDA_ARCH_LIST"] = f"{digits[:-1]}.{digits[-1]}"
    build_root = args.get("build_dir") or os.path.expanduser("~/.cache/nova/ext")
    src, _ = request_file(args, "extension", build_root, ".cu")
    with open(src, "rb") as f:
        source = f.read()
    import torch
    name = "nova_ext_" + extension_build_key(source, EXTENSION_CUDA_FLAGS, os.environ.get("TORCH_CUDA_ARCH_LIST", ""),
                                             torch.__version__, str(torch.version.cuda))
    build_dir = os.path.join(build_root, name)
    os.makedirs(build_dir, mode=0o700, exist_ok=True)
    return cpp_extension.load(name=name, sources=[src], build_directory=build_dir,
                              extra_cuda_cflags=list(EXTENSION_CUDA_FLAGS), verbose=False)


EXTENSION_CUDA_FLAGS = ("-O3",)


def extension_build_key(source: bytes, flags, arch_list: str, torch_version: str, cuda_version: str) -> str:
    """The name of a full-path build: 16 hex digits of a hash over everything that changes the built
    module (the source, the nvcc flags, the architectures, the torch and CUDA versions)."""
    h = hashlib.sha256(source)
    for part in (" ".join(flags), arch_list, torch_version, cuda_version):
        h.update(b"\0" + part.encode())
    return h.hexdigest()[:16]


def decode_cubin(args):
    """The cubin core sent, base64 in args["cubin_b64"]."""
    text = require(args, "cubin_b64", str)
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise WorkerFailure(BAD_REQUEST, f"the argument 'cubin_b64' is not base64: {exc}") from None


def load(args, device="cuda"):
    """args: {"candidate": the candidate JSON (an object), "cubin_b64": the cubin, base64} (fast
    path) or {"extension_source": .cu text, "extension_name", "build_dir": path} (full path)."""
    started = time.monotonic()
    if args.get("extension_source") is not None or args.get("extension"):
        module = build_extension(args)
        return LoadedCandidate(module.forward, "full", time.monotonic() - started)
    from .harness import CandidateRunner
    candidate = require(args, "candidate", dict)
    runner = CandidateRunner(candidate, decode_cubin(args), device)
    return LoadedCandidate(runner, "fast", time.monotonic() - started, runner=runner)


def load_problem(args, device="cuda"):
    """The reference: args["reference_source"] (a group's functional source or a functional-form
    model file, as text), or args["model_source"] + args["group"] through intake."""
    from .reference import Problem
    folder = work_dir(args)
    if args.get("reference_source") is not None or args.get("reference"):
        path, name = request_file(args, "reference", folder, ".py")
        return Problem(path, device, name=name)
    if (args.get("model_source") is not None or args.get("model")) and args.get("group") is not None:
        from .intake import run_intake
        path, name = request_file(args, "model", folder, ".py")
        graph = run_intake({"model": path}, lambda *a, **k: None)
        groups = {g["id"]: g for g in graph["groups"]}
        group = groups.get(int(args["group"]))
        if group is None:
            raise WorkerFailure(BAD_REQUEST, f"{name} has no fusion group {args['group']} "
                                             f"(it has {len(groups)})")
        path = os.path.join(folder, f"group_{group['id']}.py")
        with open(path, "w") as f:
            f.write(group["functional_source"])
        return Problem(path, device, name=f"{name}, fusion group {group['id']}")
    raise WorkerFailure(BAD_REQUEST, "no reference: give 'reference_source' (module_fn or a functional "
                                     "model) or 'model_source' and 'group'")
