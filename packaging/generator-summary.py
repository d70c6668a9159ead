"""The summary table of packaging/generator-gpu.sh, from the JSON it wrote: per group the rule,
validation and its largest error against float64 as a multiple of eager's own (1.00 = as accurate as
eager; a relative error is meaningless where outputs cross zero), the speedups vs eager and
torch.compile (cold GPU time and wall time per call) and the verdict (core/verify/benchmark_verdict.h:
ships, or declined and eager is kept); then the geometric means over the groups against the target
of issue #6; then, for the memory-bound groups
that issue names, the bandwidth reached (bytes of the plan's inputs and outputs, each read or written
once, over the cold median) as a share of the device-to-device copy ceiling (4.25 TB/s on the lent
H200, docs/BENCHMARKING.md; NOVA_COPY_TBPS overrides it) and, where the benchmark timed its copy
reference (a device-to-device copy of the same bytes, interleaved with the variants in the same
process), the share of that copy's speed the kernel reaches; each with how the cold mode left the L2
("clean" or "dirty", core/verify/benchmark_result.h); and the benchmark's review flags.

A group with alternatives (groupN.RULE, rows marked +) ships the fastest of its candidates that passed
validation and ships (by the cold, then the wall speedup against eager, each measured in its own run).
A group where none ships (declined by the generator or by the benchmark, failed validation, no
verdict) keeps eager: it counts 1.00x vs eager, and vs torch.compile eager's own ratio to
torch.compile measured in the same run (1.00x where the group was not benchmarked).
    python3 packaging/generator-summary.py OUT_DIR MODEL ...
"""
import glob
import json
import math
import os
import sys

TARGET_EAGER, TARGET_COMPILE = 1.5, 1.2
TARGET_COPY_SHARE = 0.85
COPY_TBPS = float(os.environ.get("NOVA_COPY_TBPS", "4.25"))
MEMORY_BOUND = ("swish_bias_clamp", "softmax_rows", "layernorm_gelu")
DTYPE_BYTES = {"float64": 8, "float32": 4, "float16": 2, "bfloat16": 2, "int64": 8, "int32": 4, "int8": 1,
               "uint8": 1, "bool": 1}


