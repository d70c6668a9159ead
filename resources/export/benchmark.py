"""Benchmark of the whole model: @PACKAGE@'s ModelNew against the client's Model in eager and under
torch.compile, and torch.compile of ModelNew; cold (GPU time by CUDA events, the L2 flushed before
each call, launch gaps included) and wall (host time per call, back to back), the variants
interleaved call by call in one process; medians with the 95% bootstrap interval of each ratio.
fp32 with TF32 off unless --tf32. Usage: python benchmark.py [--calls 30] [--rounds 20] [--json out.json]
"""

import argparse
import json
import sys

import torch

import installed_first  # noqa: F401  (before the package: the installed copy, with its kernels)
from @PACKAGE@ import MANIFEST, Model, ModelNew, get_init_inputs, get_inputs
from @PACKAGE@ import _stats


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=30, help="cold samples per variant")
    parser.add_argument("--rounds", type=int, default=20, help="wall samples per variant")
    parser.add_argument("--per-round", type=int, default=0,
                        help="calls per wall sample (default: at least 10 and about 10 ms, as nova check-package)")
    parser.add_argument("--tf32", action="store_true", help="allow TF32 in matmuls and convolutions")
    parser.add_argument("--json", help="write the samples and ratios to this file")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("benchmark.py needs a CUDA GPU; none is visible", file=sys.stderr)
        return 3
    torch.backends.cuda.matmul.allow_tf32 = args.tf32
    torch.backends.cudnn.allow_tf32 = args.tf32

    torch.manual_seed(0)
    init = list(get_init_inputs())
    original = Model(*init).cuda().eval()
    optimized = ModelNew(*init).cuda().eval()
    optimized.load_state_dict(original.state_dict())
    inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in get_inputs()]
    compiled = torch.compile(original)
    compiled_new = torch.compile(optimized)
    variants = {
        "eager": lambda: original(*inputs),
        "compile": lambda: compiled(*inputs),
        "optimized": lambda: optimized(*inputs),
        "optimized+compile": lambda: compiled_new(*inputs),
    }
    with torch.no_grad():
        ref = original(*inputs)
        for name in ("optimized", "optimized+compile"):
            out = variants[name]()
            for a, b in zip(torch.utils._pytree.tree_leaves(out), torch.utils._pytree.tree_leaves(ref)):
                if not torch.allclose(a, b, atol=1e-4, rtol=1e-4):
                    print(f"warning: {name} differs from eager by {(a - b).abs().max().item():.3g}", file=sys.stderr)
        for fn in variants.values():
            _stats.warm_up(fn)
        cold = _stats.event_times(variants, args.calls, _stats.l2_flush())
        slowest = max(_stats.summarize(v)["median"] for v in cold.values())
        per_round = args.per_round or _stats.wall_round_calls(slowest)
        wall = _stats.wall_times(variants, args.rounds, per_round)

    print(f"{MANIFEST['model_file']}: {torch.cuda.get_device_name()}, torch {torch.__version__}, "
          f"TF32 {'on' if args.tf32 else 'off'}")
    print(f"cold: {args.calls} calls a variant, L2 flushed before each; wall: {args.rounds} rounds of {per_round} "
          "back-to-back calls; interleaved")
    print(f"{'variant':<20} {'cold us':>10} {'wall us':>10}")
    for name in variants:
        print(f"{name:<20} {_stats.summarize(cold[name])['median']:>10.1f} {_stats.summarize(wall[name])['median']:>10.1f}")
    result = {"cold": cold, "wall": wall, "ratios": {},
              "method": {"cold_calls": args.calls, "wall_rounds": args.rounds, "wall_calls_per_round": per_round,
                         "tf32": args.tf32}}
    for name in ("optimized", "optimized+compile"):
        for baseline in ("eager", "compile"):
            for mode, samples in (("cold", cold), ("wall", wall)):
                r = _stats.ratio_interval(samples[baseline], samples[name])
                if r is None:
                    continue
                result["ratios"][f"{name}/{baseline}/{mode}"] = r
                print(f"{name} vs {baseline} ({mode}): {r[0]:.2f}x [{r[1]:.2f}, {r[2]:.2f}]")
    est = MANIFEST["figures"].get("amdahl_vs_eager")
    measured = result["ratios"].get("optimized/eager/cold")
    if est and measured:
        print(f"Amdahl estimate at export: {est:.2f}x over eager (cold); measured {measured[0]:.2f}x")
        if abs(measured[0] - est) / est > 0.25:
            print("  a large gap: likely causes are work outside the fusion groups (launches, copies, ops nova "
                  "did not group), groups that fell back to PyTorch at this shape, or the groups' shares of "
                  "GPU time differing from the profile's")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
