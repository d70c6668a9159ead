#!/usr/bin/env python3
"""The local lane's and the Ray lane's `nova optimize` selections side by side (packaging/ray-gpu.sh):
per model and group, the version each shipped (or why none), and its cold and wall ratios against eager
with their 95% intervals, as each run's `--out MODEL.json` holds them. A group agrees when both runs
reached the same outcome with the same version and each ratio is the same within the noise of one run
or of run to run: the two 95% intervals overlap, or the ratios are within 5% of each other (issue #26's
bound; a cold interval from 200 paired samples can be narrower than the drift between two runs). The last
line counts the groups that agree. Nothing is measured here.
    packaging/ray-compare.py LOCAL_DIR RAY_DIR MODEL ..."""

import json
import os
import sys


def groups(folder, model):
    path = os.path.join(folder, f"{model}.json")
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as f:
        return {g["group"]: g for g in json.load(f)["selection"]["groups"]}


def ratio(g, mode):
    r = g.get(f"{mode}_interval")
    return (r["ratio"], r["low"], r["high"]) if r else None


def text(r):
    return f"{r[0]:.2f}x [{r[1]:.2f}, {r[2]:.2f}]" if r else "-"


def same_figure(a, b):
    if a is None or b is None:
        return False
    return (a[1] <= b[2] and b[1] <= a[2]) or abs(a[0] / b[0] - 1.0) <= 0.05


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    local_dir, ray_dir, models = argv[0], argv[1], argv[2:]
    agree = total = 0
    print(f"{'model':28} {'grp':>3}  {'local':24} {'ray':24} {'cold local':22} {'cold ray':22} "
          f"{'wall local':22} {'wall ray':22} agrees")
    for model in models:
        local, ray = groups(local_dir, model), groups(ray_dir, model)
        if local is None or ray is None:
            print(f"{model:28} no selection from the {'local' if local is None else 'ray'} run")
            total += 1
            continue
        for gid in sorted(set(local) | set(ray)):
            a, b = local.get(gid), ray.get(gid)
            total += 1
            if a is None or b is None:
                print(f"{model:28} {gid:>3}  only in the {'ray' if a is None else 'local'} run")
                continue
            same = (a["outcome"], a.get("chosen_version")) == (b["outcome"], b.get("chosen_version"))
            ok = same and all(same_figure(ratio(a, m), ratio(b, m)) for m in ("cold", "wall")
                              if ratio(a, m) or ratio(b, m))
            agree += ok
            verdict = lambda g: f"{g['outcome']} v{g.get('chosen_version') or '-'}"  # noqa: E731
            print(f"{model:28} {gid:>3}  {verdict(a):24} {verdict(b):24} {text(ratio(a, 'cold')):22} "
                  f"{text(ratio(b, 'cold')):22} {text(ratio(a, 'wall')):22} {text(ratio(b, 'wall')):22} "
                  f"{'yes' if ok else 'NO'}")
    gpus = {g.get("gpu") for d in (local_dir, ray_dir) for m in models for g in (groups(d, m) or {}).values()}
    print(f"{agree} of {total} groups agree (same outcome and version; ratios with overlapping 95% intervals "
          f"or within 5%); "
          f"GPUs: {', '.join(sorted(x for x in gpus if x)) or 'none recorded'}")
    return 0 if agree == total else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
