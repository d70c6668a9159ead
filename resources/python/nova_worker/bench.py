"""Benchmark of a candidate against PyTorch eager and torch.compile (docs/BENCHMARKING.md, Timing).

One process, one set of inputs, the variants interleaved call by call (A B C A B C ...) so drift
cancels. Modes: "cold" (a buffer of at least 2x L2, and 256 MB, written before each call, by default
then a read of 2x L2 of another buffer so the L2 holds no dirty line the call would have to write
back (args "l2_flush": "clean", or "dirty" without the read), and a GPU spin before the flush that
covers the host's time to queue the call, so launch gaps stay outside the timing), "warm"
(back-to-back) and "graph" (replay of a CUDA graph of many calls). GPU time comes from CUDA events
on the current stream after warm-up; wall time per call from back-to-back host timing. A
verification pass synchronizes the device before the end event and compares: work hidden on
another stream shows up there. Energy per call comes from NVML's total-energy counter. Raw samples
are kept. Beside the baselines, a reference that is not one: "copy", a device-to-device copy moving
the group's compulsory bytes (every input and parameter read once, every output written once),
interleaved with the others in every mode: the memory floor measured alongside, in the same mode.
The `bench` command: bench(args, progress) -> schemas.BenchmarkResult.
"""

import math
import statistics
import time

import torch

from . import candidates
from .phases import Phases
from . import schemas
from .env_record import ClockLog, Nvml, environment

SPEEDUP_REVIEW = 10.0
COPY_REFERENCE = "copy"  # the variant name of the memory floor (BenchmarkResult::kCopyReference)
L2_FLUSHES = ("clean", "dirty")  # what the cold mode's flush leaves in the L2 (docs/VERIFY.md)


def summarize(samples) -> schemas.Summary:
    """Median and quartiles (linear interpolation, as numpy's default percentile)."""
    s = sorted(samples)
    if not s:
        return {"n": 0}

    def q(p):
        k = (len(s) - 1) * p
        lo, hi = math.floor(k), math.ceil(k)
        return s[lo] + (s[hi] - s[lo]) * (k - lo)

    return {"n": len(s), "median": q(0.5), "q1": q(0.25), "q3": q(0.75), "iqr": q(0.75) - q(0.25),
            "min": s[0], "max": s[-1], "mean": statistics.fmean(s)}


def _warm_up(fn, min_calls=3, min_ms=25.0):
    torch.cuda.synchronize()
    start = time.perf_counter()
    calls = 0
    while calls < min_calls or (time.perf_counter() - start) * 1e3 < min_ms:
        fn()
        calls += 1
        if calls % 8 == 0:
            torch.cuda.synchronize()
    torch.cuda.synchronize()
    return calls


def _host_enqueue_us(fn, calls=20):
    """Median host time to queue one call (no synchronization inside the timed span), in us."""
    times = []
    for _ in range(calls):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e6)
    torch.cuda.synchronize()
    return statistics.median(times)


def _spin_cycles_per_us(cycles=200_000, repeats=5):
    """Clock cycles of torch.cuda._sleep per microsecond on this device, measured with events."""
    torch.cuda._sleep(cycles)  # first launch outside the measurement
    rates = []
    for _ in range(repeats):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        torch.cuda._sleep(cycles)
        e.record()
        e.synchronize()
        rates.append(cycles / max(s.elapsed_time(e) * 1e3, 1e-3))
    return statistics.median(rates)


def cold_leads(variants):
    """Per variant: its host enqueue time (us), and the GPU spin queued ahead of each cold call, twice
    that time capped at 2 ms, in us and in spin cycles. Returns (enqueue_us, spin_rate, lead_us,
    lead_cycles)."""
    enqueue_us = {n: _host_enqueue_us(fn) for n, fn in variants.items()}
    spin_rate = _spin_cycles_per_us()
    lead_us = {n: min(2000.0, 2.0 * t) for n, t in enqueue_us.items()}
    lead_cycles = {n: int(t * spin_rate) for n, t in lead_us.items()}
    return enqueue_us, spin_rate, lead_us, lead_cycles


