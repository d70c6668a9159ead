"""Validation and, if the candidate passed, its benchmark in one worker process: the studio's
submit-to-numbers path (one start of Python, torch and CUDA instead of two). Entry points:
evaluate(args, progress) and `python -m nova_worker.evaluate ARGS.json`."""

import sys

from . import candidates
from .bench import bench
from .validate import validate


def evaluate(args, progress):
    phases = candidates.Phases()
    validation = validate(args, lambda m, f=None: progress(m, None if f is None else 0.5 * f))
    phases.mark("validate")
    result = {"validation": validation, "benchmark": None}
    if validation["passed"]:
        result["benchmark"] = bench(args, lambda m, f=None: progress(m, None if f is None else 0.5 + 0.5 * f))
        phases.mark("bench")
    result["phase_s"] = phases.seconds
    return result


if __name__ == "__main__":
    sys.exit(candidates.run_standalone(evaluate, sys.argv))
