"""Validation of a candidate against its PyTorch reference (docs/BENCHMARKING.md, Correctness).

Per trial, on fresh inputs (and weights) from a recorded seed: the candidate runs, then the
reference, then the candidate again. Memory the candidate may be handed is poisoned while the
reference outputs are kept alive, inputs are checked unchanged after every candidate run, each
output is snapshotted on the candidate's stream the moment the call returns (work left running on
another stream changes it afterwards), both candidate runs must agree, and errors are measured
against eager and against a float64 reference. A second batch size is tried where the model
allows it. The `validate` command: validate(args, progress) -> schemas.ValidationResult.
"""

import math
import time

import torch

from . import candidates
from .phases import Phases
from . import schemas
from .env_record import environment

TOLERANCES = {"float32": 1e-4, "float32_strict": 1e-5, "float16": 1e-2, "bfloat16": 1e-2, "float64": 1e-7}
NEAR_CONSTANT_STD = 0.01


def _num(x):
    """JSON-safe float: NaN and infinities become strings."""
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def tolerance_for(dtype, strict):
    name = str(dtype).replace("torch.", "")
    if name == "float32" and strict:
        return TOLERANCES["float32_strict"]
    return TOLERANCES.get(name, 1e-4)


def compare(got, want, tol) -> schemas.Comparison:
    """Max abs/rel error of got against want, and whether every element is within
    atol + rtol*|want| (atol = rtol = tol). Non-finite values must match the reference's."""
    res = {"shape_ok": tuple(got.shape) == tuple(want.shape), "dtype": str(got.dtype).replace("torch.", "")}
    if not res["shape_ok"]:
        res.update(ok=False, reason=f"shape {list(got.shape)}, expected {list(want.shape)}",
                   max_abs=None, max_rel=None)
        return res
    if not want.is_floating_point() and not want.is_complex():
        # Integer results (argmax's positions, counters) are exact or wrong: no tolerance.
        res.update(ok=False, max_abs=None, max_rel=None, nonfinite=0)
        if got.dtype != want.dtype:
            res["reason"] = f"dtype {res['dtype']}, expected {str(want.dtype).replace('torch.', '')}"
            return res
        wrong = int((got != want).sum())
        if wrong:
            res["reason"] = f"{wrong} of {want.numel()} integer values differ from the reference's"
            res["max_abs"] = _num(float((got.double() - want.double()).abs().max()))
            return res
        res.update(ok=True, reason="", max_abs=0.0, max_rel=0.0)
        return res
    g = got.detach().to(torch.float64)
    w = want.detach().to(torch.float64)
    finite = torch.isfinite(w)
    bad_nonfinite = int((~torch.isfinite(g) & finite).sum())
    mismatched_special = int(((torch.isnan(g) != torch.isnan(w)) | ((torch.isinf(w)) & (g != w))).sum())
    diff = (g - w).abs()
    diff = torch.where(finite & torch.isfinite(g), diff, torch.zeros_like(diff))
    rel = diff / (w.abs() + 1e-12)
    max_abs = float(diff.max()) if diff.numel() else 0.0
    max_rel = float(torch.where(finite, rel, torch.zeros_like(rel)).max()) if rel.numel() else 0.0
    within = bool((diff <= tol + tol * w.abs().nan_to_num(0, 0, 0)).all())
    ok = within and bad_nonfinite == 0 and mismatched_special == 0
    reason = ""
    if bad_nonfinite:
        reason = f"{bad_nonfinite} NaN/Inf values where the reference is finite"
    elif mismatched_special:
        reason = f"{mismatched_special} NaN/Inf values differ from the reference's"
    elif not within:
        reason = f"max abs error {max_abs:.3g} exceeds tolerance {tol:g}"
    res.update(ok=ok, reason=reason, max_abs=_num(max_abs), max_rel=_num(max_rel), nonfinite=bad_nonfinite)
    return res


