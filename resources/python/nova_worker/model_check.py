"""The whole model as the client will run it: an exported package's ModelNew against the client's
original Model (`nova check-package`).

Validation: for each trial a fresh seed draws new weights and inputs; the original and ModelNew get
the same weights (ModelNew loads the original's state_dict, as a client's checkpoint would); the
order is optimized, original, optimized; every output is judged by the group validation's tolerance
policy (tolerance by dtype against eager, or closer to the float64 result than eager), NaN/Inf must
match, and inputs and weights must be unchanged. The package's own counters say how many group calls
ran its kernels and how many fell back to the original PyTorch ops (the shape guard).

Benchmark: eager of the original, torch.compile of the original, ModelNew, and torch.compile of
ModelNew, interleaved call by call in this one process; cold (CUDA events, the L2 flushed before
each call, a GPU spin ahead of each call so launch gaps do not count) and wall (host time per call,
back to back). Raw samples are returned; core computes the ratios and their intervals. Energy per call
of each variant comes from NVML's total-energy counter over a loop of at least 0.3 s (as for the groups,
bench.py), or says why there is none.

GPU time split: where each call's GPU time goes, by fusion group, before (the client's Model) and after
(ModelNew), from torch.profiler (CUPTI activity records through Kineto) over warm calls of each, see
gpu_split().
"""

import importlib
import math
import statistics
import sys
import time

import torch

from . import candidates, schemas
from .bench import L2Flush, _energy, _event_times, _wall_times, _warm_up, cold_leads, summarize
from .env_record import Nvml, environment
from .protocol import WorkerFailure
from .validate import CLOSER_FLAG, _same, compare, judge_output, tolerance_for

VARIANTS = ("eager", "compile", "optimized", "optimized+compile")


def _outputs(out):
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


def import_package(name, site_dir=None):
    """The exported package, from `site_dir` (where core installed it) or the worker's environment."""
    if site_dir and site_dir not in sys.path:
        sys.path.insert(0, site_dir)
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise WorkerFailure("user_error", f"the package {name} cannot be imported: {exc}") from exc


def _counts(pkg):
    runtime = getattr(pkg, "_runtime", None)
    calls = getattr(runtime, "CALLS", None)
    return {k: dict(v) for k, v in calls.items()} if calls is not None else None


def _reset_counts(pkg):
    calls = getattr(getattr(pkg, "_runtime", None), "CALLS", None)
    for counts in (calls or {}).values():  # zeroed in place: each op's call holds its own dict
        counts["kernel"] = counts["fallback"] = 0


def validate_model(problem, pkg, trials, seed, match_eager, device, progress):
    """Trials of ModelNew against Model; returns the validation part of the result."""
    out = {"trials": [], "flags": [], "failures": [], "passed": True}
    _reset_counts(pkg)
    for t in range(trials):
        s = seed + t
        progress(f"whole-model trial {t + 1}/{trials} (seed {s})", 0.05 + 0.3 * t / max(1, trials))
        inst = problem.instantiate(s)
        original = inst.model
        optimized = pkg.ModelNew(*problem.module.get_init_inputs()).to(device).eval()
        optimized.load_state_dict(original.state_dict())
        before = [x.clone() for x in inst.tensors()]
        with torch.no_grad():
            a = tuple(o.clone() for o in _outputs(optimized(*inst.inputs)))
            ref = _outputs(original(*inst.inputs))
            b = _outputs(optimized(*inst.inputs))
        exact = tuple(r.cpu() for r in inst.upcast().reference())
        trial = {"seed": s, "ok": True, "problems": [], "outputs": []}
        if len(a) != len(ref):
            trial["problems"].append(f"ModelNew returned {len(a)} outputs, Model {len(ref)}")
        for i, (x, y, r, r64) in enumerate(zip(a, b, ref, exact)):
            tol = tolerance_for(r.dtype, False)
            vs_eager = compare(x, r, tol)
            ok, accepted, problem_text = judge_output(x, r, r64, tol, match_eager, vs_eager)
            trial["outputs"].append({"index": i, "shape": list(r.shape), "tolerance": tol, "accepted_as": accepted,
                                     "vs_eager": vs_eager, "vs_fp64": compare(x.cpu(), r64, tol),
                                     "eager_vs_fp64": compare(r.cpu(), r64, tol)})
            if not ok:
                trial["problems"].append(f"output {i}: {problem_text}")
            elif accepted == "closer_to_exact_than_eager" and CLOSER_FLAG not in out["flags"]:
                out["flags"].append(CLOSER_FLAG)
            if not _same(x, y):
                trial["problems"].append(f"output {i}: two calls of ModelNew on the same inputs disagree")
        for i, (now, was) in enumerate(zip(inst.tensors(), before)):
            if not _same(now, was):
                trial["problems"].append(f"input or weight {i} was modified by a call")
        trial["ok"] = not trial["problems"]
        out["trials"].append(trial)
        for p in trial["problems"]:
            if p not in out["failures"]:
                out["failures"].append(p)
    out["passed"] = not out["failures"]
    out["calls"] = _counts(pkg)
    return out