class L2Flush:
    """The cold mode's L2 flush: a write of max(2x L2, 256 MB), then with "clean" a read of 2x L2 of
    another buffer. The write leaves up to an L2 of dirty lines, which the timed call would write
    back to memory as it evicts them: on the H200, about 3 us of every cold call (docs/perf-notes.md,
    run Q), time that is the flush's, not the call's. The read leaves every line in the L2 clean and
    none of the call's data cached. Called with the call's index (the byte written varies)."""

    def __init__(self, device, mode="clean"):
        if mode not in L2_FLUSHES:
            raise ValueError(f"unknown l2_flush '{mode}' ({', '.join(L2_FLUSHES)})")
        self.mode = mode
        self.l2_bytes = getattr(torch.cuda.get_device_properties(device), "L2_cache_size", 0) or (60 << 20)
        self.write_bytes = max(2 * self.l2_bytes, 256 << 20)
        self._write = torch.empty(self.write_bytes, dtype=torch.uint8, device=device)
        self._read = (torch.zeros(2 * self.l2_bytes // 4, dtype=torch.float32, device=device)
                      if mode == "clean" else None)
        self._sink = torch.empty((), dtype=torch.float32, device=device)
        self.read_bytes = 0 if self._read is None else self._read.numel() * self._read.element_size()

    def __call__(self, k=0):
        self._write.fill_(k & 0xFF)
        if self._read is not None:
            torch.sum(self._read, dim=0, out=self._sink)

    def release(self):
        self._write = self._read = None


def _event_times(variants, calls, flush=None, lead_cycles=None):
    """Interleaved per-call CUDA-event times in microseconds, per variant.

    With `lead_cycles` (per variant), a GPU spin of that many cycles is queued before each call
    (and before its flush): each call then keeps the device busier than the host takes to queue
    it, so the host runs ahead of the device and a slow host (launch overhead) leaves no idle time
    inside the timed span. The spin comes before the flush, so each call still starts right after
    a flush, as without it."""
    names = list(variants)
    events = {n: [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                  for _ in range(calls)] for n in names}
    torch.cuda.synchronize()
    for i in range(calls):
        for n in names:
            if lead_cycles and lead_cycles[n]:
                torch.cuda._sleep(lead_cycles[n])
            if flush is not None:
                flush()
            s, e = events[n][i]
            s.record()
            variants[n]()
            e.record()
    torch.cuda.synchronize()
    return {n: [s.elapsed_time(e) * 1e3 for s, e in events[n]] for n in names}


def _wall_times(variants, rounds, per_round):
    """Back-to-back host time per call in microseconds: `rounds` samples per variant, interleaved."""
    out = {n: [] for n in variants}
    for _ in range(rounds):
        for n, fn in variants.items():
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(per_round):
                fn()
            torch.cuda.synchronize()
            out[n].append((time.perf_counter() - t0) * 1e6 / per_round)
    return out


def _graph_times(variants, calls_per_graph, replays):
    """Per-call time from replays of a CUDA graph holding `calls_per_graph` calls."""
    out, errors = {}, {}
    graphs = {}
    for n, fn in variants.items():
        try:
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                fn()  # warm-up on the side stream, as torch's graph docs require
            torch.cuda.current_stream().wait_stream(s)
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                for _ in range(calls_per_graph):
                    fn()
            graphs[n] = g
        except Exception as exc:
            errors[n] = f"graph capture failed: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            torch.cuda.synchronize()
    for n in graphs:
        graphs[n].replay()
    torch.cuda.synchronize()
    times = {n: [] for n in graphs}
    for _ in range(replays):
        for n, g in graphs.items():
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            g.replay()
            e.record()
            e.synchronize()
            times[n].append(s.elapsed_time(e) * 1e3 / calls_per_graph)
    out.update(times)
    return out, errors


def _tensor_bytes(x):
    """Bytes of the tensors in x (a tensor, or a tuple/list of them), each counted once."""
    seen, total = set(), 0
    for t in x if isinstance(x, (tuple, list)) else (x,):
        if isinstance(t, torch.Tensor) and t.is_cuda and t.data_ptr() not in seen:
            seen.add(t.data_ptr())
            total += t.numel() * t.element_size()
    return total


def _copy_reference(inst, device):
    """The memory floor of the group, as a call to time beside the variants: torch's device-to-device
    copy_ of a buffer of (read + written) / 2 bytes, which moves as many bytes in all as the group
    must (its inputs and parameters read once, its outputs written once). Returns the call and what
    it moves."""
    read = _tensor_bytes(inst.tensors())
    written = _tensor_bytes(inst.reference())
    half = max(16, (read + written + 31) // 32 * 16)  # 16-byte multiple
    src = torch.empty(half, dtype=torch.uint8, device=device)
    dst = torch.empty_like(src)
    src.fill_(1)
    return (lambda: dst.copy_(src)), {"bytes_read": read, "bytes_written": written, "copy_bytes": 2 * half,
                                      "call": "torch copy_ of a contiguous buffer (device to device)"}


def _verification(variants, calls=20):
    """Per variant: event time on the current stream, event time with a device-wide sync before
    the end event, and host time around call + sync (microseconds, medians)."""
    res = {}
    for n, fn in variants.items():
        plain, synced, host = [], [], []
        for _ in range(calls):
            torch.cuda.synchronize()
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            fn()
            e.record()
            torch.cuda.synchronize()
            plain.append(s.elapsed_time(e) * 1e3)
            s2, e2 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            t0 = time.perf_counter()
            s2.record()
            fn()
            torch.cuda.synchronize()
            e2.record()
            e2.synchronize()
            host.append((time.perf_counter() - t0) * 1e6)
            synced.append(s2.elapsed_time(e2) * 1e3)
        ev, sy, ho = (statistics.median(x) for x in (plain, synced, host))
        # The synced end event also waits for other streams; beyond a few us of sync latency, a
        # large excess means work the stream-ordered events never saw.
        hidden = sy > 2.0 * ev + 20.0 and sy - ev > 0.5 * sy
        res[n] = {"variant": n, "event_us": ev, "synced_event_us": sy, "host_us": ho, "hidden_work": hidden}
    return res


def _energy(nvml, fn, min_s=0.3):
    if not nvml.available or nvml.total_energy_mj() is None:
        return {"available": False, "reason": nvml.error or "NVML has no energy counter for this GPU"}
    torch.cuda.synchronize()
    e0, t0, calls = nvml.total_energy_mj(), time.perf_counter(), 0
    while time.perf_counter() - t0 < min_s:
        for _ in range(20):
            fn()
        calls += 20
        torch.cuda.synchronize()
    e1, t1 = nvml.total_energy_mj(), time.perf_counter()
    return {"available": True, "mj_per_call": (e1 - e0) / calls, "calls": calls, "seconds": t1 - t0,
            "mean_power_w": (e1 - e0) / 1e3 / (t1 - t0)}


def bench(args, progress) -> schemas.BenchmarkResult:
    phases = Phases()
    if not torch.cuda.is_available():
        raise RuntimeError("no CUDA device is available to this worker")
    device = torch.device("cuda")
    torch.set_grad_enabled(False)  # inference on both sides: no autograd bookkeeping in eager
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    modes = args.get("modes") or ["cold", "warm", "graph"]
    baselines = args.get("baselines") or ["eager", "compile"]
    min_calls, min_ms = int(args.get("min_calls", 100)), float(args.get("min_ms", 100.0))
    seed = int(args.get("seed", 1234))
    l2_flush = args.get("l2_flush", "clean")
    if l2_flush not in L2_FLUSHES:
        raise ValueError(f"unknown l2_flush '{l2_flush}' ({', '.join(L2_FLUSHES)})")
    nvml = Nvml(torch.cuda.current_device())
    clocks = ClockLog(nvml)
    clocks.sample("start")
    started = time.monotonic()
    phases.mark("setup")

    progress("loading the reference and the candidate", 0.0)
    problem = candidates.load_problem(args, device)
    cand = candidates.load(args, device)
    cand.set_poisoning(False, device)
    inst = problem.instantiate(seed)
    phases.mark("load")
    # Timed the same way as eager: no per-call no_grad context or output normalization on one
    # side only (autograd is off for both, above).
    variants = {"candidate": inst.candidate_fn(cand.fn)}
    errors = {}
    if "eager" in baselines:
        variants["eager"] = inst.reference_fn()
    if "compile" in baselines:
        progress("compiling the torch.compile baseline", 0.05)
        torch._dynamo.reset()
        try:
            fn = inst.compiled_fn()
            fn()
            variants["compile"] = fn
        except Exception as exc:
            errors["compile"] = f"torch.compile failed: {type(exc).__name__}: {exc}"
        phases.mark("compile_baseline")
    copy_reference = None
    if args.get("copy_reference", True):
        variants[COPY_REFERENCE], copy_reference = _copy_reference(inst, device)

    progress("warming up", 0.15)
    for fn in variants.values():
        _warm_up(fn)
    phases.mark("warm_up")
    est = _event_times(variants, 10)
    slowest_us = max(statistics.median(v) for v in est.values())
    # Launch gaps: when the host takes longer to queue a call than the flush keeps the device busy,
    # the device idles between the start event and the call's kernels, and that idle time would
    # count as GPU time. A spin of twice the variant's host enqueue time (at most 2 ms), queued
    # before each cold call's flush, keeps the host ahead. Warm mode keeps plain back-to-back calls.
    enqueue_us, spin_rate, lead_us, lead_cycles = cold_leads(variants)
    calls = max(min_calls, min(5000, int(math.ceil(min_ms * 1e3 / max(slowest_us, 1.0)))))

    flusher = L2Flush(device, l2_flush)
    l2, flush_bytes, clean_bytes = flusher.l2_bytes, flusher.write_bytes, flusher.read_bytes
    flush = flusher

    measurements = []
    phases.mark("calibrate")

    def record(mode, metric, samples):
        for n, s in samples.items():
            measurements.append({"variant": n, "mode": mode, "metric": metric, "samples": s, **summarize(s)})

    steps = len(modes) + 3
    for k, mode in enumerate(modes):
        progress(f"timing ({mode})", 0.2 + 0.6 * k / steps)
        clocks.sample(f"before {mode}")
        if mode == "cold":
            record("cold", "gpu_us", _event_times(variants, calls, flush=lambda: flush(k),
                                                  lead_cycles=lead_cycles))
        elif mode == "warm":
            record("warm", "gpu_us", _event_times(variants, calls))
        elif mode == "graph":
            per_graph = max(1, min(50, int(5000 / max(slowest_us, 1.0))))
            times, errs = _graph_times(variants, per_graph, max(30, calls // per_graph))
            record("graph", "gpu_us", times)
            errors.update({f"{n} (graph)": e for n, e in errs.items()})
        else:
            raise ValueError(f"unknown mode '{mode}' (cold, warm, graph)")
        clocks.sample(f"after {mode}")
        phases.mark(f"timing_{mode}")
    flusher.release()

    progress("wall time per call", 0.8)
    per_round = max(5, min(200, int(2000 / max(slowest_us, 1.0))))
    record("wall", "wall_us", _wall_times(variants, 30, per_round))
    phases.mark("timing_wall")

    progress("verification pass", 0.87)
    timed = {n: fn for n, fn in variants.items() if n != COPY_REFERENCE}  # the reference is only timed
    verification = _verification(timed)
    phases.mark("verification")
    progress("energy", 0.93)
    energy = {n: _energy(nvml, fn) for n, fn in timed.items()}
    clocks.sample("end")
    phases.mark("energy")

    flags = []
    for n, v in verification.items():
        if v["hidden_work"]:
            flags.append(f"{n}: the device-synchronized time ({v['synced_event_us']:.1f} us) far exceeds the "
                         f"stream's event time ({v['event_us']:.1f} us): work on another stream?")
    speedups = []
    by = {(m["variant"], m["mode"]): m for m in measurements}
    for mode in list(modes) + ["wall"]:
        c = by.get(("candidate", mode))
        for b in baselines:
            base = by.get((b, mode))
            if c and base and c.get("median"):
                value = base["median"] / c["median"]
                speedups.append({"mode": mode, "baseline": b, "value": value})
                if value > SPEEDUP_REVIEW:
                    flags.append(f"speedup {value:.1f}x over {b} ({mode}) is above {SPEEDUP_REVIEW:g}x: review")
    result = {"candidate": args.get("label", "candidate"), "path": cand.path_kind, "load_s": cand.load_s,
              "measurements": measurements, "speedups": speedups, "verification": list(verification.values()),
              "energy": energy, "flags": flags, "errors": errors,
              "method": {"statistic": "median, IQR (q1..q3), raw samples kept", "modes": modes,
                         "baselines": baselines, "interleaved": True, "calls": calls,
                         "warmup": "at least 3 calls and 25 ms per variant", "l2_flush_bytes": flush_bytes,
                         "l2_flush": l2_flush,
                         "l2_flush_read_bytes": clean_bytes,
                         "l2_bytes": l2, "wall": f"30 rounds of {per_round} back-to-back calls",
                         "tf32": False, "seed": seed, "timer": "CUDA events on the current stream",
                         "compile": "torch.compile default mode after torch._dynamo.reset()",
                         "energy": "NVML total energy counter over a loop of at least 0.3 s",
                         "lead_us": lead_us, "host_enqueue_us": enqueue_us,
                         "spin_cycles_per_us": spin_rate,
                         "lead": "cold: a GPU spin of lead_us (per variant) queued before each call's flush",
                         "copy_reference": copy_reference},
              "environment": environment(nvml, clocks), "elapsed_s": time.monotonic() - started}
    phases.mark("summary")
    result["phase_s"] = phases.seconds
    progress("benchmarked", 1.0)
    return result