def closer_to_exact(got, eager, exact, tol):
    """The second way to pass (docs/VERIFY.md, "The tolerance policy"): on every element the
    candidate's error against the float64 reference is no larger than eager's own error there, or
    within the tolerance (atol + rtol*|exact|, atol = rtol = tol) as a floor. Non-finite values must
    match the reference's as in compare(). Returns {"ok", "reason", "worse_elements", "max_abs_vs_fp64",
    "eager_max_abs_vs_fp64"}."""
    g = got.detach().cpu().to(torch.float64)
    e = eager.detach().cpu().to(torch.float64)
    x = exact.detach().cpu().to(torch.float64)
    if g.shape != x.shape or e.shape != x.shape:
        return {"ok": False, "reason": f"shape {list(g.shape)}, expected {list(x.shape)}", "worse_elements": None,
                "max_abs_vs_fp64": None, "eager_max_abs_vs_fp64": None}
    finite = torch.isfinite(x)
    special = int(((torch.isnan(g) != torch.isnan(x)) | (~torch.isfinite(g) & finite) |
                   (torch.isinf(x) & (g != x))).sum())
    zero = torch.zeros_like(x)
    err_c = torch.where(finite & torch.isfinite(g), (g - x).abs(), zero)
    err_e = torch.where(finite & torch.isfinite(e), (e - x).abs(), zero)
    floor = tol + tol * x.abs().nan_to_num(0, 0, 0)
    worse = int((err_c > torch.maximum(err_e, floor)).sum())
    max_c = float(err_c.max()) if err_c.numel() else 0.0
    max_e = float(err_e.max()) if err_e.numel() else 0.0
    reason = ""
    if special:
        reason = f"{special} NaN/Inf values differ from the float64 reference's"
    elif worse:
        reason = (f"{worse} element(s) further from the float64 reference than eager and beyond the tolerance "
                  f"{tol:g} (max error vs float64 {max_c:.3g}, eager's {max_e:.3g})")
    return {"ok": not special and not worse, "reason": reason, "worse_elements": worse,
            "max_abs_vs_fp64": _num(max_c), "eager_max_abs_vs_fp64": _num(max_e)}


def judge_output(got, eager, exact, tol, match_eager, vs_eager=None):
    """One output's verdict under the tolerance policy: (ok, accepted_as, problem). accepted_as is
    "within_tolerance_of_eager" or "closer_to_exact_than_eager" (never the second with match_eager);
    problem is the sentence when it fails. `exact` may be a callable that gives the float64 reference
    (called only when the first rule fails); `vs_eager` is compare(got, eager, tol) if already made."""
    if vs_eager is None:
        vs_eager = compare(got, eager, tol)
    if vs_eager["ok"]:
        return True, "within_tolerance_of_eager", ""
    integer = not eager.is_floating_point() and not eager.is_complex()
    if match_eager or not vs_eager["shape_ok"] or exact is None or integer:
        return False, "", vs_eager["reason"]
    closer = closer_to_exact(got, eager, exact() if callable(exact) else exact, tol)
    if closer["ok"]:
        return True, "closer_to_exact_than_eager", ""
    return False, "", f"{vs_eager['reason']}, and not closer to exact than eager: {closer['reason']}"


CLOSER_FLAG = ("closer to exact than eager: differs from eager beyond the tolerance, but on every element "
               "its error against the float64 reference is no larger than eager's own (or within the tolerance)")