def wall_round_calls(slowest_us):
    """Calls in one wall round: at least 10 and about 10 ms of the slowest variant. The first call of a
    round waits on the host (its launches reach an idle GPU) and the round ends on a sync, so with a few
    calls a round (3 for a model of 1.4 ms, as before session 33) a third of each sample was that ramp
    rather than calls back to back, and the variant with the longer host path lost by it."""
    return max(10, min(200, int(10000 / max(slowest_us, 1.0))))


@torch.no_grad()
def bench_model(problem, pkg, seed, modes, l2_flush, min_calls, min_ms, device, progress):
    """Raw cold/wall samples of the four variants, interleaved; returns the benchmark part. Autograd is
    off for every variant (inference), as the group benchmarks (bench.py) and the package's own
    benchmark.py time them: with it on, each call of a package op would also pay its autograd layer,
    and eager its graph bookkeeping, which an inference client does not."""
    torch.manual_seed(seed)
    inst = problem.instantiate(seed)
    original = inst.model
    optimized = pkg.ModelNew(*problem.module.get_init_inputs()).to(device).eval()
    optimized.load_state_dict(original.state_dict())
    inputs = inst.inputs
    errors = {}
    variants = {"eager": lambda: original(*inputs), "optimized": lambda: optimized(*inputs)}
    progress("compiling torch.compile of Model and of ModelNew", 0.4)
    torch._dynamo.reset()
    for name, module in (("compile", original), ("optimized+compile", optimized)):
        try:
            fn = torch.compile(module)
            fn(*inputs)
            variants[name] = (lambda f: lambda: f(*inputs))(fn)
        except Exception as exc:  # reported, the other variants still timed
            errors[name] = f"torch.compile failed: {type(exc).__name__}: {exc}"
    order = [n for n in VARIANTS if n in variants]
    variants = {n: variants[n] for n in order}
    progress("warming up", 0.5)
    for fn in variants.values():
        _warm_up(fn)
    est = _event_times(variants, 5)
    slowest_us = max(statistics.median(v) for v in est.values())
    enqueue_us, _, lead_us, lead_cycles = cold_leads(variants)
    calls = max(min_calls, min(2000, int(math.ceil(min_ms * 1e3 / max(slowest_us, 1.0)))))
    measurements = []

    def record(mode, metric, samples):
        for n, s in samples.items():
            measurements.append({"variant": n, "mode": mode, "metric": metric, "samples": s, **summarize(s)})

    flush = L2Flush(device, l2_flush)
    if "cold" in modes:
        progress("timing the whole model (cold)", 0.6)
        record("cold", "gpu_us", _event_times(variants, calls, flush=flush, lead_cycles=lead_cycles))
    flush.release()
    per_round = wall_round_calls(slowest_us)
    if "wall" in modes:
        progress("timing the whole model (wall)", 0.85)
        record("wall", "wall_us", _wall_times(variants, 30, per_round))
    progress("energy per call", 0.93)
    nvml = Nvml(torch.cuda.current_device())
    energy = {n: _energy(nvml, fn) for n, fn in variants.items()}
    return {"measurements": measurements, "errors": errors, "energy": energy,
            "method": {"variants": order, "modes": modes, "interleaved": True, "calls": calls,
                       "wall": f"30 rounds of {per_round} back-to-back calls", "l2_flush": l2_flush,
                       "l2_flush_bytes": flush.write_bytes, "l2_flush_read_bytes": flush.read_bytes,
                       "lead_us": lead_us, "host_enqueue_us": enqueue_us, "seed": seed, "tf32": False,
                       "autograd": "off (torch.no_grad) for every variant: inference",
                       "timer": "CUDA events on the current stream",
                       "compile": "torch.compile default mode after torch._dynamo.reset()",
                       "energy": "NVML total energy counter over a loop of at least 0.3 s per variant",
                       "warmup": "at least 3 calls and 25 ms per variant"}}


