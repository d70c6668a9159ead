"""Loads a candidate into something callable on torch tensors.

Fast path: the candidate JSON (core/gen/candidate.h) plus the cubin NVRTC produced, run by
harness.CandidateRunner. Full path: a complete torch extension source (host code and kernels)
built with nvcc and ninja through torch.utils.cpp_extension.load into a build folder; its
`forward` is the callable. Both report how long loading or building took.
"""

import hashlib
import json
import os
import time

import torch

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


def build_extension(args):
    """Builds (or finds already built) a full-path extension source with nvcc and ninja, in a
    folder named after the source's hash, and imports it. Needs no GPU."""
    import sys
    from torch.utils import cpp_extension
    # ninja comes with the interpreter's environment (pip's ninja), not necessarily on PATH.
    os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")
    # The target architecture: the GPU's, as core found it ("sm_90" -> "9.0"); torch would ask the
    # device, which a CPU-lane build may not see.
    if args.get("arch") and not os.environ.get("TORCH_CUDA_ARCH_LIST"):
        digits = args["arch"].replace("sm_", "")
        os.environ["TORCH_CUDA_ARCH_LIST"] = f"{digits[:-1]}.{digits[-1]}"
    src = os.path.abspath(args["extension"])
    with open(src, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:16]
    name = "nova_ext_" + digest
    build_dir = os.path.join(args.get("build_dir") or os.path.expanduser("~/.cache/nova/ext"), name)
    os.makedirs(build_dir, exist_ok=True)
    return cpp_extension.load(name=name, sources=[src], build_directory=build_dir,
                              extra_cuda_cflags=["-O3"], verbose=False)


def load(args, device="cuda"):
    """args: {"candidate": JSON path, "cubin": path} or {"extension": .cu path, "build_dir": path}."""
    started = time.monotonic()
    if args.get("extension"):
        module = build_extension(args)
        return LoadedCandidate(module.forward, "full", time.monotonic() - started)
    from .harness import CandidateRunner
    with open(args["candidate"]) as f:
        candidate = json.load(f)
    with open(args["cubin"], "rb") as f:
        cubin = f.read()
    runner = CandidateRunner(candidate, cubin, device)
    return LoadedCandidate(runner, "fast", time.monotonic() - started, runner=runner)


def load_problem(args, device="cuda"):
    """The reference: args["reference"] (a group's functional source or a functional-form model
    file), or args["model"] + args["group"] through intake where the worker has it."""
    from .reference import Problem
    if args.get("reference"):
        return Problem(args["reference"], device)
    if args.get("model") is not None and args.get("group") is not None:
        from .intake import run_intake  # the intake stage of the worker (merged separately)
        graph = run_intake({"model": args["model"]}, lambda *a, **k: None)
        groups = {g["id"]: g for g in graph["groups"]}
        group = groups.get(int(args["group"]))
        if group is None:
            raise ValueError(f"{args['model']} has no fusion group {args['group']}")
        path = os.path.join(args.get("work_dir") or "/tmp", f"group_{group['id']}.py")
        with open(path, "w") as f:
            f.write(group["functional_source"])
        return Problem(path, device)
    raise ValueError("no reference: give 'reference' (a .py file) or 'model' and 'group'")


def json_safe(value):
    """NaN and infinities as strings: JSON has no such numbers and core's parser refuses them."""
    import math
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value


class Phases:
    """Host seconds per named phase, each from the previous mark (or the start) to its own: a
    result's "phase_s", for seeing where a run's time goes. A repeated name adds up."""

    def __init__(self):
        self.seconds = {}
        self._last = time.monotonic()

    def mark(self, name):
        now = time.monotonic()
        self.seconds[name] = self.seconds.get(name, 0.0) + (now - self._last)
        self._last = now


def run_standalone(entry, argv, process=None):
    """`python -m nova_worker.validate ARGS.json`: progress lines, then the result, as JSON on stdout.
    A dict result gets "process_s": `process` (the standby's timings; "received": time.monotonic()
    when its command came) plus "start" (command received to the entry's call), "run" (the entry's
    own time) and the wall-clock moments "received_at" and "finished_at" (time.time())."""
    import sys
    import traceback
    process = dict(process or {})
    received = process.pop("received", time.monotonic())
    process.setdefault("received_at", time.time() - (time.monotonic() - received))
    if len(argv) != 2:
        print(f"usage: python -m nova_worker.{entry.__name__} ARGS.json", file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        args = json.load(f)

    def progress(message, fraction=None):
        print(json.dumps({"type": "progress", "message": message, "fraction": fraction}), flush=True)

    try:
        entered = time.monotonic()
        process["start"] = entered - received
        result = entry(args, progress)
        if isinstance(result, dict):
            result["process_s"] = dict(process, run=time.monotonic() - entered, finished_at=time.time())
    except Exception as exc:
        traceback.print_exc()
        print(json.dumps({"type": "error", "error": {"kind": "internal" if not isinstance(exc, ValueError)
                                                      else "bad_request", "message": f"{type(exc).__name__}: {exc}"}}),
              flush=True)
        return 1
    print(json.dumps({"type": "result", "result": json_safe(result)}, default=str, allow_nan=False), flush=True)
    # The answer is out and the GPU work behind it synchronized: leave without the interpreter's
    # teardown of torch and CUDA, which took about 2 s of each submission on the H200 box (the
    # turnaround test's worker_exit_s). One process per command, so nothing else needs it.
    sys.stderr.flush()
    os._exit(0)
