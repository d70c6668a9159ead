"""The `profile` command: runs a model under the CUPTI tracer (libnova_tracer.so, injected by the
driver through CUDA_INJECTION64_PATH) with each graph node's kernels tagged by the node's id.

The model is captured with torch.export exactly as intake numbers it (call_function nodes of the
exported program, operator.getitem excluded, in graph order, from 0), and the exported module is
instrumented in its generated code: every node is bracketed by nova_tracer_push_node(id) /
nova_tracer_pop_node() (code generation rather than a torch.fx.Interpreter keeps the per-node cost
at two ctypes calls). Two ways to use it, chosen by "attribution":
- "sequence" (the default): one calibration call of the instrumented export teaches the tracer which
  node launches each kernel, in order, by name; the traced iterations then run the model itself,
  uninstrumented, and the tracer matches each launch to that sequence. No per-node work while
  tracing: the overhead is CUPTI's alone.
- "callback" / "external" / "both": the traced iterations run the instrumented export, and each
  launch takes the node on top of the push/pop stack. Needed for NVTX ranges per node (--nvtx) and
  for CUDA-graph replay (captured with the pushes inside).

The `profile` command, run(args, progress): args {"model": path, "iters": 20, "warmup": 5,
"use_cuda_graph": false, "nvtx": true, "attribution": "sequence", "mode": "profile" |
"overhead_cupti" | "overhead_kineto", "rounds": 5} -> schemas.ProfileResult or
schemas.OverheadResult. Core starts a one-shot worker for it with the tracer injected
(core/trace/profile_runner.cpp). The model stays a path: see docs/WORKER_PROTOCOL.md."""

import ctypes
import operator
import os
import time

from . import schemas
from .protocol import BAD_REQUEST, WorkerFailure, require

_lib = None


def _tracer():
    """The tracer library the driver injected (dlopen of the same path returns the same handle)."""
    global _lib
    if _lib is None:
        path = os.environ.get("NOVA_TRACER_LIB", "")
        if not path:
            raise RuntimeError("NOVA_TRACER_LIB is not set: the worker was not started for profiling")
        lib = ctypes.CDLL(path)
        lib.nova_tracer_push_node.argtypes = [ctypes.c_uint64]
        lib.nova_tracer_push_node.restype = None
        lib.nova_tracer_pop_node.argtypes = []
        lib.nova_tracer_pop_node.restype = None
        lib.nova_tracer_iteration.argtypes = [ctypes.c_uint64]
        lib.nova_tracer_iteration.restype = None
        lib.nova_tracer_dropped.restype = ctypes.c_uint64
        lib.nova_tracer_calibrate.argtypes = [ctypes.c_int]
        lib.nova_tracer_calibrate.restype = None
        lib.nova_tracer_sequence_stats.argtypes = [ctypes.POINTER(ctypes.c_uint64)]
        lib.nova_tracer_sequence_stats.restype = None
        for name in ("nova_tracer_start", "nova_tracer_stop", "nova_tracer_flush", "nova_tracer_finish"):
            getattr(lib, name).restype = None
        _lib = lib
    return _lib


# Targets of the instrumentation nodes: module-level functions, so FX can name them in code.
_push_fn = None
_pop_fn = None


def _push(node_id):
    _push_fn(node_id)


def _pop():
    _pop_fn()


def _nvtx_push(node_id, name):
    import torch
    torch.cuda.nvtx.range_push(name)
    _push_fn(node_id)


def _nvtx_pop():
    import torch
    _pop_fn()
    torch.cuda.nvtx.range_pop()


def load_model(model_path):
    """(model, inputs) on the GPU, built as intake builds them: Model(*get_init_inputs()), get_inputs()."""
    import torch

    from .loader import load

    _module, model, inputs, _form = load(model_path, lambda *_: None)
    model = model.cuda().eval()
    inputs = [v.cuda() if isinstance(v, torch.Tensor) else v for v in inputs]
    return model, inputs


def export_graph(model, inputs):
    """(graph module, node list, tensor inputs): the exported program's module and its
    call_function nodes with intake's ids (intake captures through the same export_program)."""
    from .capture import export_program
    from .loader import forward_param_names

    ep, tensors = export_program(model, inputs, forward_param_names(model))
    nodes = []
    for n in ep.graph.nodes:
        if n.op == "call_function" and n.target is not operator.getitem:
            nodes.append({"id": len(nodes), "name": n.name, "target": str(n.target),
                          "op": str(n.target).split(".")[-2] if str(n.target).count(".") >= 2 else str(n.target)})
    return ep.module(), nodes, tensors