SPLIT_ITERS = 20
_open_ranges = []


def _group_enter(name):
    """Opens a profiler range named after a fusion group (a call the profiled graph makes before
    each of the group's nodes)."""
    _open_ranges.append(torch.profiler.record_function(name).__enter__())


def _group_exit():
    _open_ranges.pop().__exit__(None, None, None)


def _group_range(group_id):
    return f"nova_group_{group_id}"


def kernel_time_by_owner(events, owner):
    """Kernel time (us, summed) by owner: for each profiler event that launched kernels, `owner` is
    asked for the event's name, then its parent's, up the chain of CPU events, and the first non-None
    answer owns the kernels (None: no one in the chain). Returns ({owner: us}, {owner: kernels})."""
    times, counts = {}, {}
    for e in events:
        kernels = getattr(e, "kernels", None) or []
        if not kernels:
            continue
        key, p = None, e
        while p is not None and key is None:
            key = owner(p.name)
            p = p.cpu_parent
        times[key] = times.get(key, 0.0) + sum(k.duration for k in kernels)
        counts[key] = counts.get(key, 0) + len(kernels)
    return times, counts


def _profiled_events(run, iters):
    """torch.profiler's events (CPU ops with their kernels) of `iters` warm calls of run()."""
    from torch.profiler import ProfilerActivity, profile
    run()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(iters):
            run()
        torch.cuda.synchronize()
    return prof.events()


def _split_side(times, counts, iters, label):
    """One side of the split: per group and outside, GPU us per call; the keys of `times` are group
    ids or None (outside every group)."""
    groups = {str(k): times[k] / iters for k in sorted(k for k in times if k is not None)}
    return {"label": label, "total_us": sum(times.values()) / iters, "groups": groups,
            "outside_us": times.get(None, 0.0) / iters, "kernels_per_call": sum(counts.values()) / iters}


def grouped_capture(model, inputs, group_of_node):
    """The model captured as intake captures it (torch.export; node ids as intake numbers them), each
    node that belongs to a group (group_of_node: {node id: group id}) run inside a profiler range
    named after its group. Returns (graph module, its tensor inputs, {range name: group id})."""
    from .profile import export_graph
    gm, nodes, tensors = export_graph(model, inputs)
    names = {n["name"]: group_of_node[n["id"]] for n in nodes if n["id"] in group_of_node}
    graph = gm.graph
    for n in list(graph.nodes):
        if n.op == "call_function" and n.name in names:
            with graph.inserting_before(n):
                graph.call_function(_group_enter, (_group_range(names[n.name]),))
            with graph.inserting_after(n):
                graph.call_function(_group_exit, ())
    gm.recompile()
    return gm, tensors, {_group_range(g): g for g in set(names.values())}


