"""The `evaluate` command: validation and, if the candidate passed, its benchmark in one worker
process: the studio's submit-to-numbers path (one start of Python, torch and CUDA instead of two)."""

from . import schemas
from .bench import bench
from .phases import Phases
from .validate import validate


def evaluate(args, progress) -> schemas.EvaluateResult:
    phases = Phases()
    validation = validate(args, lambda m, f=None: progress(m, None if f is None else 0.5 * f))
    phases.mark("validate")
    result = {"validation": validation, "benchmark": None}
    if validation["passed"]:
        result["benchmark"] = bench(args, lambda m, f=None: progress(m, None if f is None else 0.5 + 0.5 * f))
        phases.mark("bench")
    result["phase_s"] = phases.seconds
    return result
