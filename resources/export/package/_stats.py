"""Timing and statistics for benchmark.py, copied from nova's worker (nova_worker/bench.py) so the
package does not depend on nova: interleaved CUDA-event times with the L2 flushed before each call
(cold), back-to-back host time per call (wall), medians and quartiles, and the 95% bootstrap
interval of a ratio of medians (as nova's RatioInterval: side-by-side samples resampled as pairs)."""

import math
import random
import statistics
import time

import torch


def summarize(samples):
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


def ratio_interval(baseline, candidate, resamples=2000, seed=20261204):
    """(ratio, low, high): median(baseline) / median(candidate) with the 2.5% and 97.5% quantiles of
    its bootstrap; samples taken side by side (equal counts) are resampled as pairs. None with fewer
    than 5 samples on either side."""
    if len(baseline) < 5 or len(candidate) < 5:
        return None
    ratio = statistics.median(baseline) / statistics.median(candidate)
    rng = random.Random(seed)
    paired = len(baseline) == len(candidate)
    ratios = []
    for _ in range(resamples):
        if paired:
            idx = [rng.randrange(len(baseline)) for _ in baseline]
            b, c = [baseline[i] for i in idx], [candidate[i] for i in idx]
        else:
            b = [rng.choice(baseline) for _ in baseline]
            c = [rng.choice(candidate) for _ in candidate]
        ratios.append(statistics.median(b) / statistics.median(c))
    ratios.sort()
    return ratio, ratios[int(0.025 * (resamples - 1))], ratios[int(0.975 * (resamples - 1))]


def warm_up(fn, min_calls=3, min_ms=25.0):
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


def l2_flush():
    """A function that leaves the L2 clean of the timed call's data: a write of at least 2x L2 (and
    256 MB), then a read of 2x L2 of another buffer so no dirty line is left to write back."""
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    l2 = getattr(props, "L2_cache_size", 64 << 20) or (64 << 20)
    write = torch.empty(max(2 * l2, 256 << 20) // 4, dtype=torch.float32, device="cuda")
    read = torch.ones(2 * l2 // 4, dtype=torch.float32, device="cuda")
    sink = torch.empty((), dtype=torch.float32, device="cuda")

    def flush():
        write.fill_(1.0)
        torch.sum(read, dim=0, out=sink)

    return flush


def event_times(variants, calls, flush=None):
    """Interleaved per-call CUDA-event times in microseconds, per variant."""
    names = list(variants)
    events = {n: [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                  for _ in range(calls)] for n in names}
    torch.cuda.synchronize()
    for i in range(calls):
        for n in names:
            if flush is not None:
                flush()
            s, e = events[n][i]
            s.record()
            variants[n]()
            e.record()
    torch.cuda.synchronize()
    return {n: [s.elapsed_time(e) * 1e3 for s, e in events[n]] for n in names}


def wall_round_calls(slowest_us):
    """Calls in one wall round: at least 10 and about 10 ms of the slowest variant, so that the first
    call's wait on the host and the closing sync are a small part of each sample (as nova check-package)."""
    return max(10, min(200, int(10000 / max(slowest_us, 1.0))))


def wall_times(variants, rounds, per_round):
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