@torch.no_grad()
def gpu_split(problem, pkg, seed, device, iters):
    """Where each call's GPU time goes, by fusion group (the manifest's groups and node ids, which are
    intake's), before and after, from torch.profiler over `iters` warm calls (autograd off).
    Before: the client's Model captured as intake captured it (torch.export, the same numbering), each
    node of a group run inside a profiler range naming the group; its kernels are the group's. The
    uninstrumented Model is profiled too: its total says whether the ranges changed what runs. After:
    ModelNew; a shipped group's kernels are those its op (or the op's autograd-free twin) launched;
    everything else (the groups left to PyTorch and the nodes outside every group) runs the client's
    original ATen ops and is one share, "not shipped". GPU time here is the kernels' own durations
    (warm, back to back): the split's shares, not the benchmark's cold figures."""
    inst = problem.instantiate(seed)
    original, inputs = inst.model, inst.inputs
    optimized = pkg.ModelNew(*problem.module.get_init_inputs()).to(device).eval()
    optimized.load_state_dict(original.state_dict())
    manifest = pkg.MANIFEST
    group_of_node = {n: g["id"] for g in manifest.get("groups", []) for n in g.get("nodes", [])}

    gm, tensors, ranges = grouped_capture(original, inputs, group_of_node)
    before_t, before_c = kernel_time_by_owner(_profiled_events(lambda: gm(*tensors), iters), ranges.get)
    plain_t, plain_c = kernel_time_by_owner(_profiled_events(lambda: original(*inputs), iters), lambda _n: None)

    ns = manifest["package"]
    ops = {}
    for g in manifest.get("groups", []):
        if g.get("ships"):
            ops[f"{ns}::{g['op']}"] = ops[f"{ns}::{g['op']}_infer"] = g["id"]
    after_t, after_c = kernel_time_by_owner(_profiled_events(lambda: optimized(*inputs), iters), ops.get)
    shipped = sorted(set(ops.values()))
    return {
        "iters": iters, "shipped_groups": shipped, "groups_instrumented": sorted(ranges.values()),
        "before": _split_side(before_t, before_c, iters, "the client's Model (captured, each group's nodes in a range)"),
        "before_plain": _split_side(plain_t, plain_c, iters, "the client's Model as it is"),
        "after": _split_side(after_t, after_c, iters, "ModelNew (each shipped group's op)"),
        "method": (f"torch.profiler (CUPTI through Kineto), {iters} warm calls per side after one more, autograd off, "
                   "kernel durations summed; before: the Model as intake captured it, each group's nodes in a "
                   "profiler range; after: ModelNew, each shipped group's kernels those its op launched"),
    }


def load_client_model(args, device):
    """The client's whole model from the request (args["model_source"], args["model_name"], as core
    sends them), as the reference: its Model, get_inputs and get_init_inputs."""
    from .reference import Problem
    path, name = candidates.request_file(args, "model", candidates.work_dir(args), ".py")
    problem = Problem(path, device, name=name)
    if problem.form != "model":
        raise WorkerFailure("user_error", f"{problem.name}: a whole-model check needs the model file "
                                          "(Model, get_inputs, get_init_inputs)")
    return problem


def model_check(args, progress) -> schemas.ModelCheckResult:
    if not torch.cuda.is_available():
        raise RuntimeError("no CUDA device is available to this worker")
    started = time.monotonic()
    device = torch.device("cuda")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    progress("importing the package", 0.0)
    pkg = import_package(args["package"], args.get("site_dir"))
    if not getattr(pkg, "COMPILED", False) and any(g.get("ships") for g in pkg.MANIFEST.get("groups", [])):
        raise WorkerFailure("user_error", f"the package {args['package']} has kernels but their library did not "
                                          f"load: {getattr(pkg, 'LOAD_ERROR', '')}")
    progress("loading the client's model", 0.02)
    problem = load_client_model(args, device)
    seed = int(args.get("seed", 1234))
    validation = validate_model(problem, pkg, int(args.get("trials", 3)), seed,
                                bool(args.get("match_eager", False)), device, progress)
    result = {"package": args["package"], "package_version": getattr(pkg, "__version__", ""),
              "manifest": pkg.MANIFEST, "validation": validation, "benchmark": None}
    if validation["passed"]:
        result["benchmark"] = bench_model(problem, pkg, seed, args.get("modes") or ["cold", "wall"],
                                          args.get("l2_flush", "clean"), int(args.get("min_calls", 50)),
                                          float(args.get("min_ms", 100.0)), device, progress)
        progress("profiling the GPU time split by group", 0.96)
        try:
            result["gpu_split"] = gpu_split(problem, pkg, seed, device, int(args.get("split_iters", SPLIT_ITERS)))
        except Exception as exc:  # the check's figures stand without the split; it says why there is none
            result["gpu_split"] = {"error": f"{type(exc).__name__}: {exc}"}
    result["environment"] = environment()
    result["elapsed_s"] = time.monotonic() - started
    progress("checked", 1.0)
    return result