def plan_bytes(plan):
    """Bytes a kernel that reads every input once and writes every output once moves."""
    total = 0
    for t in plan.get("inputs", []) + plan.get("outputs", []):
        total += math.prod(t["shape"]) * DTYPE_BYTES.get(t["dtype"], 4)
    return total


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def median(bench, variant, mode):
    for m in (bench or {}).get("measurements", []):
        if m.get("variant") == variant and m.get("mode") == mode and m.get("median"):
            return m["median"]
    return None


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def main(out, models):
    keys = [("cold", "eager"), ("cold", "compile"), ("wall", "eager"), ("wall", "compile")]
    print(f"{'model':<30}{'grp':>4} {'rule':<24}{'valid':<7}{'err/eager':>9} {'cold eager':>10} {'cold comp':>9} "
          f"{'wall eager':>10} {'wall comp':>9}  verdict")
    counted = {k: [] for k in keys}  # the speedup each group gives the product, eager kept where declined
    tally = {}
    logs = []
    bandwidth = []  # lines on the memory-bound groups
    flagged = []
    chosen = []  # groups with alternatives: which candidate ships
    for m in models:
        groups = {}  # group id -> [(tag, candidate)], the primary (groupN) first, then its alternatives
        for cand in sorted(glob.glob(f"{out}/{m}/group*.candidate.json")):
            c = load(cand)
            tag = os.path.basename(cand)[len("group"):-len(".candidate.json")]
            groups.setdefault(c["group_id"], []).append((tag, c))
        for g in sorted(groups):
            best, state, eager_vs_compile = None, None, {}
            for tag, c in sorted(groups[g], key=lambda x: x[0] != str(g)):
                v = load(f"{out}/{m}_g{tag}.validate.json")
                b = load(f"{out}/{m}_g{tag}.bench.json")
                sp = {(s["mode"], s["baseline"]): s["value"] for s in (b or {}).get("speedups", [])}
                label = f"{g}" if tag == str(g) else f"{g}+"  # + marks an alternative
                if c.get("declined"):
                    state = state or "declined"
                    print(f"{m:<30}{label:>4} declined by the generator: {c['declined'][:60]}")
                    continue
                passed = bool(v and v.get("passed"))
                verdict = ((b or {}).get("verdict") or {}).get("kind", "none")
                errors = ((v or {}).get("raw") or {}).get("max_errors") or {}
                ours, eagers = errors.get("vs_fp64_abs"), errors.get("eager_vs_fp64_abs")
                rel = ours / eagers if ours is not None and eagers else float("nan")
                f = lambda k: f"{sp[k]:.2f}x" if k in sp else "-"
                valid = "pass" if passed else ("FAIL" if v else "none")
                print(f"{m:<30}{label:>4} {c['origin']['rule']:<24}{valid:<7}{rel:>9.2f} {f(keys[0]):>10} "
                      f"{f(keys[1]):>9} {f(keys[2]):>10} {f(keys[3]):>9}  {verdict}")
                if not passed:
                    logs.append(f"{out}/{m}_g{tag}.validate.txt")
                flagged += [f"{m} g{tag}: {flag}" for flag in (b or {}).get("flags", [])]
                for mode in ("cold", "wall"):
                    if mode not in eager_vs_compile and median(b, "eager", mode) and median(b, "compile", mode):
                        eager_vs_compile[mode] = median(b, "compile", mode) / median(b, "eager", mode)
                if passed and verdict == "ships":
                    score = (sp.get(("cold", "eager"), 0), sp.get(("wall", "eager"), 0))
                    if best is None or score > best[0]:
                        best = (score, tag, sp)
                elif state is None or state == "not shipped (failed or unmeasured)":
                    state = "declined" if verdict == "declined" else "not shipped (failed or unmeasured)"
                cold, comp = median(b, "candidate", "cold"), median(b, "compile", "cold")
                if m in MEMORY_BOUND and cold:
                    nbytes = plan_bytes(c["plan"])
                    tbps = nbytes / (cold * 1e-6) / 1e12
                    share = tbps / COPY_TBPS
                    method = (b or {}).get("method") or {}
                    flush = method.get("l2_flush", "dirty")  # dirty: results from before the choice
                    line = (f"  {m} g{tag}: {nbytes / 1e6:.1f} MB in {cold:.2f} us cold ({flush} L2) = {tbps:.2f} TB/s = "
                            f"{100 * share:.1f}% of copy (target {100 * TARGET_COPY_SHARE:.0f}%: "
                            f"{'met' if share >= TARGET_COPY_SHARE else 'missed'})")
                    if comp:
                        line += (f"; vs torch.compile cold {comp / cold:.3f}x "
                                 f"(target not slower: {'met' if comp >= cold else 'missed'})")
                    copy = median(b, "copy", "cold")
                    ref = method.get("copy_reference") or {}
                    if copy and ref.get("copy_bytes"):
                        copy_tbps = ref["copy_bytes"] / (copy * 1e-6) / 1e12
                        line += (f"\n    alongside, a copy of the same {ref['copy_bytes'] / 1e6:.1f} MB: {copy:.2f} us = "
                                 f"{copy_tbps:.2f} TB/s = {100 * copy_tbps / COPY_TBPS:.1f}% of {COPY_TBPS:.2f}; "
                                 f"the kernel at {100 * copy / cold:.1f}% of that copy's speed")
                    bandwidth.append(line)
            kept = "ships" if best else state or "not shipped (failed or unmeasured)"
            tally[kept] = tally.get(kept, 0) + 1
            if best and len(groups[g]) > 1:
                chosen.append(f"  {m} g{g}: {'the primary' if best[1] == str(g) else best[1].split('.', 1)[1]}")
            for mode, base in keys:
                if best:
                    value = best[2].get((mode, base))
                elif base == "compile":
                    value = eager_vs_compile.get(mode, 1.0)  # eager kept
                else:
                    value = 1.0
                if value:
                    counted[(mode, base)].append(value)
    n = sum(tally.values())
    print(f"\ngroups: {n} ({', '.join(f'{k}: {c}' for k, c in sorted(tally.items()))}); a group that does not "
          "ship keeps eager: 1.00x vs eager, eager's ratio to torch.compile in the same run (1.00x if not benchmarked)")
    slowest = [min(counted[(mode, "eager")], default=float("nan")) for mode in ("cold", "wall")]
    print(f"slowest group vs eager: cold {slowest[0]:.2f}x  wall {slowest[1]:.2f}x  "
          f"(target: none below 1.00x: {'met' if min(slowest) >= 1.0 else 'missed'})")
    for base, label, target in (("eager", "eager", TARGET_EAGER), ("compile", "torch.compile", TARGET_COMPILE)):
        cold, wall = geomean(counted[("cold", base)]), geomean(counted[("wall", base)])
        met = "met" if min(cold, wall) >= target else "missed"
        print(f"geometric mean vs {label:<14} cold {cold:.2f}x  wall {wall:.2f}x  (target {target:.1f}x: {met})")
    if chosen:
        print("groups with alternatives (+ rows), the fastest that passed and ships (cold, then wall, vs eager):")
        print("\n".join(chosen))
    if bandwidth:
        print(f"memory-bound groups (each input read and each output written once; copy {COPY_TBPS:.2f} TB/s):")
        print("\n".join(bandwidth))
    for flag in flagged:
        print("flag:", flag)
    for p in logs[:6]:
        print("==", p)
        print(open(p).read()[-1500:] if os.path.exists(p) else "missing")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