def instrument(gm, nodes, nvtx):
    """Brackets each numbered node of gm with push/pop calls in its generated code."""
    ids = {n["name"]: n["id"] for n in nodes}
    graph = gm.graph
    found = 0
    for n in list(graph.nodes):
        if n.op != "call_function" or n.name not in ids:
            continue
        found += 1
        with graph.inserting_before(n):
            if nvtx:
                graph.call_function(_nvtx_push, (ids[n.name], f"{n.name} [{ids[n.name]}]"))
            else:
                graph.call_function(_push, (ids[n.name],))
        with graph.inserting_after(n):
            graph.call_function(_nvtx_pop if nvtx else _pop, ())
    gm.recompile()
    return found


def calibrate(lib, instrumented_call):
    """One call of the instrumented export with the tracer learning its launch sequence; returns
    the sequence's length."""
    import torch
    instrumented_call()  # its own first call may launch one-time work
    torch.cuda.synchronize()
    lib.nova_tracer_calibrate(1)
    instrumented_call()
    torch.cuda.synchronize()
    lib.nova_tracer_calibrate(0)
    return sequence_stats(lib)["length"]


def sequence_stats(lib):
    out = (ctypes.c_uint64 * 4)()
    lib.nova_tracer_sequence_stats(out)
    return {"length": out[0], "matched": out[1], "resynced": out[2], "unmatched": out[3]}


def profile(args, progress) -> schemas.ProfileResult:
    global _push_fn, _pop_fn
    import torch

    model_path = os.path.abspath(args["model"])
    iters = int(args.get("iters", 20))
    warmup = int(args.get("warmup", 5))
    nvtx = bool(args.get("nvtx", True))
    use_graph = bool(args.get("use_cuda_graph", False))
    sequence = args.get("attribution", "callback") == "sequence" and not nvtx and not use_graph
    if not torch.cuda.is_available():
        raise RuntimeError("no CUDA device: profiling needs a GPU")
    lib = _tracer()
    _push_fn, _pop_fn = lib.nova_tracer_push_node, lib.nova_tracer_pop_node
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False

    progress("building the model on the GPU", 0.1)
    model, inputs = load_model(model_path)
    progress("capturing the graph with torch.export", 0.2)
    gm, nodes, tensors = export_graph(model, inputs)
    instrumented = instrument(gm, nodes, nvtx)

    run = lambda: gm(*tensors)
    graph = None
    calibrated = None
    with torch.no_grad():
        if sequence:
            progress("calibrating: which node launches each kernel", 0.3)
            calibrated = calibrate(lib, run)
            run = lambda: model(*inputs)
        progress(f"warming up ({warmup} iterations)", 0.4)
        for _ in range(warmup):
            run()
        if use_graph:
            # Captured with the node pushes inside: replays carry the graph launch's correlation
            # id, so per-node attribution of replayed kernels is not available (reported as such).
            stream = torch.cuda.Stream()
            stream.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(stream):
                run()
            torch.cuda.current_stream().wait_stream(stream)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                run()
            run = graph.replay
        torch.cuda.synchronize()

        progress(f"tracing {iters} iterations", 0.6)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        lib.nova_tracer_start()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        start.record()
        for i in range(iters):
            lib.nova_tracer_iteration(i)
            run()
        end.record()
        torch.cuda.synchronize()
        wall = time.perf_counter() - t0
        lib.nova_tracer_stop()
        lib.nova_tracer_flush()
        dropped = int(lib.nova_tracer_dropped())
        lib.nova_tracer_finish()  # the file is complete now, whatever happens at interpreter exit
    return {
        "nodes": nodes, "instrumented": instrumented, "iters": iters, "warmup": warmup,
        "nvtx": nvtx, "use_cuda_graph": use_graph,
        "attribution_route": "sequence" if sequence else "markers",
        "sequence": sequence_stats(lib) if sequence else None, "calibrated_launches": calibrated,
        "event_ms": start.elapsed_time(end), "wall_ms": wall * 1e3,
        "dropped": dropped, "tracer_active": bool(lib.nova_tracer_active()),
        "device": torch.cuda.get_device_name(), "torch_version": torch.__version__,
    }