def _same(a, b):
    """Bitwise-style equality where NaN equals NaN (poisoned memory is NaN)."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if not a.is_floating_point():
        return torch.equal(a, b)
    return bool(((a == b) | (torch.isnan(a) & torch.isnan(b))).all())


def _snapshot(outs):
    # Cloned on the current stream right after the call returns: no device-wide sync first.
    return tuple(o.clone() if isinstance(o, torch.Tensor) else o for o in outs)


def _run_candidate(inst, cand, ref_byte_sizes, device):
    """Runs the candidate with poisoned memory; returns (snapshot, after-sync outputs, problems)."""
    problems = []
    before = [t.clone() for t in inst.tensors()]
    cand.set_poisoning(True, device)
    candidates.poison_free_pool(ref_byte_sizes, device)
    outs = inst.candidate(cand.fn)
    snap = _snapshot(outs)
    if device.type == "cuda":
        torch.cuda.synchronize()
    for i, (a, b) in enumerate(zip(snap, outs)):
        if isinstance(a, torch.Tensor) and not _same(a, b):
            problems.append(f"output {i} changed after the call returned: work left running outside "
                            "the caller's stream (side stream?)")
    for i, (t, b) in enumerate(zip(inst.tensors(), before)):
        if not _same(t, b):
            problems.append(f"input {i} was modified by the candidate")
    return snap, problems


def _foreign_streams(inst, cand):
    """Streams other than the caller's that the candidate's kernels ran on, from one call under
    torch.profiler (Kineto records each kernel's stream). A marker kernel launched first on the
    caller's stream tells which stream that is. Used for full-path candidates, whose host code could
    create streams; the fast path launches only on the current stream."""
    import json as _json
    import os
    import tempfile
    marker = torch.zeros(1, device="cuda")
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        marker.add_(1)
        torch.cuda.synchronize()
        inst.candidate(cand.fn)
        torch.cuda.synchronize()
    fd, path = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    try:
        prof.export_chrome_trace(path)
        with open(path) as f:
            events = [e for e in _json.load(f).get("traceEvents", []) if e.get("cat") == "kernel"]
    finally:
        os.unlink(path)
    events.sort(key=lambda e: e.get("ts", 0))
    if not events:
        return None, []
    caller = events[0].get("args", {}).get("stream")
    others = sorted({e.get("args", {}).get("stream") for e in events[1:]} - {caller}, key=str)
    return caller, others


def _worst(a, b):
    if a is None:
        return b
    if b is None:
        return a
    fa = float(a) if not isinstance(a, str) else math.inf
    fb = float(b) if not isinstance(b, str) else math.inf
    return a if fa >= fb else b


def validate(args, progress) -> schemas.ValidationResult:
    phases = Phases()
    device = torch.device(args.get("device", "cuda"))
    if device.type == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("no CUDA device is available to this worker")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    trials = int(args.get("trials", 5))
    strict = bool(args.get("strict", False))
    match_eager = bool(args.get("match_eager", False))
    base_seed = int(args.get("seed", 1234))
    label = args.get("label", "candidate")
    started = time.monotonic()
    if device.type == "cuda":
        torch.cuda.synchronize(device)  # timing only: CUDA's context is made here, not in the first load
    phases.mark("cuda_init")

    progress("loading the reference", 0.0)
    problem = candidates.load_problem(args, device)
    phases.mark("load_reference")
    progress("loading the candidate" + (" (building the extension with nvcc)" if args.get("extension") else ""), 0.05)
    cand = candidates.load(args, device)
    phases.mark("load_candidate")
    result = {"candidate": label, "path": cand.path_kind, "load_s": cand.load_s, "reference": problem.name,
              "reference_form": problem.form, "trials": [], "checks": [], "flags": [], "warnings": [],
              "passed": False}

    all_ok = True
    failures = []
    shape_seen = None
    for t in range(trials):
        seed = base_seed + t
        progress(f"trial {t + 1}/{trials} (seed {seed})", 0.1 + 0.75 * t / max(1, trials))
        inst = problem.instantiate(seed)
        if shape_seen is None:
            shape_seen = [list(x.shape) for x in inst.inputs if isinstance(x, torch.Tensor)][:1]
        ref64 = inst.upcast().reference()
        ref64 = tuple(r.cpu() for r in ref64)
        ref_sizes = sorted({r.numel() * r.element_size() for r in ref64 if isinstance(r, torch.Tensor)})
        ref_sizes = [n // 2 for n in ref_sizes]  # float64 -> the float32 byte size the outputs need
        trial = {"seed": seed, "ok": True, "problems": [], "outputs": []}
        try:
            c1, p1 = _run_candidate(inst, cand, ref_sizes, device)
            ref = inst.reference()  # kept alive until the trial ends, so its memory cannot be reused
            c2, p2 = _run_candidate(inst, cand, ref_sizes, device)
        except ValueError as exc:  # the harness refuses inputs it was not planned for
            trial.update(ok=False, problems=[f"candidate refused the inputs: {exc}"])
            result["trials"].append(trial)
            all_ok = False
            failures.append(trial["problems"][0])
            break
        trial["problems"] += sorted(set(p1 + p2))
        if len(c1) != len(ref):
            trial["problems"].append(f"candidate returned {len(c1)} outputs, reference {len(ref)}")
        for i, (a, b, r, r64) in enumerate(zip(c1, c2, ref, ref64)):
            tol = tolerance_for(r.dtype, strict)
            vs_eager = compare(a, r, tol)
            agree = compare(b, a, tol)
            ok, accepted, problem_text = judge_output(a, r, r64, tol, match_eager, vs_eager)
            out = {"index": i, "shape": list(r.shape), "dtype": vs_eager["dtype"], "tolerance": tol,
                   "accepted_as": accepted,
                   "vs_eager": vs_eager, "vs_fp64": compare(a.cpu(), r64, tol) if vs_eager["shape_ok"] else None,
                   "eager_vs_fp64": compare(r.cpu(), r64, tol),
                   "runs_agree": agree["ok"], "runs_bitwise_equal": bool(vs_eager["shape_ok"] and _same(a, b)),
                   "reference_std": _num(r.double().std()) if r.numel() > 1 else 0.0}
            if not ok:
                trial["problems"].append(f"output {i}: {problem_text}")
            elif accepted == "closer_to_exact_than_eager" and CLOSER_FLAG not in result["flags"]:
                result["flags"].append(CLOSER_FLAG)
            if vs_eager["shape_ok"] and not agree["ok"]:
                trial["problems"].append(f"output {i}: the two candidate runs disagree ({agree['reason']}): "
                                         "reads of uninitialised or stale memory?")
            if r.numel() > 1 and float(r.double().std()) < NEAR_CONSTANT_STD:
                w = f"output {i}: the reference is nearly constant (std {float(r.double().std()):.3g}); " \
                    "this check proves little"
                if w not in result["warnings"]:
                    result["warnings"].append(w)
            trial["outputs"].append(out)
        del ref
        trial["ok"] = not trial["problems"]
        all_ok = all_ok and trial["ok"]
        failures += [p for p in trial["problems"] if p not in failures]
        result["trials"].append(trial)
    phases.mark("trials")

    # Full path: kernels must run on the caller's stream, where they are ordered and timed.
    if cand.path_kind == "full" and all_ok and device.type == "cuda":
        progress("checking which streams the kernels ran on", 0.88)
        inst = problem.instantiate(base_seed)
        caller, others = _foreign_streams(inst, cand)
        check = {"name": "streams", "passed": not others,
                 "detail": f"every kernel ran on the caller's stream ({caller})" if not others else
                 f"kernels ran on stream(s) {others} besides the caller's stream {caller}: work hidden from "
                 "the caller's ordering and timing (side stream)"}
        result["checks"].append(check)
        if others:
            failures.append(check["detail"])
            all_ok = False
        phases.mark("streams")

    # A second batch size, where the model allows one.
    second = {"name": "second_shape", "passed": True, "detail": ""}
    batch = problem.batch_size()
    if args.get("second_shape", True) and batch and all_ok:
        new_batch = batch * 2 if batch <= 1024 else batch // 2
        progress(f"second shape (batch {new_batch})", 0.9)
        try:
            inst = problem.instantiate(base_seed + 1000, batch=new_batch)
            ref = inst.reference()
            ref64 = []  # the float64 reference, made only if an output needs the second rule

            def exact_output(k, inst=inst, ref64=ref64):
                if not ref64:
                    ref64.extend(r.cpu() for r in inst.upcast().reference())
                return ref64[k]
        except Exception as exc:
            second["detail"] = f"the model does not allow batch {new_batch}: {type(exc).__name__}: {exc}"
            inst = None
        if inst is not None:
            ref_sizes = [r.numel() * r.element_size() for r in ref]
            try:
                c, problems = _run_candidate(inst, cand, ref_sizes, device)
                for k, (a, r) in enumerate(zip(c, ref)):
                    ok, accepted, problem_text = judge_output(a, r, lambda k=k: exact_output(k),
                                                              tolerance_for(r.dtype, strict), match_eager)
                    if not ok:
                        problems.append(problem_text)
                    elif accepted == "closer_to_exact_than_eager" and CLOSER_FLAG not in result["flags"]:
                        result["flags"].append(CLOSER_FLAG)
                if problems:
                    second.update(passed=False, detail=f"wrong at batch {new_batch} (tested at {batch}): "
                                  + "; ".join(problems) + " — hard-coded shape?")
                    failures.append(second["detail"])
                    all_ok = False
                else:
                    second["detail"] = f"correct at batch {new_batch} as well as {batch}"
            except ValueError as exc:
                shape = shape_seen[0] if shape_seen else []
                flag = f"specialised to shape {shape}"
                result["flags"].append(flag)
                second["detail"] = f"{flag}: {exc}"
    else:
        second["detail"] = "not tried" if all_ok else "not tried (the candidate already failed)"
    result["checks"].append(second)
    phases.mark("second_shape")

    result["checks"].insert(0, {"name": "trials", "passed": all_ok,
                                "detail": "; ".join(failures) if failures else f"{len(result['trials'])} trials passed"})
    result["passed"] = all_ok
    result["failures"] = failures
    result["closer_to_exact"] = all_ok and CLOSER_FLAG in result["flags"]
    worst = {"vs_eager_abs": None, "vs_eager_rel": None, "vs_fp64_abs": None, "eager_vs_fp64_abs": None}
    for tr in result["trials"]:
        for o in tr["outputs"]:
            worst["vs_eager_abs"] = _worst(worst["vs_eager_abs"], o["vs_eager"]["max_abs"])
            worst["vs_eager_rel"] = _worst(worst["vs_eager_rel"], o["vs_eager"]["max_rel"])
            if o["vs_fp64"]:
                worst["vs_fp64_abs"] = _worst(worst["vs_fp64_abs"], o["vs_fp64"]["max_abs"])
            worst["eager_vs_fp64_abs"] = _worst(worst["eager_vs_fp64_abs"], o["eager_vs_fp64"]["max_abs"])
    result["max_errors"] = worst
    result["method"] = {"trials": trials, "seeds": [base_seed + t for t in range(trials)], "strict": strict,
                        "tolerances": TOLERANCES, "order": "candidate, reference, candidate",
                        "tolerance_policy": "match_eager" if match_eager else "eager_or_closer_to_exact",
                        "poison": "0xFF bytes (NaN) in outputs, temps and freed allocator blocks",
                        "tf32": False, "second_shape": bool(args.get("second_shape", True))}
    phases.mark("summary")
    result["environment"] = environment()
    result["elapsed_s"] = time.monotonic() - started
    phases.mark("environment")
    result["phase_s"] = phases.seconds
    progress("validated" if all_ok else "failed", 1.0)
    return result