def _time_iters(fn, iters):
    import torch
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(iters):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / iters * 1e6


def _time_iters_marked(lib, fn, iters):
    """_time_iters with an iteration record before each call, as profile() traces."""
    import torch
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for i in range(iters):
        lib.nova_tracer_iteration(i)
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / iters * 1e6


def overhead(args, progress) -> schemas.OverheadResult:
    """Wall time per iteration, untraced against traced, interleaved in rounds in this process.
    overhead_cupti: the eager model with the tracer stopped, against what `profile` traces with
    the same attribution: the eager model itself after calibration ("sequence"), or the
    instrumented export (markers); the instrumented export is also timed with the tracer off
    (instrumented_us) and on (markers_us), for comparison. overhead_kineto: the eager model against it under torch.profiler (run in
    a process without the injected tracer: CUPTI takes one subscriber)."""
    global _push_fn, _pop_fn
    import torch

    mode = args.get("mode")
    iters = int(args.get("iters", 200))
    rounds = int(args.get("rounds", 5))
    model, inputs = load_model(os.path.abspath(args["model"]))
    eager = lambda: model(*inputs)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    samples = {"untraced_us": [], "traced_us": []}
    with torch.no_grad():
        if mode == "overhead_cupti":
            lib = _tracer()
            _push_fn, _pop_fn = lib.nova_tracer_push_node, lib.nova_tracer_pop_node
            gm, nodes, tensors = export_graph(model, inputs)
            instrument(gm, nodes, bool(args.get("nvtx", False)))
            instrumented = lambda: gm(*tensors)
            sequence = args.get("attribution", "callback") == "sequence"
            if sequence:
                samples["calibrated_launches"] = calibrate(lib, instrumented)
            # What is traced: the model itself (sequence attribution) or the instrumented export.
            traced = eager if sequence else instrumented
            _time_iters(eager, 20)
            _time_iters(instrumented, 20)
            samples["instrumented_us"] = []  # the push/pop calls alone, tracer not recording
            samples["markers_us"] = []  # the instrumented export with the tracer recording
            for r in range(rounds):
                progress(f"round {r + 1}/{rounds}", r / rounds)
                samples["untraced_us"].append(_time_iters(eager, iters))
                samples["instrumented_us"].append(_time_iters(instrumented, iters))
                lib.nova_tracer_start()
                for i in range(3):  # the cursor restarts with each iteration record
                    lib.nova_tracer_iteration(i)
                    traced()
                samples["traced_us"].append(_time_iters_marked(lib, traced, iters))
                samples["markers_us"].append(_time_iters(instrumented, iters))
                lib.nova_tracer_stop()
            lib.nova_tracer_flush()
            samples["dropped"] = int(lib.nova_tracer_dropped())
            samples["attribution_route"] = "sequence" if sequence else "markers"
            if sequence:
                samples["sequence"] = sequence_stats(lib)
        elif mode == "overhead_kineto":
            from torch.profiler import ProfilerActivity, profile as kineto
            _time_iters(eager, 20)
            for r in range(rounds):
                progress(f"round {r + 1}/{rounds}", r / rounds)
                samples["untraced_us"].append(_time_iters(eager, iters))
                with kineto(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]):
                    samples["traced_us"].append(_time_iters(eager, iters))
        else:
            raise ValueError(f"unknown overhead mode {mode!r}")
    med = lambda xs: sorted(xs)[len(xs) // 2]
    samples.update({"mode": mode, "iters": iters, "rounds": rounds,
                    "untraced_median_us": med(samples["untraced_us"]),
                    "traced_median_us": med(samples["traced_us"])})
    samples["ratio"] = samples["traced_median_us"] / samples["untraced_median_us"]
    return samples


PROFILE_MODES = ("profile", "overhead_cupti", "overhead_kineto")


def run(args, progress):
    """The command's entry: a profile, or one of the overhead measurements."""
    mode = args.get("mode", "profile")
    if mode not in PROFILE_MODES:
        raise WorkerFailure(BAD_REQUEST, f"unknown profile mode {mode!r} ({', '.join(PROFILE_MODES)})")
    require(args, "model", str)
    return profile(args, progress) if mode == "profile" else overhead(args, progress)
